"""GroupedOrder: a group is accepted exactly when the graph of groups stays acyclic, and
the order it keeps stays topological with every group contiguous."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import contracted_is_acyclic
from tx8c.analysis.acyclic_groups import GroupedOrder


@st.composite
def dags_and_candidates(draw):
    n = draw(st.integers(2, 12))
    successors = [sorted(draw(st.sets(st.integers(i + 1, n - 1), max_size=3))) if i < n - 1
                  else [] for i in range(n)]
    candidates = draw(st.lists(st.sets(st.integers(0, n - 1), min_size=1, max_size=4),
                               max_size=8))
    return successors, candidates


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dags_and_candidates())
def test_accepts_exactly_the_groups_that_keep_the_contraction_acyclic(case) -> None:
    successors, candidates = case
    order = GroupedOrder(successors)
    accepted: list[set[int]] = []
    for candidate in candidates:
        if any(candidate & g for g in accepted):
            continue
        ok = order.add(sorted(candidate))
        assert ok == contracted_is_acyclic(successors, [*accepted, candidate])
        if ok:
            accepted.append(candidate)
        place = {node: k for k, node in enumerate(order.order)}
        assert all(place[i] < place[j] for i, s in enumerate(successors) for j in s)
        for group in accepted:
            spots = sorted(place[i] for i in group)
            assert spots == list(range(spots[0], spots[0] + len(spots)))


def test_the_two_cycles_of_the_module_docstring() -> None:
    # Conv(0) -> Relu(1) -> Add(2), Conv(0) -> Add(2): {Conv, Add} alone is a cycle
    assert not GroupedOrder([[1, 2], [2], []]).add([0, 2])
    # a1(0) -> a2(2), b1(1) -> b2(3), a1 -> b2, b1 -> a2: each fine, not both
    order = GroupedOrder([[2, 3], [2, 3], [], []])
    assert order.add([0, 2])
    assert not order.add([1, 3])
    with pytest.raises(ValueError, match="already in a group"):
        order.add([2, 3])
