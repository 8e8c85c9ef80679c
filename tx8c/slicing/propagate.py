"""SlicePropagate (seed 003, DS_SlicePropagatePass): windows from the group's output back
to its inputs.

Given the window of the anchor store that one tile computes in one step, every node's
loop window follows backwards: a node must produce the hull of what its users read of its
results (`Slicer.loops_for`), its reduction dims are whole unless the plan cuts them, and
it reads the operand windows its `back_window` names, halos included. Cuts must respect
each node's rules: a dim may be cut across tiles only if the node can shard it, across
steps only if it can split it, on multiples of its granule, and a channel-aligned value
only on whole channel blocks (seed 003's alignCx).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tx8c.interfaces.sharding import Window

if TYPE_CHECKING:  # group.py asks stores_whole when it picks a group's anchor
    from tx8c.slicing.group import GroupSpec, ValueRef


class Infeasible(Exception):
    """A window asks a node to cut a dim the way it cannot (a rejected candidate)."""


@dataclass(frozen=True)
class Windows:
    """Per node, its loop window (None: the node computes nothing for this slice); per
    value read, the window read of it."""

    loops: tuple[Window | None, ...]
    values: dict[ValueRef, Window]

    def shapes(self, spec: GroupSpec) -> WindowShapes:
        """The shapes of these windows and of the results they produce (`spec` is the
        group they were propagated in). Computed once: the search's propagator hands out
        the same Windows for the same slice, and asks their shapes for every candidate
        that samples that slice."""
        found = self.__dict__.get("_shapes")
        if found is None:
            found = _window_shapes(spec, self)
            object.__setattr__(self, "_shapes", found)
        return found


@dataclass(frozen=True)
class WindowShapes:
    """Per node the shape of its loop window (None: it computes nothing); per result a
    node produces, the shape of its window; per value read, the shape read of it."""

    loops: tuple[tuple[int, ...] | None, ...]
    results: dict[ValueRef, tuple[int, ...]]
    values: dict[ValueRef, tuple[int, ...]]


def _window_shapes(spec: GroupSpec, windows: Windows) -> WindowShapes:
    results = {}
    for node, loop in zip(spec.nodes, windows.loops, strict=True):
        if loop is not None:
            for r, out in enumerate(node.slicer.result_windows(loop)):
                if out is not None:
                    results[spec.result_refs[node.index][r]] = out.shape
    return WindowShapes(
        tuple(None if loop is None else loop.shape for loop in windows.loops), results,
        {ref: window.shape for ref, window in windows.values.items()})


def largest_shapes(spec: GroupSpec, samples: list[Windows]
                   ) -> tuple[list[tuple[int, ...] | None], dict, dict]:
    """Dim by dim the largest of the samples' shapes: (per node its loop window's, None
    when it computes nothing in any sample; per value read; per result produced), the
    keys of both tables in the order they first appear in the samples."""
    loops: list[tuple[int, ...] | None] = [None] * len(spec.nodes)
    results: dict[ValueRef, tuple[int, ...]] = {}
    values: dict[ValueRef, tuple[int, ...]] = {}
    for w in samples:
        shapes = w.shapes(spec)
        for i, shape in enumerate(shapes.loops):
            if shape is not None:
                loops[i] = _larger(loops[i], shape)
        for table, new in ((results, shapes.results), (values, shapes.values)):
            for ref, shape in new.items():
                table[ref] = _larger(table.get(ref), shape)
    return loops, values, results


def _larger(old: tuple[int, ...] | None, shape: tuple[int, ...]) -> tuple[int, ...]:
    if old is None or old == shape:
        return shape
    if len(old) != len(shape):
        raise ValueError(f"shapes {old} and {shape} differ in rank")
    return tuple(map(max, old, shape))


@dataclass
class SweepMemo:
    """What the sweeps of one group found, node by node: `back`, (node, loop window) ->
    its `back_window`; `results`, (node, loop window) -> its `result_windows`. A node's
    operand and result windows depend on its own loop window alone, and the search's
    many slices of a group give most nodes the same windows again (on BERT-base half of
    the node windows its sweeps meet repeat one)."""

    back: dict = field(default_factory=dict)
    results: dict = field(default_factory=dict)


def propagate(spec: GroupSpec, anchor: Window, reduce: dict[int, Window] | None = None,
              memo: SweepMemo | None = None) -> Windows:
    """The windows of every node when the anchor store's loop window is `anchor`;
    `reduce[node]` is the window of that node's reduction dims (whole by default).
    `memo`: the group's `SweepMemo` (the same windows either way)."""
    reduce = reduce or {}
    memo = memo or SweepMemo()
    windows = _sweep(spec, anchor, reduce, frozenset(), memo)
    if anchor != Window.whole(spec.anchor_shape):
        return windows
    short = partial_stores(spec, windows.loops)
    if any(w != _whole_reduction(spec, node) for node, w in reduce.items()):
        # The anchor is whole but a reduction is cut: a store that sees only its piece
        # of the reduction is right to (or the cut is rejected); only a store that
        # writes nothing at all runs whole (a Split's other piece, the value of a node
        # the anchor does not reach).
        short = frozenset(i for i in short if windows.loops[i] is None)
    # An unsliced slice computes everything: a store that the sweep leaves short (the
    # value of a node the anchor does not reach, another piece of a Split nothing else
    # asks for, rows of a Conv a Slice on the anchor's path drops) asks for its whole
    # value. Sweep again with them whole, so that their producers make the hull of what
    # every reader needs.
    return _sweep(spec, anchor, reduce, short, memo) if short else windows


