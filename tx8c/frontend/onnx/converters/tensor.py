"""Converters of ONNX data-movement ops: reshape family, transpose, slice, concat, split,
pad, gather/scatter, tile, depth/space reordering."""

from __future__ import annotations

import numpy as np

from tx8c.dialect.ops.indexing import GatherElementsOp, GatherOp, ScatterNDOp
from tx8c.dialect.ops.movement import (
    BroadCastOp,
    ConcatenateOp,
    PadOp,
    SliceOp,
    SplitOp,
    TileOp,
    TransposeOp,
)
from tx8c.frontend.onnx.compose import reshape
from tx8c.frontend.onnx.context import NodeContext, Value
from tx8c.frontend.onnx.registry import converter


def _ints(array) -> list[int]:
    return [int(v) for v in np.asarray(array).reshape(-1)]


def _axes_arg(ctx: NodeContext, since: int, index: int = 1) -> list[int] | None:
    """`axes` as an attribute (before opset `since`) or as input `index` (from it on)."""
    if ctx.opset >= since:
        value = ctx.optional_const(index)
        return None if value is None else _ints(value)
    value = ctx.attr("axes")
    return None if value is None else list(value)


@converter("Reshape")
def convert_reshape(ctx: NodeContext) -> Value:
    x = ctx.input(0)
    target = _ints(ctx.const(1))
    allow_zero = ctx.attr("allowzero", 0)
    shape = [x.shape[i] if d == 0 and not allow_zero else d for i, d in enumerate(target)]
    if shape.count(-1) > 1:
        raise ctx.error(f"shape {target} has more than one -1")
    if -1 in shape:
        known = int(np.prod([d for d in shape if d != -1]))
        total = int(np.prod(x.shape))
        if known == 0 or total % known:
            raise ctx.error(f"cannot reshape {list(x.shape)} to {target}")
        shape[shape.index(-1)] = total // known
    return reshape(ctx, x, shape)


@converter("Flatten")
def convert_flatten(ctx: NodeContext) -> Value:
    x = ctx.input(0)
    axis = ctx.attr("axis", 1)
    axis = axis + x.rank if axis < 0 else axis
    return reshape(ctx, x, [int(np.prod(x.shape[:axis])), int(np.prod(x.shape[axis:]))])


@converter("Squeeze")
def convert_squeeze(ctx: NodeContext) -> Value:
    x = ctx.input(0)
    axes = _axes_arg(ctx, since=13)
    if axes is None:
        axes = [i for i, d in enumerate(x.shape) if d == 1]
    axes = {a % x.rank for a in axes}
    bad = [a for a in axes if x.shape[a] != 1]
    if bad:
        raise ctx.error(f"cannot squeeze axes {bad} of shape {list(x.shape)}: size is not 1")
    return reshape(ctx, x, [d for i, d in enumerate(x.shape) if i not in axes])


@converter("Unsqueeze")
def convert_unsqueeze(ctx: NodeContext) -> Value:
    x = ctx.input(0)
    axes = _axes_arg(ctx, since=13)
    if axes is None:
        raise ctx.error("axes is required")
    out_rank = x.rank + len(axes)
    axes = sorted(a % out_rank for a in axes)
    shape = list(x.shape)
    for a in axes:
        shape.insert(a, 1)
    return reshape(ctx, x, shape)


@converter("Transpose")
def convert_transpose(ctx: NodeContext) -> Value:
    x = ctx.input(0)
    perm = list(ctx.attr("perm", list(reversed(range(x.rank)))))
    if perm == list(range(x.rank)):
        return x
    return ctx.emit(TransposeOp, [x], perm=perm)


@converter("Expand")
def convert_expand(ctx: NodeContext) -> Value:
    x = ctx.input(0)
    shape = _ints(ctx.const(1))
    try:
        out = list(np.broadcast_shapes(tuple(x.shape), tuple(shape)))
    except ValueError:
        raise ctx.error(f"cannot expand {list(x.shape)} to {shape}") from None
    if out == list(x.shape):
        return x
    return ctx.emit(BroadCastOp, [x], shape=shape)


@converter("Slice")
def convert_slice(ctx: NodeContext) -> Value:
    x = ctx.input(0)
    if ctx.opset < 10:
        starts, ends = list(ctx.attr("starts")), list(ctx.attr("ends"))
        axes, steps = ctx.attr("axes"), None
    else:
        starts, ends = _ints(ctx.const(1)), _ints(ctx.const(2))
        axes = ctx.optional_const(3)
        steps = ctx.optional_const(4)
    axes = list(range(len(starts))) if axes is None else _ints(axes)
    steps = [1] * len(starts) if steps is None else _ints(steps)
    return ctx.emit(SliceOp, [x], starts=starts, ends=ends, axes=axes, steps=steps)


@converter("Concat")
def convert_concat(ctx: NodeContext) -> Value:
    inputs = [ctx.input(i) for i in range(len(ctx.inputs)) if ctx.has_input(i)]
    axis = ctx.attr("axis")
    inputs = [v for v in inputs if v.shape[axis] != 0] or inputs[:1]
    if len(inputs) == 1:
        return inputs[0]
    return ctx.emit(ConcatenateOp, inputs, axis=axis)


