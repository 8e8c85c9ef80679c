"""Cross-group overlap in the model's estimate: a group's constant prefix loads during
the previous group's tail (issue 11, "Pipeline" and "Whole model"; DESIGN.md "Cost
model").

Groups run one after another on the tiles, and each pays its fill: a step's loads must
arrive before its first kernel. Its constants (weights, biases: read-only DDR) need no
barrier, so the lowering (`tx8c.codegen.lower`, `lower_module(overlap=True)`) puts each
tile's first load of every constant at the front of its list, marks them `early`, and
places consecutive groups' buffers apart (mirrored); cmodel v2 starts them once the
previous group's loads are issued and the bytes they write are free, while that
group's kernels and stores still run.

The estimate of a group (`Plan.cycles`) stays the group alone on the chip. The model's
estimate chains them: group g's share is its cycles less its constant prefix
(`constant_lead`), at most the previous group's cycles (`chained`). The whole previous
group counts, not only the idle end of its ld lane: on cmodel v2 the early loads also
run while a tile waits for the barrier or for its group's other tiles, and the fill they
remove includes the kernels' wait for them. Against cmodel v2 (bench/README.md
"Cross-group overlap"), est/sim with the ld lane's idle tail instead: ResNet-50 1.038,
BERT-base 1.030, the bundled examples up to 1.103; with the whole previous group 1.032,
1.026, 0.93-1.09.

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
