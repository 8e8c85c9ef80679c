"""The exhaustive search's space (`search.exhaustive_candidates`), which certifies the
default search (bench/bench_slicing.py's quality table, on groups of at most 20 000
candidates): each plan once, and every candidate the default search offers in it."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from tests.unit.slicing.helpers import single, the_group
from tests.unit.slicing.test_stem_cuts import stem, stem_group
from tx8c.dialect.ops.conv_gemm import GemmOp
from tx8c.slicing import search as search_module
from tx8c.slicing.evaluate import deep_stages_differ, evaluate
from tx8c.slicing.group import group_spec
from tx8c.slicing.search import SearchOptions, exhaustive_candidates
from tx8c.slicing.steps import anchor_granules, step_windows, tiles
from tx8c.target.config import DEFAULT_CONFIG

EXHAUSTIVE = SearchOptions(mode="exhaustive")


def plan_of(spec, cand) -> tuple:
    """What a candidate runs: every tile's share, tile 0's steps (the largest share:
    the others' follow from it and the split), the reduction cut and the pipeline (a
    deep one only where it stages a node otherwise)."""
    shares = tiles(spec, cand, DEFAULT_CONFIG)
    granules = anchor_granules(spec, DEFAULT_CONFIG)
    return (tuple((t.anchor, t.reduce) for t in shares),
            tuple(step_windows(shares[0], cand, granules)),
            None if cand.reduce is None else cand.reduce.node, cand.pipelined,
            cand.deep and deep_stages_differ(spec))


def offered_by_default_search(spec, monkeypatch) -> list:
    """The candidates the default search offers on `spec`, in order (the evaluator
    remembers a candidate offered again: only distinct ones are prepared)."""
    offered = []
    real_offer = search_module._Best.offer

    def offer(self, spec, cand, config):
        offered.append(cand)
        return real_offer(self, spec, cand, config)

    monkeypatch.setattr(search_module._Best, "offer", offer)
    search_module._searched.cache_clear()
    search_module.search(spec, DEFAULT_CONFIG)
    search_module._searched.cache_clear()
    return offered


def test_the_exhaustive_space_counts_each_plan_once():
    """The stem's N (1) and C (one channel block) give one piece whatever their factor,
    so (1, 1, 8, 2) and (2, 1, 8, 1) cut it alike; the space listed both (ResNet-50's
    stem: 11 931 candidates, 3 855 plans)."""
    _, spec = stem_group(stem())
    space = list(exhaustive_candidates(spec, DEFAULT_CONFIG, EXHAUSTIVE))
    assert len({plan_of(spec, c) for c in space}) == len(space)


def test_the_exhaustive_space_has_every_candidate_the_default_search_offers(monkeypatch):
    """A Gemm of 4 rows: a sharding of 16 tiles over its rows keeps 4 busy, and the
    default search cuts the reduction over the 12 it leaves idle (`_reduce_candidates`:
    spare = 16 // busy tiles). The exhaustive space skipped every reduction cut over
    tiles on a sharding of 16 (by its factors, not its busy tiles)."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 2048)).astype(np.float32)
    b = rng.standard_normal((2048, 64)).astype(np.float32)
    spec = group_spec(the_group(single(GemmOp, [a, b])))
    offered = offered_by_default_search(spec, monkeypatch)
    space = {plan_of(spec, c) for c in exhaustive_candidates(spec, DEFAULT_CONFIG,
                                                             EXHAUSTIVE)}
    cut_over_idle_tiles = [c for c in offered if c.reduce is not None
                           and max(c.reduce.sharding) > 1 and max(c.sharding) > 1]
    assert cut_over_idle_tiles
    assert all(plan_of(spec, c) in space for c in offered)


def test_a_deep_pipeline_that_stages_nothing_otherwise_is_listed_once():
    """A lone Gemm's deep pipeline is its shallow one (no compute node reads another):
    the same stages, estimate and buffers, one plan, listed once; the stem (Conv on the
    NE, then Relu and Pool on the CT) keeps both."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal((64, 256)).astype(np.float32)
    b = rng.standard_normal((256, 128)).astype(np.float32)
    spec = group_spec(the_group(single(GemmOp, [a, b])))
    assert not deep_stages_differ(spec)
    space = list(exhaustive_candidates(spec, DEFAULT_CONFIG, EXHAUSTIVE))
    assert space and not any(c.deep for c in space)
    for cand in space[:12]:
        if cand.pipelined:
            deep = evaluate(spec, replace(cand, deep=True), DEFAULT_CONFIG)
            assert replace(deep, candidate=cand) == evaluate(spec, cand, DEFAULT_CONFIG)
    _, stem_spec = stem_group(stem())
    assert deep_stages_differ(stem_spec)
    assert any(c.deep for c in exhaustive_candidates(stem_spec, DEFAULT_CONFIG, EXHAUSTIVE))
