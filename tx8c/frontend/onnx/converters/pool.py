"""Converters of the Lp pools and of Upsample.

GlobalLpPool is a Reduce sum of |x|^p; LpPool sums |x|^p over each window with a
depthwise Conv of ones (zero padding adds nothing to a sum; ceil mode is extra padding at
the end), then takes the p-th root. Upsample (opsets 7-9) is a Resize with ONNX's
Upsample coordinates (asymmetric, nearest rounding down).
"""

from __future__ import annotations

import numpy as np

from tx8c.dialect.ops import elementwise as ew
from tx8c.dialect.ops.conv_gemm import ConvOp
from tx8c.dialect.ops.reduce_pool import pool_output_size
from tx8c.frontend.onnx.compose import in_float32, like, mul, reduce, reshape
from tx8c.frontend.onnx.context import NodeContext, Value
from tx8c.frontend.onnx.converters.nn import (
    as_2d,
    pads_as_2d,
    scale_asymmetric,
    spatial_rank,
    window_pads,
)
from tx8c.frontend.onnx.registry import converter


def _power(ctx: NodeContext, x: Value, p: float) -> Value:
    """|x|^p (p = 1 and 2 without Pow)."""
    if p == 2:
        return mul(ctx, x, x)
    magnitude = ctx.emit(ew.AbsOp, [x])
    return magnitude if p == 1 else ctx.emit(ew.PowOp, [magnitude, like(ctx, p, x)])


def _root(ctx: NodeContext, x: Value, p: float) -> Value:
    if p == 1:
        return x
    if p == 2:
        return ctx.emit(ew.SqrtOp, [x])
    return ctx.emit(ew.PowOp, [x, like(ctx, 1.0 / p, x)])


def _p(ctx: NodeContext) -> float:
    p = ctx.attr("p", 2)
    if p <= 0:
        raise ctx.error(f"p must be positive, got {p}")
    return float(p)


@converter("GlobalLpPool")
def convert_global_lp_pool(ctx: NodeContext) -> Value:
    x, p = ctx.input(0), _p(ctx)
    if x.rank < 3:
        raise ctx.error(f"the input must have rank 3 or more, got {list(x.shape)}")
    axes = list(range(2, x.rank))
    return in_float32(ctx, x, lambda v: _root(ctx, reduce(ctx, _power(ctx, v, p), "sum", axes),
                                              p))


@converter("LpPool")
def convert_lp_pool(ctx: NodeContext) -> Value:
    x, p = ctx.input(0), _p(ctx)
    rank = spatial_rank(ctx, x)
    kernel = list(ctx.attr("kernel_shape"))
    strides = list(ctx.attr("strides", [1] * rank))
    dilations = list(ctx.attr("dilations", [1] * rank))
    pads = window_pads(ctx, x.shape[2:], kernel, strides, dilations)
    pads = _ceil_mode_pads(ctx, x.shape[2:], kernel, strides, dilations, pads)
    if rank == 1:
        kernel, strides, dilations = as_2d(kernel, 1), as_2d(strides, 1), as_2d(dilations, 1)
        pads = pads_as_2d(pads)
    else:  # ONNX [h_begin, w_begin, h_end, w_end] is Conv's [top, left, bottom, right]
        pads = list(pads)

    def build(v: Value) -> Value:
        view = reshape(ctx, v, [*v.shape[:2], 1, v.shape[2]]) if rank == 1 else v
        channels = view.shape[1]
        ones = ctx.constant(np.ones([channels, 1, *kernel], np.float32))
        sums = ctx.emit(ConvOp, [_power(ctx, view, p), ones], strides=strides, pads=pads,
                        dilations=dilations, groups=channels)
        y = _root(ctx, sums, p)
        return reshape(ctx, y, [*y.shape[:2], y.shape[3]]) if rank == 1 else y

    return in_float32(ctx, x, build)


def _ceil_mode_pads(ctx, sizes, kernel, strides, dilations, pads) -> list[int]:
    """With ceil_mode, the end pads grown so that a floor-mode window sees every output
    ceil mode makes (the extra positions are zeros, which add nothing to the sums)."""
    if not ctx.attr("ceil_mode", 0):
        return list(pads)
    n = len(sizes)
    pads = list(pads)
    for i in range(n):
        out = pool_output_size(sizes[i], kernel[i], strides[i], pads[i], pads[i + n],
                               dilations[i], True)
        needed = (out - 1) * strides[i] + dilations[i] * (kernel[i] - 1) + 1
        pads[i + n] += max(0, needed - (sizes[i] + pads[i] + pads[i + n]))
    return pads


@converter("Upsample")
def convert_upsample(ctx: NodeContext) -> Value:
    scales = ctx.attr("scales") if ctx.opset < 9 else ctx.const(1)
    if any(v < 1 for v in np.asarray(scales).reshape(-1)):
        raise ctx.error(f"Upsample scales must be at least 1, got {list(scales)}")
    return scale_asymmetric(ctx, ctx.input(0), scales)
