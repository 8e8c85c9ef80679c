"""`search.plan_exists` (spm-resident's check that a group can be planned below its
reserve) says whether the search finds a plan - on the test chains and the bundled
examples' groups, with the SPM left to the group shrinking from all of it to almost
nothing."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from examples.make_models import MODELS
from tests.unit.slicing.helpers import the_group
from tests.unit.slicing.test_branch_and_bound import _grouped_specs
from tests.unit.slicing.test_plans import CHAINS, SMALL
from tx8c.frontend.onnx.loader import prepare
from tx8c.slicing.group import group_spec
from tx8c.slicing.search import NoPlan, plan_exists, search


def _agrees(spec, config) -> bool:
    """plan_exists and the search agree on `spec`; whether a plan exists."""
    exists = plan_exists(spec, config)
    try:
        search(spec, config)
    except NoPlan:
        assert not exists
        return False
    assert exists
    return True


def _reserves(config) -> list[int]:
    spm = config.spm_bytes_per_tile
    return [0, spm // 2, spm * 3 // 4, spm * 7 // 8, spm - 4096]


@pytest.mark.parametrize("name", sorted(CHAINS))
def test_plan_exists_agrees_with_the_search_on_the_chains(name):
    spec = group_spec(the_group(CHAINS[name](np.random.default_rng(1))[0]))
    found = [_agrees(replace(spec, spm_reserve=r), SMALL) for r in _reserves(SMALL)]
    assert found[0]


def test_plan_exists_agrees_with_the_search_on_the_examples():
    found = []
    for name in sorted(MODELS):
        model, _ = prepare(MODELS[name](), None)
        for spec in _grouped_specs(model):
            found += [_agrees(replace(spec, spm_reserve=r), SMALL) for r in _reserves(SMALL)]
    assert any(found) and not all(found)  # both answers were checked
