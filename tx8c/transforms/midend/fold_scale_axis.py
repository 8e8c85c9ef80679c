"""fold-scale-axis: fold per-channel scales into the weights of Conv and Gemm (seed 004).

Seed 004, FoldScaleAxis = Sequential(BackwardFoldScaleAxis, ForwardFoldScaleAxis,
FoldConstant). Both directions fold a `Mul` by a constant into the constant weights of an
NE op, so the CT engine no longer runs the multiplication:

- backward: `Mul(Conv(x, W, b), s)` -> `Conv(x, W * s, b * s)` and
  `Mul(Gemm(a, B, bias), s)` -> `Gemm(a, B * s, bias * s)`, where `s` varies only along
  the op's output-channel axis (Conv: the C axis of its `data_format`; Gemm: the last,
  N axis) and scales the weight's output-channel axis (Conv: O of its `weight_format`;
  Gemm: N of op(B)). Legal when the Conv/Gemm result feeds the Mul alone (otherwise the
  unscaled result is still needed) and its weight and bias are constants. A Gemm whose
  weight is not a constant still absorbs a single scalar scale into `alpha` and `beta`
  (attention's `Q @ K^T * (1/sqrt d)` after legalize turned the Div into a Mul).
- forward: `Conv(Mul(x, s), W)` -> `Conv(x, W')` where `s` varies only along x's channel
  axis and W' scales the weight's input-channel axis: for groups > 1 input channel c
  meets only the output channels of its group, at weight input index c mod (C_in/groups).
  `Gemm(Mul(a, s), B)` -> `Gemm(a, B')` likewise, with `s` along the K axis of op(a) and
  B' scaling the K axis of op(B). Legal because the convolution and the matrix product are
  linear in their data operand and Conv pads with zeros (s * 0 == 0, so scaling before
  the padding equals scaling after it), for any finite s, positive or not. Further
  conditions: the scaled value is the data operand (`input` / `a`) of every one of its
  users and all of them can absorb the scale (weights constant); it is not the weight;
  the Mul does not broadcast x to a larger shape.

Requires: verified tx8be IR. Guarantees: the program's meaning (up to float rounding of
the product of weight and scale, computed in float64 and rounded once to the weight's
type); every folded Mul is gone; weights replaced by folding are new Constants, and
constants left without users are erased.

Departures from the seed:
- Relay moves scales through element-wise ops between the Mul and the conv (and requires a
  positive scale to cross a ReLU); here only a Mul directly next to the Conv/Gemm folds,
  which covers what simplify-inference and the ONNX exporters produce.
- A forward scale folds when its value feeds several Conv/Gemm that all absorb it (each gets
  its own scaled weights): the Q/K/V projections after an RMSNorm weight, for example.
- The new weights are computed here with numpy (no Mul on the weights is created for
  FoldConstant to evaluate). The seed's closing FoldConstant still runs (option
  `fold-constant`, default true: the walk of the `fold-constant` pass, with its default
  size limit), for the constants the program has elsewhere.

How Conv and Gemm absorb a scale (their channel axes, weight and bias) is theirs to say:
the pass asks the `ProductOp` methods (`output_affine_folded`, `input_scale_folded`,
`uniform_scale_folded`), which simplify-inference uses too for a BatchNorm's scale and
shift.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from tx8c.analysis.constant_folder import DEFAULT_MAX_ELEMENTS, ConstantFolder
from tx8c.dialect.ops.conv_gemm import ProductOp
from tx8c.dialect.ops.elementwise import MulOp
from tx8c.ir_utils import channel_vector, constant_array, erase_dead_constants, shape_of

# --------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------


def constant_factor(mul: Operation) -> tuple[SSAValue, SSAValue, np.ndarray] | None:
    """(the non-constant operand, the constant operand, its array) of a Mul by a constant
    that does not broadcast the other operand to a larger shape; None for other Muls."""
    lhs, rhs = mul.operands
    for data, const in ((lhs, rhs), (rhs, lhs)):
        array = constant_array(const)
        if array is not None and constant_array(data) is None:
            return (data, const, array) if shape_of(mul.results[0]) == shape_of(data) else None
    return None


def _insert_before(op: Operation, new_ops: list[Operation], rewriter: PatternRewriter):
    """Insert `new_ops` before `op`; the last one (the rebuilt op)."""
    rewriter.insert(new_ops, InsertPoint.before(op))
    return new_ops[-1]


def _replace_and_clean(old: Operation, new: Operation, rewriter: PatternRewriter) -> None:
    """Replace `old` by `new` and erase `old`'s constants left without users."""
    operands = list(old.operands)
    rewriter.replace(old, [], list(new.results))
    erase_dead_constants(operands, rewriter.erase)


