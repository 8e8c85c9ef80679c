"""The lower bound of an extrapolating estimate (`estimate_lower_bound` with `early_run`).

An estimate over many steps simulates two runs and extrapolates (t2 + more * (t2 - t1)).
Its bound simulates the first run and takes the second's `simulation_floor`: it must
never exceed the estimate (else the search could skip the best plan), must not be
vacuous (it was 0, and every such candidate was estimated), and the estimate that
reuses the bound's first run must equal the estimate alone.
"""

from __future__ import annotations

from itertools import islice

import numpy as np
import pytest

from tests.unit.slicing.helpers import single, the_group
from tx8c.dialect.ops.conv_gemm import GemmOp
from tx8c.dialect.ops.elementwise import AddOp
from tx8c.slicing.evaluate import (
    Evaluator,
    Rejected,
    _extrapolated,
    early_run,
    estimate,
    estimate_lower_bound,
    longest,
    simulate_tile,
    simulation_floor,
)
from tx8c.slicing.group import group_spec
from tx8c.slicing.search import SearchOptions, exhaustive_candidates
from tx8c.target.config import DEFAULT_CONFIG


def _add(rows: int):
    rng = np.random.default_rng(rows)
    a, b = (rng.standard_normal((rows, 256)).astype(np.float32) for _ in range(2))
    return group_spec(the_group(single(AddOp, [a, b])))


def _gemm():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((256, 1024)).astype(np.float32)
    b = rng.standard_normal((1024, 256)).astype(np.float32)
    return group_spec(the_group(single(GemmOp, [a, b])))


SPECS = {"add_512": lambda: _add(512), "add_37": lambda: _add(37), "gemm": _gemm}


def _schedules(spec, limit: int):
    """(tasks, schedule) of the first `limit` candidates of `spec`'s space that fit,
    each distinct pair once (the evaluator's `early` table)."""
    evaluator = Evaluator(spec, DEFAULT_CONFIG)
    space = exhaustive_candidates(spec, DEFAULT_CONFIG, SearchOptions(mode="exhaustive"))
    for cand in islice(space, limit):
        try:
            evaluator.pending(cand, allocate_spm=False)
        except Rejected:
            continue
    return [(list(ts), schedule) for ts, schedule in evaluator.early]


@pytest.mark.parametrize("name", sorted(SPECS))
def test_an_extrapolating_estimate_has_a_bound_below_it_and_not_zero(name):
    spec = SPECS[name]()
    extrapolating = bounded = 0
    for ts, schedule in _schedules(spec, 400):
        if _extrapolated(ts, schedule) is None:
            continue
        extrapolating += 1
        cycles = estimate(spec, ts, schedule, DEFAULT_CONFIG)[0]
        bound = estimate_lower_bound(spec, ts, schedule, DEFAULT_CONFIG)
        assert bound <= cycles
        bounded += bound > 0
    assert extrapolating > 0
    assert bounded > extrapolating // 3  # the old bound was 0 on every one


@pytest.mark.parametrize("name", sorted(SPECS))
def test_the_estimate_with_the_bounds_first_run_equals_the_estimate_alone(name):
    spec = SPECS[name]()
    for ts, schedule in _schedules(spec, 200):
        early = early_run(spec, ts, schedule, DEFAULT_CONFIG)
        assert (early is None) == (_extrapolated(ts, schedule) is None)
        assert (estimate(spec, ts, schedule, DEFAULT_CONFIG, early)
                == estimate(spec, ts, schedule, DEFAULT_CONFIG))
        assert (estimate_lower_bound(spec, ts, schedule, DEFAULT_CONFIG, early)
                == estimate_lower_bound(spec, ts, schedule, DEFAULT_CONFIG))


@pytest.mark.parametrize("name", sorted(SPECS))
def test_the_simulation_floor_never_exceeds_the_simulation_of_any_count(name):
    """`simulation_floor` over `count` steps (the extrapolating bound asks it for the
    second run's count, on the periodic schedule) against `simulate_tile` of as many."""
    spec = SPECS[name]()
    checked = 0
    for ts, schedule in _schedules(spec, 120)[::3]:
        steps = longest(schedule)
        for count in sorted({1, 2, steps // 3, steps // 2, steps - 1, steps} - {0}):
            floor = simulation_floor(spec, ts, schedule, DEFAULT_CONFIG, count)
            assert floor <= simulate_tile(spec, ts, schedule, DEFAULT_CONFIG, count)[0]
            checked += floor > 0
    assert checked > 0
