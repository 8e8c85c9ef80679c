"""Converters of ONNX neural-network ops: conv, matmul, normalisation, pooling, reduce,
resize."""

from __future__ import annotations

import math

import numpy as np

from tx8c.dialect.ops import elementwise as ew
from tx8c.dialect.ops.conv_gemm import ConvOp, GemmOp
from tx8c.dialect.ops.norm import BatchNormInferenceOp, LayerNormOp, SoftmaxOp
from tx8c.dialect.ops.reduce_pool import PoolOp, ReduceOp
from tx8c.dialect.ops.resize import ResizeOp
from tx8c.frontend.onnx.compose import matmul_ranked, reshape
from tx8c.frontend.onnx.context import NodeContext, Value
from tx8c.frontend.onnx.registry import converter

# --------------------------------------------------------------------------------------
# Spatial windows (conv, pool): kernel geometry, auto_pad, 1-D as 2-D
# --------------------------------------------------------------------------------------


def spatial_rank(ctx: NodeContext, x: Value, supported: tuple[int, ...] = (1, 2)) -> int:
    rank = x.rank - 2
    if rank not in supported:
        dims = " and ".join(f"{d}-D" for d in supported)
        raise ctx.error(
            f"{rank}-D {ctx.op_type} is not supported (tx8c supports {dims}); "
            f"the input has shape {list(x.shape)}"
        )
    return rank


def window_pads(ctx, in_dims, kernel, strides, dilations) -> list[int]:
    """ONNX pads [begins..., ends...] after resolving auto_pad."""
    n = len(in_dims)
    auto_pad = ctx.attr("auto_pad", "NOTSET")
    if auto_pad in ("NOTSET", ""):
        return list(ctx.attr("pads", [0] * (2 * n)))
    if auto_pad == "VALID":
        return [0] * (2 * n)
    if auto_pad not in ("SAME_UPPER", "SAME_LOWER"):
        raise ctx.error(f"auto_pad '{auto_pad}' is not an ONNX auto_pad value")
    begins, ends = [], []
    for d, k, s, dl in zip(in_dims, kernel, strides, dilations, strict=True):
        out = math.ceil(d / s)
        total = max(0, (out - 1) * s + (k - 1) * dl + 1 - d)
        small, large = total // 2, total - total // 2
        begins.append(large if auto_pad == "SAME_LOWER" else small)
        ends.append(small if auto_pad == "SAME_LOWER" else large)
    return begins + ends


def as_2d(values: list[int], fill: int) -> list[int]:
    """1-D window parameters as 2-D ones with H = 1."""
    return [fill, *values]


def pads_as_2d(pads: list[int]) -> list[int]:
    """ONNX 1-D pads [b, e] -> [top, left, bottom, right] = [0, b, 0, e]."""
    return [0, pads[0], 0, pads[1]]


@converter("Conv")
def convert_conv(ctx: NodeContext) -> Value:
    x, w = ctx.input(0), ctx.input(1)
    rank = spatial_rank(ctx, x)
    kernel = list(ctx.attr("kernel_shape", w.shape[2:]))
    strides = list(ctx.attr("strides", [1] * rank))
    dilations = list(ctx.attr("dilations", [1] * rank))
    pads = window_pads(ctx, x.shape[2:], kernel, strides, dilations)
    operands = [x, w] + ([ctx.input(2)] if ctx.has_input(2) else [])
    if rank == 1:  # a 1-D conv is a 2-D conv with H = 1
        n, c, length = x.shape
        operands[0] = reshape(ctx, x, [n, c, 1, length])
        operands[1] = reshape(ctx, w, [w.shape[0], w.shape[1], 1, w.shape[2]])
        strides, dilations, pads = as_2d(strides, 1), as_2d(dilations, 1), pads_as_2d(pads)
    y = ctx.emit(
        ConvOp, operands, strides=strides, pads=pads, dilations=dilations,
        groups=ctx.attr("group", 1),
    )
    if rank == 1:
        y = reshape(ctx, y, [y.shape[0], y.shape[1], y.shape[3]])
    return y


