"""Relabels: reorderings of a tensor's elements that move no bytes (issue 15).

A Reshape or Transpose gives its operand's elements in another order and shape. Whether
that moves bytes depends on the memory layouts: `[1,128,768]` and `[1,1,128,768]` are the
same bytes both compact and channel-aligned, and splitting 768 channels into 12 heads of
64 and moving the heads outside (`[1,128,768]` -> `[1,128,12,64]` -> `[1,12,128,64]`) is
the identity on the bytes of the aligned layout (Cx stores channels in blocks of 64),
though not on the compact ones. Such a movement is a relabel: the result is the operand's
bytes read under another shape. This module says which movements are relabels, deciding
it from the byte layouts themselves (`tx8c.target.mem_layout.same_bytes`, the address
functions), never from a list of patterns, so it holds for any shape and dtype.

- `ViewMap`: a reordering written as reshape -> transpose -> reshape; Reshape, Transpose
  and Relabel ops state theirs (`element_map()`), and chains of them compose (`then`).
- `relabel_families(map, dtype)`: the alignment families (aligned: Cx/NCx, compact:
  Tensor/NTensor, as `mem_layout_for` picks them for each shape) in which the map is the
  identity on bytes.
- `families_agree(shape, dtype)`: a value whose aligned and compact bytes are the same
  (e.g. `[128,768]` f32: NCx rows of 3072 bytes need no padding), so reading it in the
  other family needs no conversion.
- `RankView`: unit dims inserted into a shape (rank normalisation: `[1,128,768]` ->
  `[1,1,128,768]`), with the axis mapping ops use to follow it (`view_attributes`).

The layout stage works with the default `TX8Config` (as `stored_bytes` there does); the
functions take a config for other machines.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from xdsl.ir import Attribute

from tx8c.dialect.layout import mem_layout_for
from tx8c.target.config import DEFAULT_CONFIG, TX8Config
from tx8c.target.mem_layout import same_bytes, stored_bytes

Shape = tuple[int, ...]
Perm = tuple[int, ...]

ALIGNED_AND_COMPACT = (True, False)
"""The two alignment families, aligned first (True: Cx/NCx, False: Tensor/NTensor)."""


def _identity(rank: int) -> Perm:
    return tuple(range(rank))


# --------------------------------------------------------------------------------------
# Element maps
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ViewMap:
    """A reordering of a tensor's elements: the result of shape `result` is
    `x.reshape(view).transpose(perm).reshape(result)` for an `x` of shape `source`.

    `canonical()` writes the same map with the fewest view dims (no dims of size 1, no
    two neighbouring dims that stay neighbours in order); a map whose canonical `perm` is
    the identity keeps the row-major order of the elements (a reshape).
    """

    source: Shape
    view: Shape
    perm: Perm
    result: Shape

    @classmethod
    def reshape(cls, source: Sequence[int], result: Sequence[int]) -> ViewMap:
        source = tuple(source)
        return cls(source, source, _identity(len(source)), tuple(result))

    @classmethod
    def transpose(cls, source: Sequence[int], perm: Sequence[int]) -> ViewMap:
        source, perm = tuple(source), tuple(perm)
        return cls(source, source, perm, tuple(source[p] for p in perm))

    def apply(self, x: np.ndarray) -> np.ndarray:
        """The map on an array of shape `source`."""
        return np.transpose(np.reshape(x, self.view), self.perm).reshape(self.result)

    @property
    def keeps_order(self) -> bool:
        """The elements keep their row-major order (the map is a reshape)."""
        perm = self.canonical().perm
        return perm == _identity(len(perm))

    @property
    def is_identity(self) -> bool:
        return self.keeps_order and self.source == self.result

    def canonical(self) -> ViewMap:
        return _canonical(self)

    def then(self, other: ViewMap) -> ViewMap | None:
        """This map followed by `other` as one map, or None when the reshape between
        them splits and merges dims in a way no single reshape-transpose-reshape states."""
        return _compose(self, other)


@lru_cache(maxsize=4096)
def _canonical(m: ViewMap) -> ViewMap:
    kept = [i for i, d in enumerate(m.view) if d != 1]
    new_index = {old: new for new, old in enumerate(kept)}
    perm = [new_index[p] for p in m.perm if m.view[p] != 1]
    view = [m.view[i] for i in kept]
    runs: list[list[int]] = []  # view dims that stay neighbours, in order, in the result
    for p in perm:
        if runs and runs[-1][-1] + 1 == p:
            runs[-1].append(p)
        else:
            runs.append([p])
    by_start = sorted(range(len(runs)), key=lambda r: runs[r][0])
    rank_of = {r: i for i, r in enumerate(by_start)}
    merged = tuple(math.prod(view[i] for i in runs[r]) for r in by_start)
    return ViewMap(m.source, merged, tuple(rank_of[r] for r in range(len(runs))), m.result)


def _refine(a: Shape, b: Shape) -> tuple[list[int], list[list[int]], list[list[int]]] | None:
    """The common refinement of two shapes of one size without unit dims: the factors in
    row-major order and, per dim of `a` and of `b`, the indices of its factors; None when
    a dim of one straddles a boundary of the other without dividing it."""
    factors: list[int] = []
    of_a: list[list[int]] = [[] for _ in a]
    of_b: list[list[int]] = [[] for _ in b]
    i = j = 0
    left_a, left_b = (a[0] if a else 1), (b[0] if b else 1)
    while i < len(a):
        if left_a % left_b == 0:
            factor = left_b
        elif left_b % left_a == 0:
            factor = left_a
        else:
            return None
        of_a[i].append(len(factors))
        of_b[j].append(len(factors))
        factors.append(factor)
        left_a //= factor
        left_b //= factor
        if left_a == 1:
            i += 1
            left_a = a[i] if i < len(a) else 1
        if left_b == 1:
            j += 1
            left_b = b[j] if j < len(b) else 1
    return factors, of_a, of_b


def _compose(first: ViewMap, second: ViewMap) -> ViewMap | None:
    a, b = first.canonical(), second.canonical()
    if b.perm == _identity(len(b.perm)):
        return ViewMap(a.source, a.view, a.perm, b.result).canonical()
    if a.perm == _identity(len(a.perm)):
        return ViewMap(a.source, b.view, b.perm, b.result).canonical()
    transposed = tuple(a.view[p] for p in a.perm)
    refined = _refine(transposed, b.view)
    if refined is None:
        return None
    factors, of_transposed, of_view = refined
    view, position = _split_view(a, factors, of_transposed)
    perm = tuple(position[k] for q in b.perm for k in of_view[q])
    return ViewMap(a.source, view, perm, b.result).canonical()


def _split_view(
    m: ViewMap, factors: list[int], of_transposed: list[list[int]]
) -> tuple[Shape, list[int]]:
    """`m`'s view dims split into the factors of their transposed dims: the finer view
    and, per factor, its position among the finer view dims."""
    position = [0] * len(factors)
    view: list[int] = []
    inverse = {p: i for i, p in enumerate(m.perm)}
    for dim in range(len(m.view)):
        for k in of_transposed[inverse[dim]]:
            position[k] = len(view)
            view.append(factors[k])
    return tuple(view), position


# --------------------------------------------------------------------------------------
# When a map moves no bytes
# --------------------------------------------------------------------------------------


@lru_cache(maxsize=4096)
def _identical_in(m: ViewMap, dtype: Attribute, aligned: bool, config: TX8Config) -> bool:
    return same_bytes(  # a map that keeps the order is a reshape: checked without a map
        m.source, mem_layout_for(m.source, aligned), m.result, mem_layout_for(m.result, aligned),
        dtype, reorder=None if m.keeps_order else m.apply, config=config,
    )


def relabel_families(
    m: ViewMap, dtype: Attribute, config: TX8Config = DEFAULT_CONFIG
) -> frozenset[bool]:
    """The families (True: aligned, False: compact) in which `m` is the identity on the
    bytes: the result's layout puts every element where the source's layout holds it."""
    canonical = m.canonical()
    return frozenset(a for a in ALIGNED_AND_COMPACT if _identical_in(canonical, dtype, a, config))


def moved_bytes(
    m: ViewMap, dtype: Attribute, aligned: bool, config: TX8Config = DEFAULT_CONFIG
) -> int:
    """The bytes a Reshape/Transpose of map `m` writes when it runs in the family: 0 where
    it is the identity on the bytes (a relabel), else its result's size in that family."""
    if aligned in relabel_families(m, dtype, config):
        return 0
    return stored_bytes(m.result, dtype, mem_layout_for(m.result, aligned), config)


