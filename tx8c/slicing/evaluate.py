"""Turning a candidate into a plan: data split, software pipeline, SPM allocation and
estimate (seed 003: DataSplitNew, TS_SwPipeline, SA_BufferLife / SA_BufferMerge /
offsets, Estimate), on plain data.

**Data split.** The anchor's loop space is cut into tile shares and steps (`steps.py`);
windows at the first, a middle and the last step position (`propagate`) give every
node's largest slice and every value's largest window: what its buffers must hold and
what its kernel costs. Which split dims a node's window depends on (probed by moving
one step along each dim) says how often it runs: a weight that does not depend on the
inner loops is loaded once per outer iteration (hoisted).

**Software pipeline.** The seed's TS_SwPipeline lays a step's ops out over the engines
(ld, st, ne, ct, tdma, and noc for partial sums across tiles) and overlaps consecutive
steps: loads of step i+2, computes of step i+1 and stores of step i share a frame (three
stages, multi-buffered). The estimate is the classic pipeline formula: the latency of
the first step plus (steps - 1) periods, a period being the busiest engine's work per step
or the critical path of one step's compute stage, whichever is longer (the seed's
Repeat node: every steady frame is alike). A candidate may also run unpipelined: each
step alone, single-buffered.

**SPM.** Buffers are values (a node's result), scratch (`imm_bytes`) and the partial
sums received over the NoC; a multi-buffered value has one copy per stage it spans. The
steady state is unrolled over enough steps for every copy to recur; each copy is live
from its producer's start to its last consumer's end in each step it serves (seed 003
BufferLife; disjoint intervals stay apart as BufferMerge keeps them), in-place results
take their operand's buffer. `tx8c.analysis.interval_alloc` places them (best of several
greedy orders) and gives the max-live lower bound; a candidate whose peak exceeds the SPM
is rejected, never truncated.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache

from tx8c.analysis.interval_alloc import Buffer, OutOfMemory, allocate, max_live
from tx8c.interfaces.oplib import Engine
from tx8c.interfaces.sharding import Window, piece_bounds
from tx8c.slicing.group import GroupSpec, ValueRef
from tx8c.slicing.plan import BufferPlan, Candidate, EngineTime, Plan
from tx8c.slicing.propagate import Infeasible, check_cuts, largest_shapes, propagate
from tx8c.slicing.steps import anchor_granules, downstream_of, tiles
from tx8c.target.config import TX8Config
from tx8c.target.cost import cycles, noc_reduce_cycles
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


def _step_pieces(cand: Candidate, tile: Window, granules) -> list[list[tuple[int, int]]]:
    return [piece_bounds(hi - lo, s, g)
            for (lo, hi), s, g in zip(tile.pairs(), cand.split, granules, strict=True)]


class Propagator:
    """`propagate` on one spec with a cache (the search asks the same windows often)."""

    def __init__(self, spec: GroupSpec):
        self.spec = spec
        self.cache: dict = {}

    def __call__(self, anchor: Window, reduce=None):
        key = (anchor, None if reduce is None else tuple(reduce.items()))
        found = self.cache.get(key)
        if found is None:
            found = self.cache[key] = propagate(self.spec, anchor, reduce)
        return found


def data_split(spec: GroupSpec, cand: Candidate, config: TX8Config,
               propagate=None) -> Split:
    """Largest slices, run counts and window shapes of a candidate (see the module
    docstring); raises `Rejected` when a node cannot make the cut."""
    propagate = propagate or Propagator(spec)
    granules = anchor_granules(spec, config)
    shares = tiles(spec, cand, config)
    active = sum(1 for t in shares if not t.anchor.is_empty())
    first = shares[0]
    pieces = _step_pieces(cand, first.anchor, granules)
    reduce_pieces = []
    if cand.reduce is not None:
        reduce_pieces = [piece_bounds(hi - lo, s) for (lo, hi), s in zip(
            first.reduce.pairs(), cand.reduce.split, strict=True)]
    step_counts = [len(p) for p in pieces] + [len(p) for p in reduce_pieces]
    whole = propagate(Window.whole(spec.anchor_shape))
    share = propagate(first.anchor, _reduce(cand, first.reduce))
    block = _channel_blocks(spec, config)
    try:
        check_cuts(spec, whole, share, "shard", block)
        samples = []
        for which in ("first", "middle", "last"):
            anchor, red = _sample(first, pieces, reduce_pieces, which)
            w = propagate(anchor, _reduce(cand, red))
            check_cuts(spec, share, w, "split", block)
            samples.append(w)
    except Infeasible as e:
        raise Rejected(str(e)) from None
    _check_side_stores(spec, cand, shares, first, pieces, reduce_pieces, samples[0],
                       propagate)
    sizes = samples + [propagate(a, _reduce(cand, r))
                       for a, r in _interior(spec, cand, pieces, reduce_pieces, first)]
    slice_shapes, value_shapes, result_shapes = _largest(spec, sizes)
    counts = _run_counts(spec, cand, first, pieces, reduce_pieces, samples[0], propagate)
    steps = math.prod(step_counts) if step_counts else 1
    return Split(tuple(slice_shapes), counts, value_shapes, result_shapes, active, steps)


def _reduce(cand: Candidate, window: Window | None):
    if cand.reduce is None or window is None:
        return None
    return {cand.reduce.node: window}


def _sample(tile, pieces, reduce_pieces, which):
    """The anchor (and reduction) window of the first, a middle or the last step."""
    def pick(options):
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


def _channel_blocks(spec: GroupSpec, config) -> dict[ValueRef, tuple[int, int]]:
    """Channel-aligned values with C above the plain-NHWC threshold are cut on whole
    channel blocks (seed 003 alignCx); below it their channels are never cut."""
    blocks = {}
    for n in spec.nodes:
        for r, value in enumerate(n.results):
            if value.aligned and value.shape:
                c = value.shape[-1]
                int8 = value.dtype in ("i8", "ui8")
                granule = c if c <= config.channel_threshold(int8) else config.channel_block(
                    int8)
                blocks[ValueRef(n.index, r)] = (len(value.shape) - 1, granule)
    return blocks


def _largest(spec, samples):
    """Per node, result and value read, the largest shape over the samples (computed in
    `propagate.largest_shapes`, which keeps each sample's shapes with its windows)."""
    return largest_shapes(spec, samples)


def _check_side_stores(spec, cand, shares, first, pieces, reduce_pieces, origin, propagate
                       ) -> None:
    """A store of an intermediate value must not write one element twice: its windows of
    neighbouring steps and neighbouring tiles must not overlap (a halo the next node reads
    is recomputed, not stored again). Equal windows of two steps are one store (it runs
    once); equal windows of two tiles are two stores of the same elements (each tile runs
    its own: a LayerNorm's result stored beside the Gemm that reads it, with the Gemm's
    output columns cut over the tiles)."""
    side = [n.index for n in spec.nodes if n.kind == "store"]
    if not side:
        return
    dims = pieces + reduce_pieces
    neighbours = []  # (a, b, b is another tile)
    for d, options in enumerate(dims):
        if len(options) >= 2:
            index = [0] * len(dims)
            index[d] = 1
            anchor, red = _at(first, pieces, reduce_pieces, index)
            neighbours.append((origin, propagate(anchor, _reduce(cand, red)), False))
    share0 = propagate(first.anchor, _reduce(cand, first.reduce))
    for tile in shares[1:]:
        if tile.anchor != first.anchor:
            neighbours.append((share0, propagate(tile.anchor, _reduce(cand, tile.reduce)),
                               True))
    for a, b, other_tile in neighbours:
        for n in side:
            wa, wb = a.loops[n], b.loops[n]
            if wa is not None and wb is not None and (other_tile or wa != wb) and \
                    not wa.intersect(wb).is_empty():
                raise Rejected(f"{spec.nodes[n].label} would store an element twice")


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
        moved = propagate(anchor, _reduce(cand, red))
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


def tasks(spec: GroupSpec, cand: Candidate, split: Split, config: TX8Config) -> list[Task]:
    """One task per node that runs (and one NoC reduction when the plan cuts a reduction
    over tiles), with its lane, cycles at its largest slice, run count and stage."""
    out = []
    lanes: dict[int, str] = {}
    for n in spec.nodes:
        shape = split.slice_shapes[n.index]
        if shape is None or n.kind == "ddr":  # a table its readers fetch from DDR
            continue
        work = n.slicer.work(shape)
        lanes[n.index] = node_lane(n, work)
        took = cycles(work, config, streaming_tiles=split.tiles).cycles
        ddr = sum(t.ddr for t in work.transfers) and took - config.dma_setup_cycles * len(
            work.transfers)
        out.append(Task(n.index, lanes[n.index], took, split.counts[n.index], 0,
                        max(0, ddr)))
    if cand.pipelined:
        stage = _stages(spec, lanes, cand.deep)
        out = [replace(t, stage=stage[t.node]) for t in out]
    if cand.reduce is not None and math.prod(cand.reduce.sharding) > 1:
        node = spec.nodes[cand.reduce.node]
        ref = ValueRef(node.index, 0)
        shape = split.result_shapes.get(ref)
        if shape is not None:
            nbytes = window_bytes(shape, node.results[0], config)
            late = [split.counts[i] for i in downstream_of(spec, node.index)]
            took = noc_reduce_cycles(nbytes, node.results[0].dtype,
                                     math.prod(cand.reduce.sharding), config)
            out.append(Task(node.index, "noc", took, max(late, default=1),
                            stage[node.index] if cand.pipelined else 0))
    return out


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


def _chain(spec: GroupSpec, ts: list[Task], weight) -> int:
    """The length of one step's schedule of `ts` (list scheduling: a task starts when its
    lane is free and the tasks it reads have finished)."""
    done: dict[int, float] = {}
    free: dict[str, float] = {}
    end = 0.0
    for t in sorted(ts, key=lambda t: (t.stage, t.node, t.lane)):
        node = spec.nodes[t.node]
        ready = max((done.get(r.node, 0.0) for r in node.inputs if not r.is_input),
                    default=0.0)
        start = max(ready, free.get(t.lane, 0.0))
        finish = start + t.cycles * weight(t)
        free[t.lane] = finish
        done[t.node] = max(done.get(t.node, 0.0), finish)
        end = max(end, finish)
    return math.ceil(end)


def estimate(spec: GroupSpec, ts: list[Task], steps: int, pipelined: bool
             ) -> tuple[int, dict[str, int]]:
    """(cycles of the group on one tile, busy cycles per lane and of the DDR channel,
    which the ld and st lanes share)."""
    busy = {lane: sum(t.cycles * t.count for t in ts if t.lane == lane) for lane in LANES}
    busy["ddr"] = math.ceil(sum(t.ddr * t.count for t in ts))
    first = _chain(spec, ts, lambda t: 1)
    if steps <= 1:
        return first, busy

    def later(t: Task) -> float:  # a task's share of each step after the first
        return (t.count - 1) / (steps - 1)

    if not pipelined:
        return first + math.ceil((steps - 1) * _chain(spec, ts, later)), busy
    per_lane = max(sum(t.cycles * later(t) for t in ts if t.lane == lane) for lane in LANES)
    ddr = sum(t.ddr * later(t) for t in ts)
    last = max(t.stage for t in ts)
    compute = max((_chain(spec, [t for t in ts if t.stage == s], later)
                   for s in range(1, last)), default=0)
    period = max(per_lane, ddr, compute)
    return first + math.ceil((steps - 1) * period), busy


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
    in the group, read by this node only, and no smaller."""
    if not node.inplace or node.kind != "compute" or not node.inputs:
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
    buffers = []
    for v in values:
        producer = task_of[v.node]
        last = max((task_of[u].stage for u in v.readers if u in task_of), default=producer.stage)
        span = last - producer.stage + 1
        count = producer.count
        if accumulating is not None and v.node == accumulating[0] and v.kind == "value":
            count = max(1, count // accumulating[1])
        copies = 1 if count == 1 else max(1, min(span, depth))
        every = max(1, steps // max(1, count))
        per_copy: list[list[tuple[int, int]]] = [[] for _ in range(copies)]
        runs = 0
        for step in range(0, unroll, every):
            begin = (step + producer.stage) * period + starts[v.node]
            readers = [u for u in v.readers if u in task_of] or [v.node]
            last_step = step + every - 1
            if last == producer.stage and every == 1:  # read within the producer's frame
                finish = (step + last) * period + max(ends[u] for u in readers)
            else:  # read in a later frame: live until that frame ends
                finish = (last_step + last + 1) * period
            per_copy[runs % copies].append((begin, max(finish, begin + 1)))
            runs += 1
        for c, live in enumerate(per_copy):
            if live:
                buffers.append(Buffer(f"{v.name}#{c}", v.size, tuple(_merge(live))))
    return buffers


def accumulating(cand: Candidate) -> tuple[int, int] | None:
    """(node, pieces) when the candidate accumulates a partial sum over `pieces`
    consecutive steps (its reduction cut in time), else None."""
    if cand.reduce is None or math.prod(cand.reduce.split) <= 1:
        return None
    return cand.reduce.node, math.prod(cand.reduce.split)


def _merge(intervals):
    out = []
    for a, b in sorted(intervals):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


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
    """The group's lower bound in cycles: its NE work, CT work, and compulsory DDR bytes
    (inputs, constants and outputs once) spread over all tiles."""
    tiles = config.tiles_per_chip
    lanes = {"ne": 0, "ct": 0}
    ddr = 0
    for n in spec.nodes:
        shape = n.slicer.loop_shape
        if n.kind in ("load", "store"):
            ddr += window_bytes(n.results[0].shape, n.results[0], config)
            continue
        if n.kind == "ddr":  # its readers' transfers count what they fetch
            continue
        work = n.slicer.work(shape)
        lane = node_lane(n, work)
        if lane in lanes:
            lanes[lane] += cycles(work, config).cycles - config.kernel_issue_cycles
    ddr_cycles = math.ceil(ddr * config.clock_hz / config.ddr_bandwidth_bytes_per_s)
    return max(math.ceil(lanes["ne"] / tiles), math.ceil(lanes["ct"] / tiles), ddr_cycles)


def live_buffers(spec: GroupSpec, cand: Candidate, config: TX8Config) -> list[Buffer]:
    """The buffer copies of a candidate with their live intervals (what the allocator
    placed; for checking a plan's offsets)."""
    split = data_split(spec, cand, config)
    ts = tasks(spec, cand, split, config)
    return lifetimes(spec, ts, spm_buffers(spec, split, ts, config), split.steps,
                     cand.pipelined, accumulating(cand))


class Evaluator:
    """Evaluates candidates of one group, with what they share computed once."""

    def __init__(self, spec: GroupSpec, config: TX8Config):
        self.spec, self.config = spec, config
        self.propagate = Propagator(spec)
        self.bound = group_bound(spec, config)

    def __call__(self, cand: Candidate, allocate_spm: bool = True) -> Plan:
        return evaluate(self.spec, cand, self.config, allocate_spm, self)


def evaluate(spec: GroupSpec, cand: Candidate, config: TX8Config, allocate_spm: bool = True,
             shared: Evaluator | None = None) -> Plan:
    """The plan of a candidate, or `Rejected`."""
    shared = shared or Evaluator(spec, config)
    split = data_split(spec, cand, config, shared.propagate)
    if split.tiles > config.tiles_per_chip:
        raise Rejected(f"{split.tiles} tiles busy, the chip has {config.tiles_per_chip}")
    ts = tasks(spec, cand, split, config)
    total, busy = estimate(spec, ts, split.steps, cand.pipelined)
    values = spm_buffers(spec, split, ts, config)
    buffers = lifetimes(spec, ts, values, split.steps, cand.pipelined, accumulating(cand))
    align = config.batch_align_bytes
    capacity = config.spm_bytes_per_tile
    bound = max_live(buffers, align)
    if bound > capacity:
        raise Rejected(f"at least {bound} bytes of SPM live at once, {capacity} available",
                       bound)
    placed = None
    if allocate_spm:
        try:
            placed = allocate(buffers, align, capacity)
        except OutOfMemory as e:
            raise Rejected(str(e), e.peak) from None
    offsets = dict(placed.offsets) if placed else {}
    plans = []
    for v in values:
        names = sorted(b.name for b in buffers if b.name.startswith(v.name + "#"))
        plans.append(BufferPlan(v.name, v.size, len(names),
                                tuple(offsets.get(n, -1) for n in names), v.node, v.kind,
                                v.result))
    ddr_bytes = sum(
        window_bytes(split.result_shapes.get(ValueRef(t.node, 0), ()) or (0,),
                     spec.nodes[t.node].results[0], config) * t.count * split.tiles
        for t in ts if spec.nodes[t.node].kind in ("load", "store")
    )
    return Plan(
        candidate=cand, tiles=split.tiles, steps=split.steps,
        stages=tuple(next((t.stage for t in ts if t.node == n.index), 0) for n in spec.nodes),
        slice_shapes=tuple(s or () for s in split.slice_shapes),
        buffers=tuple(plans), spm_peak=placed.peak if placed else bound,
        spm_lower_bound=placed.lower_bound if placed else bound, cycles=total,
        bound_cycles=shared.bound,
        engines=tuple(EngineTime(lane, busy[lane]) for lane in (*LANES, "ddr")
                      if busy[lane]),
        ddr_bytes=ddr_bytes,
    )


def frame_schedule(spec: GroupSpec, cand: Candidate, config: TX8Config
                   ) -> tuple[dict[int, int], int]:
    """Each node's start within a frame of the schedule the SPM allocation assumed, and
    the frame length: a node run at step s happens at (s + stage) * period + start. The
    lowered Program orders each tile's instructions by that time, so the buffers the
    allocator let share bytes are never live at once in the Program's order either."""
    split = data_split(spec, cand, config)
    starts, _, period = frame_times(spec, tasks(spec, cand, split, config))
    return starts, period
