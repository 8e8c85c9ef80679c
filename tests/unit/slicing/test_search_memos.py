"""The search's memos change no result: a group's sweeps sharing a `SweepMemo`, its
splits sharing `node_tasks`' slice costs, and the allocation reusing the live intervals
and max-live bound the candidate computed, give what each computation alone gives."""

from __future__ import annotations

from itertools import islice

import numpy as np
import pytest

from tests.unit.slicing.helpers import the_group
from tests.unit.slicing.test_plans import CHAINS, SMALL
from tx8c.analysis.interval_alloc import Buffer, OutOfMemory, allocate, live_intervals, max_live
from tx8c.slicing.evaluate import Evaluator, Rejected, prepare
from tx8c.slicing.group import group_spec
from tx8c.slicing.propagate import SweepMemo, propagate
from tx8c.slicing.search import SearchOptions, exhaustive_candidates
from tx8c.slicing.steps import anchor_granules, step_windows, tiles
from tx8c.target.config import DEFAULT_CONFIG


def _spec(name: str):
    module, _ = CHAINS[name](np.random.default_rng(3))
    return group_spec(the_group(module))


@pytest.mark.parametrize("name", sorted(CHAINS))
def test_a_shared_evaluator_gives_every_candidate_its_plan_alone(name):
    spec = _spec(name)
    compared = 0
    for config in (SMALL, DEFAULT_CONFIG):
        shared = Evaluator(spec, config)  # memos filled by every candidate before
        space = list(islice(exhaustive_candidates(spec, config, SearchOptions(
            mode="exhaustive")), 20000))
        for cand in space[::max(1, len(space) // 120)]:  # spread over the whole space
            try:
                alone = prepare(spec, cand, config)  # a fresh evaluator: empty memos
            except Rejected as e:
                with pytest.raises(Rejected) as again:
                    shared.pending(cand)
                assert str(again.value) == str(e)
                continue
            mine = shared.pending(cand)
            assert (mine.lower_bound, mine.spm_peak, mine.tiles) == \
                (alone.lower_bound, alone.spm_peak, alone.tiles), cand
            assert mine.plan == alone.plan, cand
            compared += 1
    assert compared > 0


@pytest.mark.parametrize("name", sorted(CHAINS))
def test_sweeps_sharing_a_memo_give_the_windows_of_sweeps_alone(name):
    spec = _spec(name)
    memo = SweepMemo()
    granules = anchor_granules(spec, SMALL)
    space = exhaustive_candidates(spec, SMALL, SearchOptions(mode="exhaustive"))
    swept = 0
    for cand in islice(space, 0, 200, 5):
        for tile in tiles(spec, cand, SMALL):
            if tile.anchor.is_empty():
                continue
            for anchor, red in islice(step_windows(tile, cand, granules), 8):
                reduce = None if red is None else {cand.reduce.node: red}
                assert propagate(spec, anchor, reduce, memo) == propagate(spec, anchor, reduce)
                swept += 1
    assert swept > 0 and memo.back  # the memo was used


def test_allocate_with_the_callers_intervals_and_bound_places_alike():
    rng = np.random.default_rng(0)
    for _ in range(200):
        buffers = []
        for b in range(int(rng.integers(1, 12))):
            live = []
            for _ in range(int(rng.integers(1, 200 if b % 3 == 0 else 4))):
                start = int(rng.integers(0, 400))
                live.append((start, start + int(rng.integers(0, 30))))
            buffers.append(Buffer(f"b{b}", int(rng.integers(1, 5000)), tuple(live)))
        align = int(rng.choice([1, 64, 128]))
        capacity = int(rng.integers(1000, 40000))
        spans = live_intervals(buffers)
        live = max_live(buffers, align, spans)
        assert live == max_live(buffers, align)
        try:
            plain = allocate(buffers, align, capacity)
        except OutOfMemory as e:
            with pytest.raises(OutOfMemory) as again:
                allocate(buffers, align, capacity, spans=spans, live=live)
            assert (str(again.value), again.value.peak) == (str(e), e.peak)
            continue
        assert allocate(buffers, align, capacity, spans=spans, live=live) == plain
