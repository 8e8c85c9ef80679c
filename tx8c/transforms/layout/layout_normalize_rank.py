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

Four walks over each function's top-level block (step 2 after each of the others):

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
   Transpose, Relabel: `element_map()`) is composed with the chain of such ops that
   ends at it (`ViewMap.then`, up to `MAX_CHAIN` ops, while the maps compose), and,
   for the longest chain that allows it, rewritten as
   - nothing, when the map is the identity (a view and its unview cancel);
   - one Relabel, when the map is the identity on the bytes in every family the chain
     can run in (the families of each op's OpAttr, intersected: a Transpose is
     ALIGN-only, a Reshape BOTH): the head split `[1,128,768] -> [1,128,12,64] ->
     [1,12,128,64]` and the head merge are relabels in Cx, and so is ViT's patch
     flattening NHWC -> NCHW -> [1,768,196] -> [1,196,768];
   - for a chain of two ops: one Reshape when the map keeps the elements' order, one
     Transpose when it is one, else, when both ops move bytes, a Relabel and one
     Transpose when the chain can run aligned and splits so (`split_relabel`: the key
     of attention, `[1,128,768] -> [1,128,12,64] -> [1,12,64,128]`, becomes the free
     head split and one per-head transpose, where a Reshape and a Transpose both moved
     bytes);
   - itself otherwise (layout-align-to-npu prices what it moves; layout-relabel makes
     it a relabel if the family chosen makes it one).
   A producer nobody reads any more is erased.
3. Batch dims follow, in program order. An op whose operand is a reshape that keeps
   the elements' order, and whose results are read only by movement ops, takes the
   reshape's operand instead when it can (`reshaped_operand_attributes`: a Gemm's rows
   `[128, 768]` come as `[1, 1, 128, 768]`, GPT-2's exports reshape around every Gemm);
   a Reshape after it gives its readers the old shape; step 1 runs again (the operand
   taken may have rank 3), then step 2, so the reshapes on both sides compose away.
