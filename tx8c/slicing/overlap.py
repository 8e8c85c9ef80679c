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
estimate chains them: group g's share is its cycles less what of its constant prefix
(`constant_lead`) fits in the previous group's tail, the time that group's ld lane is
idle at its end, taken as its cycles less its ld lane's busy time (`chained`).

Requires: plain data only (a `GroupSpec` and its `Plan`); nothing here touches the IR.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from tx8c.slicing.evaluate import window_bytes
from tx8c.slicing.group import GroupSpec
from tx8c.slicing.plan import Plan
from tx8c.target.config import TX8Config


def constant_lead(spec: GroupSpec, plan: Plan, config: TX8Config) -> int:
    """Cycles a tile's ld lane spends on the group's constant prefix: the first window
    of every constant the group loads into SPM (a load node without inputs), one after
    another, each paying the DMA setup and streaming at the DDR bandwidth shared by the
    tiles loading it at once (one for a multicast load: `Plan.multicast`; every busy
    tile otherwise), at most the LSU's width."""
    ddr = config.ddr_bandwidth_bytes_per_s / config.clock_hz
    lead = 0.0
    for node in spec.nodes:
        if node.kind != "load" or node.inputs:
            continue
        nbytes = window_bytes(plan.slice_shapes[node.index], node.results[0], config)
        if nbytes == 0:
            continue
        streams = 1 if node.index in plan.multicast else max(1, plan.tiles)
        lead += config.dma_setup_cycles + nbytes / min(config.lsu_bytes_per_cycle,
                                                       ddr / streams)
    return math.ceil(lead)


def tail_cycles(plan: Plan) -> int:
    """The idle end of the group's ld lane: its cycles less the lane's busy cycles."""
    ld = next((e.cycles for e in plan.engines if e.lane == "ld"), 0)
    return max(0, plan.cycles - ld)


def chained(groups: Sequence[tuple[int, int, int]]) -> list[int]:
    """Each group's share of the model's chained estimate, from (cycles alone, constant
    lead, tail) per group in program order: its cycles less the part of its lead the
    previous group's tail hides. The first group hides nothing."""
    shares, tail = [], 0
    for cycles, lead, own_tail in groups:
        shares.append(cycles - min(lead, tail, cycles))
        tail = own_tail
    return shares
