"""tx8c.ir_utils: the IR helpers the passes share."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, f16, f32
from xdsl.ir import Block, Region

from tx8c.dialect.attrs import LayoutMode
from tx8c.dialect.ops.backend import ConstantOp, GroupOp, YieldOp
from tx8c.dialect.ops.conv_gemm import GemmOp
from tx8c.dialect.ops.elementwise import AddOp, ReluOp
from tx8c.dialect.types import tensor
from tx8c.ir import parse_module
from tx8c.ir_utils import (
    blocks_of,
    body_and_terminator,
    channel_vector,
    constant_array,
    defining_constant,
    erase_dead_constants,
    is_compute_op,
    is_constant,
    logical_bytes,
    move_to_end,
    rebuilt,
    shape_of,
    sole_user,
    stack_along,
    stored_bytes,
)


def _block(*ops) -> Block:
    block = Block(arg_types=[tensor([2, 3], f32)])
    block.add_ops(ops)
    return block


# --------------------------------------------------------------------------------------
# constants
# --------------------------------------------------------------------------------------


def test_constants_are_recognised_by_their_trait_only() -> None:
    value = np.arange(6, dtype=np.float32).reshape(2, 3)
    const = ConstantOp.from_array(value)
    block = _block(const)
    add = AddOp.make([block.args[0], const.results[0]])
    block.add_op(add)
    assert defining_constant(const.results[0]) is const
    np.testing.assert_array_equal(constant_array(const.results[0]), value)
    assert is_constant(const.results[0])
    for other in (block.args[0], add.results[0], None):
        assert defining_constant(other) is None
        assert constant_array(other) is None
        assert not is_constant(other)


def test_erase_dead_constants_erases_each_unused_constant_once() -> None:
    used, unused = (ConstantOp.from_array(np.ones((2, 3), np.float32)) for _ in range(2))
    block = _block(used, unused)
    add = AddOp.make([block.args[0], used.results[0]])
    block.add_op(add)
    erased = []

    def erase(op):
        erased.append(op)
        op.detach()
        op.erase()

    # duplicates, a block argument, a non-constant and None are all fine
    values = [unused.results[0], unused.results[0], used.results[0], block.args[0],
              add.results[0], None]
    erase_dead_constants(values, erase)
    assert erased == [unused]
    erase_dead_constants(values, erase)  # already gone: nothing happens
    assert erased == [unused]
    assert list(block.ops) == [used, add]


# --------------------------------------------------------------------------------------
# constants along an axis
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "expected"),
    [
        ((3, 1, 1), [1.0, 2.0, 3.0]),  # per channel of NCHW
        ((1, 3, 1, 1), [1.0, 2.0, 3.0]),
        ((), [7.0, 7.0, 7.0]),  # a scalar is the same factor for every channel
        ((1, 1, 1), [7.0, 7.0, 7.0]),
        ((4,), None),  # varies along W
        ((2, 3, 1, 1), None),  # varies along N too
        ((1, 1, 3, 1, 1), None),  # would grow the result's rank
    ],
)
def test_channel_vector(shape, expected) -> None:
    size = int(np.prod(shape))
    array = (np.arange(1, size + 1) if size == 3 else np.full(size, 7.0)).reshape(shape)
    vector = channel_vector(array.astype(np.float32), (2, 3, 4, 4), 1)
    if expected is None:
        assert vector is None
    else:
        assert vector.tolist() == expected


def test_stack_along_concatenates_per_channel_constants_and_keeps_their_rank() -> None:
    a, b = np.ones((2, 1), np.float32), np.full((3, 1), 2.0, np.float32)
    stacked = stack_along([a, b], [(1, 2, 5), (1, 3, 5)], 1)
    assert stacked.shape == (5, 1)
    assert stacked[:, 0].tolist() == [1, 1, 2, 2, 2]
    scalars = stack_along([np.float32(1), np.float32(2)], [(4, 2), (4, 1)], 1)
    assert scalars.tolist() == [1, 1, 2]  # broadcast along the axis, which stays
    assert stack_along([np.ones((4, 2)), np.ones((3, 1))], [(4, 2), (4, 1)], 1) is None


# --------------------------------------------------------------------------------------
# sizes
# --------------------------------------------------------------------------------------


def test_logical_and_stored_bytes_are_two_sizes() -> None:
    """A [2, 5, 5, 3] f16 value: 150 compact elements, but NCx pads C to 4 and aligns
    each batch to 256 bytes."""
    block = Block(arg_types=[tensor([2, 5, 5, 3], f16)])
    value = block.args[0]
    assert shape_of(value) == (2, 5, 5, 3)
    assert logical_bytes(value) == 2 * 5 * 5 * 3 * 2
    compact = stored_bytes(shape_of(value), "f16", LayoutMode.NTensor)
    aligned = stored_bytes(shape_of(value), "f16", LayoutMode.NCx)
    assert compact == logical_bytes(value)
    assert aligned == 256 + 25 * 4 * 2  # batch 0 padded to 256 bytes, then batch 1
    assert aligned > logical_bytes(value)


# --------------------------------------------------------------------------------------
# ops
# --------------------------------------------------------------------------------------


def test_rebuilt_takes_new_operands_and_attributes_and_infers_types() -> None:
    block = Block(arg_types=[tensor([2, 3], f32), tensor([3, 4], f32),
                             tensor([5, 3], f32)])
    a, b, other = block.args
    gemm = GemmOp.make([a, b], alpha=2.0)
    copy = rebuilt(gemm)
    assert copy is not gemm and copy.attributes == gemm.attributes
    assert list(copy.operands) == [a, b] and copy.result_types == gemm.result_types
    wider = rebuilt(gemm, [other, b], alpha=0.5, trans_a=False)
    assert wider.attr("alpha") == 0.5 and shape_of(wider.results[0]) == (5, 4)
    with pytest.raises(TypeError, match="no attribute"):
        rebuilt(gemm, groups=2)


def test_rebuilt_moves_the_regions_of_an_op_with_given_result_types() -> None:
    inner = Block(arg_types=[tensor([2, 3], f32)])
    relu = ReluOp.make([inner.args[0]])
    inner.add_ops([relu, YieldOp(relu.results[0])])
    outer = _block()
    group = GroupOp.make([outer.args[0]], body=inner)
    outer.add_op(group)
    copy = rebuilt(group, result_types=list(group.result_types))
    assert copy.block is inner and not group.regions
    assert copy.result_types == group.result_types


def test_sole_user_and_blocks_of() -> None:
    module = parse_module("""
    func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
      %a = tx8be.Relu %x : (tensor<2xf32>) -> tensor<2xf32>
      %b = tx8be.Add %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      %c = tx8be.Relu %b : (tensor<2xf32>) -> tensor<2xf32>
      func.return %c : tensor<2xf32>
    }""")
    function = next(iter(module.ops))
    assert isinstance(function, func.FuncOp)
    relu_a, add, relu_c, ret = function.body.block.ops
    assert sole_user(relu_a.results[0]) is None  # read twice by one op: two uses
    assert sole_user(add.results[0]) is relu_c
    assert sole_user(relu_c.results[0]) is ret
    assert sole_user(function.body.block.args[0]) is relu_a
    assert list(blocks_of(module)) == [module.body.block, function.body.block]
    assert isinstance(module, ModuleOp)


def test_function_regions_are_blocks_too() -> None:
    block = _block()
    function = func.FuncOp("f", ([tensor([2, 3], f32)], []), Region(block))
    assert list(blocks_of(function)) == [block]


def test_body_and_terminator_and_move_to_end_keep_the_terminator_last() -> None:
    module = parse_module("""
    func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
      %a = tx8be.Relu %x : (tensor<2xf32>) -> tensor<2xf32>
      %b = tx8be.Relu %x : (tensor<2xf32>) -> tensor<2xf32>
      %c = tx8be.Add %a, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      func.return %c : tensor<2xf32>
    }""")
    block = next(iter(module.ops)).body.block
    (a, b, c), ret = body_and_terminator(block)
    assert isinstance(ret, func.ReturnOp)
    move_to_end(block, [b, a, c])
    assert list(block.ops) == [b, a, c, ret]
    module.verify()
    loose = _block(ReluOp.make([_block().args[0]]))  # no terminator: appended at the end
    relu = loose.first_op
    assert body_and_terminator(loose) == ([relu], None)
    move_to_end(loose, [relu])
    assert list(loose.ops) == [relu]


def test_is_compute_op_per_op_not_only_per_class() -> None:
    module = parse_module("""
    func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
      %a = tx8be.Relu %x : (tensor<2xf32>) -> tensor<2xf32>
      func.return %a : tensor<2xf32>
    }""")
    relu, ret = next(iter(module.ops)).body.block.ops
    constant = ConstantOp.from_array(np.zeros(2, np.float32))
    assert is_compute_op(relu)
    assert not is_compute_op(ret)  # not tx8be
    assert not is_compute_op(constant)  # a constant source: no operands
    assert not is_compute_op(YieldOp.create())  # a terminator
