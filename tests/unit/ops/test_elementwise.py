"""Element-wise ops: infer_shapes vs compute, and compute vs onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers import OnnxCase, check_against_onnx, check_shapes, node
from tx8c.dialect.ops import elementwise as ew

RNG_SEEDS = (0, 1, 2)


def _shapes(rng: np.random.Generator, broadcast: bool) -> tuple[tuple, tuple]:
    rank = int(rng.integers(1, 5))
    shape = tuple(int(d) for d in rng.integers(1, 6, size=rank))
    if not broadcast:
        return shape, shape
    other = list(shape[int(rng.integers(0, rank)):])  # a suffix...
    if other:
        other[int(rng.integers(0, len(other)))] = 1  # ...with a broadcast dim
    return shape, tuple(other)


BINARY = {
    ew.AddOp: "Add", ew.SubOp: "Sub", ew.MulOp: "Mul", ew.DivOp: "Div", ew.MaxOp: "Max",
    ew.MinOp: "Min", ew.PowOp: "Pow", ew.EqualOp: "Equal", ew.LessOp: "Less",
    ew.LessOrEqualOp: "LessOrEqual", ew.GreaterOp: "Greater",
    ew.GreaterOrEqualOp: "GreaterOrEqual", ew.AndOp: "And", ew.OrOp: "Or",
}


def binary_case(op_cls, seed: int) -> OnnxCase:
    rng = np.random.default_rng(seed)
    a_shape, b_shape = _shapes(rng, broadcast=seed > 0)
    if seed == 2:
        a_shape, b_shape = b_shape, a_shape
    if op_cls in (ew.AndOp, ew.OrOp):
        a, b = rng.random(a_shape) > 0.5, rng.random(b_shape) > 0.5
    elif op_cls is ew.PowOp:
        a = rng.uniform(0.5, 2.0, a_shape).astype(np.float32)
        b = rng.uniform(-2, 2, b_shape).astype(np.float32)
    elif op_cls is ew.DivOp:
        a = rng.standard_normal(a_shape).astype(np.float32)
        b = (rng.uniform(0.5, 2, b_shape) * rng.choice([-1, 1], b_shape)).astype(np.float32)
    else:
        a = rng.integers(-3, 3, a_shape).astype(np.float32)  # ties for comparisons
        b = rng.integers(-3, 3, b_shape).astype(np.float32)
    return OnnxCase(op_cls, [a, b], {}, [node(BINARY[op_cls], ["in0", "in1"])])


def where_case(seed: int) -> OnnxCase:
    rng = np.random.default_rng(seed)
    shape, other = _shapes(rng, broadcast=seed > 0)
    cond = rng.random(other) > 0.5
    x = rng.standard_normal(shape).astype(np.float32)
    y = rng.standard_normal(other).astype(np.float32)
    return OnnxCase(ew.WhereOp, [cond, x, y], {}, [node("Where", ["in0", "in1", "in2"])])


UNARY = {
    ew.ReluOp: "Relu", ew.SigmoidOp: "Sigmoid", ew.TanhOp: "Tanh", ew.ErfOp: "Erf",
    ew.ExpOp: "Exp", ew.LogOp: "Log", ew.SqrtOp: "Sqrt", ew.ReciprocalOp: "Reciprocal",
    ew.AbsOp: "Abs", ew.NegOp: "Neg", ew.NotOp: "Not", ew.SinOp: "Sin", ew.CosOp: "Cos",
    ew.FloorOp: "Floor", ew.CeilOp: "Ceil", ew.HardSwishOp: "HardSwish",
    ew.RoundOp: "Round", ew.AtanOp: "Atan",
}
POSITIVE_ONLY = (ew.LogOp, ew.SqrtOp, ew.RsqrtOp, ew.ReciprocalOp)


def unary_case(op_cls, seed: int) -> OnnxCase:
    rng = np.random.default_rng(seed)
    shape, _ = _shapes(rng, broadcast=False)
    if op_cls is ew.NotOp:
        x = rng.random(shape) > 0.5
    elif op_cls in POSITIVE_ONLY:
        x = rng.uniform(0.1, 4, shape).astype(np.float32)
    else:
        x = (rng.standard_normal(shape) * 3).astype(np.float32)
    attrs: dict = {}
    if op_cls in UNARY:
        nodes = [node(UNARY[op_cls], ["in0"])]
    elif op_cls is ew.LeakyReluOp:
        alpha = float(rng.uniform(0.01, 0.5))
        attrs = {"alpha": alpha}
        nodes = [node("LeakyRelu", ["in0"], alpha=alpha)]
    elif op_cls is ew.HardSigmoidOp:
        alpha, beta = float(rng.uniform(0.1, 0.5)), float(rng.uniform(0.2, 0.7))
        attrs = {"alpha": alpha, "beta": beta}
        nodes = [node("HardSigmoid", ["in0"], alpha=alpha, beta=beta)]
    elif op_cls is ew.GeluOp:
        approximate = ("none", "tanh", "none")[seed]
        attrs = {"approximate": approximate}
        return OnnxCase(op_cls, [x], attrs,
                        [node("Gelu", ["in0"], approximate=approximate)], opset=20)
    elif op_cls is ew.ClipOp:
        lo, hi = sorted(float(v) for v in rng.uniform(-2, 2, 2))
        bounds = [(lo, hi), (lo, None), (None, hi)][seed]
        attrs = {"min": bounds[0], "max": bounds[1]}
        inits = {}
        names = ["in0", "", ""]
        for i, b in enumerate(bounds):
            if b is not None:
                names[i + 1] = f"bound{i}"
                inits[f"bound{i}"] = np.array(b, np.float32)
        while names[-1] == "":
            names.pop()
        return OnnxCase(op_cls, [x], attrs, [node("Clip", names)], initializers=inits)
    elif op_cls is ew.SiluOp:  # no ONNX op: x * Sigmoid(x)
        nodes = [
            node("Sigmoid", ["in0"]),
            onnx_node("Mul", ["in0", "out0"], ["out1"]),
        ]
        nodes[0].output[0] = "sig"
        nodes[1].input[1] = "sig"
        nodes[1].output[0] = "out0"
    elif op_cls is ew.RsqrtOp:  # no ONNX op: Reciprocal(Sqrt(x))
        nodes = [onnx_node("Sqrt", ["in0"], ["s"]), onnx_node("Reciprocal", ["s"], ["out0"])]
    elif op_cls is ew.CastOp:
        to, onnx_to = [("f16", 10), ("i32", 6), ("i1", 9)][seed]
        attrs = {"to": to}
        nodes = [node("Cast", ["in0"], to=onnx_to)]
    else:
        raise AssertionError(op_cls)
    return OnnxCase(op_cls, [x], attrs, nodes, rtol=1e-3 if op_cls is ew.CastOp else 1e-5)


def onnx_node(op_type, inputs, outputs, **attrs):
    from onnx import helper

    return helper.make_node(op_type, inputs, outputs, **attrs)


def mod_case(seed: int) -> OnnxCase:
    """Integer Mod (sign of the divisor), then fmod on floats and on integers."""
    rng = np.random.default_rng(seed)
    a_shape, b_shape = _shapes(rng, broadcast=seed > 0)
    sign = rng.choice([-1, 1], b_shape)
    if seed == 1:
        a = (rng.standard_normal(a_shape) * 10).astype(np.float32)
        b = (rng.uniform(0.5, 3, b_shape) * sign).astype(np.float32)
    else:
        a = rng.integers(-20, 20, a_shape).astype(np.int32)
        b = (rng.integers(1, 6, b_shape) * sign).astype(np.int32)
    fmod = seed > 0
    return OnnxCase(ew.ModOp, [a, b], {"fmod": fmod},
                    [node("Mod", ["in0", "in1"], fmod=int(fmod))])


CASES = (
    [binary_case(op, s) for op in ew.BINARY_OPS for s in RNG_SEEDS]
    + [mod_case(s) for s in RNG_SEEDS]
    + [where_case(s) for s in RNG_SEEDS]
    + [unary_case(op, s) for op in ew.UNARY_OPS for s in RNG_SEEDS]
)


@pytest.mark.parametrize("case", CASES, ids=[f"{c.id}-{i % 3}" for i, c in enumerate(CASES)])
def test_matches_onnxruntime(case: OnnxCase) -> None:
    check_against_onnx(case)


@pytest.mark.parametrize("case", CASES, ids=[f"{c.id}-{i % 3}" for i, c in enumerate(CASES)])
def test_infer_shapes_matches_compute(case: OnnxCase) -> None:
    check_shapes(case)


def test_vector_mode_tells_vv_from_vs() -> None:
    from tests.helpers import single_op_module

    same = single_op_module(ew.AddOp, [np.ones((2, 3), np.float32)] * 2)
    bcast = single_op_module(ew.AddOp, [np.ones((2, 3), np.float32), np.ones(3, np.float32)])
    ops = [next(o for o in m.walk() if isinstance(o, ew.AddOp)) for m in (same, bcast)]
    assert [o.vector_mode() for o in ops] == ["V_VV", "V_VS"]
    assert ops[1].complete_operand() == 0


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "int8", "int32", "int64"])
def test_add_in_other_dtypes(dtype: str) -> None:
    import ml_dtypes

    from tests.helpers import run_op

    np_dtype = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    a = np.arange(6).reshape(2, 3).astype(np_dtype)
    b = np.ones(3).astype(np_dtype)
    (got,) = run_op(ew.AddOp, [a, b])
    assert got.dtype == np.dtype(np_dtype)
    np.testing.assert_array_equal(got.astype(np.float64), (a.astype(np.float64) + 1))


def test_integer_division_truncates_toward_zero() -> None:
    from tests.helpers import run_op

    a = np.array([7, -7, 7, -7], np.int32)
    b = np.array([2, 2, -2, -2], np.int32)
    (got,) = run_op(ew.DivOp, [a, b])
    np.testing.assert_array_equal(got, [3, -3, -3, 3])


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_clip_min_above_max_gives_max(dtype) -> None:
    """ONNX defines Clip with min > max: every element becomes max."""
    x = np.array([[-3, 0, 1], [2, 5, -1]], dtype)
    inits = {"lo": np.array(2, dtype), "hi": np.array(1, dtype)}
    case = OnnxCase(ew.ClipOp, [x], {"min": 2.0, "max": 1.0},
                    [node("Clip", ["in0", "lo", "hi"])], initializers=inits)
    check_against_onnx(case)
    from tests.helpers import run_op

    np.testing.assert_array_equal(run_op(ew.ClipOp, [x], min=2.0, max=1.0)[0], np.ones_like(x))


def test_round_breaks_ties_to_even() -> None:
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 0.49999997], np.float32)
    case = OnnxCase(ew.RoundOp, [x], {}, [node("Round", ["in0"])])
    check_against_onnx(case)


def test_float_mod_is_exact_for_large_quotients() -> None:
    """fmod(1e7 + 1, 3) must be exact: a composed a - trunc(a / b) * b rounds the
    quotient."""
    from tests.helpers import run_op

    a = np.array([1e7 + 1, -123456.789, 5.5], np.float32)
    b = np.array([3, 0.1, -2], np.float32)
    (got,) = run_op(ew.ModOp, [a, b], fmod=True)
    np.testing.assert_array_equal(got, np.fmod(a, b))