@converter("Split")
def convert_split(ctx: NodeContext) -> list[Value]:
    x = ctx.input(0)
    axis = ctx.attr("axis", 0) % x.rank
    if ctx.opset >= 13:
        split = ctx.optional_const(1)
        split = None if split is None else _ints(split)
    else:
        split = ctx.attr("split")
    if split is None:
        n = ctx.attr("num_outputs", ctx.num_outputs)
        size = -(-x.shape[axis] // n)  # ceil: the last chunk may be smaller (opset 18)
        split = [size] * (n - 1) + [x.shape[axis] - size * (n - 1)]
    return ctx.emit_multi(SplitOp, [x], axis=axis, split=list(split))


@converter("Pad")
def convert_pad(ctx: NodeContext) -> Value:
    x = ctx.input(0)
    mode = ctx.attr("mode", "constant")
    if ctx.opset < 11:
        pads, value = list(ctx.attr("pads")), ctx.attr("value", 0.0)
    else:
        pads = _ints(ctx.const(1))
        value = ctx.optional_const(2)
        value = 0.0 if value is None or np.asarray(value).size == 0 else float(np.asarray(value))
        axes = ctx.optional_const(3)
        if axes is not None:
            pads = _pads_for_axes(x.rank, _ints(axes), pads)
    if any(p < 0 for p in pads):  # negative pads crop: a Slice, then the positive part
        x = _crop(ctx, x, pads)
        pads = [max(p, 0) for p in pads]
    if not any(pads):
        return x
    return ctx.emit(PadOp, [x], pads=pads, mode=mode, value=value)


def _pads_for_axes(rank: int, axes: list[int], pads: list[int]) -> list[int]:
    full = [0] * (2 * rank)
    n = len(axes)
    for i, a in enumerate(axes):
        full[a % rank] = pads[i]
        full[a % rank + rank] = pads[i + n]
    return full


def _crop(ctx: NodeContext, x: Value, pads: list[int]) -> Value:
    rank = x.rank
    starts = [max(-pads[i], 0) for i in range(rank)]
    ends = [x.shape[i] - max(-pads[i + rank], 0) for i in range(rank)]
    return ctx.emit(
        SliceOp, [x], starts=starts, ends=ends, axes=list(range(rank)), steps=[1] * rank
    )


@converter("Gather")
def convert_gather(ctx: NodeContext) -> Value:
    data, axis = ctx.input(0), ctx.attr("axis", 0)
    ctx.check_indices(1, data.shape[ctx.axis(axis, data.rank)])
    return ctx.emit(GatherOp, [data, ctx.input(1)], axis=axis)


@converter("GatherElements")
def convert_gather_elements(ctx: NodeContext) -> Value:
    data, axis = ctx.input(0), ctx.attr("axis", 0)
    ctx.check_indices(1, data.shape[ctx.axis(axis, data.rank)])
    return ctx.emit(GatherElementsOp, [data, ctx.input(1)], axis=axis)


@converter("ScatterND")
def convert_scatter_nd(ctx: NodeContext) -> Value:
    return ctx.emit(
        ScatterNDOp, [ctx.input(0), ctx.input(1), ctx.input(2)],
        reduction=ctx.attr("reduction", "none"),
    )


@converter("Tile")
def convert_tile(ctx: NodeContext) -> Value:
    repeats = _ints(ctx.const(1))
    if all(r == 1 for r in repeats):
        return ctx.input(0)
    return ctx.emit(TileOp, [ctx.input(0)], repeats=repeats)


@converter("DepthToSpace")
def convert_depth_to_space(ctx: NodeContext) -> Value:
    x = ctx.input(0)
    b = ctx.attr("blocksize")
    n, c, h, w = x.shape
    if ctx.attr("mode", "DCR") == "DCR":
        y = reshape(ctx, x, [n, b, b, c // (b * b), h, w])
        y = ctx.emit(TransposeOp, [y], perm=[0, 3, 4, 1, 5, 2])
    else:
        y = reshape(ctx, x, [n, c // (b * b), b, b, h, w])
        y = ctx.emit(TransposeOp, [y], perm=[0, 1, 4, 2, 5, 3])
    return reshape(ctx, y, [n, c // (b * b), h * b, w * b])


@converter("SpaceToDepth")
def convert_space_to_depth(ctx: NodeContext) -> Value:
    """DCR (the default): channel = (bh * b + bw) * C + c; CRD (opset 28): channel =
    c * b * b + bh * b + bw."""
    x = ctx.input(0)
    b = ctx.attr("blocksize")
    n, c, h, w = x.shape
    if h % b or w % b:
        raise ctx.error(f"blocksize {b} must divide H and W, got {h} x {w}")
    y = reshape(ctx, x, [n, c, h // b, b, w // b, b])
    mode = ctx.attr("mode", "DCR")
    if mode not in ("DCR", "CRD"):
        raise ctx.error(f"mode must be DCR or CRD, got '{mode}'")
    perm = [0, 3, 5, 1, 2, 4] if mode == "DCR" else [0, 1, 3, 5, 2, 4]
    y = ctx.emit(TransposeOp, [y], perm=perm)
    return reshape(ctx, y, [n, c * b * b, h // b, w // b])