@converter("MaxPool", "AveragePool")
def convert_pool(ctx: NodeContext) -> Value:
    if ctx.num_outputs > 1 and ctx.node.output[1]:
        raise ctx.error("the Indices output of MaxPool is not supported")
    x = ctx.input(0)
    rank = spatial_rank(ctx, x, (1, 2, 3))
    kernel = list(ctx.attr("kernel_shape"))
    strides = list(ctx.attr("strides", [1] * rank))
    dilations = list(ctx.attr("dilations", [1] * rank))
    pads = window_pads(ctx, x.shape[2:], kernel, strides, dilations)
    if ctx.attr("storage_order", 0) != 0:
        raise ctx.error("storage_order = 1 (column major) is not supported")
    if rank == 1:
        x = reshape(ctx, x, [x.shape[0], x.shape[1], 1, x.shape[2]])
        kernel, strides = as_2d(kernel, 1), as_2d(strides, 1)
        dilations, pads = as_2d(dilations, 1), pads_as_2d(pads)
    attrs = dict(
        mode="max" if ctx.op_type == "MaxPool" else "avg", kernel=kernel, strides=strides,
        pads=pads, dilations=dilations, ceil_mode=bool(ctx.attr("ceil_mode", 0)),
    )
    if ctx.op_type == "AveragePool":
        attrs["count_include_pad"] = bool(ctx.attr("count_include_pad", 0))
    y = ctx.emit(PoolOp, [x], **attrs)
    if rank == 1:
        y = reshape(ctx, y, [y.shape[0], y.shape[1], y.shape[3]])
    return y


@converter("GlobalAveragePool", "GlobalMaxPool")
def convert_global_pool(ctx: NodeContext) -> Value:
    x = ctx.input(0)
    rank = spatial_rank(ctx, x, (1, 2, 3))
    if rank == 1:
        x = reshape(ctx, x, [x.shape[0], x.shape[1], 1, x.shape[2]])
    mode = "avg" if ctx.op_type == "GlobalAveragePool" else "max"
    y = ctx.emit(PoolOp, [x], mode=mode, global_pool=True, kernel=[1] * max(rank, 2))
    if rank == 1:
        y = reshape(ctx, y, [y.shape[0], y.shape[1], 1])
    return y


# --------------------------------------------------------------------------------------
# Matrix products
# --------------------------------------------------------------------------------------


@converter("Gemm")
def convert_gemm(ctx: NodeContext) -> Value:
    operands = [ctx.input(0), ctx.input(1)] + ([ctx.input(2)] if ctx.has_input(2) else [])
    return ctx.emit(
        GemmOp, operands, trans_a=bool(ctx.attr("transA", 0)),
        trans_b=bool(ctx.attr("transB", 0)), alpha=ctx.attr("alpha", 1.0),
        beta=ctx.attr("beta", 1.0),
    )


@converter("MatMul")
def convert_matmul(ctx: NodeContext) -> Value:
    return matmul_ranked(ctx, GemmOp, ctx.input(0), ctx.input(1))


# --------------------------------------------------------------------------------------
# Normalisation
# --------------------------------------------------------------------------------------


@converter("BatchNormalization")
def convert_batch_norm(ctx: NodeContext) -> Value | list[Value]:
    if ctx.opset < 9 and ctx.attr("spatial", 1) == 0:
        raise ctx.error("spatial = 0 (statistics per element, opsets 7-8) is not supported")
    inputs = [ctx.input(i) for i in range(5)]
    epsilon = ctx.attr("epsilon", 1e-5)
    if ctx.attr("training_mode", 0):
        return _batch_norm_training(ctx, inputs, epsilon)
    if ctx.num_outputs > 1 and any(ctx.node.output[1:]):
        raise ctx.error("the running mean/var outputs need training_mode = 1")
    return ctx.emit(BatchNormInferenceOp, inputs, epsilon=epsilon, axis=1)


