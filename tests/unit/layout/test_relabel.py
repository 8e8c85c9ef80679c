"""Relabels (tx8c.dialect.relabel, mem_layout.same_bytes): element maps compose like the
ops they stand for, and a map is a relabel in a family exactly when `pack` gives the same
bytes before and after it there; the issue's examples hold byte for byte."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import bf16, f16, f32, i1, i8, i32

from tx8c.dialect.layout import mem_layout_for
from tx8c.dialect.relabel import (
    RankView,
    ViewMap,
    families_agree,
    moved_bytes,
    relabel_families,
    split_relabel,
)
from tx8c.target.mem_layout import address_map, byte_size, pack, same_bytes

DTYPES = {f32: np.float32, f16: np.float16, bf16: ml_dtypes.bfloat16, i8: np.int8,
          i32: np.int32, i1: np.bool_}
HEAD_SPLIT = ViewMap.reshape((1, 128, 768), (1, 128, 12, 64)).then(
    ViewMap.transpose((1, 128, 12, 64), (0, 2, 1, 3))
)


def data(shape, dtype, seed: int = 0) -> np.ndarray:
    """Random values in the dtype's storage: a moved element shows unless it happens to
    equal the one it replaces, which `packed_families` rules out with several draws."""
    rng = np.random.default_rng(seed)
    if DTYPES[dtype] is np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    return rng.integers(-100, 100, shape).astype(DTYPES[dtype])


def packed_families(m: ViewMap, dtype) -> frozenset[bool]:
    """The oracle: the families in which pack(x) and pack(map(x)) are the same bytes,
    for every one of eight random x (values may repeat: one draw could hide a move)."""
    def same(x, aligned):
        return pack(x, mem_layout_for(m.source, aligned), dtype=dtype) == pack(
            m.apply(x), mem_layout_for(m.result, aligned), dtype=dtype)
    draws = [data(m.source, dtype, seed) for seed in range(8)]
    return frozenset(a for a in (True, False) if all(same(x, a) for x in draws))


# --------------------------------------------------------------------------------------
# the examples
# --------------------------------------------------------------------------------------


def test_rank_view_is_the_same_bytes_aligned_and_compact() -> None:
    view = ViewMap.reshape((1, 128, 768), (1, 1, 128, 768))
    assert relabel_families(view, f32) == {True, False}
    assert same_bytes((1, 128, 768), "Cx", (1, 1, 128, 768), "Cx", f32)


def test_rows_are_not_the_aligned_bytes() -> None:
    """[128, 768] is NCx (128 batches), not Cx's blocks of 64 channels over 128 rows."""
    rows = ViewMap.reshape((1, 128, 768), (128, 768))
    assert relabel_families(rows, f32) == {False}
    assert not same_bytes((1, 128, 768), "Cx", (128, 768), "NCx", f32)
    # ... yet NCx rows of 3072 bytes need no padding: aligned and compact agree there
    assert families_agree((128, 768), f32) and not families_agree((1, 128, 768), f32)


def test_head_split_and_merge_are_relabels_aligned_only() -> None:
    assert HEAD_SPLIT.result == (1, 12, 128, 64)
    assert relabel_families(HEAD_SPLIT, f32) == {True}
    merge = ViewMap.transpose((1, 12, 128, 64), (0, 2, 1, 3)).then(
        ViewMap.reshape((1, 128, 12, 64), (1, 128, 768)))
    assert relabel_families(merge, f32) == {True}
    assert packed_families(HEAD_SPLIT, f32) == {True}


def test_heads_of_32_channels_are_no_relabel() -> None:
    """Two heads share a block of 64: splitting them moves bytes in every family."""
    split = ViewMap.reshape((1, 128, 256), (1, 128, 8, 32)).then(
        ViewMap.transpose((1, 128, 8, 32), (0, 2, 1, 3)))
    assert relabel_families(split, f32) == set()
    assert moved_bytes(split, f32, True) == byte_size((1, 8, 128, 32), f32, "Cx")


def test_int8_blocks_are_128_channels() -> None:
    """int8 channel blocks are 128 wide: heads of 64 are no relabel there, of 128 are."""
    def split(heads, width):
        return ViewMap.reshape((1, 16, heads * width), (1, 16, heads, width)).then(
            ViewMap.transpose((1, 16, heads, width), (0, 2, 1, 3)))
    assert relabel_families(split(4, 64), i8) == set()
    assert relabel_families(split(2, 128), i8) == {True}


