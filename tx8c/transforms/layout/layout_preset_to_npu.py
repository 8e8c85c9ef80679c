"""layout-preset-to-npu: NHWC features and HWOI weights for the ops that need them.

Implements seed 002 (LayoutPresetToNPU). The NPU runs Conv (and the other ops whose OpAttr
says `need_preset_to_npu`: BatchNorm_Inference, Concatenate, Pad, bilinear Resize) on NHWC
features and HWOI weights; layout-transmit only propagated layouts, so this pass makes
those ops see that arrangement, with as few run-time Transposes as it can, and without
ever changing the arrangement of the data a Tensor-class op sees (seed 002's three
principles).

The model. Only CNN-class data take part: rank-4 values whose layout is a CNN layout
(NCHW, NHWC, OIHW, HWOI). Each such value is in its original arrangement or in the NPU's
(its "preset": NCHW -> NHWC, OIHW -> HWOI; a value already NHWC/HWOI has one arrangement
only). An op runs on one side:

- original: it sees every operand as it was and makes its results as they were;
- preset: its CNN data are permuted by the op's feature permutation p (the one taking its
  result's layout to NHWC/HWOI), and it computes the same values under the attributes
  `permute_attributes(p)` returns (ShapeInference; Conv: `data_format`, `weight_format`,
  BatchNorm: `axis`, Pad: `pads`, ...). Which arrangement it needs of each operand follows
  from that interface's contract: rank-4 operands permuted by p, lower-rank broadcast data
  operands rearranged alike ([C,1,1] -> [1,1,C]), the listed operands of a per-operand
  layout_str (Conv's weight) as the new op's layout_str names them, others as they were.

Hard constraints (the seed's demands):
- an op that `need_preset_to_npu` on CNN data runs preset (its features NHWC, weights HWOI);
- an op that cannot run permuted (`permute_attributes` None: Reshape, BroadCast, Gemm,
  Gather, ...) runs original: "ops that turn CNN layouts into Tensor layouts get their
  original layout restored", so Tensor-class ops never see a changed arrangement;
- graph inputs arrive, and graph outputs (func.return) leave, in their original
  arrangement (the seed's "output nodes": their layout is fixed);
- an op that can permute has its operands and results on one side: a multi-input op
  (V_VV, V_VS) sees one layout, and its lower-rank broadcast operands are rearranged with
  it (a constant at compile time, a run-time value by inserted Reshape/Transpose ops).

Costs: a run-time conversion costs the bytes of its tensor (element count x itemsize), once
per value and target arrangement however many consumers share it; a conversion that moves
no element (only size-1 dims change places, [1,C,1,1] -> [1,1,1,C]) is a Reshape and costs
nothing; conversions of constants are folded into the constant (compile time, free).
Existing Transposes of CNN data are seen through: a value Transpose(x) is "x in another
arrangement", so a Transpose that meets its inverse cancels (no op at all), one that meets
an inserted conversion composes with it, and one that becomes the identity disappears.

Strategies (pass option `strategy`):

- "greedy", the seed's walk: in topological order an op with a demand runs preset
  (`needInsert`: its operands are converted, `insertTranspose`), an op that cannot permute
  runs original (CNN -> Tensor ops get their original layout back), and any other op
  follows the current arrangement of its first operand that has one (`inferLayout`); a
  multi-input op's other operands are converted to it. The seed does not say which
  operand a multi-input op follows when they disagree: the first complete one (of the
  result's shape, as seed 000's V_VS ops follow their complete operand), in operand
  order; constants have no say (converting them is free).
- "optimal" (default): the sides of the free ops that minimise the total bytes converted
  at run time, as an s-t minimum cut (`scipy.sparse.csgraph.maximum_flow`). The source S
  is "preset", the sink T "original"; free ops are nodes, fixed ops are S or T themselves.
  A value costs B once for each arrangement some reader needs that it is not in, which
  one auxiliary node per (value, arrangement) models exactly (a single reader is joined
  directly):

        reader r needs v as it was, v's producer p runs preset:
            p ---B---> [h] ---inf---> r1, r2, ...     h is on T as soon as one r is,
                                                        so p on S cuts p->h once
        reader r needs v preset, p runs original:
            r1, r2, ... ---inf---> [h'] ---B---> p    h' is on S as soon as one r is
        v cannot be in the arrangement r needs (a graph input, a bias):
            r1, r2, ... ---inf---> [h''] ---B---> T

  The minimum cut is the source side reachable in the residual graph, so an op that may
  go either way at equal cost stays original (fewer rewrites). Capacities are int32 for
  scipy: divided by their gcd, and past 2**30 bytes in total counted in a coarser unit
  (rounded up). The cut is exact for graphs whose layouts are consistent (what
  layout-transmit gives); a term that is not representable as a cut (a value read in two
  arrangements that only inconsistent layouts produce) is over-approximated and counted
  in `PresetProblem.approximations`.

Requires: layout-init and layout-transmit (every op has a concrete layout_str, graph-input
layouts in the argument attribute `tx8c.layout`); functions whose body is one block of ops
in SSA order (nested regions are not entered).
Guarantees: every op that needs the preset and can run permuted sees NHWC features and
HWOI weights (its layout_str, e.g. Conv "NHWC-HWOI-NHWC", and attributes updated); every
op that cannot run permuted, every non-tx8be op and every graph output sees exactly the
arrangement it saw before; inserted Transposes/Reshapes carry the layout_str of what they
make ("NHWC" for NCHW -> NHWC); folded constants too. The program computes the same
values (up to the summation order of a permuted reduction). Statistics under
"layout-preset-to-npu" in the module attribute `tx8c.layout_stats` (the layout stage's
convention, `tx8c.analysis.layout_problem`): `strategy`, `transposes` and
`transpose_bytes` (run-time Transposes inserted), `reshapes` (inserted, they move no
data), `const_transposes` (constants rearranged at compile time), `transposes_erased`
(existing Transposes that cancelled), `preset_ops` (ops now running on the NPU's
arrangement), `unpresettable` (ops that need the preset but cannot run permuted: they
keep their arrangement). O(ops + uses) to build the problem and rewrite, plus one
max-flow.

The skeleton (build the problem, solve it with the strategy, apply it, record the
statistics) is the layout stage's `LayoutChoicePass` (`tx8c.analysis.layout_problem`),
shared with layout-align-to-npu; both pay a value's conversion once per target with
`FlowNetwork.pay_once`.

Departs from the seed: the seed converts at the ops themselves and leaves the choice of
arrangement for ops without demands to `inferLayout`; "optimal" chooses it globally. The
seed treats existing Transposes as insertion points; here they are seen through (same
intent: they neither block nor duplicate conversions). An op that needs the preset but
cannot run permuted keeps its arrangement and is counted in `unpresettable` (none today:
bilinear/bicubic Resize runs NHWC through its `data_format`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import StringAttr, TensorType
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue
from xdsl.rewriter import Rewriter

from tx8c.analysis.layout_problem import (
    LayoutChoice,
    LayoutChoicePass,
    LayoutStats,
    is_compile_time,
)
from tx8c.analysis.min_cut import SINK, SOURCE, FlowNetwork
from tx8c.dialect.base import Tx8beOp, to_attr
from tx8c.dialect.layout import (
    CNN_FEATURE,
    input_layouts,
    is_cnn,
    split_layout_str,
    tensor_class_layout,
    value_layout,
)
from tx8c.dialect.ops.backend import ConstantOp
from tx8c.dialect.ops.movement import ReshapeOp, TransposeOp
from tx8c.interfaces.shape_inference import (
    broadcast_arranged_shape,
    data_operand_indices,
    inverse_permutation,
    keeps_element_order,
    permute_layout,
    shape_of,
    unchanged_by,
)
from tx8c.ir_utils import logical_bytes

PRESET = SOURCE
"""Node of everything that runs on the NPU's arrangement (the source of the cut)."""
ORIGINAL = SINK
"""Node of everything that keeps the original arrangement (the sink of the cut)."""
RANK = 4
"""CNN layouts name four dims: only rank-4 data are rearranged."""

