"""Conv and Gemm: compute vs onnxruntime, infer_shapes vs compute, layouts, low precision."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from onnx import helper

from tests.helpers import (
    OnnxCase,
    check_against_onnx,
    check_shapes,
    node,
    run_onnx,
    run_op,
    single_op_module,
)
from tx8c.dialect.attrs import AlignMode
from tx8c.dialect.base import OpRuleError
from tx8c.dialect.ops.conv_gemm import ConvOp, GemmOp
from tx8c.interfaces import Engine

RNG_SEEDS = (0, 1, 2)
TOL = {"rtol": 1e-4, "atol": 1e-4}  # fp32 sums of up to ~100 products, summed in any order

NCHW_TO_NHWC = (0, 2, 3, 1)
NHWC_TO_NCHW = (0, 3, 1, 2)
OIHW_TO_HWOI = (2, 3, 0, 1)
HWOI_TO_OIHW = (2, 3, 0, 1)


def _normal(rng: np.random.Generator, shape) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


# --------------------------------------------------------------------------------------
# Conv
# --------------------------------------------------------------------------------------

CONV_VARIANTS = ("plain", "strided-grouped", "depthwise")


STRIDES = ((2, 2), (2, 1), (1, 3))
DILATIONS = ((1, 2), (2, 2), (3, 1))


def _conv_params(rng: np.random.Generator, seed: int, variant: str) -> dict:
    """Random sizes and attributes of one convolution (NCHW / OIHW).

    The strided variants always stride and dilate (one dim at least) and pad unevenly.
    """
    groups = {"plain": 1, "strided-grouped": 2, "depthwise": int(rng.integers(3, 6))}[variant]
    c_per_group = 1 if variant == "depthwise" else int(rng.integers(1, 5))
    out_per_group = int(rng.integers(1, 3 if variant == "depthwise" else 5))
    kernel = (int(rng.integers(2, 4)), int(rng.integers(1, 4)))
    attrs: dict = {"groups": groups}
    if variant != "plain":
        attrs["strides"] = STRIDES[seed]
        attrs["pads"] = tuple(int(p) for p in rng.permutation([0, 1, 2, int(rng.integers(3))]))
        attrs["dilations"] = DILATIONS[seed]
    return {
        "n": int(rng.integers(1, 3)),
        "c_in": c_per_group * groups,
        "c_out": out_per_group * groups,
        "c_per_group": c_per_group,
        "hw": tuple(int(d) for d in rng.integers(7, 12, 2)),
        "k": kernel,
        "attrs": attrs,
        "bias": variant != "depthwise",
    }


def _onnx_conv_attrs(attrs: dict) -> dict:
    """ONNX's names for the Conv attributes that are set."""
    names = {"strides": "strides", "pads": "pads", "dilations": "dilations", "groups": "group"}
    return {names[k]: (list(v) if isinstance(v, tuple) else v) for k, v in attrs.items()}


def conv_case(seed: int, variant: str) -> OnnxCase:
    rng = np.random.default_rng(seed)
    p = _conv_params(rng, seed, variant)
    x = _normal(rng, (p["n"], p["c_in"], *p["hw"]))
    w = _normal(rng, (p["c_out"], p["c_per_group"], *p["k"]))
    inputs = [x, w] + ([_normal(rng, (p["c_out"],))] if p["bias"] else [])
    names = [f"in{i}" for i in range(len(inputs))]
    nodes = [node("Conv", names, **_onnx_conv_attrs(p["attrs"]))]
    return OnnxCase(ConvOp, inputs, p["attrs"], nodes, **TOL)


def conv_layout_case(seed: int, data_format: str, weight_format: str) -> OnnxCase:
    """NHWC input and/or HWOI weight; the ONNX graph transposes around an NCHW Conv."""
    case = conv_case(seed, "strided-grouped")
    inputs = list(case.inputs)
    nodes, conv_in = [], list(f"in{i}" for i in range(len(inputs)))
    if data_format == "NHWC":
        inputs[0] = inputs[0].transpose(NCHW_TO_NHWC).copy()
        nodes.append(helper.make_node("Transpose", ["in0"], ["x"], perm=NHWC_TO_NCHW))
        conv_in[0] = "x"
    if weight_format == "HWOI":
        inputs[1] = inputs[1].transpose(OIHW_TO_HWOI).copy()
        nodes.append(helper.make_node("Transpose", ["in1"], ["w"], perm=HWOI_TO_OIHW))
        conv_in[1] = "w"
    conv_out = "y" if data_format == "NHWC" else "out0"
    nodes.append(helper.make_node("Conv", conv_in, [conv_out], **_onnx_conv_attrs(case.attrs)))
    if data_format == "NHWC":
        nodes.append(helper.make_node("Transpose", ["y"], ["out0"], perm=NCHW_TO_NHWC))
    attrs = {**case.attrs, "data_format": data_format, "weight_format": weight_format}
    return OnnxCase(ConvOp, inputs, attrs, nodes, **TOL)


LAYOUTS = (("NHWC", "OIHW"), ("NCHW", "HWOI"), ("NHWC", "HWOI"))


