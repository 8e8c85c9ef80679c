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
groups write counts nothing: it waits for their stores, on a chain of layers their last
ones. Branch overlap hid the constant prefix up to the previous group's whole cycles;
once values load early too that hid too much (transformer_encoder est/sim 0.865), the
idle ld lane keeps the examples at est/sim 1.03-1.06 (bench/README.md "Cross-group
overlap, round 2").

Requires: plain data only (a `GroupSpec` and its `Plan`); nothing here touches the IR.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from tx8c.slicing.evaluate import window_bytes
from tx8c.slicing.group import GroupSpec
from tx8c.slicing.plan import Plan
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
    stores of its window are done (cmodel v2's `_ddr_deps`), often its last ones: it
    counts nothing."""
    ddr = config.ddr_bandwidth_bytes_per_s / config.clock_hz
    lead = 0.0
    for node in spec.nodes:
        if node.kind != "load" or any(ref.is_input and ref.index in waiting
                                      for ref in node.inputs):
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


def chained(groups: Sequence[tuple[int, int, int]]) -> list[int]:
    """Each group's share of the model's chained estimate, from (cycles alone, ready
    lead, busy cycles of its ld lane) per group in program order: its cycles less its
    lead, at most the time the previous group leaves its ld lane idle (a tile's lane
    runs in order: the early loads run in its gaps and after its last load) and its own
    cycles. The first group hides nothing."""
    shares, idle = [], 0
    for cycles, lead, ld in groups:
        shares.append(cycles - min(lead, idle, cycles))
        idle = max(0, cycles - ld)
    return shares