Perm = tuple[int, ...]
Shape = tuple[int, ...]
Arrangement = Perm | None
"""How a value is laid out relative to its original arrangement: None = as it was; for a
rank-4 value a permutation (physical = original.transpose(perm)); for a lower-rank
broadcast value the rank-4 permutation of its padded shape (`broadcast_arranged_shape`)."""



# --------------------------------------------------------------------------------------
# Arrangements
# --------------------------------------------------------------------------------------


def target_layout(layout: str) -> str:
    """The NPU's arrangement of a CNN layout: NHWC for features, HWOI for weights."""
    return "NHWC" if layout in CNN_FEATURE else "HWOI"


@lru_cache(maxsize=64)
def layout_perm(source: str, target: str) -> Perm:
    """The permutation that turns data laid out as `source` into `target` (same letters)."""
    return tuple(source.index(letter) for letter in target)


def normalized(shape: Sequence[int], perm: Perm | None) -> Arrangement:
    """`perm` as the arrangement of a value of `shape`: None when it changes nothing."""
    if perm is None:
        return None
    if len(shape) == RANK:
        return None if perm == tuple(range(RANK)) else perm
    if len(shape) > RANK or unchanged_by(shape, perm):
        return None
    return perm


def compose(first: Arrangement, then: Arrangement) -> Arrangement:
    """Arrangement `then` of a value that is itself arrangement `first` of its root,
    relative to the root (rank 4)."""
    if first is None:
        return then
    if then is None:
        return first
    perm = tuple(first[i] for i in then)
    return None if perm == tuple(range(RANK)) else perm


