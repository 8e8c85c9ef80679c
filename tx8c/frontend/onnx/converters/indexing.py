"""Converters of ONNX ops that select or place elements by position: ArgMax, ArgMin,
Hardmax, TopK, GatherND, ScatterElements, OneHot, ReverseSequence, Compress, and the
running CumSum and CumProd.

TopK has a tx8be op; the others are compositions:
- ArgMax/ArgMin: Reduce max/min, Equal, then the first (or last) position that equals it
  (a Where on a constant iota, then Reduce min/max);
- GatherND: one Gather on the data flattened over the indexed dims, at the linear index
  sum(index_j * stride_j) (batch dims folded into the flattening);
- ScatterElements: ScatterND at full coordinates (the indices along `axis`, constant iotas
  along the other dims);
- OneHot: Equal of the indices with an iota, then Where(on, off);
- ReverseSequence: GatherElements along the time axis at (length - 1 - t) for t < length;
- CumSum/CumProd: a parallel prefix scan, ceil(log2 n) steps of "shift by 2^i and combine"
  (Slice, Pad, Add/Mul); integer results are exact, float sums are summed in another
  order than a sequential loop (within float32 rounding).
"""

from __future__ import annotations

import numpy as np

from tx8c.dialect.ops import elementwise as ew
from tx8c.dialect.ops.indexing import GatherElementsOp, GatherOp, ScatterNDOp
from tx8c.dialect.ops.sort import TopKOp
from tx8c.frontend.onnx.compose import (
    add,
    broadcast,
    cast,
    concat,
    flip,
    iota,
    like,
    mul,
    normalize_index,
    pad,
    reduce,
    reshape,
    slice_axis,
    sub,
    where,
)
from tx8c.frontend.onnx.context import NodeContext, Value
from tx8c.frontend.onnx.registry import converter

# --------------------------------------------------------------------------------------
# ArgMax, ArgMin, Hardmax, TopK
# --------------------------------------------------------------------------------------


def arg_extreme(ctx: NodeContext, x: Value, axis: int, mode: str, last: bool,
                keepdims: bool) -> Value:
    """The position (int64) of the first (or last) max/min of `x` along `axis`."""
    extreme = reduce(ctx, x, mode, [axis], keepdims=True)
    hit = ctx.emit(ew.EqualOp, [x, extreme])
    n = x.shape[axis]
    positions = iota(ctx, n, axis, x.rank)
    miss = ctx.constant(np.asarray(-1 if last else n, np.int64))
    chosen = reduce(ctx, where(ctx, hit, positions, miss), "max" if last else "min", [axis],
                    keepdims=keepdims)
    return chosen


@converter("ArgMax", "ArgMin")
def convert_arg_extreme(ctx: NodeContext) -> Value:
    x = ctx.input(0)
    axis = ctx.axis(ctx.attr("axis", 0), x.rank)
    return arg_extreme(ctx, x, axis, "max" if ctx.op_type == "ArgMax" else "min",
                       bool(ctx.attr("select_last_index", 0)), bool(ctx.attr("keepdims", 1)))


@converter("Hardmax")
def convert_hardmax(ctx: NodeContext) -> Value:
    """1 at the first maximum along `axis` (before opset 13: of the 2-D coercion)."""
    x = ctx.input(0)
    axis = ctx.axis(ctx.attr("axis", -1 if ctx.opset >= 13 else 1), x.rank)
    view = x
    if ctx.opset < 13:
        rows = int(np.prod(x.shape[:axis]))
        view, axis = reshape(ctx, x, [rows, int(np.prod(x.shape[axis:]))]), 1
    first = arg_extreme(ctx, view, axis, "max", False, True)
    hit = ctx.emit(ew.EqualOp, [iota(ctx, view.shape[axis], axis, view.rank), first])
    return reshape(ctx, cast(ctx, hit, x.dtype), x.shape)


@converter("TopK")
def convert_topk(ctx: NodeContext) -> list[Value]:
    x = ctx.input(0)
    k = int(np.asarray(ctx.const(1)).reshape(-1)[0]) if ctx.opset >= 10 else ctx.attr("k")
    axis = ctx.axis(ctx.attr("axis", -1), x.rank)
    if not 0 <= k <= x.shape[axis]:
        raise ctx.error(f"k = {k} must be between 0 and the size of axis {axis} "
                        f"({x.shape[axis]})")
    return ctx.emit_multi(TopKOp, [x], k=k, axis=axis,
                          largest=bool(ctx.attr("largest", 1)),
                          sorted=bool(ctx.attr("sorted", 1)))


