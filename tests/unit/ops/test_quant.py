"""MatMulInteger and ConvInteger: exact int32 results (against int64 numpy and
onnxruntime), shapes, and the wrap of the int32 accumulator."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers import OnnxCase, check_against_onnx, check_shapes, node, run_op
from tx8c.dialect.ops.quant import ConvIntegerOp, MatMulIntegerOp

RNG = np.random.default_rng(0)


def matmul_case(seed: int) -> OnnxCase:
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 400))
    batch = [tuple(), (2,), (3, 1)][seed % 3]
    a = rng.integers(-128, 128, (*batch, 3, k)).astype(np.int8)
    b = rng.integers(-128, 128, (k, 4)).astype(np.int8)
    return OnnxCase(MatMulIntegerOp, [a, b], {}, [node("MatMulInteger", ["in0", "in1"])])


def conv_case(seed: int) -> OnnxCase:
    rng = np.random.default_rng(seed)
    groups = [1, 2, 4][seed % 3]
    x = rng.integers(-128, 128, (1, 4, 6, 5)).astype(np.int8)
    w = rng.integers(-128, 128, (8, 4 // groups, 3, 2)).astype(np.int8)
    attrs = {"strides": [1 + seed % 2, 1], "pads": [1, 0, seed % 2, 1], "dilations": [1, 2],
             "groups": groups}
    onnx_attrs = {"strides": attrs["strides"], "pads": [1, 0, seed % 2, 1],
                  "dilations": attrs["dilations"], "group": groups}
    return OnnxCase(ConvIntegerOp, [x, w], attrs, [node("ConvInteger", ["in0", "in1"],
                                                        **onnx_attrs)])


CASES = [matmul_case(s) for s in range(3)] + [conv_case(s) for s in range(3)]


@pytest.mark.parametrize("case", CASES, ids=[f"{c.id}-{i % 3}" for i, c in enumerate(CASES)])
def test_matches_onnxruntime(case: OnnxCase) -> None:
    check_against_onnx(case)


@pytest.mark.parametrize("case", CASES, ids=[f"{c.id}-{i % 3}" for i, c in enumerate(CASES)])
def test_infer_shapes_matches_compute(case: OnnxCase) -> None:
    check_shapes(case)


def test_int32_operands_are_exact_where_float32_is_not() -> None:
    """uint8 data centred by its zero point ([-255, 255]) over K = 4096: the exact sum
    exceeds 2^24, where a float32 Gemm rounds."""
    a = RNG.integers(-255, 256, (2, 4096)).astype(np.int32)
    b = RNG.integers(-255, 256, (4096, 3)).astype(np.int32)
    (got,) = run_op(MatMulIntegerOp, [a, b])
    np.testing.assert_array_equal(got, a.astype(np.int64) @ b.astype(np.int64))


def test_accumulator_wraps_like_int32() -> None:
    a = np.full((1, 2), 2**30, np.int32)
    b = np.full((2, 1), 2, np.int32)
    (got,) = run_op(MatMulIntegerOp, [a, b])
    assert got.dtype == np.int32 and got[0, 0] == np.int32(0)  # 2^32 wraps to 0