def relative(current: Arrangement, target: Arrangement) -> Perm:
    """The Transpose perm that takes a rank-4 value from `current` to `target`."""
    identity = tuple(range(RANK))
    inverse = inverse_permutation(current or identity)
    return tuple(inverse[t] for t in (target or identity))


def arranged_shape(shape: Sequence[int], arrangement: Arrangement) -> tuple[int, ...]:
    if arrangement is None:
        return tuple(shape)
    return broadcast_arranged_shape(shape, arrangement)


def arranged_array(array: np.ndarray, arrangement: Arrangement) -> np.ndarray:
    """A constant's value in `arrangement` (folded at compile time)."""
    if arrangement is None:
        return array
    padded = array.reshape((1,) * (RANK - array.ndim) + array.shape)
    moved = np.transpose(padded, arrangement)
    return np.ascontiguousarray(moved.reshape(arranged_shape(array.shape, arrangement)))


@lru_cache(maxsize=4096)
def moves_data(shape: tuple[int, ...], current: Arrangement, target: Arrangement) -> bool:
    """Whether converting a value of original `shape` from `current` to `target` moves
    elements (a Transpose) or only size-1 dims (a Reshape, free)."""
    if current == target:
        return False
    if len(shape) < RANK:  # broadcast values are only ever converted from the original
        return not keeps_element_order(shape, target)
    return not keeps_element_order(arranged_shape(shape, current), relative(current, target))


@lru_cache(maxsize=4096)
def _tensor_type(like: TensorType, arrangement: Arrangement) -> TensorType:
    """`like` in `arrangement` (models repeat their shapes: built once each)."""
    shape = arranged_shape(tuple(like.get_shape()), arrangement)
    return TensorType(like.get_element_type(), shape)


# --------------------------------------------------------------------------------------
# The problem
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OpPlan:
    """How an op runs on the preset side."""

    perm: Perm
    attrs: dict[str, Any]
    layout_str: str
    operands: tuple[Arrangement, ...]
    """The arrangement the op needs of each operand (relative to the operand)."""
    results: tuple[Arrangement, ...]
    """The arrangement each result comes out in."""
    changes_attrs: bool

    @property
    def is_identity(self) -> bool:
        return not self.changes_attrs and not any(self.operands) and not any(self.results)


@dataclass(slots=True)
class Read:
    """One use of a root value (directly or through a seen-through Transpose)."""

    node: int
    """The consumer's node: a variable, PRESET or ORIGINAL."""
    need: tuple[Arrangement, Arrangement]
    """The root's arrangement the consumer needs when it runs original / preset."""


@dataclass(slots=True)
class Root:
    """A value that is not a seen-through Transpose: who makes it, who reads it."""

    value: SSAValue
    shape: tuple[int, ...]
    node: int
    """The producer's node (graph inputs: ORIGINAL)."""
    alt: Arrangement
    """The arrangement it comes out in when its producer runs preset."""
    nbytes: int
    compile_time: bool
    layout: str
    """Its layout before the pass (a graph input's: the one layout-transmit recorded)."""
    reads: list[Read] = field(default_factory=list)


