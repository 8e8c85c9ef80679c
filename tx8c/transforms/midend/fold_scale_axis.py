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
  FoldConstant to evaluate). The seed's closing FoldConstant still runs, by applying the
  `fold-constant` pass (option `fold-constant`, default true), for the constants the
  program has elsewhere.

The folding helpers (`fold_output_affine`, `output_channel_axis`) are shared with
simplify-inference, which folds a BatchNorm's scale and shift into the preceding op.
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

from tx8c.dialect.base import Tx8beOp
from tx8c.dialect.ops.backend import ConstantOp
from tx8c.dialect.ops.conv_gemm import ConvOp, GemmOp
from tx8c.dialect.ops.elementwise import MulOp
from tx8c.ir_utils import (
    channel_vector,
    constant_array,
    erase_dead_constants,
    rebuilt,
    shape_of,
)
from tx8c.transforms.midend.fold_constant import FoldConstantPass

# --------------------------------------------------------------------------------------
# Constants
# --------------------------------------------------------------------------------------


def split_constant_operand(mul: Operation) -> tuple[SSAValue, np.ndarray] | None:
    """(the non-constant operand, the constant's array) of a Mul by a constant, or None."""
    lhs, rhs = mul.operands
    for data, const in ((lhs, rhs), (rhs, lhs)):
        array = constant_array(const)
        if array is not None and constant_array(data) is None:
            return data, array
    return None


# --------------------------------------------------------------------------------------
# How Conv and Gemm absorb scales
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _NewOperands:
    """The weight and bias arrays of a rebuilt op and its attribute changes.

    `keep_bias`: the op keeps its bias operand as it is (`bias` is then unused).
    """

    weight: np.ndarray
    bias: np.ndarray | None
    attrs: dict
    keep_bias: bool = False


