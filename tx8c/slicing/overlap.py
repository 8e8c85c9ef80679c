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
estimate chains them: group g's share is its cycles less its ready prefix
(`ready_lead`), at most the time the previous group leaves its ld lane idle (its cycles
less the lane's busy cycles: the lane runs in order, so the early loads only take its
gaps and its tail) and its own cycles (`chained`). A load of an input the previous
group writes waits for the stores of its window (cmodel v2's `_ddr_deps`): its first
windows (`waiting_lead`) are hidden too, from when the previous group's stores they
read are done (`stores_lag`: the last step storing such bytes, a busiest-lane period
before the end per later step) and in what the ready prefix left of the idle lane; a
load of an input an earlier group writes counts nothing. Branch overlap hid the
constant prefix up to the previous group's whole cycles; once values load early too
that hid too much (transformer_encoder est/sim 0.865), the idle ld lane keeps the
examples at est/sim 1.03-1.06 (bench/README.md "Cross-group overlap, round 2"); the
waiting lead moves none of them and ResNet-50's est/sim from 1.036 to 1.026
(bench/README.md "ResNet-50 under 1.5").

Requires: plain data only (`GroupSpec`s and their `Plan`s); nothing here touches the IR.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from tx8c.interfaces.sharding import Window
from tx8c.slicing.evaluate import window_bytes
from tx8c.slicing.group import GroupSpec
from tx8c.slicing.plan import Plan
from tx8c.slicing.propagate import propagate
from tx8c.slicing.steps import anchor_granules, reduce_at, step_windows, tiles
from tx8c.target.config import TX8Config
from tx8c.target.cost import resident_dma_cycles


def ready_lead(spec: GroupSpec, plan: Plan, config: TX8Config,
               waiting: frozenset[int] = frozenset()) -> int:
    """Cycles a tile's ld lane spends on the group's ready prefix: the first window of
    every value the group loads into SPM that no group it may run beside still writes -
    a constant (a load node without inputs), or a group input whose index is not in
    `waiting` (`tx8c.analysis.group_dag.waiting_operands`) -, one after another, each
    paying the DMA setup and streaming at the DDR bandwidth shared by the tiles loading
    it at once (one for a multicast load: `Plan.multicast`; every busy tile otherwise),
    at most the LSU's width. A load of a waiting input starts once the previous group's
    stores of its window are done (cmodel v2's `_ddr_deps`): `waiting_lead` and
    `stores_lag` price those."""
    return _first_loads(spec, plan, config,
                        lambda node: not any(ref.is_input and ref.index in waiting
                                             for ref in node.inputs))


def waiting_lead(spec: GroupSpec, plan: Plan, config: TX8Config,
                 inputs: frozenset[int]) -> int:
    """Cycles a tile's ld lane spends on the first windows of the loads of `inputs`
    (group inputs the previous group writes), priced as `ready_lead` prices the ready
    ones."""
    return _first_loads(spec, plan, config,
                        lambda node: any(ref.is_input and ref.index in inputs
                                         for ref in node.inputs))


def _first_loads(spec: GroupSpec, plan: Plan, config: TX8Config, counted) -> int:
    ddr = config.ddr_bandwidth_bytes_per_s / config.clock_hz
    lead = 0.0
    for node in spec.nodes:
        if node.kind != "load" or not counted(node):
            continue
        nbytes = window_bytes(plan.slice_shapes[node.index], node.results[0], config)
        if nbytes == 0:
            continue
        if node.resident:  # over the NoC from the tiles' SPM
            lead += resident_dma_cycles(nbytes, config)
            continue
        streams = 1 if node.index in plan.multicast else max(1, plan.tiles)
        lead += config.dma_setup_cycles + nbytes / min(config.lsu_bytes_per_cycle,
                                                       ddr / streams)
    return math.ceil(lead)


def first_windows(spec: GroupSpec, plan: Plan, config: TX8Config,
                  inputs: frozenset[int]) -> list[Window]:
    """The windows of the group inputs `inputs` that the busy tiles' first loads of
    them read (one per tile and load node), as the lowering moves them (a load runs at
    the first step its window is not None)."""
    nodes = [n for n in spec.nodes if n.kind == "load"
             and any(ref.is_input and ref.index in inputs for ref in n.inputs)]
    cand, granules = plan.candidate, anchor_granules(spec, config)
    out = []
    for tile in tiles(spec, cand, config):
        if tile.anchor.is_empty():
            continue
        left = {n.index: n for n in nodes}
        for anchor, red in step_windows(tile, cand, granules):
            loops = _step_loops(spec, cand, anchor, red)
            for index in [i for i in left if loops[i] is not None]:
                window = left.pop(index).slicer.result_windows(loops[index])[0]
                if not window.is_empty():
                    out.append(window)
            if not left:
                break
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


def chained(groups: Sequence[tuple[int, ...]]) -> list[int]:
    """Each group's share of the model's chained estimate, from (cycles alone, ready
    lead, busy cycles of its ld lane[, waiting lead, stores lag]) per group in program
    order: its cycles less what of its first loads runs while the previous group still
    runs, at most its own cycles. A tile's ld lane runs in order, so the early loads
    only take the time the previous group leaves it idle (its gaps and its tail): the
    ready lead first (the lowering puts those loads first), then the waiting lead - the
    loads of inputs the previous group writes (`waiting_lead`) - from when their
    windows are stored (`stores_lag` cycles before that group's end) on. The first group
    hides nothing."""
    shares, idle = [], 0
    for cycles, lead, ld, *late in groups:
        wait, lag = late or (0, 0)
        ready = min(lead, idle)
        waited = min(wait, max(0, min(idle - ready, lag)))
        shares.append(cycles - min(ready + waited, cycles))
        idle = max(0, cycles - ld)
    return shares