@dataclass
class PresetProblem:
    """The preset choice of one block."""

    block: Block
    op_node: dict[Operation, int] = field(default_factory=dict)
    plans: dict[Operation, OpPlan] = field(default_factory=dict)
    views: dict[SSAValue, tuple[SSAValue, Arrangement]] = field(default_factory=dict)
    """Results of seen-through Transposes: (root, arrangement of the root they are)."""
    view_ops: list[TransposeOp] = field(default_factory=list)
    view_layouts: dict[tuple[SSAValue, Arrangement], str] = field(default_factory=dict)
    roots: dict[SSAValue, Root] = field(default_factory=dict)
    var_ops: list[Operation] = field(default_factory=list)
    unpresettable: int = 0
    approximations: int = 0

    @property
    def num_vars(self) -> int:
        return len(self.var_ops)

    def resolve(self, value: SSAValue) -> tuple[SSAValue, Arrangement]:
        """(root, arrangement of the root) of a value."""
        return self.views.get(value, (value, None))

    def needs(self, op: Operation, index: int, root_arrangement: Arrangement):
        """(original, preset) arrangement of the root that operand `index` of `op` needs."""
        plan = self.plans.get(op)
        if plan is None or self.op_node[op] == ORIGINAL:
            return root_arrangement, root_arrangement
        return root_arrangement, compose(root_arrangement, plan.operands[index])


def side_of(node: int, sides: Sequence[bool]) -> bool:
    """True when `node` runs preset under `sides` (one bool per variable)."""
    if node == PRESET:
        return True
    if node == ORIGINAL:
        return False
    return sides[node]


def current(root: Root, sides: Sequence[bool]) -> Arrangement:
    """The arrangement `root` is made in under `sides`."""
    return root.alt if side_of(root.node, sides) else None


def conversion_bytes(root: Root, source: Arrangement, target: Arrangement) -> int:
    """Run-time bytes of converting `root` from `source` to `target` (0: none, a Reshape
    or a constant)."""
    if root.compile_time or not moves_data(root.shape, source, target):
        return 0
    return root.nbytes


def transpose_cost(problem: PresetProblem, sides: Sequence[bool]) -> int:
    """Bytes converted at run time under `sides`: each root once per other arrangement
    its readers need."""
    total = 0
    for root in problem.roots.values():
        have = current(root, sides)
        wanted = {read.need[side_of(read.node, sides)] for read in root.reads}
        total += sum(conversion_bytes(root, have, x) for x in wanted if x != have)
    return total


def feature_perm(op: Tx8beOp, shapes: Sequence[Shape], result_shapes: Sequence[Shape]):
    """The permutation that takes the op's CNN data to the NPU's arrangement: its rank-4
    result's layout to NHWC/HWOI, else its first rank-4 CNN data operand's; None when the
    op has no CNN data (Tensor-class data are never rearranged)."""
    if result_shapes and len(result_shapes[0]) == RANK:
        layout = value_layout(op.results[0])
        return layout_perm(layout, target_layout(layout)) if is_cnn(layout) else None
    for i in data_operand_indices(op):
        if len(shapes[i]) == RANK:
            layout = value_layout(op.operands[i])
            if is_cnn(layout):
                return layout_perm(layout, target_layout(layout))
    return None


def _token_arrangement(old: str, new: str) -> Arrangement:
    """The arrangement that takes an operand laid out as token `old` to token `new`."""
    if old == new or not (is_cnn(old) and is_cnn(new)) or set(old) != set(new):
        return None
    return layout_perm(old, new)


def _with_attrs(op: Tx8beOp, attrs: dict[str, Any], layout_str: str) -> dict[str, Attribute]:
    """The op's attributes with `attrs` (Python values; None removes) and `layout_str`."""
    attributes = dict(op.attributes)
    for name, value in attrs.items():
        if value is None:
            attributes.pop(name, None)
        else:
            attributes[name] = to_attr(op.ATTR_KINDS[name], value)
    attributes["layout_str"] = StringAttr(layout_str)
    return attributes


def _probe_layout_str(op: Tx8beOp, attrs: dict[str, Any]) -> str:
    """The layout_str the op's attributes fix once `attrs` are set (Conv's tokens): asked
    of the op itself with the attributes swapped in for the call."""
    saved = op.attributes
    op.attributes = _with_attrs(op, attrs, op.layout)
    try:
        return op.initial_layout_str() or saved["layout_str"].data
    finally:
        op.attributes = saved


def _attrs_change(op: Tx8beOp, attrs: dict[str, Any]) -> bool:
    for name, value in attrs.items():
        have = op.attr(name)
        if isinstance(value, list | tuple):
            value = tuple(value)
        if have != value:
            return True
    return False