def _batch_norm_training(ctx: NodeContext, inputs: list[Value], epsilon: float) -> list[Value]:
    """training_mode = 1 is deterministic: normalise with the batch's own statistics
    (mean and biased variance over every dim but 1) and blend them into the running
    ones with `momentum`."""
    x, scale, bias, mean, var = inputs
    axes = [d for d in range(x.rank) if d != 1]
    batch_mean = ctx.emit(ReduceOp, [x], mode="mean", axes=axes, keepdims=False)
    centred = ctx.emit(ew.SubOp, [x, reshape(ctx, batch_mean, [x.shape[1]] + [1] * (x.rank - 2))])
    batch_var = ctx.emit(ReduceOp, [ctx.emit(ew.MulOp, [centred, centred])], mode="mean",
                         axes=axes, keepdims=False)
    y = ctx.emit(BatchNormInferenceOp, [x, scale, bias, batch_mean, batch_var],
                 epsilon=epsilon, axis=1)
    momentum = ctx.attr("momentum", 0.9)

    def blend(running: Value, current: Value) -> Value:
        kept = ctx.emit(ew.MulOp, [running, ctx.constant(np.asarray(momentum, running.dtype))])
        new = ctx.emit(ew.MulOp, [current, ctx.constant(np.asarray(1 - momentum,
                                                                    current.dtype))])
        return ctx.emit(ew.AddOp, [kept, new])

    return [y, blend(mean, batch_mean), blend(var, batch_var)][:ctx.num_outputs]


@converter("LayerNormalization")
def convert_layer_norm(ctx: NodeContext) -> Value | list[Value]:
    inputs = [ctx.input(0), ctx.input(1)] + ([ctx.input(2)] if ctx.has_input(2) else [])
    axis, epsilon = ctx.attr("axis", -1), ctx.attr("epsilon", 1e-5)
    y = ctx.emit(LayerNormOp, inputs, axis=axis, epsilon=epsilon)
    if ctx.num_outputs == 1 or not any(ctx.node.output[1:]):
        return y
    return [y, *_layer_norm_statistics(ctx, ctx.input(0), axis, epsilon)]


def _layer_norm_statistics(ctx: NodeContext, x: Value, axis: int, epsilon: float):
    """LayerNormalization's optional Mean and InvStdDev outputs, in fp32 (the stash type):
    mean over axis..end, and 1 / sqrt(var + epsilon), both with kept dims."""
    if ctx.attr("stash_type", 1) != 1:
        raise ctx.error("stash_type other than 1 (float32) is not supported")
    if x.dtype != np.float32:
        x = ctx.emit(ew.CastOp, [x], to="f32")
    axes = list(range(axis % x.rank, x.rank))
    mean = ctx.emit(ReduceOp, [x], mode="mean", axes=axes, keepdims=True)
    centred = ctx.emit(ew.SubOp, [x, mean])
    var = ctx.emit(ReduceOp, [ctx.emit(ew.MulOp, [centred, centred])], mode="mean",
                   axes=axes, keepdims=True)
    eps = ctx.constant(np.asarray(epsilon, dtype=np.float32))
    return [mean, ctx.emit(ew.RsqrtOp, [ctx.emit(ew.AddOp, [var, eps])])]


def _softmax(ctx: NodeContext, x: Value) -> Value:
    axis = ctx.attr("axis", -1 if ctx.opset >= 13 else 1)
    axis = axis % max(x.rank, 1)
    if ctx.opset >= 13 or axis == x.rank - 1:
        return ctx.emit(SoftmaxOp, [x], axis=axis)
    # opset < 13: softmax over the 2-D coercion [prod(shape[:axis]), prod(shape[axis:])]
    flat = reshape(ctx, x, [int(np.prod(x.shape[:axis])), int(np.prod(x.shape[axis:]))])
    return reshape(ctx, ctx.emit(SoftmaxOp, [flat], axis=1), x.shape)


@converter("Softmax")
def convert_softmax(ctx: NodeContext) -> Value:
    return _softmax(ctx, ctx.input(0))


@converter("LogSoftmax")
def convert_log_softmax(ctx: NodeContext) -> Value:
    return ctx.emit(ew.LogOp, [_softmax(ctx, ctx.input(0))])


# --------------------------------------------------------------------------------------
# Reductions
# --------------------------------------------------------------------------------------

_REDUCE_MODE = {
    "ReduceSum": "sum", "ReduceMean": "mean", "ReduceMax": "max", "ReduceMin": "min",
    "ReduceProd": "prod", "ReduceSumSquare": "sum", "ReduceL1": "sum", "ReduceL2": "sum",
    "ReduceLogSumExp": "sum", "ReduceLogSum": "sum",
}
# opset from which `axes` is an input rather than an attribute
_AXES_INPUT_SINCE = {"ReduceSum": 13}


