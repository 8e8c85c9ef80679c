"""ConvTranspose (1-D and 2-D, groups, dilations, output_padding, output_shape,
auto_pad) as a tx8be.Conv.

A transposed convolution is a convolution of the input with zeros inserted between its
elements (stride - 1 per gap), padded by (k - 1) * d - pad on each side (output_padding
more at the end; a negative amount crops), with the kernel flipped in space and its
input/output channels swapped per group. The zeros are inserted by one Pad of a
[N, C, H, 1, W, 1] view; the kernel is rearranged by Reshape/Transpose/Slice, which fold
when the weight is a constant (the usual case).
"""

from __future__ import annotations

from tx8c.dialect.ops.conv_gemm import ConvOp
from tx8c.dialect.ops.movement import SliceOp
from tx8c.frontend.onnx.compose import flip, pad, reshape, transpose
from tx8c.frontend.onnx.context import NodeContext, Value
from tx8c.frontend.onnx.converters.nn import spatial_rank
from tx8c.frontend.onnx.registry import converter


def _transposed_pads(ctx: NodeContext, sizes, kernel, strides, dilations, output_padding):
    """ONNX ConvTranspose's pads [begins..., ends...] (explicit, or from output_shape /
    auto_pad, as the operator's definition computes them)."""
    n = len(sizes)
    extents = [(k - 1) * d + 1 for k, d in zip(kernel, dilations, strict=True)]
    full = [s * (i - 1) + op + e for i, s, op, e in
            zip(sizes, strides, output_padding, extents, strict=True)]
    auto_pad = ctx.attr("auto_pad", "NOTSET")
    output_shape = ctx.attr("output_shape")
    if output_shape is None and auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        output_shape = [i * s for i, s in zip(sizes, strides, strict=True)]
    if output_shape is None:
        if auto_pad not in ("NOTSET", "VALID", ""):
            raise ctx.error(f"auto_pad '{auto_pad}' is not an ONNX auto_pad value")
        return list(ctx.attr("pads", [0] * (2 * n))) if auto_pad != "VALID" else [0] * 2 * n
    output_shape = list(output_shape)[-n:]
    begins, ends = [], []
    for total_full, want in zip(full, output_shape, strict=True):
        # a negative total (output_shape larger than the full result) extends the end
        total = total_full - want
        small, large = total // 2, total - total // 2
        begins.append(small if auto_pad == "SAME_UPPER" else large)
        ends.append(large if auto_pad == "SAME_UPPER" else small)
    return begins + ends


def _insert_zeros(ctx: NodeContext, x: Value, strides: list[int]) -> Value:
    """x [N, C, H, W] with stride - 1 zeros after every element along H and W (the last
    row's and column's are cropped by the caller's padding)."""
    if strides == [1, 1]:
        return x
    n, c, h, w = x.shape
    view = reshape(ctx, x, [n, c, h, 1, w, 1])
    view = pad(ctx, view, [0] * 6 + [0, 0, 0, strides[0] - 1, 0, strides[1] - 1])
    return reshape(ctx, view, [n, c, h * strides[0], w * strides[1]])


def _pad_or_crop(ctx: NodeContext, x: Value, begins: list[int], ends: list[int]) -> Value:
    """Pad H and W by the positive amounts and crop by the negative ones."""
    starts = [max(-b, 0) for b in begins]
    stops = [x.shape[2 + i] - max(-e, 0) for i, e in enumerate(ends)]
    if any(starts) or any(s < x.shape[2 + i] for i, s in enumerate(stops)):
        x = ctx.emit(SliceOp, [x], starts=starts, ends=stops, axes=[2, 3], steps=[1, 1])
    return pad(ctx, x, [0, 0, max(begins[0], 0), max(begins[1], 0),
                        0, 0, max(ends[0], 0), max(ends[1], 0)])


def _conv_kernel(ctx: NodeContext, w: Value, groups: int) -> Value:
    """[C_in, C_out/g, kh, kw] -> [C_out, C_in/g, kh, kw], flipped in space."""
    c_in, c_out_g, kh, kw = w.shape
    if c_in % groups:
        raise ctx.error(f"the weight's {c_in} input channels are not divisible by group "
                        f"{groups}")
    grouped = reshape(ctx, w, [groups, c_in // groups, c_out_g, kh, kw])
    swapped = transpose(ctx, grouped, [0, 2, 1, 3, 4])
    kernel = reshape(ctx, swapped, [groups * c_out_g, c_in // groups, kh, kw])
    return flip(ctx, flip(ctx, kernel, 2), 3)


@converter("ConvTranspose")
def convert_conv_transpose(ctx: NodeContext) -> Value:
    x, w = ctx.input(0), ctx.input(1)
    rank = spatial_rank(ctx, x)
    if w.rank != x.rank:
        raise ctx.error(f"the weight must have rank {x.rank}, got {list(w.shape)}")
    if rank == 1:  # a 1-D transposed convolution is a 2-D one with H = 1
        x = reshape(ctx, x, [*x.shape[:2], 1, x.shape[2]])
        w = reshape(ctx, w, [*w.shape[:2], 1, w.shape[2]])
    groups = ctx.attr("group", 1)
    kernel = list(ctx.attr("kernel_shape", w.shape[2:]))[-rank:]
    strides = list(ctx.attr("strides", [1] * rank))
    dilations = list(ctx.attr("dilations", [1] * rank))
    output_padding = list(ctx.attr("output_padding", [0] * rank))
    if any(op >= max(s, d) for op, s, d in zip(output_padding, strides, dilations, strict=True)):
        raise ctx.error(f"output_padding {output_padding} must be smaller than the strides "
                        f"{strides} or the dilations {dilations}")
    pads = _transposed_pads(ctx, x.shape[2 + 2 - rank:], kernel, strides, dilations,
                            output_padding)
    if rank == 1:
        kernel, strides, dilations = [1, *kernel], [1, *strides], [1, *dilations]
        output_padding, pads = [0, *output_padding], [0, pads[0], 0, pads[1]]
    spread = _insert_zeros(ctx, x, strides)
    reach = [(k - 1) * d for k, d in zip(kernel, dilations, strict=True)]
    begins = [reach[i] - pads[i] for i in range(2)]
    ends = [reach[i] - pads[i + 2] + output_padding[i] - (strides[i] - 1) for i in range(2)]
    padded = _pad_or_crop(ctx, spread, begins, ends)
    operands = [padded, _conv_kernel(ctx, w, groups)]
    if ctx.has_input(2):
        operands.append(ctx.input(2))
    y = ctx.emit(ConvOp, operands, dilations=dilations, groups=groups)
    return reshape(ctx, y, [*y.shape[:2], y.shape[3]]) if rank == 1 else y
