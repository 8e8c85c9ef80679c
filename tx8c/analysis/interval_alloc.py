"""Placing buffers with known lifetimes in one memory: offsets, peak and a lower bound.

Shared by SPM allocation (per group, time in cycles of its schedule) and DDR allocation
(per model, time in group order). A `Buffer` has a size and a set of live intervals (a
multi-buffer copy that serves every other step is live in several disjoint intervals,
seed 003 SA_BufferMerge keeps them apart); it gets one offset for all of them. Two buffers
conflict when some of their intervals overlap in time; conflicting buffers must not
overlap in memory.

**Bound.** At any instant the buffers live then occupy disjoint memory, each at least
its size rounded up to the alignment (offsets are aligned, so no other buffer can start
inside the last unit it touches). So `max_live` - the largest total of aligned sizes live
at one instant - is a lower bound of any placement's peak (the highest aligned end).
Buffers with several live intervals can conflict pairwise without all being live at one
instant (three rotating copies, each meeting the other two at different times), so any
set of pairwise-conflicting buffers (a clique of the conflict graph) bounds the peak too:
`clique_bound` finds a heavy one by branch and bound (with a budget; any clique it has
found by then is a valid bound). The bound reported is the larger of the two.

**Placement.** Finding the optimal placement is NP-hard (dynamic storage allocation); the
seed places buffers first-fit in order of their start. Here several greedy orders are
tried - by start (the seed's), by size, by area (size x live time), by length of life -
each placing a buffer at the lowest aligned offset that clears every conflicting buffer
placed before it, and the lowest peak wins. A caller may ask for a local search on top
(`improve`: DDR allocation does, the SPM search of every candidate does not): a buffer
that reaches the peak moves to an earlier place in the best order, kept when the peak
does not grow - on BERT's DDR tensors the greedy orders stay 6 % above the bound and a
few dozen moves reach it. The result is reported beside the bound.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import chain
from operator import itemgetter

import numpy as np

from tx8c.errors import Tx8Error
from tx8c.interfaces.sharding import cached_field

_FIRST, _SECOND = itemgetter(0), itemgetter(1)


@dataclass(frozen=True)
class Buffer:
    """A buffer of `size` bytes live during the half-open time intervals `live`."""

    name: str
    size: int
    live: tuple[tuple[int, int], ...]

    # cached: the allocator's greedy orders sort by them (a buffer unrolled over many
    # steps has thousands of intervals; the slicing search places a few thousand
    # buffers per group, hence `cached_field` (no lock) and loops in C)
    @cached_field
    def start(self) -> int:
        return min(map(_FIRST, self.live))

    @cached_field
    def end(self) -> int:
        return max(map(_SECOND, self.live))

    @cached_field
    def live_time(self) -> int:
        return sum(b - a for a, b in self.live)


@dataclass(frozen=True)
class Allocation:
    """Offsets of the buffers (by name), the peak (highest aligned end), the bound, and
    the greedy order that gave the placement."""

    offsets: tuple[tuple[str, int], ...]
    peak: int
    lower_bound: int
    order: str

    def offset(self, name: str) -> int:
        return dict(self.offsets)[name]

    @property
    def ratio(self) -> float:
        return self.peak / self.lower_bound if self.lower_bound else 1.0


class OutOfMemory(Tx8Error):
    """No placement fits in the capacity; `peak` is the best placement's need."""

    def __init__(self, message: str, peak: int = 0):
        super().__init__(message)
        self.peak = peak


