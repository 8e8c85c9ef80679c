"""The machinery shared by combine-parallel-conv and combine-parallel-gemm (seed 004,
ParallelOpCombiner).

Not a pass: a library that two passes use (`tx8c/transforms/` holds passes only). The
seed's combiner finds groups of branches (`BranchGroupFinder`): ops of one kind that read
the same input and "can be combined"; a group with at least `min_num_branches` ops becomes
one wider op whose result is cut back into the branches. Here a `BranchKind` says what
the seed's `IsSupportedOp` / `CanOpsBeCombined` say for one op kind: a hashable
`signature` (ops with the same input and signature can be combined) and how the branches'
constant biases stack. The rest (`MakeCombinedOp`) is asked of the ops (`ProductOp`): the
result axis the branches are stacked on is their output channel axis, their weights are
concatenated along the weight's output axis, and an absorbed Add becomes a bias through
`bias_from_addend`.

Like the seed's combiner (which extends branches through the element-wise ops that follow
them), a group also absorbs the element-wise ops that follow every branch alike: the same
unary op with the same attributes, or the same binary op with a constant operand on the
same side that varies only along the stacked axis. Those become one wide op on the wide
result, with their constants concatenated. When the first absorbed op is an Add and the
branches have no bias, the concatenated constant becomes the wide op's bias instead: the
importer writes `nn.Linear` on 3-D inputs as Gemm + Add(bias), so Q/K/V projections end
as one Gemm with a bias and one Split.

The group is then replaced by: new constants, the wide op, the absorbed wide ops, and a
`tx8be.Split` along the stacked axis whose results replace the last value of each branch.
They are inserted where the earliest branch op was: every branch reads the same input and
only constants besides, so that point dominates every use. Constants left without users
are erased. Finding groups is one walk over the block (O(n)).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from tx8c.dialect.base import Tx8beOp
from tx8c.dialect.ops.backend import ConstantOp
from tx8c.dialect.ops.conv_gemm import ProductOp
from tx8c.dialect.ops.elementwise import AddOp, BinaryOp, UnaryOp
from tx8c.dialect.ops.movement import SplitOp
from tx8c.ir_utils import (
    blocks_of,
    constant_array,
    erase_dead_constants,
    rebuilt,
    shape_of,
    sole_user,
    stack_along,
)

# --------------------------------------------------------------------------------------
# Branch kinds and groups
# --------------------------------------------------------------------------------------


class BranchKind(ABC):
    """What the combiner needs to know about one op kind (Conv, Gemm) beyond what the op
    itself says (`ProductOp`: its output channel axes, along which the branches and their
    weights are stacked, and what bias an added constant makes)."""

    op_class: type[ProductOp]

    @abstractmethod
    def signature(self, op: ProductOp) -> Hashable | None:
        """Ops with the same first operand and equal signatures combine; None when `op`
        cannot take part (non-constant weights, unsupported attributes)."""

    @abstractmethod
    def stacked_bias(self, group: Sequence[ProductOp]) -> np.ndarray:
        """The wide op's bias: the constant biases of the group (they all have one) side
        by side."""


def widen(
    kind: BranchKind, group: Sequence[ProductOp], bias: np.ndarray | None
) -> list[Operation]:
    """New ops computing the group as one op: its new constants, then the wide op last.
    `bias`, when given, is added to the wide op's result (the group has none)."""
    first = group[0]
    weights = np.concatenate(
        [constant_array(op.operands[1]) for op in group], axis=first.weight_output_axis()
    )
    attrs = {}
    if first.operand_named("bias") is not None:
        bias = kind.stacked_bias(group)
    elif bias is not None:
        attrs = first.unscaled_bias_attrs()  # the absorbed Add was not scaled
    constants = [ConstantOp.from_array(weights)]
    if bias is not None:
        constants.append(ConstantOp.from_array(bias))
    operands = [first.operands[0], *(c.results[0] for c in constants)]
    return [*constants, rebuilt(first, operands, **attrs)]


@dataclass
class ChainStep:
    """One element-wise op that follows every branch alike."""

    ops: list[Tx8beOp]
    constant: np.ndarray | None = None
    """The branches' constant operands stacked along the axis (binary ops)."""
    constant_index: int = 1
    """The constant's operand position (binary ops)."""

    def build(self, value: SSAValue) -> list[Operation]:
        """The wide op applied to `value` (after a new Constant, for binary ops)."""
        if self.constant is None:
            return [rebuilt(self.ops[0], [value])]
        const = ConstantOp.from_array(self.constant)
        operands = [value, const.results[0]]
        if self.constant_index == 0:
            operands.reverse()
        return [const, rebuilt(self.ops[0], operands)]


