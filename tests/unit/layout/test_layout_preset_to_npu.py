"""layout-preset-to-npu (seed 002): the permute_attributes contract of every op family, the
pass on the seed's graphs and the bundled examples, and on random DAGs: meaning kept, the
demands met, `optimal` the brute-force minimum and never worse than `greedy`."""

from __future__ import annotations

import itertools
import subprocess
import sys
from functools import cache

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block

from examples.make_models import MODELS
from tests.helpers import main_block as block_of
from tests.random_graphs import NCHW, NHWC, Graph, X, random_inputs
from tests.random_graphs import build_dag as random_dag
from tests.random_graphs import dag_steps as random_dag_steps
from tx8c.analysis.layout_problem import read_layout_stats
from tx8c.dialect import all_ops, make_context
from tx8c.dialect.base import Tx8beOp
from tx8c.dialect.layout import is_cnn, split_layout_str, value_layout
from tx8c.dialect.ops import backend as be
from tx8c.dialect.ops import conv_gemm as cg
from tx8c.dialect.ops import elementwise as ew
from tx8c.dialect.ops import movement as mv
from tx8c.dialect.ops import norm as nm
from tx8c.dialect.ops import reduce_pool as rp
from tx8c.dialect.ops import resize as rs
from tx8c.dialect.types import tensor_of, to_numpy_dtype
from tx8c.errors import Tx8Error
from tx8c.frontend.onnx.importer import import_onnx
from tx8c.interfaces.shape_inference import ShapeInference
from tx8c.ir import parse_module as parse
from tx8c.ir import print_module as print_ir
from tx8c.sim.reference import run_reference
from tx8c.transforms.layout.layout_init import LayoutInitPass
from tx8c.transforms.layout.layout_preset_to_npu import (
    LayoutPresetToNpuPass,
    apply_sides,
    build_problem,
    solve_greedy,
    solve_optimal,
    transpose_cost,
)
from tx8c.transforms.layout.layout_transmit import LayoutTransmitPass

STRATEGIES = ("greedy", "optimal")


# --------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------


def transmit(module: ModuleOp) -> ModuleOp:
    LayoutInitPass().apply(make_context(), module)
    LayoutTransmitPass().apply(make_context(), module)
    return module


def preset(module: ModuleOp, strategy: str = "optimal") -> ModuleOp:
    LayoutPresetToNpuPass(strategy=strategy).apply(make_context(), module)
    module.verify()
    return module


def stats(module: ModuleOp) -> dict:
    return read_layout_stats(module)["layout-preset-to-npu"]


def assert_same(before: list[np.ndarray], after: list[np.ndarray]) -> None:
    """Equal up to the summation order of a permuted reduction (a mean over NHWC sums in
    another order than over NCHW): float32 rounding, relative to the output's scale."""
    assert len(before) == len(after)
    for b, a in zip(before, after, strict=True):
        assert a.shape == b.shape and a.dtype == b.dtype
        scale = max(1.0, float(np.max(np.abs(b), initial=0.0)))
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5 * scale)


def runtime_transposes(module: ModuleOp) -> tuple[int, int]:
    """(count, bytes) of Transposes of run-time values, counted on the IR itself."""
    count = size = 0
    for op in block_of(module).ops:
        if isinstance(op, mv.TransposeOp) and not isinstance(op.operands[0].owner, be.ConstantOp):
            count += 1
            shape = op.results[0].type.get_shape()
            itemsize = to_numpy_dtype(op.results[0].type.get_element_type()).itemsize
            size += int(np.prod(shape)) * itemsize
    return count, size


def assert_demands_met(module: ModuleOp) -> None:
    """Every op that needs the preset and has CNN data reads NHWC features and HWOI
    weights (unless it cannot run permuted at all) and says so in its layout_str."""
    for op in block_of(module).ops:
        if not isinstance(op, Tx8beOp) or not op.query_op_attr().need_preset_to_npu:
            continue
        tokens = split_layout_str(op.layout)
        if not any(is_cnn(t) for t in tokens) or op.permute_attributes(NHWC) is None:
            continue
        assert all(t in ("NHWC", "HWOI") for t in tokens if is_cnn(t)), op.layout
        for i, operand in enumerate(op.operands):
            if len(operand.type.get_shape()) == 4:
                want = tokens[i] if len(tokens) > 1 else tokens[0]
                assert value_layout(operand) == want, f"{op.name} operand {i}"


# --------------------------------------------------------------------------------------
# permute_attributes: the contract, family by family
# --------------------------------------------------------------------------------------


