"""The default search estimates each plan once: its first phase visits each cut of the
anchor once (`search.distinct_shardings`), as the exhaustive space lists it."""

from __future__ import annotations

from collections import defaultdict

from tests.unit.slicing.test_exhaustive_space import plan_of
from tests.unit.slicing.test_stem_cuts import stem, stem_group
from tx8c.slicing import search as search_module
from tx8c.target.config import DEFAULT_CONFIG


def offered_by_default_search(spec, monkeypatch) -> list:
    """The candidates the default search offers on `spec`, in order (the evaluator
    remembers a candidate offered again: only distinct ones are estimated)."""
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


def test_the_default_search_estimates_each_plan_of_the_stem_once(monkeypatch):
    """The stem's N (1) and C (one channel block) give one piece whatever their factor:
    the first phase visited (1, 2, 8, 1), (2, 1, 8, 1) and their other forms, and
    estimated each at its splits, the same plans under other names."""
    _, spec = stem_group(stem())
    candidates_of = defaultdict(set)
    for cand in offered_by_default_search(spec, monkeypatch):
        candidates_of[plan_of(spec, cand)].add(cand)
    repeated = {plan: names for plan, names in candidates_of.items() if len(names) > 1}
    assert candidates_of and not repeated
