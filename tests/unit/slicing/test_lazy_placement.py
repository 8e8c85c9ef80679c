"""The SPM placement `prepare` leaves until a plan is asked (`placed_later`).

A candidate whose buffers fit end to end cannot fail its placement, and when its
estimate simulates every step its lower bound does not read the placement: `prepare`
then places it only when its plan or SPM peak is asked. The plan, the SPM peak and the
bound must be those of a placement made at once, and a candidate never estimated must
not be placed.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import islice

import numpy as np
import pytest

from tests.unit.slicing.helpers import grouped, the_group
from tests.unit.slicing.test_branch_and_bound import _spec
from tests.unit.slicing.test_extrapolated_bound import SPECS
from tests.unit.slicing.test_plans import CHAINS, SMALL
from tx8c.dialect.ops.conv_gemm import GemmOp
from tx8c.dialect.ops.elementwise import AddOp
from tx8c.slicing import evaluate as evaluate_module
from tx8c.slicing.evaluate import Evaluator, Rejected, simulation_floor
from tx8c.slicing.group import group_spec
from tx8c.slicing.search import SearchOptions, exhaustive_candidates
from tx8c.target.config import DEFAULT_CONFIG

CASES = [(name, DEFAULT_CONFIG) for name in [*sorted(SPECS), "gemm_ready"]] + [
    (name, SMALL) for name in sorted(CHAINS)]


def _made(name):
    """A spec of `SPECS` or `CHAINS`; "gemm_ready": the Gemm with its inputs ready (the
    lowering loads them first unless the placement keeps them in order: `kept`)."""
    if name == "gemm_ready":
        spec = SPECS["gemm"]()
        return replace(spec, ready_inputs=frozenset(range(len(spec.inputs))))
    return SPECS[name]() if name in SPECS else _spec(name, 4)


def _gemm_bias():
    """Gemm + Add of a ready bias (its load, third on the load lane in frame order, is
    moved first unless the placement keeps it in order)."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((256, 512)).astype(np.float32)
    b = rng.standard_normal((512, 256)).astype(np.float32)
    bias = rng.standard_normal((256, 256)).astype(np.float32)

    def build(values):
        gemm = GemmOp.make(values[:2])
        add = AddOp.make([gemm.results[0], values[2]])
        return [gemm, add], list(add.results)

    spec = group_spec(the_group(grouped(build, [a, b, bias])))
    return replace(spec, ready_inputs=frozenset({2}))


def _answers(spec, config, limit: int):
    """(candidate, plan, SPM peak, lower bound) of the first `limit` candidates of the
    space that fit, each prepared by a fresh evaluator."""
    out = []
    space = exhaustive_candidates(spec, config, SearchOptions(mode="exhaustive"))
    for cand in islice(space, 0, limit * 3, 3):
        try:
            pending = Evaluator(spec, config).pending(cand)
        except Rejected as e:
            out.append((cand, str(e)))
            continue
        out.append((cand, pending.lower_bound, pending.spm_peak, pending.plan))
    return out


@pytest.mark.parametrize(("name", "config"), CASES)
def test_a_placement_left_for_later_gives_what_placing_at_once_gives(name, config,
                                                                      monkeypatch):
    spec = _made(name)
    later = []
    placed_later = evaluate_module.placed_later

    def noting(*args):
        later.append(placed_later(*args))
        return later[-1]

    monkeypatch.setattr(evaluate_module, "placed_later", noting)
    lazy = _answers(spec, config, 60)
    monkeypatch.setattr(evaluate_module, "placed_later", lambda *_: False)
    assert lazy == _answers(spec, config, 60)
    assert any(later) or name in CHAINS  # some placements were left for later


def test_a_candidate_never_estimated_is_never_placed(monkeypatch):
    placements = []
    allocate = evaluate_module.allocate

    def counting(*args, **kwargs):
        placements.append(1)
        return allocate(*args, **kwargs)

    monkeypatch.setattr(evaluate_module, "allocate", counting)
    spec = SPECS["gemm"]()
    pending = Evaluator(spec, DEFAULT_CONFIG).pending(
        evaluate_module.Candidate((4, 4), (2, 1)))
    assert pending.lower_bound > 0
    assert not placements  # main placed every candidate it prepared
    assert pending.plan.spm_peak == pending.spm_peak
    assert len(placements) == 1  # once, for the plan and its peak


@pytest.mark.parametrize("name", sorted(SPECS))
def test_the_simulation_floor_reads_nothing_of_the_placement(name):
    """`kept` (the ready loads that stay in their frame order) is the placement's only
    trace in a schedule: the floor is the same whichever loads it holds."""
    spec = _made(name)
    evaluator = Evaluator(spec, DEFAULT_CONFIG)
    space = exhaustive_candidates(spec, DEFAULT_CONFIG, SearchOptions(mode="exhaustive"))
    for cand in islice(space, 0, 120, 4):
        try:
            evaluator.pending(cand)
        except Rejected:
            continue
    loads = frozenset(n.index for n in spec.nodes if n.kind == "load")
    for ts, schedule in list(evaluator.floors)[:20]:
        ts = list(ts)
        count = evaluate_module.longest(schedule)
        floors = {simulation_floor(spec, ts, replace(schedule, kept=kept), DEFAULT_CONFIG,
                                   count) for kept in (frozenset(), loads)}
        assert len(floors) == 1


def test_a_placement_left_for_later_keeps_the_ready_loads_it_keeps_in_order(monkeypatch):
    """Every buffer at offset 0 (a placement where each ready load's first copy shares
    bytes with a buffer living before it: `kept` is not empty): the plans prepared with
    the placement left for later are those of placing at once, `kept` included."""
    from tx8c.analysis.interval_alloc import Allocation

    def overlapping(buffers, align, capacity, **_):
        return Allocation(tuple((b.name, 0) for b in buffers),
                          max(b.size for b in buffers), 0, "overlapping")

    monkeypatch.setattr(evaluate_module, "allocate", overlapping)
    spec = _gemm_bias()
    kept = []
    with_placement = evaluate_module.with_placement

    def noting(*args):
        kept.append(bool(with_placement(*args).kept))
        return with_placement(*args)

    monkeypatch.setattr(evaluate_module, "with_placement", noting)
    lazy = _answers(spec, DEFAULT_CONFIG, 40)
    assert any(kept)
    monkeypatch.setattr(evaluate_module, "placed_later", lambda *_: False)
    assert lazy == _answers(spec, DEFAULT_CONFIG, 40)