def make_plan(
    op: Tx8beOp, perm: Perm, shapes: Sequence[Shape], result_shapes: Sequence[Shape]
) -> OpPlan | None:
    """How `op` (operands and results of these shapes) runs with its CNN data permuted by
    `perm`; None when it cannot."""
    attrs = op.permute_attributes(perm)
    if attrs is None:
        return None
    tokens = split_layout_str(op.layout)
    if len(tokens) > 1:  # per-operand layout_str: the new tokens name each operand's
        layout = _probe_layout_str(op, attrs)
        new = split_layout_str(layout)
        operands = tuple(
            _token_arrangement(tokens[i], new[i]) if i < len(tokens) - 1 else None
            for i in range(len(shapes))
        )
        results = tuple(
            _token_arrangement(tokens[-1], new[-1]) if len(shape) == RANK else None
            for shape in result_shapes
        )
    else:
        data = set(data_operand_indices(op))
        operands = tuple(
            normalized(shape, perm) if len(shape) == RANK or (i in data and len(shape) < RANK)
            else None
            for i, shape in enumerate(shapes)
        )
        results = tuple(  # results of another rank come out as they were (contract)
            normalized(shape, perm) if len(shape) == RANK else None for shape in result_shapes
        )
        layout = _permuted_token(tokens[0], result_shapes, perm)
    return OpPlan(perm, attrs, layout, operands, results, _attrs_change(op, attrs))


def _permuted_token(token: str, result_shapes: Sequence[Shape], perm: Perm) -> str:
    """A one-token layout_str once the op's rank-4 result is permuted."""
    if not result_shapes or len(result_shapes[0]) != RANK:
        return token
    permuted = permute_layout(token, perm)
    if is_cnn(permuted):
        return permuted
    return tensor_class_layout(arranged_shape(result_shapes[0], perm))


def _is_seen_through(op: Operation) -> bool:
    """An existing Transpose of CNN data: the pass treats its result as a view."""
    if not isinstance(op, TransposeOp) or len(shape_of(op.operands[0])) != RANK:
        return False
    return is_cnn(value_layout(op.operands[0])) or is_cnn(value_layout(op.results[0]))


class _Builder:
    """Builds a PresetProblem from a block in one walk (O(ops + uses))."""

    def __init__(self, block: Block, input_layouts: Sequence[str]):
        self.problem = PresetProblem(block)
        self.input_layouts = input_layouts

    def build(self) -> PresetProblem:
        problem = self.problem
        for arg in problem.block.args:
            self._add_root(arg, shape_of(arg), ORIGINAL, None, compile_time=False)
        for op in problem.block.ops:
            if _is_seen_through(op):
                self._add_view(op)
                continue
            shapes = [shape_of(v) for v in op.operands]
            result_shapes = [shape_of(r) for r in op.results]
            compile_time = is_compile_time(op)
            node = self._classify(op, shapes, result_shapes, compile_time)
            problem.op_node[op] = node
            plan = problem.plans.get(op)
            for i, result in enumerate(op.results):
                alt = plan.results[i] if plan is not None else None
                self._add_root(result, result_shapes[i], node, alt, compile_time)
            for i, operand in enumerate(op.operands):
                root, arrangement = problem.resolve(operand)
                need = problem.needs(op, i, arrangement)
                problem.roots[root].reads.append(Read(node, need))
        return problem

    def _add_root(
        self, value: SSAValue, shape: Shape, node: int, alt: Arrangement, compile_time: bool
    ) -> None:
        layout = (
            self.input_layouts[value.index] if isinstance(value, BlockArgument)
            else value_layout(value)
        )
        size = 0 if compile_time else logical_bytes(value)
        self.problem.roots[value] = Root(value, shape, node, alt, size, compile_time, layout)

    def _add_view(self, op: TransposeOp) -> None:
        root, arrangement = self.problem.resolve(op.operands[0])
        view = compose(arrangement, normalized(shape_of(op.operands[0]), op.permutation()))
        self.problem.views[op.results[0]] = (root, view)
        self.problem.view_ops.append(op)
        self.problem.view_layouts.setdefault((root, view), value_layout(op.results[0]))

    def _classify(
        self, op: Operation, shapes: list[Shape], result_shapes: list[Shape], constant: bool
    ) -> int:
        """The op's node: PRESET, ORIGINAL or a new variable; records its plan."""
        if not isinstance(op, Tx8beOp) or constant:
            return ORIGINAL
        perm = feature_perm(op, shapes, result_shapes)
        if perm is None:
            return ORIGINAL
        plan = make_plan(op, perm, shapes, result_shapes)
        if plan is None:
            self.problem.unpresettable += op.query_op_attr().need_preset_to_npu
            return ORIGINAL
        if plan.is_identity:
            return ORIGINAL  # already in the NPU's arrangement: both sides are the same
        self.problem.plans[op] = plan
        if op.query_op_attr().need_preset_to_npu:
            return PRESET
        self.problem.var_ops.append(op)
        return self.problem.num_vars - 1


