"""The decision and the page layout of SPM-resident values (issue 11,
`tx8c.analysis.spm_resident`)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tx8c.analysis.interval_alloc import Buffer, conflicts, place_within
from tx8c.analysis.spm_resident import (
    Candidate,
    Residency,
    ResidencyError,
    check_options,
    choose,
    default_budget,
    group_reserve,
    lowered_cap,
    page_location,
    per_tile_bytes,
    transfer_cycles_saved,
)
from tx8c.pipeline import CompileOptions, pipeline_spec
from tx8c.target.config import DEFAULT_CONFIG, TX8Config


@settings(deadline=None)
@given(st.integers(1, 100_000), st.sampled_from([256, 1024, 4096]), st.sampled_from([1, 4, 16]))
def test_pages_give_every_byte_its_own_place_within_the_per_tile_bytes(size, page, tiles):
    tile, offset = page_location(np.arange(size), page, tiles)
    per_tile = per_tile_bytes(size, page, tiles)
    assert per_tile % page == 0 and per_tile * tiles >= size
    assert offset.min() >= 0 and offset.max() < per_tile
    assert tile.min() >= 0 and tile.max() < tiles
    assert np.unique(tile * per_tile + offset).size == size
    assert page_location(size - 1, page, tiles) == (int(tile[-1]), int(offset[-1]))


candidates = st.lists(
    st.tuples(st.integers(1, 300_000), st.integers(0, 8), st.integers(1, 4),
              st.integers(1, 3)), min_size=1, max_size=25)


@settings(max_examples=60, deadline=None)
@given(candidates, st.sampled_from([0, 4096, 65536, 262144]))
def test_chosen_values_fit_and_never_meet_in_the_region(found, budget):
    values = [Candidate(f"g{i}.0", size, (start, start + length), loads)
              for i, (size, start, length, loads) in enumerate(found)]
    epochs = max(c.live[1] for c in values)
    residency = choose(values, epochs, budget, 4096, DEFAULT_CONFIG)
    chosen = residency.values
    for v in chosen:
        assert v.region % 4096 == 0 and v.region + v.per_tile <= budget
        assert all(residency.reserve[e] >= v.region + v.per_tile for e in range(*v.live))
    for i, a in enumerate(chosen):
        for b in chosen[i + 1:]:
            if a.live[0] < b.live[1] and b.live[0] < a.live[1]:
                assert (a.region + a.per_tile <= b.region
                        or b.region + b.per_tile <= a.region)
    for e, reserve in enumerate(residency.reserve):
        live = [v.region + v.per_tile for v in chosen if v.live[0] <= e < v.live[1]]
        assert reserve == max(live, default=0)
    assert Residency.from_dict(residency.as_dict()) == residency


def test_a_value_too_large_for_the_budget_stays_in_ddr_and_a_smaller_one_takes_it():
    values = [Candidate("big", 16 * 8192, (0, 2), 1), Candidate("small", 16 * 4096, (0, 2), 1)]
    residency = choose(values, 2, 4096, 4096, DEFAULT_CONFIG)
    assert [v.name for v in residency.values] == ["small"]
    assert residency.reserve == (4096, 4096)
    assert residency.bytes_kept == 16 * 4096


def test_a_value_whose_windows_are_faster_through_ddr_stays_there():
    # a 4 KiB value: 256 bytes per tile, 64 + 21 cycles through DDR at 16 tiles' share,
    # 64 + 6 hops x 4 + 4 from the pages; at 64 KiB the NoC wins (392 vs 152)
    assert transfer_cycles_saved(4096, DEFAULT_CONFIG) == 85 - 92
    assert transfer_cycles_saved(65536, DEFAULT_CONFIG) == 392 - 152
    values = [Candidate("tiny", 4096, (0, 2), 3), Candidate("large", 65536, (0, 2), 1)]
    residency = choose(values, 2, 1 << 20, 4096, DEFAULT_CONFIG)
    assert [v.name for v in residency.values] == ["large"]


@settings(max_examples=60, deadline=None)
@given(candidates, st.sampled_from([0, 4096, 65536, 262144]))
def test_every_chosen_value_saves_cycles(found, budget):
    values = [Candidate(f"g{i}.0", size, (start, start + length), loads)
              for i, (size, start, length, loads) in enumerate(found)]
    residency = choose(values, max(c.live[1] for c in values), budget, 4096, DEFAULT_CONFIG)
    assert all(transfer_cycles_saved(v.size, DEFAULT_CONFIG) > 0 for v in residency.values)


def test_place_within_leaves_out_what_does_not_fit():
    buffers = [Buffer("a", 100, ((0, 2),)), Buffer("b", 100, ((1, 3),)),
               Buffer("c", 100, ((2, 4),))]
    assert place_within(buffers, [0, 1, 2], conflicts(buffers), 100, 200) == [0, 100, 0]
    assert place_within(buffers, [1, 0, 2], conflicts(buffers), 100, 100) == [-1, 0, -1]
    # one capacity per buffer: b may end at 100 at most (above a it would end at 200)
    assert place_within(buffers, [0, 1, 2], conflicts(buffers), 100, [200, 100, 200]
                        ) == [0, -1, 0]
    assert place_within(buffers, [1, 0, 2], conflicts(buffers), 100, [100, 100, 200]
                        ) == [-1, 0, 100]


@settings(max_examples=60, deadline=None)
@given(candidates, st.lists(st.sampled_from([0, 4096, 65536, 131072, 262144]),
                            min_size=12, max_size=12))
def test_chosen_values_keep_every_epoch_below_its_cap(found, caps):
    values = [Candidate(f"g{i}.0", size, (start, start + length), loads)
              for i, (size, start, length, loads) in enumerate(found)]
    epochs = max(c.live[1] for c in values)
    residency = choose(values, epochs, 262144, 4096, DEFAULT_CONFIG, caps[:epochs])
    assert all(r <= cap for r, cap in zip(residency.reserve, caps, strict=False))
    uncapped = choose(values, epochs, 262144, 4096, DEFAULT_CONFIG)
    if all(r <= cap for r, cap in zip(uncapped.reserve, caps, strict=False)):
        assert residency == uncapped  # caps that nothing reaches change nothing


def test_a_lowered_cap_is_the_reserve_level_below():
    budget = 1 << 20
    assert lowered_cap(1, budget) == 0
    assert lowered_cap(1 << 18, budget) == 0
    assert lowered_cap((1 << 18) + 1, budget) == 1 << 18
    assert lowered_cap(budget, budget) == 3 << 18
    odd = 1_000_001  # not a multiple of its step: the level below is the step's
    assert lowered_cap(odd, odd) == 4 * (odd // 4)
    assert all(lowered_cap(r, budget) < group_reserve(r, budget)
               for r in range(1, budget + 1, 4096))


@pytest.mark.parametrize("budget, page, message", [
    (-1, 4096, "budget must be between 0"),
    (DEFAULT_CONFIG.spm_bytes_per_tile, 4096, "budget must be between 0"),
    (4096, 0, "page must be a positive multiple of 256"),
    (4096, 1000, "page must be a positive multiple of 256"),
])
def test_bad_options_are_clear_errors(budget, page, message):
    with pytest.raises(ResidencyError, match=message):
        check_options(budget, page, DEFAULT_CONFIG)


def test_group_reserves_are_a_few_levels_never_below_the_epoch_reserve():
    budget = 1 << 20
    levels = {group_reserve(r, budget) for r in range(0, budget + 1, 4096)}
    assert levels == {0, 1 << 18, 1 << 19, 3 << 18, 1 << 20}
    assert all(r <= group_reserve(r, budget) <= budget for r in range(0, budget + 1, 4096))


def test_residency_is_on_by_default_with_a_third_of_the_spm():
    assert default_budget(DEFAULT_CONFIG) == 1 << 20
    small = TX8Config(spm_bytes_per_tile=64 * 1024)
    assert default_budget(small) == 20480  # whole pages, room left for the groups
    check_options(default_budget(small), 4096, small)
    assert "spm-resident," in pipeline_spec(CompileOptions())  # the pass's default
    assert "spm-resident{budget=4096}" in pipeline_spec(CompileOptions(spm_resident=4096))
    assert "spm-resident" not in pipeline_spec(CompileOptions(spm_resident=0))
