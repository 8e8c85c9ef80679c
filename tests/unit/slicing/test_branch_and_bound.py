"""The search's branch and bound: a candidate's estimate runs only when it could win.

`estimate_lower_bound` must never exceed the estimate (else the search could skip the
best plan): on the test chains' spaces, on every candidate the search evaluates on the
bundled examples and on groups of ResNet-50 (when /work/models has it); the lazy order
`by_cycles` must equal a stable sort by cycles, and the search must choose the same plan
as one that estimates every candidate.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from itertools import islice
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from examples.make_models import MODELS
from tests.unit.slicing.helpers import single, the_group
from tests.unit.slicing.test_plans import CHAINS, SMALL, random_candidate
from tx8c.dialect import make_context
from tx8c.dialect.ops.conv_gemm import GemmOp
from tx8c.dialect.ops.elementwise import AddOp
from tx8c.frontend.onnx.importer import import_onnx
from tx8c.pipeline import CompileOptions, build_pipeline
from tx8c.slicing import evaluate as evaluate_module
from tx8c.slicing import search as search_module
from tx8c.slicing.evaluate import Evaluator, Rejected
from tx8c.slicing.group import group_spec
from tx8c.slicing.plan import Candidate
from tx8c.slicing.search import (
    NoPlan,
    SearchOptions,
    by_cycles,
    exhaustive_candidates,
    search,
)
from tx8c.target.config import DEFAULT_CONFIG
from tx8c.transforms.slice.group_cost import groups_to_slice


def _spec(name: str, seed: int):
    module, _ = CHAINS[name](np.random.default_rng(seed))
    return group_spec(the_group(module))


@pytest.mark.parametrize("name", sorted(CHAINS))
def test_the_bound_never_exceeds_the_estimate_on_the_space(name):
    spec = _spec(name, 3)
    evaluator = Evaluator(spec, SMALL)
    bounded = 0
    space = exhaustive_candidates(spec, SMALL, SearchOptions(mode="exhaustive"))
    # every 7th: all shardings, fewer splits; all of a group that can only run whole
    for cand in islice(space, 0, None, 7 if spec.sliceable else 1):
        try:
            pending = evaluator.pending(cand, allocate_spm=False)
        except Rejected:
            continue
        assert pending.lower_bound <= pending.cycles, cand
        bounded += pending.lower_bound > 0
    assert bounded > 0  # the bound is not vacuous


@pytest.mark.parametrize("name", sorted(CHAINS))
@settings(max_examples=15, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1))
def test_the_bound_never_exceeds_the_estimate_on_random_candidates(name, seed):
    rng = np.random.default_rng(seed)
    spec = _spec(name, seed)
    for config in (SMALL, DEFAULT_CONFIG):
        try:
            pending = Evaluator(spec, config).pending(random_candidate(rng, spec), False)
        except Rejected:
            continue
        assert pending.lower_bound <= pending.cycles


def test_the_bound_never_exceeds_the_estimate_on_shares_of_their_own_steps():
    """Rows the tiles do not divide evenly leave a smaller share, whose tiles run their
    own step count (`TileClass.steps`): fewer than tile 0's (14 rows, 4 tiles, steps
    of 1 row: 2 against 4) or more (7 rows, 2 tiles, 3 pieces: 4 rows in 2 steps, 3 in
    3), and drift apart from the others (every step simulated up to DRIFT_STEPS). The
    bound walks the same steps as the simulation, so it stays below the estimate, and
    is not vacuous there."""
    rng = np.random.default_rng(0)
    fewer = more = bounded = 0
    for rows in (7, 14, 37):
        a, b = (rng.standard_normal((rows, 96)).astype(np.float32) for _ in range(2))
        spec = group_spec(the_group(single(AddOp, [a, b])))
        evaluator = Evaluator(spec, DEFAULT_CONFIG)
        for tiles in (2, 4, 8, 16):
            for pieces in range(1, 6):
                for pipelined in (True, False):
                    cand = Candidate((tiles, 1), (pieces, 1), pipelined=pipelined)
                    try:
                        pending = evaluator.pending(cand, allocate_spm=False)
                    except Rejected:
                        continue
                    split = evaluator.split(cand)[0]
                    fewer += any(n < split.steps for n in split.share_steps)
                    more += any(n > split.steps for n in split.share_steps)
                    assert pending.lower_bound <= pending.cycles, cand
                    bounded += pending.lower_bound > 0
    assert fewer and more and bounded > (fewer + more) // 2


def _grouped_specs(model) -> list:
    """The distinct groups of `model` after the pipeline's grouping stage."""
    module = import_onnx(model).module
    ctx = make_context()
    for p in build_pipeline(CompileOptions()):
        if p.name == "group-cost":
            break
        p.apply(ctx, module)
    specs = {}
    for group in groups_to_slice(module):
        spec = group_spec(group)
        specs.setdefault(spec.key, spec)
    return list(specs.values())


