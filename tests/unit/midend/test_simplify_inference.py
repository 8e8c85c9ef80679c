"""simplify-inference: BatchNorm_Inference -> scale and shift, folded into Conv/Gemm."""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Region

from tx8c.dialect.ops.backend import ConstantOp
from tx8c.dialect.ops.conv_gemm import ConvOp, GemmOp
from tx8c.dialect.ops.elementwise import ReluOp
from tx8c.dialect.ops.norm import BatchNormInferenceOp
from tx8c.dialect.types import tensor_of
from tx8c.frontend.onnx.importer import import_onnx
from tx8c.frontend.onnx.runtime import random_inputs, run_onnxruntime
from tx8c.sim.numerics import compare_arrays
from tx8c.sim.reference import run_reference
from tx8c.transforms.midend.simplify_inference import SimplifyInferencePass

RNG = np.random.default_rng(5)


class Graph:
    """Builds a module's main function op by op (test helper)."""

    def __init__(self, *inputs: np.ndarray):
        self.inputs = [np.asarray(a) for a in inputs]
        self.block = Block(arg_types=[tensor_of(a) for a in self.inputs])
        self.args = list(self.block.args)

    def const(self, array):
        return self._add(ConstantOp.from_array(np.asarray(array)))

    def op(self, cls, *operands, **attrs):
        return self._add(cls.make(list(operands), **attrs))

    def _add(self, op):
        self.block.add_op(op)
        return op.results[0]

    def module(self, *outputs) -> ModuleOp:
        self.block.add_op(func.ReturnOp(*outputs))
        types = ([a.type for a in self.block.args], [o.type for o in outputs])
        module = ModuleOp([func.FuncOp("main", types, Region(self.block))])
        module.verify()
        return module


def op_counts(module: ModuleOp) -> Counter:
    return Counter(op.name.removeprefix("tx8be.") for op in module.walk())


def run_pass(graph: Graph, module: ModuleOp, **options) -> ModuleOp:
    """Apply the pass; check the module verifies and computes what it computed before."""
    before = run_reference(module, graph.inputs)
    SimplifyInferencePass(**options).apply(Context(), module)
    module.verify()
    after = run_reference(module, graph.inputs)
    for b, a in zip(before, after, strict=True):
        tol = 1e-5 if b.dtype == np.float32 else 2e-2
        np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=tol,
                                   atol=tol)
    return module


def bn_params(channels: int, dtype=np.float32) -> list[np.ndarray]:
    gamma = RNG.uniform(0.5, 2.0, channels)
    beta = RNG.standard_normal(channels)
    mean = RNG.standard_normal(channels)
    var = RNG.uniform(0.1, 2.0, channels)
    return [p.astype(dtype) for p in (gamma, beta, mean, var)]


def add_bn(graph: Graph, x, channels: int, axis: int = 1, dtype=np.float32):
    params = [graph.const(p) for p in bn_params(channels, dtype)]
    return graph.op(BatchNormInferenceOp, x, *params, axis=axis, epsilon=1e-3)


