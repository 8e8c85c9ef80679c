"""Sharding interface (seed 003, ShardingInterface): how an op's work is cut into slices.

Sharding spreads an op's work over tiles (space); split cuts each tile's share into pieces
processed one after another (time). The slicing search (group-cost) asks every op of a
group the questions below, on plain frozen data, so their answers can be cached.

**The loop space.** An op iterates over its *loop dims* (`loop_space()`): first one dim per
dim of its result (the "output" dims; for Split, whose results are pieces of one tensor,
the dims of its input), then one dim per reduction the op performs (Gemm's K, Conv's input
channels, Reduce's reduced axes). A `LoopDim` says whether the dim may be cut at all
(`shard` over tiles, `split` in time; Softmax's axis and LayerNorm's normalised dims may
not be cut at all: no two-pass form exists),
on which multiples it may be cut (`granule`; a grouped Conv's output channels, the dims a
Reshape merges), and, for a reduction dim, how partial results over pieces of it combine
(`reduce`: sum, max, min or prod).

A *slice* is a box of the loop space, a `Window` (start, stop per loop dim). For it:

- `result_windows(loops)`: the window of each result the slice produces (None: it
  produces nothing of that result);
- `back_window(loops)`: the window of each operand the slice reads, halos included
  (Conv/Pool/Resize), clamped to the operand (what lies outside an operand, e.g. a
  Conv's zero padding, is the kernel's business: it knows the slice's place in the whole,
  as the seed's L_SHAPE does);
- `compute_slice(loops, operands)`: given exactly those operand windows, the result
  windows. For a slice that covers only part of a reduction dim these are *partial*
  results: combining the partials of all pieces with the dim's `Combine` gives the
  result (the psum of seed 003, and a final reduce across tiles).

This is the contract every later stage relies on, and it is tested for every op
(`tests/unit/sharding/test_slice_equivalence.py`): computing every slice of a partition
of the loop space from the `back_window` windows of the full operands, and combining
partials, gives the full `compute()` result.

The seed's methods are derived from these: `tile_sharding_split` (each operand's sharding
and split factors from the loop dims', through `operand_axes()`: which loop dim each
operand dim follows) and `temporal_slice_shape` (the largest window of each operand over
the positions of a slice of a given shape: what SPM must hold).

Ops that cannot express a window of a result in terms of windows of their operands read
the whole operand along that dim (`operand_axes` entry None) and cut the result from the
whole: always correct, only larger. Ops whose dims cannot be sharded or split say so in
their `LoopDim`s; `tile_sharding_split` then raises `NotShardable` naming the dim.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import reduce as _fold
from operator import le, sub

import numpy as np
from xdsl.utils.str_enum import StrEnum

from tx8c.errors import Tx8Error
from tx8c.interfaces.oplib import Engine, Transfer, Work, ct_work, family_bytes
from tx8c.ir_utils import shape_of

# --------------------------------------------------------------------------------------
# Plain data
# --------------------------------------------------------------------------------------


class cached_field:
    """A property computed once per object and kept in its `__dict__` (works on frozen
    dataclasses, whose `__setattr__` refuses: the descriptor writes the dict itself).

    `functools.cached_property` does the same but takes a lock on every first access in
    Python 3.11; the slicing search creates hundreds of thousands of Windows and asks
    each its shape once, and the lock was a tenth of the search's time. These objects are
    never shared between threads, so no lock is needed. Being a non-data descriptor, the
    stored value shadows it on every later access."""

    def __init__(self, compute):
        self.compute = compute
        self.name = compute.__name__
        self.__doc__ = compute.__doc__

    def __set_name__(self, owner, name: str) -> None:
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        value = obj.__dict__[self.name] = self.compute(obj)
        return value


@dataclass(frozen=True)
class Window:
    """A box of an index space: [start[d], stop[d]) along every dim d."""

    start: tuple[int, ...]
    stop: tuple[int, ...]

    # The methods below run millions of times in the slicing search and the lowering:
    # they loop in C (map, zip) rather than in generator expressions.
    @staticmethod
    def whole(shape: Sequence[int]) -> Window:
        return Window((0,) * len(shape), tuple(map(int, shape)))

    @staticmethod
    def of(pairs: Sequence[tuple[int, int]]) -> Window:
        if not pairs:
            return Window((), ())
        starts, stops = zip(*pairs, strict=True)
        return Window(starts, stops)

    @property
    def rank(self) -> int:
        return len(self.start)

    @cached_field
    def shape(self) -> tuple[int, ...]:
        _same_rank(self.start, self.stop)
        return tuple(map(sub, self.stop, self.start))

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def is_empty(self) -> bool:
        _same_rank(self.start, self.stop)
        return any(map(le, self.stop, self.start))

    def dim(self, d: int) -> tuple[int, int]:
        return self.start[d], self.stop[d]

    def pairs(self) -> list[tuple[int, int]]:
        return list(zip(self.start, self.stop, strict=True))

    def slices(self) -> tuple[slice, ...]:
        """numpy index of this window (`array[window.slices()]`)."""
        return tuple(slice(a, b) for a, b in zip(self.start, self.stop, strict=True))

    def head(self, n: int) -> Window:
        """The first n dims."""
        return Window(self.start[:n], self.stop[:n])

    def tail(self, n: int) -> Window:
        """Dims n.. (the reduction dims of a loop window whose first n are output dims)."""
        return Window(self.start[n:], self.stop[n:])

    def replace(self, d: int, start: int, stop: int) -> Window:
        return Window(
            self.start[:d] + (start,) + self.start[d + 1:],
            self.stop[:d] + (stop,) + self.stop[d + 1:],
        )

    def shifted(self, offset: Sequence[int]) -> Window:
        """This window in coordinates whose origin is at `offset`."""
        return Window(
            tuple(a - o for a, o in zip(self.start, offset, strict=True)),
            tuple(b - o for b, o in zip(self.stop, offset, strict=True)),
        )

    def intersect(self, other: Window) -> Window:
        _same_rank(self.start, other.start)
        return Window(tuple(map(max, self.start, other.start)),
                      tuple(map(min, self.stop, other.stop)))

    def hull(self, other: Window) -> Window:
        """The smallest window holding both."""
        _same_rank(self.start, other.start)
        return Window(tuple(map(min, self.start, other.start)),
                      tuple(map(max, self.stop, other.stop)))

    def contains(self, other: Window) -> bool:
        _same_rank(self.start, other.start)
        return all(map(le, self.start, other.start)) and all(map(le, other.stop, self.stop))

    def __str__(self) -> str:
        return "[" + ", ".join(f"{a}:{b}" for a, b in self.pairs()) + "]"


def _same_rank(a: tuple, b: tuple) -> None:
    if len(a) != len(b):
        raise ValueError(f"windows of rank {len(a)} and {len(b)} do not match")


class Combine(StrEnum):
    """How partial results over pieces of a reduction dim combine (seed 003: psum)."""

    SUM = "sum"
    MAX = "max"
    MIN = "min"
    PROD = "prod"

    def apply(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        fn = {"sum": np.add, "max": np.maximum, "min": np.minimum, "prod": np.multiply}
        return fn[self.value](a, b).astype(a.dtype)


@dataclass(frozen=True)
class LoopDim:
    """One dim of an op's loop space (see the module docstring)."""

    size: int
    reduce: Combine | None = None
    """None for an output dim; for a reduction dim, how partials over its pieces combine."""
    shard: bool = True
    """The dim may be spread over tiles."""
    split: bool = True
    """The dim may be cut into pieces processed one after another."""
    granule: int = 1
    """Cuts fall on multiples of this (the last piece may be shorter)."""

    @staticmethod
    def whole(size: int, reduce: Combine | None = None) -> LoopDim:
        """A dim every slice covers whole (neither sharded nor split)."""
        return LoopDim(size, reduce, shard=False, split=False)

    @property
    def is_reduction(self) -> bool:
        return self.reduce is not None

    @property
    def cut(self) -> bool:
        """The dim may be cut at all (over tiles or in time)."""
        return self.shard or self.split