# --------------------------------------------------------------------------------------
# GatherND, ScatterElements, OneHot
# --------------------------------------------------------------------------------------


@converter("GatherND")
def convert_gather_nd(ctx: NodeContext) -> Value:
    data, indices = ctx.input(0), ctx.input(1)
    b = ctx.attr("batch_dims", 0)
    k = indices.shape[-1] if indices.rank else 0
    if not 0 <= b < min(data.rank, max(indices.rank, 1)) or not 1 <= k <= data.rank - b:
        raise ctx.error(
            f"batch_dims {b} and an index depth of {k} do not fit data of rank {data.rank} "
            f"and indices of rank {indices.rank}"
        )
    indexed = data.shape[b:b + k]
    ctx.check_indices(1, np.broadcast_to(np.asarray(indexed), indices.shape))
    batch = int(np.prod(data.shape[:b]))
    flat = reshape(ctx, data, [batch * int(np.prod(indexed)), *data.shape[b + k:]])
    idx = cast(ctx, indices, np.int64)
    idx = normalize_index(ctx, idx, ctx.constant(np.asarray(indexed, np.int64)))
    strides = np.cumprod([1, *indexed[::-1]])[:-1][::-1].astype(np.int64)
    linear = reduce(ctx, mul(ctx, idx, ctx.constant(strides)), "sum", [-1], keepdims=False)
    if b:
        offsets = np.arange(batch, dtype=np.int64).reshape(data.shape[:b]) * int(
            np.prod(indexed))
        offsets = offsets.reshape(list(data.shape[:b]) + [1] * (linear.rank - b))
        linear = add(ctx, linear, ctx.constant(offsets))
    return ctx.emit(GatherOp, [flat, linear], axis=0)


@converter("ScatterElements", "Scatter")
def convert_scatter_elements(ctx: NodeContext) -> Value:
    data, indices, updates = ctx.input(0), ctx.input(1), ctx.input(2)
    axis = ctx.axis(ctx.attr("axis", 0), data.rank)
    if indices.shape != updates.shape or indices.rank != data.rank:
        raise ctx.error(
            f"indices {list(indices.shape)} and updates {list(updates.shape)} must have one "
            f"shape, of the rank of data ({data.rank})"
        )
    ctx.check_indices(1, data.shape[axis])
    along = normalize_index(ctx, cast(ctx, indices, np.int64), data.shape[axis])
    coordinates = []
    for d in range(data.rank):
        if d == axis:
            coordinates.append(reshape(ctx, along, [*indices.shape, 1]))
        else:
            grid = np.broadcast_to(
                np.arange(indices.shape[d], dtype=np.int64).reshape(
                    [-1 if i == d else 1 for i in range(data.rank)]), indices.shape)
            coordinates.append(ctx.constant(grid.reshape(*indices.shape, 1).copy()))
    full = concat(ctx, coordinates, axis=data.rank)
    return ctx.emit(ScatterNDOp, [data, full, updates],
                    reduction=ctx.attr("reduction", "none"))


@converter("OneHot")
def convert_one_hot(ctx: NodeContext) -> Value:
    indices, values = ctx.input(0), ctx.input(2)
    depth = int(np.asarray(ctx.const(1)).reshape(-1)[0])
    if depth < 1:
        raise ctx.error(f"depth must be at least 1, got {depth}")
    if values.shape not in ((2,),):
        raise ctx.error(f"values must hold [off, on], got shape {list(values.shape)}")
    axis = ctx.axis(ctx.attr("axis", -1), indices.rank + 1)
    idx = normalize_index(ctx, cast(ctx, indices, np.int64), depth)
    expanded = reshape(ctx, idx, [*indices.shape[:axis], 1, *indices.shape[axis:]])
    hit = ctx.emit(ew.EqualOp, [expanded, iota(ctx, depth, axis, indices.rank + 1)])
    off, on = slice_axis(ctx, values, 0, 0, 1), slice_axis(ctx, values, 0, 1, 2)
    return where(ctx, hit, reshape(ctx, on, []), reshape(ctx, off, []))


