"""Normalisation ops: compute vs onnxruntime, infer_shapes vs compute, low precision."""

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
from tx8c.dialect.ops.norm import BatchNormInferenceOp, LayerNormOp, RMSNormOp, SoftmaxOp

RNG_SEEDS = (0, 1, 2)
TOL = {"rtol": 1e-5, "atol": 1e-5}


def _normal(rng: np.random.Generator, shape, scale: float = 1.0) -> np.ndarray:
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def _shape(rng: np.random.Generator, rank: int) -> tuple[int, ...]:
    return tuple(int(d) for d in rng.integers(1, 7, rank))


# --------------------------------------------------------------------------------------
# BatchNorm_Inference
# --------------------------------------------------------------------------------------


def _batchnorm_inputs(rng: np.random.Generator, shape, axis: int) -> list[np.ndarray]:
    c = shape[axis]
    x = _normal(rng, shape, 3)
    scale, offset, mean = _normal(rng, c), _normal(rng, c), _normal(rng, c)
    variance = rng.uniform(0.1, 3, c).astype(np.float32)
    return [x, scale, offset, mean, variance]


def batchnorm_case(seed: int) -> OnnxCase:
    """Channel axis 1 (NCHW-like), ranks 2, 3 and 4: ONNX BatchNormalization (inference)."""
    rng = np.random.default_rng(seed)
    shape = _shape(rng, (2, 3, 4)[seed])
    epsilon = float(rng.uniform(1e-5, 1e-2))
    inputs = _batchnorm_inputs(rng, shape, 1)
    nodes = [node("BatchNormalization", [f"in{i}" for i in range(5)], epsilon=epsilon)]
    return OnnxCase(BatchNormInferenceOp, inputs, {"epsilon": epsilon}, nodes, **TOL)


def batchnorm_channels_last_case(seed: int) -> OnnxCase:
    """Channel axis last (NHWC data, axis -1 or rank-1): Transpose + BatchNormalization."""
    rng = np.random.default_rng(seed + 10)
    rank = (3, 4, 4)[seed]
    shape = _shape(rng, rank)
    axis = -1 if seed % 2 else rank - 1
    inputs = _batchnorm_inputs(rng, shape, -1)
    to_first = [0, rank - 1, *range(1, rank - 1)]
    to_last = [0, *range(2, rank), 1]
    nodes = [
        helper.make_node("Transpose", ["in0"], ["x"], perm=to_first),
        helper.make_node("BatchNormalization", ["x", "in1", "in2", "in3", "in4"], ["y"]),
        helper.make_node("Transpose", ["y"], ["out0"], perm=to_last),
    ]
    return OnnxCase(BatchNormInferenceOp, inputs, {"axis": axis}, nodes, **TOL)


# --------------------------------------------------------------------------------------
# LayerNorm, RMSNorm
# --------------------------------------------------------------------------------------

# which optional operands each seed gives: (scale, bias) for LayerNorm, scale for RMSNorm
LAYERNORM_AFFINE = ((True, True), (True, False), (False, False))


def _norm_shape_and_axis(rng: np.random.Generator, seed: int) -> tuple[tuple, int]:
    rank = (2, 3, 4)[seed]
    shape = _shape(rng, rank)
    axis = int(rng.integers(-rank, rank))
    return shape, axis


def _affine_inputs(rng, normalized, given: tuple[bool, ...]):
    """tx8be's optional operands (those given) and the ONNX node's inputs.

    ONNX always needs a scale, so an absent one is given to ONNX as an initializer of ones.
    """
    inputs, inits, onnx_names = [], {}, ["in0"]
    for i, present in enumerate(given):
        if present:
            inputs.append(_normal(rng, normalized))
            onnx_names.append(f"in{len(inputs)}")
        elif i == 0:
            inits["ones"] = np.ones(normalized, np.float32)
            onnx_names.append("ones")
    return inputs, inits, onnx_names


def layernorm_case(seed: int) -> OnnxCase:
    """ONNX LayerNormalization (opset 17), with and without scale and bias."""
    rng = np.random.default_rng(seed)
    shape, axis = _norm_shape_and_axis(rng, seed)
    x = _normal(rng, shape, 2) + 1
    given = LAYERNORM_AFFINE[seed]
    affine, inits, names = _affine_inputs(rng, shape[axis:], given)
    epsilon = float(rng.uniform(1e-6, 1e-3))
    nodes = [node("LayerNormalization", names, axis=axis, epsilon=epsilon)]
    return OnnxCase(LayerNormOp, [x, *affine], {"axis": axis, "epsilon": epsilon}, nodes,
                    initializers=inits, **TOL)


def rmsnorm_case(seed: int) -> OnnxCase:
    """ONNX RMSNormalization (opset 23; onnxruntime 1.31 runs it), with and without scale."""
    rng = np.random.default_rng(seed)
    shape, axis = _norm_shape_and_axis(rng, seed)
    x = _normal(rng, shape, 2)
    given = (seed != 2,)
    affine, inits, names = _affine_inputs(rng, shape[axis:], given)
    epsilon = float(rng.uniform(1e-6, 1e-3))
    nodes = [node("RMSNormalization", names, axis=axis, epsilon=epsilon)]
    return OnnxCase(RMSNormOp, [x, *affine], {"axis": axis, "epsilon": epsilon}, nodes,
                    initializers=inits, opset=23, **TOL)


