"""The dependency graph of a function's groups: layers from the back (seed 003, "Compile
Option 1: opt_barrier", groupDAGPass), barrier epochs and the barrier check.

Every tile runs the groups of a function one after another. `need_barrier` on a group
makes every tile wait, after it, until all tiles have finished it (and everything
before it); a group without a barrier lets a fast tile start the next group early.

- `group_graph(block)`: the top-level groups in block order and, for each, the groups
  that read its results.
- `layers(readers)`: the seed's layer numbers, counted from the back: a group nothing
  reads (or only the function's return) is layer 0, any other group is one more than
  the highest layer among its readers. Every edge goes from a higher layer to a lower
  one, so the groups of one layer never depend on each other.
- `barrier_epochs(groups)`: epoch of a group = the number of barriers before it in block
  order. Tiles can only be in groups of one epoch at a time, so a group's results are
  complete for every tile exactly when its reader runs in a later epoch.
- `waiting_operands(groups)`: per group, the operands a group it may run beside still
  writes (what its early loads wait for: cross-group overlap, `tx8c.slicing.overlap`).
- `relabelled_sources(value, windows)`: the values whose bytes a relabel group's
  result is (itself for any other value), with the windows of them a window reads.
- `missing_barriers(block)`: the (producer, reader) pairs with no barrier between them:
  a reader that may read a result before every tile has written it. Empty is the
  correctness condition of the barriers; the tests check every grouping against it and a
  tile-level simulator (cmodel v2) can check the same on its schedule.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Block, BlockArgument, SSAValue

from tx8c.dialect.ops.backend import GroupOp
from tx8c.interfaces.sharding import Window
from tx8c.ir_utils import group_ops


def group_graph(block: Block) -> tuple[list[GroupOp], list[list[int]]]:
    """The top-level groups of `block` in order, and for each the (sorted) indices of
    the groups that read one of its results."""
    groups = group_ops(block)
    index = {g: i for i, g in enumerate(groups)}
    readers = []
    for g in groups:
        found = {index[u.operation] for r in g.results for u in r.uses if u.operation in index}
        readers.append(sorted(found))
    return groups, readers


def layers(readers: Sequence[Sequence[int]]) -> list[int]:
    """Layer numbers from the back for groups in a topological order (readers after
    their producers): 0 without group readers, else 1 + the highest reader's layer."""
    layer = [0] * len(readers)
    for i in range(len(readers) - 1, -1, -1):
        if readers[i]:
            layer[i] = 1 + max(layer[j] for j in readers[i])
    return layer


def barrier_epochs(groups: Sequence[GroupOp]) -> list[int]:
    """For each group (in block order), how many groups before it have a barrier."""
    epochs, barriers = [], 0
    for g in groups:
        epochs.append(barriers)
        barriers += bool(g.attr("need_barrier"))
    return epochs


def relabelled_sources(value: SSAValue, windows: Sequence[Window] | None = None
                       ) -> list[tuple[SSAValue, list[Window] | None]]:
    """The values whose DDR bytes `value` is, each with the windows of it that hold
    `windows` of `value`: `value` itself, or - for a result of a relabel group
    (`IN_DDR`: a Reshape, a head split... that runs in DDR and moves no byte) - its
    operands' sources, followed back through relabels of relabels, the windows through
    each op's slicer (`loops_for`, `back_window`: its own knowledge of what a slice
    reads). Windows None: not asked, or not followed (an op with no slicer)."""
    owner = value.owner
    if not (isinstance(owner, GroupOp) and owner.attr("group_tag") == GroupOp.IN_DDR):
        return [(value, None if windows is None else list(windows))]
    out = []
    for arg, found in _back_to_arguments(owner.yield_op.operands[value.index],
                                         None if windows is None else list(windows)):
        out += relabelled_sources(owner.operands[arg], found)
    return out


def _back_to_arguments(value: SSAValue, windows: list[Window] | None
                       ) -> list[tuple[int, list[Window] | None]]:
    """(block argument number, the windows of it `windows` of `value` read) for the
    arguments `value` is computed from inside a group's block."""
    if isinstance(value, BlockArgument):
        return [(value.index, windows)]
    op = value.owner
    reads = None
    if windows is not None and hasattr(op, "slicer"):
        slicer = op.slicer()
        reads = [[] for _ in op.operands]
        for w in windows:
            wanted = [None] * len(op.results)
            wanted[value.index] = w
            for k, part in enumerate(slicer.back_window(slicer.loops_for(wanted))):
                reads[k].append(part)
    return [found for k, operand in enumerate(op.operands)
            for found in _back_to_arguments(operand, None if reads is None else reads[k])]


def missing_barriers(block: Block) -> list[tuple[GroupOp, GroupOp]]:
    """Pairs (producer, reader) of top-level groups of `block` with no barrier on the
    producer or on a group between the two: the reader may start before every tile has
    finished the producer."""
    groups, readers = group_graph(block)
    epoch = barrier_epochs(groups)
    return [
        (groups[p], groups[r])
        for p in range(len(groups)) for r in readers[p]
        if epoch[r] <= epoch[p]
    ]


def waiting_operands(groups: Sequence[GroupOp]) -> list[frozenset[int]]:
    """For each group (block order), the indices of its operands that a group it may run
    beside writes: a group from the first of the barrier epoch of the last sliced group
    before it (the one a tile runs before it, when its early loads may start; every
    group for the first sliced group) up to itself. A relabel group's (`IN_DDR`) results
    count as written where what they relabel was (same bytes). These are the operands
    whose early loads wait for stores (cmodel v2's `_ddr_deps`)."""
    epochs = barrier_epochs(groups)
    first: dict[int, int] = {}
    for i, e in enumerate(epochs):
        first.setdefault(e, i)
    written: dict = {}  # value -> position of the group that wrote its bytes
    out, previous = [], None
    for i, g in enumerate(groups):
        since = first[epochs[previous]] if previous is not None else 0
        out.append(frozenset(k for k, v in enumerate(g.operands)
                             if written.get(v, -1) >= since))
        relabel = g.attr("group_tag") == GroupOp.IN_DDR
        where = max((written.get(v, -1) for v in g.operands), default=-1)
        for r in g.results:
            written[r] = where if relabel else i
        if not relabel:
            previous = i
    return out
