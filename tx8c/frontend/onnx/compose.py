"""Small builders the converters compose ONNX ops from.

Most ONNX ops tx8c supports have no tx8be op of their own: their converter decomposes
them into tx8be ops (ArgMax into Reduce, Equal, Where; GroupNormalization into Reshape
and LayerNorm; LSTM into Gemms and activations per time step; ...). These builders are
the vocabulary of those decompositions, written once. Each emits through the node's
context, so an op on compile-time values folds on the spot and a failure names the
ONNX node.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import ml_dtypes
import numpy as np

from tx8c.dialect.ops import elementwise as ew
from tx8c.dialect.ops.conv_gemm import GemmOp
from tx8c.dialect.ops.movement import (
    BroadCastOp,
    ConcatenateOp,
    PadOp,
    ReshapeOp,
    SliceOp,
    TransposeOp,
)
from tx8c.dialect.ops.norm import SoftmaxOp
from tx8c.dialect.ops.reduce_pool import ReduceOp
from tx8c.frontend.onnx.context import NodeContext, Value
from tx8c.frontend.onnx.registry import converter

LOW_PRECISION = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))


def dtype_name(dtype: np.dtype) -> str:
    """The IR name of a numpy dtype (f32, i64, ...), as tx8be.Cast's `to` takes it."""
    from tx8c.dialect.types import from_numpy_dtype, short_name

    return short_name(from_numpy_dtype(dtype))


def like(ctx: NodeContext, value, ref: Value) -> Value:
    """A scalar constant with the dtype of `ref`."""
    return ctx.constant(np.asarray(value, dtype=ref.dtype))


def cast(ctx: NodeContext, x: Value, dtype) -> Value:
    dtype = np.dtype(dtype)
    if x.dtype == dtype:
        return x
    return ctx.emit(ew.CastOp, [x], to=dtype_name(dtype))


def reshape(ctx: NodeContext, x: Value, shape: Sequence[int]) -> Value:
    shape = [int(d) for d in shape]
    if list(x.shape) == shape:
        return x
    return ctx.emit(ReshapeOp, [x], shape=shape)


def transpose(ctx: NodeContext, x: Value, perm: Sequence[int]) -> Value:
    perm = [int(p) for p in perm]
    if perm == list(range(x.rank)):
        return x
    return ctx.emit(TransposeOp, [x], perm=perm)


def broadcast(ctx: NodeContext, x: Value, shape: Sequence[int]) -> Value:
    if list(x.shape) == list(shape):
        return x
    return ctx.emit(BroadCastOp, [x], shape=[int(d) for d in shape])


def slice_axis(ctx: NodeContext, x: Value, axis: int, start: int, end: int,
               step: int = 1) -> Value:
    """x[..., start:end:step, ...] along `axis` (ONNX Slice bounds)."""
    if step == 1 and start == 0 and end >= x.shape[axis]:
        return x
    return ctx.emit(SliceOp, [x], starts=[start], ends=[end], axes=[axis], steps=[step])


def take(ctx: NodeContext, x: Value, axis: int, index: int) -> Value:
    """x[..., index, ...] along `axis`, keeping the axis (size 1)."""
    return slice_axis(ctx, x, axis, index, index + 1)


def flip(ctx: NodeContext, x: Value, axis: int) -> Value:
    """x reversed along `axis`."""
    if x.shape[axis] <= 1:
        return x
    return ctx.emit(SliceOp, [x], starts=[-1], ends=[-(2**63)], axes=[axis], steps=[-1])


def concat(ctx: NodeContext, values: Sequence[Value], axis: int) -> Value:
    values = list(values)
    if len(values) == 1:
        return values[0]
    return ctx.emit(ConcatenateOp, values, axis=axis)


def pad(ctx: NodeContext, x: Value, pads: Sequence[int], value: float = 0.0) -> Value:
    """Constant padding; `pads` is ONNX's [begins..., ends...], every entry >= 0."""
    if not any(pads):
        return x
    return ctx.emit(PadOp, [x], pads=[int(p) for p in pads], mode="constant", value=value)


