"""layout-transmit (seed 001): the family rules, the two walks, and the pass on real graphs.

- the layout rule of every op family (forward `infer_layout`, backward
  `infer_operand_layouts`), and that every op class states one;
- the algorithm: backward demands, input defaults, forward "looks behind", the rule for
  a value several consumers disagree on, recorded input layouts;
- on every bundled example: every op concrete, the reference executor unchanged,
  idempotent;
- O(n): a 20k-op chain, with the recursion limit lowered under the pass;
- random DAGs (hypothesis): concrete, shape-consistent, idempotent, meaning kept.
"""

from __future__ import annotations

import sys
from functools import cache

import numpy as np
import onnx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from examples.make_models import MODELS
from tests.random_graphs import Graph as SharedGraph
from tx8c.dialect import all_ops, make_context
from tx8c.dialect.base import Tx8beOp
from tx8c.dialect.layout import (
    ALL_LAYOUTS,
    UNKNOWN,
    is_cnn,
    result_layout,
    split_layout_str,
)
from tx8c.dialect.ops import backend as be
from tx8c.dialect.ops import conv_gemm as cg
from tx8c.dialect.ops import elementwise as ew
from tx8c.dialect.ops import indexing as ix
from tx8c.dialect.ops import movement as mv
from tx8c.dialect.ops import norm as nm
from tx8c.dialect.ops import reduce_pool as rp
from tx8c.dialect.ops import resize as rs
from tx8c.dialect.types import to_numpy_dtype
from tx8c.frontend.onnx.importer import import_onnx
from tx8c.interfaces.shape_inference import ShapeInference
from tx8c.ir import parse_module, print_module
from tx8c.sim.reference import input_names, main_function, run_reference
from tx8c.transforms.layout.layout_init import LayoutInitPass
from tx8c.transforms.layout.layout_transmit import LayoutTransmitPass, input_layouts

NCHW = (1, 4, 6, 6)


# --------------------------------------------------------------------------------------
# Building graphs
# --------------------------------------------------------------------------------------


class Graph(SharedGraph):
    """A function body built op by op; constants are filled with one value."""

    def const(self, shape, value: float = 0.5) -> SSAValue:
        op = be.ConstantOp.from_array(np.full(shape, value, np.float32))
        self.block.add_op(op)
        return op.results[0]


def layout_pipeline(module: ModuleOp) -> ModuleOp:
    ctx = make_context()
    LayoutInitPass().apply(ctx, module)
    LayoutTransmitPass().apply(ctx, module)
    return module


def transmit(module: ModuleOp) -> ModuleOp:
    LayoutTransmitPass().apply(make_context(), module)
    return module


def tx8be_ops(module: ModuleOp) -> list[Tx8beOp]:
    return [op for op in module.walk() if isinstance(op, Tx8beOp)]


def layout(value: SSAValue) -> str:
    return result_layout(value.owner.layout)


def check_concrete(module: ModuleOp) -> None:
    """Every op has known tokens; a CNN result layout only on a rank-4 result."""
    for op in tx8be_ops(module):
        tokens = split_layout_str(op.layout)
        assert all(t in ALL_LAYOUTS for t in tokens), f"{op.name}: {op.layout}"
        if is_cnn(tokens[-1]):
            assert len(op.results[0].type.get_shape()) == 4, f"{op.name}: {op.layout}"
    for function in module.ops:
        assert UNKNOWN not in input_layouts(function)


