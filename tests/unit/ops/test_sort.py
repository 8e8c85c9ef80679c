"""TopK: infer_shapes vs compute, and compute vs onnxruntime (ties keep input order)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers import OnnxCase, check_against_onnx, check_shapes, node
from tx8c.dialect.ops.sort import TopKOp


def topk_case(seed: int, dtype=np.float32) -> OnnxCase:
    rng = np.random.default_rng(seed)
    shape = tuple(int(d) for d in rng.integers(2, 6, size=int(rng.integers(1, 4))))
    x = rng.integers(-3, 3, shape).astype(dtype)  # many ties
    axis = int(rng.integers(-len(shape), len(shape)))
    k = int(rng.integers(0, shape[axis] + 1))
    largest = bool(seed % 2)
    return OnnxCase(TopKOp, [x], {"k": k, "axis": axis, "largest": largest},
                    [node("TopK", ["in0", "k"], 2, axis=axis, largest=int(largest))],
                    n_outputs=2, initializers={"k": np.array([k], np.int64)})


CASES = [topk_case(s) for s in range(6)] + [topk_case(s, np.int32) for s in range(6, 9)]


@pytest.mark.parametrize("case", CASES, ids=[f"TopK-{i}" for i in range(len(CASES))])
def test_matches_onnxruntime(case: OnnxCase) -> None:
    check_against_onnx(case)


@pytest.mark.parametrize("case", CASES, ids=[f"TopK-{i}" for i in range(len(CASES))])
def test_infer_shapes_matches_compute(case: OnnxCase) -> None:
    check_shapes(case)


def test_ties_keep_the_lower_index_first() -> None:
    from tests.helpers import run_op

    x = np.array([1, 3, 3, 2, 3], np.float32)
    values, indices = run_op(TopKOp, [x], k=4)
    np.testing.assert_array_equal(indices, [1, 2, 4, 3])
    values, indices = run_op(TopKOp, [x], k=2, largest=False)
    np.testing.assert_array_equal(indices, [0, 3])