def _arranged(array: np.ndarray, perm) -> np.ndarray:
    """The contract's rearrangement of a lower-rank broadcast operand."""
    rank = array.ndim
    padded = array.reshape((1,) * (4 - rank) + array.shape)
    moved = np.transpose(padded, perm)
    shape = list(moved.shape)
    while len(shape) > rank and shape[0] == 1:
        shape.pop(0)
    return moved.reshape(shape)


def _permuted_operand(op: Tx8beOp, new_attrs: dict, index: int, array: np.ndarray, perm):
    """Operand `index` as the contract feeds it to the op made with `new_attrs`."""
    if isinstance(op, cg.ConvOp):  # the per-operand layout_str: Conv's own formats
        if index == 0:
            return np.transpose(array, perm)
        if index == 1:
            old, new = op.attr("weight_format"), new_attrs["weight_format"]
            return np.transpose(array, [old.index(c) for c in new])
        return array
    data = index in (op.DATA_OPERANDS or range(len(op.operands)))
    if array.ndim == 4:
        return np.transpose(array, perm)
    return _arranged(array, perm) if data else array


def check_contract(cls, inputs, attrs, perm, rtol=1e-6):
    """permute_attributes(perm) of the op; when not None, the op made with those attributes
    on the rearranged operands computes the rearranged results. Returns the attributes."""
    block = Block(arg_types=[tensor_of(a) for a in inputs])
    op = cls.make(list(block.args), **attrs)
    new_attrs = op.permute_attributes(perm)
    if new_attrs is None:
        return None
    merged = {**attrs, **new_attrs}
    merged = {k: v for k, v in merged.items() if v is not None}
    new_inputs = [_permuted_operand(op, merged, i, a, perm) for i, a in enumerate(inputs)]
    new_block = Block(arg_types=[tensor_of(a) for a in new_inputs])
    new_op = cls.make(list(new_block.args), **merged)
    new_op.verify()
    expected = [np.transpose(r, perm) if r.ndim == 4 else r for r in op.compute(*inputs)]
    got = new_op.compute(*new_inputs)
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        assert g.shape == e.shape
        np.testing.assert_allclose(g, e, rtol=rtol, atol=1e-6)
    return new_attrs


RNG = np.random.default_rng(7)


def _f(*shape) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def _pos(*shape) -> np.ndarray:
    return (RNG.random(shape) + 0.5).astype(np.float32)


