"""What one LSU transfer can address (seed 003, "LSU": RDMA DDR -> SPM, WDMA SPM -> DDR).

A DMA copies a window of a tensor between two memories, each side in its own memory
layout (`tx8c.target.mem_layout`). When both sides use the same layout family the bytes
go across unchanged; when they do not (an aligned SPM tile written into a compact DDR
tensor, or the reverse) the transfer *is* the layout conversion: each element is read
once and written once, at the address each side's layout gives it.

Descriptor model (a decision; the seed names the LSU's instructions, not its descriptor
format). The LSU moves **runs**: stretches of elements, consecutive in the window's
row-major order, whose bytes are contiguous on both sides. One **descriptor** moves runs
of one length; their start addresses (a pair: source, destination) are placed by up to
`config.dma_loop_dims` nested loops, each a count with a byte stride per side. A
transfer is addressable when, for each run length, the starts of the runs of that length
form such a loop nest; it then takes one descriptor per run length. Runs of one length
from different places in a row (a window's partial first channel block and the padded
remainder, both three channels, say) interleave and form no one nest: they take one
descriptor per place (starting the row, ending it, both, neither).

`descriptors` decides it from the two address maps alone (`mem_layout.box_address_map`),
for any shape, window and pair of layouts: no list of shapes. For the layouts of
`mem_layout` the answer is yes with at most four run lengths (a window's partial first
channel block, its whole blocks, its partial last block, the padded remainder); the
check is what keeps a future layout (or a broken address function) from being fused into
a DMA the hardware could not issue.

`addressable` answers for a whole tensor from a probe window: every dim but the last
(channels) cut to its first `PROBE_ROWS` positions, the channels whole. Exact for the
probe; it stands for the whole tensor because every layout of `mem_layout` places an
element at n * batch_stride + f(hw, c) with f affine in hw for each c (the property
`mem_layout._same_view_addresses` rests on), so the runs and their loops repeat with the
same strides along the leading dims; the whole-tensor check costs seconds on a 25 MB
tensor (GPT-2's logits), the probe milliseconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tx8c.target.config import DEFAULT_CONFIG, TX8Config
from tx8c.target.mem_layout import LayoutMode, box_address_map, resolve_dtype

PROBE_ROWS = 4
"""Positions of each leading dim in `addressable`'s probe window: enough for a loop
along that dim to show three equal steps."""


@dataclass(frozen=True)
class Descriptor:
    """Runs of `run_bytes` contiguous bytes, the first at `src_base` / `dst_base` (byte
    offsets in each side's tensor), the others placed by nested loops (innermost
    first): `counts[i]` iterations of `src_strides[i]` / `dst_strides[i]` bytes."""

    run_bytes: int
    src_base: int
    dst_base: int
    counts: tuple[int, ...]
    src_strides: tuple[int, ...]
    dst_strides: tuple[int, ...]

    @property
    def runs(self) -> int:
        total = 1
        for c in self.counts:
            total *= c
        return total


def descriptors(
    shape: tuple[int, ...],
    dtype: Any,
    src_layout: LayoutMode | str,
    dst_layout: LayoutMode | str,
    window: tuple[tuple[int, int], ...] | None = None,
    config: TX8Config = DEFAULT_CONFIG,
) -> tuple[Descriptor, ...] | None:
    """The descriptors of a transfer of `window` ((start, stop) per dim; default the
    whole tensor) of a `shape` tensor from `src_layout` to `dst_layout` (both laid out
    over the whole `shape`), or None when a run length's starts need more than
    `config.dma_loop_dims` loops (or are no loop nest at all)."""
    pairs = window or tuple((0, d) for d in shape)
    start, stop = [a for a, _ in pairs], [b for _, b in pairs]
    itemsize = resolve_dtype(dtype).itemsize
    src = box_address_map(shape, dtype, src_layout, start, stop, config).ravel()
    dst = box_address_map(shape, dtype, dst_layout, start, stop, config).ravel()
    if src.size == 0:
        return ()
    begins, lengths = _runs(src, dst, itemsize)
    width = stop[-1] - start[-1]
    out = []
    for length in np.unique(lengths):
        at = begins[lengths == length]
        whole = _descriptor(src, dst, at, int(length), itemsize, config)
        if whole is not None:
            out.append(whole)
            continue
        for part in _by_place_in_row(at, int(length), width):
            desc = _descriptor(src, dst, part, int(length), itemsize, config)
            if desc is None:
                return None
            out.append(desc)
    return tuple(out)


def _descriptor(src: np.ndarray, dst: np.ndarray, at: np.ndarray, length: int,
                itemsize: int, config: TX8Config) -> Descriptor | None:
    """The one descriptor moving the runs of `length` elements that begin at window
    positions `at`, or None when their starts are no nest of at most
    `config.dma_loop_dims` loops."""
    starts = np.stack([src[at], dst[at]], axis=1)
    loops = _loop_nest(starts)
    if loops is None or len(loops) > config.dma_loop_dims:
        return None
    return Descriptor(length * itemsize, int(starts[0, 0]), int(starts[0, 1]),
                      tuple(c for c, _ in loops),
                      tuple(int(s[0]) for _, s in loops),
                      tuple(int(s[1]) for _, s in loops))


def _by_place_in_row(at: np.ndarray, length: int, width: int) -> list[np.ndarray]:
    """The runs `at` split by where they lie in a window row (the last dim): starting
    it, ending it, both or neither. Runs of one length can come from different places
    (a window's partial first channel block and the padded remainder block, say both
    three channels), whose starts interleave and form no single loop nest; each place
    on its own does."""
    place = (at % width == 0) * 2 + ((at + length) % width == 0)
    return [at[place == p] for p in np.unique(place)]


def addressable(shape: tuple[int, ...], dtype: Any, src_layout: LayoutMode | str,
                dst_layout: LayoutMode | str, config: TX8Config = DEFAULT_CONFIG) -> bool:
    """Whether one LSU transfer can move a `shape` tensor from `src_layout` to
    `dst_layout` (checked on the probe window of the module docstring)."""
    probe = tuple((0, min(d, PROBE_ROWS)) for d in shape[:-1]) + tuple(
        (0, d) for d in shape[-1:])
    return descriptors(shape, dtype, src_layout, dst_layout, probe, config) is not None


def _runs(src: np.ndarray, dst: np.ndarray, itemsize: int) -> tuple[np.ndarray, np.ndarray]:
    """The first element of every run and its length in elements: a run ends where the
    next element is not the next item on either side."""
    breaks = (np.diff(src) != itemsize) | (np.diff(dst) != itemsize)
    begins = np.concatenate([[0], np.flatnonzero(breaks) + 1])
    lengths = np.diff(np.concatenate([begins, [src.size]]))
    return begins, lengths


def _loop_nest(starts: np.ndarray) -> list[tuple[int, np.ndarray]] | None:
    """The loops (count, (src stride, dst stride)), innermost first, that produce the
    rows of `starts` (k x 2, in order), or None when no nest does. Greedy and exact: the
    innermost loop is the longest leading arithmetic progression; every block of that
    many rows must repeat the first block's offsets, and the blocks' first rows are the
    next loop's sequence. A nest found is verified row by row, so a None may be
    conservative but a nest is never wrong."""
    loops = []
    seq = starts
    while len(seq) > 1:
        steps = np.diff(seq, axis=0)
        bad = np.flatnonzero((steps != steps[0]).any(axis=1))
        count = len(seq) if bad.size == 0 else int(bad[0]) + 1
        if len(seq) % count:
            return None
        blocks = seq.reshape(-1, count, 2)
        offsets = blocks - blocks[:, :1]
        if not (offsets == offsets[0]).all():
            return None
        loops.append((count, steps[0]))
        seq = blocks[:, 0]
    return loops
