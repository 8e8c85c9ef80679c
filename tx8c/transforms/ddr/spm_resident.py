"""spm-resident (issue 11; beyond seed 003, after Tenstorrent's L1-interleaved buffers):
keep values between groups in the tiles' SPM instead of DDR.

Requires: the grouping stage (groups with loads and stores, barriers from group-dag or
one after every group); runs before group-cost, which plans every group below the
reserve this pass writes.

What it does (`tx8c.analysis.spm_resident`): the values between groups that every
reader loads with a DMA, no relabel aliases and no kernel reads from DDR are candidates;
they are taken by DDR bytes saved per reserved byte-epoch and placed first-fit in a
region of `budget` bytes at the top of every tile's SPM, in pages of `page` bytes spread
over the tiles, with lifetimes in barrier epochs (two values whose epochs meet never
share region bytes).

A reserve never makes a model fail to compile: every sliced group with a reserve is
checked (`search.plan_exists`, the search's first phase stopped at the first candidate
that fits below the reserve); the epoch of a group that has no plan is capped one
reserve level lower (`lowered_cap`) and the values are chosen again, until every group
has one (at worst nothing is resident in that epoch, as with residency off).

Guarantees: module attribute `tx8c.resident` (the `Residency`: values, region offsets,
reserve per epoch); on every sliced group attribute `tx8c.resident` (its reserve - its
epoch's, rounded up to a multiple of budget / 4, `group_reserve` -, its resident
operands and results) when it has a reserve. With `budget` 0 the module is left
unchanged. Values not chosen, graph inputs and outputs and constants stay in DDR.

Options: `budget` (bytes of the region per tile; 0 turns residency off; unset, the
default: `default_budget`, a third of the tile's SPM), `page` (bytes of a page, a
multiple of `batch_align_bytes`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tx8c.analysis.ddr_tensors import ddr_tensors, main_body
from tx8c.analysis.group_dag import barrier_epochs
from tx8c.analysis.spm_resident import (
    DEFAULT_PAGE,
    GROUP_ATTR,
    Candidate,
    GroupResidency,
    Residency,
    check_options,
    choose,
    default_budget,
    group_reserve,
    lowered_cap,
    write_group_residency,
    write_residency,
)
from tx8c.dialect.ops.backend import GroupOp
from tx8c.ir_utils import group_ops
from tx8c.slicing.group import group_spec
from tx8c.slicing.search import plan_exists
from tx8c.target.config import target_config


@dataclass(frozen=True)
class SpmResidentPass(ModulePass):
    name = "spm-resident"

    budget: int | None = None
    page: int = DEFAULT_PAGE

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        config = target_config(op)
        budget = default_budget(config) if self.budget is None else self.budget
        check_options(budget, self.page, config)
        if budget == 0:
            return
        found = ddr_tensors(op, config)
        groups = group_ops(main_body(op))
        loads: dict[str, int] = {}
        direct: set[str] = set()  # read by a kernel straight from DDR
        for g in groups:
            for k, value in enumerate(g.operands):
                name = found.names[value]
                if g.attr("group_tag") == GroupOp.IN_DDR or not _loaded(g, k):
                    direct.add(name)
                loads[name] = loads.get(name, 0) + 1
        excluded = direct | {root for root, _ in found.aliases.values()}
        candidates = [Candidate(v.name, v.size, v.live, loads.get(v.name, 0))
                      for v in found.values if v.kind == "value" and v.name not in excluded]
        epochs = barrier_epochs(groups)
        caps = [budget] * found.epochs
        fits: dict[tuple, bool] = {}  # per group key: a plan exists below its reserve
        while True:
            residency = choose(candidates, found.epochs, budget, self.page, config, caps)
            write_residency(op, residency)
            reserved = _write_groups(groups, epochs, residency, found.names)
            starved = {epoch for g, epoch in reserved if not _plannable(g, config, fits)}
            if not starved:
                return
            for epoch in starved:
                caps[epoch] = lowered_cap(residency.reserve[epoch], budget)


def _write_groups(groups: list[GroupOp], epochs: list[int], residency: Residency,
                  names: dict) -> list[tuple[GroupOp, int]]:
    """Every sliced group's `GroupResidency` written (removed where it has no reserve);
    the groups with a reserve and their epochs."""
    resident = residency.names
    reserved = []
    for g, epoch in zip(groups, epochs, strict=True):
        reserve = group_reserve(residency.reserve[epoch], residency.budget)
        g.attributes.pop(GROUP_ATTR, None)
        if g.attr("group_tag") == GroupOp.IN_DDR or not reserve:
            continue
        write_group_residency(g, GroupResidency(
            reserve,
            tuple(k for k, v in enumerate(g.operands) if names[v] in resident),
            tuple(r for r, v in enumerate(g.results) if names[v] in resident)))
        reserved.append((g, epoch))
    return reserved


def _plannable(group: GroupOp, config, fits: dict[tuple, bool]) -> bool:
    """Whether group-cost's search finds a plan for `group` below its reserve
    (`search.plan_exists`, remembered per group key: equal groups are planned alike)."""
    spec = group_spec(group)
    if spec.key not in fits:
        fits[spec.key] = plan_exists(spec, config)
    return fits[spec.key]


def _loaded(group: GroupOp, k: int) -> bool:
    """Every reader of the group's operand `k` inside the body is a load (a DMA)."""
    return all(use.operation.ddr_transfer() == "load"
               for use in group.block.args[k].uses)
