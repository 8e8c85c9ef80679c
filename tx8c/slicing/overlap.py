"""Cross-group overlap in the model's estimate: a group's ready prefix loads during the
previous group's tail (issue 11, "Pipeline" and "Whole model"; DESIGN.md "Cost model").

Groups run one after another on the tiles, and each pays its fill: a step's loads must
arrive before its first kernel. Its loads need no barrier (`tx8c.codegen.program`,
"Cross-group overlap"): a constant (weights, biases: read-only DDR) loads at once, a
value once the stores of its window are done. The lowering (`tx8c.codegen.lower`,
`lower_module(overlap=True)`) marks the loads leading each tile's ld lane `early`, puts
the first loads of ready values first (constants, and the inputs no group it may run
beside writes: `tx8c.analysis.group_dag.waiting_operands`), and places consecutive
groups' buffers apart (mirrored); cmodel v2 starts them once the previous group's loads
are issued, the bytes they write are free and the bytes they read are stored, while
that group's kernels and stores still run.

The estimate of a group (`Plan.cycles`) stays the group alone on the chip. The model's
estimate chains them (`chained`): group g's share is its cycles less the lane time its
early loads (`early_loads`: its ld lane's loads up to the first that reuses a buffer
copy, so the first `copies` windows of a double-buffered value, not only the first;
ordered as the lowering orders them, `lane_loads`) spend before the previous group
ends, at most its own cycles (`hidden`). They only take the time the previous group
leaves its ld lane idle (its cycles less the lane's busy cycles: the lane runs in
order, so the early loads only take its gaps and its tail). A load of an input the
previous group writes waits for the stores of its window (cmodel v2's `_ddr_deps`):
from when they are done (`stores_lag`: the last step storing such bytes, a
busiest-lane period before the end per later step), and the loads behind it in the
lane wait with it; a load of an input an earlier group writes counts nothing. Branch
overlap hid the constant prefix up to the previous group's whole cycles; once values
load early too that hid too much (transformer_encoder est/sim 0.865), the idle ld lane
keeps the examples at est/sim 1.03-1.06 (bench/README.md "Cross-group overlap, round
2"); the waiting loads moved ResNet-50's est/sim from 1.036 to 1.026 (bench/README.md
"ResNet-50 under 1.5"); the loads past the first windows, in lane order, to the
numbers of bench/README.md "The chained estimate's early loads" (branch chain2).

Requires: plain data only (`GroupSpec`s and their `Plan`s); nothing here touches the IR.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from tx8c.interfaces.sharding import Window
from tx8c.slicing.evaluate import window_bytes
from tx8c.slicing.group import GroupSpec
from tx8c.slicing.plan import Plan
from tx8c.slicing.propagate import SweepMemo, propagate
from tx8c.slicing.steps import Tile, anchor_granules, reduce_at, step_windows, steps, tiles
from tx8c.target.config import TX8Config
from tx8c.target.cost import resident_dma_cycles


def ready_lead(spec: GroupSpec, plan: Plan, config: TX8Config,
               waiting: frozenset[int] = frozenset()) -> int:
    """Cycles a tile's ld lane spends on the group's ready prefix: the loads of its
    early prefix (`early_loads`) of every value the group loads into SPM that no group
    it may run beside still writes - a constant (a load node without inputs), or a group
    input whose index is not in `waiting` (`tx8c.analysis.group_dag.waiting_operands`) -,
    one after another, each paying the DMA setup and streaming at the DDR bandwidth
    shared by the tiles loading it at once (one for a multicast load: `Plan.multicast`;
    every busy tile otherwise), at most the LSU's width (`load_cycles`). A load of a
    waiting input starts once the previous group's stores of its window are done
    (cmodel v2's `_ddr_deps`): `stores_lag` and `chained` price those."""
    return math.ceil(sum(cycles for index, cycles, _ in lane_loads(spec, plan, config,
                                                                    waiting, False)
                         if not _waits(spec.nodes[index], waiting)))


def lane_loads(spec: GroupSpec, plan: Plan, config: TX8Config,
               waiting: frozenset[int] = frozenset(), with_windows: bool = True
               ) -> list[tuple[int, float, list[Window]]]:
    """The early prefix of the group's ld lane (`early_loads`) in the order the lowering
    leaves it: the first load of every ready value (not a load of an input in `waiting`)
    first (`tx8c.codegen.lower`, `_ready_first`), then the rest in step order. Per load:
    its node, the cycles a tile's lane spends on it (`load_cycles`) and - for a load of
    a waiting input - the windows the busy tiles' same loads read (the k-th load of the
    node on each tile: what cmodel v2's `_ddr_deps` makes it wait for); [] else, and
    without `with_windows` (they cost a walk of every tile's steps)."""
    busy = [t for t in tiles(spec, plan.candidate, config) if not t.anchor.is_empty()]
    if not busy:
        return []
    memo = SweepMemo()  # the busy tiles' steps meet most node windows again
    ordered = _ready_first(spec, early_loads(spec, plan, config, busy[0], memo), waiting,
                           plan.multicast)
    waits = {i for i, _ in ordered if _waits(spec.nodes[i], waiting)}
    others = ([early_loads(spec, plan, config, t, memo) for t in busy]
              if waits and with_windows else [])
    out = []
    for index, k in ordered:
        node = spec.nodes[index]
        windows = []
        if index in waits:
            for prefix in others:
                mine = [loops for n, loops in prefix if n == index]
                if k < len(mine):
                    window = node.slicer.result_windows(mine[k])[0]
                    if not window.is_empty():
                        windows.append(window)
        out.append((index, load_cycles(spec, plan, config, node), windows))
    return out


def waiting_refs(node, waiting: frozenset[int]) -> list[int]:
    """The group inputs in `waiting` that the load `node` reads."""
    return [ref.index for ref in node.inputs if ref.is_input and ref.index in waiting]


def _waits(node, waiting: frozenset[int]) -> bool:
    return bool(waiting_refs(node, waiting))


def idle_tail(cycles: float, ld: float) -> float:
    """The time a group of `cycles` leaves its ld lane idle (busy `ld`): what the next
    group's early loads may take (`chained`)."""
    return max(0, cycles - ld)


def _ready_first(spec: GroupSpec, prefix: list[tuple[int, Window]],
                 waiting: frozenset[int], multicast) -> list[tuple[int, int]]:
    """(node, its load number) of `prefix` in lane order: each ready node's first load
    moved to the front (the lowering's `_ready_first`), and every load of a ready
    multicast node (`Plan.multicast`): one tile loads it and the others receive it over
    the NoC (early NocCopys), so it is not on the lane of the tiles whose loads wait
    for stores, and they do not hold it (ResNet-50's 3x3 Convs: the weights stream on
    one tile while the others wait for the previous group's last stores)."""
    numbered, seen = [], {}
    for index, _ in prefix:
        numbered.append((index, seen.get(index, 0)))
        seen[index] = seen.get(index, 0) + 1
    first = [x for x in numbered if (x[1] == 0 or x[0] in multicast)
             and not _waits(spec.nodes[x[0]], waiting)]
    return first + [x for x in numbered if x not in first]


def load_cycles(spec: GroupSpec, plan: Plan, config: TX8Config, node) -> float:
    """Cycles a tile's ld lane spends on one load of `node` (its largest window): the
    DMA setup and the bytes at the DDR bandwidth shared by the tiles loading at once
    (one for a multicast load, `Plan.multicast`; every busy tile otherwise), at most
    the LSU's width; a resident value's over the NoC."""
    nbytes = window_bytes(plan.slice_shapes[node.index], node.results[0], config)
    if nbytes == 0:
        return 0.0
    if node.resident:
        return float(resident_dma_cycles(nbytes, config))
    ddr = config.ddr_bandwidth_bytes_per_s / config.clock_hz
    streams = 1 if node.index in plan.multicast else max(1, plan.tiles)
    return config.dma_setup_cycles + nbytes / min(config.lsu_bytes_per_cycle, ddr / streams)


def early_loads(spec: GroupSpec, plan: Plan, config: TX8Config, tile: Tile,
                memo: SweepMemo | None = None) -> list[tuple[int, Window]]:
    """The loads (node, loop window) of `tile`'s ld lane that can run before any of the
    group's kernels, in lane order: the lowering marks every leading load of the lane
    early (`tx8c.codegen.lower.mark_early`) and the lane runs in step order, so the
    prefix is each step's loads until the first one that writes a buffer copy an
    earlier load of its node filled - a node's load number `copies` (its buffer's
    rotating copies, `Plan.buffers`) overwrites the copy the step `copies` loads
    earlier reads, so it waits for that step's kernel (cmodel v2's WAR dependency),
    which runs only once the tile enters the group, and the lane behind it waits too.
    With double buffers a pipelined group thus loads its first two steps' windows
    early, not only the first (what the chained estimate counted before branch chain2:
    ResNet-50's Conv+Add+Relu groups hid 1716 of the 2521 cycles cmodel v2 hides).
    `memo`: a `SweepMemo` shared by the calls for one group's tiles (`steps.steps`)."""
    copies = {b.node: b.copies for b in plan.buffers if b.kind == "value"}
    loaded: dict[int, int] = {}
    out = []
    for step in steps(spec, plan.candidate, tile, config, memo):
        for node in spec.nodes:
            if node.kind != "load" or not step.runs[node.index]:
                continue
            if loaded.get(node.index, 0) >= copies.get(node.index, 1):
                return out
            loaded[node.index] = loaded.get(node.index, 0) + 1
            out.append((node.index, step.windows.loops[node.index]))
    return out


def stores_lag(spec: GroupSpec, plan: Plan, config: TX8Config, output: int,
               windows: Sequence[Window]) -> int:
    """Cycles before the group's end by which every store of its result `output` whose
    window meets one of `windows` has finished: (steps - 1 - s) periods, s the last step
    at which a tile stores such bytes and a period the busiest lane's cycles per step.
    A pipeline's stores come a period apart and its last ends the group; its period is
    no shorter than the busiest lane's share, so the stores finish no later than this
    says (an early load waiting for them is not assumed to start sooner than it can).
    0 when the result is not a store's or a window meets the last step's stores.

    Each tile's steps are walked from its last: the first whose store window meets is
    the last of its run of equal windows, where the store runs (`steps.steps`)."""
    ref = spec.outputs[output] if output < len(spec.outputs) else None
    if ref is None or ref.is_input or spec.nodes[ref.node].kind != "store" or not windows:
        return 0
    store = spec.nodes[ref.node]
    cand, granules = plan.candidate, anchor_granules(spec, config)

    def meets(anchor, red) -> bool:
        loops = _step_loops(spec, cand, anchor, red)[store.index]
        if loops is None:
            return False
        stored = loops.head(store.slicer.num_outputs)
        return any(not stored.intersect(w).is_empty() for w in windows)

    last = -1
    for tile in tiles(spec, cand, config):
        if tile.anchor.is_empty() or not meets(tile.anchor, tile.reduce):
            continue  # none of the tile's stores meets them
        walk = list(step_windows(tile, cand, granules))
        for s in range(len(walk) - 1, last, -1):
            if meets(*walk[s]):
                last = s
                break
        if last == plan.steps - 1:
            return 0
    if last < 0:
        return 0
    period = max((e.cycles for e in plan.engines), default=0) / max(1, plan.steps)
    return math.floor((plan.steps - 1 - last) * period)


def _step_loops(spec: GroupSpec, cand, anchor: Window, red: Window | None):
    """Every node's loop window at a step (or a tile's share) of `anchor` and `red`."""
    return propagate(spec, anchor, reduce_at(cand, red)).loops


def chained(groups: Sequence[tuple[int, int, Sequence[tuple[float, float | None]]]]
            ) -> list[int]:
    """Each group's share of the model's chained estimate, from (cycles alone, busy
    cycles of its ld lane, its early loads in lane order) per group in program order;
    an early load is (cycles, lag): lag None for a ready load, else how long before the
    previous group's end the stores it waits for are done (`stores_lag`). A group's
    share is its cycles less the lane time its early loads spend before the previous
    group ends (`hidden`), at most its own cycles. The first group hides nothing."""
    shares, idle = [], 0
    for cycles, ld, loads in groups:
        shares.append(cycles - min(hidden(loads, idle), cycles))
        idle = idle_tail(cycles, ld)
    return shares


def hidden(loads: Sequence[tuple[float, float | None]], idle: int) -> int:
    """Lane cycles of `loads` ((cycles, lag) in lane order, as `chained` takes them) run
    before the previous group's end, when it leaves the ld lane idle for its last `idle`
    cycles. A tile's ld lane runs in order (cmodel v2), so the early loads only take the
    previous group's idle tail, one after another; a load waiting for stores starts no
    sooner than `lag` cycles before that end, and the loads behind it wait with it. The
    lane keeps loading past the fill (`early_loads`: up to the first buffer reuse), and
    cmodel v2 starts the group's kernels on what is loaded, so the group's own span
    shortens by all of it (ResNet-50's Conv+Add+Relu groups: 2 521 cycles hidden in the
    run for 1 716 of first windows)."""
    now, done = -float(idle), 0.0
    for cycles, lag in loads:
        start = now if lag is None else max(now, -float(lag))
        if start >= 0:
            break
        done += min(cycles, -start)
        now = start + cycles
    return math.floor(done)
