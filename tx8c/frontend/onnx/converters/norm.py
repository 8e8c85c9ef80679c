"""Converters of ONNX normalisations beyond BatchNormalization and LayerNormalization:
GroupNormalization, InstanceNormalization, RMSNormalization, MeanVarianceNormalization,
LpNormalization, LRN.

GroupNormalization and InstanceNormalization are LayerNorms over a reshaped view (the
groups' or channels' elements as the last dim) followed by a per-channel affine;
RMSNormalization is tx8be.RMSNorm; LRN sums squares over a window of channels with an
average Pool (count_include_pad) on a [N, 1, C, H*W] view.
"""

from __future__ import annotations

import numpy as np

from tx8c.dialect.ops import elementwise as ew
from tx8c.dialect.ops.norm import LayerNormOp, RMSNormOp
from tx8c.dialect.ops.reduce_pool import PoolOp
from tx8c.frontend.onnx.compose import (
    add,
    broadcast,
    div,
    in_float32,
    like,
    mul,
    reduce,
    reshape,
    sub,
    where,
)
from tx8c.frontend.onnx.context import NodeContext, Value
from tx8c.frontend.onnx.registry import converter


def _check_stash_type(ctx: NodeContext) -> None:
    if ctx.attr("stash_type", 1) != 1:
        raise ctx.error("stash_type other than 1 (float32) is not supported")


def _per_channel(ctx: NodeContext, v: Value, rank: int) -> Value:
    """A [C] parameter shaped to broadcast along dim 1 of a rank-`rank` tensor."""
    return reshape(ctx, v, [v.shape[0]] + [1] * (rank - 2))


def _normalise_last_dim(ctx: NodeContext, x: Value, rows: list[int], epsilon: float) -> Value:
    """(x - mean) / sqrt(var + epsilon) over each row of x viewed as `rows` + [-1]."""
    view = reshape(ctx, x, [*rows, int(np.prod(x.shape)) // int(np.prod(rows))])
    normalised = ctx.emit(LayerNormOp, [view], axis=-1, epsilon=epsilon)
    return reshape(ctx, normalised, x.shape)


@converter("GroupNormalization")
def convert_group_norm(ctx: NodeContext) -> Value:
    x, scale, bias = ctx.input(0), ctx.input(1), ctx.input(2)
    _check_stash_type(ctx)
    groups, channels = ctx.attr("num_groups"), x.shape[1]
    if groups < 1 or channels % groups:
        raise ctx.error(f"num_groups {groups} must divide the {channels} channels")
    y = _normalise_last_dim(ctx, x, [x.shape[0], groups], ctx.attr("epsilon", 1e-5))
    if scale.shape == (groups,) and groups != channels:  # opset 18: one value per group
        scale, bias = (_per_group_to_channels(ctx, v, channels) for v in (scale, bias))
    if scale.shape != (channels,) or bias.shape != (channels,):
        raise ctx.error(f"scale and bias must have shape [{channels}] (or [{groups}] before "
                        f"opset 21), got {list(scale.shape)} and {list(bias.shape)}")
    return add(ctx, mul(ctx, y, _per_channel(ctx, scale, x.rank)),
               _per_channel(ctx, bias, x.rank))


def _per_group_to_channels(ctx: NodeContext, v: Value, channels: int) -> Value:
    groups = v.shape[0]
    spread = broadcast(ctx, reshape(ctx, v, [groups, 1]), [groups, channels // groups])
    return reshape(ctx, spread, [channels])


@converter("InstanceNormalization")
def convert_instance_norm(ctx: NodeContext) -> Value:
    x, scale, bias = ctx.input(0), ctx.input(1), ctx.input(2)
    if x.rank < 3:
        raise ctx.error(f"the input must have rank 3 or more, got {list(x.shape)}")
    y = _normalise_last_dim(ctx, x, list(x.shape[:2]), ctx.attr("epsilon", 1e-5))
    return add(ctx, mul(ctx, y, _per_channel(ctx, scale, x.rank)),
               _per_channel(ctx, bias, x.rank))


@converter("RMSNormalization")
def convert_rms_norm(ctx: NodeContext) -> Value:
    x = ctx.input(0)
    _check_stash_type(ctx)
    axis = ctx.axis(ctx.attr("axis", -1), x.rank)
    operands = [x, ctx.input(1)] if ctx.has_input(1) else [x]
    return ctx.emit(RMSNormOp, operands, axis=axis, epsilon=ctx.attr("epsilon", 1e-5))


@converter("MeanVarianceNormalization")
def convert_mean_variance_norm(ctx: NodeContext) -> Value:
    """(x - mean) / (sqrt(var) + 1e-9) over `axes` (ONNX's function body)."""
    x = ctx.input(0)
    axes = [ctx.axis(a, x.rank) for a in ctx.attr("axes", [0, 2, 3])]

    def build(v: Value) -> Value:
        centred = sub(ctx, v, reduce(ctx, v, "mean", axes))
        std = ctx.emit(ew.SqrtOp, [reduce(ctx, mul(ctx, centred, centred), "mean", axes)])
        return div(ctx, centred, add(ctx, std, like(ctx, 1e-9, v)))

    return in_float32(ctx, x, build)


@converter("LpNormalization")
def convert_lp_norm(ctx: NodeContext) -> Value:
    x = ctx.input(0)
    axis, p = ctx.axis(ctx.attr("axis", -1), x.rank), ctx.attr("p", 2)
    if p not in (1, 2):
        raise ctx.error(f"p must be 1 or 2, got {p}")

    def build(v: Value) -> Value:
        if p == 1:
            norm = reduce(ctx, ctx.emit(ew.AbsOp, [v]), "sum", [axis])
        else:
            norm = ctx.emit(ew.SqrtOp, [reduce(ctx, mul(ctx, v, v), "sum", [axis])])
        # an all-zero slice stays zero (ONNX's reference), not 0 / 0
        zero = ctx.emit(ew.EqualOp, [norm, like(ctx, 0, v)])
        return div(ctx, v, where(ctx, zero, like(ctx, 1, v), norm))

    return in_float32(ctx, x, build)


@converter("LRN")
def convert_lrn(ctx: NodeContext) -> Value:
    """x / (bias + alpha / size * sum of x^2 over `size` neighbouring channels)^beta."""
    x = ctx.input(0)
    size = ctx.attr("size")
    alpha, beta, bias = ctx.attr("alpha", 1e-4), ctx.attr("beta", 0.75), ctx.attr("bias", 1.0)
    if x.rank < 3 or size < 1:
        raise ctx.error(f"needs an input of rank 3 or more and size >= 1, got "
                        f"{list(x.shape)} and size {size}")

    def build(v: Value) -> Value:
        n, c = v.shape[:2]
        squares = reshape(ctx, mul(ctx, v, v), [n, 1, c, int(np.prod(v.shape[2:]))])
        before, after = (size - 1) // 2, size - 1 - (size - 1) // 2
        mean = ctx.emit(PoolOp, [squares], mode="avg", kernel=[size, 1], strides=[1, 1],
                        pads=[before, 0, after, 0], count_include_pad=True)
        scaled = add(ctx, mul(ctx, reshape(ctx, mean, v.shape), like(ctx, alpha, v)),
                     like(ctx, bias, v))
        return div(ctx, v, ctx.emit(ew.PowOp, [scaled, like(ctx, beta, v)]))

    return in_float32(ctx, x, build)