CONTRACT = [
    # (id, op class, inputs, attrs, perm, runs permuted)
    ("add", ew.AddOp, [_f(2, 4, 5, 6), _f(2, 4, 5, 6)], {}, NHWC, True),
    ("add_bias_c11", ew.AddOp, [_f(2, 4, 5, 6), _f(4, 1, 1)], {}, NHWC, True),
    ("mul_vec_w", ew.MulOp, [_f(6), _f(2, 4, 5, 6)], {}, NHWC, True),
    ("sub_chan", ew.SubOp, [_f(2, 4, 5, 6), _f(1, 4, 1, 1)], {}, NCHW, True),
    ("less", ew.LessOp, [_f(1, 4, 5, 6), _f(5, 6)], {}, NHWC, True),
    ("where", ew.WhereOp, [_f(1, 4, 5, 6) > 0, _f(1, 4, 5, 6), _f(4, 1, 1)], {}, NHWC, True),
    ("where_scalar_cond", ew.WhereOp, [np.array([True]), _f(1, 4, 5, 6), _f(1, 4, 5, 6)], {},
     NHWC, True),
    ("where_low_rank_cond", ew.WhereOp, [_f(5, 6) > 0, _f(1, 4, 5, 6), _f(1, 4, 5, 6)], {},
     NHWC, False),
    ("relu", ew.ReluOp, [_f(1, 4, 5, 6)], {}, NHWC, True),
    ("leaky", ew.LeakyReluOp, [_f(1, 4, 5, 6)], {"alpha": 0.1}, NCHW, True),
    ("cast", ew.CastOp, [_f(1, 4, 5, 6)], {"to": "f16"}, NHWC, True),
    ("relu_rank3", ew.ReluOp, [_f(4, 5, 6)], {}, NHWC, False),
    ("batchnorm", nm.BatchNormInferenceOp,
     [_f(2, 4, 5, 6), _f(4), _f(4), _f(4), _pos(4)], {}, NHWC, True),
    ("layernorm_chw", nm.LayerNormOp, [_f(2, 4, 5, 6), _f(4, 5, 6), _f(4, 1, 1)],
     {"axis": 1}, NHWC, True),
    ("layernorm_w", nm.LayerNormOp, [_f(2, 4, 5, 6), _f(6)], {"axis": -1}, NHWC, False),
    ("layernorm_w_swap_hw", nm.LayerNormOp, [_f(2, 4, 5, 6)], {"axis": 2}, (0, 1, 3, 2),
     True),
    ("rmsnorm_all", nm.RMSNormOp, [_f(2, 4, 5, 6)], {"axis": 0}, NHWC, True),
    ("softmax_c", nm.SoftmaxOp, [_f(2, 4, 5, 6)], {"axis": 1}, NHWC, True),
    ("softmax_w", nm.SoftmaxOp, [_f(2, 4, 5, 6)], {"axis": -1}, NHWC, True),
    ("pool_max", rp.PoolOp, [_f(1, 4, 7, 6)],
     {"mode": "max", "kernel": (3, 2), "strides": (2, 1), "pads": (1, 0, 1, 1)}, NHWC, True),
    ("pool_avg_nhwc", rp.PoolOp, [_f(1, 7, 6, 4)],
     {"mode": "avg", "kernel": (2, 2), "data_format": "NHWC", "count_include_pad": True,
      "pads": (1, 1, 0, 0)}, NCHW, True),
    ("pool_swap_hw", rp.PoolOp, [_f(1, 4, 7, 6)], {"mode": "max", "kernel": (2, 2)},
     (0, 1, 3, 2), False),
    ("conv", cg.ConvOp, [_f(2, 4, 7, 6), _f(6, 2, 3, 3), _f(6)],
     {"groups": 2, "strides": (2, 1), "pads": (1, 1, 0, 1), "dilations": (1, 2)}, NHWC, True),
    ("conv_nhwc_back", cg.ConvOp, [_f(1, 7, 6, 4), _f(3, 3, 5, 4)],
     {"data_format": "NHWC", "weight_format": "HWOI"}, NCHW, True),
    ("conv_bad_perm", cg.ConvOp, [_f(1, 4, 7, 6), _f(5, 4, 3, 3)], {}, (0, 1, 3, 2), False),
    ("reduce_keep", rp.ReduceOp, [_f(2, 4, 5, 6)], {"mode": "sum", "axes": (1, 3)}, NHWC, True),
    ("reduce_hw_drop", rp.ReduceOp, [_f(2, 4, 5, 6)],
     {"mode": "mean", "axes": (2, 3), "keepdims": False}, NHWC, True),
    ("reduce_c_drop", rp.ReduceOp, [_f(2, 4, 5, 6)],
     {"mode": "max", "axes": (1,), "keepdims": False}, NHWC, True),
    ("reduce_h_drop", rp.ReduceOp, [_f(2, 4, 5, 6)],
     {"mode": "max", "axes": (2,), "keepdims": False}, NHWC, False),
    ("reduce_all", rp.ReduceOp, [_f(2, 4, 5, 6)], {"mode": "sum", "keepdims": False}, NHWC,
     True),
    ("concat", mv.ConcatenateOp, [_f(1, 4, 5, 6), _f(1, 3, 5, 6)], {"axis": 1}, NHWC, True),
    ("split", mv.SplitOp, [_f(1, 4, 5, 6)], {"axis": -3, "split": (1, 3)}, NHWC, True),
    ("slice", mv.SliceOp, [_f(1, 4, 5, 6)],
     {"starts": (1, -1), "ends": (4, 0), "axes": (1, 3), "steps": (2, -2)}, NHWC, True),
    ("slice_default_axes", mv.SliceOp, [_f(2, 4, 5, 6)], {"starts": (1, 1), "ends": (2, 3)},
     NHWC, True),
    ("pad", mv.PadOp, [_f(1, 4, 5, 6)], {"pads": (0, 1, 2, 0, 0, 3, 0, 1), "mode": "reflect"},
     NHWC, True),
    ("tile", mv.TileOp, [_f(1, 4, 5, 6)], {"repeats": (2, 1, 3, 1)}, NHWC, True),
    ("transpose", mv.TransposeOp, [_f(1, 4, 5, 6)], {"perm": (0, 1, 3, 2)}, NHWC, True),
    ("resize_nearest", rs.ResizeOp, [_f(1, 4, 5, 6)],
     {"mode": "nearest", "sizes": (1, 4, 8, 3), "scales": (1.0, 1.0, 1.6, 0.5)}, NHWC, True),
    ("resize_bilinear_nhwc", rs.ResizeOp, [_f(1, 4, 5, 6)],
     {"mode": "bilinear", "sizes": (1, 4, 8, 3)}, NHWC, True),
    ("resize_bilinear_swap_hw", rs.ResizeOp, [_f(1, 4, 5, 6)],
     {"mode": "bilinear", "sizes": (1, 4, 8, 3)}, (0, 1, 3, 2), True),
    ("channel_norm", be.ChannelNormOp, [_f(1, 4, 5, 6)], {"direction": True}, NHWC, True),
    ("reshape", mv.ReshapeOp, [_f(1, 4, 5, 6)], {"shape": (1, 120)}, NHWC, False),
    ("broadcast", mv.BroadCastOp, [_f(1, 4, 1, 6)], {"shape": (1, 4, 5, 6)}, NHWC, False),
    ("gemm", cg.GemmOp, [_f(1, 4, 5, 6), _f(1, 4, 6, 3)], {}, NHWC, False),
]