def families_agree(
    shape: Sequence[int], dtype: Attribute, config: TX8Config = DEFAULT_CONFIG
) -> bool:
    """A value of this shape has the same bytes aligned and compact: reading it in the
    other family needs no ChannelNorm."""
    return _families_agree(tuple(shape), dtype, config)


@lru_cache(maxsize=4096)
def _families_agree(shape: Shape, dtype: Attribute, config: TX8Config) -> bool:
    return same_bytes(shape, mem_layout_for(shape, True), shape, mem_layout_for(shape, False),
                      dtype, config=config)


def _fine(m: ViewMap) -> ViewMap | None:
    """`m` with its view dims split as far as the result's dims go, so that the last
    reshape only drops or adds unit dims; None when the result merges moved dims."""
    c = m.canonical()
    moved = tuple(d for d in m.result if d != 1)
    refined = _refine(tuple(c.view[p] for p in c.perm), moved)
    if refined is None:
        return None
    factors, of_transposed, of_result = refined
    if any(len(f) != 1 for f in of_result):
        return None
    view, position = _split_view(c, factors, of_transposed)
    return ViewMap(m.source, view, tuple(position), m.result)


def split_relabel(
    m: ViewMap, dtype: Attribute, family: bool, config: TX8Config = DEFAULT_CONFIG
) -> tuple[ViewMap, Perm] | None:
    """`m` as a relabel in `family` followed by one Transpose (its perm, on the result's
    rank), for a map that is not a relabel itself: the key of an attention head
    (`[1,128,768]` -> `[1,128,12,64]` -> `[1,12,64,128]`) becomes a free head split and
    one real per-head transpose. The relabel must move elements (else the split gains
    nothing); the first split in `itertools.permutations` order is taken. None when the
    map's last reshape merges moved dims or no split exists."""
    fine = _fine(m)
    if fine is None:
        return None
    slots = [i for i, d in enumerate(m.result) if d != 1]  # the result dims that move
    for residual in itertools.permutations(range(len(fine.perm))):
        inverse = {r: i for i, r in enumerate(residual)}
        first = tuple(fine.perm[inverse[k]] for k in range(len(fine.perm)))
        if first == _identity(len(first)) or residual == _identity(len(residual)):
            continue
        middle = list(m.result)
        for slot, p in zip(slots, first, strict=True):
            middle[slot] = fine.view[p]
        relabel = ViewMap(m.source, fine.view, first, tuple(middle))
        if family not in relabel_families(relabel, dtype, config):
            continue
        perm = list(range(len(m.result)))
        for i, slot in enumerate(slots):
            perm[slot] = slots[residual[i]]
        return relabel, tuple(perm)
    return None


