"""layout-relabel: the Reshapes and Transposes that move no bytes in their family become
relabels (issue 15; seed 003 "Tensor Layout").

After layout-align-to-npu every op has its alignment family (`dev_info.mem_layout`). A
Reshape or Transpose whose element map (`element_map()`) is the identity on the bytes of
that family (`tx8c.dialect.relabel.relabel_families`, decided from the address
functions) moves nothing: it is replaced by a `tx8be.Relabel` of the same map, with the
same layout_str and dev_info. Every compact Reshape is one (compact layouts are
row-major); an aligned one is when the channel blocks line up (`[1,128,768]` ->
`[1,1,128,768]`). So after this pass the backend asks one question of an op, OpLib's
`moves_no_bytes()` (True for a Relabel), and every Reshape or Transpose left really moves bytes.

This runs after layout-align-opt, last in the layout stage: layout-normalize-rank made
the relabels whose family did not matter, layout-align-to-npu priced each movement op at
0 in the family where it is a relabel, and this pass records that choice in the IR.

Requires: nothing; ops without dev_info are left alone (their family is not known).
Guarantees: the program computes the same values (a Relabel computes its map); every
Reshape/Transpose left moves bytes in its family. Statistics under "layout-relabel" in
`tx8c.layout_stats`: `relabels_made`, and what the layout stage leaves in the functions:
`relabels`, `reshapes` and `reshape_bytes`, `transposes` and `transpose_bytes` (the bytes
each writes: its result in its family's layout). O(ops); each byte-identity check is
O(elements), cached per map and dtype.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block
from xdsl.passes import ModulePass

from tx8c.analysis.layout_problem import LayoutStats, functions_of, record_layout_stats
from tx8c.dialect.base import Tx8beOp
from tx8c.dialect.layout import is_aligned
from tx8c.dialect.ops.movement import RelabelOp, ReshapeOp, TransposeOp
from tx8c.dialect.relabel import moved_bytes


@dataclass
class RelabelStats(LayoutStats):
    relabels_made: int = 0
    relabels: int = 0
    reshapes: int = 0
    reshape_bytes: int = 0
    transposes: int = 0
    transpose_bytes: int = 0


def _family(op: Tx8beOp) -> bool | None:
    """True when the op runs aligned, False compact, None when not decided."""
    return None if op.dev_info is None else is_aligned(op.dev_info.get("mem_layout"))


def relabel_block(block: Block, stats: RelabelStats) -> None:
    for op in list(block.ops):
        if not isinstance(op, Tx8beOp) or op.moves_no_bytes() or _family(op) is None:
            continue
        m = op.element_map()
        if m is None:
            continue
        dtype = op.results[0].type.get_element_type()
        if moved_bytes(m, dtype, _family(op)):
            continue
        c = m.canonical()
        view, perm = (None, None) if m.keeps_order else (c.view, c.perm)
        relabel = RelabelOp.make(
            list(op.operands), shape=m.result, view=view, perm=perm,
            layout_str=op.layout, dev_info=op.dev_info,
        )
        block.insert_op_before(relabel, op)
        op.results[0].replace_all_uses_with(relabel.results[0])
        block.erase_op(op)
        stats.relabels_made += 1


def _count_left(block: Block, stats: RelabelStats) -> None:
    for op in block.ops:
        if isinstance(op, RelabelOp):
            stats.relabels += 1
        elif isinstance(op, ReshapeOp | TransposeOp) and _family(op) is not None:
            written = moved_bytes(op.element_map(), op.results[0].type.get_element_type(),
                                  _family(op))
            if isinstance(op, ReshapeOp):
                stats.reshapes += 1
                stats.reshape_bytes += written
            else:
                stats.transposes += 1
                stats.transpose_bytes += written


@dataclass(frozen=True)
class LayoutRelabelPass(ModulePass):
    """Reshapes/Transposes that are the identity on their family's bytes -> Relabel."""

    name = "layout-relabel"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        stats = RelabelStats()
        for function in functions_of(op):
            relabel_block(function.body.block, stats)
            _count_left(function.body.block, stats)
        record_layout_stats(op, self.name, stats.as_dict())
