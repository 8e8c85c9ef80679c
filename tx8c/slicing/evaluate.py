"""Turning a candidate into a plan: data split, software pipeline, SPM allocation and
estimate (seed 003: DataSplitNew, TS_SwPipeline, SA_BufferLife / SA_BufferMerge /
offsets, Estimate), on plain data.

**Data split.** The anchor's loop space is cut into tile shares and steps (`steps.py`);
windows at the first, a middle and the last step position (`propagate`) give every
node's largest slice and every value's largest window: what its buffers must hold and
what its kernel costs (a node none of them runs - a piece of an anchor Split that only
other tiles compute - is sized from the first step that runs it); the steps at the
short last piece of a dim (13 rows in steps of 7 + 6) cost their own, smaller slices
(`edge_slices`: the lowering moves and computes the shorter piece). Which split dims a
node's window depends on (probed by moving one step along each dim) says how often it
runs: a weight that does not depend on the inner loops is loaded once per outer
iteration (hoisted). A node some steps do not run at all (a piece of a Split: a tile
whose share crosses a piece boundary stores one piece at its first steps and the next at
the others, and tiles of other shares store other pieces) gets, per busy tile, the steps
that run it (`Split.runs`), from walking each loop dim's steps: one probe per dim says
neither which steps a piece runs at nor how often a tile runs a piece tile 0 never runs.

**Software pipeline.** The seed's TS_SwPipeline lays a step's ops out over the engines
(ld, st, ne, ct, tdma, and noc for partial sums across tiles) and overlaps consecutive
steps: loads of step i+2, computes of step i+1 and stores of step i share a frame (three
stages, multi-buffered). One frame's list schedule (`frame_times`) gives each node its
start in the frame; a node run at step s happens at (s + stage) * period + start, the
order the lowering gives each lane's instructions. A candidate may also run
unpipelined: each step alone, single-buffered.

**Estimate.** The cycles are an event-driven run of that order (`estimate`): an
instruction starts when its lane is free, its operands are written and the buffer
copy it overwrites was read. Busy tiles that do the same work form a tile class
(`tile_classes`: a multicast's sources and its receivers, tiles that never run a
Split piece's store); each class runs its instructions on its own lanes, side by side
with the others, its tiles all at the same time, so a DMA streams at the DDR bandwidth
divided among all the streams of the chip at that moment and pays its setup alone
(a multicast's receivers at each distance from its source are a class of their own:
their deliveries end apart, and one's DMA setup overlaps the others' streams, as cmodel
v2's tiles do); the schedule's repeating unit is extrapolated
beyond `EXACT_STEPS` steps (the seed's Repeat node), except where classes of different
shares drift apart (every step is simulated). A load or store of an empty window moves
nothing and runs nowhere (`moving`: the lowering issues no DMA), like a Split piece
another tile stores. Departs from the seed, whose Estimate sums the frames of the
pipeline: frames are not alike where the DDR is shared between loads and stores or a
hoisted weight fills the pipeline, and the closed form missed both (measured against
cmodel v2: bench/bench_cmodel.py).

**Multicast** (`TX8Config.noc_multicast`). A load whose window is the same on k tiles
(a Gemm sharded over output columns: every tile reads the same rows of the activation)
is read from DDR once and multicast to the other k - 1 tiles over the NoC, as the
lowering does (`tx8c.codegen.lower`). The estimate's tile stands for a source: the
load streams among `sources` streams of the chip (the distinct windows) instead of one
per busy tile, and a NoC task on the noc lane - the delivery to the farthest
destination - comes between the load and its readers. It follows the read as cmodel v2
times a NocCopy (`cost.multicast_done`): it streams the window over the NoC from when
both the read began and its lane is free, ends no sooner than the hops after the read,
and the deliveries of consecutive steps queue on the noc lane (a window the NoC moves
slower than the DDR reads it sets the period). Tiles are
grouped by their whole share's window of the load (the lowering matches step by step:
equal shares give equal steps); windows that only overlap (halos) stay separate loads.

**SPM.** Buffers are values (a node's result), scratch (`imm_bytes`) and the partial
sums received over the NoC; a multi-buffered value has one copy per stage it spans. The
steady state is unrolled over one stretch of steps, shared by all buffers, long enough
for every copy to recur (a hoisted value reloaded every k steps: a whole run of each
copy and a common period of all rotations); each copy is live from its producer's
start to its last consumer's end in each step it serves (seed 003 BufferLife; disjoint
intervals stay apart as BufferMerge keeps them), in-place results take their operand's
buffer. `tx8c.analysis.interval_alloc` places them (best of several
greedy orders) and gives the max-live lower bound; a candidate whose peak exceeds the SPM
is rejected, never truncated.
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cache, lru_cache
from itertools import product

from tx8c.analysis.interval_alloc import (
    Allocation,
    Buffer,
    OutOfMemory,
    allocate,
    live_intervals,
    max_live,
)
from tx8c.interfaces.oplib import Engine
from tx8c.interfaces.sharding import Window, piece_bounds
from tx8c.slicing.group import GroupSpec, Node, Stored, ValueRef
from tx8c.slicing.plan import BufferPlan, Candidate, EngineTime, Plan
from tx8c.slicing.propagate import (
    Infeasible,
    SweepMemo,
    check_cuts,
    largest_shapes,
    propagate,
)
from tx8c.slicing.steps import (
    anchor_granules,
    channel_granule,
    cuts_inside_blocks,
    downstream_of,
    interchange_error,
    loaded_channel_granule,
    reduce_at,
    reduce_pieces,
    reduce_tree,
    step_windows,
    tiles,
)
from tx8c.slicing.steps import steps as tile_steps
from tx8c.target.config import TX8Config
from tx8c.target.cost import (
    cycles,
    ddr_bytes_per_cycle,
    mesh_hops,
    multicast_done,
    multicast_tail,
    noc_multicast_cycles,
    noc_transfer_cycles,
    resident_dma_cycles,
)
from tx8c.target.mem_layout import byte_size

LANES = ("ld", "ne", "ct", "tdma", "noc", "st")


@dataclass(frozen=True)
class Task:
    """A node's work in one step: its lane, cycles, how many of the tile's steps run it,
    and its pipeline stage."""

    node: int
    lane: str
    cycles: int
    count: int
    stage: int
    ddr: int = 0
    """Cycles the task holds this tile's share of the DDR bandwidth (reads and writes
    share it: loads and stores of a step cannot both stream at the full rate)."""
    sources: int = 0
    """A multicast load: its distinct windows (the source tiles, which alone run its
    DDR read; the others run its delivery: `tile_classes`); 0: every busy tile reads
    its own."""
    delivers: bool = False
    """A noc task that delivers the multicast load `node` (it runs with its load, not
    after the last piece as a reduction's does). It follows the load the way cmodel v2
    times a NocCopy (`cost.multicast_done`): `cycles` is the NoC moving the window
    alone, which streams from when both the read and the destination are ready; the
    last bytes arrive `hops * noc_hop_cycles` (`tail`) after the read ends."""
    tail: int = 0


class Rejected(Exception):
    """A candidate that cannot run (a cut a node cannot make, or SPM overflow);
    `spm_needed`: the bytes per tile it would need, when SPM is why."""

    def __init__(self, reason: str, spm_needed: int | None = None):
        super().__init__(reason)
        self.spm_needed = spm_needed


def _layout(shape, aligned):
    from tx8c.dialect.layout import mem_layout_for

    return mem_layout_for(shape, aligned)


def window_bytes(shape, value, config: TX8Config) -> int:
    """Stored bytes of a window of `shape` of a value stored like `value`."""
    return _stored_bytes(tuple(shape), value.dtype, value.aligned, config)


@lru_cache(maxsize=65536)
def _stored_bytes(shape, dtype: str, aligned: bool, config: TX8Config) -> int:
    return byte_size(shape, dtype, _layout(shape, aligned), config)


# --------------------------------------------------------------------------------------
# Data split
# --------------------------------------------------------------------------------------


RunSteps = tuple[tuple[int, int, frozenset[int]], ...]
"""The steps of a tile at which a node runs: per loop dim that restricts them, (the
dim's stride in steps, its step count, the indices along it that run the node); a step
runs the node when its index along each of those dims is allowed (`runs_at`)."""


def runs_at(steps: RunSteps, step: int) -> bool:
    """Whether a node that runs at `steps` runs at `step`."""
    return all((step // stride) % size in allowed for stride, size, allowed in steps)


def run_count(steps: RunSteps, total: int) -> int:
    """How many of `total` steps run a node that runs at `steps`."""
    count = total
    for _, size, allowed in steps:
        count = count // size * len(allowed)
    return count


@dataclass(frozen=True)
class Split:
    """What the data split gives: per node its largest loop slice and run count, per
    value its largest window; the tile count and step count per dim."""

    slice_shapes: tuple[tuple[int, ...] | None, ...]
    counts: tuple[int, ...]
    value_shapes: dict[ValueRef, tuple[int, ...]]
    result_shapes: dict[ValueRef, tuple[int, ...]]
    tiles: int
    steps: int
    multicast: dict[int, tuple[int, int]] = field(default_factory=dict)
    """Per load node whose window several tiles share: (distinct windows, mesh hops from
    a source to its farthest destination) - `multicast_loads`."""
    senders: dict[int, tuple[int, ...]] = field(default_factory=dict)
    """Per node of `multicast`, per busy tile (in index order) the position among the
    busy tiles of the tile whose DDR read it gets (its own: it is a source)."""
    absent: tuple[frozenset[int], ...] = ()
    """Per busy tile, the nodes it never runs (a piece of a Split other tiles store)."""
    runs: tuple[tuple[tuple[int, RunSteps], ...], ...] = ()
    """Per busy tile, the steps at which it runs each node that some of the chip's steps
    do not run at all (the pieces of a Split: a tile whose share crosses a piece
    boundary stores one piece at its first steps, the next at the rest), where `counts`
    (tile 0's, one probe per dim) cannot say it (`_piece_runs`); empty when no node is
    missing from a step."""
    shares: tuple[int, ...] = ()
    """Per busy tile, its share's slices: 0, `slice_shapes` (tile 0's share, the
    largest); k, `share_slices[k - 1]` (a smaller share: the last tile of a dim the
    tiles do not divide evenly; tiles running other Concatenate inputs than their
    shape's first tile, tile 0's own included, `_share_slices`). Empty when every busy
    share has tile 0's shape and nodes."""
    share_slices: tuple[tuple[tuple[int, ...] | None, ...], ...] = ()
    share_steps: tuple[int, ...] = ()
    """Per smaller share (as `share_slices`), its tiles' step count: fewer than `steps`
    where a split dim's share is short (14 rows over 4 tiles of 4, 4, 4, 2 rows in
    steps of 1 row), more where its pieces are cut finer."""
    edges: tuple[tuple[int, RunSteps, tuple[tuple[int, ...] | None, ...]], ...] = ()
    """The remainder steps (`edge_slices`, `_share_edges`): per share (0: tile 0's) and
    combination of the loop dims whose last piece is shorter than the others, the steps
    at the last index of those dims and the node slices there (each node's from the
    share's first tile that runs it)."""
    crossing: tuple[tuple[tuple[RunSteps, tuple[tuple[int, ...] | None, ...]], ...],
                    ...] = ()
    """Per busy tile (where `runs` is set), the steps that cut a node's window short of
    its slice at the other steps of a dim - a Concatenate input the step's rows leave
    at a boundary (Swin's 3 + 53 rows over 7-row steps: tile 0's first step loads 4
    rows of the second input, the others 7) - and the node slices there (None: the
    tile's own), per (dim, index) (`_crossing_steps`); a short last piece is
    `edges`'."""
    hops: dict[int, tuple[int, ...]] = field(default_factory=dict)
    """Per node of `multicast`, per busy tile, the mesh hops from its source (0: the
    source itself, or a tile loading none of it): a delivery ends `hops` NoC hops after
    the read (`cost.multicast_done`)."""
    ragged: frozenset[int] = frozenset()
    """The nodes whose windows the busy tiles of a share do not all move alike
    (`_ragged`)."""
    inner: int = 0
    """Under `Candidate.interchange`, tile 0's anchor steps inside each reduction piece
    (the partial-sum copies); 0 in the default order."""
    ahead: frozenset[int] = frozenset()
    """Under `Candidate.interchange`, the loads issued a step early at the first anchor
    step of each reduction piece after the first (`steps.Step.ahead`, `steps.lead`)."""


def _step_pieces(cand: Candidate, tile: Window, granules) -> list[list[tuple[int, int]]]:
    return [piece_bounds(hi - lo, s, g)
            for (lo, hi), s, g in zip(tile.pairs(), cand.split, granules, strict=True)]


def _reduce_pieces(cand: Candidate, reduce: Window | None) -> list[list[tuple[int, int]]]:
    """The pieces in time of a tile's reduction window (none without a reduction cut)."""
    if cand.reduce is None:
        return []
    return reduce_pieces(reduce, cand.reduce)


class Propagator:
    """`propagate` on one spec with a cache (the search asks the same windows often), and
    what a data split derives from a candidate's sharding and reduction cut alone
    (`sharded`: every split of a sharding shares it)."""

    def __init__(self, spec: GroupSpec):
        self.spec = spec
        self.cache: dict = {}
        self.moves: dict = {}
        self.shardings: dict = {}
        self.memo = SweepMemo()

    def __call__(self, anchor: Window, reduce=None):
        key = (anchor, None if reduce is None else tuple(reduce.items()))
        found = self.cache.get(key)
        if found is None:
            found = self.cache[key] = propagate(self.spec, anchor, reduce, self.memo)
        return found

    def moved(self, anchor: Window, reduce=None) -> tuple:
        """`moving(spec, self(anchor, reduce).loops)`, cached like the windows (a
        tile's walks along its dims meet the same steps again from candidate to
        candidate: BERT-base's Gemm over uneven shares asks 71 000, 15 000 distinct)."""
        key = (anchor, None if reduce is None else tuple(reduce.items()))
        found = self.moves.get(key)
        if found is None:
            found = self.moves[key] = moving(self.spec, self(anchor, reduce).loops)
        return found

    def sharded(self, cand: Candidate, config: TX8Config) -> _Sharded:
        """`_Sharded` of `cand`'s sharding and reduction cut (cached)."""
        key = (cand.sharding, cand.reduce)
        found = self.shardings.get(key)
        if found is None or found.config is not config:
            found = self.shardings[key] = _Sharded(self.spec, cand, config, self)
        return found


class _Sharded:
    """What `data_split` derives from a candidate's sharding and reduction cut alone:
    the tile shares, tile 0's share of every node, whether the nodes can make the
    sharding's cuts (`shard_error`, the Infeasible message; when set, nothing else),
    whether two tiles store an element of an intermediate value twice
    (`tile_store_error`), the busy tiles' windows (`moving`) and their multicast loads
    (each window's highest tile its source: `multicast_loads` without step counts), and
    which of them move less of a node than a peer of their shape (`_clipped`)."""

    def __init__(self, spec: GroupSpec, cand: Candidate, config: TX8Config, propagate):
        self.config = config
        self.shares = tiles(spec, cand, config)
        self.busy = [t for t in self.shares if not t.anchor.is_empty()]
        self.active = len(self.busy)
        first = self.shares[0]
        self.share = propagate(first.anchor, reduce_at(cand, first.reduce))
        self.block = _channel_blocks(spec, config, _cuts_inside_blocks(spec, cand, config))
        self.shard_error = None
        try:
            check_cuts(spec, propagate(Window.whole(spec.anchor_shape)), self.share, "shard",
                       self.block)
        except Infeasible as e:
            self.shard_error = str(e)
            return  # data_split goes no further
        self.tile_store_error = _tile_store_clash(spec, cand, self.shares, self.share,
                                                  propagate)
        self.windows = [propagate.moved(t.anchor, reduce_at(cand, t.reduce))
                        for t in self.busy] if len(self.busy) > 1 else []
        self.multicast = multicast_loads(spec, self.busy, self.windows, config)
        self.clipped = _clipped(self.busy, self.windows)
        self.absent = tuple(frozenset(n for n, w in enumerate(loops) if w is None)
                            for loops in self.windows)


def _clipped(busy, windows) -> frozenset[int]:
    """The positions of the busy tiles whose share's window of some node is smaller
    than another busy tile's of the same anchor shape (a halo cut at the image's
    border): only theirs can have smaller step slices than the largest
    (`_source_shares`). Empty with one busy tile (`windows` empty)."""
    if not windows:
        return frozenset()
    widest: dict[tuple, list] = {}
    shapes = []
    for tile, loops in zip(busy, windows, strict=True):
        mine = [None if w is None else w.shape for w in loops]
        shapes.append(mine)
        _widen(widest.setdefault(tile.anchor.shape, list(mine)), mine)
    return frozenset(k for k, (tile, mine) in enumerate(zip(busy, shapes, strict=True))
                     if any(a is not None and a != b for a, b in
                            zip(mine, widest[tile.anchor.shape], strict=True)))


def _ragged(windows, share_of) -> frozenset[int]:
    """The nodes whose window the busy tiles of one share (`Split.shares`: the estimate
    times them alike, at the share's slices) do not all move alike: a halo cut at the
    image's border (ResNet-50's stem reads 18 x 30 image pixels on a corner tile, 23 x
    33 inside, all of one share). Such tiles' DMAs take different times, so on the
    chip they drift out of step (`_run_lanes`' `setups`); tiles of different shares,
    and those moving none of a node (a Concatenate input, a Split piece: `absent`), are
    classes of their own already. Empty with one busy tile (`windows` empty)."""
    out: set[int] = set()
    first: dict[tuple[int, int], tuple] = {}  # (share, node) -> the first window shape
    for loops, share in zip(windows, share_of or (0,) * len(windows), strict=True):
        for n, w in enumerate(loops):
            if w is not None and first.setdefault((share, n), w.shape) != w.shape:
                out.add(n)
    return frozenset(out)


def _widen(best: list, shapes) -> None:
    """Widen `best` (per node a shape or None) in place to hold `shapes` too, dim by
    dim (a node of another rank in `shapes` replaces its entry; None widens nothing)."""
    for n, shape in enumerate(shapes):
        if shape is not None and (best[n] is None or len(best[n]) != len(shape)):
            best[n] = shape
        elif shape is not None:
            best[n] = tuple(map(max, best[n], shape))


def data_split(spec: GroupSpec, cand: Candidate, config: TX8Config,
               propagate=None) -> Split:
    """Largest slices, run counts and window shapes of a candidate (see the module
    docstring); raises `Rejected` when a node cannot make the cut."""
    if not spec.sliceable and (cand.reduce is not None
                               or any(f > 1 for f in cand.sharding + cand.split)):
        raise Rejected("the group can only run whole: a node lies neither upstream of "
                       f"{spec.nodes[spec.anchor].label} nor stores a value it computes")
    propagate = propagate or Propagator(spec)
    granules = anchor_granules(spec, config)
    sharded = propagate.sharded(cand, config)
    shares = sharded.shares
    first = shares[0]
    pieces = _step_pieces(cand, first.anchor, granules)
    reduce_pieces = _reduce_pieces(cand, first.reduce)
    step_counts = [len(p) for p in pieces] + [len(p) for p in reduce_pieces]
    if sharded.shard_error is not None:
        raise Rejected(sharded.shard_error)
    error = interchange_error(spec, cand)
    if error is not None:
        raise Rejected(error)
    try:
        samples = []
        for which in ("first", "middle", "last"):
            anchor, red = _sample(first, pieces, reduce_pieces, which)
            w = propagate(anchor, reduce_at(cand, red))
            check_cuts(spec, sharded.share, w, "split", sharded.block)
            samples.append(w)
    except Infeasible as e:
        raise Rejected(str(e)) from None
    _check_side_stores(spec, cand, first, pieces, reduce_pieces, samples[0], propagate)
    if sharded.tile_store_error is not None:
        raise Rejected(sharded.tile_store_error)
    sizes = samples + [propagate(a, reduce_at(cand, r))
                       for a, r in _interior(spec, cand, pieces, reduce_pieces, first)]
    sizes += _covering_samples(spec, cand, shares, granules, sizes, propagate)
    slice_shapes, value_shapes, result_shapes = _largest(spec, sizes)
    counts = _run_counts(spec, cand, first, pieces, reduce_pieces, samples[0], propagate)
    steps = math.prod(step_counts) if step_counts else 1
    busy = sharded.busy
    absent = sharded.absent
    share_of, share_slices, share_steps = _share_slices(spec, cand, busy, slice_shapes,
                                                        granules, propagate, absent)
    uneven = any(n != steps for n in share_steps)
    shared, senders = sharded.multicast
    if uneven and shared:  # the source of a load run at many steps may move
        tile_steps = [share_steps[k - 1] if k else steps for k in share_of]
        shared, senders = multicast_loads(spec, busy, sharded.windows, config, tile_steps,
                                          counts)
    hops = {n: tuple(mesh_hops(busy[k].index, t.index, config) for t, k in zip(busy, source))
            for n, source in senders.items()}
    share_of, share_slices, share_steps = _source_shares(
        spec, cand, busy, senders, sharded.clipped, slice_shapes,
        (share_of, share_slices, share_steps), granules, propagate)
    edges = ()
    for k in range(len(share_slices) + 1):
        members = [p for p, s in enumerate(share_of or (0,) * len(busy)) if s == k]
        edges += _share_edges(spec, cand, [busy[p] for p in members] or [first],
                              [absent[p] for p in members] if any(absent) else [],
                              k, granules, propagate)
    runs, crossing = (), ()
    if cand.interchange:
        if uneven or any(edges for _, _, edges in edges) or _short_dims(
                pieces + reduce_pieces):
            raise Rejected("the interchanged order runs whole pieces only")
        runs, inner, ahead = _interchanged_runs(spec, cand, busy or [first],
                                                absent or (frozenset(),), config, propagate)
        if inner > INTERCHANGED_STEPS:
            raise Rejected(f"the interchanged order runs at most {INTERCHANGED_STEPS} "
                           "anchor steps inside the reduction's pieces")
        first_runs = dict(runs[0])
        counts = tuple(run_count(first_runs[n.index], steps) if n.index in first_runs
                       else count for n, count in zip(spec.nodes, counts, strict=True))
    elif uneven or any(absent) or any(
            loop is None for w in sizes for loop in moving(spec, w.loops)):
        runs, crossing = _piece_runs(spec, cand, busy or [first], absent or (frozenset(),),
                                     granules, propagate, uneven)
    return Split(tuple(slice_shapes), counts, value_shapes, result_shapes, sharded.active,
                 steps, shared, senders, absent if any(absent) else (), runs, share_of,
                 share_slices, share_steps, edges, crossing if any(crossing) else (), hops,
                 _ragged(sharded.windows, share_of), inner if cand.interchange else 0,
                 ahead if cand.interchange else frozenset())


INTERCHANGED_STEPS = 2
"""The most anchor steps an interchanged candidate (`Candidate.interchange`) may run
inside each reduction piece. At 2 the estimate is within 1 % of cmodel v2 (a BERT-base
FFN-down Gemm + Add + LayerNorm alone: 66 785 against 67 050 cycles); at 4 it was 0.907
of it (66 407 against 73 199; BERT-base's 11 FFN-down groups 0.883 in the model), a gap
not yet explained, so such plans are not offered (bench/README.md, branch
interchange)."""


EDGE_DIMS = 3
"""Loop dims with a short last piece up to which `edge_slices` sizes the remainder
steps (2^3 - 1 combinations); beyond, every step keeps the largest slices."""


def edge_slices(spec, cand, tile, share: int, granules, propagate
                ) -> tuple[tuple[int, RunSteps, tuple], ...]:
    """`Split.edges` of one share (`tile` its first tile). `piece_bounds` makes every
    piece of a dim but the last as long: 13 rows in 2 steps are 7 + 6, and the steps
    at the last index of such a dim move and compute less (cmodel v2 runs the lowered
    windows: Swin's LayerNorm over 13-row shares stores 10 752 then 9 216 bytes). Per
    non-empty set of those dims (the last index of each, the other dims at their first
    and middle index, never their short last one): the steps (a `RunSteps` pattern) and
    the largest node slices over those samples. Empty when every dim's pieces are
    alike."""
    pieces = _step_pieces(cand, tile.anchor, granules) + _reduce_pieces(cand, tile.reduce)
    short = _short_dims(pieces)
    if not short or len(short) > EDGE_DIMS:
        return ()
    anchor_dims = len(cand.split)
    strides = [math.prod(len(p) for p in pieces[d + 1:]) for d in range(len(pieces))]
    out = []
    for mask in range(1, 1 << len(short)):
        at_last = {d for k, d in enumerate(short) if mask >> k & 1}
        options = [[len(p) - 1] if d in at_last else sorted(
            {0, len(p) // 2} - ({len(p) - 1} if d in short else set()))
            for d, p in enumerate(pieces)]
        samples = [propagate(*_at_index(tile, pieces, anchor_dims, index, cand))
                   for index in product(*options)]
        pattern = tuple((strides[d], len(pieces[d]), frozenset({len(pieces[d]) - 1}))
                        for d in sorted(at_last))
        out.append((share, pattern, tuple(_largest(spec, samples)[0])))
    return tuple(out)


def _share_edges(spec, cand, members, never, share: int, granules, propagate
                 ) -> tuple[tuple[int, RunSteps, tuple], ...]:
    """`edge_slices` of a share (its busy tiles `members`, in index order, and per tile
    the nodes it never runs, `never`; empty: each runs every node): its first tile's,
    each node it never runs sized by the first tile of the share that runs it (a tile
    of each other set of nodes never run). The first tile's alone left such a node at
    its whole slice at the short last steps: a Split's column tiles in steps of 13, 13,
    13 and 11 rows, tile 0 storing only the first piece, stored the other pieces' 11
    rows as 13 on the tiles that store them (1.008 of cmodel v2 over one row band, 1.01
    on ViT's q/k/v Split)."""
    out = [list(e) for e in edge_slices(spec, cand, members[0], share, granules,
                                         propagate)]
    seen = {never[0]} if never else set()
    for tile, nodes in zip(members, never, strict=False):
        if nodes in seen or not any(slices[n] is None and n not in nodes
                                    for _, _, slices in out for n in range(len(slices))):
            continue
        seen.add(nodes)
        theirs = dict((pattern, slices) for _, pattern, slices in
                      edge_slices(spec, cand, tile, share, granules, propagate))
        for entry in out:
            other = theirs.get(entry[1])
            if other is not None:
                entry[2] = tuple(o if mine is None and n not in nodes else mine
                                 for n, (mine, o) in enumerate(zip(entry[2], other,
                                                                   strict=True)))
    return tuple(tuple(e) for e in out)


def _short_dims(pieces) -> list[int]:
    """The dims (of per-dim step `pieces`) whose last piece is shorter than the others
    (`piece_bounds` makes every piece but the last as long)."""
    return [d for d, p in enumerate(pieces)
            if len(p) > 1 and p[-1][1] - p[-1][0] < p[0][1] - p[0][0]]


def _at_index(tile, pieces, anchor_dims: int, index, cand):
    """(anchor window, reduction windows) of the step at `index` (per dim of `pieces`:
    the anchor's split dims, then the reduction's), for `propagate`."""
    anchor, red = _at(tile, pieces[:anchor_dims], pieces[anchor_dims:], index)
    return anchor, reduce_at(cand, red)


def moving(spec: GroupSpec, loops: tuple) -> tuple:
    """A step's node windows `loops` with None for each load or store whose window is
    empty: it moves nothing, and the lowering issues no DMA for it (a Concatenate input
    outside a tile's rows: Swin's shifted windows), so it runs there no more than a
    Split piece's store another tile runs (None). Guarantees: the other windows are
    `loops`' own."""
    empty = [i for i in spec.transfers if loops[i] is not None and loops[i].is_empty()]
    if not empty:
        return loops
    out = list(loops)
    for i in empty:
        out[i] = None
    return tuple(out)


def _share_slices(spec, cand, busy, largest, granules, propagate, absent=()
                  ) -> tuple[tuple[int, ...], tuple[tuple, ...], tuple[int, ...]]:
    """(`Split.shares`, `Split.share_slices`, `Split.share_steps`): the busy shares whose
    shape is not tile 0's (a dim the tiles do not divide evenly leaves the last tile
    less), or whose tiles never run other nodes than other tiles of their shape
    (`absent`, per busy tile: the inputs of a Concatenate outside their rows or
    channels, the pieces of a Split) and move other slices of those they run than the
    shape's reference (`_apart_by_slices`: tile 0's shape, `largest`; another, each
    node's widest slice over its tiles), each with its largest slices (`_tile_slices`)
    and its step count. Tiles that run other inputs of a Concatenate move other slices of
    them: Swin's 4-way Concatenate of 96-channel inputs over 64-channel shares loads 32
    channels of the second input on one share and 64 on the next, which took the first
    share's 32 when only the anchor's shape told the shares apart (0.91 of cmodel v2);
    in a smaller share too (Swin's 2-input Concatenate over 4 x 4 tiles: the last row
    band's first tile loads one column of the second input, its peers four; 0.948 of
    cmodel v2). Tile 0 itself, when tiles of its shape run other nodes and its own
    slices are smaller than `largest` (the second input's one column where its peers
    move four, which `largest` took from the anchor's interior), is a share of its own
    with its own slices, and `slice_shapes` then serves the peers that move the
    largest. A node the first tile of a share moves nothing of (`moving`: another
    Concatenate input than its own) takes its slice from the next tile of the share
    that does; one none of them runs keeps `largest`'s. Empty when every busy share has
    tile 0's shape and nodes."""
    def anchor(tile):
        return tile.anchor.shape, None if tile.reduce is None else tile.reduce.shape

    keys = [anchor(t) for t in busy]
    if any(absent):
        keys = _apart_by_slices(spec, cand, busy, keys, absent, largest, granules,
                                propagate)
    kinds = {anchor(busy[0]): 0} if busy else {}  # 0: tile 0's shape, `largest`
    for key in keys:
        kinds.setdefault(key, len(kinds))
    if len(kinds) < 2:
        return (), (), ()
    out, steps = [], []
    for k, tile in enumerate(busy):
        if kinds[keys[k]] != len(out) + 1:
            continue
        slices, count = _tile_slices(spec, cand, tile, granules, propagate)
        for j, other in enumerate(busy):  # the nodes this tile moves nothing of, from its peers
            if all(s is not None and all(s) for s in slices):
                break
            if other is not tile and keys[j] == keys[k]:
                more = _tile_slices(spec, cand, other, granules, propagate)[0]
                slices = [mine if mine is not None and all(mine) or theirs is None
                          else theirs for mine, theirs in zip(slices, more, strict=True)]
        out.append(tuple(own if own is not None and all(own) else big
                         for own, big in zip(slices, largest, strict=True)))
        steps.append(count)
    return tuple(kinds[key] for key in keys), tuple(out), tuple(steps)


def _apart_by_slices(spec, cand, busy, keys, absent, largest, granules, propagate
                     ) -> list[tuple]:
    """`keys` (per busy tile its anchor shape) with `(*key, never)` for the tiles of an
    anchor shape whose set of nodes never run (`absent`) is not the only one among the
    shape's tiles and who move another slice of a node they run than the shape's
    reference: `largest` for tile 0's shape, for another the widest slice of each node
    over the shape's tiles (one tile per set of nodes never run). The tiles left with
    the shape's key then move the reference's slices, which `_share_slices` gives their
    share (its first tile's own, the nodes it never runs from its peers). A tile's own
    first tile was the reference before: a Split's pieces over two row bands of 8 column
    tiles (ViT's q/k/v Split, 2304 columns in 320-column shares), where the second
    band's first tile stores only the first piece, compared nothing of the others, and
    its band took the last piece's slice from the tile crossing into it (64 columns
    where the two after store 320): the estimate moved 0.91 of cmodel v2's bytes."""
    groups: dict[tuple, dict[frozenset, int]] = {}  # shape -> never run -> first tile
    for k, key in enumerate(keys):
        groups.setdefault(key, {}).setdefault(absent[k], k)
    apart = set()
    for key, firsts in groups.items():
        if len(firsts) < 2:
            continue
        own = {never: _tile_slices(spec, cand, busy[k], granules, propagate)[0]
               for never, k in firsts.items()}
        if key == keys[0]:
            reference = largest
        else:
            reference = [None] * len(largest)
            for slices in own.values():
                _widen(reference, [s if s is not None and all(s) else None
                                   for s in slices])
        apart |= {(key, never) for never, slices in own.items() if any(
            n not in never and s is not None and all(s) and big is not None and all(big)
            and s != big for n, (s, big) in enumerate(zip(slices, reference, strict=True)))}
    return [(*key, never) if (key, never) in apart else key
            for key, never in zip(keys, absent, strict=True)]


def _source_shares(spec, cand, busy, senders, clipped, largest, shares, granules,
                   propagate) -> tuple[tuple[int, ...], tuple[tuple, ...], tuple[int, ...]]:
    """`shares` (`Split.shares`, `share_slices`, `share_steps`) with each multicast
    source of tile 0's share whose own slices are smaller than `largest` a share of its
    own (sources of equal slices, one). The lowering's source of a window is its highest
    tile (`multicast_loads`), so the source of a load every tile shares is the last tile
    of every sharded dim: at the border of a Conv's image it reads no halo past the
    edge, and a tile class times its tiles' loads (mobilenet_block's Conv+Clip over 2 x 8
    tiles: tile 15 loads 3 columns of 4 plus halo, 169 and 156 cycles where an interior
    tile takes 196; it reads the weights first and ends the group, 1.078 of cmodel v2
    with the interior's slices). Guarantees: the other tiles keep their shares; only
    sources that stream a load to another tile and move less than a peer over their
    whole share (`clipped`) are looked at."""
    share_of, share_slices, share_steps = shares
    sources = sorted({k for source in senders.values() for j, k in enumerate(source)
                      if j != k and k in clipped})
    if not sources:
        return shares
    share_of = list(share_of or (0,) * len(busy))
    out, steps = list(share_slices), list(share_steps)
    for k in sources:
        if share_of[k]:
            continue
        own, count = _tile_slices(spec, cand, busy[k], granules, propagate)
        own = tuple(mine if mine is not None and all(mine) else big
                    for mine, big in zip(own, largest, strict=True))
        if own == tuple(largest) or not all(
                mine is None or big is None or len(mine) == len(big)
                and all(a <= b for a, b in zip(mine, big, strict=True))
                for mine, big in zip(own, largest, strict=True)):
            continue
        if own not in out:
            out.append(own)
            steps.append(count)
        share_of[k] = out.index(own) + 1
    if not out:
        return shares
    return tuple(share_of), tuple(out), tuple(steps)


def _tile_slices(spec, cand, tile, granules, propagate) -> tuple[list, int]:
    """A tile's largest node slices over its first, middle and last step and, where a
    dim's last piece is short, the last step of whole pieces (`_sample`'s "whole"), and
    its step count. A node that only the last steps run (a store of a Split's last
    piece, at the last column step) was otherwise sized at the short last row step only:
    ViT's q/k/v Split over 4 x 4 tiles of 50 rows in steps of 13, 13, 13 and 11 stored
    the third piece's 13-row windows as 11 rows on the tiles crossing into it."""
    pieces = _step_pieces(cand, tile.anchor, granules)
    reduce_pieces = _reduce_pieces(cand, tile.reduce)
    which = ("first", "middle", "last")
    if _short_dims(pieces + reduce_pieces):
        which += ("whole",)
    samples = [propagate(a, reduce_at(cand, r)) for a, r in (
        _sample(tile, pieces, reduce_pieces, w) for w in which)]
    return _largest(spec, samples)[0], math.prod(len(p) for p in pieces + reduce_pieces)


def multicast_loads(spec: GroupSpec, busy, windows, config: TX8Config,
                    steps: list[int] | None = None, counts: tuple[int, ...] = ()
                    ) -> tuple[dict[int, tuple[int, int]], dict[int, tuple[int, ...]]]:
    """The loads several `busy` tiles (with their share's node `windows`) make with the
    same window: per load node, (the distinct windows, the most mesh hops from a
    window's source - its highest tile, the lowering's choice - to another tile loading
    it)), and per such node, per busy tile, its source's position in `busy` (its own
    where its window is None: it loads nothing of it). Empty without `noc_multicast`.
    `steps`: per busy tile its step count; `counts`: per node its run count (tile
    0's). The lowering's source at a step is the highest tile that loads the window
    then: a tile of a share with fewer steps (BERT's last 64 of 2304 columns: 4 steps,
    its peers 20) stops after its last, and the highest tile that runs them all takes
    over, so that tile is the source here of a load run at more than one step (the DDR
    reads the same bytes at each step either way); a load run once (at the first step,
    which every tile has) keeps the highest tile. A resident load is never multicast."""
    loads = [n.index for n in spec.nodes if n.kind == "load" and not n.resident]
    if not config.noc_multicast or not loads or len(busy) < 2:
        return {}, {}
    out, senders = {}, {}
    position = {t.index: k for k, t in enumerate(busy)}
    for n in loads:
        sharing: dict[Window, list[int]] = {}
        for t, loops in zip(busy, windows, strict=True):
            if loops[n] is not None:  # None: the tile loads nothing of it (`moving`)
                sharing.setdefault(loops[n], []).append(t.index)
        if len(sharing) == sum(map(len, sharing.values())):
            continue  # every tile that loads it loads its own window
        repeated = steps and counts and counts[n] > 1
        sender = {key: max(group, key=lambda t: (steps[position[t]] if repeated else 0, t))
                  for key, group in sharing.items()}
        hops = max(mesh_hops(sender[key], other, config) for key, group in sharing.items()
                   for other in group)
        out[n] = (len(sharing), hops)
        source = {t: position[sender[key]] for key, group in sharing.items() for t in group}
        senders[n] = tuple(source.get(t.index, k) for k, t in enumerate(busy))
    return out, senders


@dataclass(frozen=True)
class TileClass:
    """Busy tiles that do the same work (`tile_classes`): how many, the nodes they never
    run, and per multicast load they receive, the class of its source tile."""

    size: int
    absent: frozenset[int] = frozenset()
    receives: tuple[tuple[int, int], ...] = ()
    runs: tuple[tuple[int, RunSteps], ...] = ()
    """The steps at which its tiles run the nodes of `Split.runs` (the others: by their
    task's count)."""
    share: int = 0
    """Its tiles' share slices (`Split.shares`: 0, the tasks' own)."""
    steps: int = 0
    """Its tiles' step count where their share has another than tile 0's
    (`Split.share_steps`; 0: the schedule's). Its `runs` then give every node's steps."""
    crossing: tuple[tuple[RunSteps, tuple[tuple[int, ...] | None, ...]], ...] = ()
    """Its tiles' steps that cut a node's window short (`Split.crossing`)."""
    reach: tuple[tuple[int, int], ...] = ()
    """Per multicast load it receives, its tiles' mesh hops from the source (`Split.hops`:
    equal on all of them, `tile_classes`): its deliveries end those hops after the read
    (`cost.multicast_done`)."""


def tile_classes(split: Split, multicast: frozenset[int]) -> tuple[TileClass, ...]:
    """The busy tiles grouped by the work they do: the nodes they never run (the pieces
    of a Split other tiles store), the steps at which they run the nodes some steps do
    not run (`Split.runs`) and, per load in `multicast`, whether they read it from DDR
    (the source) or receive it over the NoC, and over how many mesh hops (`Split.hops`).
    Tiles of one class run the same instructions at the same times; different classes
    run side by side and share the DDR (`estimate`). One class when every tile does the
    same work.

    A multicast's receivers at other distances from its source are classes of their
    own: each NocCopy ends its own hops after the read (`cost.multicast_done`), so they
    run their steps apart, and one tile's DMA setup falls while others stream. Which
    setups the others' streams hide follows from their times on the shared DDR: tiles
    of one distance start and end together, and the groups of tiles at each distance
    drift apart or together as the DDR's share changes, which no one class's spread
    says (Swin's LayerNorm over 16 tiles, its gamma and beta multicast from tile 15,
    stores back to back: 0.906 of cmodel v2 as one class whose spread grew past the
    setup and hid all of it; cmodel v2's tiles at 6 distances hide about as much as
    their delivery spread, 40 cycles of 64)."""
    senders = {n: split.senders[n] for n in multicast if n in split.senders}
    if not (senders or split.absent or any(split.runs) or split.shares or split.crossing):
        return (TileClass(max(1, split.tiles)),)
    busy = max(len(split.absent), len(split.runs), len(split.shares),
               max((len(s) for s in senders.values()), default=0))
    keys = [(split.absent[k] if split.absent else frozenset(),
             frozenset(n for n, source in senders.items() if source[k] != k),
             split.runs[k] if split.runs else (),
             split.shares[k] if split.shares else 0,
             split.crossing[k] if split.crossing else (),
             tuple((n, split.hops[n][k]) for n in sorted(senders)
                   if n in split.hops and senders[n][k] != k))
            for k in range(busy)]
    order = list(dict.fromkeys(keys))
    out = []
    for key in order:
        first = keys.index(key)
        receives = tuple(sorted((n, order.index(keys[senders[n][first]])) for n in key[1]))
        own = split.share_steps[key[3] - 1] if key[3] else 0
        members = sum(1 for other in keys if other == key)
        out.append(TileClass(members, key[0], receives, key[2], key[3],
                             own if own != split.steps else 0, key[4], key[5]))
    return tuple(out)


def _covering_samples(spec, cand, shares, granules, samples, propagate) -> list:
    """Windows of further steps, tile by tile in loop order, until every node runs in
    one of `samples` or the steps run out. The sampled steps (tile 0's, and two places
    in the whole anchor space) miss a node that only some steps run - a store of
    another piece of a Split that is the anchor, run by the tiles or steps whose window
    reaches that piece (llama's q/k/v Split) - which would get neither a slice shape
    nor an SPM buffer. Most groups have none missing and pay one pass over the nodes."""
    moved = [moving(spec, w.loops) for w in samples]
    missing = {n.index for n in spec.nodes if all(loops[n.index] is None for loops in moved)}
    extra = []
    for tile in shares if missing else ():
        if tile.anchor.is_empty():
            continue
        for anchor, red in step_windows(tile, cand, granules):
            w = propagate(anchor, reduce_at(cand, red))
            loops = moving(spec, w.loops)
            found = {i for i in missing if loops[i] is not None}
            if found:
                extra.append(w)
                missing -= found
                if not missing:
                    return extra
    return extra


def _sample(tile, pieces, reduce_pieces, which):
    """The anchor (and reduction) window of the first, a middle or the last step, or
    ("whole") the last step whose pieces are all whole (a short last piece's dim at the
    index before)."""
    def pick(options):
        if which == "whole":
            whole = len(options) < 2 or _short_dims([options]) == []
            return options[-1 if whole else -2]
        return options[{"first": 0, "middle": len(options) // 2, "last": -1}[which]]

    anchor = Window.of([(lo + a, lo + b) for (lo, _), (a, b) in
                        zip(tile.anchor.pairs(), (pick(p) for p in pieces), strict=True)])
    red = None
    if reduce_pieces:
        red = Window.of([(lo + a, lo + b) for (lo, _), (a, b) in
                         zip(tile.reduce.pairs(), (pick(p) for p in reduce_pieces),
                             strict=True)])
    return anchor, red


def _interior(spec, cand, pieces, reduce_pieces, tile):
    """The largest step placed in the middle and at the end of the whole anchor space
    (an interior tile's slices carry halos on both sides; tile 0's do not)."""
    shape = [max(b - a for a, b in p) for p in pieces]
    out = []
    for where in ("middle", "last"):
        pairs = []
        for size, n in zip(spec.anchor_shape, shape, strict=True):
            start = (size - n) if where == "last" else ((size // 2) // max(1, n)) * n
            start = max(0, min(start, size - n))
            pairs.append((start, start + n))
        red = None
        if reduce_pieces:
            red = Window.of([(lo + p[0][0], lo + p[0][1]) for (lo, _), p in
                             zip(tile.reduce.pairs(), reduce_pieces, strict=True)])
        out.append((Window.of(pairs), red))
    return out


def _cuts_inside_blocks(spec: GroupSpec, cand: Candidate, config) -> bool:
    """Whether `cand` cuts a reduction inside its operands' channel blocks
    (`steps.cuts_inside_blocks`)."""
    return cand.reduce is not None and cuts_inside_blocks(spec, cand.reduce, config)


def _channel_blocks(spec: GroupSpec, config, inside: bool = False
                    ) -> dict[ValueRef, tuple[int, int]]:
    """The channel-aligned values a DMA moves - what a load brings into SPM and what a
    store writes back - are cut on whole channel blocks with C above the plain-NHWC
    threshold (seed 003 alignCx); below it their channels are never cut.

    Departs from the seed: a value computed and read in SPM only is cut anywhere. Its
    buffer holds its window as a tensor of the window's own shape (its blocks start at
    the window's first channel, the last one padded), so no block of a DDR tensor is
    cut; the kernels read whole buffers. Requiring blocks there left the ResNet-50
    stem (ChannelNorm's aligned (1, 3, 224, 224) output is blocked along W by 64, and
    the halo of Conv 7x7 / 2 and Pool 3x3 / 2 never ends a W window on a block) cut
    only along H, where every time step recomputes a Conv row for the Pool's halo
    (bench/README.md "ResNet-50 under 1.5"). `inside` (a reduction cut inside the
    blocks, `_cuts_inside_blocks`): a loaded value is cut on its
    `loaded_channel_granule` (the DMA reads part of each block); a stored one keeps
    whole blocks (the DDR tensor's readers read them whole)."""
    loaded = {ValueRef(n.index, r) for n in spec.nodes if n.kind != "compute"
              for r in range(len(n.results))}
    stored = {n.inputs[0] for n in spec.nodes if n.kind == "store"}
    blocks = {}
    for n in spec.nodes:
        for r, value in enumerate(n.results):
            ref = ValueRef(n.index, r)
            if not value.aligned or not value.shape or ref not in loaded | stored:
                continue
            fine = inside and ref not in stored
            granule = (loaded_channel_granule if fine else channel_granule)(value, config)
            blocks[ref] = (len(value.shape) - 1, granule)
    return blocks


def _largest(spec, samples):
    """Per node, result and value read, the largest shape over the samples (computed in
    `propagate.largest_shapes`, which keeps each sample's shapes with its windows)."""
    return largest_shapes(spec, samples)


def _check_side_stores(spec, cand, first, pieces, reduce_pieces, origin, propagate
                       ) -> None:
    """A store of an intermediate value must not write one element twice: its windows of
    neighbouring steps must not overlap (a halo the next node reads is recomputed, not
    stored again; equal windows of two steps are one store: it runs once). Neighbouring
    tiles: `_tile_store_clash`."""
    side = [n.index for n in spec.nodes if n.kind == "store"]
    if not side:
        return
    dims = pieces + reduce_pieces
    for d, options in enumerate(dims):
        if len(options) >= 2:
            index = [0] * len(dims)
            index[d] = 1
            anchor, red = _at(first, pieces, reduce_pieces, index)
            error = _stores_twice(spec, side, origin, propagate(anchor, reduce_at(cand, red)),
                                  False)
            if error is not None:
                raise Rejected(error)


def _tile_store_clash(spec, cand, shares, share0, propagate) -> str | None:
    """Why two tiles would store an element of an intermediate value twice (None: they
    never do): equal windows of two tiles are two stores of the same elements (each
    tile runs its own: a LayerNorm's result stored beside the Gemm that reads it, with
    the Gemm's output columns cut over the tiles)."""
    side = [n.index for n in spec.nodes if n.kind == "store"]
    if not side:
        return None
    first = shares[0]
    for tile in shares[1:]:
        if tile.anchor != first.anchor:
            error = _stores_twice(spec, side, share0,
                                  propagate(tile.anchor, reduce_at(cand, tile.reduce)), True)
            if error is not None:
                return error
    return None


def _stores_twice(spec, side, a, b, other_tile: bool) -> str | None:
    """The error when a store of `side` writes an element in both node windows `a` and
    `b` (of two steps, or of two tiles)."""
    for n in side:
        wa, wb = a.loops[n], b.loops[n]
        if wa is not None and wb is not None and (other_tile or wa != wb) and \
                not wa.intersect(wb).is_empty():
            return f"{spec.nodes[n].label} would store an element twice"
    return None


def _run_counts(spec, cand, tile, pieces, reduce_pieces, origin, propagate
                ) -> tuple[int, ...]:
    """How many steps of the tile run each node: the product of the step counts of the
    loop dims up to the innermost one its window depends on."""
    dims = [p for p in pieces] + [p for p in reduce_pieces]
    depends: list[set[int]] = [set() for _ in spec.nodes]
    for d, options in enumerate(dims):
        if len(options) < 2:
            continue
        index = [0] * len(dims)
        index[d] = 1
        anchor, red = _at(tile, pieces, reduce_pieces, index)
        moved = propagate(anchor, reduce_at(cand, red))
        for n in spec.nodes:
            if moved.loops[n.index] != origin.loops[n.index]:
                depends[n.index].add(d)
    counts = []
    for n in spec.nodes:
        if not depends[n.index]:
            counts.append(1)
            continue
        innermost = max(depends[n.index])
        counts.append(math.prod(len(dims[d]) for d in range(innermost + 1)))
    return tuple(counts)


def _piece_runs(spec, cand, busy, absent: tuple[frozenset[int], ...], granules,
                propagate, every: bool = False
                ) -> tuple[tuple[tuple[tuple[int, RunSteps], ...], ...], tuple]:
    """(`Split.runs`, `Split.crossing` from the same walks: `_crossing_steps`). Runs: per
    busy tile, the steps at which it runs each node it runs at some steps and not at
    others (its window is None there), and each node tile 0 never runs
    (its `counts` entry says nothing of the others). A tile's steps are walked along one
    dim at a time, the others at their first step (`_dim_walks`): a node missing from
    some steps is missing by the pieces of one dim (a Split's axis), so the walk along
    each dim says which of its indices run the node. Tiles whose shares have the same
    stepped bounds and never-run nodes (`absent`, per busy tile) run the same steps:
    walked once. `every`: some busy shares have fewer steps than tile 0's, so a task's
    count (tile 0's steps) says nothing of theirs: every node is listed."""
    late = late_nodes(spec, cand)
    walked, seen, crossing = [], {}, []
    for tile, never in zip(busy, absent, strict=True):
        pieces = _step_pieces(cand, tile.anchor, granules)
        reduce_pieces = _reduce_pieces(cand, tile.reduce)
        dims = [len(p) for p in pieces + reduce_pieces]
        key = (tuple(p for p, n in zip(tile.anchor.pairs(), dims, strict=False) if n > 1),
               tile.reduce, tuple(dims), never)
        if key not in seen:
            walks = _dim_walks(spec, cand, tile, pieces, reduce_pieces, dims, propagate)
            seen[key] = walks, _crossing_steps(walks, dims, pieces + reduce_pieces)
        walked.append((seen[key][0], dims, never))
        crossing.append(seen[key][1])
    # a node partial on one tile is listed on every tile that runs it: tile 0's count
    # says nothing of a tile that runs it at every step (a Concatenate input that tile 0
    # loads at its last step only, the others at each)
    listed = set().union(absent[0], *({n.index for n in spec.nodes
                                        if _partial(n.index, walks)} for walks, _, _ in walked))
    if every:
        listed = {n.index for n in spec.nodes}
    out, done = [], {}
    for walks, dims, never in walked:
        key = (id(walks), never)
        if key not in done:
            done[key] = tuple((n, _steps_of(n, n in late, walks, dims))
                              for n in sorted(listed - never)) if walks or every else ()
        out.append(done[key])
    return tuple(out), tuple(crossing)


def _interchanged_runs(spec, cand, busy, absent: tuple[frozenset[int], ...], config,
                       propagate
                       ) -> tuple[tuple[tuple[tuple[int, RunSteps], ...], ...], int,
                                  frozenset[int]]:
    """`Split.runs` of an interchanged candidate: per busy tile, the steps at which it
    runs every node it runs, read off the tile's exact steps (`steps.steps`, which the
    lowering and the reference run of a plan follow) along the loop dims in their order
    (the reduction's pieces outermost, then the anchor's, dim 0 outer). Under a
    reduction cut over tiles, the NoC reduction of each window (keyed `~node`,
    `_runs_key`) runs at the last piece, where what follows the reduction runs, and
    every tile is timed as its share's owner (`Schedule.owners` scales what only the
    owners stream). Tiles whose shares have the same shape and never-run nodes run the
    same steps: walked once. Also tile 0's anchor steps per reduction piece and its
    loads issued ahead (`steps.Step.ahead`)."""
    out, seen, inners = [], {}, []
    node = cand.reduce.node
    for tile, never in zip(busy, absent, strict=True):
        key = (tile.anchor.shape, None if tile.reduce is None else tile.reduce.shape, never)
        if key not in seen:
            walk = tile_steps(spec, cand, replace(tile, owner=True), config, propagate.memo)
            inner = walk[-1].inner + 1
            reduce_dims = [len(p) for p in reduce_pieces(tile.reduce, cand.reduce)]
            dims = _loop_strides(reduce_dims + [inner])
            found = []
            for n in spec.nodes:
                at = [s.index for s in walk if s.runs[n.index]]
                if at and n.index not in never:
                    found.append((n.index, _pattern(at, dims, len(walk), n.label)))
            if tile.reduce is not None and math.prod(cand.reduce.sharding) > 1:
                at = [s.index for s in walk if s.last_piece]
                found.append((~node, _pattern(at, dims, len(walk), "the NoC reduction")))
            seen[key] = tuple(found), inner, frozenset(n for s in walk for n in s.ahead)
        out.append(seen[key][0])
        inners.append(seen[key][1:])
    return (tuple(out), *inners[0])


def _loop_strides(dims: list[int]) -> list[tuple[int, int]]:
    """(stride in steps, step count) of each loop dim of more than one step (the last
    innermost)."""
    return [(stride, size) for _, size, stride in _stepped_dims(dims)]


def _pattern(at: list[int], dims: list[tuple[int, int]], total: int, what: str) -> RunSteps:
    """The `RunSteps` of a node run at steps `at` (of `total`) along loop dims `dims`
    (`_loop_strides`); `Rejected` when no product of per-dim indices gives exactly them."""
    out = []
    for stride, size in dims:
        allowed = frozenset((s // stride) % size for s in at)
        if len(allowed) < size:
            out.append((stride, size, allowed))
    pattern = tuple(out)
    if [s for s in range(total) if runs_at(pattern, s)] != at:
        raise Rejected(f"{what} runs at steps no loop pattern describes")
    return pattern


def _runs_key(t: Task, schedule: Schedule) -> int:
    """The key of task `t`'s steps in `TileClass.runs`: its node's, or in the
    interchanged order `~node` for the NoC reduction after a reduction cut over tiles
    (`_interchanged_runs`)."""
    return ~t.node if schedule.inner and t.lane == "noc" and not t.delivers else t.node


def _crossing_steps(walks: dict[int, list], dims: list[int], pieces
                    ) -> tuple[tuple[RunSteps, tuple], ...]:
    """A tile's `Split.crossing` from its walks along each dim (`_dim_walks`): per
    (dim, index) where some node's window is smaller than its largest along the walk
    (per dim), the steps at that index (a `RunSteps` pattern) and the node slices
    there, None for the others. The last index of a dim whose last piece is short is
    left to `edge_slices` (every node there is shorter)."""
    out = []
    for d, size, stride in _stepped_dims(dims):
        short = pieces[d][-1][1] - pieces[d][-1][0] < pieces[d][0][1] - pieces[d][0][0]
        walk = walks[d][:size - 1] if short else walks[d]
        at: list[list] = [[None] * len(walk[0]) for _ in walk]
        for n in range(len(walk[0])):
            shapes = [loops[n].shape for loops in walk if loops[n] is not None]
            if len(set(shapes)) < 2:
                continue
            big = tuple(map(max, *shapes))
            for i, loops in enumerate(walk):
                if loops[n] is not None and loops[n].shape != big:
                    at[i][n] = loops[n].shape
        out += [(((stride, size, frozenset({i})),), tuple(a))
                for i, a in enumerate(at) if any(x is not None for x in a)]
    return tuple(out)


def _dim_walks(spec, cand, tile, pieces, reduce_pieces, dims, propagate
               ) -> dict[int, list]:
    """Per loop dim of more than one step, the node windows at each of its indices, the
    other dims at their first step (a transfer of nothing None: `moving`)."""
    walks = {}
    first_anchor, first_red = _at(tile, pieces, reduce_pieces, [0] * len(dims))
    for d, size in enumerate(dims):
        if size > 1:  # the step windows along d: the first step's with dim d replaced
            if d < len(pieces):
                lo = tile.anchor.start[d]
                steps = [(first_anchor.replace(d, lo + a, lo + b), first_red)
                         for a, b in pieces[d]]
            else:
                e = d - len(pieces)
                lo = tile.reduce.start[e]
                steps = [(first_anchor, first_red.replace(e, lo + a, lo + b))
                         for a, b in reduce_pieces[e]]
            walks[d] = [propagate.moved(a, reduce_at(cand, r)) for a, r in steps]
    return walks


def _partial(node: int, walks: dict[int, list]) -> bool:
    """Whether the tile's walks find `node` run at some steps and not at others."""
    seen = [loops[node] is None for walk in walks.values() for loops in walk]
    return any(seen) and not all(seen)


def _steps_of(node: int, late: bool, walks: dict[int, list], dims: list[int]) -> RunSteps:
    """The steps at which the tile runs `node` (`steps.steps`' rule): where its window
    exists and differs from the previous step's (a store, or what follows a reduction:
    the next step's). Along the innermost dim its window depends on, the indices where
    it exists and changes; along outer dims, those where it exists; inner dims, their
    first (`late`: last) index."""
    depends = [d for d, walk in walks.items()
               if any(a[node] != b[node] for a, b in zip(walk, walk[1:]))]
    innermost = max(depends, default=-1)
    out = []
    for d, size, stride in _stepped_dims(dims):
        at = [loops[node] for loops in walks[d]]
        here = [i for i in range(size) if at[i] is not None] or list(range(size))
        if d > innermost:
            allowed = {size - 1 if late else 0}
        elif d < innermost:
            allowed = set(here)
        else:
            step = 1 if late else -1
            allowed = {i for i in here if not 0 <= i + step < size or at[i] != at[i + step]}
        if len(allowed) < size:
            out.append((stride, size, frozenset(allowed)))
    return tuple(out)


def _stepped_dims(dims: list[int]):
    """(dim, step count, stride in steps) of each loop dim of more than one step, the
    steps numbered with the last dim innermost."""
    stride = math.prod(dims)
    for d, size in enumerate(dims):
        stride //= size
        if size > 1:
            yield d, size, stride


def _at(tile, pieces, reduce_pieces, index):
    anchor = Window.of([(lo + p[i][0], lo + p[i][1]) for (lo, _), p, i in
                        zip(tile.anchor.pairs(), pieces, index, strict=False)])
    red = None
    if reduce_pieces:
        rest = index[len(pieces):]
        red = Window.of([(lo + p[i][0], lo + p[i][1]) for (lo, _), p, i in
                         zip(tile.reduce.pairs(), reduce_pieces, rest, strict=True)])
    return anchor, red


# --------------------------------------------------------------------------------------
# Tasks and the pipeline
# --------------------------------------------------------------------------------------


def node_lane(node, work) -> str:
    """The engine lane a node's slice runs on (shared with the lowered Program)."""
    if node.kind == "load":
        return "ld"
    if node.kind == "store":
        return "st"
    if work.engine == Engine.NE:
        return "ne"
    if work.engine == Engine.LSU:
        return "ld" if any(t.ddr for t in work.transfers) else "tdma"
    return "ct"


def tasks(spec: GroupSpec, cand: Candidate, split: Split, config: TX8Config,
          unstaged: tuple[tuple[Task, ...], dict[int, str]] | None = None) -> list[Task]:
    """One task per node that runs (and one NoC reduction when the plan cuts a reduction
    over tiles), with its lane, cycles at its largest slice, run count and stage.
    `unstaged`: `node_tasks(spec, split, config)` when the caller has it already (it
    depends on the split only: candidates differing in their pipeline share it)."""
    out, lanes = unstaged or node_tasks(spec, split, config)
    stage: dict[int, int] = {}
    if cand.pipelined:
        stage = _stages(spec, lanes, cand.deep)
        out = [replace(t, stage=stage[t.node]) for t in out]
    else:
        out = list(out)
    if cand.reduce is not None and math.prod(cand.reduce.sharding) > 1:
        node = spec.nodes[cand.reduce.node]
        ref = ValueRef(node.index, 0)
        shape = split.result_shapes.get(ref)
        if shape is not None:
            nbytes = window_bytes(shape, node.results[0], config)
            late = [split.counts[i] for i in downstream_of(spec, node.index)]
            took = _tree_cycles(spec, cand, nbytes, node.results[0].dtype, config)
            out.append(Task(node.index, "noc", took, max(late, default=1),
                            stage[node.index] if cand.pipelined else 0))
    return out


def node_tasks(spec: GroupSpec, split: Split, config: TX8Config, memo: dict | None = None
               ) -> tuple[tuple[Task, ...], dict[int, str]]:
    """The node tasks of `tasks` at stage 0, and each running node's lane. `memo`: the
    group's (node, slice shape, busy tiles) -> (work, lane, cycles, DDR cycles) of the
    slices met so far (the search's splits give most nodes slices met before)."""
    out = []
    lanes: dict[int, str] = {}
    memo = {} if memo is None else memo
    for n in spec.nodes:
        shape = split.slice_shapes[n.index]
        if shape is None or n.kind == "ddr":  # a table its readers fetch from DDR
            continue
        key = (n.index, shape, split.tiles)
        found = memo.get(key)
        if found is None:
            work = n.slicer.work(shape)
            found = memo[key] = (work, node_lane(n, work),
                                 *_work_cycles(work, split, config, n.resident))
        work, lanes[n.index], took, ddr = found
        sources, hops, nbytes = _multicast_pays(n.index, work, took, split, config)
        out.append(Task(n.index, lanes[n.index], took, split.counts[n.index], 0, ddr,
                        sources))
        if sources:
            out.append(Task(n.index, "noc", noc_multicast_cycles(nbytes, hops, config),
                            split.counts[n.index], 0, delivers=True,
                            tail=multicast_tail(hops, config)))
    return tuple(out), lanes


def _work_cycles(work, split: Split, config: TX8Config, resident: bool = False
                 ) -> tuple[int, int]:
    """(cycles, of them streaming from or to DDR at the tile's full share) of a slice's
    work with `split.tiles` tiles streaming; a `resident` load or store moves its
    window over the NoC (`cost.resident_dma_cycles`), no DDR."""
    if resident:
        return sum(resident_dma_cycles(byte_size(t.shape, t.dtype, t.layout, config), config)
                   for t in work.transfers), 0
    took = cycles(work, config, streaming_tiles=split.tiles).cycles
    ddr = sum(t.ddr for t in work.transfers) and took - config.dma_setup_cycles \
        * len(work.transfers)
    return took, max(0, ddr)


def share_costs(spec: GroupSpec, split: Split, share: int, ts: list[Task],
                config: TX8Config) -> tuple[tuple[tuple[int, str], int, int], ...]:
    """((node, lane), cycles, DDR cycles) of the node tasks `ts` on the tiles of a
    smaller share (`Split.shares`: `share` > 0) where they differ from the tasks' own
    (tile 0's share). A multicast keeps tile 0's choice (the lowering's, for every
    tile); its delivery moves this share's window."""
    return _slice_costs(spec, split, split.share_slices[share - 1], split.slice_shapes,
                        ts, config)


def edge_costs(spec: GroupSpec, split: Split, share: int, ts: list[Task],
               config: TX8Config) -> tuple[tuple[RunSteps, tuple], ...]:
    """Per remainder-step pattern of `share` (`Split.edges`), the costs
    (`share_costs`' form) of the tasks whose slices there are smaller than the share's
    own in every dim."""
    own = split.share_slices[share - 1] if share else split.slice_shapes
    out = []
    for k, pattern, slices in split.edges:
        if k != share:
            continue
        shapes = tuple(e if e is not None and all(e) and b is not None and len(e) == len(b)
                       and all(x <= y for x, y in zip(e, b, strict=True)) else None
                       for e, b in zip(slices, own, strict=True))
        costs = _slice_costs(spec, split, shapes, own, ts, config, every=True)
        if costs:
            out.append((pattern, costs))
    return tuple(out)


def crossing_costs(spec: GroupSpec, split: Split, tc: TileClass, ts: list[Task],
                   config: TX8Config) -> tuple[tuple[RunSteps, tuple], ...]:
    """Per step pattern of the tile class `tc` that cuts a node's window short
    (`TileClass.crossing`), the costs (`share_costs`' form) of the tasks there, in
    `Schedule.edges`' form."""
    own = split.share_slices[tc.share - 1] if tc.share else split.slice_shapes
    out = []
    for pattern, shapes in tc.crossing:
        costs = _slice_costs(spec, split, shapes, own, ts, config, every=True)
        if costs:
            out.append((pattern, costs))
    return tuple(out)


def _at_reach(costs, tc: TileClass, ts: list[Task], config: TX8Config, every: bool = False
              ) -> tuple[tuple[tuple[int, str], int, int], ...]:
    """`costs` (`share_costs`' form) with each delivery to the tile class `tc` at its
    tiles' own hops from the source (`TileClass.reach`): the task's cycles are the
    farthest destination's (`Task.tail` its hops' cycles), and a NoC copy takes
    `noc_hop_cycles` less a hop nearer (`cost.noc_multicast_cycles`). `every`: also the
    deliveries `costs` leaves at the task's own cycles."""
    reach = dict(tc.reach)
    if not reach:
        return costs
    out = {key: (took, ddr) for key, took, ddr in costs}
    for t in ts:
        if t.delivers and t.node in reach and (every or (t.node, t.lane) in out):
            took, ddr = out.get((t.node, t.lane), (t.cycles, 0))
            out[(t.node, t.lane)] = (took - t.tail + multicast_tail(reach[t.node], config),
                                     ddr)
    return tuple((key, took, ddr) for key, (took, ddr) in out.items())


def _slice_costs(spec: GroupSpec, split: Split, shapes, base, ts: list[Task],
                 config: TX8Config, every: bool = False
                 ) -> tuple[tuple[tuple[int, str], int, int], ...]:
    """((node, lane), cycles, DDR cycles) of the node tasks `ts` at the slices `shapes`
    (None: as the task) where the slices differ from `base`'s and the costs from the
    task's own (`every`: whether or not they do - a smaller share's remainder step may
    cost what tile 0's share does, not what its own steps do)."""
    out = []
    for t in ts:
        shape = shapes[t.node]
        if shape is None or shape == base[t.node] or (
                t.lane == "noc" and not t.delivers):
            continue
        work = spec.nodes[t.node].slicer.work(shape)
        if t.delivers:
            hops = split.multicast[t.node][1]
            cost = (noc_multicast_cycles(cycles(work, config).bytes, hops, config), 0)
        else:
            cost = _work_cycles(work, split, config, spec.nodes[t.node].resident)
        if every or cost != (t.cycles, t.ddr):
            out.append(((t.node, t.lane), *cost))
    return tuple(out)


def _multicast_pays(node: int, work, alone: int, split: Split, config: TX8Config
                    ) -> tuple[int, int, int]:
    """(streams, mesh hops, bytes) of the NoC delivery when the load `node` is
    multicast, else (0, 0, 0): a load shared by several tiles is multicast when its
    delivery (`cost.multicast_done`, cut-through, the destination ready when the read
    starts) ends before the DMA at every tile's share of the DDR (`alone`): a small
    window, whose DMA is mostly setup, loses the delivery's setup and hops."""
    sources, hops = split.multicast.get(node, (0, 0))
    if not sources:
        return 0, 0, 0
    shared = cycles(work, config, streaming_tiles=sources)
    done = multicast_done(0, shared.cycles, 0, shared.bytes, hops, config)
    return (sources, hops, shared.bytes) if round(done) < alone else (0, 0, 0)


def _tree_cycles(spec: GroupSpec, cand: Candidate, nbytes: int, dtype: str,
                 config: TX8Config) -> int:
    """The NoC rounds of a partial sum on the slowest owner of the reduction tree
    (`steps.reduce_tree`): one transfer and add per child, at its mesh distance (a
    child's own rounds run beside the owner's earlier ones)."""
    children = reduce_tree(tiles(spec, cand, config))
    return max((sum(noc_transfer_cycles(nbytes, dtype, mesh_hops(t, c, config), config)
                    for c in kids) for t, kids in children.items()), default=0)


def _stages(spec: GroupSpec, lanes: dict[int, str], deep: bool) -> dict[int, int]:
    """Each running node's pipeline stage: loads 0, stores last, compute 1 - or, `deep`,
    1 plus the engine changes on the longest path to it from the loads."""
    stage: dict[int, int] = {}
    for n in spec.nodes:
        if n.index not in lanes or n.kind == "store":
            continue
        if n.kind == "load" and lanes[n.index] == "ld":
            stage[n.index] = 0
            continue
        stage[n.index] = 1
        if deep:
            for ref in n.inputs:
                p = ref.node
                if not ref.is_input and p in stage and stage[p] > 0:
                    stage[n.index] = max(stage[n.index],
                                         stage[p] + (lanes[p] != lanes[n.index]))
    last = max(stage.values(), default=0) + 1
    for n in spec.nodes:
        if n.index in lanes and n.kind == "store":
            stage[n.index] = last
    return stage


def deep_stages_differ(spec: GroupSpec) -> bool:
    """Whether a deep pipeline can stage some node otherwise than the shallow one
    (`_stages`), for some candidate: only a compute node reading a compute node on
    another lane moves to a later stage. A node's lane follows its engine
    (`node_lane`), except an LSU node's (ld or tdma, by its slice's transfers): an edge
    with one counts. Without such an edge a candidate and its deep form run the same
    stages, tasks and buffers: one plan."""
    compute = {n.index: n for n in spec.nodes if n.kind == "compute"}
    return any(
        p.engine != n.engine or Engine.LSU in (p.engine, n.engine)
        for n in compute.values() for ref in n.inputs
        if not ref.is_input and (p := compute.get(ref.node)) is not None)


@dataclass(frozen=True)
class Schedule:
    """What the estimate knows of a candidate's schedule beside its tasks: the steps of
    a tile, the tiles streaming from DDR at once, which nodes run at the end of their
    steps (stores and what follows a reduction: after the last piece), and per buffer
    its producer, readers and copies (`accumulate`: the partial sum's producer, whose
    copy advances once per `pieces` steps)."""

    steps: int
    tiles: int
    late: frozenset[int]
    buffers: tuple[tuple[int, tuple[int, ...], int], ...]
    """(producer node, reader nodes, copies) per value buffer."""
    accumulate: tuple[int, int] | None = None
    owners: int = 0
    """Tiles that run the late nodes (a reduction cut over tiles: one per share; 0: all
    `tiles`)."""
    classes: tuple[TileClass, ...] = ()
    """The busy tiles by the work they do (`tile_classes`); empty: one class."""
    costs: tuple[tuple[tuple[tuple[int, str], int, int], ...], ...] = ()
    """Per class, its tasks' (cycles, DDR cycles) where its share's slices make them
    differ from the tasks' own (`share_costs`); empty: none differ."""
    edges: tuple[tuple[tuple[RunSteps, tuple[tuple[tuple[int, str], int, int], ...]],
                       ...], ...] = ()
    """Per class, its remainder steps (`Split.edges` of its share) and there its tasks'
    (cycles, DDR cycles) where they differ from the class's own (`edge_costs`), then its
    steps that cut a node's window short (`crossing_costs`); empty: no such steps."""
    constants_first: bool = True
    """Whether the lowering puts a tile's first load of every ready value (a constant, or
    an input in `GroupSpec.ready_inputs`) at the front of its list (cross-group overlap,
    group-cost's `overlap`: on by default), so that `simulate_tile` runs them first."""
    kept: frozenset[int] = frozenset()
    """The ready loads the lowering leaves in their frame order all the same
    (`kept_in_order`: their first buffer copy's bytes held a buffer used before)."""
    ragged: frozenset[int] = frozenset()
    """`Split.ragged`: the nodes whose DMAs the busy tiles run out of step (`_run_lanes`'
    `setups`)."""
    inner: int = 0
    """`Split.inner`: under `Candidate.interchange`, the anchor steps inside each
    reduction piece, each accumulating into its own partial-sum copy (`simulate_tile`);
    such a schedule is simulated step by step (`_extrapolated`)."""
    ahead: frozenset[int] = frozenset()
    """`Split.ahead`: loads issued a step early at the first anchor step of each
    reduction piece after the first (`simulate_tile`, as the lowering orders them:
    `steps.lead`)."""


EXACT_STEPS = 12
"""Steps the estimate simulates one by one before it extrapolates (see `estimate`)."""

DRIFT_STEPS = 128
"""Steps up to which the estimate simulates tile classes of different shares one by one
(`_extrapolated`: they drift apart; ConvNeXt's Mul runs 80)."""


def estimate(spec: GroupSpec, ts: list[Task], schedule: Schedule, config: TX8Config,
             early: EarlyRun | None = None) -> tuple[int, dict[str, int]]:
    """(cycles of the group on one tile, busy cycles per lane and of the DDR channel: the
    time it would take to move the bytes every tile streamed at the chip's bandwidth).

    The tile's instructions run as the lowering orders them (`frame_times`: step + stage
    periods plus the start in the frame; each class's first load, or delivery, of every
    constant first, `simulate_tile`) on their lanes, each lane in that order, an
    instruction starting when its lane is free, its operands are written and the buffer
    copy it overwrites has been read by the run `copies` earlier (`simulate_tile`).
    Every busy tile runs the same schedule at the same time, so a DMA streams at the
    DDR bandwidth shared by the tiles times this tile's streams at that moment (a load
    beside a store gets half) and pays its setup alone. The schedule repeats every
    `unit` steps (`_repeating_unit`): beyond EXACT_STEPS, two runs `apart` units apart
    give the cost of a unit, which the remaining units repeat (the seed's Repeat node:
    steady frames are alike). Both runs take the steps past the last whole unit too
    (`steps % unit`), so the total counts every step (`_extrapolated`). `early`: the
    first of the two runs when the caller has it already (`early_run` of the same
    arguments; its lower bound needs it)."""
    runs = _extrapolated(ts, schedule)
    if runs is None:
        total, busy = simulate_tile(spec, ts, schedule, config, longest(schedule))
    else:
        first, second, apart = runs
        early = early or early_run(spec, ts, schedule, config)
        t1, b1 = early.run
        t2, b2 = simulate_tile(spec, ts, early.schedule, config, second)
        more = _more_units(schedule, first, second)
        total = t2 + more * (t2 - t1)
        busy = {lane: b2.get(lane, 0.0) + more * (b2.get(lane, 0.0) - b1.get(lane, 0.0))
                for lane in b2}
    return math.ceil(total), {lane: math.ceil(busy.get(lane, 0.0)) for lane in (*LANES, "ddr")}


@dataclass(frozen=True)
class EarlyRun:
    """The first of an extrapolating `estimate`'s two runs: the schedule both runs
    simulate (`_periodic_edges`) and `simulate_tile`'s (end, busy per lane) over the
    first run's steps."""

    schedule: Schedule
    run: tuple[float, dict[str, float]]


def early_run(spec: GroupSpec, ts: list[Task], schedule: Schedule, config: TX8Config
              ) -> EarlyRun | None:
    """`estimate`'s first run of (ts, schedule), None when it does not extrapolate.
    Computed once for the lower bound and the estimate (`Evaluator.early`): the bound
    of an extrapolating estimate needs it (`estimate_lower_bound`)."""
    runs = _extrapolated(ts, schedule)
    if runs is None:
        return None
    periodic = _periodic_edges(schedule, _repeating_unit(ts, schedule)[0])
    return EarlyRun(periodic, simulate_tile(spec, ts, periodic, config, runs[0]))


def _more_units(schedule: Schedule, first: int, second: int) -> float:
    """How many times the difference of the two runs the steps after the second add
    (`estimate`: > 0, `_extrapolated` extrapolates only then)."""
    return (longest(schedule) - second) / (second - first)


def _periodic_edges(schedule: Schedule, unit: int) -> Schedule:
    """`schedule` with only the remainder steps that recur every `unit` steps (an inner
    dim's last index, once per unit): the extrapolated units repeat what the two runs
    saw, so a remainder step they would see once (an outer dim's last index, which ends
    the group) keeps the largest slices, as every step did before remainder steps were
    sized."""
    if not schedule.edges:
        return schedule
    keep = tuple(tuple((pattern, costs) for pattern, costs in edges
                       if all(unit % (stride * size) == 0 for stride, size, _ in pattern))
                 for edges in schedule.edges)
    return replace(schedule, edges=keep if any(keep) else ())


def _extrapolated(ts: list[Task], schedule: Schedule) -> tuple[int, int, int] | None:
    """The step counts of `estimate`'s two runs and the units between them, or None when
    it simulates every step. The first run is `short` units, the second `apart` units
    more (both with the steps past the last whole unit). One tile class repeats every
    unit: one unit apart. Several classes (a multicast's sources and receivers, tiles
    storing other pieces) each repeat every unit, but their instructions interleave on
    the shared DDR with a period of their own, so the second run ends EXACT_STEPS or
    more after the first: a unit apart, the difference took one swing of that
    interleaving for the rate (Swin's Gemm+GELU, 12 tiles in 4 classes: 231 cycles a
    step between 12 and 14 steps, 274 between 12 and 24 and over the whole run; the
    estimate was 0.86 of cmodel v2).

    Tile classes of different shares never repeat together: the smaller share's steps
    are shorter, so it runs ahead and the DDR the classes share is split otherwise from
    step to step until it ends (its last steps may be fewer, too); two runs a unit apart
    measured such a drift's swing, not its rate (ConvNeXt's Mul over shares of 64 and
    32 channels: 0.69 of cmodel v2). Up to DRIFT_STEPS steps every step is simulated;
    beyond, the two runs are DRIFT_STEPS / 2 apart (the latency of many steps grows by
    the same amount per step once the drift is under way: a swing is a few steps).

    An interchanged schedule (`Schedule.inner`) is simulated step by step: its last
    reduction piece runs what follows the reduction and the stores, the others do not."""
    if schedule.inner:  # the interchanged order: its last piece's steps differ
        return None
    unit, short = _repeating_unit(ts, schedule)
    drift = any(tc.share for tc in schedule.classes)
    if drift and longest(schedule) <= DRIFT_STEPS:
        return None
    span = DRIFT_STEPS // 2 if drift else EXACT_STEPS
    apart = 1 if len(schedule.classes) < 2 else -(-span // unit)
    steps = longest(schedule)
    rest = steps % unit
    if (short + apart) * unit + rest >= steps:
        return None
    return short * unit + rest, (short + apart) * unit + rest, apart


def longest(schedule: Schedule) -> int:
    """The most steps a tile class runs: the schedule's (tile 0's), or a share's of more
    steps (`TileClass.steps`: a dim whose smaller piece is cut into more steps)."""
    return max([schedule.steps] + [tc.steps for tc in schedule.classes])


def _repeating_unit(ts: list[Task], schedule: Schedule) -> tuple[int, int]:
    """(steps of the schedule's repeating unit, units `estimate` simulates one by one
    before it extrapolates); it simulates every step when (short + 1) * unit >= steps.
    The steps of the innermost dims a hoisted node does not depend on; a node a tile
    class runs at given steps (`TileClass.runs`) repeats with its outermost restricting
    dim. The instructions repeat only once every buffer is back at the copy it began
    with: the unit is a whole number of rotations of every buffer a node that runs each
    unit writes (two copies alternate: a step that overlaps the next one's load differs
    from the step after it, and the difference of two runs one step apart took the
    cheap one - ResNet-50's Conv+Add+Relu, 0.91 of cmodel v2)."""
    steps = schedule.steps
    repeats = [t.count for t in ts if 1 < t.count]
    unit = steps // min(repeats) if repeats else steps
    unit = max([unit] + [stride * size for tc in schedule.classes for _, at in tc.runs
                         for stride, size, _ in at])
    every_unit = {t.node for t in ts if t.count * unit >= steps}
    rotation = math.lcm(*(copies for node, _, copies in schedule.buffers
                          if node in every_unit))
    unit = min(steps, unit * rotation)
    return unit, max(1, -(-EXACT_STEPS // unit))


def estimate_lower_bound(spec: GroupSpec, ts: list[Task], schedule: Schedule,
                         config: TX8Config, early: EarlyRun | None = None) -> int:
    """Cycles `estimate` never goes below. When it simulates every step, the floor of
    that simulation (`simulation_floor`). When it extrapolates (total = t2 + more * (t2
    - t1), t1 and t2 its two runs, more > 0), t1 simulated (`early`: `early_run` of the
    same arguments, computed here when not given) and t2 replaced by its simulation's
    floor F <= t2: the total grows with t2 (its factor 1 + more is positive), so it is
    at least F + more * (F - t1), rounded down below float rounding (0 if negative).
    The first run is the cheaper of the two (EXACT_STEPS against twice that, or
    DRIFT_STEPS / 2 more), and the estimate reuses it; the second runs only for the
    candidates the bound cannot rule out (BERT-base's search: 538 estimates
    extrapolated, and each ran since its bound was 0)."""
    runs = _extrapolated(ts, schedule)
    if runs is None:
        return simulation_floor(spec, ts, schedule, config, longest(schedule))
    first, second, _ = runs
    early = early or early_run(spec, ts, schedule, config)
    floor = simulation_floor(spec, ts, early.schedule, config, second)
    more = _more_units(schedule, first, second)
    total = floor + more * (floor - early.run[0])
    return max(0, math.floor(total - 1e-9 * abs(total) - 1e-6))


def simulation_floor(spec: GroupSpec, ts: list[Task], schedule: Schedule,
                     config: TX8Config, count: int) -> int:
    """Cycles `simulate_tile(spec, ts, schedule, config, count)` never goes below: per
    tile class and lane, the fill before the lane's first instruction, its work over the
    `count` steps, and the drain after its last; the same around the chip's DDR streams.

    Proof (`simulate_tile` over `count` steps, tile classes of different shares
    included). Each tile class runs its own instruction list on its own lanes
    (`simulate_tile`), a lane one instruction at a time in its order (`_run_lanes` starts
    one only when its lane is free and every instruction it needs has ended), and a task's
    runs come on its lane in step order. Let d(t) be a floor on one run of task t (in the
    class's costs): its fixed part (`cycles - ddr`) plus its `ddr` full-share cycles at
    the fastest rate it can stream, min(lsu, ddr bandwidth / streams) / share (`streams`
    the tiles streaming like it: the chip's streams at any moment include its own); 0 for
    a multicast delivery, whose end only follows its load's. Then per class:
    - work: a lane's last instruction ends at least the sum of d over the lane's
      instructions after its first one starts; a delivery there ends at least its
      `cycles` after its lane was freed (`_run_lanes`), so a lane holding one counts
      its work from time 0, the others from their fill;
    - fill H(t), a floor on the start of t's first run: that run needs the latest
      instruction of each node it reads (and a NoC reduction its own node's), which is
      a run of a task j of that node (j != t) whose first run came earlier in the list;
      every run of j ends at least F(j) = H(j) + d(j) (its later runs start after its
      first on its lane), so H(t) >= the least such F(j), per node read; the first
      instruction of a lane is the first run of one of its tasks: fill = min H;
    - drain D(t), a floor on the total after t's last run ends: a task u reading t's
      node runs next (its first run after that one, with no other task of t's node run
      in between) on t's last result, so it and its k later runs end at least k * d(u)
      after it, and the total comes at least D(u) after u's last run:
      D(t) >= max(k * d(u) + D(u)); the last instruction of a lane is the last run of
      one of its tasks: drain = min D;
    - the DDR channel (all classes together): while instruction i streams, it advances
      at `rate` = min(lsu, ddr bandwidth / chip) / share full-share cycles per cycle,
      `chip` the sum of `streams` over the instructions streaming then (`_run_lanes`),
      so the sum over them of streams * the cycles left falls by chip * rate <= ddr
      bandwidth / share per cycle: streaming everything takes at least
      share / ddr bandwidth * the sum over all runs of streams * ddr cycles. That time
      lies after the first stream starts (at least the least fill + fixed part of a
      streaming task: a run's stream follows its fixed part) and before the last ends
      (the last run of its task: a task's runs stream in order on its lane), which
      the least drain of a streaming task follows.
    Nothing above depends on which steps a class runs or on what its runs cost, only
    that the bound walks `simulate_tile`'s instruction lists: the same run steps
    (`_steps_in_class` over the same `count` steps: a class's own step count,
    `TileClass.steps`, which may be fewer or more than tile 0's, and its `runs`), the
    same tasks per class (`_runs_on`: not a node it never runs - a Split piece another
    tile stores, a transfer of an empty window, `moving` - nor the read of a multicast
    load it receives from whichever class `multicast_loads` made its source), and the
    same costs (`_class_costs`: a smaller share's slices, a peer's where its own first
    tile moves nothing of a node), in the same list order (step, then task, then
    class). The bound is the largest fill + work + drain, or the DDR channel's, rounded
    down after taking off the simulation's tolerance (a stream ends within 1e-6 of its
    bytes) and float rounding (tests/unit/slicing check the bound against the estimate
    on every candidate of the bundled examples, on ResNet-50's groups and on shares of
    their own step counts, and against the simulation of any count of steps)."""
    order = sorted(ts, key=lambda t: (t.node, t.lane == "noc"))  # simulate_tile's
    reads = [set() if t.delivers else  # it needs its load's read in its source class only
             {r.node for r in spec.nodes[t.node].inputs if not r.is_input}
             | ({t.node} if t.lane == "noc" else set()) for t in order]
    lsu = float(config.lsu_bytes_per_cycle)
    ddr = ddr_bytes_per_cycle(config)
    share = min(lsu, ddr / schedule.tiles)
    parts = [_class_bound(order, reads, schedule, c, tc, lsu, ddr, share, count)
             for c, tc in enumerate(schedule.classes or (TileClass(schedule.tiles),))]
    best = max(p.lanes for p in parts)
    streamed = sum(p.streamed for p in parts)
    if streamed:
        best = max(best, min(p.stream_fill for p in parts) + streamed * share / ddr
                   + min(p.stream_drain for p in parts))
    return math.floor(best * (1 - 1e-9) - 1e-5 * sum(p.runs for p in parts))


@dataclass(frozen=True)
class _ClassFloor:
    """A tile class's part of `estimate_lower_bound`: its largest fill + work + drain
    over its lanes; its instructions' `streamed` full-share cycles times the tiles
    streaming like each; the least fill + fixed part before one of its streams starts,
    the least drain after one ends (inf: it streams nothing); its instructions."""

    lanes: float
    streamed: float
    stream_fill: float
    stream_drain: float
    runs: int


def _class_bound(order, reads, schedule, c, tc, lsu: float, ddr: float, share: float,
                 count: int) -> _ClassFloor:
    """`_ClassFloor` of tile class `c` (`tc`) over the first `count` steps."""
    own = _class_costs(schedule, c)
    edge = _edge_steps(schedule, c, count)
    at = dict(tc.runs)
    run: dict[int, list[int]] = {}  # position in `order` -> its steps in this class
    least: dict[int, float] = {}  # d(t)
    work: dict[str, float] = {}
    on_lane: dict[str, list[int]] = {}  # lane -> its tasks' positions, in list order
    streaming: dict[int, float] = {}  # a streaming task -> its fixed part
    chip = 0.0
    for i, t in enumerate(order):
        if not _runs_on(t, tc):
            continue
        run_steps = _steps_in_class(t, at.get(_runs_key(t, schedule)), tc.steps, schedule,
                                    count)
        if not run_steps:
            continue
        run[i] = run_steps
        on_lane.setdefault(t.lane, []).append(i)
        fastest = min(lsu, ddr / _streams(t, schedule, tc)) / share
        took, streamed = own.get((t.node, t.lane), (t.cycles, t.ddr))
        fixed = took - streamed if streamed else took
        if not edge:  # every run alike: one run's floor times the runs (the sums of
            one = fixed + streamed / fastest  # equal terms, within float rounding,
            least[i] = 0.0 if t.delivers else one  # which the bound's tolerance takes)
            work[t.lane] = work.get(t.lane, 0.0) + one * len(run_steps)
            if streamed > 0:
                streaming[i] = fixed
                chip += _streams(t, schedule, tc) * streamed * len(run_steps)
            continue
        key = (t.node, t.lane)
        parts = [edge[s].get(key, (fixed, streamed)) if s in edge else (fixed, streamed)
                 for s in run_steps]  # a remainder step's smaller slices
        ones = [f + d / fastest for f, d in parts]
        least[i] = 0.0 if t.delivers else min(ones)
        work[t.lane] = work.get(t.lane, 0.0) + sum(ones)
        if any(d > 0 for _, d in parts):
            streaming[i] = min(f for f, d in parts if d > 0)
            chip += _streams(t, schedule, tc) * sum(d for _, d in parts)
    if not run:
        return _ClassFloor(0.0, 0.0, math.inf, math.inf, 0)
    by_node: dict[int, list[int]] = {}
    readers: dict[int, list[int]] = {}
    for i in run:
        by_node.setdefault(order[i].node, []).append(i)
        for p in reads[i]:
            readers.setdefault(p, []).append(i)
    fill: dict[int, float] = {}
    for i, steps_i in run.items():  # in list order: a node's readers come after it
        h = 0.0
        if not order[i].delivers:
            first = (steps_i[0], i)
            for p in reads[i]:
                earlier = [fill[j] + least[j] for j in by_node.get(p, ())
                           if j < i and (run[j][0], j) < first]
                if earlier:
                    h = max(h, min(earlier))
        fill[i] = h
    drain: dict[int, float] = {}
    for i in reversed(run):
        node = order[i].node
        last = (run[i][-1], i)
        others = [_runs_after(run[j], j, last)[1] for j in by_node[node] if j != i]
        d = 0.0
        for u in readers.get(node, ()):
            if u <= i:
                continue
            k, nxt = _runs_after(run[u], u, last)
            if k and not any(o < nxt for o in others if o[1] != u):
                d = max(d, k * least[u] + drain[u])  # else another task of the node ran
        drain[i] = d                               # in between: u reads that one
    best = 0.0
    for lane, total in work.items():
        on = on_lane[lane]
        start = 0.0 if any(order[i].delivers for i in on) else min(fill[i] for i in on)
        best = max(best, start + total + min(drain[i] for i in on))
    return _ClassFloor(best, chip, min((fill[i] + f for i, f in streaming.items()),
                                       default=math.inf),
                       min((drain[i] for i in streaming), default=math.inf),
                       sum(len(s) for s in run.values()))


def _runs_after(run_steps: list[int], i: int, position: tuple[int, int]
                ) -> tuple[int, tuple[float, int]]:
    """(how many runs of the task at `i` in the list order, at `run_steps`, come after
    the instruction at `position` (step, task position), the position of the first of
    them: (inf, i) when none)."""
    cut = bisect_right(run_steps, position[0]) if i < position[1] else bisect_left(
        run_steps, position[0])
    return len(run_steps) - cut, (run_steps[cut] if cut < len(run_steps) else math.inf, i)


def _edge_steps(schedule: Schedule, c: int, count: int
                ) -> dict[int, dict[tuple[int, str], tuple[int, int]]]:
    """Class c's remainder steps among the first `count` (`Schedule.edges`): per step,
    (fixed cycles, DDR cycles) per (node, lane) whose slices are smaller there; a step
    at the last index of several short dims takes the costs of the pattern of the most
    dims (the smallest slices) over those of fewer."""
    if not schedule.edges or not schedule.edges[c]:
        return {}
    out: dict[int, dict[tuple[int, str], tuple[int, int]]] = {}
    for pattern, costs in sorted(schedule.edges[c], key=lambda e: len(e[0])):
        split = {key: (took - ddr if ddr else took, ddr) for key, took, ddr in costs}
        for step in _allowed_steps(pattern, count):
            out.setdefault(step, {}).update(split)
    return out


def _class_costs(schedule: Schedule, c: int) -> dict[tuple[int, str], tuple[int, int]]:
    """Class c's (cycles, DDR cycles) per (node, lane) where its share makes them
    differ from its tasks' (`Schedule.costs`)."""
    if not schedule.costs:
        return {}
    return {key: (took, ddr) for key, took, ddr in schedule.costs[c]}


def _late(t: Task, late: frozenset[int]) -> bool:
    """Whether `t` runs after the last piece of its steps: stores, what follows a
    reduction, and the reduction's NoC rounds (a multicast's delivery runs with its
    load)."""
    return (t.lane == "noc" and not t.delivers) or t.node in late


def _streams(t: Task, schedule: Schedule, tc: TileClass) -> float:
    """Tiles of the chip streaming like `t` at once in the tile class `tc`: its tiles,
    and for what runs after a reduction cut over tiles, its part of the owners of the
    shares (owners / tiles of each of its tiles: a class of one tile among 16 with 4
    owners streams a quarter; rounded up to one tile per class, ViT's Gemm+Add+LayerNorm
    over 16 one-tile classes counted 16 stores where 4 stream, 1.126 of cmodel v2)."""
    if _late(t, schedule.late) and schedule.owners:
        return schedule.owners * tc.size / max(1, schedule.tiles)
    return tc.size


def _runs_on(t: Task, tc: TileClass) -> bool:
    """Whether the tiles of class `tc` run task `t`: not a node they never run, not the
    DDR read of a multicast load they receive, not the delivery of one they source."""
    if t.node in tc.absent:
        return False
    if t.delivers or t.sources:
        return t.delivers == any(n == t.node for n, _ in tc.receives)
    return True


def _run_steps(t: Task, steps: int, late: frozenset[int], count: int) -> list[int]:
    """The steps of the first `count` at which task `t` runs: a node that runs `count`
    times runs at the first of every steps / count steps, a late one (stores, after a
    reduction) at the last. A late task that runs once, at the group's last step, runs
    at the last step simulated when `estimate` extrapolates (its two runs of whole units
    both end with it, so the extrapolated units do not repeat it, and the total has it
    once; it was left out)."""
    return list(_counted_steps(steps // max(1, t.count), _late(t, late), t.count == 1, count))


@lru_cache(maxsize=1 << 14)
def _counted_steps(every: int, late: bool, once: bool, count: int) -> tuple[int, ...]:
    """`_run_steps` of a task run every `every` steps (late: at the last of them; once:
    a task that runs once), remembered: the estimate and its bound ask it per task and
    tile class of every candidate, for a handful of distinct answers."""
    if not late:
        return tuple(range(0, count, every))
    at = list(range(every - 1, count, every))
    if once and count - 1 not in at:
        at.append(count - 1)
    return tuple(at)


@lru_cache(maxsize=1 << 14)
def _allowed_steps(steps_at: RunSteps, count: int) -> tuple[int, ...]:
    """The steps of the first `count` at which a node that runs at `steps_at` runs
    (`runs_at`), remembered as `_counted_steps` is."""
    return tuple(s for s in range(count) if runs_at(steps_at, s))


def _steps_in_class(t: Task, steps_at: RunSteps | None, own: int, schedule: Schedule,
                    count: int) -> tuple[int, ...]:
    """The steps of the first `count` at which a tile class runs task `t`: its own
    `steps_at` (`TileClass.runs`) among its `own` steps (`TileClass.steps`; 0: the
    schedule's) or, None, by the task's count (`_run_steps`) among the schedule's steps
    (`count` may exceed them: a class of more steps, `longest`)."""
    if steps_at is not None:
        return _allowed_steps(steps_at, min(count, own or schedule.steps))
    return _counted_steps(schedule.steps // max(1, t.count), _late(t, schedule.late),
                          t.count == 1, min(count, schedule.steps))


def simulate_tile(spec: GroupSpec, ts: list[Task], schedule: Schedule, config: TX8Config,
                  count: int, trace: list[Traced] | None = None
                  ) -> tuple[float, dict[str, float]]:
    """The finish time and the busy time per lane (the busiest tile class's) of the
    first `count` steps of the busy tiles (see `estimate`): one instruction list per
    tile class (`schedule.classes`), all run side by side on their own lanes, sharing
    the DDR. A class's first load (or delivery) of each ready value (a constant, or an
    input in `spec.ready_inputs`) comes first on its lane when
    `schedule.constants_first`, as the lowering then puts a tile's first load of every
    ready value at the front of its list (`tx8c.codegen.lower`, cross-group overlap, on
    by default; ResNet-50's Conv+Add+Relu groups, whose residual input is ready, ran
    0.933 of cmodel v2 alone with constants alone first): BERT-base's last
    LayerNorm, whose gamma and beta tile 15 loads and multicasts, had its receivers wait
    for them behind the first rows' load (1.154 of cmodel v2 alone; the lowering moves a
    constant only where no earlier instruction touched its bytes, which the allocator
    decides later: a constant first needed late may stay behind there). What each
    task's instructions need is worked out once per task (`_Runner`), not once per step
    (the hot loop of the search). `trace`: a list that receives every instruction run
    (`Traced`, in the order they were issued: step by step, task by task), for tools
    that ask where a plan's time goes (bench/bench_pipeline_gap.py)."""
    starts, _, period = frame_times(spec, ts)
    home: dict[int, list[tuple[int, int]]] = {}  # reader node -> (buffer, copies)
    for b, (_, readers, copies) in enumerate(schedule.buffers):
        for u in readers:
            home.setdefault(u, []).append((b, copies))
    writes = {}
    for b, (node, _, copies) in enumerate(schedule.buffers):
        writes.setdefault(node, []).append((b, copies))
    pieces = schedule.accumulate[1] if schedule.accumulate else 1
    acc_node = schedule.accumulate[0] if schedule.accumulate else -1
    inner, ahead = schedule.inner, schedule.ahead
    order = sorted(ts, key=lambda t: (t.node, t.lane == "noc"))
    classes = schedule.classes or (TileClass(schedule.tiles),)
    lane, key, fixed, stream, deps, streams, setups = [], [], [], [], [], [], []
    follows: dict[int, tuple[int, int]] = {}  # delivery -> (its load, tail)
    latest: list[dict[int, int]] = [{} for _ in classes]  # per class: node -> last instr.
    runs: list[dict[int, int]] = [{} for _ in classes]  # node -> buffer copy of last run
    readers: dict[tuple[int, int, int], list[int]] = {}  # (class, buffer, run) -> readers
    costs = [_class_costs(schedule, c) for c in range(len(classes))]
    edge = [_edge_steps(schedule, c, count) for c in range(len(classes))]
    views = [_ClassView(tc) for tc in classes]
    lanes: dict[tuple[int, str], int] = {}  # (class, lane) -> its number in `_run_lanes`
    # per step, the (task, class) pairs that run then, in task order, then class order
    at_step: list[list[tuple[_Runner, tuple]]] = [[] for _ in range(count)]
    for t in order:
        runner = _Runner(t, spec, schedule, classes, views, costs, home, writes, starts,
                         acc_node, lanes, config)
        for entry in runner.classes:
            for step in _steps_in_class(t, entry[-4], entry[-3], schedule, count):
                at_step[step].append((runner, entry))
    first_constants: set[tuple[int, int, str]] = set()  # (class, node, lane) placed
    first = schedule.constants_first
    i = 0  # the next instruction's number (len(lane))
    add_lane, add_key, add_fixed, add_stream = lane.append, key.append, fixed.append, \
        stream.append
    add_deps, add_streams, add_setup = deps.append, streams.append, setups.append
    for step in range(count):
        for r, (c, chip_streams, source, took, streamed, _, _, tail, k) in at_step[step]:
            node = r.node
            at_edge = edge[c]
            if at_edge and step in at_edge:  # a remainder step: smaller slices
                took, streamed = at_edge[step].get((node, r.lane), (took, streamed))
            at = (step + r.stage) * period + r.start
            if node in ahead and step >= inner and step % inner == 0:
                at -= period  # the next piece's operand, a step early (`steps.lead`)
            if first and r.ready and (c, node, r.lane) not in first_constants:
                first_constants.add((c, node, r.lane))
                at = -1  # the lowering's constants first
            last = latest[c]
            if r.delivers:  # after the source's read, from the source's buffer
                load = latest[source][node]
                follows[i] = (load, tail)
                need = [load]
                for b in r.writes_to:
                    readers.setdefault((source, b, runs[source][node]), []).append(i)
            else:
                inputs = r.inputs
                need = [last[n] for n in inputs if n in last] if inputs else []
                if r.noc:
                    need.append(last[node])
            if r.holds:
                ran = runs[c]
                for b, producer in r.reads:
                    readers.setdefault((c, b, ran.get(producer, 0)), []).append(i)
                run = ran.get(node, -1) + 1
                if r.accumulates:  # a copy per anchor step, or per run of pieces
                    run = step % inner if inner else step // pieces if pieces > 1 else run
                for b, copies in r.writes:
                    need += readers.pop((c, b, run - copies), [])
                ran[node] = run
            last[node] = i
            add_lane(k)
            add_key((at, node, i))
            add_fixed(took)
            add_stream(streamed)
            add_deps(need)
            add_streams(chip_streams)
            add_setup(r.drifts and streamed > 0)
            i += 1
    times = [] if trace is not None else None
    total, busy, channel = _run_lanes(lane, len(lanes), key, fixed, stream, deps, streams,
                                      schedule.tiles, config, follows, setups, times)
    if trace is not None:
        names = {k: tile_lane for tile_lane, k in lanes.items()}
        trace.extend(Traced(*names[k], at[1], began, ended)
                     for k, at, (began, ended) in zip(lane, key, times, strict=True))
    out: dict[str, float] = {"ddr": channel}
    for (_, name), k in lanes.items():
        out[name] = max(out.get(name, 0.0), busy[k])
    return total, out


@dataclass(frozen=True)
class Traced:
    """One instruction of `simulate_tile`'s run (its `trace`): the tile class that runs
    it (index into `Schedule.classes`), its lane, its node, and when it started and
    ended (cycles from the group's start)."""

    tile_class: int
    lane: str
    node: int
    began: float
    ended: float


class _ClassView:
    """A tile class's per-node lookups (`TileClass.reach`, `receives`, `runs` as dicts),
    made once per `simulate_tile` instead of once per task."""

    __slots__ = ("reach", "receives", "runs")

    def __init__(self, tc: TileClass):
        self.reach, self.receives, self.runs = dict(tc.reach), dict(tc.receives), dict(tc.runs)


class _Runner:
    """What `simulate_tile` needs of a task at every step it runs: the tile classes
    that run it (class, its stream count, a delivery's source class, its fixed and
    streamed cycles on the class's share, the class's own steps for it or None and its
    step count or 0: `TileClass.steps`, a delivery's tail at the class's hops:
    `TileClass.reach`, the number of the class's lane in `lanes`), the
    nodes whose results it reads, the buffers it reads (buffer, producer) and writes
    (buffer, copies)."""

    __slots__ = ("node", "lane", "stage", "start", "classes", "inputs", "delivers",
                 "noc", "holds", "reads", "writes", "writes_to", "accumulates", "ready",
                 "drifts")

    def __init__(self, t: Task, spec: GroupSpec, schedule: Schedule, classes, views, costs,
                 home, writes, starts, acc_node: int, lanes: dict, config: TX8Config):
        self.node, self.lane, self.stage = t.node, t.lane, t.stage
        self.start = starts.get(t.node, 0)
        self.classes = []
        for c, tc in enumerate(classes):
            if not _runs_on(t, tc):
                continue
            took, streamed = costs[c].get((t.node, t.lane), (t.cycles, t.ddr))
            view = views[c]
            hops = view.reach.get(t.node)
            self.classes.append((c, _streams(t, schedule, tc), view.receives.get(t.node),
                                 took - streamed if streamed else took, streamed,
                                 view.runs.get(_runs_key(t, schedule)), tc.steps,
                                 t.tail if hops is None else multicast_tail(hops, config),
                                 lanes.setdefault((c, t.lane), len(lanes))))
        self.inputs = [r.node for r in spec.nodes[t.node].inputs if not r.is_input]
        self.delivers = t.delivers
        self.noc = t.lane == "noc"
        # a load whose tiles move windows of different sizes, so they drift out of step:
        # its setup keeps its share of the DDR (`_run_lanes`' `setups`)
        self.drifts = t.lane == "ld" and t.node in schedule.ragged
        self.holds = not self.noc or t.delivers  # it writes or reads buffer copies
        self.reads = [] if t.delivers else [
            (b, schedule.buffers[b][0]) for b, _ in home.get(t.node, ())]
        self.writes = writes.get(t.node, [])
        self.writes_to = [b for b, _ in self.writes]
        self.accumulates = t.node == acc_node
        # a ready value's load or delivery the lowering moves first (`simulate_tile`)
        self.ready = (t.lane in ("ld", "noc") and t.node not in schedule.kept
                      and is_ready_load(spec, t.node))


def _run_lanes(of: list[int], lanes: int, key, fixed, stream, deps, streams, tiles: int,
               config: TX8Config, follows: dict[int, tuple[int, int]] | None = None,
               setups: list[bool] | None = None, times: list | None = None
               ) -> tuple[float, list[float], float]:
    """Run instructions on their lanes (`of[i]`: instruction i's lane, of `lanes`), in
    `key` order per lane (`key[i]` a tuple ending with i, e.g. (start in the frame,
    node, i)), with their dependencies; a streaming instruction's `stream` cycles are at
    the tile's full DDR share (`tiles` streams on the chip) and slow down while the chip
    carries more: `streams[i]` tiles stream like instruction i at once. `follows[i]` =
    (j, tail): instruction i (a multicast delivery, started once j ended) streams its
    `fixed` cycles from when both j began and i was ready (its lane free, its other
    dependencies done), and ends no sooner than `tail` after j (`cost.multicast_done`,
    as cmodel v2 times a NocCopy). `setups[i]`: instruction i's fixed part is the setup
    of a DMA whose tiles are out of step (a load of windows of different sizes on the
    tiles the estimate times alike: `Split.ragged`); its `streams[i]` tiles keep their
    share of the DDR through it (the other streams run no faster for it). Returns the
    end, the busy time per lane and the DDR channel's busy time; `times`, when given,
    receives each instruction's (start, end) in index order.

    Why such a setup keeps its share: the estimate runs a tile class's tiles, and the
    classes of one schedule, in lockstep, so their DMAs' setups all fall at once and a
    stream of another class would run at the LSU's full rate (10 x its share on a
    16-tile chip) through each of them. On the chip (cmodel v2) tiles whose windows
    differ take different times and drift apart, so one tile's setup overlaps the
    others' streams. ResNet-50's stem: one tile reads the 50 KB weight while 15 load
    image windows (halos cut at the border) back to back; with free setups the weight
    arrived after 1 923 cycles, on cmodel v2 after 3 135 (the deep W-cut plans were
    estimated 0.942 of cmodel v2 alone; now 1.022). Tiles moving equal windows stay in
    step on cmodel v2 as well (BERT-base's LayerNorm stores: their setups are free).

    The search's hot loop: the chip's streams (whole tiles: their sum is exact in any
    order) and their rate change only when a stream or a setup starts or ends. The lanes' numbers
    change nothing: every lane starts what it can at each moment, and the instructions
    end in the order of their (end, index)."""
    follows = follows or {}
    n = len(of)
    setups = setups or [False] * n
    users: list[list[int]] = [[] for _ in range(n)]
    waiting = [0] * n
    for i, need in enumerate(deps):
        if len(need) == 1:
            waiting[i] = 1
            users[need[0]].append(i)
        elif need:
            distinct = set(need)
            waiting[i] = len(distinct)
            for d in distinct:
                users[d].append(i)
    queues: list[list[int]] = [[] for _ in range(lanes)]
    for *_, i in sorted(key):  # (start in the frame, node, i): i ties none
        queues[of[i]].append(i)
    pos = [0] * lanes
    free = [True] * lanes
    freed = [0.0] * lanes  # when each lane last finished an instruction
    busy = [0.0] * lanes
    lsu = float(config.lsu_bytes_per_cycle)
    ddr = ddr_bytes_per_cycle(config)
    share = min(lsu, ddr / tiles)
    began = [0.0] * n
    ended = [0.0] * n
    timers: list[tuple[float, int]] = []  # (end of a fixed part, instruction)
    streaming: dict[int, float] = {}
    chip = 0  # tiles streaming on the chip
    setting = 0  # tiles in a DMA's setup, keeping their share (`setups`)
    rate = 0.0  # each stream's share of the DDR, in full-share cycles per cycle
    channel = 0.0  # bytes the chip's streams moved so far
    now, done = 0.0, 0
    changed = list(range(lanes))  # lanes whose next instruction may have become startable
    push, pop = heapq.heappush, heapq.heappop
    while True:
        for k in changed:  # start what is ready
            items = queues[k]
            p = pos[k]
            if not free[k] or p >= len(items) or waiting[items[p]]:
                continue
            i = items[p]
            pos[k] = p + 1
            free[k] = False
            began[i] = now
            if i in follows:
                j, tail = follows[i]
                ready = max([freed[k]] + [ended[d] for d in deps[i] if d != j])
                push(timers, (max(now, ended[j] + tail, max(began[j], ready) + fixed[i]), i))
            else:
                push(timers, (now + fixed[i], i))
            if setups[i]:
                setting += streams[i]
                if streaming:
                    rate = min(lsu, ddr / (chip + setting)) / share
        changed = []
        if done >= n:
            break
        then = timers[0][0] if timers else math.inf
        if streaming:
            then = min(then, now + min(streaming.values()) / rate)
        if then == math.inf:  # the lowering's order would deadlock the same way
            stuck = [items[pos[k]] for k, items in enumerate(queues) if pos[k] < len(items)]
            raise RuntimeError(f"the schedule deadlocks: instructions {stuck} wait for "
                               "ones their lanes run later")
        ended_now = []
        if streaming:
            passed = then - now
            channel += passed * chip * rate * share
            drop = rate * passed
            for i, left in streaming.items():  # values only: the dict keeps its size
                left -= drop
                streaming[i] = left
                if left <= 1e-6:
                    ended_now.append(i)
            for i in ended_now:
                del streaming[i]
                chip -= streams[i]
        now = then
        started = False
        while timers and timers[0][0] <= now:
            i = pop(timers)[1]
            if stream[i] > 0 and i not in streaming:
                streaming[i] = float(stream[i])
                chip += streams[i]
                if setups[i]:
                    setting -= streams[i]
                started = True
            else:
                ended_now.append(i)
        for i in ended_now:  # finish
            k = of[i]
            ended[i] = now
            freed[k] = now
            free[k] = True
            busy[k] = busy[k] + now - began[i]
            changed.append(k)
            for u in users[i]:
                waiting[u] -= 1
                if not waiting[u]:
                    changed.append(of[u])
            done += 1
        if streaming and (started or ended_now):
            rate = min(lsu, ddr / (chip + setting)) / share
    if times is not None:
        times.extend(zip(began, ended, strict=True))
    return now, busy, channel / ddr


# --------------------------------------------------------------------------------------
# SPM
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Value:
    """A buffer to place: its name, size, producing node, and the nodes reading it."""

    name: str
    size: int
    node: int
    kind: str
    result: int
    readers: tuple[int, ...]


def copy_name(value: str, copy: int) -> str:
    """The name of the SPM buffer holding copy `copy` of `value` (`spm_buffers`)."""
    return f"{value}#{copy}"


def spm_buffers(spec: GroupSpec, split: Split, ts: list[Task], config: TX8Config
                ) -> list[_Value]:
    """The group's SPM buffers (see the module docstring), in-place results merged."""
    users = spec.users()
    task_of = {t.node: t for t in ts if t.lane != "noc"}
    shares: dict[ValueRef, ValueRef] = {}
    out: list[_Value] = []
    for n in spec.nodes:
        if n.index not in task_of or n.kind == "store":
            continue
        for r, value in enumerate(n.results):
            ref = ValueRef(n.index, r)
            readers = tuple(u for u, k in users[n.index]
                            if spec.nodes[u].inputs[k] == ref and not spec.nodes[u].from_ddr[k])
            shape = split.result_shapes.get(ref)
            if shape is None or not readers:
                continue
            owner = _inplace_owner(spec, n, ref, users, split, config)
            if owner is not None:
                shares[ref] = shares.get(owner, owner)
                continue
            out.append(_Value(f"v{n.index}.{r}", window_bytes(shape, value, config),
                              n.index, "value", r, readers))
        imm = n.slicer.imm_bytes(split.slice_shapes[n.index], config)
        if imm:
            out.append(_Value(f"imm{n.index}", imm, n.index, "imm", 0, (n.index,)))
    # readers of in-place results read the owner's buffer
    merged = []
    for v in out:
        extra = tuple(u for ref, owner in shares.items()
                      if owner == ValueRef(v.node, v.result) and v.kind == "value"
                      for u, _ in users[ref.node])
        merged.append(_Value(v.name, v.size, v.node, v.kind, v.result,
                             tuple(sorted(set(v.readers + extra)))))
    return merged


def _inplace_owner(spec, node, ref, users, split, config) -> ValueRef | None:
    """The value whose buffer an in-place result takes: operand 0, when it is computed
    in the group, read by this node only, and no smaller (result 0 only: the lowering
    writes a node's other results to buffers of their own)."""
    if not node.inplace or node.kind != "compute" or not node.inputs or ref.index:
        return None
    operand = node.inputs[0]
    if operand.is_input or node.from_ddr[0] or len(users[operand.node]) != 1:
        return None
    mine, theirs = split.result_shapes.get(ref), split.result_shapes.get(operand)
    if mine is None or theirs is None:
        return None
    size = window_bytes(mine, node.results[ref.index], config)
    other = window_bytes(theirs, spec.nodes[operand.node].results[operand.index], config)
    return operand if size <= other else None


def lifetimes(spec: GroupSpec, ts: list[Task], values: list[_Value], steps: int,
              pipelined: bool, accumulating: tuple[int, int] | None = None) -> list[Buffer]:
    """Each buffer copy's live intervals over an unrolled stretch of the schedule.

    Time is frames of one period: a value read in the frame that produces it lives from
    its producer's start to its last reader's end (the dependency orders them); a value
    read in a later frame (another stage, or later steps of a hoisted value) lives until
    the end of the last frame that reads it, whatever the order of the engines there.
    `accumulating` = (node, pieces): that node's result is a partial sum accumulated over
    `pieces` consecutive steps (a reduction cut in time), so one copy serves all of them
    and lives from the first piece to the readers of the complete sum."""
    task_of = {t.node: t for t in ts if t.lane != "noc"}
    starts, ends, period = frame_times(spec, ts)
    depth = max((t.stage for t in ts), default=0) + 1 if pipelined else 1
    unroll = min(steps, depth + 4)
    if accumulating is not None:  # every copy of the partial sum recurs in the stretch
        unroll = min(steps, max(unroll, 2 * accumulating[1] + depth))
    rotations = []  # per value: its last reading stage, copies, steps between its runs
    for v in values:
        producer = task_of[v.node]
        last = max((task_of[u].stage for u in v.readers if u in task_of), default=producer.stage)
        count = producer.count
        if accumulating is not None and v.node == accumulating[0] and v.kind == "value":
            count = max(1, count // accumulating[1])
        copies = 1 if count == 1 else max(1, min(last - producer.stage + 1, depth))
        rotations.append((last, copies, max(1, steps // max(1, count))))
    unroll = _stretch(unroll, steps, rotations)
    buffers = []
    for v, (last, copies, every) in zip(values, rotations, strict=True):
        producer = task_of[v.node]
        # per run at `step`: live from step * period + begin to step * period + finish
        begin = producer.stage * period + starts[v.node]
        if last == producer.stage and every == 1:  # read within the producer's frame
            readers = [u for u in v.readers if u in task_of] or [v.node]
            finish = last * period + max(ends[u] for u in readers)
        else:  # read in a later frame: live until that frame ends
            finish = (every + last) * period
        finish = max(finish, begin + 1)
        runs = range(0, unroll, every)
        for c in range(min(copies, len(runs))):
            mine = runs[c::copies]  # copy c serves every `copies`-th run
            live = _periodic(mine.start * period + begin, finish - begin,
                             mine.step * period, len(mine))
            buffers.append(Buffer(copy_name(v.name, c), v.size, live))
    return buffers


def buffer_lives(spec: GroupSpec, ts: list[Task], values: list[_Value], split: Split,
                 cand: Candidate) -> list[Buffer]:
    """`lifetimes` of a candidate's buffers, or `interchanged_lifetimes` under
    `Candidate.interchange`."""
    if split.inner:
        return interchanged_lifetimes(spec, ts, values, split, cand.pipelined,
                                      accumulating(cand))
    return lifetimes(spec, ts, values, split.steps, cand.pipelined, accumulating(cand))


def interchanged_lifetimes(spec: GroupSpec, ts: list[Task], values: list[_Value],
                           split: Split, pipelined: bool, psum: tuple[int, int]
                           ) -> list[Buffer]:
    """`lifetimes` in the interchanged order (`Candidate.interchange`), over every step
    of tile 0 (`Split.runs`: its steps are few - the reduction's pieces times the anchor
    steps - and not periodic: the last piece runs what follows the reduction). Each of
    the `Split.inner` copies of the partial sum lives from its anchor step's first piece
    to the end of the frame whose readers take the complete sum at the last piece.
    Every other buffer rotates its copies over its producer's runs as `lifetimes` does
    (`copies` per the stages it spans; a load the reduction reads at every step, one
    per anchor step and one more: `steps.lead`); a run lives from its producer's start
    to the end of its readers' frame in the producer's step when they read it only
    there, else to the end of the frame of its readers' last step before the producer's
    next run. `psum`: `accumulating` of the candidate (the node, its pieces)."""
    task_of = {t.node: t for t in ts if t.lane != "noc"}
    starts, ends, period = frame_times(spec, ts)
    depth = max((t.stage for t in ts), default=0) + 1 if pipelined else 1
    at = dict(split.runs[0])
    every = tuple(range(split.steps))

    def steps_of(node: int) -> tuple[int, ...]:
        return _allowed_steps(at[node], split.steps) if node in at else every

    inner, (node, _) = split.inner, psum
    pieces = split.steps // inner
    buffers = []
    for v in values:
        producer = task_of[v.node]
        last = max((task_of[u].stage for u in v.readers if u in task_of),
                   default=producer.stage)
        begin = producer.stage * period + starts[v.node]
        if v.node == node and v.kind == "value":
            for a in range(inner):
                buffers.append(Buffer(copy_name(v.name, a), v.size, (
                    (a * period + begin, ((pieces - 1) * inner + a + last + 1) * period),)))
            continue
        runs = steps_of(v.node)
        copies = 1 if len(runs) == 1 else max(1, min(last - producer.stage + 1, depth))
        if v.kind == "value" and len(runs) == split.steps and node in v.readers and \
                spec.nodes[v.node].kind == "load" and pipelined:
            copies = inner + 1  # streamed at every step: never waits a piece (`steps.lead`)
        readers = [u for u in v.readers if u in task_of] or [v.node]
        reading = sorted(set().union(*(steps_of(u) for u in readers)))
        alongside = last == producer.stage and set(reading) <= set(runs)
        lives: list[list[tuple[int, int]]] = [[] for _ in range(min(copies, len(runs)))]
        for j, step in enumerate(runs):
            if alongside:
                finish = (step + last) * period + max(ends[u] for u in readers)
            else:  # read up to the last reading step before the producer's next run
                until = runs[j + 1] if j + 1 < len(runs) else split.steps
                read = reading[max(0, bisect_left(reading, until) - 1)]
                finish = (max(step, read) + last + 1) * period
            early = 1 if v.node in split.ahead and j else 0  # `steps.lead`
            start = (step - early) * period + begin
            lives[j % copies].append((start, max(finish, start + 1)))
        buffers += [Buffer(copy_name(v.name, c), v.size, _merged(live))
                    for c, live in enumerate(lives)]
    return buffers


def _merged(live: list[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    """Intervals (in order of their starts) merged where they meet or overlap."""
    out: list[list[int]] = []
    for a, b in live:
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return tuple((a, b) for a, b in out)


def _periodic(first: int, length: int, spacing: int, count: int
              ) -> tuple[tuple[int, int], ...]:
    """`count` intervals of `length`, the first at `first`, `spacing` apart, merged
    where they meet or overlap: all into one when spacing <= length (equal intervals
    equally spaced: if one meets the next, every one does), else none."""
    if spacing <= length:
        return ((first, first + (count - 1) * spacing + length),)
    stop = first + count * spacing
    return tuple(zip(range(first, stop, spacing), range(first + length, stop + length,
                                                          spacing), strict=True))


def _stretch(unroll: int, steps: int, rotations) -> int:
    """Steps to unroll so that, in one stretch every buffer shares, the copies of all
    values meet as they do anywhere in the group: every copy of a value reloaded every
    `every` steps runs whole at least once, and the rotations of all values go through
    a whole common period (the lcm of copies x every) after `unroll` steps of filling
    the pipeline. Without a rotating hoisted value, `unroll` already does. A stretch
    per value (as before) left the per-step values out of the steps where a hoisted
    weight's second copy lives, and the allocator put that copy on top of them
    (gpt2_base: a batched Gemm's B reloaded every 8 steps over its A slices)."""
    hoisted = [(copies, every) for _, copies, every in rotations if copies > 1 and every > 1]
    if not hoisted:
        return unroll  # per-step values recur within the pipeline's depth
    longest = max((copies + 1) * every for copies, every in hoisted)
    common = math.lcm(*(copies * every for _, copies, every in rotations))
    return min(steps, unroll + common + longest)


def accumulating(cand: Candidate) -> tuple[int, int] | None:
    """(node, pieces) when the candidate accumulates a partial sum over `pieces`
    consecutive steps (its reduction cut in time), else None."""
    if cand.reduce is None or math.prod(cand.reduce.split) <= 1:
        return None
    return cand.reduce.node, math.prod(cand.reduce.split)


def frame_times(spec, ts):
    """Start and end of each node's task within a frame (one list schedule), and the
    frame length (a period)."""
    starts: dict[int, int] = {}
    ends: dict[int, int] = {}
    free: dict[str, int] = {}
    stage = {t.node: t.stage for t in ts if t.lane != "noc"}
    for t in sorted(ts, key=lambda t: (t.stage, t.node)):
        if t.lane == "noc":
            continue
        node = spec.nodes[t.node]
        ready = max((ends.get(r.node, 0) for r in node.inputs
                     if not r.is_input and stage.get(r.node) == t.stage), default=0)
        start = max(ready, free.get(t.lane, 0))
        starts[t.node], ends[t.node] = start, start + max(1, t.cycles)
        free[t.lane] = ends[t.node]
    period = max(ends.values(), default=1)
    return starts, ends, period


# --------------------------------------------------------------------------------------
# The whole evaluation
# --------------------------------------------------------------------------------------


def group_bound(spec: GroupSpec, config: TX8Config) -> int:
    """The group's lower bound in cycles: the largest of its `bound_parts`."""
    return max(bound_parts(spec, config).values())


def ddr_side(spec: GroupSpec, node: Node) -> Stored:
    """How the DDR side of a load or store node is stored: a store writes its result,
    a load reads its group input (a LoadConst, no input, its constant as loaded). The
    two sides differ for a converting DMA (fuse-channel-norm-dma)."""
    if node.kind == "load" and node.inputs and node.inputs[0].is_input:
        return spec.value(node.inputs[0])
    return node.results[0]


def live_buffers(spec: GroupSpec, cand: Candidate, config: TX8Config) -> list[Buffer]:
    """The buffer copies of a candidate with their live intervals (what the allocator
    placed; for checking a plan's offsets)."""
    split = data_split(spec, cand, config)
    ts = tasks(spec, cand, split, config)
    return buffer_lives(spec, ts, spm_buffers(spec, split, ts, config), split, cand)


class Evaluator:
    """Evaluates candidates of one group, with what they share computed once: the
    propagated windows, and per sharding, split and reduction cut the data split and the
    node tasks (the pipelined, deep and unpipelined forms of a candidate differ only in
    their stages); a candidate offered again gets its first answer; a deep form where
    no node's stage differs (`deep_stages_differ`) is its shallow form's answer under
    its own name; other candidates with the same tasks and schedule share one estimate
    (`estimates`) and one lower bound (`floors`)."""

    def __init__(self, spec: GroupSpec, config: TX8Config, constants_first: bool = True):
        self.spec, self.config = spec, config
        self.deep_differs = deep_stages_differ(spec)
        self.constants_first = constants_first  # `Schedule.constants_first`
        self.propagate = Propagator(spec)
        self.bound = group_bound(spec, config)
        self.splits: dict = {}
        self.answers: dict = {}
        self.estimates: dict = {}
        """(tasks, schedule) -> `estimate` of them: a pure function of its arguments,
        and a dict, not the evaluator, so that a Pending's estimate holds no reference
        back to the cache that holds the Pending."""
        self.floors: dict = {}
        """(tasks, schedule) -> `estimate_lower_bound` of them (as `estimates`)."""
        self.early: dict = {}
        """(tasks, schedule) -> `early_run` of them: the bound's and the estimate's
        (as `estimates`)."""
        self.slice_costs: dict = {}
        """`node_tasks`' memo of the slices' work and cycles."""

    def __call__(self, cand: Candidate, allocate_spm: bool = True) -> Plan:
        return self.pending(cand, allocate_spm).plan

    def pending(self, cand: Candidate, allocate_spm: bool = True) -> Pending:
        """`prepare` of `cand` (cached). A deep form that stages nothing otherwise gets
        its shallow form's answer (the same stages, tasks, buffers and estimate: the
        search asks for both, and preparing it again cost a data split's tasks, SPM
        allocation and schedule)."""
        if cand.deep and not self.deep_differs:
            return _remembered(self.answers, (cand, allocate_spm), lambda: self.pending(
                replace(cand, deep=False), allocate_spm).renamed(cand))
        return _remembered(self.answers, (cand, allocate_spm), lambda: prepare(
            self.spec, cand, self.config, allocate_spm, self))

    def split(self, cand: Candidate) -> tuple[Split, tuple[tuple[Task, ...], dict[int, str]]]:
        """`data_split` of `cand` and its `node_tasks` (cached)."""
        def compute():
            split = data_split(self.spec, cand, self.config, self.propagate)
            return split, node_tasks(self.spec, split, self.config, self.slice_costs)

        return _remembered(self.splits, (cand.sharding, cand.split, cand.reduce,
                                         cand.interchange), compute)


@dataclass(frozen=True)
class _Refused:
    """A remembered `Rejected` (its message and bytes needed: the exception itself
    would keep its traceback's frames, and the caches, alive in a reference cycle)."""

    reason: str
    spm_needed: int | None


def _remembered(cache: dict, key, compute):
    """`compute()` once per key: its result, or again its `Rejected` (a fresh one)."""
    found = cache.get(key)
    if found is None:
        try:
            found = compute()
        except Rejected as e:
            found = _Refused(str(e), e.spm_needed)
        cache[key] = found
    if isinstance(found, _Refused):
        raise Rejected(found.reason, found.spm_needed)
    return found


def evaluate(spec: GroupSpec, cand: Candidate, config: TX8Config, allocate_spm: bool = True,
             shared: Evaluator | None = None) -> Plan:
    """The plan of a candidate, or `Rejected`."""
    return prepare(spec, cand, config, allocate_spm, shared).plan


class Pending:
    """A candidate evaluated up to its estimate: whether it fits (data split, SPM
    allocation), its tiles and SPM peak, and `lower_bound`, cycles its estimate cannot go
    below (`estimate_lower_bound`); `plan` runs the estimate (once) and gives the Plan.
    The search compares a candidate's bound with the best plan so far and runs the
    estimate only when the candidate could win. `spm_peak` may be given as a function
    computing it (a placement `prepare` leaves until it is asked: it runs at most once)."""

    __slots__ = ("candidate", "tiles", "_spm_peak", "lower_bound", "_finish", "_plan")

    def __init__(self, candidate: Candidate, tiles: int, spm_peak: int | Callable[[], int],
                 lower_bound: int, finish):
        self.candidate, self.tiles, self._spm_peak = candidate, tiles, spm_peak
        self.lower_bound, self._finish, self._plan = lower_bound, finish, None

    @property
    def spm_peak(self) -> int:
        if callable(self._spm_peak):
            self._spm_peak = self._spm_peak()
        return self._spm_peak

    @property
    def plan(self) -> Plan:
        if self._plan is None:
            self._plan, self._finish = self._finish(), None
        return self._plan

    @property
    def cycles(self) -> int:
        return self.plan.cycles

    @property
    def estimated(self) -> bool:
        """Whether its estimate has run (asking `cycles` costs nothing more)."""
        return self._plan is not None

    def renamed(self, candidate: Candidate) -> Pending:
        """This answer for `candidate`, another name of the same plan (its Plan's
        `candidate` is `candidate`)."""
        return Pending(candidate, self.tiles, lambda: self.spm_peak, self.lower_bound,
                       lambda: replace(self.plan, candidate=candidate))


def prepare(spec: GroupSpec, cand: Candidate, config: TX8Config, allocate_spm: bool = True,
            shared: Evaluator | None = None) -> Pending:
    """`evaluate` up to the estimate (a `Pending`), or `Rejected`.

    The SPM placement runs here when it decides whether the candidate fits, or when the
    lower bound needs it; else when the plan or its SPM peak is asked (`placed_later`:
    most candidates the search prepares are never estimated, and their placements were
    a twentieth of its time)."""
    shared = shared or Evaluator(spec, config)
    split, unstaged = shared.split(cand)
    if split.tiles > config.tiles_per_chip:
        raise Rejected(f"{split.tiles} tiles busy, the chip has {config.tiles_per_chip}")
    ts = tasks(spec, cand, split, config, unstaged)
    values = spm_buffers(spec, split, ts, config)
    buffers = buffer_lives(spec, ts, values, split, cand)
    align = config.batch_align_bytes
    capacity = config.spm_bytes_per_tile - spec.spm_reserve
    spans = live_intervals(buffers)  # once for the bound and the placement
    bound = max_live(buffers, align, spans)
    if bound > capacity:
        raise Rejected(f"at least {bound} bytes of SPM live at once, {capacity} available",
                       bound)
    unplaced = schedule_of(spec, cand, split, values, buffers, ts, config,
                           shared.constants_first)
    @cache
    def placed() -> Allocation:  # the placement, computed once
        return allocate(buffers, align, capacity, spans=spans, live=bound)

    later = allocate_spm and placed_later(buffers, align, capacity, ts, unplaced)
    schedule = unplaced
    if allocate_spm and not later:
        try:
            schedule = with_placement(spec, unplaced, values, buffers, placed())
        except OutOfMemory as e:
            raise Rejected(str(e), e.peak) from None

    group_bound_cycles = shared.bound  # not `shared`: its cache holds this Pending
    estimates, early = shared.estimates, shared.early

    key = (tuple(ts), schedule)  # later: the schedule without `kept`, which no bound reads
    floor = shared.floors.get(key)
    if floor is None:
        early[key] = early_run(spec, ts, schedule, config)
        floor = shared.floors[key] = estimate_lower_bound(spec, ts, schedule, config,
                                                          early[key])

    def finish() -> Plan:
        timed, known = (with_placement(spec, unplaced, values, buffers, placed()), None) \
            if later else (schedule, early[key])
        at = (key[0], timed)
        if at not in estimates:
            estimates[at] = estimate(spec, ts, timed, config, known)
        total, busy = estimates[at]
        return _plan(spec, cand, config, split, ts, timed, values, buffers,
                     placed() if allocate_spm else None, bound, group_bound_cycles, total,
                     busy)

    peak = (lambda: placed().peak) if later else placed().peak if allocate_spm else bound
    return Pending(cand, split.tiles, peak, floor, finish)


def placed_later(buffers: list[Buffer], align: int, capacity: int, ts: list[Task],
                 unplaced: Schedule) -> bool:
    """Whether `prepare` may leave a candidate's SPM placement until its plan is asked:
    the placement cannot fail - the buffers fit end to end (`allocate`'s greedy `place`
    puts each buffer at the lowest offset clear of its placed neighbours, at most the
    end of one of them, so every buffer ends within the sizes placed so far: the peak
    is at most their sum) - and the lower bound does not need it: the estimate
    simulates every step, and `simulation_floor` reads nothing of the placement (its
    only trace in the schedule is `kept`, the ready loads that stay in their frame
    order, which the floor never reads: its proof holds for any lane order of a ready
    load's first run, so the floor of the schedule without `kept` is the placed one's);
    an extrapolating estimate's bound simulates its first run, which reads `kept`.
    BERT-base's search: 2 345 of its 2 356 placements fit end to end."""
    if _extrapolated(ts, unplaced) is not None:
        return False
    return sum(-(-b.size // align) * align for b in buffers) <= capacity


def with_placement(spec: GroupSpec, unplaced: Schedule, values: list[_Value],
                   buffers: list[Buffer], placed: Allocation) -> Schedule:
    """`schedule_of` with `placed` given, from the schedule made without it: only
    `kept` depends on the placement."""
    if not unplaced.constants_first:
        return unplaced
    return replace(unplaced, kept=kept_in_order(spec, values, buffers, placed))


def _plan(spec, cand, config, split, ts, schedule, values, buffers, placed, bound,
          group_bound_cycles, total, busy) -> Plan:
    offsets = dict(placed.offsets) if placed else {}
    plans = []
    for v in values:
        names = sorted(b.name for b in buffers if b.name.startswith(v.name + "#"))
        plans.append(BufferPlan(v.name, v.size, len(names),
                                tuple(offsets.get(n, -1) for n in names), v.node, v.kind,
                                v.result))
    ddr_bytes = moved_ddr_bytes(spec, split, ts, schedule, config)
    return Plan(
        candidate=cand, tiles=split.tiles, steps=split.steps,
        stages=tuple(next((t.stage for t in ts if t.node == n.index), 0) for n in spec.nodes),
        slice_shapes=tuple(s or () for s in split.slice_shapes),
        buffers=tuple(plans), spm_peak=placed.peak if placed else bound,
        spm_lower_bound=placed.lower_bound if placed else bound, cycles=total,
        bound_cycles=group_bound_cycles,
        engines=tuple(EngineTime(lane, busy[lane]) for lane in (*LANES, "ddr")
                      if busy[lane]),
        ddr_bytes=ddr_bytes,
        multicast=tuple(sorted(t.node for t in ts if t.delivers)),
    )


def moved_ddr_bytes(spec: GroupSpec, split: Split, ts: list[Task], schedule: Schedule,
                    config: TX8Config) -> int:
    """The DDR bytes a plan moves, tile class by tile class, as the estimate streams
    them: each task a class runs (`_runs_on`: not a node its tiles never move, not the
    read of a multicast load they receive) moves the DDR transfers of its share's slice
    (`Split.share_slices`; tile 0's for the largest share: loads, stores, a Gather's
    rows) at each of its runs (its own steps where `TileClass.runs` says them) on each
    of the tiles streaming it (`_streams`: after a reduction cut over tiles, the owners
    of the shares only). A resident value moves none. Tile 0's windows times every
    busy tile counted the smaller shares and the tiles that move nothing of a node as
    tile 0's (up to 1.39 x what cmodel v2 moves on mobilenet_block). Still counted at
    their largest (as the estimate times them): the last step of a share its pieces do
    not divide evenly, and the halo rows an edge tile of a share does not read."""
    total = 0
    for tc in schedule.classes or (TileClass(schedule.tiles),):
        shapes = split.share_slices[tc.share - 1] if tc.share else split.slice_shapes
        at = dict(tc.runs)
        for t in ts:
            node = spec.nodes[t.node]
            if not t.ddr or node.resident or not _runs_on(t, tc) or shapes[t.node] is None:
                continue
            nbytes = sum(byte_size(x.shape, x.dtype, x.layout, config)
                         for x in node.slicer.work(shapes[t.node]).transfers if x.ddr)
            runs = run_count(at[t.node], tc.steps or schedule.steps) if t.node in at \
                else t.count
            total += nbytes * runs * _streams(t, schedule, tc)
    return round(total)


def late_nodes(spec: GroupSpec, cand: Candidate) -> set[int]:
    """The nodes that run at the end of their steps: stores, and what follows a
    reduction (after its last piece)."""
    late = {n.index for n in spec.nodes if n.kind == "store"}
    if cand.reduce is not None:
        late |= downstream_of(spec, cand.reduce.node)
    return late


def schedule_of(spec: GroupSpec, cand: Candidate, split: Split, values: list[_Value],
                buffers: list[Buffer], ts: list[Task], config: TX8Config,
                constants_first: bool = True, placed: Allocation | None = None
                ) -> Schedule:
    """The estimate's view of a candidate's steps, buffers and tile classes
    (`Schedule`); `placed`, the buffers' SPM placement (None: not placed, every ready
    load taken as moved first)."""
    late = late_nodes(spec, cand)
    copies: dict[str, int] = {}
    for b in buffers:
        name = b.name.rsplit("#", 1)[0]
        copies[name] = copies.get(name, 0) + 1
    owners = 0
    if cand.reduce is not None:
        owners = max(1, split.tiles // math.prod(cand.reduce.sharding))
    classes = tile_classes(split, frozenset(t.node for t in ts if t.delivers))
    shared: dict[int, tuple] = {}  # share -> its costs and remainder steps' costs

    def of_share(share: int) -> tuple:
        """`share_costs` and `edge_costs` of `share`, once for all its classes (a
        multicast's receivers at each distance are classes of one share)."""
        if share not in shared:
            shared[share] = (share_costs(spec, split, share, ts, config) if share else (),
                             edge_costs(spec, split, share, ts, config))
        return shared[share]

    costs = tuple(_at_reach(of_share(tc.share)[0], tc, ts, config, every=True)
                  for tc in classes)
    edges = tuple(tuple((pattern, _at_reach(found, tc, ts, config)) for pattern, found in
                        of_share(tc.share)[1] + crossing_costs(spec, split, tc, ts, config))
                  for tc in classes)
    return Schedule(split.steps, max(1, split.tiles), frozenset(late), tuple(
        (v.node, v.readers, copies.get(v.name, 1)) for v in values if v.kind == "value"),
        accumulating(cand), owners, classes, costs if any(costs) else (),
        edges if any(edges) else (), constants_first,
        kept_in_order(spec, values, buffers, placed) if constants_first else frozenset(),
        split.ragged, split.inner, split.ahead)


def kept_in_order(spec: GroupSpec, values: list[_Value], buffers: list[Buffer],
                  placed: Allocation | None) -> frozenset[int]:
    """The ready loads (`is_ready_load`) whose first buffer copy shares bytes with a
    buffer that lives before it (`Schedule.kept`). The lowering moves a tile's first load
    of a ready value to the front of its list only over instructions that never touch
    its bytes (`tx8c.codegen.lower`'s `_ready_first`); the allocator lets two buffers
    share bytes only where their lives do not meet, so a buffer living earlier on those
    bytes is one an instruction before the load uses, and the load stays in its frame
    order (the transformer encoder's Gemm+Add+LayerNorm: the LayerNorm's bias takes the
    bytes of the Gemm's input rows; run first in the estimate, its load delayed the
    rows' on every tile: 1.109 of cmodel v2). Empty when `placed` is None."""
    if placed is None:
        return frozenset()
    offsets = dict(placed.offsets)
    by_name = {b.name: b for b in buffers}
    kept = set()
    for v in values:
        mine = by_name.get(copy_name(v.name, 0))
        if v.kind != "value" or mine is None or not is_ready_load(spec, v.node):
            continue
        lo = offsets[mine.name]
        hi = lo + mine.size
        if any(b.start < mine.start and offsets[b.name] < hi and lo < offsets[b.name] + b.size
               for b in buffers):
            kept.add(v.node)
    return frozenset(kept)


def is_ready_load(spec: GroupSpec, node: int) -> bool:
    """Whether `node` loads a ready value: a constant, or an input in
    `spec.ready_inputs` (what the lowering may load before its turn: `simulate_tile`)."""
    n = spec.nodes[node]
    return n.kind == "load" and all(r.is_input and r.index in spec.ready_inputs
                                    for r in n.inputs)


def frame_schedule(spec: GroupSpec, cand: Candidate, config: TX8Config
                   ) -> tuple[dict[int, int], int]:
    """Each node's start within a frame of the schedule the SPM allocation assumed, and
    the frame length: a node run at step s happens at (s + stage) * period + start. The
    lowered Program orders each tile's instructions by that time, so the buffers the
    allocator let share bytes are never live at once in the Program's order either."""
    split = data_split(spec, cand, config)
    starts, _, period = frame_times(spec, tasks(spec, cand, split, config))
    return starts, period


def bound_parts(spec: GroupSpec, config: TX8Config) -> dict[str, int]:
    """The parts of the group's lower bound in cycles: "ne" and "ct", its NE and CT work
    spread over all tiles, and "ddr", its compulsory DDR bytes (inputs, constants and
    outputs once) over the DDR bandwidth; with SPM-resident inputs or outputs, "noc",
    their bytes once over every tile's NoC port (`cost.resident_dma_cycles`). No plan
    of the group beats the largest; the per-group roofline analysis
    (bench/bench_group_roofline.py) says which one binds."""
    tiles = config.tiles_per_chip
    lanes = {"ne": 0, "ct": 0}
    ddr = noc = 0
    for n in spec.nodes:
        shape = n.slicer.loop_shape
        if n.kind in ("load", "store"):
            nbytes = window_bytes(n.results[0].shape, ddr_side(spec, n), config)
            if n.resident:
                noc += nbytes
            else:
                ddr += nbytes
            continue
        if n.kind == "ddr":  # its readers' transfers count what they fetch
            continue
        work = n.slicer.work(shape)
        lane = node_lane(n, work)
        if lane in lanes:
            lanes[lane] += cycles(work, config).cycles - config.kernel_issue_cycles
    ddr_cycles = math.ceil(ddr * config.clock_hz / config.ddr_bandwidth_bytes_per_s)
    parts = {"ne": math.ceil(lanes["ne"] / tiles), "ct": math.ceil(lanes["ct"] / tiles),
             "ddr": ddr_cycles}
    if noc:
        port = min(config.lsu_bytes_per_cycle, config.noc_bytes_per_cycle)
        parts["noc"] = math.ceil(noc / (tiles * port))
    return parts