def aligned(size: int, align: int) -> int:
    return -(-size // align) * align


Intervals = tuple[np.ndarray, np.ndarray, np.ndarray]
"""The non-empty live intervals of some buffers (`live_intervals`): owner index, start,
end."""


def max_live(buffers: Sequence[Buffer], align: int = 1, spans: Intervals | None = None
             ) -> int:
    """The largest total of aligned sizes live at one instant (the lower bound): a sweep
    over the intervals' ends and starts, ends first at one instant (the intervals are
    half-open), done with numpy (a buffer unrolled over many steps has tens of
    thousands of intervals). `spans`: `live_intervals(buffers)` when the caller has
    them."""
    owner, starts, ends = live_intervals(buffers) if spans is None else spans
    if not len(owner):
        return 0
    sizes = np.array([aligned(b.size, align) for b in buffers], dtype=np.int64)[owner]
    times = np.concatenate([starts, ends])
    deltas = np.concatenate([sizes, -sizes])
    live = np.cumsum(deltas[np.lexsort((deltas, times))])
    return max(0, int(live.max()))


def conflicts(buffers: Sequence[Buffer], spans: Intervals | None = None) -> list[set[int]]:
    """For each buffer, the indices of the buffers live at the same time as it: two
    buffers conflict when one of their (half-open, non-empty) intervals overlap, that
    is when they cover a common elementary segment between consecutive interval
    boundaries. With many intervals (a buffer unrolled over many steps) numpy computes
    it: per buffer the segments it covers, then a product counts the segments each pair
    shares; with few, a sweep over the interval starts. `spans`: `live_intervals(buffers)`
    when the caller has them."""
    owner, starts, ends = live_intervals(buffers) if spans is None else spans
    if len(owner) < SWEEP_BELOW:
        return _swept_conflicts(buffers, owner, starts, ends)
    points = np.sort(np.concatenate([starts, ends]))  # repeated points: empty segments
    width = len(points) + 1
    cells = len(buffers) * width  # edges[owner, segment] counted flat (np.add.at's sums)
    edges = (np.bincount(owner * width + np.searchsorted(points, starts), minlength=cells)
             - np.bincount(owner * width + np.searchsorted(points, ends), minlength=cells)
             ).reshape(len(buffers), width)
    covered = (np.cumsum(edges, axis=1) > 0).astype(np.float32)
    shared = covered @ covered.T  # segments in common (exact: fewer than 2**24)
    shared[np.diag_indices_from(shared)] = 0
    return [set(np.flatnonzero(row).tolist()) for row in shared]


SWEEP_BELOW = 128  # intervals: below, numpy's per-call overhead exceeds a Python sweep


def _swept_conflicts(buffers: Sequence[Buffer], owner: np.ndarray, starts: np.ndarray,
                     ends: np.ndarray) -> list[set[int]]:
    """`conflicts` by a sweep over the interval starts (for few intervals)."""
    neighbours: list[set[int]] = [set() for _ in buffers]
    active: list[tuple[int, int]] = []  # (end, buffer) of intervals still open
    for start, end, i in sorted(zip(starts.tolist(), ends.tolist(), owner.tolist(),
                                    strict=True)):
        while active and active[0][0] <= start:
            heapq.heappop(active)
        for _, j in active:
            if j != i:
                neighbours[i].add(j)
                neighbours[j].add(i)
        heapq.heappush(active, (end, i))
    return neighbours


def live_intervals(buffers: Sequence[Buffer]) -> Intervals:
    """The non-empty live intervals of `buffers` as arrays: owner index, start, end."""
    counts = [len(b.live) for b in buffers]
    flat = np.fromiter(chain.from_iterable(chain.from_iterable(b.live for b in buffers)),
                       dtype=np.int64, count=2 * sum(counts))
    starts, ends = flat[0::2], flat[1::2]
    owner = np.repeat(np.arange(len(buffers), dtype=np.int64), counts)
    kept = ends > starts
    return owner[kept], starts[kept], ends[kept]


def clique_bound(buffers: Sequence[Buffer], neighbours: list[set[int]], align: int = 1,
                 budget: int = 20000) -> int:
    """The heaviest set of pairwise-conflicting buffers found (total aligned size) by a
    branch and bound over the conflict graph, heaviest buffers first, stopping after
    `budget` expansions."""
    weight = [aligned(b.size, align) for b in buffers]
    best = 0
    expansions = 0

    def expand(total: int, candidates: list[int]) -> None:
        nonlocal best, expansions
        best = max(best, total)
        for k, i in enumerate(candidates):
            expansions += 1
            rest = candidates[k:]
            if expansions > budget or total + sum(weight[j] for j in rest) <= best:
                return
            expand(total + weight[i], [j for j in candidates[k + 1:] if j in neighbours[i]])

    expand(0, sorted(range(len(buffers)), key=lambda i: -weight[i]))
    return best


ORDERS: dict[str, Callable[[Buffer], tuple]] = {
    "start": lambda b: (b.start, -b.size, b.name),
    "size": lambda b: (-b.size, b.start, b.name),
    "area": lambda b: (-b.size * b.live_time, b.start, b.name),
    "life": lambda b: (-(b.end - b.start), -b.size, b.name),
}


def place(buffers: Sequence[Buffer], order: Sequence[int], neighbours: list[set[int]],
          align: int) -> tuple[list[int], int]:
    """Greedy placement in `order`: each buffer at the lowest aligned offset clear of the
    conflicting buffers already placed. Returns (offsets, peak)."""
    offsets = [-1] * len(buffers)
    peak = 0
    for i in order:
        size = aligned(buffers[i].size, align)
        offsets[i] = _lowest_offset(buffers, offsets, neighbours[i], size, align)
        peak = max(peak, offsets[i] + size)
    return offsets, peak


def place_within(buffers: Sequence[Buffer], order: Sequence[int], neighbours: list[set[int]],
                 align: int, capacity: int | Sequence[int]) -> list[int]:
    """Greedy placement in `order` into `capacity` bytes (one for all buffers, or one
    per buffer), leaving out what does not fit: each buffer at the lowest aligned offset
    clear of the conflicting buffers placed before it, or -1 when that offset would end
    past its capacity (the buffer is not placed, and later buffers may take the room it
    would have needed)."""
    offsets = [-1] * len(buffers)
    limits = [capacity] * len(buffers) if isinstance(capacity, int) else capacity
    for i in order:
        size = aligned(buffers[i].size, align)
        offset = _lowest_offset(buffers, offsets, neighbours[i], size, align)
        if offset + size <= limits[i]:
            offsets[i] = offset
    return offsets


def _lowest_offset(buffers: Sequence[Buffer], offsets: list[int], neighbours: set[int],
                   size: int, align: int) -> int:
    """The lowest aligned offset where `size` bytes clear the placed `neighbours`."""
    taken = sorted((offsets[j], offsets[j] + aligned(buffers[j].size, align))
                   for j in neighbours if offsets[j] >= 0)
    offset = 0
    for lo, hi in taken:
        if offset + size <= lo:
            break
        offset = max(offset, hi)
    return offset


def allocate(buffers: Sequence[Buffer], align: int = 1, capacity: int | None = None,
             orders: Sequence[str] = tuple(ORDERS), improve: int = 0,
             spans: Intervals | None = None, live: int | None = None) -> Allocation:
    """The best placement over the greedy `orders`, then up to `improve` moves of the
    local search (`improve_order`) from the best one; `OutOfMemory` when even the best
    exceeds `capacity` (the message gives the peak and the bound). `spans` and `live`:
    `live_intervals(buffers)` and `max_live(buffers, align)` when the caller has them
    (the slicing search computes both for every candidate before placing it)."""
    buffers = list(buffers)
    spans = live_intervals(buffers) if spans is None else spans
    neighbours = conflicts(buffers, spans)
    live = max_live(buffers, align, spans) if live is None else live
    bound = max(live, clique_bound(buffers, neighbours, align))
    best: tuple[int, list[int], str, list[int]] | None = None
    for name in orders:
        order = sorted(range(len(buffers)), key=lambda i: ORDERS[name](buffers[i]))
        offsets, peak = place(buffers, order, neighbours, align)
        if best is None or peak < best[0]:
            best = (peak, offsets, name, order)
        if peak == bound:  # cannot do better
            break
    if best is not None and improve and best[0] > bound:
        peak, offsets, order = improve_order(buffers, best[3], neighbours, align, bound,
                                             improve, best[:2])
        if peak < best[0]:
            best = (peak, offsets, f"{best[2]}+moves", order)
    peak, offsets, name = best[:3] if best else (0, [], "none")
    if capacity is not None and peak > capacity:
        raise OutOfMemory(
            f"the buffers need {peak} bytes (at least {bound} are live at once), "
            f"{capacity} are available", peak
        )
    return Allocation(
        tuple((b.name, o) for b, o in zip(buffers, offsets, strict=True)), peak, bound, name
    )


def improve_order(buffers: Sequence[Buffer], order: list[int], neighbours: list[set[int]],
                  align: int, bound: int, moves: int, start: tuple[int, list[int]]
                  ) -> tuple[int, list[int], list[int]]:
    """A local search over greedy orders: move one of the buffers that reach the peak
    to an earlier place in the order (it then settles lower, the ones it passes settle
    around it), keep the new order when its peak is no higher, stop at `bound` or after
    `moves` tries. Deterministic (a fixed seed): the same buffers give the same offsets.
    Returns (peak, offsets, order)."""
    rng = random.Random(0)
    peak, offsets = start
    for _ in range(moves):
        if peak <= bound:
            break
        top = [k for k, i in enumerate(order)
               if offsets[i] + aligned(buffers[i].size, align) == peak]
        k = rng.choice(top)
        to = rng.randrange(k + 1)
        tried = order[:to] + [order[k]] + order[to:k] + order[k + 1:]
        new_offsets, new_peak = place(buffers, tried, neighbours, align)
        if new_peak <= peak:
            peak, offsets, order = new_peak, new_offsets, tried
    return peak, offsets, order


def check_placement(buffers: Sequence[Buffer], allocation: Allocation, align: int = 1) -> None:
    """Raise AssertionError if two buffers live at the same time overlap in memory or an
    offset is not aligned (used by tests and by the plan checks)."""
    where = dict(allocation.offsets)
    neighbours = conflicts(buffers)
    for i, b in enumerate(buffers):
        lo = where[b.name]
        assert lo % align == 0, f"{b.name} at {lo} is not {align}-aligned"
        for j in neighbours[i]:
            other = buffers[j]
            olo = where[other.name]
            assert lo + b.size <= olo or olo + other.size <= lo, (
                f"{b.name} [{lo}, {lo + b.size}) and {other.name} [{olo}, "
                f"{olo + other.size}) overlap while both are live"
            )
