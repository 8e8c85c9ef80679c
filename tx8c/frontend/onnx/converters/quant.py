"""Converters of quantisation ops: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear,
MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv.

QDQ and integer models import and run numerically; the int8 backend path comes later.
Quantised values are carried as integers: int8 as i8, and uint8, int16 and uint16 as i32
(tx8be has no unsigned or 16-bit run-time type; the values are exact in i32). A graph
input or output of such a type is refused with a clear error (`importer`).

- DequantizeLinear: (x - zero_point) * scale, in float32 (exact: the integers fit);
- QuantizeLinear: clip(round_half_even(x / scale) + zero_point) to the type's range;
- MatMulInteger / ConvInteger: the zero points subtracted in i32, then tx8be's exact
  integer ops; QLinearMatMul / QLinearConv: those, then the int32 accumulator
  requantised with a_scale * b_scale / y_scale (float32) and y's zero point;
- DynamicQuantizeLinear: ONNX's uint8 scale and zero point from the data's min and max.
Scales and zero points may be per tensor, per axis, or (opset 21) per block along an
axis. Everything on constants folds at import: QDQ weights become float constants.
"""

from __future__ import annotations

import numpy as np
import onnx

from tx8c.dialect.ops import elementwise as ew
from tx8c.dialect.ops.quant import ConvIntegerOp, MatMulIntegerOp
from tx8c.frontend.onnx.compose import (
    add,
    broadcast,
    cast,
    div,
    like,
    matmul_ranked,
    mul,
    reduce,
    reshape,
    slice_axis,
    sub,
    where,
)
from tx8c.frontend.onnx.context import NodeContext, Value
from tx8c.frontend.onnx.converters.nn import as_2d, pads_as_2d, spatial_rank, window_pads
from tx8c.frontend.onnx.registry import converter

RANGES = {
    np.dtype(np.uint8): (0, 255),
    np.dtype(np.int8): (-128, 127),
    np.dtype(np.uint16): (0, 65535),
    np.dtype(np.int16): (-32768, 32767),
}
"""The quantised types tx8c carries, and their ranges."""
ONNX_TYPES = {
    onnx.TensorProto.UINT8: np.dtype(np.uint8), onnx.TensorProto.INT8: np.dtype(np.int8),
    onnx.TensorProto.UINT16: np.dtype(np.uint16), onnx.TensorProto.INT16: np.dtype(np.int16),
}


def carrier(dtype: np.dtype) -> np.dtype:
    """The run-time type of a quantised type: int8 itself, the others int32."""
    return np.dtype(np.int8) if np.dtype(dtype) == np.int8 else np.dtype(np.int32)


def as_carried(values: np.ndarray) -> np.ndarray:
    """Compile-time quantised values in their carrier type."""
    return values.astype(carrier(values.dtype)) if values.dtype in RANGES else values


def _integer(ctx: NodeContext, v: Value, what: str) -> Value:
    """An integer operand as i32 (compile-time uint8 etc. converted exactly)."""
    if not (np.issubdtype(v.dtype, np.integer)):
        raise ctx.error(f"{what} must be an integer tensor, got {v.dtype}")
    if v.is_const:
        return ctx.constant(v.const.astype(np.int32))
    return cast(ctx, v, np.int32)


