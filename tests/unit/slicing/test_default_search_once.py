"""The default search estimates each plan once: its first phase visits each cut of the
anchor once (`search.distinct_shardings`), as the exhaustive space lists it, and the
evaluator prepares a deep pipeline that stages nothing otherwise as its shallow one."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

import numpy as np

from tests.unit.slicing.helpers import single, the_group
from tests.unit.slicing.test_exhaustive_space import offered_by_default_search, plan_of
from tests.unit.slicing.test_stem_cuts import stem, stem_group
from tx8c.dialect.ops.conv_gemm import GemmOp
from tx8c.slicing import evaluate as evaluate_module
from tx8c.slicing.evaluate import Evaluator, deep_stages_differ
from tx8c.slicing.group import group_spec
from tx8c.slicing.plan import Candidate
from tx8c.target.config import DEFAULT_CONFIG


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


def test_a_deep_form_that_stages_nothing_otherwise_is_prepared_once(monkeypatch):
    """A lone Gemm's deep pipeline is its shallow one (`deep_stages_differ`): the
    evaluator answers it with the shallow form's answer under its own name (the search's
    deep and polish phases offer both), and that answer is what preparing it gives."""
    rng = np.random.default_rng(2)
    a = rng.standard_normal((64, 256)).astype(np.float32)
    b = rng.standard_normal((256, 128)).astype(np.float32)
    spec = group_spec(the_group(single(GemmOp, [a, b])))
    assert not deep_stages_differ(spec)
    evaluator = Evaluator(spec, DEFAULT_CONFIG)
    prepared = []
    real_prepare = evaluate_module.prepare

    def prepare(spec, cand, *args):
        prepared.append(cand)
        return real_prepare(spec, cand, *args)

    monkeypatch.setattr(evaluate_module, "prepare", prepare)
    shallow = [Candidate((1, 4), split) for split in ((1, 1), (2, 1), (2, 2), (4, 2))]
    for cand in shallow:
        evaluator.pending(cand)
        deep = replace(cand, deep=True)
        assert evaluator(deep) == real_prepare(spec, deep, DEFAULT_CONFIG).plan
    assert prepared == shallow
