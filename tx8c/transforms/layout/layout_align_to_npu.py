r"""layout-align-to-npu: agree on data alignment, insert ChannelNorms, set mem_layout.

Implements seed 000 (LayoutAlignToNPU) and seed 003's layoutAlignToNpuPass.

Every op reads and writes its data either channel-aligned (ALIGN: mem_layout Cx/NCx) or
compact (NALIGN: Tensor/NTensor); some ops accept both (BOTH). Where a value is stored in
one family and a consumer reads the other, a `tx8be.ChannelNorm` converts it (direction
true = NALIGN -> ALIGN, false = ALIGN -> NALIGN).

Requires: a module whose functions hold tx8be ops (layout_str set by the earlier layout
passes, though only inserted ChannelNorms read it). Ops are taken from each function's
top-level block; nested regions (Group, which only exists after grouping) are not entered.

Guarantees:
- every tx8be op with results has `dev_info` whose `mem_layout` is
  `mem_layout_for(first result's shape, aligned)`: one mem_layout per op, so an op with
  several results lays them all out in one family, named after the first result's shape;
  other dev_info fields of an existing dev_info are kept;
- no conflict remains: for every use, the producer's family (graph inputs: NALIGN) is the
  family the consumer reads (its own; for a ChannelNorm, the opposite of its direction's
  output; func.return and non-tx8be ops: NALIGN), or the value's bytes are the same in
  both families (`families_agree`: e.g. `[128, 768]` f32, whose NCx rows need no
  padding), so the consumer reads them as they are and no ChannelNorm is inserted;
- at most one ChannelNorm per value and direction, shared by every consumer that needs it,
  placed right after the value's definition, with the value's layout_str
  (`value_layout`; for a graph input, the layout layout-transmit recorded for it, UNKNOWN
  if none);
- layout_str is otherwise untouched; the program's meaning is unchanged (ChannelNorm is
  the identity on logical values);
- statistics in the module attribute `tx8c.layout_stats` (the layout stage's convention,
  `tx8c.analysis.layout_problem.record_layout_stats`):
  under "layout-align-to-npu", `strategy`, `channel_norms` (inserted), `channel_norm_bytes`
  (bytes converted at run time), `const_channel_norms` (inserted on compile-time
  constants: free, layout-align-opt folds them into the constant), `conversions_elided`
  (values read in the other family with no ChannelNorm, their bytes being the same) and
  `movement_bytes` (the bytes the Reshapes and Transposes that are not relabels in their
  family move: what the cost model counts beside the conversions).

Each op's mode, first rule that applies (seed 000 "AlignMode判断"):
1. func.return and non-tx8be ops read compact (graph outputs are NALIGN); function
   arguments are compact values (graph inputs are NALIGN).
2. A ChannelNorm writes its direction's family and reads the other.
3. A `dev_info` already on the op fixes its family (Cx/NCx -> ALIGN, else NALIGN).
4. A compile-time constant (an op with no operands whose OpAttr engine is NONE:
   tx8be.Constant) is free and its conversions cost nothing: it is converted when the
   program is built. After the choice it takes its consumers' family when they all agree,
   else the topologically first consumer's.
5. `query_op_attr().align_mode` ALIGN or NALIGN fixes the family (the ALIGN-only ops and
   the Slice rule live in the op classes).
6. A BOTH op whose result rank is not 2 or 4 is NALIGN: seed 000 says odd ranks (1, 3)
   because "Cx needs rank 2 or 4"; we apply that reason, so rank 0 and >= 5 too. A
   relabel (`moves_no_bytes()`: it runs no kernel) is exempt. layout-normalize-rank, before this
   pass, gives most odd-rank ops a rank-4 view, so few reach this rule.
   Decision: this rule is for BOTH ops only. An ALIGN-only op of odd rank (Gemm on
   [1, seq, hidden], Reduce to rank 1) stays ALIGN: its kernel supports nothing else, and
   `tx8c.target.mem_layout` defines Cx/NCx for every rank through its (N, HW, C) mapping,
   so the data can be stored aligned. Forcing such an op NALIGN would hand its kernel data
   it cannot read.
7. A BOTH op that follows an operand (`follows_operand()`: the seed's V_VS broadcast ops
   follow their complete operand) shares that operand's family, so that operand is
   never converted; its other operands are read in the same family. Not when the
   followed operand is a compile-time constant (converting it is free, so there is
   nothing to follow).
8. Any other op is BOTH: a free choice. It reads all its operands and writes its results
   in the one family chosen.

Strategies (pass option `strategy`):

- "greedy" is seed 000's one-pass "follow the parent": in topological order a BOTH op
  takes the family of its first decided parent in topological order (all parents agree ->
  that one; they disagree -> the topologically first, as seed 000 says). The seed leaves
  BOTH ops with no decided parent (those fed only by constants) BOTH; here a second,
  reverse walk gives them their consumers' family by the same rule (default NALIGN,
  "尽可能使用非对其的模式"). Ops that follow an operand share its decision.
- "optimal" (default) minimises the total bytes moved at run time for the layouts
  exactly, as an s-t minimum cut (`scipy.sparse.csgraph.maximum_flow`). Free ops are
  nodes; the source side is ALIGN, the sink side NALIGN; fixed ops are the terminals
  themselves and an op that follows an operand is merged into that operand's node.
  Converting value v to ALIGN costs c1 = stored_bytes(v, Cx/NCx), to NALIGN
  c2 = stored_bytes(v, Tensor/NTensor): the bytes the ChannelNorm writes, i.e. the size of
  the target layout; both are 0 when v's bytes are the same in both families (nothing to
  convert). A Reshape or Transpose (`element_map()`) that is not a relabel costs the bytes
  it writes in each family where it is not the identity on the bytes (0 where it is:
  layout-relabel then makes it a relabel), a term on its own node (an edge to the other
  terminal). Each conversion is paid once however many
  consumers need it, which two auxiliary nodes per value v model exactly (r1..rk are the
  nodes of v's readers, p the node of its producer; a fixed one is s or t itself):

        r1 --inf--\                                       /--inf--> r1
        ..          [a_v] --c1--> p --c2--> [b_v]              ..
        rk --inf--/                                       \--inf--> rk

  If any reader is on the ALIGN side, a_v must be too (an inf edge may not be cut), so
  the edge a_v -> p is cut, once, exactly when p is NALIGN: one ChannelNorm(true) for all
  aligned readers. Symmetrically b_v is on the NALIGN side as soon as one reader is, and
  p -> b_v is cut once when p is ALIGN: one ChannelNorm(false). With a single reader the
  auxiliary node is replaced by a direct edge; constants add no edges. The minimum cut
  taken is the source side reachable in the residual graph, the smallest one, so ops
  free to go either way at equal cost become NALIGN (less memory).
  scipy's max flow takes int32 capacities: costs are divided by their gcd, and when the
  sum of all costs still exceeds 2**30 bytes they are counted in units of
  ceil(sum / 2**30) bytes (rounded up), optimal to within one unit per converted value.

Cost: building the problem, greedy and rewriting are O(ops + uses), no recursion; the
cut has at most ops + 2 * values nodes and O(uses) edges (Dinic's algorithm in scipy).

Op knowledge comes from the op classes (`query_op_attr`, OpLib's `follows_operand`,
and `reads_other_family` for the converter's reading rule, `moves_no_bytes()`, ShapeInference's
`element_map` for what a movement op moves; the byte layouts decide the rest:
`tx8c.dialect.relabel`);
the only op class named here is ChannelNorm, the op this pass creates. The skeleton
(build the problem, solve it with the strategy, apply it, record the statistics) is the
layout stage's `LayoutChoicePass` (`tx8c.analysis.layout_problem`), shared with
layout-preset-to-npu.

Departures from the seed: its code snippet sets `direction = opAlignMode == NALIGN ? false
: true`, contradicting its own text (ALIGN -> NALIGN is false); we follow the text. The
seed's BOTH ops without a decided parent are resolved as above rather than left BOTH.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

from xdsl.dialects import func
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue, Use

from tx8c.analysis.layout_problem import (
    LayoutChoice,
    LayoutChoicePass,
    LayoutStats,
    is_compile_time,
)
from tx8c.analysis.min_cut import SINK, SOURCE, FlowNetwork
from tx8c.dialect.attrs import AlignMode, DevAttr
from tx8c.dialect.base import Tx8beOp
from tx8c.dialect.layout import input_layouts, is_aligned, mem_layout_for, value_layout
from tx8c.dialect.ops.backend import ChannelNormOp
from tx8c.dialect.relabel import families_agree, moved_bytes
from tx8c.target.mem_layout import stored_bytes

CX_RANKS = (2, 4)
"""Result ranks a BOTH op may be aligned at (seed 000: "Cx needs rank 2 or 4")."""

ALIGN_SIDE = SOURCE
"""Node of everything fixed to ALIGN (the source of the cut)."""
NALIGN_SIDE = SINK
"""Node of everything fixed to NALIGN (the sink of the cut)."""
_MODE_OF_SIDE = {ALIGN_SIDE: AlignMode.ALIGN, NALIGN_SIDE: AlignMode.NALIGN}


# --------------------------------------------------------------------------------------
# The problem: mode variables, values, readers
# --------------------------------------------------------------------------------------


@dataclass
class AlignValue:
    """One SSA value: who stores it, who reads it, what converting it costs."""

    value: SSAValue
    producer: int  # node of the producer (a variable or a side)
    key: int  # topological position of the producer (graph inputs come first)
    compile_time: bool  # a constant: conversions are free
    agree: bool  # the same bytes in both families: nothing to convert
    to_align: int  # bytes of a conversion to ALIGN (0 when compile_time or agree)
    to_compact: int  # bytes of a conversion to NALIGN (0 when compile_time or agree)
    reads: list[tuple[int, int, Use]] = field(default_factory=list)
    """(consumer's topological position, node whose family the consumer reads, use)."""


@dataclass
class AlignProblem:
    """The alignment choice of one block: free variables, fixed sides, values."""

    block: Block
    inputs: list[str]
    """The graph inputs' layouts (what layout-transmit recorded; the ChannelNorms of an
    input carry it)."""
    op_node: dict[Operation, int] = field(default_factory=dict)
    op_key: dict[Operation, int] = field(default_factory=dict)
    var_parents: list[list[tuple[int, int]]] = field(default_factory=list)
    """Per variable: (position, node) of the producers its first op reads."""
    var_constant: list[bool] = field(default_factory=list)
    var_values: list[list[int]] = field(default_factory=list)
    """Per variable: indices into `values` of the values its ops produce."""
    values: list[AlignValue] = field(default_factory=list)
    moves: list[tuple[int, int, int]] = field(default_factory=list)
    """Per Reshape/Transpose that is not a relabel: (node, bytes it moves if ALIGN, bytes
    it moves if NALIGN)."""

    @property
    def num_vars(self) -> int:
        return len(self.var_parents)

    def read_node(self, consumer: Operation) -> int:
        """The node whose family `consumer` reads its operands in."""
        node = self.op_node.get(consumer, NALIGN_SIDE)
        if isinstance(consumer, Tx8beOp) and consumer.reads_other_family():
            return ALIGN_SIDE if node == NALIGN_SIDE else NALIGN_SIDE
        return node


def _side(mode: AlignMode) -> int:
    return ALIGN_SIDE if mode == AlignMode.ALIGN else NALIGN_SIDE


def _followed_operand(op: Tx8beOp) -> SSAValue | None:
    """The operand whose family the op shares (`follows_operand`), if any."""
    index = op.follows_operand()
    return None if index is None else op.operands[index]


class _Builder:
    """Builds an AlignProblem from a block in one walk (O(ops + uses))."""

    def __init__(self, block: Block, inputs: list[str]):
        self.problem = AlignProblem(block, inputs)
        self.value_index: dict[SSAValue, int] = {}
        self.compile_time_ops: set[Operation] = set()

    def build(self) -> AlignProblem:
        block = self.problem.block
        n_args = len(block.args)
        for arg in block.args:
            self._add_value(arg, NALIGN_SIDE, arg.index - n_args, compile_time=False)
        for key, op in enumerate(block.ops):
            self.problem.op_key[op] = key
            node = self._classify(op)
            self.problem.op_node[op] = node
            self._add_moves(op, node)
            for result in op.results:
                index = self._add_value(result, node, key, op in self.compile_time_ops)
                if node >= 0:
                    self.problem.var_values[node].append(index)
        for v in self.problem.values:
            self._add_reads(v)
        return self.problem

    # -- ops ---------------------------------------------------------------------------
    def _classify(self, op: Operation) -> int:
        """The op's node: a side when its family is fixed, else a (shared) variable."""
        if not isinstance(op, Tx8beOp):
            return NALIGN_SIDE  # func.return and foreign ops: graph outputs are compact
        if op.reads_other_family():  # a converter: its direction fixes its family
            return _side(op.query_op_attr().align_mode)
        if op.dev_info is not None:
            return ALIGN_SIDE if is_aligned(op.dev_info.get("mem_layout")) else NALIGN_SIDE
        if is_compile_time(op):
            self.compile_time_ops.add(op)
            return self._new_var(op, constant=True)
        mode = op.query_op_attr().align_mode
        if mode in (AlignMode.ALIGN, AlignMode.NALIGN):
            return _side(mode)
        rank = op.results[0].type.get_num_dims() if op.results else None
        if rank is not None and rank not in CX_RANKS and not op.moves_no_bytes():
            return NALIGN_SIDE
        followed = _followed_operand(op)
        if followed is not None and not self._is_compile_time_value(followed):
            return self._node_of(followed)
        return self._new_var(op, constant=False)

    def _add_moves(self, op: Operation, node: int) -> None:
        """What a Reshape/Transpose moves in each family (0 where it is a relabel)."""
        if not isinstance(op, Tx8beOp) or op.moves_no_bytes():
            return
        m = op.element_map()
        if m is None:
            return
        dtype = op.results[0].type.get_element_type()
        self.problem.moves.append(
            (node, moved_bytes(m, dtype, aligned=True), moved_bytes(m, dtype, aligned=False))
        )

    def _new_var(self, op: Operation, constant: bool) -> int:
        parents = sorted(
            (self.problem.values[self.value_index[v]].key, self._node_of(v))
            for v in op.operands
        )
        self.problem.var_parents.append(parents)
        self.problem.var_constant.append(constant)
        self.problem.var_values.append([])
        return self.problem.num_vars - 1

    def _node_of(self, value: SSAValue) -> int:
        return self.problem.values[self.value_index[value]].producer

    def _is_compile_time_value(self, value: SSAValue) -> bool:
        return self.problem.values[self.value_index[value]].compile_time

    # -- values --------------------------------------------------------------------------
    def _add_value(self, value: SSAValue, node: int, key: int, compile_time: bool) -> int:
        agree = families_agree(value.type.get_shape(), value.type.get_element_type())
        to_align = to_compact = 0
        if not compile_time and not agree:
            to_align = _conversion_bytes(value, aligned=True)
            to_compact = _conversion_bytes(value, aligned=False)
        self.problem.values.append(
            AlignValue(value, node, key, compile_time, agree, to_align, to_compact)
        )
        self.value_index[value] = len(self.problem.values) - 1
        return len(self.problem.values) - 1

    def _add_reads(self, v: AlignValue) -> None:
        block = self.problem.block
        for use in v.value.uses:
            consumer = block.find_ancestor_op_in_block(use.operation)
            if consumer is None:
                continue
            v.reads.append((self.problem.op_key[consumer], self.problem.read_node(consumer), use))
        v.reads.sort(key=lambda r: r[0])


def _conversion_bytes(value: SSAValue, aligned: bool) -> int:
    """Bytes a ChannelNorm of `value` writes: the size of the target layout."""
    return _target_bytes(value.type, aligned)


@lru_cache(maxsize=4096)
def _target_bytes(tensor_type: Attribute, aligned: bool) -> int:
    shape = tuple(tensor_type.get_shape())
    return stored_bytes(shape, tensor_type.get_element_type(), mem_layout_for(shape, aligned))


def build_problem(function: func.FuncOp) -> AlignProblem:
    """The alignment problem of `function`'s body (see the module docstring)."""
    return _Builder(function.body.block, input_layouts(function)).build()


# --------------------------------------------------------------------------------------
# Strategies
# --------------------------------------------------------------------------------------


def _resolve(node: int, modes: list[AlignMode | None]) -> AlignMode | None:
    return _MODE_OF_SIDE[node] if node < 0 else modes[node]


def _first_decided(
    entries: Iterable[tuple[int, int]], modes: list[AlignMode | None]
) -> AlignMode | None:
    """Seed 000's rule over (position, node) pairs sorted by position: the common mode
    when all decided ones agree, else the topologically first -- both are the first."""
    for _, node in entries:
        mode = _resolve(node, modes)
        if mode is not None:
            return mode
    return None


def _consumer_entries(problem: AlignProblem, var: int) -> list[tuple[int, int]]:
    """(position, read node) of every reader of the variable's values, in order."""
    entries = [
        (key, node)
        for index in problem.var_values[var]
        for key, node, _ in problem.values[index].reads
        if node != var
    ]
    entries.sort()
    return entries


def solve_greedy(problem: AlignProblem) -> list[AlignMode]:
    """Seed 000: follow the first decided parent; undecided ones follow their readers."""
    modes: list[AlignMode | None] = [None] * problem.num_vars
    for var in range(problem.num_vars):  # variables are numbered in topological order
        modes[var] = _first_decided(problem.var_parents[var], modes)
    for var in reversed(range(problem.num_vars)):
        if modes[var] is None:
            decided = _first_decided(_consumer_entries(problem, var), modes)
            modes[var] = decided or AlignMode.NALIGN
    return modes


def _add_value_cost(
    graph: FlowNetwork, producer: int, readers: list[int], to_align: int, to_compact: int
) -> None:
    """The cost of one value: c1 once if some reader is ALIGN and the producer not, c2
    once if some reader is NALIGN and the producer not (see the module figure)."""
    aligned_readers = [r for r in readers if r != NALIGN_SIDE]
    if producer != ALIGN_SIDE and aligned_readers and to_align:
        graph.pay_once(to_align, aligned_readers, producer, readers_on_source=True)
    compact_readers = [r for r in readers if r != ALIGN_SIDE]
    if producer != NALIGN_SIDE and compact_readers and to_compact:
        graph.pay_once(to_compact, compact_readers, producer, readers_on_source=False)


def solve_optimal(problem: AlignProblem) -> list[AlignMode]:
    """The assignment of the free variables with the fewest bytes converted at run time."""
    graph = FlowNetwork(problem.num_vars)
    for v in problem.values:
        if v.compile_time:
            continue
        readers = list(dict.fromkeys(node for _, node, _ in v.reads if node != v.producer))
        if readers:
            _add_value_cost(graph, v.producer, readers, v.to_align, v.to_compact)
    for node, if_aligned, if_compact in problem.moves:
        if node >= 0:  # a fixed op pays the same whatever the choice
            graph.pay_on_side(if_aligned, node, source_side=True)
            graph.pay_on_side(if_compact, node, source_side=False)
    side = graph.source_side()
    return [AlignMode.ALIGN if aligned else AlignMode.NALIGN for aligned in side]


def settle_constants(problem: AlignProblem, modes: list[AlignMode]) -> None:
    """Give each compile-time constant its readers' family (they agree) or the first
    reader's, so most constants need no ChannelNorm at all. Costs nothing either way."""
    for var, constant in enumerate(problem.var_constant):
        if constant:
            decided = _first_decided(_consumer_entries(problem, var), modes)
            modes[var] = decided or AlignMode.NALIGN


def movement_cost(problem: AlignProblem, modes: list[AlignMode]) -> int:
    """Bytes the Reshapes/Transposes that are not relabels in their family move."""
    return sum(
        if_aligned if _resolve(node, modes) == AlignMode.ALIGN else if_compact
        for node, if_aligned, if_compact in problem.moves
    )


def conversion_cost(problem: AlignProblem, modes: list[AlignMode]) -> int:
    """Bytes converted at run time under `modes`: each value once per direction needed."""
    total = 0
    for v in problem.values:
        if v.compile_time or v.agree:
            continue
        have = _resolve(v.producer, modes)
        wanted = {_resolve(node, modes) for _, node, _ in v.reads}
        if have == AlignMode.NALIGN and AlignMode.ALIGN in wanted:
            total += v.to_align
        if have == AlignMode.ALIGN and AlignMode.NALIGN in wanted:
            total += v.to_compact
    return total


# --------------------------------------------------------------------------------------
# Rewriting the IR
# --------------------------------------------------------------------------------------


@dataclass
class AlignStats(LayoutStats):
    channel_norms: int = 0
    channel_norm_bytes: int = 0
    const_channel_norms: int = 0
    conversions_elided: int = 0
    movement_bytes: int = 0


@lru_cache(maxsize=4096)
def _plain_dev_info(tensor_type: Attribute, aligned: bool) -> DevAttr:
    """A default dev_info for a result of this type (attributes are immutable: shared)."""
    return DevAttr.make(mem_layout=mem_layout_for(tensor_type.get_shape(), aligned))


def _dev_info(existing: DevAttr | None, tensor_type: Attribute, aligned: bool) -> DevAttr:
    """`existing` (or a default dev_info) with the mem_layout of `tensor_type`'s shape."""
    if existing is None:
        return _plain_dev_info(tensor_type, aligned)
    return existing.replace(mem_layout=mem_layout_for(tensor_type.get_shape(), aligned))


def _channel_norm(value: SSAValue, aligned: bool, inputs: list[str]) -> ChannelNormOp:
    """A ChannelNorm of `value` with the value's layout_str (a graph input's is the one
    layout-transmit recorded for it, in `inputs`)."""
    layout = inputs[value.index] if isinstance(value, BlockArgument) else value_layout(value)
    return ChannelNormOp.make(
        [value],
        [value.type],
        direction=aligned,
        layout_str=layout,
        dev_info=_dev_info(None, value.type, aligned),
    )


_Rewires = dict[Operation, dict[int, SSAValue]]
"""Per reader op: operand index -> its new value (set in one go: xDSL copies an op's
operand tuple on every single-operand update, quadratic for a return of many values)."""


def _convert_value(
    v: AlignValue, modes: list[AlignMode], inputs: list[str], rewires: _Rewires,
    stats: AlignStats,
) -> list[ChannelNormOp]:
    """ChannelNorms for the readers of `v` that read the other family (one per direction);
    the readers' operands are recorded in `rewires`."""
    have = _resolve(v.producer, modes)
    pending: dict[AlignMode, list[Use]] = {AlignMode.ALIGN: [], AlignMode.NALIGN: []}
    for _, node, use in v.reads:
        want = _resolve(node, modes)
        if want != have:
            pending[want].append(use)
    if v.agree:  # the same bytes in both families: the readers read them as they are
        stats.conversions_elided += sum(1 for uses in pending.values() if uses)
        return []
    created = []
    for want, uses in pending.items():
        if not uses:
            continue
        aligned = want == AlignMode.ALIGN
        cn = _channel_norm(v.value, aligned, inputs)
        for use in uses:
            rewires.setdefault(use.operation, {})[use.index] = cn.results[0]
        created.append(cn)
        stats.channel_norms += 1
        if v.compile_time:
            stats.const_channel_norms += 1
        else:
            stats.channel_norm_bytes += v.to_align if aligned else v.to_compact
    return created


def apply_modes(problem: AlignProblem, modes: list[AlignMode]) -> AlignStats:
    """Insert the ChannelNorms `modes` call for and give every op its dev_info."""
    stats = AlignStats(movement_bytes=movement_cost(problem, modes))
    block = problem.block
    at_start: list[Operation] = []
    after: dict[Operation, list[Operation]] = {}
    rewires: _Rewires = {}
    for v in problem.values:
        created = _convert_value(v, modes, problem.inputs, rewires, stats)
        if not created:
            continue
        if isinstance(v.value, BlockArgument):
            at_start.extend(created)
        else:
            after.setdefault(v.value.owner, []).extend(created)
    for op, mode_node in problem.op_node.items():
        if isinstance(op, Tx8beOp) and op.results:
            aligned = _resolve(mode_node, modes) == AlignMode.ALIGN
            op.attributes["dev_info"] = _dev_info(op.dev_info, op.results[0].type, aligned)
    for op, created in after.items():
        block.insert_ops_after(created, op)
    for op, new in rewires.items():
        op.operands = [new.get(i, operand) for i, operand in enumerate(op.operands)]
    if at_start:
        if block.first_op is None:
            block.add_ops(at_start)
        else:
            block.insert_ops_before(at_start, block.first_op)
    return stats


def apply_alignment(problem: AlignProblem, choice: list[AlignMode]) -> AlignStats:
    """Fix the constants' sides, then rewrite the block for `choice`."""
    settle_constants(problem, choice)
    return apply_modes(problem, choice)


@dataclass(frozen=True)
class LayoutAlignToNpuPass(LayoutChoicePass):
    """Seed 000 LayoutAlignToNPU; `strategy` is "optimal" (default) or "greedy"."""

    name = "layout-align-to-npu"

    CHOICE = LayoutChoice(AlignStats, build_problem, solve_greedy, solve_optimal, apply_alignment)
