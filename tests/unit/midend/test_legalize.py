"""legalize: ops without a TX8 kernel are decomposed; Sub/Div by constants become Add/Mul."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.context import Context

from tests.unit.midend.test_simplify_inference import Graph, _make_models, op_counts
from tx8c.dialect.ops import elementwise as ew
from tx8c.errors import Tx8UnsupportedError
from tx8c.frontend.onnx.importer import import_onnx
from tx8c.frontend.onnx.runtime import random_inputs, run_onnxruntime
from tx8c.ir import print_module
from tx8c.sim.numerics import compare_arrays
from tx8c.sim.reference import run_reference
from tx8c.transforms.midend.legalize import (
    CONSTANT_FORMS,
    DECOMPOSITIONS,
    LegalizePass,
    has_kernel,
)

RNG = np.random.default_rng(3)


def legalize(graph: Graph, *outputs, rtol: float = 1e-6, atol: float = 1e-6):
    """Legalize a graph; check its values are kept and every op has a kernel."""
    module = graph.module(*outputs)
    before = run_reference(module, graph.inputs)
    LegalizePass().apply(Context(), module)
    module.verify()
    assert all(has_kernel(op) for op in module.walk())
    after = run_reference(module, graph.inputs)
    for b, a in zip(before, after, strict=True):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol,
                                   atol=atol)
    return module


def unary_cases():
    """(op class, attrs) for every decomposition in the table (both Gelu forms)."""
    classes = {cls.name: cls for cls in ew.UNARY_OPS}
    for name in DECOMPOSITIONS:
        if name == "tx8be.Gelu":
            yield classes[name], {"approximate": "none"}
            yield classes[name], {"approximate": "tanh"}
        else:
            yield classes[name], {}


@pytest.mark.parametrize("op_cls,attrs", list(unary_cases()),
                         ids=lambda v: getattr(v, "name", str(v)))
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_decompositions_keep_values_and_use_only_kernels(op_cls, attrs, dtype, monkeypatch):
    # HardSigmoid has a kernel; force its decomposition too, so every entry is exercised
    monkeypatch.setattr(ew.HardSigmoidOp, "HAS_KERNEL", False)
    x = (RNG.standard_normal((4, 33)) * 4).astype(dtype)
    g = Graph(x)
    tol = 1e-6 if dtype == np.float32 else 4e-3
    module = legalize(g, g.op(op_cls, g.args[0], **attrs), rtol=tol, atol=tol)
    assert op_counts(module)[op_cls.name.removeprefix("tx8be.")] == 0


def test_hard_swish_uses_hard_sigmoid_when_it_has_a_kernel():
    g = Graph(RNG.standard_normal(16).astype(np.float32) * 5)
    counts = op_counts(legalize(g, g.op(ew.HardSwishOp, g.args[0])))
    assert counts["HardSigmoid"] == 1 and counts["Mul"] == 1 and counts["Clip"] == 0


def test_every_op_without_a_kernel_has_a_decomposition():
    lacking = set()
    for cls in ew.UNARY_OPS + ew.BINARY_OPS:
        x = np.zeros((2, 3), np.float32 if "f32" in cls.DTYPES else np.bool_)
        g = Graph(*([x] * cls.operand_count_range()[0]))
        value = g.op(cls, *g.args, **({"to": "f32"} if cls is ew.CastOp else {}))
        if not has_kernel(value.owner):
            lacking.add(cls.name)
    assert lacking == {"tx8be.Gelu", "tx8be.HardSwish", "tx8be.Silu"}
    assert lacking <= set(DECOMPOSITIONS)
    assert not set(CONSTANT_FORMS) & lacking


def test_an_op_without_kernel_or_rule_is_an_error(monkeypatch):
    monkeypatch.setattr(ew.ErfOp, "HAS_KERNEL", False)
    g = Graph(np.zeros(4, np.float32))
    module = g.module(g.op(ew.GeluOp, g.op(ew.ErfOp, g.args[0])))
    text = print_module(module)
    with pytest.raises(Tx8UnsupportedError, match="tx8be.Erf"):
        LegalizePass().apply(Context(), module)
    assert print_module(module) == text  # checked before anything was rewritten


# --------------------------------------------------------------------------------------
# Sub and Div by constants
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32])
def test_sub_constant_becomes_add(dtype):
    x = (RNG.standard_normal((3, 4)) * 10).astype(dtype)
    g = Graph(x)
    c = g.const((RNG.standard_normal(4) * 10).astype(dtype))
    counts = op_counts(legalize(g, g.op(ew.SubOp, g.args[0], c)))
    assert counts["Sub"] == 0 and counts["Add"] == 1 and counts["Constant"] == 1


def test_sub_of_the_smallest_integer_stays():
    g = Graph(np.arange(4, dtype=np.int8))
    c = g.const(np.array([-128, 1, 2, 3], np.int8))
    assert op_counts(legalize(g, g.op(ew.SubOp, g.args[0], c)))["Sub"] == 1


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_div_constant_becomes_mul(dtype):
    x = RNG.standard_normal((3, 4)).astype(dtype)
    g = Graph(x)
    c = g.const(RNG.uniform(0.5, 8, 4).astype(dtype))
    tol = 1e-6 if dtype == np.float32 else 1e-3
    counts = op_counts(legalize(g, g.op(ew.DivOp, g.args[0], c), rtol=tol, atol=tol))
    assert counts["Div"] == 0 and counts["Mul"] == 1


@pytest.mark.parametrize("divisor", [
    np.array([3, -2, 7], np.int32),  # integer division truncates
    np.array([0.0, 1.0, 2.0], np.float32),  # 1/0 is not finite
    np.array([1e-40, 1.0, 2.0], np.float32),  # 1/c overflows f32
])
def test_div_that_must_stay(divisor):
    g = Graph((RNG.standard_normal(3) * 10).astype(divisor.dtype))
    module = g.module(g.op(ew.DivOp, g.args[0], g.const(divisor)))
    LegalizePass().apply(Context(), module)
    assert op_counts(module)["Div"] == 1


def test_runtime_operands_stay():
    g = Graph(np.ones(3, np.float32), np.full(3, 2, np.float32))
    x, y = g.args
    one = g.const(np.float32(1))
    counts = op_counts(legalize(g, g.op(ew.DivOp, x, y), g.op(ew.SubOp, one, y)))
    assert counts["Div"] == 1 and counts["Sub"] == 1


# --------------------------------------------------------------------------------------
# Bundled models, against onnxruntime
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["transformer_encoder", "llama_decoder"])
def test_models(name):
    model = _make_models().MODELS[name]()
    module = import_onnx(model).module
    divs = op_counts(module)["Div"]
    LegalizePass().apply(Context(), module)
    module.verify()
    assert op_counts(module)["Div"] == {"transformer_encoder": 0, "llama_decoder": divs - 1}[name]
    inputs = random_inputs(model)
    expected = run_onnxruntime(model, inputs)
    for e, r in zip(expected, run_reference(module, inputs), strict=True):
        assert compare_arrays(e, r).cosine >= 0.99999