def build_problem(function: func.FuncOp) -> PresetProblem:
    """The preset problem of `function`'s body (see the module docstring)."""
    return _Builder(function.body.block, input_layouts(function)).build()


# --------------------------------------------------------------------------------------
# Strategies
# --------------------------------------------------------------------------------------


def solve_greedy(problem: PresetProblem) -> list[bool]:
    """Seed 002's walk: in topological order a free op follows the current arrangement of
    its first operand that has a say (variables are numbered in block order, so every
    producer is decided before its readers)."""
    sides = [False] * problem.num_vars
    for var, op in enumerate(problem.var_ops):
        sides[var] = _follows_preset(problem, op, sides)
    return sides


def _follows_preset(problem: PresetProblem, op: Operation, sides: list[bool]) -> bool:
    """Whether `op` follows its first operand that has a say: complete operands (of the
    result's shape) before broadcast ones (seed 000's V_VS rule: follow the complete
    operand), in operand order; constants have none (converting them is free)."""
    out = shape_of(op.results[0]) if op.results else None
    order = sorted(range(len(op.operands)), key=lambda i: shape_of(op.operands[i]) != out)
    for i in order:
        root_value, arrangement = problem.resolve(op.operands[i])
        root = problem.roots[root_value]
        original, preset = problem.needs(op, i, arrangement)
        if original == preset or root.compile_time:
            continue  # this operand does not care, or converting it is free
        have = current(root, sides)
        if have == preset:
            return True
        if have == original:
            return False
    return False


class _CutGraph(FlowNetwork):
    """The preset problem's flow network: PRESET is the source, ORIGINAL the sink."""

    def __init__(self, num_vars: int):
        super().__init__(num_vars)
        self.approximations = 0

    def term(self, cost: int, guard: tuple[int, bool] | None, readers: list[tuple[int, bool]]):
        """Pay `cost` when `guard` holds (None: always) and at least one reader literal
        holds; a literal (node, preset) holds when node runs preset == `preset`."""
        guard, readers = _simplify(guard, readers)
        if not cost or readers is None or guard is False:
            return
        if not readers:  # some reader always needs it
            if guard is not None:
                node, preset = guard
                self.edge(node, ORIGINAL, cost) if preset else self.edge(PRESET, node, cost)
            return
        for preset in (True, False):
            group = [node for node, p in readers if p == preset]
            if not group:
                continue
            if guard is not None and guard[1] == preset:
                self.approximations += 1  # not a cut: pay whatever the producer does
                self._once(cost, None, group, preset)
            else:
                self._once(cost, None if guard is None else guard[0], group, preset)
        if all(any(p == s for _, p in readers) for s in (True, False)):
            self.approximations += 1  # two groups may both pay

    def _once(self, cost: int, producer: int | None, group: list[int], preset: bool):
        """`cost` once if any node of `group` is on the side `preset` and `producer` (if
        given, else the other terminal) on the other."""
        if producer is None:
            producer = ORIGINAL if preset else PRESET
        self.pay_once(cost, group, producer, readers_on_source=preset)


def _simplify(guard, readers):
    """Fold the literals of fixed nodes: (guard or None or False, readers or None), where
    readers None means "no reader needs it" and [] "some reader always does"."""
    if guard is not None and guard[0] < 0:
        guard = None if (guard[0] == PRESET) == guard[1] else False
    kept = []
    for node, preset in readers:
        if node < 0:
            if (node == PRESET) == preset:
                return guard, []
            continue
        kept.append((node, preset))
    return guard, (list(dict.fromkeys(kept)) or None)


def _reader_literals(reads: Iterable[Read], target: Arrangement) -> list[tuple[int, bool]]:
    """The literals "this reader needs `target`" (a fixed need is a fixed node's literal)."""
    literals = []
    for read in reads:
        original, preset = read.need
        if original == target and preset == target:
            literals.append((ORIGINAL, False))  # always true
        elif original == target:
            literals.append((read.node, False))
        elif preset == target:
            literals.append((read.node, True))
    return literals


