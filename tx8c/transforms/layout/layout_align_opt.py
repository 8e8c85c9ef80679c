"""layout-align-opt: remove ChannelNorms that convert nothing or convert twice.

Implements seed 003's LayoutAlignOptPass (ConstChannelNormErase, RedundantChannelNormErase)
and one rewrite the issue adds. One walk over each function's top-level block in order
(O(ops)); each ChannelNorm (CN) is looked at once, the first rule that applies wins:

1. Inverse pair: CN(d) of the result of CN(!d) reads the original value in the family it
   was stored in, so its readers read that value directly; the inner CN goes too once it
   has no readers left.
2. RedundantChannelNormErase: a CN of the same value and direction as an earlier one is
   replaced by that one. The seed's code merges any two CNs of one value whatever their
   directions (a slip); we require the same direction.
3. ConstChannelNormErase: a CN of a compile-time constant (tx8be.Constant) is folded into
   the constant: the constant is stored directly in the CN's target layout (its dev_info
   becomes the CN's mem_layout). Decision, generalising the seed (which does this for
   constants of rank <= 1 with a single user only): converting a constant costs nothing at
   run time whatever its rank, so every such CN is folded. When the constant has other
   readers, which need it in its current layout, the CN is replaced by a copy of the
   constant in the target layout (the constant's bytes are stored twice, once per
   layout, instead of being converted on every run).

Requires: nothing beyond valid IR; it is meant to run after layout-align-to-npu, whose
dev_info it keeps consistent: no rewrite makes a reader see another family than before.
Guarantees: the program's meaning is unchanged (CN is the identity on logical values); no
CN of a constant, no two CNs of one value and direction, no CN of an inverse CN remain.
Statistics under "layout-align-opt" in `tx8c.layout_stats`: how many CNs each rule erased
(`inverse_erased`: outer CNs of rule 1 plus inner ones left without readers;
`redundant_erased`; `const_folded`), and what is left: `channel_norms` and
`channel_norm_bytes` (bytes converted at run time: the size of each remaining CN's target
layout).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass

from tx8c.analysis.layout_problem import (
    LayoutStats,
    functions_of,
    is_compile_time,
    record_layout_stats,
)
from tx8c.dialect.attrs import DevAttr
from tx8c.dialect.layout import mem_layout_for
from tx8c.dialect.ops.backend import ChannelNormOp
from tx8c.target.mem_layout import stored_bytes


@dataclass
class AlignOptStats(LayoutStats):
    inverse_erased: int = 0
    redundant_erased: int = 0
    const_folded: int = 0
    channel_norms: int = 0
    channel_norm_bytes: int = 0


def _cn_of(value: SSAValue) -> ChannelNormOp | None:
    owner = value.owner
    return owner if isinstance(owner, ChannelNormOp) else None


def _target_dev_info(cn: ChannelNormOp, existing: DevAttr | None) -> DevAttr:
    """The dev_info of a value stored the way `cn` writes it."""
    layout = mem_layout_for(cn.results[0].type.get_shape(), cn.attr("direction"))
    return DevAttr.make(mem_layout=layout) if existing is None else existing.replace(
        mem_layout=layout
    )


class _BlockOpt:
    """The three rewrites over one block."""

    def __init__(self, block: Block, stats: AlignOptStats):
        self.block = block
        self.stats = stats
        self.kept: dict[tuple[SSAValue, bool], ChannelNormOp] = {}
        self.erased: set[Operation] = set()

    def run(self) -> None:
        for op in list(self.block.ops):
            if isinstance(op, ChannelNormOp) and op not in self.erased:
                self._visit(op)

    def _visit(self, cn: ChannelNormOp) -> None:
        source = cn.operands[0]
        direction = cn.attr("direction")
        inner = _cn_of(source)
        if inner is not None and inner.attr("direction") != direction:
            self._replace(cn, inner.operands[0])
            self.stats.inverse_erased += 1
            if not inner.results[0].uses:
                self._erase(inner)
                self.stats.inverse_erased += 1
            return
        same = self.kept.get((source, direction))
        if same is not None:
            self._replace(cn, same.results[0])
            self.stats.redundant_erased += 1
            return
        if isinstance(source.owner, Operation) and is_compile_time(source.owner):
            self._fold_into_constant(cn, source.owner)
            self.stats.const_folded += 1
            return
        self.kept[(source, direction)] = cn

    def _fold_into_constant(self, cn: ChannelNormOp, const: Operation) -> None:
        if const.results[0].has_one_use():
            target = const
        else:  # other readers need the constant as it is: store a copy in cn's layout
            target = const.clone()
            self.block.insert_op_before(target, cn)
        target.attributes["dev_info"] = _target_dev_info(cn, target.attributes.get("dev_info"))
        self._replace(cn, target.results[0])

    def _replace(self, cn: ChannelNormOp, value: SSAValue) -> None:
        for use in list(cn.results[0].uses):
            use.operation.operands[use.index] = value
        self._erase(cn)

    def _erase(self, cn: ChannelNormOp) -> None:
        key = (cn.operands[0], cn.attr("direction"))
        if self.kept.get(key) is cn:
            del self.kept[key]
        self.erased.add(cn)
        self.block.erase_op(cn)


def _count_left(block: Block, stats: AlignOptStats) -> None:
    for op in block.ops:
        if isinstance(op, ChannelNormOp):
            stats.channel_norms += 1
            value = op.results[0]
            shape = tuple(value.type.get_shape())
            layout = mem_layout_for(shape, op.attr("direction"))
            stats.channel_norm_bytes += stored_bytes(shape, value.type.get_element_type(), layout)


@dataclass(frozen=True)
class LayoutAlignOptPass(ModulePass):
    """Seed 003 LayoutAlignOptPass: fold, merge and cancel ChannelNorms."""

    name = "layout-align-opt"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        stats = AlignOptStats()
        for function in functions_of(op):
            _BlockOpt(function.body.block, stats).run()
            _count_left(function.body.block, stats)
        record_layout_stats(op, self.name, stats.as_dict())
