"""`conflicts` and `max_live` (numpy, and the sweep for few intervals) equal their
definitions written out pair by pair and instant by instant, on random buffers with
many intervals (the numpy path) and few (the sweep)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from tx8c.analysis.interval_alloc import SWEEP_BELOW, Buffer, aligned, conflicts, max_live


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[1] > a[0] and b[1] > b[0] and a[0] < b[1] and b[0] < a[1]


def conflicts_by_definition(buffers: list[Buffer]) -> list[set[int]]:
    """Buffers i != j conflict when a non-empty interval of each overlaps (half-open)."""
    return [{j for j, other in enumerate(buffers) if j != i
             and any(_overlap(x, y) for x in b.live for y in other.live)}
            for i, b in enumerate(buffers)]


def max_live_by_definition(buffers: list[Buffer], align: int) -> int:
    """The largest total of aligned sizes of the intervals holding some instant."""
    instants = {a for b in buffers for a, e in b.live if e > a}
    return max((sum(aligned(b.size, align) for b in buffers for a, e in b.live if a <= t < e)
                for t in instants), default=0)


def _buffers(max_intervals: int):
    interval = st.tuples(st.integers(0, 60), st.integers(0, 12)).map(
        lambda p: (p[0], p[0] + p[1]))  # some empty
    buffer = st.tuples(st.integers(1, 5000),
                       st.lists(interval, min_size=1, max_size=max_intervals))
    return st.lists(buffer, min_size=0, max_size=12).map(lambda bs: [
        Buffer(f"b{i}", size, tuple(live)) for i, (size, live) in enumerate(bs)])


@settings(max_examples=150, deadline=None)
@given(_buffers(4), st.sampled_from([1, 64, 512]))
def test_few_intervals_match_the_definitions(buffers, align):
    assert conflicts(buffers) == conflicts_by_definition(buffers)
    assert max_live(buffers, align) == max_live_by_definition(buffers, align)


@settings(max_examples=60, deadline=None)
@given(_buffers(40), st.sampled_from([1, 64, 512]))
def test_many_intervals_match_the_definitions(buffers, align):
    assert conflicts(buffers) == conflicts_by_definition(buffers)
    assert max_live(buffers, align) == max_live_by_definition(buffers, align)


def test_a_long_unrolled_schedule_matches_the_definitions():
    """Hundreds of intervals per buffer (the numpy path for certain), as a buffer
    unrolled over many steps has."""
    rng = random.Random(7)
    buffers = []
    for i in range(10):
        live, t = [], rng.randrange(5)
        for _ in range(60):
            live.append((t, t + rng.randrange(1, 6)))
            t = live[-1][1] + rng.randrange(0, 4)
        buffers.append(Buffer(f"b{i}", rng.randrange(1, 9000), tuple(live)))
    assert sum(len(b.live) for b in buffers) >= SWEEP_BELOW
    assert conflicts(buffers) == conflicts_by_definition(buffers)
    assert max_live(buffers, 64) == max_live_by_definition(buffers, 64)
