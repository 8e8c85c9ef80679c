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

from dataclasses import dataclass

from tx8c.interfaces.sharding import Window
from tx8c.slicing.group import GroupSpec, ValueRef


class Infeasible(Exception):
    """A window asks a node to cut a dim the way it cannot (a rejected candidate)."""


@dataclass(frozen=True)
class Windows:
    """Per node, its loop window (None: the node computes nothing for this slice); per
    value read, the window read of it."""

    loops: tuple[Window | None, ...]
    values: dict[ValueRef, Window]


def propagate(spec: GroupSpec, anchor: Window, reduce: dict[int, Window] | None = None
              ) -> Windows:
    """The windows of every node when the anchor store's loop window is `anchor`;
    `reduce[node]` is the window of that node's reduction dims (whole by default)."""
    reduce = reduce or {}
    users = spec.users()
    loops: list[Window | None] = [None] * len(spec.nodes)
    needed: dict[ValueRef, Window] = {}
    for node in reversed(spec.nodes):
        slicer = node.slicer
        if node.index == spec.anchor:
            window = _with_reduction(slicer, anchor, reduce.get(node.index))
        else:
            results = [needed.get(ValueRef(node.index, r)) for r in range(len(node.results))]
            if all(w is None for w in results) and not users[node.index]:
                continue
            if all(w is None for w in results):
                continue
            window = _with_reduction(slicer, slicer.loops_for(results), reduce.get(node.index))
        loops[node.index] = window
        for ref, operand in zip(node.inputs, slicer.back_window(window), strict=True):
            needed[ref] = operand if ref not in needed else needed[ref].hull(operand)
    _side_stores(spec, loops, needed)
    if anchor == Window.whole(spec.anchor_shape):
        _whole_rest(spec, loops, needed)
    return Windows(tuple(loops), needed)


def _whole_rest(spec: GroupSpec, loops: list, needed: dict) -> None:
    """An unsliced slice computes everything: a node the anchor does not reach (a group
    that cannot be cut) runs on its whole loop space."""
    for node in spec.nodes:
        if loops[node.index] is None:
            window = Window.whole(node.slicer.loop_shape)
            loops[node.index] = window
            for ref, operand in zip(node.inputs, node.slicer.back_window(window),
                                    strict=True):
                needed[ref] = operand if ref not in needed else needed[ref].hull(operand)


def _with_reduction(slicer, out: Window, tail: Window | None) -> Window:
    """A node's loop window: its output part, then its reduction dims (whole unless the
    plan cuts them)."""
    tail = tail or Window.whole(slicer.loop_shape[slicer.num_outputs:])
    return Window(out.start + tail.start, out.stop + tail.stop)


def _side_stores(spec: GroupSpec, loops: list, needed: dict) -> None:
    """A store of a value the anchor's slice computes on the way (an intermediate result
    that leaves the group, or another piece of a Split) writes the window computed."""
    for node in spec.nodes:
        if node.kind != "store" or loops[node.index] is not None:
            continue
        ref = node.inputs[0]
        if ref.is_input or loops[ref.node] is None:
            continue
        producer = spec.nodes[ref.node]
        window = producer.slicer.result_windows(loops[ref.node])[ref.index]
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
        if window is None or outer is None:
            continue
        for d, dim in enumerate(node.slicer.loops):
            lo, hi = window.dim(d)
            if (lo, hi) == outer.dim(d):
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