@dataclass(frozen=True)
class ShardingSplitParam:
    """Per-dim factors (seed 003, ShardingSplitParam): `sharding[d]` tiles share dim d,
    each tile's part is cut into `split[d]` pieces processed one after another.

    For an op (the argument of `tile_sharding_split`) the dims are its loop dims: output
    dims, then reduction dims (the seed's reduceSplit); for an operand (its answer), the
    operand's dims.
    """

    sharding: tuple[int, ...]
    split: tuple[int, ...]

    def __post_init__(self) -> None:
        if len(self.sharding) != len(self.split):
            raise ValueError(f"sharding {self.sharding} and split {self.split} differ in rank")
        if any(f < 1 for f in self.sharding + self.split):
            raise ValueError(f"factors must be >= 1: sharding {self.sharding}, split {self.split}")

    @staticmethod
    def none(rank: int) -> ShardingSplitParam:
        return ShardingSplitParam((1,) * rank, (1,) * rank)

    @property
    def pieces(self) -> tuple[int, ...]:
        """Pieces per dim over all tiles and steps."""
        return tuple(s * t for s, t in zip(self.sharding, self.split, strict=True))

    @property
    def tiles(self) -> int:
        return _fold(lambda a, b: a * b, self.sharding, 1)

    @property
    def steps(self) -> int:
        return _fold(lambda a, b: a * b, self.split, 1)