# --------------------------------------------------------------------------------------
# Windows through a map (what the slicing search asks of a Relabel)
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MapWindows:
    """Which result dims of a map a slice may cut, and what they read.

    `view`/`perm`: the map written with view dims that each lie inside one source dim
    (row-major over the source's dims); `cuts`: (result dim, source dim, inner) for each
    result dim that is the outermost factor of a source dim: a window [a, b) of it reads
    [a * inner, b * inner) of the source dim, the source dim's other factors being result
    dims a slice reads whole. Every other result dim is whole in every slice."""

    view: Shape
    perm: Perm
    cuts: tuple[tuple[int, int, int], ...]

    def local_view(self, source: Sequence[int], window: Sequence[int]) -> Shape:
        """`view` for a slice: the cut dims' factors the size of their windows."""
        sizes = list(self.view)
        outer = _outer_factor_positions(tuple(source), self.view)
        for result_dim, source_dim, _ in self.cuts:
            sizes[outer[source_dim]] = window[result_dim]
        return tuple(sizes)


def _outer_factor_positions(source: Shape, view: Shape) -> dict[int, int]:
    """Source dim -> the position in `view` of its outermost factor."""
    positions, k = {}, 0
    for dim, size in enumerate(source):
        if size == 1:
            continue
        positions[dim] = k
        product = 1
        while product < size:
            product *= view[k]
            k += 1
    return positions


def map_windows(m: ViewMap) -> MapWindows | None:
    """The windows of `m` (see MapWindows); None when no view of `m` has its dims inside
    single source dims (then a slice reads and writes everything)."""
    fine = _fine(m)
    source = tuple(d for d in m.source if d != 1)
    refined = None if fine is None else _refine(source, fine.view)
    if refined is None or any(len(f) != 1 for f in refined[2]):
        return None
    factors, of_source, of_view = refined
    source_dims = [i for i, d in enumerate(m.source) if d != 1]
    slots = [i for i, d in enumerate(m.result) if d != 1]
    cuts = []
    for slot, view_dim in zip(slots, fine.perm, strict=True):
        k = of_view[view_dim][0]
        owner = next(s for s, ks in enumerate(of_source) if k in ks)
        if of_source[owner][0] == k:  # the outermost factor of its source dim
            inner = math.prod(factors[j] for j in of_source[owner][1:])
            cuts.append((slot, source_dims[owner], inner))
    return MapWindows(fine.view, fine.perm, tuple(cuts))


# --------------------------------------------------------------------------------------
# Rank views
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RankView:
    """A shape of `rank` dims seen with dims of size 1 inserted at the positions `units`
    of the new shape (the old dims keep their order): rank normalisation's view."""

    rank: int
    units: tuple[int, ...]

    @property
    def new_rank(self) -> int:
        return self.rank + len(self.units)

    def shape(self, shape: Sequence[int]) -> Shape:
        """`shape` (of `rank` dims) seen through the view."""
        old = iter(shape)
        return tuple(1 if i in self.units else next(old) for i in range(self.new_rank))

    def axis(self, axis: int) -> int:
        """Where dim `axis` (negative counts from the end) of the old shape goes."""
        axis = axis % self.rank if self.rank else 0
        return [i for i in range(self.new_rank) if i not in self.units][axis]

    def keeps_trailing(self, count: int) -> bool:
        """The last `count` dims are the old last `count` dims (no unit inserted among
        them): an operand of `count` dims still broadcasts against the same dims."""
        return all(u < self.new_rank - count for u in self.units)