@pytest.mark.parametrize(
    "cls, inputs, attrs, perm, runs", [c[1:] for c in CONTRACT], ids=[c[0] for c in CONTRACT]
)
def test_permute_attributes_contract(cls, inputs, attrs, perm, runs) -> None:
    rtol = 1e-3 if attrs.get("to") == "f16" else 1e-5
    got = check_contract(cls, inputs, attrs, perm, rtol)
    assert (got is not None) == runs


def test_permute_attributes_values() -> None:
    """The attributes themselves, where the seed names them."""
    conv = check_contract(cg.ConvOp, [_f(1, 4, 5, 6), _f(3, 4, 3, 3)], {}, NHWC)
    assert conv == {"data_format": "NHWC", "weight_format": "HWOI"}
    bn = check_contract(nm.BatchNormInferenceOp, [_f(1, 4, 5, 6), *[_pos(4)] * 4], {}, NHWC)
    assert bn == {"axis": 3}
    pad = check_contract(mv.PadOp, [_f(1, 4, 5, 6)], {"pads": (0, 1, 2, 3, 4, 5, 6, 7)}, NHWC)
    assert pad == {"pads": (0, 2, 3, 1, 4, 6, 7, 5)}
    pool = check_contract(rp.PoolOp, [_f(1, 4, 5, 6)], {"mode": "max", "kernel": (2, 2)}, NHWC)
    assert pool == {"data_format": "NHWC"}
    concat = check_contract(mv.ConcatenateOp, [_f(1, 4, 5, 6)] * 2, {"axis": 1}, NHWC)
    assert concat == {"axis": 3}
    t = check_contract(mv.TransposeOp, [_f(1, 4, 5, 6)], {"perm": (0, 1, 3, 2)}, NHWC)
    assert t == {"perm": (0, 2, 1, 3)}  # swapping H and W is swapping dims 1 and 2 in NHWC


def test_which_op_classes_cannot_run_permuted() -> None:
    """The ops that turn CNN data into Tensor-class data (and those with no data) keep
    the interface's default None; every other family states its rule."""
    default = {
        "tx8be.Reshape", "tx8be.Relabel", "tx8be.BroadCast", "tx8be.Gather",
        "tx8be.GatherElements",
        "tx8be.ScatterND", "tx8be.Gemm", "tx8be.Constant", "tx8be.LoadConst", "tx8be.Group",
        "tx8be.MatMulInteger",
    }
    for cls in all_ops():
        if issubclass(cls, Tx8beOp):
            keeps = cls.permute_attributes is ShapeInference.permute_attributes
            assert keeps == (cls.name in default), cls.name


# --------------------------------------------------------------------------------------
# seed 002's graphs and the rules
# --------------------------------------------------------------------------------------


def seed002() -> ModuleOp:
    """input1/input2/input3 -> conv2d -> reshape1, reshape2 -> add (seed 002)."""
    g = Graph(X, (3, 3, 8, 4), (1, 8, 6, 6))
    input1, input2, input3 = g.args
    conv = g.add(cg.ConvOp, input1, input2, pads=(1, 1, 1, 1), weight_format="HWOI")
    reshape1 = g.add(mv.ReshapeOp, conv, shape=(1, 288))
    reshape2 = g.add(mv.ReshapeOp, input3, shape=(1, 288))
    return g.module(g.add(ew.AddOp, reshape1, reshape2))


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_seed002_example(strategy: str) -> None:
    """The seed's "correct" figure: a Transpose in front of conv2d, one back to NCHW in
    front of reshape1; reshape2 and add see what they saw."""
    module = transmit(seed002())
    inputs = random_inputs(module)
    before = run_reference(module, inputs)
    preset(module, strategy)
    assert_same(before, run_reference(module, inputs))
    ops = list(block_of(module).ops)
    names = [op.name.removeprefix("tx8be.") for op in ops]
    assert names == ["Transpose", "Conv", "Transpose", "Reshape", "Reshape", "Add", "func.return"]
    assert ops[0].attr("perm") == NHWC and ops[0].layout == "NHWC"
    assert ops[1].layout == "NHWC-HWOI-NHWC" and ops[1].attr("data_format") == "NHWC"
    assert ops[2].attr("perm") == NCHW and ops[2].layout == "NCHW"
    assert ops[3].operands[0] is ops[2].results[0]
    assert ops[4].operands[0] is block_of(module).args[2]
    assert stats(module) == {
        "strategy": strategy, "transposes": 2, "transpose_bytes": 4 * (144 + 288),
        "reshapes": 0, "const_transposes": 0, "transposes_erased": 0, "preset_ops": 1,
        "unpresettable": 0,
    }


