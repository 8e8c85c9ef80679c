"""What every tile computes at every step of a plan: the exact unrolled form of a
candidate, shared by the search (dependency sets, edge slices), the slice-by-slice
reference run of a plan, and the lowered Program (issue 12).

The anchor's loop space is cut into tile shares (`sharding`, near-equal pieces on each
dim's granule; the first pieces are the largest), each share into steps (`split`); a
reduction cut falls on the granules its `ReduceCut` carries (`reduce_granules`: the
channel blocks of the operands it reads). Steps
run as a loop nest: dim 0 outermost, the last dim innermost, then - when the plan cuts
a node's reduction in time - its reduction pieces innermost of all (partial sums
accumulate over consecutive steps, seed 003's psum). A reduction cut over tiles gives
each group of tiles that shares an output window one tile per reduction piece; the
partials meet on the first of them (the owner) over the NoC.

At each step every node's window follows from the anchor's (`propagate`). A node runs
only when its window changes: a weight whose window does not depend on the inner loops
is loaded once per outer iteration (hoisted). Nodes that consume the result of a
reduction cut in time run at the *last* step of each run of equal windows (when the
partial sum is complete), stores too; every other node at the *first*.

**The interchanged order** (`Candidate.interchange`): the reduction's pieces outermost,
the anchor's steps inside them (dim 0 outer, the last dim innermost), so the step at
reduction piece k and anchor step a is k * P + a (P the tile's anchor steps). The
anchor window changes at every step, so "the last step of a run of equal windows" no
longer says when a partial sum is complete: the nodes after the reduction, the stores
and the loads only they read (`after_reduction`) run at the last reduction piece (the
piece index, not a window change), there at the last step of each run of equal windows
(a load, at the first); the partial sum of anchor step a starts at the first piece
(`Step.first_piece`) and is complete at the last (`Step.last_piece`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, replace
from itertools import product

from tx8c.interfaces.sharding import Window, piece_bounds
from tx8c.slicing.group import GroupSpec, Stored
from tx8c.slicing.plan import Candidate, ReduceCut
from tx8c.slicing.propagate import SweepMemo, Windows, propagate


@dataclass(frozen=True)
class Tile:
    """One tile's share: its anchor window, its reduction window (when the plan cuts a
    reduction over tiles) and whether it owns the share (runs what follows the
    reduction)."""

    index: int
    anchor: Window
    reduce: Window | None
    owner: bool


@dataclass(frozen=True)
class Step:
    """One step of one tile: the node windows, and which nodes run (`runs[n]`); for a
    node with a reduction cut in time, `first_piece` says the partial sum starts here,
    `last_piece` that it is complete here, and `inner` which of the tile's anchor steps
    it accumulates (the interchanged order: one partial-sum copy per anchor step; 0 in
    the default order, where one copy serves the anchor steps in turn)."""

    index: int
    windows: Windows
    runs: tuple[bool, ...]
    first_piece: bool
    last_piece: bool = True
    inner: int = 0
    ahead: tuple[int, ...] = ()
    """The interchanged order's loads run here that are issued a step early (`lead`):
    those that load once per reduction piece (the piece of the operand the reduction
    streams, shared by the anchor steps), at the first anchor step of every piece but
    the first."""


def _granules(spec: GroupSpec, block_dim: int | None, block: int) -> list[int]:
    loops = spec.anchor_loops
    return [max(d.granule, block if i == block_dim else 1) for i, d in enumerate(loops)]


def channel_granule(value: Stored, config) -> int:
    """The multiples cuts along a stored value's channel (last) dim fall on (seed 003
    alignCx): a channel-aligned value's whole C up to the plain-NHWC threshold (its
    channels are never cut), else its channel block; 1 for a compact value."""
    if not value.aligned or not value.shape:
        return 1
    c = value.shape[-1]
    int8 = value.dtype in ("i8", "ui8")
    return c if c <= config.channel_threshold(int8) else config.channel_block(int8)


def loaded_channel_granule(value: Stored, config) -> int:
    """The multiples a cut of a channel-aligned value's channel dim may fall on where a
    load moves it: `channel_granule`, or - above the plain-NHWC threshold, when that
    threshold divides the channel block - the threshold itself (32 channels for float
    types). Departs from the seed (alignCx: whole blocks): a window of `threshold`
    channels inside one block is stored in SPM as plain NHWC with no padding, and the DMA
    reads the block's `threshold` channels of each pixel (runs of 128 bytes for fp32,
    strided by the block's 256), so exactly the window's bytes cross the DDR. A
    reduction over a value with few blocks (ResNet-50's 256 input channels: 4) can then
    stream in finer pieces (`steps.reduce_granules(fine=True)`)."""
    granule = channel_granule(value, config)
    if not value.aligned or not value.shape or value.shape[-1] == granule:
        return granule
    threshold = config.channel_threshold(value.dtype in ("i8", "ui8"))
    return threshold if granule % threshold == 0 else granule


def anchor_granules(spec: GroupSpec, config) -> list[int]:
    """Per anchor dim, the granule of its cuts: the dim's own, and a channel-aligned
    stored output's channel block on its last dim (seed 003 alignCx)."""
    out = spec.nodes[spec.anchor].results[0]
    if not out.aligned or not out.shape:
        return _granules(spec, None, 1)
    return _granules(spec, len(out.shape) - 1, channel_granule(out, config))


def reduce_granules(spec: GroupSpec, node: int, config, fine: bool = False
                    ) -> tuple[int, ...]:
    """Per reduction dim of `node`, the granule of its cuts over tiles and in time (what
    a `ReduceCut` of it carries): the dim's own, and the channel granule of each operand
    whose channel dim follows it (a Gemm's K read from a channel-aligned activation, a
    Conv's input channels), so that no cut leaves an operand's window off its channel
    blocks. Without it a cut in 2^k pieces is rejected whenever the channel blocks do
    not divide by 2^k (BERT's K of 768 = 12 blocks of 64 cut in 8). `fine`: the
    operands' `loaded_channel_granule` instead (pieces inside a channel block)."""
    n = spec.nodes[node]
    first = n.slicer.num_outputs
    granules = [d.granule for d in n.slicer.loops[first:]]
    of_value = loaded_channel_granule if fine else channel_granule
    for ref, axes in zip(n.inputs, n.slicer.axes, strict=True):
        if not axes or axes[-1] is None or axes[-1] < first:
            continue
        d = axes[-1] - first
        granules[d] = math.lcm(granules[d], of_value(spec.value(ref), config))
    return tuple(granules)


def cuts_inside_blocks(spec: GroupSpec, cut: ReduceCut, config) -> bool:
    """Whether `cut` falls inside its operands' channel blocks: its granules are finer
    than `reduce_granules` (the search makes such cuts on `reduce_granules(fine=True)`)."""
    return bool(cut.granule) and cut.granule != reduce_granules(spec, cut.node, config)


def reduce_pieces(window: Window, cut: ReduceCut) -> list[list[tuple[int, int]]]:
    """The pieces in time, per reduction dim, of a tile's reduction `window` under `cut`
    (offsets from the window's start: near-equal, on the cut's granules)."""
    granules = cut.granule or (1,) * len(cut.split)
    return [piece_bounds(hi - lo, s, g)
            for (lo, hi), s, g in zip(window.pairs(), cut.split, granules, strict=True)]


def tiles(spec: GroupSpec, cand: Candidate, config) -> list[Tile]:
    """The tile shares of a candidate (tile-major: anchor pieces, then reduction pieces)."""
    loops = spec.anchor_loops
    granules = anchor_granules(spec, config)
    per_dim = [piece_bounds(d.size, s, g)
               for d, s, g in zip(loops, cand.sharding, granules, strict=True)]
    reduce_pieces: list[Window | None] = [None]
    if cand.reduce is not None:
        node = spec.nodes[cand.reduce.node].slicer
        dims = node.loops[node.num_outputs:]
        granules = cand.reduce.granule or tuple(d.granule for d in dims)
        reduce_pieces = [
            Window.of(p) for p in product(*(
                piece_bounds(d.size, s, g)
                for d, s, g in zip(dims, cand.reduce.sharding, granules, strict=True)))
        ]
    out = []
    for pairs in product(*per_dim):
        for k, red in enumerate(reduce_pieces):
            out.append(Tile(len(out), Window.of(pairs), red, k == 0))
    return out


def reduce_tree(shares: list[Tile]) -> dict[int, list[int]]:
    """The binary tree a reduction cut over tiles sums its partials along: per tile, the
    tiles whose partial it adds into its own, round by round. The tiles of one anchor
    window in index order are positions 0 (the owner) to n - 1; in round r the tile at
    a position p that is a multiple of 2^(r+1) receives from p + 2^r, so the owner
    holds the sum after ceil(log2(n)) rounds (seed 003 does not say how partials meet;
    a tree takes log2(n) rounds where summing at the owner takes n - 1)."""
    members: dict[Window, list[int]] = {}
    for t in shares:
        if t.reduce is not None:
            members.setdefault(t.anchor, []).append(t.index)
    children: dict[int, list[int]] = {t.index: [] for t in shares}
    for group in members.values():
        group.sort()
        step = 1
        while step < len(group):
            for p in range(0, len(group) - step, 2 * step):
                children[group[p]].append(group[p + step])
            step *= 2
    return children


def step_windows(tile: Tile, cand: Candidate, granules
                 ) -> Iterator[tuple[Window, Window | None]]:
    """The anchor and reduction windows of the tile's steps, in loop order (the
    reduction's pieces innermost, or outermost under `Candidate.interchange`)."""
    per_dim = [piece_bounds(hi - lo, s, g)
               for (lo, hi), s, g in zip(tile.anchor.pairs(), cand.split, granules,
                                         strict=True)]
    reduce_steps: list[Window | None] = [tile.reduce]
    if cand.reduce is not None and tile.reduce is not None:
        reduce_steps = [
            Window.of([(lo + a, lo + b) for (lo, _), (a, b) in zip(tile.reduce.pairs(), p,
                                                                    strict=True)])
            for p in product(*reduce_pieces(tile.reduce, cand.reduce))
        ]
    anchors = [Window.of([(lo + a, lo + b) for (lo, _), (a, b) in zip(tile.anchor.pairs(),
                                                                        pairs, strict=True)])
               for pairs in product(*per_dim)]
    if cand.interchange:
        for red in reduce_steps:
            for anchor in anchors:
                yield anchor, red
        return
    for anchor in anchors:
        for red in reduce_steps:
            yield anchor, red


def downstream_of(spec: GroupSpec, node: int) -> set[int]:
    """The nodes that read (transitively) the results of `node`."""
    found = {node}
    for n in spec.nodes:
        if any(not r.is_input and r.node in found for r in n.inputs):
            found.add(n.index)
    found.discard(node)
    return found


def after_reduction(spec: GroupSpec, cand: Candidate) -> set[int]:
    """The nodes the interchanged order runs at the last reduction piece: those after
    the reduction, the stores, and the loads read only by those (a residual, a bias, a
    LayerNorm's gamma: loaded once per anchor step, when it is needed, not at every
    piece). Empty without a reduction cut."""
    if cand.reduce is None:
        return set()
    found = downstream_of(spec, cand.reduce.node)
    found |= {n.index for n in spec.nodes if n.kind == "store"}
    users = spec.users()
    for n in spec.nodes:
        if n.kind == "load" and users[n.index] and all(u in found
                                                       for u, _ in users[n.index]):
            found.add(n.index)
    return found


def interchange_error(spec: GroupSpec, cand: Candidate) -> str | None:
    """Why `cand`'s interchanged order cannot run (None: it can, or it is not
    interchanged): it needs a reduction cut in time and anchor steps to put inside it,
    and every store after the reduction (a store of a value the reduction does not
    follow would run at the last piece only, missing the others' windows)."""
    if not cand.interchange:
        return None
    if cand.reduce is None or math.prod(cand.reduce.split) < 2:
        return "the interchanged order needs a reduction cut in time"
    if math.prod(cand.split) < 2:
        return "the interchanged order needs anchor steps inside the reduction's pieces"
    late = downstream_of(spec, cand.reduce.node)
    if any(n.kind == "store" and n.index not in late for n in spec.nodes):
        return "the interchanged order stores only what follows the reduction"
    return None


def reduce_at(cand: Candidate, window: Window | None) -> dict[int, Window] | None:
    """`propagate`'s reduction windows at a step: the cut node's reduction `window`
    (None without a reduction cut, or a step with none)."""
    if cand.reduce is None or window is None:
        return None
    return {cand.reduce.node: window}


def steps(spec: GroupSpec, cand: Candidate, tile: Tile, config,
          memo: SweepMemo | None = None) -> list[Step]:
    """Every step of `tile`, in order, with the nodes that run at each. `memo`: a
    `SweepMemo` shared by the calls for one group's tiles (the same windows either way;
    the lowering's 16 tiles of a group meet most node windows again)."""
    granules = anchor_granules(spec, config)
    late = set()
    if cand.reduce is not None:
        late = downstream_of(spec, cand.reduce.node)
    windows = []
    for anchor, red in step_windows(tile, cand, granules):
        windows.append(propagate(spec, anchor, reduce_at(cand, red), memo))
    if cand.interchange:
        inner = math.prod(len(piece_bounds(hi - lo, n, g)) for (lo, hi), n, g in
                          zip(tile.anchor.pairs(), cand.split, granules, strict=True))
        return _interchanged(spec, cand, tile, windows, late, inner)
    out = []
    for i, w in enumerate(windows):
        prev = windows[i - 1].loops if i else None
        nxt = windows[i + 1].loops if i + 1 < len(windows) else None
        runs = []
        for n in spec.nodes:
            loop = w.loops[n.index]
            if loop is None or (not tile.owner and n.index in late):
                runs.append(False)
            elif n.kind == "store" or n.index in late:
                runs.append(nxt is None or nxt[n.index] != loop)
            else:
                runs.append(prev is None or prev[n.index] != loop)
        first = True
        if cand.reduce is not None and i:
            node = cand.reduce.node
            first = _outputs(windows[i - 1].loops[node], spec, node) != _outputs(
                w.loops[node], spec, node)
        out.append(Step(i, w, tuple(runs), first))
    return [replace(s, last_piece=nxt.first_piece) for s, nxt in zip(out, out[1:])] + out[-1:]


def _interchanged(spec: GroupSpec, cand: Candidate, tile: Tile, windows: list,
                  late: set[int], inner: int) -> list[Step]:
    """`steps` in the interchanged order (see the module docstring): step k * inner + a
    is reduction piece k of anchor step a (`inner` anchor steps)."""
    pieces = len(windows) // inner
    at_last = after_reduction(spec, cand)
    out = []
    for i, w in enumerate(windows):
        k, a = divmod(i, inner)
        last = k == pieces - 1
        prev = windows[i - 1].loops if a else None  # within this piece's anchor steps
        nxt = windows[i + 1].loops if a + 1 < inner else None
        runs = []
        for n in spec.nodes:
            loop = w.loops[n.index]
            if loop is None or (not tile.owner and n.index in late):
                runs.append(False)
            elif n.index in at_last:
                follows = n.kind == "store" or n.index in late
                other = nxt if follows else prev
                runs.append(last and (other is None or other[n.index] != loop))
            else:
                runs.append(i == 0 or windows[i - 1].loops[n.index] != loop)
        out.append(Step(i, w, tuple(runs), k == 0, last, a))
    once = [n.index for n in spec.nodes if n.kind == "load" and n.index not in at_last
            and any(s.runs[n.index] for s in out)
            and all(s.runs[n.index] == (s.inner == 0) for s in out)]
    if inner < 2 or not once:
        return out
    return [replace(s, ahead=tuple(once)) if s.inner == 0 and s.index else s for s in out]


def lead(step: Step, node: int) -> int:
    """Steps before its own that `node`'s run at `step` is issued (`Step.ahead`): the
    next reduction piece's operand is loaded while the previous piece's last anchor
    step computes, after that step's own loads (issued at its own step it waited for
    the previous piece's last compute: BERT-base's FFN-down Gemm, K in 16 pieces under 2
    row steps, ran 1.34 x its busiest engine). The loads every anchor step runs have a
    copy per anchor step and one more (`evaluate.interchanged_lifetimes`), so that they
    never wait for the compute of the piece before: the in-order load lane then streams
    the whole piece's loads back to back."""
    return 1 if node in step.ahead else 0


def _outputs(window: Window | None, spec: GroupSpec, node: int):
    if window is None:
        return None
    return window.head(spec.nodes[node].slicer.num_outputs)