def _whole_reduction(spec: GroupSpec, node: int) -> Window:
    slicer = spec.nodes[node].slicer
    return Window.whole(slicer.loop_shape[slicer.num_outputs:])


def stores_whole(spec: GroupSpec) -> bool:
    """Whether the anchor's whole window alone makes every store of the group write its
    whole value (what lets the search cut the group by the anchor's slices)."""
    windows = _sweep(spec, Window.whole(spec.anchor_shape), {}, frozenset(), SweepMemo())
    return not partial_stores(spec, windows.loops)


def partial_stores(spec: GroupSpec, loops) -> frozenset[int]:
    """The stores whose loop window in `loops` is not their whole value (None: they
    write nothing)."""
    return frozenset(
        node.index for node in spec.nodes
        if node.kind == "store" and loops[node.index] != Window.whole(node.slicer.loop_shape))


def _sweep(spec: GroupSpec, anchor: Window, reduce: dict, whole: frozenset[int],
           memo: SweepMemo) -> Windows:
    """One backward sweep; the nodes in `whole` run on their whole loop space (an
    unsliced slice computes everything) and ask their producers for all they read."""
    loops: list[Window | None] = [None] * len(spec.nodes)
    needed: dict[ValueRef, Window] = {}
    back = memo.back
    for node, refs in zip(reversed(spec.nodes), reversed(spec.result_refs), strict=True):
        slicer = node.slicer
        if node.index == spec.anchor:
            window = _with_reduction(slicer, anchor, reduce.get(node.index))
        else:
            results = [needed.get(ref) for ref in refs]
            if results.count(None) != len(results):
                window = _with_reduction(slicer, slicer.loops_for(results),
                                         reduce.get(node.index))
            elif node.index in whole:
                window = Window.whole(slicer.loop_shape)
            else:
                continue  # nothing downstream reads it in this slice
        loops[node.index] = window
        key = (node.index, window)
        operands = back.get(key)
        if operands is None:
            operands = back[key] = slicer.back_window(window)
        for ref, operand in zip(node.inputs, operands, strict=True):
            held = needed.get(ref)
            needed[ref] = operand if held is None else held.hull(operand)
    _side_stores(spec, loops, needed, memo.results)
    return Windows(tuple(loops), needed)


def _with_reduction(slicer, out: Window, tail: Window | None) -> Window:
    """A node's loop window: its output part, then its reduction dims (whole unless the
    plan cuts them)."""
    if tail is None:
        if slicer.num_outputs == len(slicer.loops):
            return out  # no reduction dims: the output window is the loop window
        tail = Window.whole(slicer.loop_shape[slicer.num_outputs:])
    return Window(out.start + tail.start, out.stop + tail.stop)


def _side_stores(spec: GroupSpec, loops: list, needed: dict, made: dict) -> None:
    """A store of a value the anchor's slice computes on the way (an intermediate result
    that leaves the group, or another piece of a Split) writes the window computed."""
    for node in spec.nodes:
        if node.kind != "store" or loops[node.index] is not None:
            continue
        ref = node.inputs[0]
        if ref.is_input or loops[ref.node] is None:
            continue
        key = (ref.node, loops[ref.node])
        windows = made.get(key)
        if windows is None:
            windows = made[key] = spec.nodes[ref.node].slicer.result_windows(loops[ref.node])
        window = windows[ref.index]
        if window is not None:
            loops[node.index] = window
            needed[ref] = window if ref not in needed else needed[ref].hull(window)


def check_cuts(spec: GroupSpec, whole: Windows, part: Windows, kind: str,
               block: dict[ValueRef, tuple[int, int]]) -> None:
    """Raise `Infeasible` when a node's window in `part` cuts, relative to `whole` (its
    window one level up: the whole loop space for a tile's share, the tile's share for a
    step), a dim the node cannot cut that way (`kind`: "shard" or "split"), off its
    granule, or a channel-aligned value off its channel blocks (`block[value]`: (dim,
    granule))."""
    whole_values = whole.values
    for node in spec.nodes:
        window, outer = part.loops[node.index], whole.loops[node.index]
        if window is None or outer is None or window == outer:
            continue
        for d, (dim, lo, hi, outer_lo, outer_hi) in enumerate(zip(
                node.slicer.loops, window.start, window.stop, outer.start, outer.stop,
                strict=True)):
            if lo == outer_lo and hi == outer_hi:
                continue
            if not (dim.shard if kind == "shard" else dim.split):
                raise Infeasible(f"{node.label} cannot {kind} loop dim {d}")
            if dim.granule > 1 and (lo % dim.granule or (hi % dim.granule
                                                         and hi != dim.size)):
                raise Infeasible(f"{node.label} cuts loop dim {d} off its granule")
    for ref, (dim, granule) in block.items():
        window, outer_window = part.values.get(ref), whole_values.get(ref)
        if window is None or (outer_window is not None and
                              window.dim(dim) == outer_window.dim(dim)):
            continue  # what the group reads of it anyway (a Slice's part), not a cut
        lo, hi = window.dim(dim)
        size = spec.value(ref).shape[dim]
        if (lo % granule) or (hi % granule and hi != size):
            raise Infeasible(f"value {ref} cut off its channel blocks")
