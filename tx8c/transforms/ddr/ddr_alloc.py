"""ddr-alloc (seed 003, "Compile Option 1: opt_ddr": the DDR allocation that the seed's
ddrConstReorderPass / ddrVarReorderPass then align): an offset in DDR for every tensor
the compiled function keeps there.

Requires: the grouping stage (every compute op of `@main` in a top-level group, barriers
from group-dag or one after every group); group-cost has run for the groups it slices
(it does not read the plans; the lowering does).

What it does (`tx8c.analysis.ddr_tensors`): the graph inputs, the group results and the
graph outputs get lifetimes in barrier epochs (a tensor written in one epoch may be
touched by any group of that epoch); the results of relabel groups (`group_tag` 2) alias
the tensor they relabel; the constants region of the ConstContainer comes first, packed
(`ddr_layout(opt_ddr=False)`), and the variables follow it, each on a
`batch_align_bytes` boundary, placed by the shared interval allocator (best of several
greedy orders, improved by a local search that moves the buffers at the peak earlier in
the order: `ddr_tensors.improve_moves`).

Values spm-resident keeps in SPM (module attribute `tx8c.resident`) get no DDR.

Guarantees: module attribute `tx8c.ddr` (JSON, `DdrPlacement`): the offsets, the
variables' peak and its max-live lower bound, the constants region's size, the tensors
with their shapes, layouts, stored sizes and lifetimes. Two tensors whose lifetimes meet
never share a byte. The IR is otherwise unchanged.

Departs from the seed: the seed allocates in op order; here time is barrier epochs, so
groups of one layer that run at the same time on different tiles never clobber each
other's tensors (group-dag's requirement).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tx8c.analysis.ddr_tensors import constants_bytes, ddr_tensors, place, write_placement
from tx8c.analysis.spm_resident import resident_names
from tx8c.target.config import target_config


@dataclass(frozen=True)
class DdrAllocPass(ModulePass):
    name = "ddr-alloc"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        config = target_config(op)
        tensors = ddr_tensors(op, config)
        placement = place(tensors, constants_bytes(op, opt_ddr=False),
                          config.batch_align_bytes, opt_ddr=False,
                          resident=resident_names(op))
        write_placement(op, placement)
