"""Math and activation converters (compositions and the Mod/Round/Atan ops) against
onnxruntime, across the ranges where their formulas change (near 0, near the domain's
edges, large values) and in float16."""

from __future__ import annotations

import numpy as np
import pytest

from tests.unit.frontend.onnx_check import check_node

RNG = np.random.default_rng(0)


def _values(*pieces) -> np.ndarray:
    return np.concatenate([np.asarray(p, np.float32).reshape(-1) for p in pieces])


WIDE = _values(RNG.standard_normal(64) * 3, [0.0, 1e-6, -1e-4, 0.01, 0.12, 0.13, -0.2, 5, -7,
                                               30, 88.5, -89])
UNIT = _values(RNG.uniform(-1, 1, 64), [-1, 1, 0, 1e-5, -0.999, 0.9999, 0.5, -0.12, 0.13])
ABOVE_ONE = _values(RNG.uniform(1, 10, 32), [1, 1.0001, 1.5, 1e5, 1e20, 3e30])
HUGE = _values(WIDE[:-2], [1e19, -3e20, 2e30])

CASES = {
    "Tan": (_values(RNG.uniform(-1.4, 1.4, 64)), 1e-5),
    "Atan": (WIDE, 1e-6),
    "Asin": (UNIT, 1e-6),
    "Acos": (UNIT, 1e-6),
    "Sinh": (WIDE, 1e-5),
    "Cosh": (WIDE, 1e-5),
    "Asinh": (HUGE, 1e-6),
    "Acosh": (ABOVE_ONE, 1e-6),
    "Atanh": (_values(UNIT[:-4], [0.9, -0.99, 1e-5, 0.12]), 1e-6),
    "Sign": (_values(WIDE, [0, -0.0]), 0),
    "Round": (_values(WIDE, [0.5, 1.5, 2.5, -0.5, -2.5]), 0),
    "Mish": (WIDE, 1e-5),
    "Softsign": (WIDE, 1e-6),
}


@pytest.mark.parametrize("op", sorted(CASES))
def test_unary_math_matches_onnxruntime(op: str) -> None:
    x, rtol = CASES[op]
    check_node(op, {"x": x}, rtol=rtol, atol=1e-7)


@pytest.mark.parametrize("op, attrs", [
    ("Selu", {}), ("Selu", {"alpha": 2.0, "gamma": 0.5}), ("Celu", {}), ("Celu", {"alpha": 0.3}),
    ("ThresholdedRelu", {}), ("ThresholdedRelu", {"alpha": -0.5}), ("Shrink", {}),
    ("Shrink", {"lambd": 1.5, "bias": 0.25}),
])
def test_activations_match_onnxruntime(op: str, attrs: dict) -> None:
    check_node(op, {"x": WIDE[:-2]}, rtol=1e-5, atol=1e-6, **attrs)


@pytest.mark.parametrize("op", ["Sinh", "Asinh", "Mish", "Tan"])
def test_low_precision_is_computed_in_float32(op: str) -> None:
    """One rounding to float16 at the end, as onnxruntime does, not one per step."""
    x = WIDE[np.abs(WIDE) < 8] if op != "Tan" else CASES["Tan"][0]
    check_node(op, {"x": x.astype(np.float16)}, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("fmod", [0, 1])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.int8])
def test_integer_mod(fmod: int, dtype) -> None:
    a = RNG.integers(-50, 50, (4, 6)).astype(dtype)
    b = (RNG.integers(1, 9, (6,)) * RNG.choice([-1, 1], 6)).astype(dtype)
    check_node("Mod", {"a": a, "b": b}, fmod=fmod)


def test_float_fmod() -> None:
    a = (RNG.standard_normal((3, 5)) * 100).astype(np.float32)
    b = RNG.uniform(0.5, 3, (3, 1)).astype(np.float32)
    check_node("Mod", {"a": a, "b": b}, fmod=1, rtol=0, atol=0)


def test_float_mod_with_the_divisors_sign() -> None:
    """fmod = 0 on floats (ONNX allows it from opset 28; tx8c computes it at any)."""
    from onnx import helper

    from tests.unit.frontend.onnx_check import graph_model
    from tx8c.frontend.onnx.importer import import_onnx
    from tx8c.sim.reference import run_reference

    a = np.array([5.5, -5.5, 5.5, -5.5, 6.0, -0.0], np.float32)
    b = np.array([2, 2, -2, -2, 3, 2], np.float32)
    model = graph_model([helper.make_node("Mod", ["a", "b"], ["out0"], fmod=0)],
                        {"a": a, "b": b}, ["out0"], opset=26)
    (got,) = run_reference(import_onnx(model).module, {"a": a, "b": b})
    np.testing.assert_array_equal(got, np.mod(a, b))


def test_integer_mod_by_a_constant_zero_is_refused() -> None:
    from onnx import helper

    from tests.unit.frontend.onnx_check import graph_model
    from tx8c.frontend.onnx.importer import import_onnx
    from tx8c.frontend.onnx.loader import OnnxImportError

    model = graph_model([helper.make_node("Mod", ["a", "b"], ["out0"])],
                        {"a": np.ones(3, np.int32)}, ["out0"],
                        initializers={"b": np.array([1, 0, 2], np.int32)})
    with pytest.raises(OnnxImportError, match="divides integers by zero"):
        import_onnx(model)


def test_compositions_survive_the_pipeline() -> None:
    check_node("Asinh", {"x": HUGE.reshape(1, -1)}, rtol=1e-6, atol=1e-7, pipeline=True)
    check_node("Mod", {"a": np.arange(-6, 6, dtype=np.int32).reshape(3, 4)},
               initializers={"b": np.array([3, -3, 5, 2], np.int32)}, pipeline=True)


def test_swish() -> None:
    from onnx import helper
    from onnx.reference import ReferenceEvaluator

    from tests.unit.frontend.onnx_check import graph_model
    from tx8c.frontend.onnx.importer import import_onnx
    from tx8c.sim.reference import run_reference

    x = WIDE[np.abs(WIDE) < 50]
    model = graph_model([helper.make_node("Swish", ["x"], ["y"], alpha=0.7)], {"x": x}, ["y"],
                        opset=24)
    (expected,) = ReferenceEvaluator(model).run(None, {"x": x})
    (got,) = run_reference(import_onnx(model).module, {"x": x})
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("op", ["HannWindow", "HammingWindow", "BlackmanWindow"])
@pytest.mark.parametrize("periodic", [0, 1])
def test_windows_are_compile_time_constants(op, periodic) -> None:
    from onnx import helper

    from tests.unit.frontend.onnx_check import check_model, graph_model

    x = np.ones(10, np.float32)
    nodes = [helper.make_node(op, ["n"], ["w"], periodic=periodic),
             helper.make_node("Mul", ["x", "w"], ["y"])]
    model = graph_model(nodes, {"x": x}, ["y"], {"n": np.array(10, np.int64)})
    result = check_model(model, {"x": x}, rtol=1e-6, atol=1e-7)
    assert "Mul" in {op.name.removeprefix("tx8be.") for op in result.module.walk()}
