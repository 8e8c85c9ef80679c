"""The search space (seed 003: getShardings, getFactor, getNextSplit) and the interval
allocator shared by SPM and DDR allocation."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tx8c.analysis.interval_alloc import (
    Buffer,
    allocate,
    check_placement,
    conflicts,
    max_live,
    place,
)
from tx8c.interfaces.sharding import LoopDim
from tx8c.slicing.space import (
    halved_split,
    next_split,
    ranked_shardings,
    shardings,
    split_values,
)


def test_seed_worked_example_levels():
    """Seed 003: store [3, 4, 128, 4096]: [1,1,1,16], [1,1,2,8], [1,1,4,4] use 16 tiles;
    [1,8,1,2], [1,8,2,1] 8; [1,16,1,1] 4; [16,1,1,1] 2 (3 tiles used: 2^floor(log2 3))."""
    loops = [LoopDim(d) for d in (3, 4, 128, 4096)]
    levels = ranked_shardings(loops, 16, last_base=64)
    level_of = {s: i for i, level in enumerate(levels) for s in level}
    assert {(1, 1, 1, 16), (1, 1, 2, 8), (1, 1, 4, 4)} <= set(levels[0])
    assert {(1, 8, 1, 2), (1, 8, 2, 1)} <= set(levels[1])
    assert (1, 16, 1, 1) in levels[2]
    assert (16, 1, 1, 1) in levels[3]
    assert level_of[(1, 1, 1, 1)] == len(levels) - 1


def test_shardings_multiply_to_the_tile_count():
    found = shardings(3, 16)
    assert all(int(np.prod(s)) == 16 for s in found if s != (1, 1, 1))
    assert len(found) == 15 + 1 and (1, 1, 1) in found  # compositions of 2^4 in 3 parts


def test_a_dim_that_cannot_be_sharded_is_left_out():
    loops = [LoopDim(8, shard=False), LoopDim(64)]
    levels = ranked_shardings(loops, 4)
    assert all(s[0] == 1 for level in levels for s in level)


def test_next_split():
    """Splits that give smaller pieces: a dim of 10 goes 1 -> 2 (5) -> 3 (4) -> 4 (3) ->
    5 (2) -> 10 (1); on granules of 4 a dim of 10 has 3 units."""
    assert split_values(10) == [1, 2, 3, 4, 5, 10]
    assert split_values(10, granule=4) == [1, 2, 3]
    assert next_split(10, 10) is None


def _buffers(draw_sizes, draw_times):
    return [Buffer(f"b{i}", size, tuple(live)) for i, (size, live) in
            enumerate(zip(draw_sizes, draw_times, strict=True))]


def chain(size: int, granule: int = 1) -> list[int]:
    out = [1]
    while (nxt := halved_split(size, out[-1], granule)) is not None:
        out.append(nxt)
    return out


def test_doubling_a_split_halves_its_pieces():
    """Each doubling gives pieces at most half (rounded up) of the last: a dim of 28 goes
    through pieces of 28, 14, 7, 4, 2, 1 rows (the old `next_split(size, 2 * split - 1)`
    went 1, 2, 4, 10, 28 and never tried 7 or 14 pieces: ResNet-50's stride-2 conv
    ran 8 % slower for it); on a granule, in whole granules."""
    assert chain(28) == [1, 2, 4, 7, 14, 28]
    assert chain(100) == [1, 2, 4, 8, 15, 25, 50, 100]
    assert chain(768, 64) == [1, 2, 4, 6, 12]  # 12 blocks of 64
    assert chain(64, 64) == [1]
    for size in range(1, 200):
        values = chain(size)
        assert values == sorted(set(values)) and values[-1] == size
        pieces = [-(-size // s) for s in values]
        assert all(b <= -(-a // 2) for a, b in zip(pieces, pieces[1:], strict=False))


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.integers(1, 5000), st.lists(
    st.tuples(st.integers(0, 50), st.integers(1, 20)), min_size=1, max_size=3)),
    min_size=1, max_size=25))
def test_allocation_never_overlaps_live_buffers(items):
    buffers = []
    for i, (size, spans) in enumerate(items):
        live = sorted({(a, a + n) for a, n in spans})
        merged = []
        for a, b in live:
            if merged and a <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], b))
            else:
                merged.append((a, b))
        buffers.append(Buffer(f"b{i}", size, tuple(merged)))
    result = allocate(buffers, align=256)
    check_placement(buffers, result, align=256)
    assert result.peak >= result.lower_bound >= max_live(buffers, 256)
    improved = allocate(buffers, align=256, improve=20)
    check_placement(buffers, improved, align=256)
    assert result.lower_bound <= improved.peak <= result.peak
    for order in itertools.islice(itertools.permutations(range(len(buffers))), 50):
        _, peak = place(buffers, order, conflicts(buffers), 256)
        assert peak >= result.lower_bound  # the bound holds for every placement


def test_rotating_copies_conflict_pairwise_and_the_clique_bounds_them():
    """Three copies, each live with the other two but never all three at once: max-live
    counts two, any placement needs three."""
    a = Buffer("a", 1024, ((0, 10), (20, 30)))
    b = Buffer("b", 1024, ((5, 15),))
    c = Buffer("c", 1024, ((12, 25),))
    assert max_live([a, b, c]) == 2048
    result = allocate([a, b, c])
    assert result.lower_bound == result.peak == 3072


def test_disjoint_lifetimes_share_memory_and_the_bound_is_met():
    a = Buffer("a", 1000, ((0, 10),))
    b = Buffer("b", 1000, ((10, 20),))
    c = Buffer("c", 500, ((5, 15),))
    result = allocate([a, b, c], align=256)
    assert result.offset("a") == result.offset("b")
    assert result.peak == result.lower_bound == 1024 + 512


def test_moves_reach_the_bound_the_greedy_orders_miss():
    """Four buffers whose every greedy order (start, size, area, life) stacks 8 units,
    though at most 7 are live at once; moving the buffer at the peak earlier in the order
    finds a placement of 7 (DDR allocation asks for the moves: on BERT the greedy orders
    alone stayed 6 % above the bound)."""
    buffers = [Buffer("b0", 3, ((3, 6),)), Buffer("b1", 2, ((5, 9),)),
               Buffer("b2", 2, ((5, 8),)), Buffer("b3", 3, ((1, 5),))]
    greedy = allocate(buffers)
    assert (greedy.peak, greedy.lower_bound) == (8, 7)
    moved = allocate(buffers, improve=50)
    check_placement(buffers, moved)
    assert moved.peak == moved.lower_bound == 7 and moved.order.endswith("+moves")
    assert allocate(buffers, improve=50).offsets == moved.offsets  # deterministic