def solve_optimal(problem: PresetProblem) -> list[bool]:
    """The sides of the free ops with the fewest bytes converted at run time."""
    graph = _CutGraph(problem.num_vars)
    for root in problem.roots.values():
        if root.compile_time:
            continue
        targets = dict.fromkeys(x for read in root.reads for x in read.need)
        for target in targets:
            readers = _reader_literals(root.reads, target)
            if root.alt is None or root.node == ORIGINAL:
                graph.term(conversion_bytes(root, None, target), None, readers)
                continue
            # made as it was when the producer runs original, in `alt` when preset
            if target is not None:
                graph.term(conversion_bytes(root, None, target), (root.node, False), readers)
            if target != root.alt:
                graph.term(conversion_bytes(root, root.alt, target), (root.node, True), readers)
    problem.approximations += graph.approximations
    return graph.source_side()


# --------------------------------------------------------------------------------------
# Rewriting the IR
# --------------------------------------------------------------------------------------


@dataclass
class PresetStats(LayoutStats):
    transposes: int = 0
    transpose_bytes: int = 0
    reshapes: int = 0
    const_transposes: int = 0
    transposes_erased: int = 0
    preset_ops: int = 0
    unpresettable: int = 0


class _Rewriter:
    """Applies a choice of sides in one walk in block order: preset ops are changed in
    place, each operand gets the arrangement its reader needs (one conversion per value
    and arrangement, right after the value's definition, shared by all its readers), and
    the seen-through Transposes and constants nobody reads any more are erased."""

    def __init__(self, problem: PresetProblem, sides: Sequence[bool]):
        self.problem = problem
        self.sides = sides
        self.now: dict[SSAValue, SSAValue] = {}
        """Root -> the value that holds it now (a preset op's result of a new type)."""
        self.converted: dict[tuple[SSAValue, Arrangement], SSAValue] = {}
        self.stats = PresetStats(unpresettable=problem.unpresettable)
        self.reusable = {  # existing Transposes of run-time values, to keep where they fit
            (op.operands[0], op.permutation()): op for op in problem.view_ops
            if op.operands[0] not in problem.views
            and not problem.roots[op.operands[0]].compile_time
        }
        self.kept: set[Operation] = set()
        self.order = {op: i for i, op in enumerate(problem.block.ops)}
        self.input_anchor: Operation | None = None
        """The last conversion of a graph input (they go first, in the order needed)."""

    def run(self) -> PresetStats:
        block = self.problem.block
        order = self.order
        had_uses = [r.value for r in self.problem.roots.values() if r.compile_time and r.reads]
        seen_through = set(self.problem.view_ops)
        # the operands as the problem saw them (rewriting a result rewires its readers)
        reads = [(op, tuple(op.operands)) for op in order if op not in seen_through]
        for op, operands in reads:
            preset = side_of(self.problem.op_node[op], self.sides)
            new = [self._operand(op, i, v, preset) for i, v in enumerate(operands)]
            plan = self.problem.plans.get(op) if preset else None
            if plan is not None:
                self._preset(op, new, plan)
            else:
                for i, value in enumerate(new):
                    if op.operands[i] is not value:
                        op.operands[i] = value
        erased = [op for op in self.problem.view_ops if op not in self.kept]
        self.stats.transposes_erased += len(erased)
        for op in sorted(erased, key=order.__getitem__, reverse=True):
            block.erase_op(op)
        for value in had_uses:  # constants now read only through their folded copies
            if not value.uses:
                block.erase_op(value.owner)
        return self.stats

    # -- operands ---------------------------------------------------------------------
    def _operand(self, op: Operation, index: int, value: SSAValue, preset: bool) -> SSAValue:
        root_value, arrangement = self.problem.resolve(value)
        need = self.problem.needs(op, index, arrangement)[preset]
        root = self.problem.roots[root_value]
        if need == current(root, self.sides):
            return self.now.get(root_value, root_value)
        key = (root_value, need)
        if key not in self.converted:
            self.converted[key] = self._convert(root, need, op)
        return self.converted[key]

    def _layout(self, root: Root, target: Arrangement) -> str:
        """The layout_str of `root` in `target`."""
        known = self.problem.view_layouts.get((root.value, target))
        if known is not None:
            return known
        shape = arranged_shape(root.shape, target)
        if len(root.shape) == RANK and is_cnn(root.layout):
            permuted = permute_layout(root.layout, target or tuple(range(RANK)))
            if is_cnn(permuted):
                return permuted
        return tensor_class_layout(shape)

    def _convert(self, root: Root, target: Arrangement, reader: Operation) -> SSAValue:
        """`root` in `target` for its first reader that needs that: a folded constant, an
        existing Transpose that already makes it, or new Reshape/Transpose ops."""
        source = self.now.get(root.value, root.value)
        have = current(root, self.sides)
        layout = self._layout(root, target)
        if root.compile_time:
            array = root.value.owner.compute()[root.value.index]
            ops = [ConstantOp.from_array(arranged_array(array, target), layout_str=layout)]
            self.stats.const_transposes += 1
        else:
            existing = self._reusable(root, have, target)
            if existing is not None:
                return self._keep(existing, source, reader)
            ops = self._conversion(root, source, have, target, layout)
        self._insert_after(source, ops)
        return ops[-1].results[0]

    def _reusable(self, root: Root, have: Arrangement, target: Arrangement):
        """An existing Transpose that makes `target` from the value as it was."""
        if have is not None or target is None:
            return None
        existing = self.reusable.get((root.value, target))
        return None if existing in self.kept else existing

    def _keep(self, existing: TransposeOp, source: SSAValue, reader: Operation) -> SSAValue:
        """Keep an existing Transpose where it is (moved up after `source` when `reader`
        comes before it), so an unchanged program stays unchanged."""
        self.kept.add(existing)
        existing.operands[0] = source
        if self.order[existing] > self.order[reader]:
            existing.detach()
            self._insert_after(source, [existing])
        return existing.results[0]

    def _conversion(
        self, root: Root, source: SSAValue, have: Arrangement, target: Arrangement, layout: str
    ) -> list[Operation]:
        """Reshape/Transpose ops that take `source` (in `have`) to `target`."""
        shape = root.shape
        final = arranged_shape(shape, target)
        if not moves_data(shape, have, target):
            self.stats.reshapes += 1
            return [ReshapeOp.make([source], shape=final, layout_str=layout)]
        self.stats.transposes += 1
        self.stats.transpose_bytes += root.nbytes
        if len(shape) == RANK:
            return [TransposeOp.make([source], perm=relative(have, target), layout_str=layout)]
        ops: list[Operation] = []  # a broadcast value: to rank 4, permute, back to its rank
        padded = (1,) * (RANK - len(shape)) + shape
        tensor = tensor_class_layout(padded)
        ops.append(ReshapeOp.make([source], shape=padded, layout_str=tensor))
        moved = tuple(padded[p] for p in target)
        ops.append(
            TransposeOp.make([ops[-1].results[0]], perm=target,
                             layout_str=tensor_class_layout(moved))
        )
        if moved != final:
            ops.append(ReshapeOp.make([ops[-1].results[0]], shape=final, layout_str=layout))
        self.stats.reshapes += len(ops) - 1
        return ops

    def _insert_after(self, value: SSAValue, ops: list[Operation]) -> None:
        """Right after the value's definition; graph inputs' at the start, in order."""
        block = self.problem.block
        if not isinstance(value, BlockArgument):
            block.insert_ops_after(ops, value.owner)
        elif self.input_anchor is not None:
            block.insert_ops_after(ops, self.input_anchor)
        elif block.first_op is None:
            block.add_ops(ops)
        else:
            block.insert_ops_before(ops, block.first_op)
        if isinstance(value, BlockArgument):
            self.input_anchor = ops[-1]

    # -- preset ops -------------------------------------------------------------------
    def _preset(self, op: Tx8beOp, operands: list[SSAValue], plan: OpPlan) -> None:
        """Run `op` preset, in place: the new operands, the plan's attributes and
        layout_str, and results in the plan's arrangements (the contract of
        permute_attributes; the verifier checks them against infer_shapes)."""
        op.attributes = _with_attrs(op, plan.attrs, plan.layout_str)
        op.operands = operands
        for result, arrangement in zip(list(op.results), plan.results, strict=True):
            if arrangement is not None:
                new_type = _tensor_type(result.type, arrangement)
                self.now[result] = Rewriter.replace_value_with_new_type(result, new_type)
        self.stats.preset_ops += 1


def apply_sides(problem: PresetProblem, sides: Sequence[bool]) -> PresetStats:
    """Rewrite the problem's block for this choice of sides (one bool per free op, True =
    preset); the problem is used up."""
    return _Rewriter(problem, sides).run()


@dataclass(frozen=True)
class LayoutPresetToNpuPass(LayoutChoicePass):
    """Seed 002 LayoutPresetToNPU; `strategy` is "optimal" (default) or "greedy"."""

    name = "layout-preset-to-npu"

    CHOICE = LayoutChoice(PresetStats, build_problem, solve_greedy, solve_optimal, apply_sides)