def test_key_splits_into_head_split_and_one_transpose() -> None:
    key = ViewMap.reshape((1, 128, 768), (1, 128, 12, 64)).then(
        ViewMap.transpose((1, 128, 12, 64), (0, 2, 3, 1)))
    relabel, perm = split_relabel(key, f32, True)
    assert relabel_families(relabel, f32) >= {True}
    assert relabel.result == (1, 12, 128, 64) and perm == (0, 1, 3, 2)
    x = data(key.source, f32)
    np.testing.assert_array_equal(np.transpose(relabel.apply(x), perm), key.apply(x))


def test_rank_view() -> None:
    view = RankView(3, (1,))
    assert view.shape((2, 5, 7)) == (2, 1, 5, 7)
    assert [view.axis(a) for a in (0, 1, 2, -1)] == [0, 2, 3, 3]
    assert view.keeps_trailing(2) and not view.keeps_trailing(3)


# --------------------------------------------------------------------------------------
# properties on random shapes, dtypes and chains
# --------------------------------------------------------------------------------------


@st.composite
def chains(draw):
    """A random shape and a chain of 1-4 reshapes / transposes of it."""
    shape = tuple(draw(st.lists(st.sampled_from([1, 2, 3, 4, 8, 64]), min_size=1,
                                max_size=4)))
    steps, current = [], shape
    for _ in range(draw(st.integers(1, 4))):
        if draw(st.booleans()) and len(current) > 1:
            perm = tuple(draw(st.permutations(range(len(current)))))
            steps.append(ViewMap.transpose(current, perm))
            current = tuple(current[p] for p in perm)
        else:
            size, dims = int(np.prod(current)), []
            while size > 1:
                d = draw(st.sampled_from([f for f in (2, 3, 4, 8, 16, 64, size)
                                          if size % f == 0]))
                dims.append(d)
                size //= d
            dims.insert(draw(st.integers(0, len(dims))), 1)
            steps.append(ViewMap.reshape(current, tuple(dims)))
            current = tuple(dims)
    return shape, steps


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=chains())
def test_composed_maps_compute_the_chain(case) -> None:
    shape, steps = case
    x = np.arange(int(np.prod(shape))).reshape(shape)
    composite, expected = steps[0], steps[0].apply(x)
    for step in steps[1:]:
        expected = step.apply(expected)
        composite = composite.then(step) if composite is not None else None
    if composite is not None:  # a chain may not compose (a reshape straddling dims)
        np.testing.assert_array_equal(composite.apply(x), expected)
        np.testing.assert_array_equal(composite.canonical().apply(x), expected)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=chains(), dtype=st.sampled_from(list(DTYPES)))
def test_relabel_families_are_where_pack_gives_the_same_bytes(case, dtype) -> None:
    shape, steps = case
    composite = steps[0]
    for step in steps[1:]:
        composite = composite.then(step) if composite is not None else None
    if composite is None:
        return
    assert relabel_families(composite, dtype) == packed_families(composite, dtype)
    for aligned in (True, False):
        moved = moved_bytes(composite, dtype, aligned)
        assert (moved == 0) == (aligned in packed_families(composite, dtype))


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("shape", [(1, 128, 768), (2, 3, 5), (7,), (1, 4, 33), (3, 1, 64)])
def test_rank_views_are_relabels_in_both_families(shape, dtype) -> None:
    view = RankView(len(shape), (1,) if len(shape) == 3 else (0,))
    m = ViewMap.reshape(shape, view.shape(shape))
    assert relabel_families(m, dtype) == packed_families(m, dtype) == {True, False}


LAYOUTS = ["Cx", "NCx", "NTensor", "Tensor"]


@settings(max_examples=300, deadline=None)
@given(shape=st.lists(st.integers(1, 70), min_size=1, max_size=4),
       layouts=st.tuples(st.sampled_from(LAYOUTS), st.sampled_from(LAYOUTS)),
       dtype=st.sampled_from(list(DTYPES)))
def test_same_bytes_of_one_shape_equals_comparing_every_address(shape, layouts, dtype) -> None:
    """same_bytes on one shape in two layouts (the O(C) check of two plans of one view)
    says what comparing every element's address says."""
    source, result = (address_map(tuple(shape), dtype, layout) for layout in layouts)
    expected = (byte_size(shape, dtype, layouts[0]) == byte_size(shape, dtype, layouts[1])
                and np.array_equal(source, result))
    assert same_bytes(shape, layouts[0], shape, layouts[1], dtype) == expected