def conv_chain(n_convs: int = 2, weight: bool = True) -> ModuleOp:
    g = Graph(X)
    x = g.args[0]
    for i in range(n_convs):
        if i:
            x = g.add(ew.ReluOp, x)
        w = g.const(_f(4, 4, 3, 3)) if weight else g.const(_f(4, 4, 1, 1))
        x = g.add(cg.ConvOp, x, w, pads=(1, 1, 1, 1) if weight else (0, 0, 0, 0))
    return g.module(x)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_conv_relu_conv_one_transpose_in_one_out(strategy: str) -> None:
    module = transmit(conv_chain(3))
    inputs = random_inputs(module)
    before = run_reference(module, inputs)
    preset(module, strategy)
    assert_same(before, run_reference(module, inputs))
    assert runtime_transposes(module) == (2, 2 * 4 * 144)
    s = stats(module)
    assert (s["const_transposes"], s["preset_ops"]) == (3, 5)  # 3 weights; 3 Convs, 2 Relus
    for op in block_of(module).ops:
        if isinstance(op, be.ConstantOp):
            assert op.layout == "HWOI" and op.results[0].type.get_shape()[:2] == (3, 3)
    assert_demands_met(module)


def residual_block() -> ModuleOp:
    """x -> Conv -> BN -> Relu -> Conv -> BN -> Add(x) -> Relu, as in ResNet."""
    g = Graph(X)
    x = g.args[0]

    def bn(v):
        return g.add(nm.BatchNormInferenceOp, v, *[g.const(_pos(4)) for _ in range(4)])

    y = g.add(ew.ReluOp, bn(g.add(cg.ConvOp, x, g.const(_f(4, 4, 3, 3)), pads=(1, 1, 1, 1))))
    y = bn(g.add(cg.ConvOp, y, g.const(_f(4, 4, 3, 3)), pads=(1, 1, 1, 1)))
    return g.module(g.add(ew.ReluOp, g.add(ew.AddOp, y, x)))


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_residual_block_two_transposes(strategy: str) -> None:
    """One Transpose in, one out. Greedy runs the Add on NHWC (it follows the BN), so the
    skip connection reads the Transpose the first Conv needs and the one back is at the
    end; for optimal that costs the same as the Add on NCHW, and ties stay original."""
    module = transmit(residual_block())
    inputs = random_inputs(module)
    before = run_reference(module, inputs)
    preset(module, strategy)
    assert_same(before, run_reference(module, inputs))
    assert runtime_transposes(module) == (2, 2 * 4 * 144)
    add = next(op for op in block_of(module).ops if isinstance(op, ew.AddOp))
    first = block_of(module).first_op
    assert isinstance(first, mv.TransposeOp) and first.operands[0] is block_of(module).args[0]
    if strategy == "greedy":
        assert add.operands[1] is first.results[0] and add.layout == "NHWC"
    else:
        assert add.operands[1] is block_of(module).args[0] and add.layout == "NCHW"
    assert_demands_met(module)


def test_conv_reshape_gemm_gets_the_original_layout_back() -> None:
    g = Graph(X)
    conv = g.add(cg.ConvOp, g.args[0], g.const(_f(8, 4, 3, 3)))
    flat = g.add(mv.ReshapeOp, conv, shape=(1, 128))
    module = transmit(g.module(g.add(cg.GemmOp, flat, g.const(_f(128, 10)))))
    inputs = random_inputs(module)
    before = run_reference(module, inputs)
    preset(module)
    assert_same(before, run_reference(module, inputs))
    reshape = next(op for op in block_of(module).ops if isinstance(op, mv.ReshapeOp))
    back = reshape.operands[0].owner
    assert isinstance(back, mv.TransposeOp) and back.attr("perm") == NCHW
    assert back.layout == "NCHW" and isinstance(back.operands[0].owner, cg.ConvOp)


def test_inverse_transposes_cancel() -> None:
    """Conv(NCHW) -> Transpose to NHWC -> Relu -> Transpose back -> Conv: the preset Conv
    already makes NHWC, so both existing Transposes disappear."""
    g = Graph(X)
    w = g.const(_f(4, 4, 1, 1))
    c = g.add(cg.ConvOp, g.args[0], w)
    t = g.add(mv.TransposeOp, c, perm=NHWC)
    back = g.add(mv.TransposeOp, g.add(ew.ReluOp, t), perm=NCHW)
    module = transmit(g.module(g.add(cg.ConvOp, back, w)))
    inputs = random_inputs(module)
    before = run_reference(module, inputs)
    preset(module)
    assert_same(before, run_reference(module, inputs))
    names = [op.name for op in block_of(module).ops]
    assert names == ["tx8be.Transpose", "tx8be.Constant", "tx8be.Conv", "tx8be.Relu",
                     "tx8be.Conv", "tx8be.Transpose", "func.return"]
    assert stats(module)["transposes_erased"] == 2