# --------------------------------------------------------------------------------------
# Gemm
# --------------------------------------------------------------------------------------


def gemm_case(seed: int) -> OnnxCase:
    """2-D ONNX Gemm with transposes, alpha, beta and a broadcast bias."""
    rng = np.random.default_rng(seed)
    m, k, n = (int(d) for d in rng.integers(1, 9, 3))
    trans_a, trans_b = [(False, False), (True, False), (True, True)][seed]
    bias_shape = [(n,), (m, n), (m, 1)][seed]
    alpha, beta = float(rng.uniform(0.5, 2)), float(rng.uniform(-1, 1))
    a = _normal(rng, (k, m) if trans_a else (m, k))
    b = _normal(rng, (n, k) if trans_b else (k, n))
    bias = _normal(rng, bias_shape)
    attrs = {"trans_a": trans_a, "trans_b": trans_b, "alpha": alpha, "beta": beta}
    nodes = [node("Gemm", ["in0", "in1", "in2"], transA=int(trans_a), transB=int(trans_b),
                  alpha=alpha, beta=beta)]
    return OnnxCase(GemmOp, [a, b, bias], attrs, nodes, **TOL)


MATMUL_SHAPES = (
    ((3, 4, 5), (5, 6)),  # batched a, shared b
    ((2, 1, 3, 4), (5, 4, 2)),  # both batched, batch dims broadcast to [2, 5]
    ((4, 7), (3, 7, 2)),  # shared a, batched b
)


def matmul_case(seed: int) -> OnnxCase:
    """Batched ONNX MatMul with broadcast batch dims."""
    rng = np.random.default_rng(seed)
    a_shape, b_shape = MATMUL_SHAPES[seed]
    inputs = [_normal(rng, a_shape), _normal(rng, b_shape)]
    return OnnxCase(GemmOp, inputs, {}, [node("MatMul", ["in0", "in1"])], **TOL)


def matmul_transposed_case(seed: int) -> OnnxCase:
    """Batched Gemm with trans_a / trans_b vs ONNX Transpose + MatMul."""
    rng = np.random.default_rng(seed)
    a_shape, b_shape = MATMUL_SHAPES[seed]
    trans_a, trans_b = [(True, False), (False, True), (True, True)][seed]
    nodes, mm_in = [], ["in0", "in1"]
    inputs = []
    for i, (shape, trans) in enumerate(((a_shape, trans_a), (b_shape, trans_b))):
        perm = list(range(len(shape)))
        perm[-2:] = perm[-1], perm[-2]
        stored = (*shape[:-2], shape[-1], shape[-2]) if trans else shape
        inputs.append(_normal(rng, stored))
        if trans:
            nodes.append(helper.make_node("Transpose", [f"in{i}"], [f"t{i}"], perm=perm))
            mm_in[i] = f"t{i}"
    nodes.append(helper.make_node("MatMul", mm_in, ["out0"]))
    return OnnxCase(GemmOp, inputs, {"trans_a": trans_a, "trans_b": trans_b}, nodes, **TOL)


def matmul_add_case(seed: int) -> OnnxCase:
    """Batched Gemm with a bias vs ONNX MatMul + Add."""
    rng = np.random.default_rng(seed)
    a_shape, b_shape = MATMUL_SHAPES[seed]
    out_shape = np.broadcast_shapes(a_shape[:-2], b_shape[:-2]) + (a_shape[-2], b_shape[-1])
    bias_shape = [out_shape[-1:], (1,) * (len(out_shape) - 1) + out_shape[-1:], out_shape][seed]
    inputs = [_normal(rng, a_shape), _normal(rng, b_shape), _normal(rng, bias_shape)]
    nodes = [
        helper.make_node("MatMul", ["in0", "in1"], ["mm"]),
        helper.make_node("Add", ["mm", "in2"], ["out0"]),
    ]
    return OnnxCase(GemmOp, inputs, {}, nodes, **TOL)


# --------------------------------------------------------------------------------------
# The comparisons
# --------------------------------------------------------------------------------------