def matmul(ctx: NodeContext, a: Value, b: Value, trans_a: bool = False,
           trans_b: bool = False, bias: Value | None = None) -> Value:
    """Batched a @ b (both of rank >= 2) on the NE engine."""
    operands = [a, b] + ([bias] if bias is not None else [])
    return ctx.emit(GemmOp, operands, trans_a=trans_a, trans_b=trans_b)


def matmul_ranked(ctx: NodeContext, op_cls, a: Value, b: Value) -> Value:
    """ONNX MatMul's rank rules around a batched matrix-product op (Gemm,
    MatMulInteger): a rank-1 a is a row [1, K], a rank-1 b a column [K, 1], and the dim
    each adds is dropped from the result."""
    a2 = reshape(ctx, a, [1, a.shape[0]]) if a.rank == 1 else a
    b2 = reshape(ctx, b, [b.shape[0], 1]) if b.rank == 1 else b
    y = ctx.emit(op_cls, [a2, b2])
    shape = list(y.shape)
    if a.rank == 1:
        del shape[-2]
    if b.rank == 1:
        del shape[-1]
    return reshape(ctx, y, shape)


def reduce(ctx: NodeContext, x: Value, mode: str, axes: Sequence[int],
           keepdims: bool = True) -> Value:
    return ctx.emit(ReduceOp, [x], mode=mode, axes=[int(a) for a in axes], keepdims=keepdims)


def softmax(ctx: NodeContext, x: Value, axis: int = -1) -> Value:
    return ctx.emit(SoftmaxOp, [x], axis=axis)


def add(ctx, a, b):
    return ctx.emit(ew.AddOp, [a, b])


def sub(ctx, a, b):
    return ctx.emit(ew.SubOp, [a, b])


def mul(ctx, a, b):
    return ctx.emit(ew.MulOp, [a, b])


def div(ctx, a, b):
    return ctx.emit(ew.DivOp, [a, b])


def where(ctx, condition, a, b):
    return ctx.emit(ew.WhereOp, [condition, a, b])


def unary(ctx: NodeContext, op_cls, x: Value, **attrs) -> Value:
    return ctx.emit(op_cls, [x], **attrs)


def iota(ctx: NodeContext, n: int, axis: int, rank: int, dtype=np.int64) -> Value:
    """The constant 0..n-1 laid along `axis` of a rank-`rank` tensor (1s elsewhere)."""
    shape = [1] * rank
    shape[axis] = n
    return ctx.constant(np.arange(n, dtype=dtype).reshape(shape))


def normalize_index(ctx: NodeContext, index: Value, size: Value | int) -> Value:
    """Negative indices counted from the end: index + size where index < 0."""
    if index.is_const and not np.any(index.const < 0):
        return index
    size = size if isinstance(size, Value) else like(ctx, size, index)
    zero = like(ctx, 0, index)
    return where(ctx, ctx.emit(ew.LessOp, [index, zero]), add(ctx, index, size), index)


def in_float32(ctx: NodeContext, x: Value, build: Callable[[Value], Value]) -> Value:
    """`build(x)`, computed in float32 when `x` is f16/bf16 and rounded back once at the
    end, as tx8be ops compute (a composition rounded at every step drifts)."""
    if x.dtype not in LOW_PRECISION:
        return build(x)
    return cast(ctx, build(cast(ctx, x, np.float32)), x.dtype)


def composed_unary(*op_types: str):
    """Register `fn(ctx, x) -> Value` as the converter of the element-wise `op_types`,
    computed in float32 for low-precision inputs (`in_float32`)."""
    def register(fn: Callable[[NodeContext, Value], Value]):
        @converter(*op_types)
        def convert(ctx: NodeContext) -> Value:
            return in_float32(ctx, ctx.input(0), lambda x: fn(ctx, x))

        convert.__doc__ = fn.__doc__
        return fn

    return register