def _searched_pendings(specs, monkeypatch) -> list:
    """Every candidate the default search evaluates on `specs` (its memo cleared)."""
    seen = []

    def recording(spec, config, constants_first=True):
        evaluator = Evaluator(spec, config, constants_first)
        own = evaluator.pending

        def pending(cand, allocate_spm=True):
            found = own(cand, allocate_spm)
            seen.append(found)
            return found

        evaluator.pending = pending
        return evaluator

    monkeypatch.setattr(search_module, "Evaluator", recording)
    search_module._searched.cache_clear()
    for spec in specs:
        try:
            search(spec, DEFAULT_CONFIG)
        except NoPlan:
            pass
    search_module._searched.cache_clear()
    return seen


def _check_bounds(pendings) -> None:
    bounded = 0
    for pending in pendings:
        assert pending.lower_bound <= pending.cycles, pending.candidate
        bounded += pending.lower_bound > 0
    assert bounded > len(pendings) // 2  # the bound is not vacuous


@pytest.mark.parametrize("name", sorted(MODELS))
def test_the_bound_never_exceeds_the_estimate_on_the_bundled_examples(name, monkeypatch):
    _check_bounds(_searched_pendings(_grouped_specs(MODELS[name]()), monkeypatch))


RESNET50 = Path(os.environ.get("TX8C_MODELS", "/work/models")) / "resnet50.onnx"


@pytest.mark.skipif(not RESNET50.is_file(), reason=f"{RESNET50} not exported")
def test_the_bound_never_exceeds_the_estimate_on_resnet50_groups(monkeypatch):
    """Every fourth distinct group of ResNet-50 (the stem, blocks of the four stages)."""
    import onnx

    specs = _grouped_specs(onnx.load(RESNET50))[::4]
    _check_bounds(_searched_pendings(specs, monkeypatch))


@dataclass
class _Entry:
    lower_bound: int
    cycles: int


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.integers(0, 20), st.integers(0, 20)), max_size=12))
def test_by_cycles_is_a_stable_sort_by_cycles(pairs):
    entries = [_Entry(min(a, b), max(a, b)) for a, b in pairs]
    got = list(by_cycles(entries))
    assert [id(e) for e in got] == [id(e) for e in sorted(entries, key=lambda e: e.cycles)]


@pytest.mark.parametrize("mode", ["default", "exhaustive"])
@pytest.mark.parametrize("name", sorted(CHAINS))
def test_the_search_chooses_what_estimating_everything_chooses(name, mode, monkeypatch):
    spec = _spec(name, 5)
    options = SearchOptions(mode=mode, max_candidates=400)
    bounded = [_outcome(spec, config, options) for config in (SMALL, DEFAULT_CONFIG)]
    monkeypatch.setattr(evaluate_module, "estimate_lower_bound", lambda *_: 0)
    everything = [_outcome(spec, config, options) for config in (SMALL, DEFAULT_CONFIG)]
    assert bounded == everything


def _outcome(spec, config, options):
    search_module._searched.cache_clear()  # search anew, not from the process's memo
    try:
        return search(spec, config, options)
    except NoPlan as e:
        return str(e)


def test_candidates_sharing_an_estimate_get_their_own_plans():
    """The evaluator runs one estimate per distinct (tasks, schedule)
    (`Evaluator.estimates`; a one-op group's deep pipeline is its shallow one): every
    candidate's plan equals its evaluation alone."""
    rng = np.random.default_rng(2)
    a = rng.standard_normal((64, 256)).astype(np.float32)
    b = rng.standard_normal((256, 128)).astype(np.float32)
    spec = group_spec(the_group(single(GemmOp, [a, b])))
    evaluator = Evaluator(spec, DEFAULT_CONFIG)
    space = exhaustive_candidates(spec, DEFAULT_CONFIG, SearchOptions(mode="exhaustive"))
    plans = 0
    for cand in islice(space, 160):  # the pipeline forms of a split are consecutive
        # the exhaustive space lists a deep form only where it stages a node otherwise
        for form in (cand, replace(cand, deep=True)) if cand.pipelined else (cand,):
            try:
                plan = evaluator(form)
            except Rejected:
                continue
            plans += 1
            assert plan == evaluate_module.evaluate(spec, form, DEFAULT_CONFIG)
    assert 0 < len(evaluator.estimates) < plans  # some candidates shared an estimate