# --------------------------------------------------------------------------------------
# Softmax
# --------------------------------------------------------------------------------------


def softmax_case(seed: int) -> OnnxCase:
    """ONNX Softmax (opset 17: along one axis, as since opset 13)."""
    rng = np.random.default_rng(seed)
    rank = (1, 3, 4)[seed]
    shape = _shape(rng, rank)
    axis = int(rng.integers(-rank, rank))
    x = _normal(rng, shape, 5)
    return OnnxCase(SoftmaxOp, [x], {"axis": axis}, [node("Softmax", ["in0"], axis=axis)], **TOL)


CASES = {
    **{f"BatchNorm-{s}": batchnorm_case(s) for s in RNG_SEEDS},
    **{f"BatchNorm-channels-last-{s}": batchnorm_channels_last_case(s) for s in RNG_SEEDS},
    **{f"LayerNorm-{s}": layernorm_case(s) for s in RNG_SEEDS},
    **{f"RMSNorm-{s}": rmsnorm_case(s) for s in RNG_SEEDS},
    **{f"Softmax-{s}": softmax_case(s) for s in RNG_SEEDS},
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_matches_onnxruntime(case: OnnxCase) -> None:
    check_against_onnx(case)


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_infer_shapes_matches_compute(case: OnnxCase) -> None:
    check_shapes(case)


def test_softmax_is_stable_for_large_inputs() -> None:
    x = np.array([[1000.0, 1001.0, 1002.0], [-1000.0, -1001.0, -1002.0]], np.float32)
    (got,) = run_op(SoftmaxOp, [x])
    expected = np.exp([0.0, 1.0, 2.0]) / np.exp([0.0, 1.0, 2.0]).sum()
    np.testing.assert_allclose(got, [expected, expected[::-1]], rtol=1e-6)


LOW = [np.float16, ml_dtypes.bfloat16]


def _low_precision_check(case: OnnxCase, dtype, low_operands: int) -> None:
    """Run the case with its first `low_operands` inputs in `dtype`, vs onnxruntime in fp32."""
    inputs = [a.astype(dtype) if i < low_operands else a for i, a in enumerate(case.inputs)]
    (got,) = run_op(case.op_cls, inputs, **case.attrs)
    assert got.dtype == np.dtype(dtype)
    fp32 = OnnxCase(case.op_cls, [a.astype(np.float32) for a in inputs], case.attrs,
                    case.nodes, initializers=case.initializers, opset=case.opset)
    (expected,) = run_onnx(fp32)
    tol = 2e-2 if dtype is ml_dtypes.bfloat16 else 3e-3
    np.testing.assert_allclose(got.astype(np.float32), expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", LOW, ids=["f16", "bf16"])
def test_batchnorm_low_precision_input_with_f32_parameters(dtype) -> None:
    """Seed 003: a bf16/fp16 input with fp32 scale, offset, mean and variance."""
    _low_precision_check(batchnorm_case(2), dtype, low_operands=1)


@pytest.mark.parametrize("dtype", LOW, ids=["f16", "bf16"])
@pytest.mark.parametrize("make", [layernorm_case, rmsnorm_case, softmax_case],
                         ids=["LayerNorm", "RMSNorm", "Softmax"])
def test_low_precision(make, dtype) -> None:
    case = make(0)
    _low_precision_check(case, dtype, low_operands=len(case.inputs))


def test_batchnorm_parameters_must_be_the_inputs_type_or_f32() -> None:
    inputs = batchnorm_case(0).inputs
    mixed = [inputs[0].astype(np.float16), *(a.astype(ml_dtypes.bfloat16) for a in inputs[1:])]
    with pytest.raises(OpRuleError, match="must share the input's element type"):
        single_op_module(BatchNormInferenceOp, mixed)


def test_integer_input_is_rejected() -> None:
    with pytest.raises(OpRuleError, match="has element type i32; this op accepts"):
        single_op_module(SoftmaxOp, [np.ones((2, 3), np.int32)])


def test_op_attrs() -> None:
    expected = {
        BatchNormInferenceOp: (batchnorm_case(0), AlignMode.ALIGN, True),
        LayerNormOp: (layernorm_case(0), AlignMode.BOTH, False),
        RMSNormOp: (rmsnorm_case(0), AlignMode.BOTH, False),
        SoftmaxOp: (softmax_case(0), AlignMode.BOTH, False),
    }
    for op_cls, (case, align, preset) in expected.items():
        module = single_op_module(op_cls, case.inputs, **case.attrs)
        (op,) = [o for o in module.walk() if isinstance(o, op_cls)]
        attr = op.query_op_attr()
        assert (attr.align_mode, attr.need_preset_to_npu, attr.engine) == (align, preset, "CT")
