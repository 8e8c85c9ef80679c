"""Converters of ONNX ops that tx8c evaluates at compile time.

Constant, Shape, Size, Range, ConstantOfShape, NonZero, EyeLike produce values
known at compile time (from attributes, constants and static shapes); they never reach the
IR. Trilu of a run-time tensor becomes a Where with a compile-time mask. If with a
compile-time condition is its chosen branch, inlined.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import numpy_helper

from tx8c.dialect.ops import elementwise as ew
from tx8c.frontend.onnx.context import MAX_FOLD_ELEMENTS, NodeContext, Value, element_count
from tx8c.frontend.onnx.registry import converter


@converter("Constant")
def convert_constant(ctx: NodeContext) -> Value:
    for key in ("value", "sparse_value"):
        if ctx.has_attr(key):
            value = ctx.attr(key)
            if key == "sparse_value":
                raise ctx.error("sparse constants are not supported")
            return ctx.constant(numpy_helper.to_array(value))
    scalars = {
        "value_float": np.float32, "value_floats": np.float32,
        "value_int": np.int64, "value_ints": np.int64,
    }
    for key, dtype in scalars.items():
        if ctx.has_attr(key):
            return ctx.constant(np.asarray(ctx.attr(key), dtype=dtype))
    raise ctx.error("Constant node with no supported value attribute")


@converter("Shape")
def convert_shape(ctx: NodeContext) -> Value:
    shape = np.asarray(ctx.input(0).shape, dtype=np.int64)
    rank = len(shape)
    start = ctx.attr("start", 0)
    end = ctx.attr("end", rank)
    return ctx.constant(shape[slice(start, end)])


@converter("Size")
def convert_size(ctx: NodeContext) -> Value:
    return ctx.constant(np.asarray(int(np.prod(ctx.input(0).shape)), dtype=np.int64))


@converter("Range")
def convert_range(ctx: NodeContext) -> Value:
    start, limit, delta = (_scalar(ctx, i, name) for i, name in
                           enumerate(("start", "limit", "delta")))
    if delta == 0:
        raise ctx.error("delta is 0, so the range never reaches its limit")
    count = max(int(np.ceil((float(limit) - float(start)) / float(delta))), 0)
    ctx.check_fold_size([count])
    return ctx.constant(np.arange(start, limit, delta).astype(start.dtype)[:count])


def _scalar(ctx: NodeContext, i: int, name: str) -> np.ndarray:
    value = np.asarray(ctx.const(i))
    if value.size != 1:
        raise ctx.error(f"{name} (input #{i}) must be a scalar, got shape {list(value.shape)}")
    return value.reshape(())


@converter("ConstantOfShape")
def convert_constant_of_shape(ctx: NodeContext) -> Value:
    """A compile-time fill; a fill too large to fold is a BroadCast of the scalar."""
    shape = [int(d) for d in np.asarray(ctx.const(0)).reshape(-1)]
    fill = ctx.attr("value")
    fill = numpy_helper.to_array(fill).reshape(-1) if fill is not None else np.zeros(1, np.float32)
    if fill.size != 1:
        raise ctx.error(f"value must hold one element, got {fill.size}")
    ctx.check_fold_size(shape)
    if element_count(shape) > MAX_FOLD_ELEMENTS:
        from tx8c.dialect.ops.movement import BroadCastOp

        return ctx.emit(BroadCastOp, [ctx.constant(fill.reshape(()))], shape=shape)
    return ctx.constant(np.full(shape, fill[0], dtype=fill.dtype))


@converter("NonZero")
def convert_nonzero(ctx: NodeContext) -> Value:
    return ctx.constant(np.array(np.nonzero(ctx.const(0)), dtype=np.int64))


@converter("EyeLike")
def convert_eye_like(ctx: NodeContext) -> Value:
    x = ctx.input(0)
    dtype = np.float32 if ctx.attr("dtype") is None else None
    if dtype is None:
        from tx8c.frontend.onnx.types import numpy_dtype_of

        dtype = numpy_dtype_of(ctx.attr("dtype"))
    return ctx.constant(np.eye(x.shape[0], x.shape[1], k=ctx.attr("k", 0), dtype=dtype))


@converter("Trilu")
def convert_trilu(ctx: NodeContext) -> Value:
    """Keep the upper (or lower) triangle of the last two dims: a Where on a constant mask."""
    x = ctx.input(0)
    k = int(np.asarray(ctx.optional_const(1, 0)))
    rows, cols = x.shape[-2], x.shape[-1]
    if ctx.attr("upper", 1):
        mask = np.triu(np.ones((rows, cols), dtype=bool), k)
    else:
        mask = np.tril(np.ones((rows, cols), dtype=bool), k)
    if x.is_const:
        return ctx.constant(np.where(mask, x.const, np.zeros((), x.dtype)))
    zero = ctx.constant(np.zeros((), x.dtype))
    return ctx.emit(ew.WhereOp, [ctx.constant(mask), x, zero])


@converter("If")
def convert_if(ctx: NodeContext) -> list[Value]:
    """The branch the compile-time condition picks, inlined (tx8c compiles static
    graphs: a condition known only at run time is refused)."""
    condition = np.asarray(ctx.const(0))
    if condition.size != 1:
        raise ctx.error(f"the condition must hold one value, got shape {list(condition.shape)}")
    branch = ctx.attr("then_branch" if bool(condition.reshape(-1)[0]) else "else_branch")
    outputs = ctx.convert_subgraph(branch)
    if len(outputs) != ctx.num_outputs:
        raise ctx.error(f"the chosen branch has {len(outputs)} outputs, the node "
                        f"{ctx.num_outputs}")
    return outputs


def _window(ctx: NodeContext, terms: list[tuple[float, float]]) -> Value:
    """sum of c * cos(k * 2 pi n / N) over `terms` (c, k), n = 0..size-1, N = size
    (periodic) or size - 1: the Hann, Hamming and Blackman windows, computed at compile
    time."""
    size = int(np.asarray(ctx.const(0)).reshape(-1)[0])
    ctx.check_fold_size([size])
    from tx8c.frontend.onnx.types import numpy_dtype_of

    dtype = numpy_dtype_of(ctx.attr("output_datatype", onnx.TensorProto.FLOAT))
    span = size if ctx.attr("periodic", 1) else size - 1
    n = np.arange(size, dtype=np.float64)
    angle = 2 * np.pi * n / span if span else np.zeros(size)
    values = sum(c * np.cos(k * angle) for c, k in terms)
    return ctx.constant(np.asarray(values).astype(dtype))


@converter("HannWindow")
def convert_hann_window(ctx: NodeContext) -> Value:
    return _window(ctx, [(0.5, 0), (-0.5, 1)])  # sin^2(pi n / N)


@converter("HammingWindow")
def convert_hamming_window(ctx: NodeContext) -> Value:
    alpha = 25.0 / 46.0
    return _window(ctx, [(alpha, 0), (alpha - 1, 1)])


@converter("BlackmanWindow")
def convert_blackman_window(ctx: NodeContext) -> Value:
    return _window(ctx, [(0.42, 0), (-0.5, 1), (0.08, 2)])


@converter("CenterCropPad")
def convert_center_crop_pad(ctx: NodeContext) -> Value:
    """Each listed axis cropped or zero-padded to its target size around the centre (the
    odd element goes to the end): a Slice, then a Pad."""
    from tx8c.frontend.onnx.compose import pad, slice_axis

    x = ctx.input(0)
    target = [int(v) for v in np.asarray(ctx.const(1)).reshape(-1)]
    axes = [ctx.axis(a, x.rank) for a in ctx.attr("axes", list(range(x.rank)))]
    if len(target) != len(axes):
        raise ctx.error(f"shape has {len(target)} entries for {len(axes)} axes")
    pads = [0] * (2 * x.rank)
    for axis, size in zip(axes, target, strict=True):
        dim = x.shape[axis]
        if size < dim:
            start = (dim - size) // 2
            x = slice_axis(ctx, x, axis, start, start + size)
        elif size > dim:
            pads[axis] = (size - dim) // 2
            pads[axis + x.rank] = size - dim - (size - dim) // 2
    return pad(ctx, x, pads)
