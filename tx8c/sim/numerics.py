"""Comparing results: cosine similarity, SQNR and max abs error, with per-dtype verdicts.

Thresholds (DESIGN.md, Numerics): fp32 needs cosine >= 0.99999. Low-precision results are
judged looser, documented here: fp16 0.999, bf16 0.99, int8 0.98. Integer and bool
results must be equal exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

COSINE_THRESHOLD = {"f32": 0.99999, "f16": 0.999, "bf16": 0.99, "i8": 0.98}


@dataclass(frozen=True)
class Comparison:
    cosine: float
    sqnr_db: float
    max_abs_error: float
    exact: bool

    def passes(self, threshold: float) -> bool:
        return self.exact or self.cosine >= threshold


def compare_arrays(expected: np.ndarray, got: np.ndarray) -> Comparison:
    """How close `got` is to `expected` (shapes must agree)."""
    if expected.shape != got.shape:
        raise ValueError(f"shape {list(got.shape)} differs from expected {list(expected.shape)}")
    e = np.asarray(expected, dtype=np.float64).reshape(-1)
    g = np.asarray(got, dtype=np.float64).reshape(-1)
    exact = bool(np.array_equal(e, g, equal_nan=True))
    if e.size == 0:
        return Comparison(1.0, float("inf"), 0.0, True)
    finite = np.isfinite(e) & np.isfinite(g)
    same_nonfinite = np.array_equal(e[~finite], g[~finite], equal_nan=True)
    e, g = e[finite], g[finite]
    noise = e - g
    max_err = float(np.max(np.abs(noise))) if e.size else 0.0
    signal_power = float(np.dot(e, e))
    noise_power = float(np.dot(noise, noise))
    if noise_power == 0.0:
        sqnr = float("inf")
    elif signal_power == 0.0:
        sqnr = float("-inf")
    else:
        sqnr = 10.0 * np.log10(signal_power / noise_power)
    norm = np.linalg.norm(e) * np.linalg.norm(g)
    if norm == 0.0:
        cosine = 1.0 if noise_power == 0.0 else 0.0
    else:
        cosine = float(np.dot(e, g) / norm)
    if not same_nonfinite:
        cosine, exact = min(cosine, 0.0), False
    return Comparison(cosine, sqnr, max_err, exact)


def threshold_for(dtype_name: str) -> float:
    """The cosine a result of this element type must reach; ints and bools need exact."""
    return COSINE_THRESHOLD.get(dtype_name, 1.0 + 1e-9)