@dataclass(frozen=True)
class SliceParam:
    """The shape of one slice (seed 003, SliceParam): per loop dim for an op, per dim for
    an operand (`temporal_slice_shape`)."""

    shape: tuple[int, ...]


class NotShardable(Tx8Error):
    """A sharding/split asks an op to cut a loop dim it cannot cut."""


# --------------------------------------------------------------------------------------
# Cutting a dim into pieces
# --------------------------------------------------------------------------------------


def piece_bounds(size: int, pieces: int, granule: int = 1) -> list[tuple[int, int]]:
    """`size` cut into at most `pieces` near-equal parts on multiples of `granule`.

    Parts are ceil(units / pieces) granules long except the last; fewer than `pieces`
    parts come back when there are not enough granules (a dim of 3 cut in 4 gives 3).
    """
    units = -(-size // granule)
    if units <= 0:
        return [(0, size)]
    per = -(-units // max(1, pieces))
    bounds = []
    for first in range(0, units, per):
        bounds.append((first * granule, min(size, (first + per) * granule)))
    return bounds or [(0, size)]


# --------------------------------------------------------------------------------------
# An op's slicing knowledge as plain data
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Slicer:
    """What the slicing search needs to know of one op, as frozen plain data.

    `op.slicer()` builds it once from the op (its shapes, attributes, element type, the
    layout family its kernel works in); from then on the search asks it, never the xDSL
    op: it is hashable (a cache key for templates) and cheap to query.

    Default behaviour (element-wise ops): the loop space is the first result's shape, every
    dim cut freely; operand dims follow the result dims they line up with (`axes`, numpy
    broadcasting); a slice costs one simple CT pass per element. Op families subclass it
    (in the op's own module) with what differs and document it there.
    """

    name: str
    loops: tuple[LoopDim, ...]
    operands: tuple[tuple[int, ...], ...]
    """The operand shapes."""
    results: tuple[tuple[int, ...], ...]
    """The result shapes."""
    axes: tuple[tuple[int | None, ...], ...]
    """For each operand, for each of its dims, the loop dim it follows (its window along
    that dim is the loop window's), or None (read whole along that dim)."""
    dtype: str
    """The element type the kernel computes in (IR name)."""
    aligned: bool
    """The kernel works in the channel-aligned family (Cx/NCx) rather than compact."""
    result_dtype: str
    """The first result's element type (IR name)."""

    # -- the loop space ---------------------------------------------------------------------
    @cached_field
    def loop_shape(self) -> tuple[int, ...]:
        return tuple(d.size for d in self.loops)

    @cached_field
    def num_outputs(self) -> int:
        """How many leading loop dims are output dims (the rest are reductions)."""
        return sum(1 for d in self.loops if not d.is_reduction)

    @cached_field
    def combine(self) -> Combine | None:
        """How partial results over reduction pieces combine (None: no reduction)."""
        return next((d.reduce for d in self.loops if d.is_reduction), None)

    # -- windows ----------------------------------------------------------------------------
    def result_windows(self, loops: Window) -> tuple[Window | None, ...]:
        """The window of each result that a slice `loops` produces (None: none of it)."""
        return (loops.head(self.num_outputs),)

    def back_window(self, loops: Window) -> tuple[Window, ...]:
        """The window of each operand a slice `loops` reads (halos included)."""
        return tuple(
            follow_axes(loops, axes, shape)
            for shape, axes in zip(self.operands, self.axes, strict=True)
        )

    def loops_for(self, results: Sequence[Window | None]) -> Window:
        """The output part of the smallest slice that produces the result windows
        `results` (None: that result is not needed); the inverse of `result_windows`,
        used to propagate windows backwards through a chain of ops."""
        return results[0] if results[0] is not None else Window.whole(self.results[0])

    # -- the seed's methods ------------------------------------------------------------------
    def tile_sharding_split(self, param: ShardingSplitParam) -> tuple[ShardingSplitParam, ...]:
        """Each operand's sharding/split for the loop dims' `param` (seed 003).

        Raises `NotShardable` when `param` cuts a dim the op cannot cut that way.
        """
        if len(param.sharding) != len(self.loops):
            raise ValueError(
                f"{self.name}: a sharding of {len(param.sharding)} dims for a loop space of "
                f"{len(self.loops)} ({list(self.loop_shape)})"
            )
        for d, dim in enumerate(self.loops):
            for kind, factor, allowed in (
                ("shard", param.sharding[d], dim.shard), ("split", param.split[d], dim.split)
            ):
                if factor > 1 and not allowed:
                    raise NotShardable(
                        f"'{self.name}' cannot {kind} loop dim {d} (size {dim.size})"
                        + ("" if dim.cut else ": it needs the whole dim in every slice")
                    )
        return tuple(
            ShardingSplitParam(
                tuple(1 if a is None else param.sharding[a] for a in axes),
                tuple(1 if a is None else param.split[a] for a in axes),
            )
            for axes in self.axes
        )

    def temporal_slice_shape(self, param: SliceParam) -> tuple[SliceParam, ...]:
        """The largest window of each operand read by a slice of shape `param.shape`
        (halos included), over the slice's first, middle and last positions."""
        largest = [[0] * len(shape) for shape in self.operands]
        for loops in _sample_positions(self.loop_shape, param.shape):
            for i, window in enumerate(self.back_window(loops)):
                largest[i] = [max(a, b) for a, b in zip(largest[i], window.shape, strict=True)]
        return tuple(SliceParam(tuple(s)) for s in largest)

    # -- cost (seed 003: getImmSpSize, getOpClockCycle) ---------------------------------------
    def work(self, shape: tuple[int, ...]) -> Work:
        """The work of one slice of `shape` (loop dims) on the op's engine. Default: one
        simple CT pass per element."""
        return ct_work(self.dtype, shape, arith=1)

    def imm_bytes(self, shape: tuple[int, ...], config) -> int:
        """Scratch SPM bytes the kernel needs for a slice of `shape`. Default: none."""
        return 0

    def scratch(self, shape, dtype: str, config) -> int:
        """Stored bytes of a scratch tensor of `shape` in the kernel's layout family."""
        return family_bytes(shape, dtype, self.aligned, config)

    def transfer(self, shape, ddr: bool = True) -> Work:
        """An LSU transfer of a slice of `shape` of the first result, in the kernel's
        layout family (`ddr`: to or from DDR, else inside SPM)."""
        from tx8c.dialect.layout import mem_layout_for

        dtype = self.result_dtype
        layout = str(mem_layout_for(tuple(shape), self.aligned).value)
        return Work(Engine.LSU, dtype, transfers=(Transfer(tuple(shape), dtype, layout, ddr),))


def slicer_fields(op, loops=None, axes=None) -> dict:
    """The fields every Slicer takes, read from `op`: its name, shapes, element types and
    kernel family; `loops` default to the first result's dims, `axes` to numpy
    broadcasting against the output dims."""
    from tx8c.dialect.layout import is_aligned
    from tx8c.dialect.types import short_name

    operands = tuple(shape_of(v) for v in op.operands)
    results = tuple(shape_of(r) for r in op.results)
    if loops is None:
        loops = tuple(LoopDim(int(d)) for d in results[0])
    outputs = tuple(d.size for d in loops if not d.is_reduction)
    if axes is None:
        axes = tuple(broadcast_axes(shape, outputs) for shape in operands)
    values = list(op.operands) or list(op.results)
    dev = op.attributes.get("dev_info")
    return dict(
        name=op.name,
        loops=tuple(loops),
        operands=operands,
        results=results,
        axes=tuple(tuple(a) for a in axes),
        dtype=short_name(values[0].type.get_element_type()),
        aligned=dev is not None and is_aligned(dev.get("mem_layout")),
        result_dtype=short_name(op.results[0].type.get_element_type()) if op.results else "",
    )


# --------------------------------------------------------------------------------------
# The interface
# --------------------------------------------------------------------------------------


class ShardingInterface:
    """The op side of the Sharding interface: `slicer()` builds the op's `Slicer` (its
    knowledge as plain data; families override it) and the seed's methods ask it;
    `compute_slice` (numerics) stays on the op."""

    def slicer(self) -> Slicer:
        return Slicer(**slicer_fields(self))

    def loop_space(self) -> tuple[LoopDim, ...]:
        return self.slicer().loops

    def num_output_loops(self) -> int:
        return self.slicer().num_outputs

    def loop_shape(self) -> tuple[int, ...]:
        return self.slicer().loop_shape

    def operand_axes(self) -> tuple[tuple[int | None, ...], ...]:
        return self.slicer().axes

    def result_windows(self, loops: Window) -> tuple[Window | None, ...]:
        return self.slicer().result_windows(loops)

    def back_window(self, loops: Window) -> tuple[Window, ...]:
        return self.slicer().back_window(loops)

    def tile_sharding_split(self, param: ShardingSplitParam) -> tuple[ShardingSplitParam, ...]:
        return self.slicer().tile_sharding_split(param)

    def temporal_slice_shape(self, param: SliceParam) -> tuple[SliceParam, ...]:
        return self.slicer().temporal_slice_shape(param)

    def compute_slice(self, loops: Window, operands: Sequence[np.ndarray]) -> list[np.ndarray]:
        """The result windows of slice `loops` from the operand windows `back_window`
        gives (partials when the slice covers part of a reduction dim). Default: the
        op's compute on the windows."""
        return list(self.compute(*operands))


# --------------------------------------------------------------------------------------
# Helpers the op families state their rules with
# --------------------------------------------------------------------------------------


def broadcast_axes(shape: Sequence[int], out: Sequence[int]) -> tuple[int | None, ...]:
    """numpy broadcasting: operand dim i lines up with output dim i + len(out) - len(shape);
    a dim of size 1 against a larger output dim is read whole (None)."""
    offset = len(out) - len(shape)
    return tuple(
        None if (d == 1 and out[i + offset] != 1) else i + offset for i, d in enumerate(shape)
    )


def follow_axes(loops: Window, axes: Sequence[int | None], shape: Sequence[int]) -> Window:
    """An operand's window: the loop window along the dims that follow a loop dim, the
    whole dim elsewhere."""
    _same_rank(axes, shape)
    start, stop = loops.start, loops.stop
    return Window(tuple(0 if a is None else start[a] for a in axes),
                  tuple(size if a is None else stop[a] for a, size in zip(axes, shape)))


def cut_to(array: np.ndarray, wanted: Window, computed: Window) -> np.ndarray:
    """The part `wanted` of an array that holds the window `computed` of a result (for
    ops that compute more than a slice's window, e.g. from an operand read whole)."""
    return np.ascontiguousarray(array[wanted.shifted(computed.start).slices()])


def compute_embedded(op, loops: Window, operands: Sequence[np.ndarray]) -> list[np.ndarray]:
    """A slice computed by placing each operand window at its place in a zero array of
    the whole operand, computing the whole op and cutting the slice's result windows.

    Correct for any op whose `back_window` is right (the result windows depend only on
    the operand windows); used where a windowed kernel would repeat the op's whole
    geometry (Resize's coordinate maps) for no gain in the reference.
    """
    whole = []
    for value, window, array in zip(op.operands, op.back_window(loops), operands, strict=True):
        full = np.zeros(shape_of(value), array.dtype)
        full[window.slices()] = array
        whole.append(full)
    results = op.compute(*whole)
    return [
        None if wanted is None else np.ascontiguousarray(np.asarray(r)[wanted.slices()])
        for r, wanted in zip(results, op.result_windows(loops), strict=True)
    ]


def _sample_positions(space: Sequence[int], shape: Sequence[int]) -> list[Window]:
    """Slices of `shape` at the first, a middle and the last position of `space`."""
    picks = []
    for which in (0, 1, 2):
        pairs = []
        for size, length in zip(space, shape, strict=True):
            length = max(1, min(length, size))
            last = size - length
            start = (0, (last // 2 // length) * length, last)[which]
            pairs.append((start, start + length))
        picks.append(Window.of(pairs))
    return picks