4. Compact rows for the graph's outputs. Graph outputs are compact (seed 000), so an
   ALIGN-only op whose result is only returned pays a ChannelNorm of it, unless its
   aligned bytes are its compact bytes. Its rows `[M, N]` (the leading dims merged) are,
   when N channels need no padding and a row fills whole 256-byte batches (NCx of
   `[128, 32000]` f32 is compact `[1, 128, 32000]`). Such an op (an LM head's Gemm) takes
   one operand as rows (`reshaped_operand_attributes`) when that operand is smaller than
   the result, so at most the smaller tensor moves; the Reshape after it is a relabel.

Requires: the layout_str of every op (layout-transmit); functions whose body is one block
in SSA order (nested regions are not entered).
Guarantees: the program computes the same values (views and relabels reorder no element
logically; a reduction over a viewed axis sums the same elements in the same order);
every Relabel it makes is the identity on bytes in every family its OpAttr allows (its
`align_mode`); ops of odd rank that could not be viewed keep their rank (counted).
Statistics under "layout-normalize-rank" in `tx8c.layout_stats`: `rank_views` (ops
now running on a view), `const_views` (constants reshaped for them), `transposes_split`
(chains written as a relabel and one Transpose), `odd_rank_ops` (ops left with results
of rank 1 or 3 that no view fits), `reshapes_absorbed` (step 3), `compact_rows` (step
4), and the movement ops in the functions afterwards: `relabels`, `reshapes`,
`transposes`. O(ops + uses); each byte-identity check is O(elements) and cached per
shape and dtype.

Departs from the seed: seed 000's odd-rank rule is kept (layout-align-to-npu applies it
to what is left), but most odd-rank data no longer reach it. Rank 5 and higher are not
viewed (a rank-4 view of them merges dims, which the ops' axes would have to follow).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

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
from tx8c.dialect.layout import mem_layout_for, result_layout, tensor_class_layout
from tx8c.dialect.ops.backend import ConstantOp
from tx8c.dialect.ops.movement import RelabelOp, ReshapeOp, TransposeOp
from tx8c.dialect.relabel import (
    ALIGNED_AND_COMPACT,
    RankView,
    ViewMap,
    families_agree,
    relabel_families,
    split_relabel,
)
from tx8c.interfaces.shape_inference import shape_of
from tx8c.target.mem_layout import stored_bytes

VIEWS = {1: RankView(1, (0,)), 3: RankView(3, (1,))}
"""The view of each odd rank: [d] -> [1, d], [d0, d1, d2] -> [d0, 1, d1, d2]."""
BOTH_FAMILIES = frozenset(ALIGNED_AND_COMPACT)


@dataclass
class NormalizeStats(LayoutStats):
    rank_views: int = 0
    const_views: int = 0
    transposes_split: int = 0
    reshapes_absorbed: int = 0
    compact_rows: int = 0
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
    result_type = _tensor_type(source.type.get_element_type(), m.result)
    return RelabelOp.make([source], [result_type], shape=m.result, view=view, perm=perm,
                          layout_str=layout)


@lru_cache(maxsize=4096)
def _tensor_type(element_type, shape: tuple[int, ...]) -> TensorType:
    """Models repeat their shapes: each tensor type is built once."""
    return TensorType(element_type, shape)


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
            if attrs is not None:
                self._apply(op, view, attrs)
        for value in [*self.unviews, *self.constants]:
            if not value.uses:
                self.block.erase_op(value.owner)

    @staticmethod
    def _view_of(op: Operation) -> RankView | None:
        """The view for an op whose results all have one odd rank."""
        if not isinstance(op, Tx8beOp) or not op.results:
            return None
        ranks = {r.type.get_num_dims() for r in op.results}
        view = VIEWS.get(ranks.pop()) if len(ranks) == 1 else None
        if view is None or is_compile_time(op) or op.element_map() is not None:
            return None  # (movement: step 2 composes it with the views around it)
        return view

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


MAX_CHAIN = 8
"""How many movement ops a chain may gather (models have short ones: 2 to 4)."""


def _chains_ending_at(op: Tx8beOp, m: ViewMap) -> list[tuple[SSAValue, ViewMap, list]]:
    """(source, map, ops) of the chains of movement ops that end at `op`, shortest first:
    `op` alone, then with its operand's producer, and so on while the maps compose."""
    chains = [(op.operands[0], m, [op])]
    while len(chains) < MAX_CHAIN:
        source, m, links = chains[-1]
        producer = _movement(source)
        composite = None if producer is None else producer.element_map().then(m)
        if composite is None:
            break
        chains.append((producer.operands[0], composite, [producer, *links]))
    return chains


def _chain_families(links: Sequence[Tx8beOp]) -> frozenset[bool]:
    """The families every op of a chain may run in."""
    allowed = BOTH_FAMILIES
    for link in links:
        allowed &= _allowed_families(link)
    return allowed


def _count_movement(block: Block) -> tuple[int, int, int]:
    """(Relabels, Reshapes, Transposes) in the block."""
    ops = list(block.ops)
    return tuple(sum(isinstance(op, kind) for op in ops)
                 for kind in (RelabelOp, ReshapeOp, TransposeOp))


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

    def _visit(self, op: Tx8beOp, m: ViewMap) -> None:
        chains = _chains_ending_at(op, m)
        for source, composite, links in reversed(chains[1:]):  # the longest chain first
            if self._free(op, source, composite, links):
                return
        if len(chains) > 1 and self._fuse_pair(op, *chains[1]):
            return
        self._free(op, *chains[0])

    def _free(
        self, op: Tx8beOp, source: SSAValue, m: ViewMap, links: list[Tx8beOp]
    ) -> bool:
        """Rewrite `op` as its chain when that moves nothing (the identity, or a relabel in
        every family the chain can run in)."""
        if m.is_identity:
            self._replace(op, source, links)
            return True
        allowed = _chain_families(links)
        if not allowed or not allowed <= relabel_families(m, _element_type(source)):
            return False
        if isinstance(op, RelabelOp) and len(links) == 1:
            return True  # already what it should be
        self._replace(op, [_relabel(source, m, op.layout)], links)
        return True

    def _fuse_pair(
        self, op: Tx8beOp, source: SSAValue, m: ViewMap, links: list[Tx8beOp]
    ) -> bool:
        """`op` and its producer as one Reshape or one Transpose when the map is one, else
        as a relabel and one Transpose when both move bytes and the chain can run
        aligned (`split_relabel`)."""
        if m.keeps_order:
            self._replace(op, [ReshapeOp.make([source], shape=m.result, layout_str=op.layout)],
                          links)
            return True
        perm = _as_transpose(m)
        if perm is not None:
            self._replace(op, [TransposeOp.make([source], perm=perm, layout_str=op.layout)],
                          links)
            return True
        movers = sum(1 for link in links if not link.moves_no_bytes())
        if movers < 2 or True not in _chain_families(links):
            return False  # one mover already: a split would move as much
        split = split_relabel(m, _element_type(source), True)
        if split is None:
            return False
        first, perm = split
        relabel = _relabel(source, first)
        transpose = TransposeOp.make([relabel.results[0]], perm=perm, layout_str=op.layout)
        self._replace(op, [relabel, transpose], links)
        self.stats.transposes_split += 1
        return True

    def _replace(
        self, op: Tx8beOp, replacement: list[Operation] | SSAValue, links: list[Tx8beOp]
    ) -> None:
        """`op` replaced; the producers of its chain nobody reads any more erased."""
        if isinstance(replacement, SSAValue):
            op.results[0].replace_all_uses_with(replacement)
        else:
            dev_info = op.attributes.get("dev_info")
            if dev_info is not None:
                replacement[-1].attributes["dev_info"] = dev_info
            self.block.insert_ops_before(replacement, op)
            op.results[0].replace_all_uses_with(replacement[-1].results[0])
        self.block.erase_op(op)
        for producer in reversed(links[:-1]):
            if producer.results[0].uses:
                break
            self.block.erase_op(producer)


# --------------------------------------------------------------------------------------
# Step 3: reshapes absorbed (batch dims follow)
# --------------------------------------------------------------------------------------


class _ReshapedOperands:
    def __init__(self, block: Block, stats: NormalizeStats):
        self.block = block
        self.stats = stats

    def run(self) -> None:
        for op in list(self.block.ops):
            if not isinstance(op, Tx8beOp) or op.element_map() is not None or not op.results:
                continue
            if not all(u.operation.results and _movement(u.operation.results[0])
                       for r in op.results for u in r.uses):
                continue  # its result's reshape would not compose away
            if _returned_compact_rows(op):
                continue  # step 4's form: keep it
            for index, value in enumerate(op.operands):
                if self._absorb(op, index, value):
                    break

    def _absorb(self, op: Tx8beOp, index: int, value: SSAValue) -> bool:
        producer = _movement(value)
        if producer is None or not producer.element_map().keeps_order:
            return False
        source = producer.operands[0]
        attrs = op.reshaped_operand_attributes(index, shape_of(source))
        if attrs is None:
            return False
        _retype(self.block, op, attrs, index, source)
        if not producer.results[0].uses:
            self.block.erase_op(producer)
        self.stats.reshapes_absorbed += 1
        return True


# --------------------------------------------------------------------------------------
# Step 4: rows whose aligned bytes are compact, for the graph's outputs
# --------------------------------------------------------------------------------------


def _only_returned(value: SSAValue) -> bool:
    """`value` is read by the graph's return only, maybe through movement ops."""
    uses = list(value.uses)
    return bool(uses) and all(
        use.operation.name == "func.return"
        or (_movement(use.operation.results[0]) is not None
            and _only_returned(use.operation.results[0]))
        for use in uses if use.operation.results or use.operation.name == "func.return"
    )


def _rows(shape: tuple[int, ...]) -> tuple[int, int]:
    return math.prod(shape[:-1]), shape[-1]


def _returned_compact_rows(op: Operation) -> bool:
    """Rows (rank 2) only returned whose aligned bytes are their compact bytes."""
    return len(op.results) == 1 and all(
        len(shape_of(r)) == 2 and _only_returned(r)
        and families_agree(shape_of(r), _element_type(r))
        for r in op.results
    )


class _CompactRows:
    def __init__(self, block: Block, stats: NormalizeStats):
        self.block = block
        self.stats = stats

    def run(self) -> None:
        for op in list(self.block.ops):
            if self._wants_rows(op):
                self._to_rows(op)

    @staticmethod
    def _wants_rows(op: Operation) -> bool:
        """An ALIGN-only op whose one result is returned, is not the same bytes in both
        families, and would be as rows."""
        if not isinstance(op, Tx8beOp) or len(op.results) != 1:
            return False
        result = op.results[0]
        shape, dtype = shape_of(result), _element_type(result)
        if len(shape) < 2 or families_agree(shape, dtype):
            return False
        if not families_agree(_rows(shape), dtype) or not _only_returned(result):
            return False
        return not op.element_map() and op.query_op_attr().align_mode == AlignMode.ALIGN

    def _to_rows(self, op: Tx8beOp) -> None:
        result = op.results[0]
        shape, dtype = shape_of(result), _element_type(result)
        written = stored_bytes(shape, dtype, mem_layout_for(shape, True))
        for index, value in enumerate(op.operands):
            rows = _rows(shape_of(value)) if len(shape_of(value)) >= 2 else None
            if rows is None or stored_bytes(rows, dtype, mem_layout_for(rows, True)) >= written:
                continue  # reshaping this operand could move as much as it saves
            attrs = op.reshaped_operand_attributes(index, rows)
            if attrs is None:
                continue
            reshape = ReshapeOp.make([value], shape=rows, layout_str=tensor_class_layout(rows))
            self.block.insert_op_before(reshape, op)
            _retype(self.block, op, attrs, index, reshape.results[0])
            self.stats.compact_rows += 1
            return


def _retype(block: Block, op: Tx8beOp, attrs: dict, index: int, value: SSAValue) -> None:
    """`op` with `attrs` set and `value` as operand `index`; its results take the types
    `infer_shapes` gives, and a Reshape after it gives its readers the old shapes."""
    for name, attr in attrs.items():
        op.attributes[name] = to_attr(op.ATTR_KINDS[name], attr)
    op.operands = [value if i == index else v for i, v in enumerate(op.operands)]
    anchor: Operation = op
    for result, new_type in zip(list(op.results), op.infer_shapes(), strict=True):
        old_shape = shape_of(result)
        new = Rewriter.replace_value_with_new_type(result, new_type)
        back = ReshapeOp.make([new], shape=old_shape, layout_str=result_layout(op.layout))
        block.insert_op_after(back, anchor)
        anchor = back
        new.replace_uses_with_if(back.results[0], lambda use, back=back: use.operation is not back)


def normalize_block(block: Block) -> NormalizeStats:
    stats = NormalizeStats()
    _RankViews(block, stats).run()
    _Chains(block, stats).run()
    _ReshapedOperands(block, stats).run()
    _RankViews(block, stats).run()  # an op that took a rank-3 operand takes its view
    _Chains(block, NormalizeStats()).run()  # the absorbed reshapes compose away
    _CompactRows(block, stats).run()
    _Chains(block, NormalizeStats()).run()
    stats.relabels, stats.reshapes, stats.transposes = _count_movement(block)
    stats.odd_rank_ops = sum(_RankViews._view_of(op) is not None for op in block.ops)
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
