"""ddr-reorder (seed 003, "Compile Option 1: opt_ddr": ddrConstReorderPass and
ddrVarReorderPass): start DDR tensors on DDR bank boundaries.

A DMA that starts inside a bank shares that bank with its neighbour; the seed aligns
constants and variables to 4096-byte banks when opt_ddr is on (the default). This pass
re-lays the constants region with the ConstContainer's opt_ddr layout (large constants
on a bank, `ConstContainer.ddr_layout(True)`, which is what `consts.bin` holds under
opt_ddr), starts the variables region on a bank and places every variable on a
`ddr_bank_bytes` boundary (the same lifetimes and allocator as ddr-alloc).

Requires: ddr-alloc (module attribute `tx8c.ddr`); otherwise a `Tx8Error` says so.
Guarantees: `tx8c.ddr` says `opt_ddr: true`, every variable offset and the variables
base are multiples of `ddr_bank_bytes`, and `reorder_bytes` is the growth of the whole
DDR footprint (constants region and variables) the alignment cost, next to the new peak
and its lower bound at bank alignment. Lifetimes that meet still never share a byte.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tx8c.analysis.ddr_tensors import (
    constants_bytes,
    ddr_tensors,
    place,
    read_placement,
    write_placement,
)
from tx8c.analysis.spm_resident import resident_names
from tx8c.errors import Tx8Error
from tx8c.target.config import target_config


@dataclass(frozen=True)
class DdrReorderPass(ModulePass):
    name = "ddr-reorder"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        before = read_placement(op)
        if before is None:
            raise Tx8Error("ddr-reorder needs the DDR allocation of ddr-alloc; run "
                           "ddr-alloc first (tx8c-opt -p ddr-alloc,ddr-reorder)")
        config = target_config(op)
        after = place(ddr_tensors(op, config), constants_bytes(op, opt_ddr=True),
                      config.ddr_bank_bytes, opt_ddr=True, resident=resident_names(op))
        cost = after.total_bytes - before.total_bytes + before.reorder_bytes
        write_placement(op, replace(after, reorder_bytes=cost))