def test_existing_transpose_is_kept_when_it_fits() -> None:
    """A graph that is already in the NPU's arrangement does not change."""
    g = Graph(X)
    t = g.add(mv.TransposeOp, g.args[0], perm=NHWC)
    c = g.add(cg.ConvOp, t, g.const(_f(3, 3, 4, 4)), data_format="NHWC", weight_format="HWOI")
    module = transmit(g.module(g.add(mv.TransposeOp, c, perm=NCHW)))
    text = print_ir(module)
    preset(module)
    assert print_ir(module).split("\n", 1)[1] == text.split("\n", 1)[1]
    assert stats(module)["transposes"] == stats(module)["transposes_erased"] == 0


def test_broadcast_operands_are_rearranged() -> None:
    """A [C,1,1] bias: a constant is folded, a run-time one gets a Reshape (it moves no
    data); a run-time [C,1,W] needs a real Transpose (Reshape to rank 4, Transpose,
    Reshape back to rank 3: [1,W,C])."""
    g = Graph(X, (4, 1, 1), (4, 1, 6))
    x, rb, cw = g.args
    w = g.const(_f(4, 4, 1, 1))
    y = g.add(ew.AddOp, g.add(cg.ConvOp, x, w), g.const(_f(4, 1, 1)))
    y = g.add(ew.MulOp, y, rb)
    y = g.add(ew.SubOp, y, cw)
    module = transmit(g.module(g.add(cg.ConvOp, y, w)))
    inputs = random_inputs(module)
    before = run_reference(module, inputs)
    preset(module)
    assert_same(before, run_reference(module, inputs))
    ops = {op.name.removeprefix("tx8be."): op for op in block_of(module).ops}
    assert ops["Add"].operands[1].type.get_shape() == (1, 1, 4)
    assert isinstance(ops["Mul"].operands[1].owner, mv.ReshapeOp)
    assert ops["Sub"].layout == "NHWC" and ops["Sub"].operands[1].type.get_shape() == (1, 6, 4)
    s = stats(module)
    assert (s["const_transposes"], s["reshapes"], s["transposes"]) == (2, 3, 3)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("name", ["residual_cnn", "mobilenet_block"])
def test_tensor_class_ops_never_see_a_changed_arrangement(name: str, strategy: str) -> None:
    """Every op that cannot run permuted (Reshape, Gemm) is left in place and reads values
    of the same types and layouts as before."""
    module = transmit(parse(_example_text(name)))

    def reads(op):
        return [(o.type, value_layout(o)) for o in op.operands]

    fixed = {
        op: reads(op) for op in block_of(module).ops
        if isinstance(op, Tx8beOp) and op.operands and op.permute_attributes(NHWC) is None
    }
    assert {op.name for op in fixed} == {"tx8be.Reshape", "tx8be.Gemm"}
    preset(module, strategy)
    for op, before in fixed.items():
        assert op.parent is block_of(module) and reads(op) == before


def test_greedy_follows_the_first_operand_optimal_does_not() -> None:
    """Add(x2, conv) -> Conv: greedy follows x2 (original), so the first Conv's result goes
    back and the Add's comes forward again (x, back, forward, out); optimal runs the Add
    on NHWC and converts x2 instead (x, x2, out)."""
    g = Graph(X, X)
    x, x2 = g.args
    w = g.const(_f(4, 4, 1, 1))
    s = g.add(ew.AddOp, x2, g.add(cg.ConvOp, x, w))
    module = transmit(g.module(g.add(cg.ConvOp, s, w)))
    greedy = preset(module.clone(), "greedy")
    optimal = preset(module, "optimal")
    assert runtime_transposes(greedy)[0] == 4
    assert runtime_transposes(optimal)[0] == 3
    assert stats(optimal)["transpose_bytes"] < stats(greedy)["transpose_bytes"]