# --------------------------------------------------------------------------------------
# The two directions
# --------------------------------------------------------------------------------------


class _ConstantFactorFold(RewritePattern):
    """Both directions start from a Mul by a constant (`constant_factor`)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, mul: MulOp, rewriter: PatternRewriter) -> None:
        factor = constant_factor(mul)
        if factor is not None:
            self.fold(mul, *factor, rewriter)

    def fold(self, mul: MulOp, data: SSAValue, const: SSAValue, scale: np.ndarray,
             rewriter: PatternRewriter) -> None:
        """Fold `mul` = data * const (`scale` is const's array) if this direction can."""
        raise NotImplementedError


class BackwardFold(_ConstantFactorFold):
    """Mul(Conv/Gemm(...), per-output-channel constant) -> Conv/Gemm with scaled weights."""

    def fold(self, mul, data, const, scale, rewriter) -> None:
        producer = data.owner
        if not isinstance(producer, ProductOp) or not data.has_one_use():
            return
        vector = channel_vector(scale, shape_of(data), producer.output_channel_axis())
        if vector is None:
            return
        new_ops = producer.output_affine_folded(vector, None)
        if new_ops is None:
            uniform = producer.uniform_scale_folded(vector)
            new_ops = [uniform] if uniform is not None else None
        if new_ops is None:
            return
        new = _insert_before(producer, new_ops, rewriter)
        rewriter.replace(mul, [], list(new.results))
        _replace_and_clean(producer, new, rewriter)
        erase_dead_constants([const], rewriter.erase)


class ForwardFold(_ConstantFactorFold):
    """Conv/Gemm(Mul(x, per-input-channel constant), W) -> Conv/Gemm(x, scaled W)."""

    def fold(self, mul, data, const, scale, rewriter) -> None:
        scaled = mul.results[0]
        if not scaled.uses or not _finite(scale):
            return
        plans = [self._plan(use.operation, use.index, scale) for use in scaled.uses]
        if any(plan is None for plan in plans):
            return
        for user, vector in plans:  # every user absorbs it: now build
            new_ops = user.input_scale_folded(data, vector)
            _replace_and_clean(user, _insert_before(user, new_ops, rewriter), rewriter)
        rewriter.erase(mul)
        erase_dead_constants([const], rewriter.erase)

    @staticmethod
    def _plan(user: Operation, index: int, scale: np.ndarray):
        """(user, the scale as a vector along its data channels) when `user` absorbs the
        scale on operand `index`: it is the data operand and the weights are constants."""
        if not isinstance(user, ProductOp) or index != 0 or user.constant_weights() is None:
            return None
        shape = shape_of(user.operands[index])
        vector = channel_vector(scale, shape, user.data_channel_axis() % len(shape))
        return None if vector is None else (user, vector)


def _finite(array: np.ndarray) -> bool:
    return bool(np.all(np.isfinite(array)))


@dataclass(frozen=True)
class FoldScaleAxisPass(ModulePass):
    """Backward then forward folding of per-channel scales (module docstring).

    Options: `backward`, `forward` and `fold-constant` (all true) switch the three steps.
    """

    name = "fold-scale-axis"

    backward: bool = True
    forward: bool = True
    fold_constant: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = ([BackwardFold()] if self.backward else []) + (
            [ForwardFold()] if self.forward else []
        )
        for pattern in patterns:  # the seed's order: all backward folds, then forward
            PatternRewriteWalker(pattern).rewrite_module(op)
        if self.fold_constant:
            ConstantFolder(DEFAULT_MAX_ELEMENTS).run(op)  # the fold-constant pass's walk
