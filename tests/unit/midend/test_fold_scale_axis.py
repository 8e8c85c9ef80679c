"""fold-scale-axis: per-channel Muls fold into Conv / Gemm weights, backward and forward."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from tests.unit.midend.test_simplify_inference import Graph, _make_models, op_counts
from tx8c.dialect.ops.conv_gemm import ConvOp, GemmOp
from tx8c.dialect.ops.elementwise import MulOp, ReluOp
from tx8c.frontend.onnx.importer import import_onnx
from tx8c.frontend.onnx.runtime import random_inputs, run_onnxruntime
from tx8c.sim.numerics import compare_arrays
from tx8c.sim.reference import run_reference
from tx8c.transforms.midend.fold_scale_axis import FoldScaleAxisPass, channel_vector
from tx8c.transforms.midend.legalize import LegalizePass

RNG = np.random.default_rng(11)


def f32(*shape) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def run_pass(graph: Graph, module: ModuleOp, **options) -> Counter:
    """Apply the pass, check the values are kept; the op counts after it."""
    before = run_reference(module, graph.inputs)
    FoldScaleAxisPass(**options).apply(Context(), module)
    module.verify()
    after = run_reference(module, graph.inputs)
    for b, a in zip(before, after, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)
    return op_counts(module)


def conv(g: Graph, x, c_in: int, c_out: int, data_format="NCHW", weight_format="OIHW",
         groups=1, bias=False):
    w = f32(c_out, c_in // groups, 3, 3)
    if weight_format == "HWOI":
        w = w.transpose(2, 3, 0, 1)
    operands = [x, g.const(w)] + ([g.const(f32(c_out))] if bias else [])
    return g.op(ConvOp, *operands, pads=[1, 1, 1, 1], groups=groups,
                data_format=data_format, weight_format=weight_format)


def channel_scale(c: int, data_format: str, form: str) -> np.ndarray:
    """A per-channel scale for data of `data_format`, as [C], full rank or a scalar."""
    s = RNG.uniform(-2, 2, c).astype(np.float32)
    if form == "scalar":
        return s[:1].reshape(())
    if form == "full":
        return s.reshape((1, c, 1, 1) if data_format == "NCHW" else (1, 1, 1, c))
    return s.reshape((c, 1, 1)) if data_format == "NCHW" else s


FORMATS = [("NCHW", "OIHW"), ("NHWC", "HWOI"), ("NCHW", "HWOI")]


def data(data_format: str, c: int) -> np.ndarray:
    return f32(2, c, 5, 5) if data_format == "NCHW" else f32(2, 5, 5, c)


# --------------------------------------------------------------------------------------
# backward
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("data_format,weight_format", FORMATS)
@pytest.mark.parametrize("groups", [1, 2])
@pytest.mark.parametrize("form", ["vector", "full", "scalar"])
@pytest.mark.parametrize("scale_first", [False, True])
def test_backward_conv(data_format, weight_format, groups, form, scale_first):
    g = Graph(data(data_format, 4))
    c = conv(g, g.args[0], 4, 6, data_format, weight_format, groups, bias=groups == 2)
    k = g.const(channel_scale(6, data_format, form))
    counts = run_pass(g, g.module(g.op(MulOp, *((k, c) if scale_first else (c, k)))))
    assert counts["Mul"] == 0 and counts["Conv"] == 1


@pytest.mark.parametrize("trans_b", [False, True])
@pytest.mark.parametrize("bias", [False, True])
def test_backward_gemm(trans_b, bias):
    g = Graph(f32(2, 3, 8))
    b = f32(2, 5, 8) if trans_b else f32(2, 8, 5)
    operands = [g.args[0], g.const(b)] + ([g.const(f32(5))] if bias else [])
    gemm = g.op(GemmOp, *operands, trans_b=trans_b, alpha=0.5, beta=1.5)
    counts = run_pass(g, g.module(g.op(MulOp, gemm, g.const(f32(5)))))
    assert counts["Mul"] == 0 and counts["Gemm"] == 1


def test_backward_gemm_of_runtime_values_takes_a_scalar_into_alpha():
    g = Graph(f32(2, 4, 8), f32(2, 8, 4), f32(4))
    gemm = g.op(GemmOp, *g.args, beta=2.0)
    counts = run_pass(g, g.module(g.op(MulOp, gemm, g.const(np.float32(0.125)))))
    assert counts["Mul"] == 0
    # a per-channel (non-uniform) scale needs constant weights
    g = Graph(f32(2, 4, 8), f32(2, 8, 4))
    gemm = g.op(GemmOp, *g.args)
    counts = run_pass(g, g.module(g.op(MulOp, gemm, g.const(f32(4)))))
    assert counts["Mul"] == 1


def test_backward_leaves_a_conv_with_another_user():
    g = Graph(data("NCHW", 4))
    c = conv(g, g.args[0], 4, 6)
    mul = g.op(MulOp, c, g.const(channel_scale(6, "NCHW", "vector")))
    counts = run_pass(g, g.module(mul, g.op(ReluOp, c)))
    assert counts["Mul"] == 1


@pytest.mark.parametrize("scale", [
    np.ones((1, 1, 5, 1), np.float32),  # varies along H, not C
    np.ones((2, 6, 1, 1), np.float32),  # broadcasts the conv's result to a larger shape
    np.array([np.inf] * 6, np.float32).reshape(6, 1, 1),  # not finite
])
def test_backward_leaves_non_channel_scales(scale):
    g = Graph(data("NCHW", 4))
    c = conv(g, g.args[0], 4, 6)
    counts = run_pass(g, g.module(g.op(MulOp, c, g.const(scale))))
    assert counts["Mul"] == 1


# --------------------------------------------------------------------------------------
# forward
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("data_format,weight_format", FORMATS)
@pytest.mark.parametrize("groups", [1, 2, 4])
@pytest.mark.parametrize("form", ["vector", "full", "scalar"])
def test_forward_conv(data_format, weight_format, groups, form):
    g = Graph(data(data_format, 4))
    k = g.const(channel_scale(4, data_format, form))
    scaled = g.op(MulOp, g.args[0], k)
    c = conv(g, scaled, 4, 8, data_format, weight_format, groups, bias=True)
    counts = run_pass(g, g.module(c))
    assert counts["Mul"] == 0 and counts["Conv"] == 1


@pytest.mark.parametrize("trans_a", [False, True])
@pytest.mark.parametrize("trans_b", [False, True])
def test_forward_gemm(trans_a, trans_b):
    g = Graph(f32(2, 8, 3) if trans_a else f32(2, 3, 8))
    k = (f32(8, 1) if trans_a else f32(8))
    scaled = g.op(MulOp, g.args[0], g.const(k))
    b = f32(5, 8) if trans_b else f32(8, 5)
    gemm = g.op(GemmOp, scaled, g.const(b), g.const(f32(5)), trans_a=trans_a,
                trans_b=trans_b)
    counts = run_pass(g, g.module(gemm))
    assert counts["Mul"] == 0


def test_forward_into_every_user():
    g = Graph(data("NCHW", 4))
    scaled = g.op(MulOp, g.args[0], g.const(channel_scale(4, "NCHW", "full")))
    counts = run_pass(g, g.module(conv(g, scaled, 4, 6), conv(g, scaled, 4, 2, groups=2)))
    assert counts["Mul"] == 0 and counts["Conv"] == 2


def test_forward_leaves_a_scaled_value_with_another_user():
    g = Graph(data("NCHW", 4))
    scaled = g.op(MulOp, g.args[0], g.const(channel_scale(4, "NCHW", "vector")))
    counts = run_pass(g, g.module(conv(g, scaled, 4, 6), g.op(ReluOp, scaled)))
    assert counts["Mul"] == 1


def test_forward_leaves_a_scaled_weight():
    g = Graph(data("NCHW", 4), f32(6, 4, 3, 3))
    x, w = g.args
    scaled_w = g.op(MulOp, w, g.const(np.float32(2.0)))
    counts = run_pass(g, g.module(g.op(ConvOp, x, scaled_w, pads=[1, 1, 1, 1])))
    assert counts["Mul"] == 1


def test_options_switch_the_directions():
    def build():
        g = Graph(data("NCHW", 4))
        scaled = g.op(MulOp, g.args[0], g.const(channel_scale(4, "NCHW", "vector")))
        c = conv(g, scaled, 4, 6)
        return g, g.module(g.op(MulOp, c, g.const(channel_scale(6, "NCHW", "vector"))))

    assert run_pass(*build(), backward=False)["Mul"] == 1
    assert run_pass(*build(), forward=False)["Mul"] == 1
    assert run_pass(*build())["Mul"] == 0


def test_channel_vector():
    assert channel_vector(np.ones((3, 1, 1)), (2, 3, 4, 4), 1).shape == (3,)
    assert channel_vector(np.float32(2), (2, 3), 1).tolist() == [2, 2, 2]
    assert channel_vector(np.ones(4), (2, 3, 4, 4), 1) is None
    assert channel_vector(np.ones((1, 1, 2, 3, 1, 1)), (2, 3, 4, 4), 1) is None


# --------------------------------------------------------------------------------------
# Bundled model, against onnxruntime
# --------------------------------------------------------------------------------------


def test_llama_decoder_after_legalize():
    """The RMSNorm weights fold into Q/K/V and gate/up; 1/sqrt(d) into alpha."""
    model = _make_models().MODELS["llama_decoder"]()
    module = import_onnx(model).module
    LegalizePass().apply(Context(), module)
    muls = op_counts(module)["Mul"]
    FoldScaleAxisPass().apply(Context(), module)
    module.verify()
    assert op_counts(module)["Mul"] == muls - 3
    inputs = random_inputs(model)
    expected = run_onnxruntime(model, inputs)
    for e, r in zip(expected, run_reference(module, inputs), strict=True):
        assert compare_arrays(e, r).cosine >= 0.99999
