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
    insert_new_op_before,
    is_compute_op,
    is_constant,
    logical_bytes,
    move_ops_to_new_block,
    move_to_end,
    op_list,
    rebuilt,
    replace_operands,
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


# --------------------------------------------------------------------------------------
# the grouping stage's direct rewiring and insertions (against xDSL's own)
# --------------------------------------------------------------------------------------


def _links(block: Block) -> list:
    """Every field of `block`'s op list: the order both ways, the ends, each parent."""
    ops = list(block.ops)
    backwards = []
    op = block.last_op
    while op is not None:
        backwards.append(op)
        op = op.prev_op
    return [ops, backwards[::-1], block.first_op, block.last_op,
            [op.parent is block for op in ops]]


def _names(ours: list, theirs: list) -> dict:
    """Ops of two parallel blocks by their position: what is compared across them."""
    return {op: i for i, op in enumerate(ours)} | {op: i for i, op in enumerate(theirs)}


def _named(links: list, names: dict) -> list:
    return [[names.get(o, o) for o in x] if isinstance(x, list) else names.get(x, x)
            for x in links]


def _relus(n: int) -> tuple[Block, list]:
    block = Block(arg_types=[tensor([2], f32)])
    x = block.args[0]
    ops = []
    for _ in range(n):
        ops.append(ReluOp.make([x]))
        block.add_op(ops[-1])
        x = ops[-1].results[0]
    return block, ops


@pytest.mark.parametrize("n", [0, 1, 4])
def test_op_list_lists_the_ops_xdsl_iterates(n) -> None:
    block, ops = _relus(n)
    assert op_list(block) == list(block.ops) == ops
    if n:  # and after a move: the links, not the creation order
        move_to_end(block, [ops[0]])
        assert op_list(block) == list(block.ops) == [*ops[1:], ops[0]]


@pytest.mark.parametrize("position", [0, 1, 3])
def test_insert_new_op_before_links_as_xdsl_inserts(position) -> None:
    ours, our_ops = _relus(4)
    theirs, their_ops = _relus(4)
    new_ours = ReluOp.make([ours.args[0]])
    new_theirs = ReluOp.make([theirs.args[0]])
    insert_new_op_before(new_ours, our_ops[position])
    theirs.insert_op_before(new_theirs, their_ops[position])
    names = _names([*our_ops, new_ours], [*their_ops, new_theirs])
    assert _named(_links(ours), names) == _named(_links(theirs), names)
    with pytest.raises(ValueError, match="already in a block"):
        insert_new_op_before(new_ours, our_ops[0])


@pytest.mark.parametrize("start,stop", [(0, 1), (0, 4), (1, 3), (3, 4), (2, 4)])
def test_move_ops_to_new_block_links_as_detach_and_add_op(start, stop) -> None:
    ours, our_ops = _relus(4)
    theirs, their_ops = _relus(4)
    our_body, their_body = Block(), Block()
    move_ops_to_new_block(our_ops[start:stop], our_body)
    for op in their_ops[start:stop]:
        op.detach()
        their_body.add_op(op)
    names = _names(our_ops, their_ops)
    assert _named(_links(ours), names) == _named(_links(theirs), names)
    assert _named(_links(our_body), names) == _named(_links(their_body), names)
    assert [o.parent for o in our_ops[start:stop]] == [our_body] * (stop - start)
    attached = Region(Block())
    with pytest.raises(ValueError, match="already in a region"):
        move_ops_to_new_block(list(ours.ops)[:1], attached.block)


def test_replace_operands_rewires_as_operands_setitem_does() -> None:
    block = Block(arg_types=[tensor([2], f32)] * 3)
    a, b, c = block.args
    ours = AddOp.make([a, b])
    theirs = AddOp.make([a, b])
    same = AddOp.make([a, a])
    block.add_ops([ours, theirs, same])
    replace_operands(ours, {id(b): c, id(c): a})  # an entry nothing reads: no change
    theirs.operands[1] = c
    assert list(ours.operands) == list(theirs.operands) == [a, c]
    assert [u.operation for u in b.uses] == []
    assert {(u.operation, u.index) for u in c.uses} == {(ours, 1), (theirs, 1)}
    replace_operands(same, {id(a): b})  # every occurrence, one use each
    assert list(same.operands) == [b, b]
    assert sorted(u.index for u in b.uses) == [0, 1]
    assert {(u.operation, u.index) for u in a.uses} == {(ours, 0), (theirs, 0)}
    before = ours._operands
    replace_operands(ours, {})
    assert ours._operands is before  # nothing replaced: the tuple is not rebuilt