def conv_graph(data_format: str, weight_format: str, groups: int, bias: bool):
    """A graph with a Conv (3x3, pad 1, 6 output channels) on its input; (graph, conv)."""
    c_in, c_out = 4, 6
    shape = (2, c_in, 5, 5) if data_format == "NCHW" else (2, 5, 5, c_in)
    g = Graph(RNG.standard_normal(shape).astype(np.float32))
    w = RNG.standard_normal((c_out, c_in // groups, 3, 3)).astype(np.float32)
    if weight_format == "HWOI":
        w = w.transpose(2, 3, 0, 1)
    operands = [g.args[0], g.const(w)]
    if bias:
        operands.append(g.const(RNG.standard_normal(c_out).astype(np.float32)))
    conv = g.op(ConvOp, *operands, pads=[1, 1, 1, 1], groups=groups,
                data_format=data_format, weight_format=weight_format)
    return g, conv


@pytest.mark.parametrize("data_format", ["NCHW", "NHWC"])
@pytest.mark.parametrize("weight_format", ["OIHW", "HWOI"])
@pytest.mark.parametrize("groups", [1, 2])
@pytest.mark.parametrize("bias", [False, True])
def test_batchnorm_folds_into_conv(data_format, weight_format, groups, bias):
    g, conv = conv_graph(data_format, weight_format, groups, bias)
    bn = add_bn(g, conv, 6, axis=1 if data_format == "NCHW" else 3)
    module = run_pass(g, g.module(bn))
    counts = op_counts(module)
    assert counts["Conv"] == 1 and counts["BatchNorm_Inference"] == 0
    assert counts["Mul"] == counts["Add"] == 0
    assert counts["Constant"] == 2  # the new weight and bias; the old ones are erased
    conv = next(op for op in module.walk() if isinstance(op, ConvOp))
    assert conv.attr("data_format") == data_format
    assert conv.attr("weight_format") == weight_format
    assert conv.attr("groups") == groups


def test_no_fold_when_the_conv_has_another_user():
    g, conv = conv_graph("NCHW", "OIHW", 1, True)
    bn = add_bn(g, conv, 6)
    relu = g.op(ReluOp, conv)
    module = run_pass(g, g.module(bn, relu))
    counts = op_counts(module)
    assert counts["BatchNorm_Inference"] == 0
    assert counts["Conv"] == 1 and counts["Mul"] == 1 and counts["Add"] == 1
    mul = next(op for op in module.walk() if op.name == "tx8be.Mul")
    assert mul.operands[0].owner.name == "tx8be.Conv"
    assert list(mul.operands[1].type.get_shape()) == [1, 6, 1, 1]


def test_no_fold_when_the_batchnorm_axis_is_not_the_conv_channel_axis():
    # NHWC conv output [2, 5, 5, 6]; a BatchNorm over axis 1 (H) is not per output channel
    g, conv = conv_graph("NHWC", "HWOI", 1, False)
    bn = add_bn(g, conv, 5, axis=1)
    module = run_pass(g, g.module(bn))
    counts = op_counts(module)
    assert counts["BatchNorm_Inference"] == 0 and counts["Mul"] == 1 and counts["Add"] == 1


def test_fold_option_off_gives_mul_and_add():
    g, conv = conv_graph("NCHW", "OIHW", 1, True)
    module = run_pass(g, g.module(add_bn(g, conv, 6)), fold_into_producer=False)
    counts = op_counts(module)
    assert counts["BatchNorm_Inference"] == 0 and counts["Mul"] == 1 and counts["Add"] == 1


@pytest.mark.parametrize("trans_b", [False, True])
@pytest.mark.parametrize("bias", [False, True])
def test_batchnorm_folds_into_gemm(trans_b, bias):
    g = Graph(RNG.standard_normal((3, 8)).astype(np.float32))
    b = RNG.standard_normal((5, 8) if trans_b else (8, 5)).astype(np.float32)
    operands = [g.args[0], g.const(b)]
    if bias:
        operands.append(g.const(RNG.standard_normal(5).astype(np.float32)))
    gemm = g.op(GemmOp, *operands, trans_b=trans_b, alpha=0.5, beta=2.0)
    module = run_pass(g, g.module(add_bn(g, gemm, 5)))
    counts = op_counts(module)
    assert counts["Gemm"] == 1 and counts["BatchNorm_Inference"] == counts["Mul"] == 0


def test_runtime_parameters_become_ops():
    x = RNG.standard_normal((2, 3, 4, 4)).astype(np.float32)
    g = Graph(x, *bn_params(3))
    bn = g.op(BatchNormInferenceOp, *g.args)
    module = run_pass(g, g.module(bn))
    counts = op_counts(module)
    assert counts["BatchNorm_Inference"] == 0 and counts["Rsqrt"] == 1


def test_f16_data_with_f32_parameters():
    x = RNG.standard_normal((2, 3, 4, 4)).astype(np.float16)
    g = Graph(x, *bn_params(3))
    module = run_pass(g, g.module(g.op(BatchNormInferenceOp, *g.args)))
    assert op_counts(module)["Cast"] == 2
    g = Graph(x)
    module = run_pass(g, g.module(add_bn(g, g.args[0], 3)))
    assert op_counts(module)["BatchNorm_Inference"] == 0


# --------------------------------------------------------------------------------------
# Bundled models, against onnxruntime
# --------------------------------------------------------------------------------------

SCRIPT = Path(__file__).resolve().parents[3] / "examples" / "make_models.py"


@cache
def _make_models():
    spec = importlib.util.spec_from_file_location("tx8c_examples_make_models", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ["residual_cnn", "mobilenet_block"])
def test_models_lose_every_batchnorm(name):
    model = _make_models().MODELS[name]()
    module = import_onnx(model).module
    assert op_counts(module)["BatchNorm_Inference"] == 6
    SimplifyInferencePass().apply(Context(), module)
    module.verify()
    counts = op_counts(module)
    assert counts["BatchNorm_Inference"] == 0
    assert counts["Mul"] == 0  # every BatchNorm folded into its conv
    assert counts["Add"] == {"residual_cnn": 2, "mobilenet_block": 1}[name]  # the skips
    inputs = random_inputs(model)
    expected = run_onnxruntime(model, inputs)
    got = run_reference(module, inputs)
    for e, r in zip(expected, got, strict=True):
        assert compare_arrays(e, r).cosine >= 0.99999