class _Timed:
    """A Pending's stand-in for `_scored`: a lower bound, and cycles that note being
    asked (the estimate) in `asked`."""

    def __init__(self, lower_bound: int, cycles: int, asked: list):
        self.lower_bound, self._cycles, self._asked = lower_bound, cycles, asked

    @property
    def cycles(self) -> int:
        self._asked.append(self)
        return self._cycles


def _fitting(shardings, asked):
    return [search_module._Sharded((i,), (1,), [_Timed(min(a, b), max(a, b), asked)
                                                 for a, b in plans], used)
            for i, (used, plans) in enumerate(shardings)]


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.sampled_from([2, 4, 16]),
                          st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30)),
                                   min_size=1, max_size=3)), max_size=10),
       st.integers(0, 4))
def test_the_first_phase_ranks_what_the_later_phases_read_as_timing_every_sharding(
        shardings, refine):
    """`_scored` leaves shardings untimed, but the `refine` first and, per count of busy
    tiles below the chip's, the first are those of the full ranking."""
    every = sorted((min(p.cycles for p in f.plans), f.sharding, f.split)
                   for f in _fitting(shardings, []))
    got = search_module._scored(_fitting(shardings, []), refine, 16)
    assert got[:refine] == every[:refine]
    used = {(i,): u for i, (u, _) in enumerate(shardings)}
    for count in (2, 4):
        firsts = [[e for e in ranked if used[e[1]] == count][:1] for ranked in (got, every)]
        assert firsts[0] == firsts[1]


def test_the_first_phase_times_no_sharding_it_does_not_need():
    """Shardings whose floor lies behind the `refine` fastest timed ones are not timed
    (each would be an estimate); the old first phase timed every sharding."""
    asked: list = []
    fitting = _fitting([(16, [(10, 10)]), (16, [(11, 11)]), (16, [(50, 60)]),
                        (16, [(70, 80), (90, 95)]), (4, [(40, 45)])], asked)
    got = search_module._scored(fitting, 2, 16)
    assert [g[0] for g in got] == [10, 11, 45]  # the 4-tile one: first of its count
    assert sorted({id(p): p._cycles for p in asked}.values()) == [10, 11, 45]


@dataclass(frozen=True)
class _FakePlan:
    cycles: int
    tiles: int = 16
    spm_peak: int = 0


class _FakeEvaluator:
    """Hands out, per candidate (an index), a Pending of the given (lower bound, plan)
    whose estimate notes itself in `asked`."""

    def __init__(self, entries, asked: list):
        self.entries, self.asked = entries, asked

    def pending(self, cand):
        bound, plan = self.entries[cand]

        def finish():
            self.asked.append(cand)
            return plan

        return evaluate_module.Pending(cand, plan.tiles, plan.spm_peak, bound, finish)


def test_the_best_plan_is_settled_in_the_order_of_the_bounds():
    """Candidates offered between two reads of the best plan are compared lowest bound
    first: a slow candidate offered first is not estimated once a faster one's estimate
    lies below its bound (comparing each offer with the best before it estimated both);
    of equal plans the first offered stays the best."""
    asked: list = []
    entries = [(30, _FakePlan(31)), (10, _FakePlan(11)), (11, _FakePlan(11)),
               (5, _FakePlan(11))]
    best = search_module._Best(_FakeEvaluator(entries, asked))
    for cand in range(len(entries)):
        best.offer(None, cand, DEFAULT_CONFIG)
    assert best.plan is entries[1][1]  # the first offered of the fastest
    assert sorted(asked) == [1, 2, 3]  # candidate 0's bound lies above 11: not estimated


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.integers(0, 20), st.integers(0, 20), st.integers(1, 3)),
                min_size=1, max_size=10), st.integers(0, 10))
def test_the_best_plan_is_the_first_offered_of_the_least(triples, read_at):
    """Whenever the phases read it, `_Best.plan` is the plan that comparing every offer
    with the best before it keeps: the first offered of the least (cycles, tiles)."""
    entries = [(min(a, b), _FakePlan(max(a, b), tiles)) for a, b, tiles in triples]
    best = search_module._Best(_FakeEvaluator(entries, []))
    for cand in range(len(entries)):
        best.offer(None, cand, DEFAULT_CONFIG)
        if cand == read_at:
            assert best.plan is _first_least(entries[: cand + 1])
    assert best.plan is _first_least(entries)


def _first_least(entries):
    return min((e[1] for e in entries), key=lambda p: (p.cycles, p.tiles, p.spm_peak))