# --------------------------------------------------------------------------------------
# ReverseSequence, Compress
# --------------------------------------------------------------------------------------


@converter("ReverseSequence")
def convert_reverse_sequence(ctx: NodeContext) -> Value:
    x, lengths = ctx.input(0), ctx.input(1)
    time_axis, batch_axis = ctx.attr("time_axis", 0), ctx.attr("batch_axis", 1)
    if {time_axis, batch_axis} != {0, 1}:
        raise ctx.error(f"time_axis and batch_axis must be 0 and 1 in some order, got "
                        f"{time_axis} and {batch_axis}")
    steps, batch = x.shape[time_axis], x.shape[batch_axis]
    if lengths.shape != (batch,):
        raise ctx.error(f"sequence_lens must have shape [{batch}], got {list(lengths.shape)}")
    if lengths.is_const and np.any((lengths.const < 0) | (lengths.const > steps)):
        raise ctx.error(f"sequence_lens {lengths.const.tolist()} must lie in 0..{steps}")
    t = iota(ctx, steps, time_axis, x.rank)
    length = reshape(ctx, cast(ctx, lengths, np.int64),
                     [batch if d == batch_axis else 1 for d in range(x.rank)])
    reversed_t = sub(ctx, sub(ctx, length, like(ctx, 1, length)), t)
    source = where(ctx, ctx.emit(ew.LessOp, [t, length]), reversed_t, t)
    return ctx.emit(GatherElementsOp, [x, broadcast(ctx, source, x.shape)], axis=time_axis)


@converter("Compress")
def convert_compress(ctx: NodeContext) -> Value:
    """The entries whose condition is true (the condition must be known at compile
    time: it decides the result's shape)."""
    x = ctx.input(0)
    condition = np.asarray(ctx.const(1)).astype(bool).reshape(-1)
    axis = ctx.attr("axis")
    if axis is None:
        x, axis = reshape(ctx, x, [int(np.prod(x.shape))]), 0
    axis = ctx.axis(axis, x.rank)
    if condition.size > x.shape[axis]:
        raise ctx.error(f"the condition has {condition.size} entries, more than the "
                        f"{x.shape[axis]} of axis {axis}")
    chosen = np.nonzero(condition)[0].astype(np.int64)
    return ctx.emit(GatherOp, [x, ctx.constant(chosen)], axis=axis)


# --------------------------------------------------------------------------------------
# CumSum, CumProd
# --------------------------------------------------------------------------------------


def prefix_scan(ctx: NodeContext, x: Value, axis: int, op_cls, identity: float,
                exclusive: bool, reverse: bool) -> Value:
    """Running sums/products along `axis` by doubling (module docstring)."""
    n = x.shape[axis]
    if reverse:
        x = flip(ctx, x, axis)
    if exclusive:
        x = _shift(ctx, x, axis, 1, identity)
    step = 1
    while step < n:
        x = ctx.emit(op_cls, [x, _shift(ctx, x, axis, step, identity)])
        step *= 2
    return flip(ctx, x, axis) if reverse else x


def _shift(ctx: NodeContext, x: Value, axis: int, by: int, fill: float) -> Value:
    """x moved `by` places up along `axis`, the first `by` filled with `fill`."""
    n = x.shape[axis]
    kept = slice_axis(ctx, x, axis, 0, max(n - by, 0))
    pads = [0] * (2 * x.rank)
    pads[axis] = min(by, n)
    return pad(ctx, kept, pads, value=fill)


@converter("CumSum", "CumProd")
def convert_cumulative(ctx: NodeContext) -> Value:
    x = ctx.input(0)
    axis = ctx.axis(int(np.asarray(ctx.const(1)).reshape(-1)[0]), x.rank)
    if x.shape[axis] == 0:
        return x
    summing = ctx.op_type == "CumSum"
    return prefix_scan(ctx, x, axis, ew.AddOp if summing else ew.MulOp, 0 if summing else 1,
                       bool(ctx.attr("exclusive", 0)), bool(ctx.attr("reverse", 0)))