class _ConvFolder:
    """Where a Conv's channels are, by its data_format / weight_format and groups."""

    @staticmethod
    def output_axis(op: ConvOp) -> int:
        return 1 if op.attr("data_format") == "NCHW" else 3

    @staticmethod
    def input_axis(op: ConvOp, operand: int) -> int | None:
        if operand != 0:
            return None
        return 1 if op.attr("data_format") == "NCHW" else 3

    @staticmethod
    def _weight_axes(op: ConvOp) -> tuple[int, int]:
        """(output-channel axis, input-channel axis) of the weight."""
        return (0, 1) if op.attr("weight_format") == "OIHW" else (2, 3)

    @classmethod
    def scale_output(cls, op, weight, bias, scale, shift) -> _NewOperands:
        o_axis, _ = cls._weight_axes(op)
        along = [1] * weight.ndim
        along[o_axis] = -1
        new_bias = _affine_bias(bias, scale, shift)
        return _NewOperands(weight * scale.reshape(along), new_bias, {})

    @classmethod
    def scale_input(cls, op, weight, scale) -> _NewOperands:
        o_axis, i_axis = cls._weight_axes(op)
        c_out, per_group = weight.shape[o_axis], weight.shape[i_axis]
        groups = op.attr("groups")
        # factor[o, i] = scale[channel read by output o at weight index i]
        factor = np.repeat(scale.reshape(groups, per_group), c_out // groups, axis=0)
        if o_axis == 0:  # OIHW
            factor = factor[:, :, None, None]
        return _NewOperands(weight * factor, None, {}, keep_bias=True)

    @staticmethod
    def uniform_attrs(op: ConvOp, factor: float) -> dict | None:
        """A Conv has no output multiplier: a uniform scale needs constant weights."""
        return None


class _GemmFolder:
    """Where a Gemm's channels are: N is the result's last axis, K is contracted."""

    @staticmethod
    def output_axis(op: GemmOp) -> int:
        return len(shape_of(op.results[0])) - 1

    @staticmethod
    def input_axis(op: GemmOp, operand: int) -> int | None:
        if operand != 0:
            return None
        return -2 if op.attr("trans_a") else -1

    @staticmethod
    def scale_output(op, weight, bias, scale, shift) -> _NewOperands:
        n_axis = -2 if op.attr("trans_b") else -1
        beta = op.attr("beta")
        if bias is not None:
            bias = bias * beta  # the new bias is taken with beta = 1
        new_bias = _affine_bias(bias, scale, shift)
        return _NewOperands(_scale_along(weight, scale, n_axis), new_bias, {"beta": 1.0})

    @staticmethod
    def scale_input(op, weight, scale) -> _NewOperands:
        k_axis = -1 if op.attr("trans_b") else -2
        return _NewOperands(_scale_along(weight, scale, k_axis), None, {}, keep_bias=True)

    @staticmethod
    def uniform_attrs(op: GemmOp, factor: float) -> dict | None:
        """s * (alpha * A @ B + beta * bias): the scale goes into alpha (and beta)."""
        attrs = {"alpha": op.attr("alpha") * factor}
        if len(op.operands) > 2:
            attrs["beta"] = op.attr("beta") * factor
        return attrs


def _scale_along(array: np.ndarray, scale: np.ndarray, axis: int) -> np.ndarray:
    along = [1] * array.ndim
    along[axis] = -1
    return array * scale.reshape(along)


def _affine_bias(bias, scale, shift) -> np.ndarray | None:
    """bias * scale + shift, with a missing bias or shift being zero (None if both are)."""
    if bias is None and shift is None:
        return None
    out = scale * bias if bias is not None else np.zeros_like(scale)
    return out + shift if shift is not None else out


FOLDERS: dict[type[Tx8beOp], type[_ConvFolder] | type[_GemmFolder]] = {
    ConvOp: _ConvFolder,
    GemmOp: _GemmFolder,
}
"""The ops that absorb scales into their weights, and how."""


def output_channel_axis(op: Operation) -> int | None:
    """The result axis along which `op` can absorb a per-channel scale, else None."""
    folder = FOLDERS.get(type(op))
    return folder.output_axis(op) if folder is not None else None


def _constant_weights(op: Tx8beOp) -> tuple[np.ndarray, np.ndarray | None] | None:
    """(weight, bias) arrays when both are constants (a missing bias is None), else None."""
    weight = constant_array(op.operands[1])
    bias_value = op.operands[2] if len(op.operands) > 2 else None
    bias = constant_array(bias_value)
    if weight is None or (bias_value is not None and bias is None):
        return None
    return weight, bias


def _rebuild(op: Tx8beOp, data: SSAValue, new: _NewOperands, rewriter: PatternRewriter):
    """A copy of `op` reading `data`, with new constant weight and bias, placed before op."""
    dtype = op.result_dtype()
    operands = [data]
    for array in (new.weight, new.bias):
        if array is not None:
            const = ConstantOp.from_array(np.asarray(array).astype(dtype))
            rewriter.insert(const, InsertPoint.before(op))
            operands.append(const.results[0])
    if new.keep_bias and len(op.operands) > 2:
        operands.append(op.operands[2])
    return _copy(op, operands, new.attrs, rewriter)


def _copy(op: Tx8beOp, operands: list[SSAValue], attrs: dict, rewriter: PatternRewriter):
    """A copy of `op` on `operands`, with the attributes `attrs` changed, before `op`."""
    new_op = rebuilt(op, operands, **attrs)
    rewriter.insert(new_op, InsertPoint.before(op))
    return new_op


def _finite(array: np.ndarray) -> bool:
    return bool(np.all(np.isfinite(array)))


def fold_output_affine(
    op: Operation,
    scale: np.ndarray,
    shift: np.ndarray | None,
    rewriter: PatternRewriter,
) -> Operation | None:
    """Fold `op(...) * scale + shift` (per output channel) into `op`'s weight and bias.

    Returns the new op (inserted before `op`; the caller replaces uses and erases `op`),
    or None when `op` cannot absorb it (not a Conv/Gemm, weights not constant, non-finite
    factors). The caller checks that `op`'s result has no other user.
    """
    folder = FOLDERS.get(type(op))
    weights = _constant_weights(op) if folder is not None else None
    if weights is None or not _finite(scale) or (shift is not None and not _finite(shift)):
        return None
    weight, bias = (w.astype(np.float64) if w is not None else None for w in weights)
    new = folder.scale_output(op, weight, bias, scale.astype(np.float64),
                              None if shift is None else shift.astype(np.float64))
    return _rebuild(op, op.operands[0], new, rewriter)


def fold_uniform_scale(
    op: Operation, scale: np.ndarray, rewriter: PatternRewriter
) -> Operation | None:
    """Fold `op(...) * s` for one scalar s into `op`'s attributes (Gemm: alpha, beta).

    For weights that are not constants (attention's Q @ K^T / sqrt(d)). Returns the new
    op, inserted before `op`, or None when `op` has no such attribute or s varies.
    """
    folder = FOLDERS.get(type(op))
    if folder is None or not _finite(scale) or np.any(scale != scale.flat[0]):
        return None
    attrs = folder.uniform_attrs(op, float(scale.flat[0]))
    if attrs is None:
        return None
    return _copy(op, list(op.operands), attrs, rewriter)


def _replace_and_clean(old: Operation, new: Operation, rewriter: PatternRewriter) -> None:
    """Replace `old` by `new` and erase `old`'s constants left without users."""
    operands = list(old.operands)
    rewriter.replace(old, [], list(new.results))
    erase_dead_constants(operands, rewriter.erase)


# --------------------------------------------------------------------------------------
# The two directions
# --------------------------------------------------------------------------------------


class BackwardFold(RewritePattern):
    """Mul(Conv/Gemm(...), per-output-channel constant) -> Conv/Gemm with scaled weights."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, mul: MulOp, rewriter: PatternRewriter) -> None:
        split = split_constant_operand(mul)
        if split is None:
            return
        data, scale = split
        producer = data.owner
        axis = output_channel_axis(producer)
        if axis is None or not data.has_one_use() or shape_of(mul.results[0]) != shape_of(data):
            return
        vector = channel_vector(scale, shape_of(data), axis)
        if vector is None:
            return
        new = fold_output_affine(producer, vector, None, rewriter)
        if new is None:
            new = fold_uniform_scale(producer, vector, rewriter)
        if new is None:
            return
        scale_value = [o for o in mul.operands if o is not data]
        rewriter.replace(mul, [], list(new.results))
        _replace_and_clean(producer, new, rewriter)
        erase_dead_constants(scale_value, rewriter.erase)


class ForwardFold(RewritePattern):
    """Conv/Gemm(Mul(x, per-input-channel constant), W) -> Conv/Gemm(x, scaled W)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, mul: MulOp, rewriter: PatternRewriter) -> None:
        split = split_constant_operand(mul)
        if split is None:
            return
        data, scale = split
        scaled = mul.results[0]
        if shape_of(scaled) != shape_of(data) or not scaled.uses or not _finite(scale):
            return
        plans = [self._plan(use.operation, use.index, scale) for use in scaled.uses]
        if any(plan is None for plan in plans):
            return
        for user, new_operands in plans:
            new = _rebuild(user, data, new_operands, rewriter)
            _replace_and_clean(user, new, rewriter)
        scale_value = [o for o in mul.operands if o is not data]
        rewriter.erase(mul)
        erase_dead_constants(scale_value, rewriter.erase)

    @staticmethod
    def _plan(user: Operation, index: int, scale: np.ndarray):
        """(user, its new weight/bias) when `user` absorbs the scale on operand `index`."""
        folder = FOLDERS.get(type(user))
        if folder is None:
            return None
        axis = folder.input_axis(user, index)
        weights = _constant_weights(user)
        if axis is None or weights is None:
            return None
        shape = shape_of(user.operands[index])
        vector = channel_vector(scale, shape, axis % len(shape))
        if vector is None:
            return None
        new = folder.scale_input(user, weights[0].astype(np.float64), vector.astype(np.float64))
        return user, new


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
            FoldConstantPass().apply(ctx, op)