CASES = {
    **{f"Conv-{v}-{s}": conv_case(s, v) for v in CONV_VARIANTS for s in RNG_SEEDS},
    **{
        f"Conv-{d}-{w}-{s}": conv_layout_case(s, d, w) for d, w in LAYOUTS for s in RNG_SEEDS
    },
    **{f"Gemm-{s}": gemm_case(s) for s in RNG_SEEDS},
    **{f"Gemm-matmul-{s}": matmul_case(s) for s in RNG_SEEDS},
    **{f"Gemm-matmul-trans-{s}": matmul_transposed_case(s) for s in RNG_SEEDS},
    **{f"Gemm-matmul-add-{s}": matmul_add_case(s) for s in RNG_SEEDS},
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_matches_onnxruntime(case: OnnxCase) -> None:
    check_against_onnx(case)


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_infer_shapes_matches_compute(case: OnnxCase) -> None:
    check_shapes(case)


def test_gemm_without_bias_matches_onnx_gemm() -> None:
    case = gemm_case(1)
    case = OnnxCase(GemmOp, case.inputs[:2], case.attrs,
                    [node("Gemm", ["in0", "in1"], transA=1, alpha=case.attrs["alpha"])], **TOL)
    check_against_onnx(case)


@pytest.mark.parametrize("seed", RNG_SEEDS)
def test_conv_1d_is_conv_2d_with_height_1(seed: int) -> None:
    """A 1-D ONNX Conv equals tx8be.Conv on the same data reshaped to H = 1."""
    rng = np.random.default_rng(seed)
    n, groups, c_per_group, out_per_group = 2, [1, 2, 3][seed], 2, 2
    length, k = int(rng.integers(8, 16)), int(rng.integers(1, 5))
    stride, dilation = [1, 2, 3][seed], [1, 2, 1][seed]
    pads = [int(p) for p in rng.integers(0, 3, 2)]
    x = _normal(rng, (n, c_per_group * groups, length))
    w = _normal(rng, (out_per_group * groups, c_per_group, k))
    b = _normal(rng, (out_per_group * groups,))
    onnx_attrs = {"strides": [stride], "pads": pads, "dilations": [dilation], "group": groups}
    (expected,) = run_onnx(
        OnnxCase(ConvOp, [x, w, b], {}, [node("Conv", ["in0", "in1", "in2"], **onnx_attrs)])
    )
    attrs = {
        "strides": (1, stride), "pads": (0, pads[0], 0, pads[1]), "dilations": (1, dilation),
        "groups": groups,
    }
    (got,) = run_op(ConvOp, [x[:, :, None, :], w[:, :, None, :], b], **attrs)
    assert got.shape[2] == 1
    np.testing.assert_allclose(got[:, :, 0, :], expected, **TOL)


@pytest.mark.parametrize("seed", RNG_SEEDS)
def test_conv_layouts_agree_with_nchw(seed: int) -> None:
    """Every data_format / weight_format gives the NCHW/OIHW result, rearranged."""
    case = conv_case(seed, "depthwise")
    x, w = case.inputs[:2]
    (reference,) = run_op(ConvOp, case.inputs, **case.attrs)
    for data_format, weight_format in LAYOUTS:
        xi = x.transpose(NCHW_TO_NHWC) if data_format == "NHWC" else x
        wi = w.transpose(OIHW_TO_HWOI) if weight_format == "HWOI" else w
        attrs = {**case.attrs, "data_format": data_format, "weight_format": weight_format}
        (got,) = run_op(ConvOp, [xi, wi], **attrs)
        if data_format == "NHWC":
            got = got.transpose(NHWC_TO_NCHW)
        np.testing.assert_allclose(got, reference, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16], ids=["f16", "bf16"])
def test_conv_in_low_precision(dtype) -> None:
    """f16/bf16 Conv is computed in fp32 and rounded: onnxruntime in fp32 on the same values."""
    case = conv_case(1, "strided-grouped")
    low = [a.astype(dtype) for a in case.inputs]
    (got,) = run_op(ConvOp, low, **case.attrs)
    assert got.dtype == np.dtype(dtype)
    (expected,) = run_onnx(
        OnnxCase(ConvOp, [a.astype(np.float32) for a in low], case.attrs, case.nodes)
    )
    rtol = 1e-2 if dtype is ml_dtypes.bfloat16 else 2e-3
    np.testing.assert_allclose(got.astype(np.float32), expected, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16], ids=["f16", "bf16"])
def test_gemm_in_low_precision(dtype) -> None:
    case = matmul_add_case(1)
    low = [a.astype(dtype) for a in case.inputs]
    (got,) = run_op(GemmOp, low)
    assert got.dtype == np.dtype(dtype)
    (expected,) = run_onnx(OnnxCase(GemmOp, [a.astype(np.float32) for a in low], {}, case.nodes))
    rtol = 1e-2 if dtype is ml_dtypes.bfloat16 else 2e-3
    np.testing.assert_allclose(got.astype(np.float32), expected, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("op_cls", [ConvOp, GemmOp])
def test_integer_operands_are_rejected(op_cls) -> None:
    """Integer convolutions and matmuls are the quantised ops' job, not these."""
    a = np.ones((1, 2, 4, 4), np.int32)
    with pytest.raises(OpRuleError, match="has element type i32; this op accepts"):
        single_op_module(op_cls, [a, np.ones((2, 2, 1, 1) if op_cls is ConvOp else (4, 3),
                                             np.int32)])


def test_op_attrs() -> None:
    conv = single_op_module(ConvOp, conv_case(0, "plain").inputs)
    gemm = single_op_module(GemmOp, matmul_case(0).inputs)
    (c,) = [op for op in conv.walk() if isinstance(op, ConvOp)]
    (g,) = [op for op in gemm.walk() if isinstance(op, GemmOp)]
    c_attr, g_attr = c.query_op_attr(), g.query_op_attr()
    assert (c_attr.align_mode, c_attr.engine, c_attr.need_preset_to_npu) == (
        AlignMode.ALIGN, Engine.NE, True
    )
    assert (g_attr.align_mode, g_attr.engine, g_attr.need_preset_to_npu) == (
        AlignMode.ALIGN, Engine.NE, False
    )