def find_groups(block: Block, kind: BranchKind) -> list[list[ProductOp]]:
    """The ops of `kind` in `block` grouped by (first operand, signature), in order."""
    groups: dict[tuple[SSAValue, Hashable], list[ProductOp]] = {}
    for op in block.ops:
        if isinstance(op, kind.op_class):
            signature = kind.signature(op)
            if signature is not None:
                groups.setdefault((op.operands[0], signature), []).append(op)
    return list(groups.values())


def _next_step(values: Sequence[SSAValue], axis: int) -> ChainStep | None:
    """The element-wise op that follows every one of `values` alike, if any."""
    users = [sole_user(v) for v in values]
    first = users[0]
    if not isinstance(first, UnaryOp | BinaryOp):
        return None
    if any(type(u) is not type(first) or u.attributes != first.attributes for u in users):
        return None
    if isinstance(first, UnaryOp):
        return ChainStep(users)
    index = 0 if first.operands[0] is values[0] else 1
    constants, shapes = [], []
    for user, value in zip(users, values, strict=True):
        if user.operands[index] is not value or shape_of(user.results[0]) != shape_of(value):
            return None
        constant = constant_array(user.operands[1 - index])
        if constant is None:
            return None
        constants.append(constant)
        shapes.append(shape_of(value))
    stacked = stack_along(constants, shapes, axis)
    if stacked is None:
        return None
    return ChainStep(users, stacked, 1 - index)


def follow_elementwise(values: Sequence[SSAValue], axis: int) -> list[ChainStep]:
    """The element-wise ops that follow all branches alike, in order."""
    steps: list[ChainStep] = []
    while (step := _next_step(values, axis)) is not None:
        steps.append(step)
        values = [op.results[0] for op in step.ops]
    return steps


def _absorbed_bias(
    group: Sequence[ProductOp], steps: list[ChainStep], axis: int
) -> np.ndarray | None:
    """The first step's constant as the wide op's bias, when it is an Add and fits."""
    if not steps or not isinstance(steps[0].ops[0], AddOp):
        return None
    if any(op.operand_named("bias") is not None for op in group):
        return None
    wide_shape = list(shape_of(group[0].results[0]))
    wide_shape[axis] = sum(shape_of(op.results[0])[axis] for op in group)
    return group[0].bias_from_addend(steps[0].constant, wide_shape)


def combine_group(group: Sequence[ProductOp], kind: BranchKind) -> None:
    """Replace the branches of `group` (and what follows them alike) by one wide op and
    a Split."""
    axis = group[0].output_channel_axis()
    sizes = [shape_of(op.results[0])[axis] for op in group]
    steps = follow_elementwise([op.results[0] for op in group], axis)
    bias = _absorbed_bias(group, steps, axis)
    new_ops = widen(kind, group, bias)
    value = new_ops[-1].results[0]
    for step in steps[1:] if bias is not None else steps:
        built = step.build(value)
        new_ops += built
        value = built[-1].results[0]
    split = SplitOp.make([value], axis=axis, split=sizes)
    new_ops.append(split)
    Rewriter.insert_op(new_ops, InsertPoint.before(group[0]))
    chains = [[op, *(step.ops[i] for step in steps)] for i, op in enumerate(group)]
    _replace_branches(chains, split)


def _replace_branches(chains: list[list[Tx8beOp]], split: SplitOp) -> None:
    """Point each branch's users at its Split result, then erase the branch ops."""
    inputs: list[SSAValue] = []
    for chain, result in zip(chains, split.results, strict=True):
        chain[-1].results[0].replace_all_uses_with(result)
        for op in reversed(chain):
            inputs.extend(op.operands)
            Rewriter.erase_op(op)
    erase_dead_constants(inputs)


def combine_parallel(module: ModuleOp, kind: BranchKind, min_num_branches: int) -> int:
    """Combine every group of at least `min_num_branches` branches; returns how many
    groups were combined."""
    combined = 0
    for block in list(blocks_of(module)):
        for group in find_groups(block, kind):
            if len(group) >= max(min_num_branches, 2):
                combine_group(group, kind)
                combined += 1
    return combined