def test_bilinear_resize_runs_nhwc() -> None:
    """A bilinear Resize needs the preset: it takes data_format "NHWC" (its sizes
    permuted) and runs on NHWC data, with the same values as before the pass."""
    g = Graph(X)
    r = g.add(rs.ResizeOp, g.args[0], mode="bilinear", sizes=(1, 4, 12, 9))
    module = transmit(g.module(g.add(cg.ConvOp, r, g.const(_f(4, 4, 1, 1)))))
    inputs = random_inputs(module)
    before = run_reference(module, inputs)
    preset(module)
    resize = next(op for op in block_of(module).ops if isinstance(op, rs.ResizeOp))
    assert resize.attr("data_format") == "NHWC" and resize.attr("sizes") == (1, 12, 9, 4)
    assert tuple(resize.operands[0].type.get_shape()) == (1, 6, 6, 4)
    assert resize.layout == "NHWC"
    assert stats(module)["unpresettable"] == 0
    assert_same(before, run_reference(module, inputs))


def test_cost_scaling_keeps_huge_tensors_exact() -> None:
    """Bytes past int32 (512 MiB tensors): capacities are rescaled; the choice is still
    the cheap one (the Add on NHWC: 3 conversions instead of 4)."""
    g = Graph((1, 128, 1024, 1024), (1, 128, 1024, 1024))
    x, x2 = g.args
    w = g.const(np.zeros((128, 128, 1, 1), np.float32))
    s = g.add(ew.AddOp, x2, g.add(cg.ConvOp, x, w))
    module = g.module(g.add(cg.ConvOp, s, w))
    LayoutTransmitPass().apply(make_context(), module)
    problem = build_problem(block_of(module).parent_op())
    assert solve_optimal(problem) == [True]
    assert transpose_cost(problem, [True]) == 3 * 2**29
    assert transpose_cost(problem, [False]) == 4 * 2**29 == 2**31  # past int32


def test_unknown_strategy_is_a_user_error(tmp_path) -> None:
    with pytest.raises(Tx8Error, match="unknown strategy 'fast'.*greedy, optimal"):
        LayoutPresetToNpuPass(strategy="fast").apply(make_context(), seed002())
    path = tmp_path / "m.mlir"
    path.write_text(print_ir(seed002()))
    r = subprocess.run(
        [sys.executable, "-m", "tx8c.cli.opt", str(path), "-p",
         "layout-preset-to-npu{strategy=fast}"],
        capture_output=True, text=True,
    )
    assert r.returncode == 1
    assert "unknown strategy 'fast'" in r.stderr and "Traceback" not in r.stderr


def test_no_recursion_on_a_long_chain() -> None:
    """A 3000-op chain with the recursion limit lowered under the pass."""
    g = Graph(X)
    x, w = g.args[0], g.const(_f(4, 4, 1, 1))
    for i in range(1000):
        x = g.add(cg.ConvOp, x, w) if i % 2 else g.add(ew.ReluOp, x)
        x = g.add(ew.AddOp, x, g.args[0]) if i % 3 == 0 else x
    module = transmit(g.module(x))
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)
    try:
        LayoutPresetToNpuPass().apply(make_context(), module)
    finally:
        sys.setrecursionlimit(limit)
    assert stats(module)["preset_ops"] > 1000


# --------------------------------------------------------------------------------------
# bundled examples
# --------------------------------------------------------------------------------------


@cache
def _example_text(name: str) -> str:
    return print_ir(import_onnx(MODELS[name]()).module)


EXPECTED = {
    # name: (run-time Transposes, bytes, ops preset): the image in, nothing out (the
    # global pool's [1,1,1,C] goes back to NCHW by a free Reshape)
    "residual_cnn": (1, 12288, 21),
    "mobilenet_block": (1, 12288, 18),
    "transformer_encoder": (0, 0, 0),
    "llama_decoder": (0, 0, 0),
}


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("name", list(MODELS))
def test_examples(name: str, strategy: str) -> None:
    module = transmit(parse(_example_text(name)))
    inputs = random_inputs(module)
    before = run_reference(module, inputs)
    existing = runtime_transposes(module)[0]  # the attention's own, on Tensor-class data
    preset(module, strategy)
    assert_same(before, run_reference(module, inputs))
    assert_demands_met(module)
    s = stats(module)
    assert (s["transposes"], s["transpose_bytes"], s["preset_ops"]) == EXPECTED[name]
    assert runtime_transposes(module)[0] == existing + s["transposes"] - s["transposes_erased"]
    text = print_ir(module)
    preset(module, strategy)  # a second run changes nothing
    assert print_ir(module).split("\n", 1)[1] == text.split("\n", 1)[1]


# --------------------------------------------------------------------------------------
# random DAGs
# --------------------------------------------------------------------------------------

def build_dag(steps: list[tuple[str, int, int]]) -> ModuleOp:
    """A random DAG (`tests.random_graphs`) with its layouts transmitted."""
    return transmit(random_dag(steps))


dag_steps = random_dag_steps()


