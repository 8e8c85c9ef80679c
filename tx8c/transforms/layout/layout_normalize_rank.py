r"""layout-normalize-rank: rank-4 views of odd-rank data, and relabels for movement that
moves no bytes (issue 15; seed 000 "Odd-Dimension Output", seed 003 "Tensor Layout").

Why. Seed 000 makes an op whose output has an odd rank (1, 3) NALIGN, "because Cx needs
rank 2 or 4". A transformer's activations are rank 3 (`[1,128,768]`), so every LayerNorm,
residual Add and activation between two Gemms (ALIGN-only) would need two ChannelNorms.
Yet `[1,128,768]` and `[1,1,128,768]` are the same bytes, compact and aligned alike
(`tx8c.target.mem_layout`'s rank mapping gives both (N, HW, C) = (1, 128, 768)). So this
pass runs those ops on the rank-4 view, where the rule no longer applies; the reshapes
the views need are relabels (`tx8be.Relabel`), which move no bytes. Runs after
layout-preset-to-npu (it only touches Tensor-class data of odd rank) and before
layout-align-to-npu, which then sees rank-4 ops and free relabels.

Two walks over each function's top-level block:

1. Rank views, in program order. An op (not a constant, not a movement op: those are
   step 2's) whose results all have rank 1 or 3 is given the view `[d] -> [1, d]`,
   `[d0, d1, d2] -> [d0, 1, d1, d2]` (`RankView`) when
   - the view is the identity on the bytes of every value it applies to, in both
     families (`relabel_families` of the reshape: decided from the address functions,
     so a machine configuration where it is not would keep the old rank), and
   - the op can run on it: `view_attributes(view)` (ShapeInference) is not None; it
     gives the attributes to set (LayerNorm/Softmax/Split axis, Reduce axes, ...).
   Its operands of that rank are viewed (a constant is reshaped at compile time into a
   new Constant: weights follow; any other value through a Relabel placed after its
   definition, one per value, shared; a value that is the unview of an earlier op's
   result is read as that result directly), its results get the view's type, and one
   Relabel after the op gives its readers the old shape back (erased when nobody
   needs it).
2. Movement chains, in program order. Each op that states an element map (Reshape,
   Transpose, Relabel: `element_map()`) is composed with its operand's producer when
   that is one too (`ViewMap.then`; the producer already stands for its whole chain),
   and the op is rewritten as
   - nothing, when the map is the identity (a view and its unview cancel);
   - one Relabel, when the map is the identity on the bytes in every family the chain
     can run in (the families of each op's OpAttr, intersected: a Transpose is
     ALIGN-only, a Reshape BOTH): the head split `[1,128,768] -> [1,128,12,64] ->
     [1,12,128,64]` and the head merge are relabels in Cx;
   - for a chain of two ops: one Reshape when the map keeps the elements' order, one
     Transpose when it is one, else, when both ops move bytes, a Relabel and one
     Transpose when the chain can run aligned and splits so (`split_relabel`: the key
     of attention, `[1,128,768] -> [1,128,12,64] -> [1,12,64,128]`, becomes the free
     head split and one per-head transpose, where a Reshape and a Transpose both moved
     bytes);
   - itself otherwise (layout-align-to-npu prices what it moves; layout-relabel makes
     it a relabel if the family chosen makes it one).
   A producer nobody reads any more is erased.

Requires: the layout_str of every op (layout-transmit); functions whose body is one block
in SSA order (nested regions are not entered).
Guarantees: the program computes the same values (views and relabels reorder no element
logically; a reduction over a viewed axis sums the same elements in the same order);
every Relabel it makes is the identity on bytes in every family its OpAttr allows (its
`align_mode`); ops of odd rank that could not be viewed keep their rank (counted).
Statistics under "layout-normalize-rank" in `tx8c.layout_stats`: `rank_views` (ops
now running on a view), `const_views` (constants reshaped for them), `transposes_split`
(chains written as a relabel and one Transpose), `odd_rank_ops` (ops left with results
of rank 1 or 3 that no view fits), and the movement ops in the functions afterwards:
`relabels`, `reshapes`, `transposes`. O(ops + uses); each byte-identity check is
O(elements) and cached per shape and dtype.

Departs from the seed: seed 000's odd-rank rule is kept (layout-align-to-npu applies it
to what is left), but most odd-rank data no longer reach it. Rank 5 and higher are not
viewed (a rank-4 view of them merges dims, which the ops' axes would have to follow).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from tx8c.analysis.layout_problem import (
    LayoutStats,
    functions_of,
    is_compile_time,
    record_layout_stats,
)
from tx8c.dialect.attrs import AlignMode
from tx8c.dialect.base import Tx8beOp, to_attr
from tx8c.dialect.layout import result_layout, tensor_class_layout
from tx8c.dialect.ops.backend import ConstantOp
from tx8c.dialect.ops.movement import RelabelOp, ReshapeOp, TransposeOp
from tx8c.dialect.relabel import (
    ALIGNED_AND_COMPACT,
    RankView,
    ViewMap,
    relabel_families,
    split_relabel,
)
from tx8c.interfaces.shape_inference import shape_of

VIEWS = {1: RankView(1, (0,)), 3: RankView(3, (1,))}
"""The view of each odd rank: [d] -> [1, d], [d0, d1, d2] -> [d0, 1, d1, d2]."""
BOTH_FAMILIES = frozenset(ALIGNED_AND_COMPACT)


@dataclass
class NormalizeStats(LayoutStats):
    rank_views: int = 0
    const_views: int = 0
    transposes_split: int = 0
    odd_rank_ops: int = 0
    relabels: int = 0
    reshapes: int = 0
    transposes: int = 0


def _element_type(value: SSAValue):
    return value.type.get_element_type()


def _allowed_families(op: Tx8beOp) -> frozenset[bool]:
    """The families the op may run in, by its OpAttr (True: aligned)."""
    mode = op.query_op_attr().align_mode
    if mode == AlignMode.ALIGN:
        return frozenset({True})
    if mode == AlignMode.NALIGN:
        return frozenset({False})
    return BOTH_FAMILIES


def _relabel(source: SSAValue, m: ViewMap, layout: str | None = None) -> RelabelOp:
    """A Relabel of `source` by `m` (its canonical view and perm; none for a reshape)
    with `layout` as layout_str (default: the Tensor class of the result)."""
    c = m.canonical()
    view = perm = None
    if not m.keeps_order:
        view, perm = c.view, c.perm
    layout = tensor_class_layout(m.result) if layout is None else layout
    return RelabelOp.make([source], shape=m.result, view=view, perm=perm, layout_str=layout)


# --------------------------------------------------------------------------------------
# Step 1: rank views
# --------------------------------------------------------------------------------------


def _view_is_relabel(shape: tuple[int, ...], view: RankView, dtype) -> bool:
    return relabel_families(ViewMap.reshape(shape, view.shape(shape)), dtype) == BOTH_FAMILIES


class _RankViews:
    def __init__(self, block: Block, stats: NormalizeStats):
        self.block = block
        self.stats = stats
        self.viewed: dict[SSAValue, SSAValue] = {}
        """Value of odd rank -> its view (a Relabel's or a reshaped constant's result)."""
        self.unviews: dict[SSAValue, SSAValue] = {}
        """A viewed op's unview Relabel result -> the op's (viewed) result."""
        self.constants: list[SSAValue] = []
        """Constants reshaped for a view (erased at the end when nobody reads them)."""

    def run(self) -> None:
        for op in list(self.block.ops):
            view = self._view_of(op)
            if view is None:
                continue
            attrs = op.view_attributes(view) if self._bytes_allow(op, view) else None
            if attrs is None:
                self.stats.odd_rank_ops += 1
                continue
            self._apply(op, view, attrs)
        for value in [*self.unviews, *self.constants]:
            if not value.uses:
                self.block.erase_op(value.owner)

    @staticmethod
    def _view_of(op: Operation) -> RankView | None:
        """The view for an op whose results all have one odd rank."""
        if not isinstance(op, Tx8beOp) or not op.results or is_compile_time(op):
            return None
        if op.element_map() is not None:
            return None  # movement: step 2 composes it with the views around it
        ranks = {len(shape_of(r)) for r in op.results}
        return VIEWS.get(ranks.pop()) if len(ranks) == 1 else None

    @staticmethod
    def _bytes_allow(op: Tx8beOp, view: RankView) -> bool:
        values = [*op.operands, *op.results]
        return all(
            _view_is_relabel(shape_of(v), view, _element_type(v))
            for v in values if len(shape_of(v)) == view.rank
        )

    def _apply(self, op: Tx8beOp, view: RankView, attrs: dict) -> None:
        operands = [
            self._viewed(v, view) if len(shape_of(v)) == view.rank else v for v in op.operands
        ]
        for name, value in attrs.items():
            op.attributes[name] = to_attr(op.ATTR_KINDS[name], value)
        op.operands = operands
        anchor = op
        for result in list(op.results):
            old_shape = shape_of(result)
            new_type = TensorType(_element_type(result), view.shape(old_shape))
            viewed = Rewriter.replace_value_with_new_type(result, new_type)
            unview = _relabel(viewed, ViewMap.reshape(new_type.get_shape(), old_shape),
                              result_layout(op.layout))
            self.block.insert_op_after(unview, anchor)
            anchor = unview
            viewed.replace_uses_with_if(
                unview.results[0], lambda use, unview=unview: use.operation is not unview
            )
            self.unviews[unview.results[0]] = viewed
        self.stats.rank_views += 1

    def _viewed(self, value: SSAValue, view: RankView) -> SSAValue:
        """`value` seen through `view`: an earlier op's result, or one shared Relabel or
        reshaped constant per value."""
        if value in self.unviews:
            return self.unviews[value]
        if value not in self.viewed:
            self.viewed[value] = self._make_view(value, view)
        return self.viewed[value]

    def _make_view(self, value: SSAValue, view: RankView) -> SSAValue:
        shape = shape_of(value)
        owner = value.owner
        if isinstance(owner, Operation) and is_compile_time(owner):
            array = owner.compute()[value.index].reshape(view.shape(shape))
            new = ConstantOp.from_array(array, layout_str=tensor_class_layout(array.shape))
            self.block.insert_op_after(new, owner)
            self.constants.append(value)
            self.stats.const_views += 1
            return new.results[0]
        new = _relabel(value, ViewMap.reshape(shape, view.shape(shape)))
        if isinstance(value, BlockArgument):
            self.block.insert_op_before(new, self.block.first_op)
        else:
            self.block.insert_op_after(new, owner)
        return new.results[0]


# --------------------------------------------------------------------------------------
# Step 2: movement chains
# --------------------------------------------------------------------------------------


def _movement(value: SSAValue) -> Tx8beOp | None:
    owner = value.owner
    if isinstance(owner, Tx8beOp) and owner.element_map() is not None:
        return owner
    return None


def _as_transpose(m: ViewMap) -> tuple[int, ...] | None:
    """The perm of one Transpose of the source that is `m`, if there is one."""
    if len(m.source) != len(m.result) or sorted(m.source) != sorted(m.result):
        return None
    canonical = m.canonical()
    for perm in itertools.permutations(range(len(m.source))):
        if tuple(m.source[p] for p in perm) != m.result:
            continue
        if ViewMap.transpose(m.source, perm).canonical() == canonical:
            return perm
    return None


class _Chains:
    def __init__(self, block: Block, stats: NormalizeStats):
        self.block = block
        self.stats = stats

    def run(self) -> None:
        for op in list(self.block.ops):
            if op.parent is self.block and isinstance(op, Tx8beOp):
                m = op.element_map()
                if m is not None:
                    self._visit(op, m)
        for op in self.block.ops:
            self.stats.relabels += isinstance(op, RelabelOp)
            self.stats.reshapes += isinstance(op, ReshapeOp)
            self.stats.transposes += isinstance(op, TransposeOp)

    def _visit(self, op: Tx8beOp, m: ViewMap) -> None:
        source, links = op.operands[0], [op]
        producer = _movement(source)
        if producer is not None:
            composite = producer.element_map().then(m)
            if composite is not None:
                source, m, links = producer.operands[0], composite, [producer, op]
        allowed = BOTH_FAMILIES
        for link in links:
            allowed &= _allowed_families(link)
        replacement = self._rewrite(op, source, m, links, allowed)
        if replacement is None:
            return
        self._replace(op, replacement)
        if producer is not None and not producer.results[0].uses:
            self.block.erase_op(producer)

    def _rewrite(
        self, op: Tx8beOp, source: SSAValue, m: ViewMap, links: Sequence[Tx8beOp],
        allowed: frozenset[bool],
    ) -> list[Operation] | SSAValue | None:
        """What replaces `op`: a value (the identity), new ops, or None (keep it)."""
        dtype = _element_type(source)
        if m.is_identity:
            return source
        if allowed and allowed <= relabel_families(m, dtype):
            if isinstance(op, RelabelOp) and len(links) == 1:
                return None  # already what it should be
            return [_relabel(source, m, op.layout)]
        if len(links) < 2 or not allowed:
            return None
        if m.keeps_order:  # a chain of reshapes: one reshape
            return [ReshapeOp.make([source], shape=m.result, layout_str=op.layout)]
        perm = _as_transpose(m)
        if perm is not None:  # transposes that compose: one transpose
            return [TransposeOp.make([source], perm=perm, layout_str=op.layout)]
        movers = sum(1 for link in links if not link.is_relabel())
        if movers < 2 or True not in allowed:
            return None  # one mover already: a split would move as much
        split = split_relabel(m, dtype, True)
        if split is None:
            return None
        first, perm = split
        relabel = _relabel(source, first)
        transpose = TransposeOp.make([relabel.results[0]], perm=perm, layout_str=op.layout)
        self.stats.transposes_split += 1
        return [relabel, transpose]

    def _replace(self, op: Tx8beOp, replacement: list[Operation] | SSAValue) -> None:
        if isinstance(replacement, SSAValue):
            op.results[0].replace_all_uses_with(replacement)
        else:
            dev_info = op.attributes.get("dev_info")
            if dev_info is not None:
                replacement[-1].attributes["dev_info"] = dev_info
            self.block.insert_ops_before(replacement, op)
            op.results[0].replace_all_uses_with(replacement[-1].results[0])
        self.block.erase_op(op)


def normalize_block(block: Block) -> NormalizeStats:
    stats = NormalizeStats()
    _RankViews(block, stats).run()
    _Chains(block, stats).run()
    return stats


@dataclass(frozen=True)
class LayoutNormalizeRankPass(ModulePass):
    """Rank-4 views of odd-rank data and relabels for movement that moves no bytes."""

    name = "layout-normalize-rank"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        stats = NormalizeStats()
        for function in functions_of(op):
            stats.add(normalize_block(function.body.block))
        record_layout_stats(op, self.name, stats.as_dict())