@converter(*_REDUCE_MODE)
def convert_reduce(ctx: NodeContext) -> Value | None:
    x = ctx.input(0)
    if ctx.opset >= _AXES_INPUT_SINCE.get(ctx.op_type, 18):
        axes = ctx.optional_const(1)
        axes = [] if axes is None else [int(a) for a in np.asarray(axes).reshape(-1)]
    else:
        axes = list(ctx.attr("axes", []))
    if not axes and ctx.attr("noop_with_empty_axes", 0):
        return x
    source = {
        "ReduceSumSquare": lambda: ctx.emit(ew.MulOp, [x, x]),
        "ReduceL2": lambda: ctx.emit(ew.MulOp, [x, x]),
        "ReduceL1": lambda: ctx.emit(ew.AbsOp, [x]),
        "ReduceLogSumExp": lambda: ctx.emit(ew.ExpOp, [x]),
    }.get(ctx.op_type, lambda: x)()
    y = ctx.emit(
        ReduceOp, [source], mode=_REDUCE_MODE[ctx.op_type], axes=axes,
        keepdims=bool(ctx.attr("keepdims", 1)),
    )
    if ctx.op_type == "ReduceL2":
        y = ctx.emit(ew.SqrtOp, [y])
    elif ctx.op_type in ("ReduceLogSumExp", "ReduceLogSum"):
        y = ctx.emit(ew.LogOp, [y])
    return y


# --------------------------------------------------------------------------------------
# Resize
# --------------------------------------------------------------------------------------


_RESIZE_MODES = {"nearest": "nearest", "linear": "bilinear", "cubic": "bicubic"}
_RESIZE_COORDINATE_MODES = (
    "half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel", "half_pixel_symmetric",
    "tf_crop_and_resize",
)


@converter("Resize")
def convert_resize(ctx: NodeContext) -> Value:
    x = ctx.input(0)
    if ctx.opset < 11:  # Resize-10: (X, scales), asymmetric coordinates
        return scale_asymmetric(ctx, x, ctx.const(1))
    mode = ctx.attr("mode", "nearest")
    if mode not in _RESIZE_MODES:
        raise ctx.error(f"mode '{mode}' is not an ONNX Resize mode (nearest, linear, cubic)")
    if ctx.attr("antialias", 0):
        raise ctx.error("antialias = 1 is not supported")
    coord = ctx.attr("coordinate_transformation_mode", "half_pixel")
    if coord not in _RESIZE_COORDINATE_MODES:
        raise ctx.error(f"coordinate_transformation_mode '{coord}' is not supported")
    sizes, scales = _resize_sizes(ctx, x)
    if mode != "nearest":
        if x.rank != 4 or list(sizes[:2]) != list(x.shape[:2]):
            raise ctx.error(
                f"{mode} Resize is supported on rank-4 inputs resizing the last two dims "
                f"({_RESIZE_MODES[mode]}); got {list(x.shape)} -> {sizes}"
            )
    attrs = {}
    if coord == "tf_crop_and_resize":
        attrs["roi"] = _resize_roi(ctx, x)
        attrs["extrapolation_value"] = ctx.attr("extrapolation_value", 0.0)
    if mode == "cubic":
        attrs["cubic_coeff_a"] = ctx.attr("cubic_coeff_a", -0.75)
        attrs["exclude_outside"] = bool(ctx.attr("exclude_outside", 0))
    else:
        attrs["nearest_mode"] = ctx.attr("nearest_mode", "round_prefer_floor")
    return ctx.emit(
        ResizeOp, [x], mode=_RESIZE_MODES[mode], sizes=sizes,
        coordinate_transformation_mode=coord, scales=scales, **attrs,
    )