def random_inputs(module: ModuleOp, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    args = main_function(module).body.block.args
    return [
        rng.standard_normal(a.type.get_shape()).astype(to_numpy_dtype(a.type.element_type))
        for a in args
    ]


# --------------------------------------------------------------------------------------
# Family rules
# --------------------------------------------------------------------------------------


def test_elementwise_keeps_the_layout_of_the_complete_operand():
    g = Graph(NCHW, NCHW, (6,), (1, 4, 1, 1))
    x, y, vec, chan = g.args
    add = g.op(ew.AddOp, x, y)
    assert add.infer_layout(["NCHW", "NCHW"]) == "NCHW"
    assert add.infer_layout([UNKNOWN, "NHWC"]) == "NHWC"  # the first known one
    assert add.infer_layout([UNKNOWN, UNKNOWN]) == UNKNOWN
    bcast = g.op(ew.MulOp, vec, x)  # V_VS: the complete operand decides, not the first
    assert bcast.infer_layout(["Tensor", "NCHW"]) == "NCHW"
    assert bcast.infer_operand_layouts("NCHW") == ["Tensor", "NCHW"]
    same_rank = g.op(ew.SubOp, x, chan)  # a per-channel operand of the same rank
    assert same_rank.infer_operand_layouts("NHWC") == ["NHWC", "NHWC"]
    relu = g.op(ew.ReluOp, x)
    assert relu.infer_layout(["NHWC"]) == "NHWC"
    assert relu.infer_operand_layouts("NCHW") == ["NCHW"]
    cast = g.op(ew.CastOp, x, to="f16")
    assert cast.infer_layout(["NCHW"]) == "NCHW"


def test_where_ignores_the_condition_forward():
    g = Graph(NCHW, NCHW, NCHW)
    x, y, z = g.args
    cond = g.add(ew.LessOp, x, y)
    where = g.op(ew.WhereOp, cond, y, z)
    assert where.infer_layout(["NHWC", "NCHW", "NCHW"]) == "NCHW"
    assert where.infer_operand_layouts("NCHW") == ["NCHW"] * 3


def test_tensor_class_follows_the_shape():
    g = Graph((2, 5, 8), (8,), (1, 5, 8))
    x, scale, one = g.args
    ln = g.op(nm.LayerNormOp, x, scale)
    assert ln.infer_layout(["NTensor", "Tensor"]) == "NTensor"
    assert ln.infer_operand_layouts("NTensor") == ["NTensor", "Tensor"]
    add = g.op(ew.AddOp, x, one)  # broadcast over the batch: that operand is "Tensor"
    assert add.infer_operand_layouts("NTensor") == ["NTensor", "Tensor"]


def test_norm_and_softmax_keep_the_layout():
    g = Graph(NCHW, (4,), (4,), (4,), (4,))
    x, *params = g.args
    bn = g.op(nm.BatchNormInferenceOp, x, *params)
    assert bn.infer_layout(["NHWC", "Tensor", "Tensor", "Tensor", "Tensor"]) == "NHWC"
    assert bn.infer_operand_layouts("NCHW") == ["NCHW"] + ["Tensor"] * 4
    sm = g.op(nm.SoftmaxOp, x, axis=1)
    assert sm.infer_layout(["NCHW"]) == "NCHW"
    assert sm.infer_operand_layouts("NCHW") == ["NCHW"]


@pytest.mark.parametrize(
    "layout, perm, expected",
    [
        ("NCHW", (0, 2, 3, 1), "NHWC"),
        ("NHWC", (0, 3, 1, 2), "NCHW"),
        ("OIHW", (2, 3, 0, 1), "HWOI"),
        ("HWOI", (2, 3, 0, 1), "OIHW"),
        ("NCHW", (0, 1, 2, 3), "NCHW"),
        ("NCHW", (0, 2, 1, 3), "Tensor"),  # NHCW is no layout: Tensor class
        ("NHWC", (0, 2, 3, 1), "Tensor"),
        ("Tensor", (0, 2, 3, 1), "Tensor"),
        ("NTensor", (0, 2, 3, 1), "Tensor"),  # refitted to the result's shape (dim 0 = 1)
    ],
)
def test_transpose_permutes_cnn_layouts(layout, perm, expected):
    g = Graph(NCHW)
    op = g.op(mv.TransposeOp, g.args[0], perm=perm)
    assert op.infer_layout([layout]) == expected
    backward = op.infer_operand_layouts(expected)
    # Backward asks only for a CNN layout the permutation turns into the result's.
    assert backward == [layout if is_cnn(expected) else UNKNOWN]


def test_transpose_of_a_tensor_class_value_is_tensor_class():
    g = Graph((2, 3, 5))
    op = g.op(mv.TransposeOp, g.args[0], perm=(1, 0, 2))
    assert op.infer_layout(["NTensor"]) == "NTensor"  # result [3, 2, 5]
    assert op.infer_operand_layouts("NTensor") == [UNKNOWN]


def test_reshape_and_broadcast_keep_cnn_only_at_equal_rank_and_never_go_backward():
    g = Graph(NCHW, (1, 4, 1, 1), (2, 3))
    x, chan, mat = g.args
    same_rank = g.op(mv.ReshapeOp, x, shape=(1, 4, 3, 12))
    flat = g.op(mv.ReshapeOp, x, shape=(1, 144))
    wide = g.op(mv.ReshapeOp, mat, shape=(6, 1))
    assert same_rank.infer_layout(["NCHW"]) == "NCHW"
    assert flat.infer_layout(["NCHW"]) == "Tensor"
    assert wide.infer_layout(["NTensor"]) == "NTensor"
    bc = g.op(mv.BroadCastOp, chan, shape=(2, 4, 6, 6))
    assert bc.infer_layout(["NCHW"]) == "NCHW"
    bc3 = g.op(mv.BroadCastOp, mat, shape=(4, 2, 3))
    assert bc3.infer_layout(["NTensor"]) == "NTensor"
    for op in (same_rank, flat, wide, bc, bc3):
        assert op.infer_operand_layouts("NCHW") is None
        assert op.infer_operand_layouts("Tensor") is None


def test_rank_keeping_movement_ops_keep_the_layout_both_ways():
    g = Graph(NCHW, NCHW)
    x, y = g.args
    ops = [
        g.op(mv.SliceOp, x, starts=(1,), ends=(3,), axes=(1,)),
        g.op(mv.ConcatenateOp, x, y, axis=1),
        g.op(mv.SplitOp, x, axis=1, split=(1, 3)),
        g.op(mv.PadOp, x, pads=(0, 0, 1, 1, 0, 0, 1, 1)),
        g.op(mv.TileOp, x, repeats=(1, 1, 2, 1)),
    ]
    for op in ops:
        n = len(op.operands)
        assert op.infer_layout(["NHWC"] * n) == "NHWC", op.name
        assert op.infer_operand_layouts("NHWC") == ["NHWC"] * n, op.name
    concat = ops[1]
    assert concat.infer_layout([UNKNOWN, "NCHW"]) == "NCHW"


def test_gather_keeps_cnn_only_when_the_rank_does():
    g = Graph(NCHW)
    x = g.args[0]
    idx1 = be.ConstantOp.from_array(np.array([0, 2], np.int64))
    idx0 = be.ConstantOp.from_array(np.array(1, np.int64))
    g.block.add_ops([idx1, idx0])
    keep = g.op(ix.GatherOp, x, idx1.results[0], axis=1)  # [1, 2, 6, 6]
    drop = g.op(ix.GatherOp, x, idx0.results[0], axis=1)  # [1, 6, 6]
    assert keep.infer_layout(["NCHW", "Tensor"]) == "NCHW"
    assert keep.infer_operand_layouts("NCHW") == ["NCHW", "Tensor"]
    assert drop.infer_layout(["NCHW", "Tensor"]) == "Tensor"
    assert drop.infer_operand_layouts("Tensor") == [UNKNOWN, "Tensor"]


def test_reduce_keeps_the_layout_only_with_keepdims():
    g = Graph(NCHW)
    x = g.args[0]
    kept = g.op(rp.ReduceOp, x, mode="sum", axes=(2, 3))
    dropped = g.op(rp.ReduceOp, x, mode="mean", axes=(2, 3), keepdims=False)
    assert kept.infer_layout(["NCHW"]) == "NCHW"
    assert kept.infer_operand_layouts("NCHW") == ["NCHW"]
    assert dropped.infer_layout(["NCHW"]) == "Tensor"
    assert dropped.infer_operand_layouts("Tensor") == [UNKNOWN]


def test_pool_resize_and_identity_ops_keep_the_layout():
    g = Graph(NCHW)
    x = g.args[0]
    ops = [
        g.op(rp.PoolOp, x, mode="max", kernel=(2, 2), strides=(2, 2)),
        g.op(rs.ResizeOp, x, mode="nearest", sizes=(1, 4, 12, 12)),
        g.op(be.ChannelNormOp, x, direction=True),
        g.op(be.LoadVarOp, x),
    ]
    for op in ops:
        assert op.infer_layout(["NCHW"]) == "NCHW", op.name
        assert op.infer_operand_layouts("NCHW") == ["NCHW"], op.name


def test_conv_and_gemm_have_fixed_layouts():
    g = Graph((1, 8, 8, 3), (3, 3, 4, 3), (4,), (2, 5, 16), (16, 4))
    x, w, b, a, m = g.args
    conv = g.op(cg.ConvOp, x, w, b, data_format="NHWC", weight_format="HWOI")
    assert conv.initial_layout_str() == "NHWC-HWOI-NHWC"
    assert conv.infer_layout(["Tensor", "Tensor", "Tensor"]) == "NHWC-HWOI-NHWC"
    assert conv.infer_operand_layouts("NHWC") == ["NHWC", "HWOI", "Tensor"]
    gemm = g.op(cg.GemmOp, a, m)
    assert gemm.initial_layout_str() == "NTensor-NTensor-NTensor"
    assert gemm.infer_operand_layouts("NTensor") == ["NTensor", "NTensor"]


def test_constants_default_to_their_tensor_class():
    g = Graph()
    one = be.ConstantOp.from_array(np.ones((1, 4), np.float32))
    many = be.ConstantOp.from_array(np.ones((3, 4), np.float32))
    for op, expected in ((one, "Tensor"), (many, "NTensor")):
        assert op.initial_layout_str() is None
        assert op.infer_layout([]) == expected
        assert op.infer_operand_layouts(expected) is None
    del g


def test_every_op_class_states_its_layout_rule():
    """Only ops without data operands (and Group, a container) keep the interface's
    conservative default; every other op says how its layout follows its operands."""
    default_ok = {"tx8be.Constant", "tx8be.LoadConst", "tx8be.Group"}
    for cls in all_ops():
        if not issubclass(cls, Tx8beOp):
            continue  # Yield
        stated = cls.infer_layout is not ShapeInference.infer_layout
        assert stated != (cls.name in default_ok), cls.name
        backward = cls.infer_operand_layouts is not ShapeInference.infer_operand_layouts
        assert backward != (cls.name in default_ok), cls.name


# --------------------------------------------------------------------------------------
# The algorithm
# --------------------------------------------------------------------------------------


def test_seed001_abcdef():
    g = Graph((1, 4, 6, 6), (4, 4, 1, 1))
    a, b = g.args
    c = g.add(cg.ConvOp, a, b)
    d = g.add(ew.ReluOp, a)
    e = g.add(ew.SigmoidOp, c)
    f = g.add(ew.AddOp, e, d)
    module = layout_pipeline(g.module(f))
    assert input_layouts(main_function(module)) == ["NCHW", "OIHW"]
    assert [layout(v) for v in (c, d, e, f)] == ["NCHW"] * 4
    assert c.owner.layout == "NCHW-OIHW-NCHW"


def test_forward_looks_behind_through_a_chain_of_uncertain_ops():
    """Seed 001: Conv -> Reshape -> C -> G -> Reshape -> Gemm."""
    g = Graph((1, 3, 8, 8), (4, 3, 3, 3), (144, 10))
    x, w, wg = g.args
    conv = g.add(cg.ConvOp, x, w)
    r1 = g.add(mv.ReshapeOp, conv, shape=(1, 4, 36))  # rank changes: Tensor class
    c = g.add(ew.ReluOp, r1)
    gg = g.add(ew.SigmoidOp, c)
    r2 = g.add(mv.ReshapeOp, gg, shape=(1, 144))
    out = g.add(cg.GemmOp, r2, wg)
    layout_pipeline(g.module(out))
    assert [layout(v) for v in (conv, r1, c, gg, r2)] == ["NCHW"] + ["Tensor"] * 4
    assert out.owner.layout == "Tensor-NTensor-Tensor"


def test_the_latest_consumer_decides_a_disputed_value():
    """A value is coloured once, by the first demand of the backward walk: the consumer
    latest in program order (here the Gemm, which wants it Tensor-class)."""
    g = Graph(NCHW, (4, 4, 1, 1), (6, 3))
    x, w, m = g.args
    conv = g.add(cg.ConvOp, x, w)
    gemm = g.add(cg.GemmOp, x, m)
    module = layout_pipeline(g.module(conv, gemm))
    assert input_layouts(main_function(module))[0] == "Tensor"
    g2 = Graph(NCHW, (4, 4, 1, 1), (6, 3))
    x, w, m = g2.args
    gemm = g2.add(cg.GemmOp, x, m)
    conv = g2.add(cg.ConvOp, x, w)
    module = layout_pipeline(g2.module(conv, gemm))
    assert input_layouts(main_function(module))[0] == "NCHW"


def test_demands_flow_back_through_many_ops_and_stop_at_reshape():
    g = Graph((1, 144), NCHW, (4, 4, 1, 1))
    flat, y, w = g.args
    r = g.add(mv.ReshapeOp, flat, shape=NCHW)
    s = g.add(ew.AddOp, r, y)
    t = g.add(ew.TanhOp, s)
    conv = g.add(cg.ConvOp, t, w)
    module = layout_pipeline(g.module(conv))
    assert [layout(v) for v in (r, s, t)] == ["NCHW"] * 3
    # the Reshape took its consumer's layout but asked nothing of its operand
    assert input_layouts(main_function(module)) == ["Tensor", "NCHW", "OIHW"]


def test_recorded_and_preset_layouts_are_kept():
    text = """
    func.func @main(%x: tensor<1x4x6x6xf32> {tx8c.layout = "NHWC"}) -> tensor<1x4x6x6xf32> {
      %0 = tx8be.Relu %x : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
      %1 = tx8be.Sigmoid %0 {layout_str = "NCHW"} : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
      func.return %1 : tensor<1x4x6x6xf32>
    }"""
    module = transmit(parse_module(text))
    relu, sigmoid = tx8be_ops(module)
    assert sigmoid.layout == "NCHW"  # set before: known
    assert relu.layout == "NCHW"  # demanded by the Sigmoid
    # recorded before: known, although the Relu asks for NCHW
    assert input_layouts(main_function(module)) == ["NHWC"]


def test_transmit_without_layout_init_still_knows_conv_and_gemm():
    g = Graph(NCHW, (4, 4, 1, 1))
    x, w = g.args
    relu = g.add(ew.ReluOp, x)
    conv = g.add(cg.ConvOp, relu, w)
    transmit(g.module(conv))
    assert conv.owner.layout == "NCHW-OIHW-NCHW"
    assert layout(relu) == "NCHW"


def test_idempotent_text():
    g = Graph((1, 3, 8, 8), (4, 3, 3, 3), (144, 10))
    x, w, wg = g.args
    conv = g.add(cg.ConvOp, x, w)
    flat = g.add(mv.ReshapeOp, conv, shape=(1, 144))
    out = g.add(cg.GemmOp, flat, wg)
    module = layout_pipeline(g.module(out))
    once = print_module(module)
    assert print_module(transmit(module)) == once


# --------------------------------------------------------------------------------------
# Bundled examples
# --------------------------------------------------------------------------------------


@cache
def _onnx_model(name: str) -> onnx.ModelProto:
    return MODELS[name]()


def _example_feeds(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    """Valid inputs for the bundled examples (token ids in range, a real mask)."""
    rng = np.random.default_rng(0)
    feeds = {}
    for vi in model.graph.input:
        shape = [d.dim_value for d in vi.type.tensor_type.shape.dim]
        if vi.name == "input_ids":
            feeds[vi.name] = rng.integers(0, 100, shape, dtype=np.int64)
        elif vi.name == "position_ids":
            feeds[vi.name] = np.broadcast_to(np.arange(shape[-1], dtype=np.int64), shape).copy()
        elif vi.name == "attention_mask":
            feeds[vi.name] = np.ones(shape, dtype=np.int64)
        else:
            feeds[vi.name] = rng.standard_normal(shape).astype(np.float32)
    return feeds


@pytest.mark.parametrize("name", sorted(MODELS))
def test_examples_concrete_same_meaning_idempotent(name):
    model = _onnx_model(name)
    module = import_onnx(model).module
    feeds = _example_feeds(model)
    names = input_names(main_function(module))
    before = run_reference(module, {n: feeds[n] for n in names})
    layout_pipeline(module)
    module.verify()
    check_concrete(module)
    for op in tx8be_ops(module):
        if op.initial_layout_str() is not None:
            assert op.layout == op.initial_layout_str()
    after = run_reference(module, {n: feeds[n] for n in names})
    for b, a in zip(before, after, strict=True):
        np.testing.assert_array_equal(a, b)
    once = print_module(module)
    assert print_module(transmit(module)) == once


def test_residual_cnn_is_cnn_until_the_classifier():
    module = layout_pipeline(import_onnx(_onnx_model("residual_cnn")).module)
    layouts = {op.name: set() for op in tx8be_ops(module)}
    for op in tx8be_ops(module):
        layouts[op.name].add(result_layout(op.layout))
    assert layouts["tx8be.Conv"] == {"NCHW"}
    assert layouts["tx8be.BatchNorm_Inference"] == {"NCHW"}
    assert layouts["tx8be.Relu"] == {"NCHW"}
    assert layouts["tx8be.Reshape"] <= {"Tensor", "NTensor"}


# --------------------------------------------------------------------------------------
# O(n): a long chain, no recursion
# --------------------------------------------------------------------------------------


def _long_chain(n: int) -> tuple[ModuleOp, list[SSAValue]]:
    """x -> n/2 unary ops -> Conv -> n/2 unary ops -> Reshape -> Gemm: the backward walk
    carries the Conv's demand up n/2 ops, the forward walk its layout down n/2 ops."""
    g = Graph(NCHW, (4, 4, 1, 1), (144, 10))
    x, w, wg = g.args
    values = []
    v = x
    for i in range(n // 2):
        v = g.add(ew.ReluOp if i % 2 else ew.SigmoidOp, v)
        values.append(v)
    v = g.add(cg.ConvOp, v, w)
    for i in range(n // 2):
        v = g.add(ew.ReluOp if i % 2 else ew.TanhOp, v)
        values.append(v)
    v = g.add(mv.ReshapeOp, v, shape=(1, 144))
    return g.module(g.add(cg.GemmOp, v, wg)), values


def test_20k_op_chain_is_linear_and_not_recursive():
    module, values = _long_chain(20_000)
    ctx = make_context()
    LayoutInitPass().apply(ctx, module)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)  # far below the chain's length: any recursion would fail
    try:
        LayoutTransmitPass().apply(ctx, module)
    finally:
        sys.setrecursionlimit(limit)
    assert all(layout(v) == "NCHW" for v in values)
    assert input_layouts(main_function(module))[0] == "NCHW"
    # linearity is checked by counting calls (next test); timing lives in bench/


def test_each_op_is_asked_once_per_walk(monkeypatch):
    calls = {"forward": 0, "backward": 0}
    forward, backward = ew.UnaryOp.infer_layout, ew.UnaryOp.infer_operand_layouts

    def counted_forward(self, layouts):
        calls["forward"] += 1
        return forward(self, layouts)

    def counted_backward(self, layout):
        calls["backward"] += 1
        return backward(self, layout)

    monkeypatch.setattr(ew.UnaryOp, "infer_layout", counted_forward)
    monkeypatch.setattr(ew.UnaryOp, "infer_operand_layouts", counted_backward)
    module, values = _long_chain(2_000)
    layout_pipeline(module)
    # the first half is coloured backward (asked backward once each), the second half
    # forward (asked forward once each)
    assert calls == {"forward": 1_000, "backward": 1_000}


# --------------------------------------------------------------------------------------
# Random DAGs
# --------------------------------------------------------------------------------------

S4 = (2, 6, 6, 6)  # C = H = W, so NCHW <-> NHWC transposes keep the shape
S2 = (12, 36)
S3 = (2, 36, 6)


def _pick(data, g: Graph, pool: list[SSAValue], shape) -> SSAValue:
    """A value of `shape` from the pool, or a reshaped one (S4, S2, S3 hold the same
    number of elements) when the pool has none."""
    candidates = [v for v in pool if tuple(v.type.get_shape()) == shape]
    if candidates:
        return data.draw(st.sampled_from(candidates))
    sized = [v for v in pool if v.type.element_count() == np.prod(shape)]
    return g.add(mv.ReshapeOp, data.draw(st.sampled_from(sized)), shape=shape)


def _grow(data, g: Graph, pool: list[SSAValue]) -> None:
    """Add one random op (with its constants) whose operands come from `pool`."""
    kind = data.draw(st.sampled_from([
        "conv", "conv_nhwc", "gemm2", "gemm3", "unary", "add", "bias", "to2", "to3",
        "to4", "transpose", "broadcast", "reduce", "concat_slice", "where",
    ]))
    shape_in = {"gemm2": S2, "to4": S2, "gemm3": S3}.get(kind, S4)
    if kind in ("unary", "add", "where"):
        shape_in = data.draw(st.sampled_from([S4, S2, S3]))
    x = _pick(data, g, pool, shape_in)
    if kind == "conv":
        pool.append(g.add(cg.ConvOp, x, g.const((6, 6, 1, 1), 0.1)))
    elif kind == "conv_nhwc":
        pool.append(g.add(cg.ConvOp, x, g.const((1, 1, 6, 6), 0.1),
                          data_format="NHWC", weight_format="HWOI"))
    elif kind == "gemm2":
        pool.append(g.add(cg.GemmOp, x, g.const((36, 36), 0.05)))
    elif kind == "gemm3":
        pool.append(g.add(cg.GemmOp, x, g.const((6, 6), 0.1)))
    elif kind == "unary":
        cls = data.draw(st.sampled_from([ew.ReluOp, ew.TanhOp, ew.SigmoidOp]))
        pool.append(g.add(cls, x))
    elif kind == "add":
        pool.append(g.add(ew.AddOp, x, _pick(data, g, pool, shape_in)))
    elif kind == "bias":
        pool.append(g.add(ew.MulOp, x, g.const((6,), 0.5)))
    elif kind in ("to2", "to3", "to4"):
        target = {"to2": S2, "to3": S3, "to4": S4}[kind]
        pool.append(g.add(mv.ReshapeOp, x, shape=target))
    elif kind == "transpose":
        perm = data.draw(st.sampled_from([(0, 2, 3, 1), (0, 3, 1, 2), (0, 1, 3, 2)]))
        pool.append(g.add(mv.TransposeOp, x, perm=perm))
    elif kind == "broadcast":
        pool.append(g.add(mv.BroadCastOp, g.add(rp.ReduceOp, x, mode="max", axes=(2,)),
                          shape=S4))
    elif kind == "reduce":
        pool.append(g.add(rp.ReduceOp, x, mode="mean", axes=(1, 2), keepdims=False))
    elif kind == "concat_slice":
        both = g.add(mv.ConcatenateOp, x, _pick(data, g, pool, S4), axis=1)
        pool.append(g.add(mv.SliceOp, both, starts=(3,), ends=(9,), axes=(1,)))
    elif kind == "where":
        y = _pick(data, g, pool, shape_in)
        cond = g.add(ew.LessOp, x, y)
        pool.append(g.add(ew.WhereOp, cond, x, y))


@st.composite
def random_dag(draw):
    data = draw(st.data())
    input_shapes = draw(st.lists(st.sampled_from([S4, S2, S3]), min_size=1, max_size=3))
    g = Graph(*input_shapes)
    pool = list(g.args)
    for _ in range(draw(st.integers(3, 14))):
        _grow(data, g, pool)
    used = {operand for op in g.block.ops for operand in op.operands}
    outputs = [v for v in pool if v not in used and isinstance(v.owner, Tx8beOp)]
    return g.module(*(outputs or [g.add(ew.ReluOp, pool[-1])]))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_dag())
def test_random_dags(module):
    inputs = random_inputs(module)
    before = run_reference(module, inputs)
    known = {
        id(op): op.initial_layout_str() for op in tx8be_ops(module)
        if op.initial_layout_str() is not None
    }
    layout_pipeline(module)
    module.verify()
    check_concrete(module)
    for op in tx8be_ops(module):
        if id(op) in known:
            assert op.layout == known[id(op)]
    after = run_reference(module, inputs)
    for b, a in zip(before, after, strict=True):
        np.testing.assert_array_equal(a, b)
    once = print_module(module)
    assert print_module(transmit(module)) == once


def test_an_op_whose_rule_cannot_tell_gets_the_tensor_class(monkeypatch):
    monkeypatch.setattr(ew.TanhOp, "infer_layout", lambda self, layouts: UNKNOWN)
    g = Graph((2, 3, 4, 4))
    out = g.add(ew.TanhOp, g.add(ew.ReluOp, g.args[0]))
    module = layout_pipeline(g.module(out))
    assert layout(out) == "NTensor"
    check_concrete(module)