def ir_cost_of(module: ModuleOp, sides) -> int:
    """Bytes of run-time Transposes after rewriting a copy with `sides` (counted on the
    IR, independently of the pass's cost model)."""
    copy = module.clone()
    problem = build_problem(block_of(copy).parent_op())
    apply_sides(problem, sides)
    copy.verify()
    return runtime_transposes(copy)[1]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dag_steps)
def test_random_dags_keep_meaning_and_meet_demands(steps) -> None:
    module = build_dag(steps)
    inputs = random_inputs(module, seed=len(steps))
    before = run_reference(module, inputs)
    existing = runtime_transposes(module)[0]
    for strategy in STRATEGIES:
        after = preset(module.clone(), strategy)
        assert_same(before, run_reference(after, inputs))
        assert_demands_met(after)
        s = stats(after)
        assert runtime_transposes(after)[0] == existing + s["transposes"] - s["transposes_erased"]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dag_steps)
def test_random_dags_optimal_is_the_brute_force_minimum(steps) -> None:
    module = build_dag(steps)
    problem = build_problem(block_of(module).parent_op())
    n = problem.num_vars
    optimal = solve_optimal(problem)
    greedy = solve_greedy(problem)
    assert problem.approximations == 0
    assert transpose_cost(problem, optimal) <= transpose_cost(problem, greedy)
    if n > 9:
        return
    costs = {sides: ir_cost_of(module, sides) for sides in itertools.product((False, True),
                                                                               repeat=n)}
    best = min(costs.values())
    assert costs[tuple(optimal)] == best
    assert costs[tuple(greedy)] >= best
    # the model's cost is what the rewrite leaves, up to the Transposes of Tensor-class
    # data it does not touch (the same under every choice)
    offsets = {costs[sides] - transpose_cost(problem, sides) for sides in costs}
    assert len(offsets) == 1 and offsets.pop() >= 0


# --------------------------------------------------------------------------------------
# the whole layout stage: the byte-level cmodel agrees with the reference
# --------------------------------------------------------------------------------------


def layout_stage(module: ModuleOp, strategy: str) -> ModuleOp:
    """layout-preset-to-npu, then layout-align-to-npu and layout-align-opt (the stage's
    remaining passes), so the cmodel can run the module at byte level."""
    from tx8c.transforms.layout.layout_align_opt import LayoutAlignOptPass
    from tx8c.transforms.layout.layout_align_to_npu import LayoutAlignToNpuPass

    preset(module, strategy)
    LayoutAlignToNpuPass(strategy=strategy).apply(make_context(), module)
    LayoutAlignOptPass().apply(make_context(), module)
    module.verify()
    return module


def assert_cmodel_matches(module: ModuleOp, inputs: list[np.ndarray]) -> None:
    from tx8c.sim.cmodel import run_cmodel

    for got, want in zip(run_cmodel(module, inputs), run_reference(module, inputs),
                         strict=True):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("name", ["residual_cnn", "mobilenet_block"])
def test_cmodel_equals_reference_after_the_layout_stage(name: str, strategy: str) -> None:
    module = transmit(parse(_example_text(name)))
    inputs = random_inputs(module)
    assert_cmodel_matches(layout_stage(module, strategy), inputs)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dag_steps, st.sampled_from(STRATEGIES))
def test_random_dags_cmodel_equals_reference_after_the_layout_stage(steps, strategy) -> None:
    module = build_dag(steps)
    inputs = random_inputs(module)
    assert_cmodel_matches(layout_stage(module, strategy), inputs)


def test_every_inserted_transpose_is_needed() -> None:
    """With C = H = W the types cannot tell NCHW from NHWC: dropping any one Transpose the
    pass inserted still verifies, but computes something else."""
    cube = (1, 6, 6, 6)
    g = Graph(cube, cube)
    x, x2 = g.args
    w = g.const(_f(6, 6, 3, 3))
    y = g.add(ew.AddOp, x2, g.add(cg.ConvOp, x, w, pads=(1, 1, 1, 1)))
    flat = g.add(mv.ReshapeOp, g.add(cg.ConvOp, y, w, pads=(1, 1, 1, 1)), shape=(1, 216))
    module = transmit(g.module(flat))
    inputs = random_inputs(module)
    expected = run_reference(module, inputs)
    preset(module)
    transposes = [op for op in block_of(module).ops if isinstance(op, mv.TransposeOp)]
    assert len(transposes) == 3  # x, x2 in; the second Conv's result out
    for i in range(len(transposes)):
        broken = module.clone()
        victim = [op for op in block_of(broken).ops if isinstance(op, mv.TransposeOp)][i]
        victim.results[0].replace_all_uses_with(victim.operands[0])
        block_of(broken).erase_op(victim)
        broken.verify()
        assert not np.allclose(run_reference(broken, inputs)[0], expected[0], atol=1e-3)
