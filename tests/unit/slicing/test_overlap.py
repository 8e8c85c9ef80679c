"""The model's chained estimate (`tx8c.slicing.overlap`): each group's constant prefix
hidden in the previous group's run, never more than that run or the group itself."""

from __future__ import annotations

from tx8c.slicing.overlap import chained


def test_a_group_hides_its_lead_up_to_the_previous_group() -> None:
    # the first group hides nothing; the second its whole lead (30 < 100); the third
    # only as much as the second group lasts (20 of its 50)
    assert chained([(100, 30), (20, 10), (80, 50)]) == [100, 10, 60]


def test_nothing_is_hidden_without_a_lead() -> None:
    assert chained([(100, 0), (50, 0), (70, 0)]) == [100, 50, 70]


def test_a_share_never_goes_below_zero() -> None:
    assert chained([(100, 0), (20, 50)]) == [100, 0]