def scale_asymmetric(ctx: NodeContext, x: Value, scales) -> Value:
    """Upsample (opsets 7-9) and Resize-10: output dims floor(dim * scale), source
    coordinate out / scale, nearest rounding as onnxruntime's: down when enlarging, up
    when shrinking."""
    mode = ctx.attr("mode", "nearest")
    scales = [float(v) for v in np.asarray(scales).reshape(-1)]
    if len(scales) != x.rank or any(v <= 0 for v in scales):
        raise ctx.error(f"scales {scales} must hold one positive value per input dim "
                        f"({x.rank})")
    sizes = [int(math.floor(d * v)) for d, v in zip(x.shape, scales, strict=True)]
    if mode == "nearest":
        if any(v < 1 for v in scales) and any(v > 1 for v in scales):
            raise ctx.error(f"scales {scales} both enlarge and shrink; tx8c supports one "
                            "direction per nearest Resize before opset 11")
        rounding = "ceil" if any(v < 1 for v in scales) else "floor"
        return ctx.emit(ResizeOp, [x], mode="nearest", sizes=sizes, scales=scales,
                        coordinate_transformation_mode="asymmetric", nearest_mode=rounding)
    if mode not in ("linear", "bilinear"):
        raise ctx.error(f"mode must be nearest or linear, got '{mode}'")
    if x.rank != 4 or scales[:2] != [1.0, 1.0]:
        raise ctx.error(f"linear {ctx.op_type} is supported on rank-4 inputs scaling the last "
                        f"two dims; got {list(x.shape)} with scales {scales}")
    return ctx.emit(ResizeOp, [x], mode="bilinear", sizes=sizes, scales=scales,
                    coordinate_transformation_mode="asymmetric")


def _resize_roi(ctx: NodeContext, x: Value) -> list[float]:
    """ONNX's roi (input 1) for every axis, starts then ends: an axis outside `axes`
    keeps [0, 1]."""
    roi = ctx.optional_const(1)
    if roi is None or not np.asarray(roi).size:
        raise ctx.error("coordinate_transformation_mode 'tf_crop_and_resize' needs roi")
    roi = [float(v) for v in np.asarray(roi).reshape(-1)]
    axes = [a % x.rank for a in ctx.attr("axes", list(range(x.rank)))]
    if len(roi) != 2 * len(axes):
        raise ctx.error(f"roi has {len(roi)} values, expected {2 * len(axes)} (two per axis)")
    full = [0.0] * x.rank + [1.0] * x.rank
    for i, axis in enumerate(axes):
        full[axis], full[axis + x.rank] = roi[i], roi[i + len(axes)]
    return full


def _resize_sizes(ctx: NodeContext, x: Value) -> tuple[list[int], list[float] | None]:
    """The output shape, and the per-axis scales when the model gave scales."""
    axes = [a % x.rank for a in ctx.attr("axes", list(range(x.rank)))]
    policy = ctx.attr("keep_aspect_ratio_policy", "stretch")
    sizes = ctx.optional_const(3)
    scales = ctx.optional_const(2)
    if sizes is not None and np.asarray(sizes).size:
        picked = [int(s) for s in np.asarray(sizes).reshape(-1)]
        full = list(x.shape)
        if policy == "stretch":
            for axis, size in zip(axes, picked, strict=True):
                full[axis] = size
            return full, None
        return _keep_aspect_ratio(ctx, x, axes, picked, policy)
    if scales is None or not np.asarray(scales).size:
        raise ctx.error("Resize needs either scales or sizes")
    full, per_axis = list(x.shape), [1.0] * x.rank
    for axis, scale in zip(axes, np.asarray(scales).reshape(-1), strict=True):
        full[axis] = int(math.floor(x.shape[axis] * float(scale)))
        per_axis[axis] = float(scale)
    return full, per_axis


def _keep_aspect_ratio(ctx: NodeContext, x: Value, axes: list[int], sizes: list[int],
                       policy: str) -> tuple[list[int], list[float]]:
    """ONNX keep_aspect_ratio_policy: one scale for all resized axes, the largest that
    fits inside `sizes` (not_larger) or the smallest that covers it (not_smaller)."""
    if policy not in ("not_larger", "not_smaller"):
        raise ctx.error(f"keep_aspect_ratio_policy '{policy}' is not an ONNX policy")
    ratios = [size / x.shape[axis] for axis, size in zip(axes, sizes, strict=True)]
    scale = min(ratios) if policy == "not_larger" else max(ratios)
    full, per_axis = list(x.shape), [1.0] * x.rank
    for axis in axes:
        full[axis] = int(math.floor(x.shape[axis] * scale + 0.5))
        per_axis[axis] = scale
    return full, per_axis