def along_axis(ctx: NodeContext, param: Value, shape: tuple[int, ...], axis: int,
               block_size: int, what: str) -> Value:
    """A scale or zero point shaped to broadcast against a tensor of `shape`: a scalar as
    is, a 1-D one along `axis`, a blocked one repeated `block_size` times along `axis`."""
    if param.rank == 0 or (param.rank == 1 and param.shape[0] == 1 and not block_size):
        return reshape(ctx, param, [])
    rank = len(shape)
    axis = ctx.axis(axis, rank)
    if not block_size:
        if param.rank != 1 or param.shape[0] != shape[axis]:
            raise ctx.error(f"{what} has shape {list(param.shape)}; per-axis quantisation "
                            f"along axis {axis} needs [{shape[axis]}]")
        return reshape(ctx, param, [shape[axis] if d == axis else 1 for d in range(rank)])
    blocks = -(-shape[axis] // block_size)
    expected = [blocks if d == axis else shape[d] for d in range(rank)]
    if list(param.shape) != expected:
        raise ctx.error(f"{what} has shape {list(param.shape)}; block_size {block_size} "
                        f"along axis {axis} needs {expected}")
    spread = reshape(ctx, param, [*param.shape[:axis + 1], 1, *param.shape[axis + 1:]])
    grown = [*param.shape[:axis + 1], block_size, *param.shape[axis + 1:]]
    spread = broadcast(ctx, spread, grown)
    merged = reshape(ctx, spread, [*param.shape[:axis], blocks * block_size,
                                   *param.shape[axis + 1:]])
    return slice_axis(ctx, merged, axis, 0, shape[axis])


def _zero_point_type(ctx: NodeContext, zp_index: int) -> np.dtype:
    """The quantised type: the zero point's, else output_dtype, else uint8."""
    if ctx.has_input(zp_index):
        dtype = ctx.const(zp_index).dtype  # known at compile time: it fixes the type
    else:
        dtype = ONNX_TYPES.get(ctx.attr("output_dtype", onnx.TensorProto.UINT8))
    if dtype not in RANGES:
        raise ctx.error(f"quantised type {dtype} is not supported (tx8c quantises to int8, "
                        "uint8, int16 and uint16)")
    return np.dtype(dtype)


def quantize(ctx: NodeContext, x: Value, scale: Value, zero_point: Value | None,
             dtype: np.dtype) -> Value:
    """clip(round(x / scale) + zero_point) to the range of `dtype`, in its carrier."""
    lo, hi = RANGES[dtype]
    q = ctx.emit(ew.RoundOp, [div(ctx, x, scale)])
    if zero_point is not None:
        q = add(ctx, q, cast(ctx, zero_point, q.dtype))
    q = ctx.emit(ew.ClipOp, [q], min=float(lo), max=float(hi))
    return cast(ctx, q, carrier(dtype))


@converter("QuantizeLinear")
def convert_quantize_linear(ctx: NodeContext) -> Value:
    x, scale = ctx.input(0), ctx.input(1)
    dtype = _zero_point_type(ctx, 2)
    axis, block = ctx.attr("axis", 1), ctx.attr("block_size", 0)
    precision = ctx.attr("precision")
    if precision is not None and precision != onnx.TensorProto.FLOAT:
        raise ctx.error("precision other than float is not supported")
    work = np.float32 if precision is not None or x.dtype != np.float32 else x.dtype
    xf = cast(ctx, x, work)
    s = cast(ctx, along_axis(ctx, scale, x.shape, axis, block, "y_scale"), work)
    zp = None
    if ctx.has_input(2):
        zp = along_axis(ctx, ctx.constant(as_carried(ctx.const(2))), x.shape, axis, block,
                        "y_zero_point")
    return quantize(ctx, xf, s, zp, dtype)


@converter("DequantizeLinear")
def convert_dequantize_linear(ctx: NodeContext) -> Value:
    x, scale = ctx.input(0), ctx.input(1)
    if not np.issubdtype(x.dtype, np.integer):
        raise ctx.error(f"x of type {x.dtype} is not supported (tx8c dequantises integers)")
    axis, block = ctx.attr("axis", 1), ctx.attr("block_size", 0)
    out_dtype = scale.dtype
    if ctx.attr("output_dtype"):
        from tx8c.frontend.onnx.types import numpy_dtype_of

        out_dtype = numpy_dtype_of(ctx.attr("output_dtype"))
    centred = cast(ctx, _integer(ctx, x, "x"), np.float32)
    if ctx.has_input(2):
        zp = along_axis(ctx, _integer(ctx, ctx.input(2), "x_zero_point"), x.shape, axis,
                        block, "x_zero_point")
        centred = sub(ctx, centred, cast(ctx, zp, np.float32))
    s = cast(ctx, along_axis(ctx, scale, x.shape, axis, block, "x_scale"), np.float32)
    return cast(ctx, mul(ctx, centred, s), out_dtype)


@converter("DynamicQuantizeLinear")
def convert_dynamic_quantize_linear(ctx: NodeContext) -> list[Value]:
    """uint8 with scale (max(0, max x) - min(0, min x)) / 255 (1/255 when that is 0) and
    zero point round(clip(-min / scale, 0, 255)), as ONNX's reference computes them."""
    x = cast(ctx, ctx.input(0), np.float32)
    zero = like(ctx, 0, x)
    high = ctx.emit(ew.MaxOp, [reduce(ctx, x, "max", [], keepdims=False), zero])
    low = ctx.emit(ew.MinOp, [reduce(ctx, x, "min", [], keepdims=False), zero])
    spread = sub(ctx, high, low)
    spread = where(ctx, ctx.emit(ew.EqualOp, [high, low]), like(ctx, 1, x), spread)
    scale = div(ctx, spread, like(ctx, 255, x))
    zp = ctx.emit(ew.ClipOp, [sub(ctx, zero, div(ctx, low, scale))], min=0.0, max=255.0)
    zp = ctx.emit(ew.RoundOp, [zp])
    y = quantize(ctx, x, scale, zp, np.dtype(np.uint8))
    return [y, cast(ctx, scale, ctx.input(0).dtype), cast(ctx, zp, np.int32)]


# --------------------------------------------------------------------------------------
# Integer products
# --------------------------------------------------------------------------------------


def _centred(ctx: NodeContext, v: Value, zp_index: int | None, per: int | None,
             what: str) -> Value:
    """v - zero_point in i32; a 1-D zero point applies along dim `per` (from the end)."""
    centred = _integer(ctx, v, what)
    if zp_index is None or not ctx.has_input(zp_index):
        return centred
    zp = _integer(ctx, ctx.input(zp_index), f"the zero point of {what}")
    if zp.rank == 1 and zp.shape[0] != 1:
        if per is None:
            raise ctx.error(f"the zero point of {what} must be a scalar")
        zp = reshape(ctx, zp, [zp.shape[0]] + [1] * (per - 1))
    else:
        zp = reshape(ctx, zp, [])
    return sub(ctx, centred, zp)


def matmul_integer(ctx: NodeContext, a: Value, b: Value) -> Value:
    """Integer a @ b (MatMul's rank-1 rules) with an exact i32 result."""
    return matmul_ranked(ctx, MatMulIntegerOp, a, b)


@converter("MatMulInteger")
def convert_matmul_integer(ctx: NodeContext) -> Value:
    a = _centred(ctx, ctx.input(0), 2, 2, "A")  # a per-row zero point: [M] along dim -2
    b = _centred(ctx, ctx.input(1), 3, 1, "B")  # a per-column one: [N] along dim -1
    return matmul_integer(ctx, a, b)


def conv_integer(ctx: NodeContext, x: Value, w: Value) -> Value:
    """The centred integer convolution (Conv's attributes, 1-D as 2-D), i32."""
    rank = spatial_rank(ctx, x)
    kernel = list(ctx.attr("kernel_shape", w.shape[2:]))
    strides = list(ctx.attr("strides", [1] * rank))
    dilations = list(ctx.attr("dilations", [1] * rank))
    pads = window_pads(ctx, x.shape[2:], kernel, strides, dilations)
    if rank == 1:
        x = reshape(ctx, x, [*x.shape[:2], 1, x.shape[2]])
        w = reshape(ctx, w, [*w.shape[:2], 1, w.shape[2]])
        strides, dilations, pads = as_2d(strides, 1), as_2d(dilations, 1), pads_as_2d(pads)
    y = ctx.emit(ConvIntegerOp, [x, w], strides=strides, pads=pads, dilations=dilations,
                 groups=ctx.attr("group", 1))
    return reshape(ctx, y, [*y.shape[:2], y.shape[3]]) if rank == 1 else y


@converter("ConvInteger")
def convert_conv_integer(ctx: NodeContext) -> Value:
    """The input's zero point is subtracted first, so the zero padding pads with it."""
    x = _centred(ctx, ctx.input(0), 2, None, "x")
    w = _centred(ctx, ctx.input(1), 3, ctx.input(1).rank, "w")
    return conv_integer(ctx, x, w)


def requantize(ctx: NodeContext, acc: Value, multiplier: Value, zp_index: int,
               dtype: np.dtype) -> Value:
    """An int32 accumulator scaled to the output's quantisation."""
    scaled = mul(ctx, cast(ctx, acc, np.float32), cast(ctx, multiplier, np.float32))
    zp = None
    if ctx.has_input(zp_index):
        zp = reshape(ctx, ctx.constant(as_carried(ctx.const(zp_index))), [])
    return quantize(ctx, scaled, like(ctx, 1, scaled), zp, dtype)


@converter("QLinearMatMul")
def convert_qlinear_matmul(ctx: NodeContext) -> Value:
    a = _centred(ctx, ctx.input(0), 2, 2, "a")
    b = _centred(ctx, ctx.input(3), 5, 1, "b")
    acc = matmul_integer(ctx, a, b)
    b_scale = ctx.input(4)
    if b_scale.rank == 1 and b_scale.shape[0] != 1:  # per output column
        b_scale = reshape(ctx, b_scale, [b_scale.shape[0]])
    else:
        b_scale = reshape(ctx, b_scale, [])
    multiplier = div(ctx, mul(ctx, reshape(ctx, ctx.input(1), []), b_scale),
                     reshape(ctx, ctx.input(6), []))
    return requantize(ctx, acc, multiplier, 7, _zero_point_type(ctx, 7))


@converter("QLinearConv")
def convert_qlinear_conv(ctx: NodeContext) -> Value:
    x = _centred(ctx, ctx.input(0), 2, None, "x")
    w = _centred(ctx, ctx.input(3), 5, ctx.input(3).rank, "w")
    acc = conv_integer(ctx, x, w)
    if ctx.has_input(8):
        bias = _integer(ctx, ctx.input(8), "B")
        acc = add(ctx, acc, reshape(ctx, bias, [bias.shape[0]] + [1] * (acc.rank - 2)))
    w_scale = ctx.input(4)
    if w_scale.rank == 1 and w_scale.shape[0] != 1:  # per output channel
        w_scale = reshape(ctx, w_scale, [w_scale.shape[0]] + [1] * (acc.rank - 2))
    else:
        w_scale = reshape(ctx, w_scale, [])
    multiplier = div(ctx, mul(ctx, reshape(ctx, ctx.input(1), []), w_scale),
                     reshape(ctx, ctx.input(6), []))
    return requantize(ctx, acc, multiplier, 7, _zero_point_type(ctx, 7))
