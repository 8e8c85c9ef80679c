"""Backend ops: Constant, LoadConst, ChannelNorm, LoadVar, StoreVar, Group.

None of them is an ONNX op. Their logical meaning is compared against the ONNX graph with
the same math: Constant and LoadConst against an ONNX `Constant` node; ChannelNorm,
LoadVar and StoreVar (which only move or re-lay bytes) against `Identity`; a Group
against the ONNX graph of the ops it encloses, and against the same ops run without it.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from onnx import helper, numpy_helper
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Region

from tests.helpers import (
    OnnxCase,
    check_against_onnx,
    check_shapes,
    node,
    run_onnx,
    run_op,
)
from tx8c.dialect.attrs import AlignMode
from tx8c.dialect.base import OpRuleError
from tx8c.dialect.ops import backend as be
from tx8c.dialect.ops import elementwise as ew
from tx8c.dialect.types import tensor_of
from tx8c.errors import Tx8ComputeError
from tx8c.interfaces.oplib import ALL_OPERANDS, Engine
from tx8c.sim.reference import run_reference

RNG_SEEDS = (0, 1, 2)


def _shape(rng: np.random.Generator) -> tuple[int, ...]:
    rank = int(rng.integers(1, 5))
    return tuple(int(d) for d in rng.integers(1, 6, size=rank))


def _data(rng: np.random.Generator, shape, dtype=np.float32) -> np.ndarray:
    if np.dtype(dtype) == np.bool_:
        return rng.random(shape) > 0.5
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-100, 100, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


# --------------------------------------------------------------------------------------
# Constant, ChannelNorm, LoadVar, StoreVar against onnxruntime
# --------------------------------------------------------------------------------------


def constant_case(seed: int) -> OnnxCase:
    rng = np.random.default_rng(seed)
    value = _data(rng, _shape(rng), (np.float32, np.int64, np.bool_)[seed])
    onnx_value = numpy_helper.from_array(value, "value")
    return OnnxCase(be.ConstantOp, [], {"value": value}, [node("Constant", [], value=onnx_value)])


IDENTITY_OPS = (be.ChannelNormOp, be.LoadVarOp, be.StoreVarOp)


def identity_case(op_cls, seed: int, dtype=np.float32) -> OnnxCase:
    """These ops keep the values; ONNX Identity has the same logical meaning."""
    rng = np.random.default_rng(seed)
    attrs = {"direction": seed % 2 == 0} if op_cls is be.ChannelNormOp else {}
    x = _data(rng, _shape(rng), dtype)
    return OnnxCase(op_cls, [x], attrs, [node("Identity", ["in0"])])


CASES = [constant_case(s) for s in RNG_SEEDS] + [
    identity_case(op, s) for op in IDENTITY_OPS for s in RNG_SEEDS
]
IDS = [f"{c.id}-{i % 3}" for i, c in enumerate(CASES)]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_matches_onnxruntime(case: OnnxCase) -> None:
    check_against_onnx(case)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_infer_shapes_matches_compute(case: OnnxCase) -> None:
    check_shapes(case)


@pytest.mark.parametrize("dtype", [np.float16, np.int8, np.int32, np.int64, np.bool_])
@pytest.mark.parametrize("op_cls", IDENTITY_OPS, ids=lambda c: c.name)
def test_identity_ops_in_other_dtypes(op_cls, dtype) -> None:
    check_against_onnx(identity_case(op_cls, 3, dtype))


@pytest.mark.parametrize("op_cls", IDENTITY_OPS, ids=lambda c: c.name)
def test_identity_ops_keep_bf16_bits(op_cls) -> None:
    x = _data(np.random.default_rng(4), (2, 3, 5)).astype(ml_dtypes.bfloat16)
    attrs = {"direction": False} if op_cls is be.ChannelNormOp else {}
    (got,) = run_op(op_cls, [x], **attrs)
    assert got.dtype == x.dtype
    np.testing.assert_array_equal(got.view(np.uint16), x.view(np.uint16))


@pytest.mark.parametrize(
    "value",
    [
        np.arange(6, dtype=np.float16).reshape(2, 3),
        np.array([1.5, -2.25], dtype=ml_dtypes.bfloat16),
        np.array([[True, False, True]]),
        np.array(7, dtype=np.int64),
        np.full((2, 2), 3, dtype=np.int8),
    ],
    ids=["f16", "bf16", "i1", "scalar-i64", "i8"],
)
def test_constant_from_array_keeps_value_and_type(value: np.ndarray) -> None:
    op = be.ConstantOp.from_array(value)
    op.verify()
    assert op.results[0].type == tensor_of(value)
    (got,) = op.compute()
    assert got.dtype == value.dtype
    np.testing.assert_array_equal(got, value)


def test_constant_from_an_onnx_initializer_keeps_its_raw_bytes() -> None:
    """An initializer's array (a view of its raw data) is stored without a copy; any
    other view (a slice, a transpose, an offset) is stored as its own bytes."""
    weights = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    raw = numpy_helper.from_array(weights, "w").raw_data
    array = numpy_helper.to_array(numpy_helper.from_array(weights, "w"))
    op = be.ConstantOp.from_array(array)
    assert op.value.data.data == weights.tobytes()
    view = np.frombuffer(raw, np.float32).reshape(2, 3, 4)
    assert be.ConstantOp.from_array(view).value.data.data is raw  # shared, not copied
    for part in (view[1], view[:, 1:], view.transpose(2, 0, 1), view.reshape(-1)[4:]):
        op = be.ConstantOp.from_array(part)
        op.verify()
        assert op.value.data.data == np.ascontiguousarray(part).tobytes()
        (got,) = op.compute()
        np.testing.assert_array_equal(got, part)


# --------------------------------------------------------------------------------------
# LoadConst: the value comes from the constant container
# --------------------------------------------------------------------------------------


def _load_const_module(const_id: int, result_type, **attrs) -> ModuleOp:
    op = be.LoadConstOp.make([], [result_type], const_id=const_id, **attrs)
    block = Block()
    block.add_ops([op, func.ReturnOp(op.results[0])])
    function = func.FuncOp("main", ([], [result_type]), Region(block))
    module = ModuleOp([function])
    module.verify()
    return module


@pytest.mark.parametrize("seed", RNG_SEEDS)
def test_load_const_matches_onnx_constant(seed: int) -> None:
    rng = np.random.default_rng(seed)
    value = _data(rng, _shape(rng), (np.float32, np.int32, np.float16)[seed])
    const_id = int(rng.integers(0, 50))
    onnx_value = numpy_helper.from_array(value, "value")
    case = OnnxCase(be.LoadConstOp, [], {}, [node("Constant", [], value=onnx_value)])
    (expected,) = run_onnx(case)
    others = {const_id + 1: np.zeros(3, np.float32)}  # the container holds other ids too
    module = _load_const_module(const_id, tensor_of(value), bypass_codegen=seed == 1)
    (got,) = run_reference(module, [], constants={const_id: value, **others})
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


def test_load_const_errors_name_the_op_and_id() -> None:
    value = np.ones((2, 3), np.float32)
    module = _load_const_module(4, tensor_of(value))
    op = next(o for o in module.walk() if isinstance(o, be.LoadConstOp))
    with pytest.raises(Tx8ComputeError, match=r"'tx8be.LoadConst' \(const_id = 4\).*not in"):
        op.load_const({0: value})
    with pytest.raises(Tx8ComputeError, match=r"const_id = 4.*\[3, 2\] float32"):
        op.load_const({4: value.reshape(3, 2)})
    with pytest.raises(Tx8ComputeError, match=r"const_id = 4.*\[2, 3\] float16"):
        op.load_const({4: value.astype(np.float16)})
    with pytest.raises(Tx8ComputeError, match="needs the module's constant container"):
        op.compute()


def test_load_const_needs_its_result_type() -> None:
    with pytest.raises(OpRuleError, match="result type given explicitly"):
        be.LoadConstOp.make([], const_id=0)


# --------------------------------------------------------------------------------------
# Group: same results as the ops it encloses, and as their ONNX graph
# --------------------------------------------------------------------------------------


def _chain(rng: np.random.Generator):
    """A function computing (sigmoid(relu(x + y) * z), relu(x + y)) with DMA and
    ChannelNorm ops on the way; its ops in order; its inputs; the ONNX graph."""
    shape = _shape(rng)
    inputs = [_data(rng, shape), _data(rng, shape[-1:]), _data(rng, shape)]
    block = Block(arg_types=[tensor_of(a) for a in inputs])
    x, y, z = block.args
    ops = []

    def add(op):
        ops.append(op)
        return op.results[0]

    loaded = add(be.LoadVarOp.make([x]))
    s = add(ew.AddOp.make([loaded, y]))
    aligned = add(be.ChannelNormOp.make([s], direction=True))
    r = add(ew.ReluOp.make([aligned]))
    compact = add(be.ChannelNormOp.make([r], direction=False))
    m = add(ew.MulOp.make([compact, z]))
    out = add(be.StoreVarOp.make([add(ew.SigmoidOp.make([m]))]))
    block.add_ops([*ops, func.ReturnOp(out, r)])
    function = func.FuncOp("main", ([a.type for a in block.args], [out.type, r.type]),
                           Region(block))
    module = ModuleOp([function])
    module.verify()
    nodes = [
        helper.make_node("Add", ["in0", "in1"], ["s"]),
        helper.make_node("Relu", ["s"], ["out1"]),
        helper.make_node("Mul", ["out1", "in2"], ["m"]),
        helper.make_node("Sigmoid", ["m"], ["out0"]),
    ]
    return module, ops, inputs, OnnxCase(be.GroupOp, inputs, {}, nodes, n_outputs=2)


def _wrap_all(ops) -> list[be.GroupOp]:
    return [be.GroupOp.wrap(ops, group_id=0)]


def _wrap_middle(ops) -> list[be.GroupOp]:
    return [be.GroupOp.wrap(ops[1:4], group_id=1, group_tag=0)]


def _wrap_nested(ops) -> list[be.GroupOp]:
    inner = be.GroupOp.wrap(ops[3:6], group_id=2)
    block_ops = list(ops[0].parent.ops)
    start = block_ops.index(ops[1])
    outer = be.GroupOp.wrap(block_ops[start:block_ops.index(inner) + 2], group_id=3)
    return [inner, outer]


WRAPS = {"all": _wrap_all, "middle": _wrap_middle, "nested": _wrap_nested}
PARENTS = {"all": ["func.func"], "middle": ["func.func"], "nested": ["tx8be.Group", "func.func"]}


@pytest.mark.parametrize("seed, wrap", list(zip(RNG_SEEDS, WRAPS)), ids=list(WRAPS))
def test_group_gives_the_same_results_as_its_ops(seed: int, wrap: str) -> None:
    module, ops, inputs, case = _chain(np.random.default_rng(seed))
    plain = run_reference(module, inputs)
    groups = WRAPS[wrap](ops)
    module.verify()
    assert [g.parent_op().name for g in groups] == PARENTS[wrap]
    grouped = run_reference(module, inputs)
    expected = run_onnx(case)
    for p, g, e in zip(plain, grouped, expected, strict=True):
        np.testing.assert_array_equal(g, p)
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


def test_wrap_rewires_operands_and_results() -> None:
    module, ops, _, _ = _chain(np.random.default_rng(0))
    group = be.GroupOp.wrap(ops[1:4], group_id=7, layout_str="NCHW")
    # operands: the LoadVar result and y; results: relu (used by ChannelNorm and return)
    y = ops[0].parent.args[1]
    assert list(group.operands) == [ops[0].results[0], y]
    assert tuple(ops[1].operands) == (group.block.args[0], group.block.args[1])
    assert [r.type for r in group.results] == [ops[3].results[0].type]
    assert ops[4].operands[0] is group.results[0]
    assert tuple(group.yield_op.operands) == (ops[3].results[0],)
    assert group.attr("group_id") == 7 and group.layout == "NCHW"
    module.verify()


def test_wrap_needs_consecutive_ops() -> None:
    _, ops, _, _ = _chain(np.random.default_rng(0))
    with pytest.raises(ValueError, match="consecutive"):
        be.GroupOp.wrap([ops[0], ops[2]])
    with pytest.raises(ValueError, match="at least one op"):
        be.GroupOp.wrap([])


def test_group_make_builds_from_a_block() -> None:
    x = np.ones((2, 3), np.float32)
    outer = Block(arg_types=[tensor_of(x)])
    body = Block(arg_types=[tensor_of(x)])
    relu = ew.ReluOp.make([body.args[0]])
    body.add_ops([relu, be.YieldOp(relu)])
    group = be.GroupOp.make(list(outer.args), body=body, spm_alloc_size=1024,
                            dev_region=[4, 4])
    outer.add_ops([group, func.ReturnOp(group)])
    ModuleOp([func.FuncOp("main", ([tensor_of(x)], [tensor_of(x)]), Region(outer))]).verify()
    assert group.infer_shapes() == [tensor_of(x)] and group.num_results() == 1
    assert group.attr("dev_region") == (4, 4) and group.attr("spm_alloc_size") == 1024
    with pytest.raises(TypeError, match="needs body"):
        be.GroupOp.make(list(outer.args))
    with pytest.raises(TypeError, match="no attribute"):
        be.GroupOp.make([], body=Block(), colour="red")


def test_group_attribute_defaults() -> None:
    body = Block()
    body.add_op(be.YieldOp())
    group = be.GroupOp.make([], body=body)
    defaults = {
        "pipeline_parallel": False, "sp_stage_num": 1, "dev_region": None,
        "spm_alloc_size": None, "group_tag": None, "stream_online_check": None,
        "stream_offline": None, "need_barrier": True, "group_id": -1, "template_id": -1,
    }
    assert {name: group.attr(name) for name in defaults} == defaults
    assert group.query_op_attr().default_layout == "Tensor"


# --------------------------------------------------------------------------------------
# OpAttr
# --------------------------------------------------------------------------------------


def test_query_op_attr() -> None:
    x = Block(arg_types=[tensor_of(np.ones((1, 3, 4, 4), np.float32))]).args[0]
    body = Block()
    body.add_op(be.YieldOp())
    table = {
        "Constant": (be.ConstantOp.from_array(np.ones(3, np.float32)), AlignMode.BOTH,
                     Engine.NONE),
        "LoadConst": (be.LoadConstOp.make([], [x.type], const_id=0), AlignMode.BOTH,
                      Engine.LSU),
        "to ALIGN": (be.ChannelNormOp.make([x], direction=True), AlignMode.ALIGN, Engine.CT),
        "to NALIGN": (be.ChannelNormOp.make([x], direction=False), AlignMode.NALIGN,
                      Engine.CT),
        "LoadVar": (be.LoadVarOp.make([x]), AlignMode.BOTH, Engine.LSU),
        "StoreVar": (be.StoreVarOp.make([x]), AlignMode.BOTH, Engine.LSU),
        "Group": (be.GroupOp.make([], body=body), AlignMode.BOTH, Engine.NONE),
    }
    for name, (op, align, engine) in table.items():
        attr = op.query_op_attr()
        assert (attr.align_mode, attr.engine) == (align, engine), name
        assert not attr.need_preset_to_npu, name
    assert table["LoadVar"][0].query_op_attr().need_load == 0
    assert table["LoadVar"][0].query_op_attr().need_store == ALL_OPERANDS
    assert table["StoreVar"][0].query_op_attr().need_store == 0
