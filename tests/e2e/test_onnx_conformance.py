"""ONNX's own backend node tests, for every op type tx8c supports.

Every case must pass or be rejected at import with a clear error; a wrong number or a
crash is a bug. The summary table (per op type) is printed with `pytest -s`.
"""

from __future__ import annotations

import pytest

from tx8c.frontend.onnx.conformance import pass_rates, run_conformance, summary_table

# Passing cases today; a drop is a regression
MIN_PASSING = 832
MIN_RATE_ON_SUPPORTED_TYPES = 0.97


@pytest.fixture(scope="module")
def results():
    return run_conformance()


def test_no_case_fails_or_crashes(results) -> None:
    bad = [f"{r.status} {r.name}: {r.reason}" for r in results if r.status in ("fail", "error")]
    assert not bad, "\n".join(bad)


def test_rejections_say_why(results) -> None:
    for r in results:
        if r.status == "rejected":
            assert len(r.reason) > 20, r


def test_pass_count_does_not_regress(results) -> None:
    print("\n" + summary_table(results))
    passing = sum(r.status == "pass" for r in results)
    assert passing >= MIN_PASSING


def test_pass_rate_on_supported_element_types(results) -> None:
    assert pass_rates(results)["supported_dtypes"] >= MIN_RATE_ON_SUPPORTED_TYPES
