"""Random op cases for the slicing tests: one generator per op, valid by construction.

Each generator takes a numpy Generator and returns (op class, operand arrays, attributes):
random ranks, shapes, dtypes and attributes within the op's rules, small enough that a
case and all its slices compute in milliseconds.
"""

from __future__ import annotations

from collections.abc import Callable

import ml_dtypes
import numpy as np

from tx8c.dialect.ops import (
    backend,
    conv_gemm,
    elementwise,
    indexing,
    movement,
    norm,
    quant,
    reduce_pool,
    resize,
    sort,
)

Case = tuple[type, list[np.ndarray], dict]
FLOAT_DTYPES = (np.float32, np.float32, np.float16, ml_dtypes.bfloat16)


def _shape(rng, rank: int, low: int = 1, high: int = 7) -> tuple[int, ...]:
    return tuple(int(d) for d in rng.integers(low, high, rank))


def _floats(rng, shape, dtype=np.float32, scale: float = 1.0) -> np.ndarray:
    return (rng.standard_normal(shape) * scale).astype(dtype)


def _float_dtype(rng):
    return FLOAT_DTYPES[int(rng.integers(len(FLOAT_DTYPES)))]


def _broadcastable(rng, shape) -> tuple[int, ...]:
    """A shape that broadcasts to `shape`: a suffix of it, some dims replaced by 1."""
    keep = int(rng.integers(0, len(shape) + 1))
    tail = shape[len(shape) - keep:]
    return tuple(1 if rng.random() < 0.3 else d for d in tail)


# -- element-wise ------------------------------------------------------------------------


def _binary(cls, kind: str = "float") -> Callable[[np.random.Generator], Case]:
    def make(rng) -> Case:
        shape = _shape(rng, int(rng.integers(1, 5)))
        other = _broadcastable(rng, shape)
        if rng.random() < 0.5:
            shape, other = other, shape
        if kind == "bool":
            return cls, [rng.random(shape) < 0.5, rng.random(other) < 0.5], {}
        if kind == "positive":
            dtype = _float_dtype(rng)
            a = rng.uniform(0.5, 2, shape).astype(dtype)
            b = rng.uniform(-2, 2, other).astype(dtype)
            return cls, [a, b], {}
        if kind == "int" or (kind == "numeric" and rng.random() < 0.3):
            a = rng.integers(-20, 20, shape).astype(np.int32)
            b = rng.integers(1, 20, other).astype(np.int32)
            return cls, [a, b], {}
        dtype = _float_dtype(rng)
        b = _floats(rng, other, dtype)
        if cls is elementwise.DivOp:
            b = (np.abs(b.astype(np.float32)) + 0.5).astype(dtype)
        return cls, [_floats(rng, shape, dtype), b], {}

    return make


def _where(rng) -> Case:
    shape = _shape(rng, int(rng.integers(1, 5)))
    cond = rng.random(_broadcastable(rng, shape)) < 0.5
    dtype = _float_dtype(rng)
    x, y = _floats(rng, shape, dtype), _floats(rng, _broadcastable(rng, shape), dtype)
    return elementwise.WhereOp, [cond, x, y], {}


def _unary(cls, domain: str = "any", attrs=None) -> Callable[[np.random.Generator], Case]:
    def make(rng) -> Case:
        shape = _shape(rng, int(rng.integers(1, 5)))
        if domain == "bool":
            return cls, [rng.random(shape) < 0.5], {}
        dtype = _float_dtype(rng)
        if domain == "positive":
            x = rng.uniform(0.1, 3, shape).astype(dtype)
        else:
            x = _floats(rng, shape, dtype, 2)
        return cls, [x], dict(attrs(rng) if attrs else {})

    return make


def _cast(rng) -> Case:
    shape = _shape(rng, int(rng.integers(1, 5)))
    to = ["f32", "f16", "bf16", "i32", "i8", "i1"][int(rng.integers(6))]
    return elementwise.CastOp, [_floats(rng, shape, np.float32, 4)], {"to": to}


# -- NE ------------------------------------------------------------------------------------


def _conv(rng) -> Case:
    groups = [1, 1, 2, 3][int(rng.integers(4))]
    depthwise = rng.random() < 0.25
    n = int(rng.integers(1, 3))
    c_in = groups * int(rng.integers(1, 4))
    c_out = groups * int(rng.integers(1, 4))
    if depthwise:
        groups, c_out = c_in, c_in * int(rng.integers(1, 3))
    kh, kw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    strides = [int(rng.integers(1, 3)), int(rng.integers(1, 3))]
    dilations = [int(rng.integers(1, 3)), int(rng.integers(1, 3))]
    pads = [int(rng.integers(0, 3)) for _ in range(4)]
    h = (kh - 1) * dilations[0] + 1 + int(rng.integers(0, 6))
    w = (kw - 1) * dilations[1] + 1 + int(rng.integers(0, 6))
    data_format = "NCHW" if rng.random() < 0.5 else "NHWC"
    weight_format = "OIHW" if rng.random() < 0.5 else "HWOI"
    dtype = FLOAT_DTYPES[int(rng.integers(3))]
    x = _floats(rng, (n, c_in, h, w) if data_format == "NCHW" else (n, h, w, c_in), dtype)
    wshape = (c_out, c_in // groups, kh, kw)
    weight = _floats(rng, wshape, dtype)
    if weight_format == "HWOI":
        weight = np.ascontiguousarray(weight.transpose(2, 3, 0, 1))
    inputs = [x, weight]
    if rng.random() < 0.6:
        inputs.append(_floats(rng, (c_out,), dtype))
    attrs = dict(strides=strides, pads=pads, dilations=dilations, groups=groups,
                 data_format=data_format, weight_format=weight_format)
    return conv_gemm.ConvOp, inputs, attrs


def _gemm(rng) -> Case:
    batch = _shape(rng, int(rng.integers(0, 3)), 1, 4)
    m, k, n = (int(v) for v in rng.integers(1, 9, 3))
    trans_a, trans_b = bool(rng.random() < 0.3), bool(rng.random() < 0.3)
    dtype = FLOAT_DTYPES[int(rng.integers(3))]
    a_batch = batch if rng.random() < 0.7 else _broadcastable(rng, batch)
    b_batch = batch if rng.random() < 0.5 else _broadcastable(rng, batch)
    a = _floats(rng, (*a_batch, *((k, m) if trans_a else (m, k))), dtype)
    b = _floats(rng, (*b_batch, *((n, k) if trans_b else (k, n))), dtype)
    inputs = [a, b]
    if rng.random() < 0.5:
        out_batch = np.broadcast_shapes(a_batch, b_batch)
        inputs.append(_floats(rng, _broadcastable(rng, (*out_batch, m, n)), dtype))
    attrs = dict(trans_a=trans_a, trans_b=trans_b, alpha=float(rng.choice([1.0, 0.5])),
                 beta=float(rng.choice([1.0, 2.0])))
    return conv_gemm.GemmOp, inputs, attrs


# -- normalisation -------------------------------------------------------------------------


def _batchnorm(rng) -> Case:
    rank = int(rng.integers(2, 5))
    shape = _shape(rng, rank)
    axis = int(rng.choice([1, -1]))
    c = shape[axis]
    dtype = _float_dtype(rng)
    pdtype = np.float32 if rng.random() < 0.5 else dtype
    params = [_floats(rng, (c,), pdtype) for _ in range(3)]
    variance = rng.uniform(0.1, 2, c).astype(pdtype)
    return norm.BatchNormInferenceOp, [_floats(rng, shape, dtype), *params, variance], {
        "axis": axis, "epsilon": 1e-3}


def _last_dims_norm(cls, n_affine: int) -> Callable[[np.random.Generator], Case]:
    def make(rng) -> Case:
        rank = int(rng.integers(1, 5))
        shape = _shape(rng, rank)
        axis = int(rng.integers(-rank, rank))
        dtype = _float_dtype(rng)
        inputs = [_floats(rng, shape, dtype)]
        normalized = shape[axis % rank:]
        for _ in range(int(rng.integers(0, n_affine + 1))):
            inputs.append(_floats(rng, _broadcastable(rng, normalized), dtype))
        return cls, inputs, {"axis": axis}

    return make


def _softmax(rng) -> Case:
    rank = int(rng.integers(1, 5))
    shape = _shape(rng, rank)
    return norm.SoftmaxOp, [_floats(rng, shape, _float_dtype(rng))], {
        "axis": int(rng.integers(-rank, rank))}


# -- reduce and pool ------------------------------------------------------------------------


def _reduce(rng) -> Case:
    rank = int(rng.integers(1, 5))
    shape = _shape(rng, rank)
    mode = ["sum", "mean", "max", "min", "prod"][int(rng.integers(5))]
    axes = sorted({int(a) for a in rng.integers(-rank, rank, int(rng.integers(0, rank + 1)))
                   if True}, key=lambda a: a % rank)
    axes = list({a % rank: a for a in axes}.values())
    keepdims = bool(rng.random() < 0.5)
    if mode in ("sum", "max", "min", "prod") and rng.random() < 0.3:
        x = rng.integers(-3, 4, shape).astype(np.int32)
    elif mode in ("max", "min") and rng.random() < 0.15:
        x = rng.random(shape) < 0.5
    elif mode == "prod":
        x = rng.uniform(0.8, 1.25, shape).astype(np.float32)
    else:
        x = _floats(rng, shape, _float_dtype(rng))
    return reduce_pool.ReduceOp, [x], {"mode": mode, "axes": axes, "keepdims": keepdims}


def _pool(rng) -> Case:
    three_d = rng.random() < 0.2
    n_sp = 3 if three_d else 2
    mode = "max" if rng.random() < 0.5 else "avg"
    global_pool = bool(rng.random() < 0.15)
    kernel = [int(rng.integers(1, 4)) for _ in range(n_sp)]
    strides = [int(rng.integers(1, 3)) for _ in range(n_sp)]
    dilations = [int(rng.integers(1, 3)) for _ in range(n_sp)]
    pads = [int(rng.integers(0, k)) for k in kernel] + [int(rng.integers(0, k)) for k in kernel]
    spatial = [(k - 1) * d + 1 + int(rng.integers(0, 5)) for k, d in zip(kernel, dilations)]
    n, c = int(rng.integers(1, 3)), int(rng.integers(1, 5))
    channels_last = rng.random() < 0.5
    shape = (n, *spatial, c) if channels_last else (n, c, *spatial)
    fmt = ("NDHWC" if three_d else "NHWC") if channels_last else ("NCDHW" if three_d else "NCHW")
    attrs = dict(mode=mode, global_pool=global_pool, kernel=kernel, strides=strides,
                 pads=pads, dilations=dilations, ceil_mode=bool(rng.random() < 0.3),
                 count_include_pad=bool(mode == "avg" and rng.random() < 0.5),
                 data_format=fmt)
    return reduce_pool.PoolOp, [_floats(rng, shape, _float_dtype(rng))], attrs


def _resize(rng) -> Case:
    mode = ["nearest", "bilinear", "bicubic"][int(rng.integers(3))]
    shape = _shape(rng, 4, 1, 6)
    data_format = "NCHW" if rng.random() < 0.5 else "NHWC"
    sizes = list(shape)
    axes = (2, 3) if data_format == "NCHW" else (1, 2)
    if mode == "nearest":
        axes = tuple(range(4))
    for a in axes:
        sizes[a] = max(1, int(shape[a] * rng.choice([0.5, 1.0, 1.5, 2.0, 3.0])))
    coordinate = ["half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"][
        int(rng.integers(4))]
    attrs = dict(mode=mode, sizes=sizes, coordinate_transformation_mode=coordinate,
                 data_format=data_format)
    if mode == "nearest":
        attrs["nearest_mode"] = ["round_prefer_floor", "round_prefer_ceil", "floor",
                                 "ceil"][int(rng.integers(4))]
    return resize.ResizeOp, [_floats(rng, shape, FLOAT_DTYPES[int(rng.integers(3))])], attrs


# -- movement ---------------------------------------------------------------------------------


def _any_array(rng, shape) -> np.ndarray:
    kind = int(rng.integers(4))
    if kind == 0:
        return rng.integers(-50, 50, shape).astype(np.int32)
    if kind == 1:
        return rng.random(shape) < 0.5
    return _floats(rng, shape, _float_dtype(rng))


def _factor_shape(rng, shape) -> tuple[int, ...]:
    """Another shape of as many elements: dims split into factors or merged."""
    dims = []
    for d in shape:
        f = [k for k in range(2, d + 1) if d % k == 0]
        if f and rng.random() < 0.4:
            k = int(rng.choice(f))
            dims += [d // k, k]
        else:
            dims.append(d)
    merged = []
    for d in dims:
        if merged and rng.random() < 0.3:
            merged[-1] *= d
        else:
            merged.append(d)
    if rng.random() < 0.2:
        merged.insert(int(rng.integers(0, len(merged) + 1)), 1)
    return tuple(merged)


def _reshape(rng) -> Case:
    shape = _shape(rng, int(rng.integers(1, 5)))
    return movement.ReshapeOp, [_any_array(rng, shape)], {"shape": _factor_shape(rng, shape)}


def _transpose(rng) -> Case:
    rank = int(rng.integers(1, 6))
    shape = _shape(rng, rank)
    perm = [int(p) for p in rng.permutation(rank)]
    return movement.TransposeOp, [_any_array(rng, shape)], {"perm": perm}


def _relabel(rng) -> Case:
    """A reshape -> transpose -> reshape of random factors (half of them head splits)."""
    shape = _shape(rng, int(rng.integers(1, 5)))
    view = _factor_shape(rng, shape)
    perm = [int(p) for p in rng.permutation(len(view))]
    moved = tuple(view[p] for p in perm)
    result = _factor_shape(rng, moved) if rng.random() < 0.5 else moved
    attrs = {"shape": list(result), "view": list(view), "perm": perm}
    return movement.RelabelOp, [_any_array(rng, shape)], attrs


def _broadcast(rng) -> Case:
    out = _shape(rng, int(rng.integers(1, 5)))
    src = _broadcastable(rng, out)
    target = list(out) if rng.random() < 0.7 else [1 if rng.random() < 0.3 else d for d in out]
    return movement.BroadCastOp, [_any_array(rng, src)], {"shape": target}


def _slice(rng) -> Case:
    shape = _shape(rng, int(rng.integers(1, 5)), 1, 9)
    axes = [int(a) for a in rng.permutation(len(shape))[: int(rng.integers(1, len(shape) + 1))]]
    starts, ends, steps = [], [], []
    for a in axes:
        d = shape[a]
        step = int(rng.choice([1, 1, 2, 3, -1, -2]))
        s, e = int(rng.integers(-d, d + 1)), int(rng.integers(-d - 1, d + 2))
        starts.append(s)
        ends.append(e)
        steps.append(step)
    attrs = dict(starts=starts, ends=ends, axes=axes, steps=steps)
    return movement.SliceOp, [_any_array(rng, shape)], attrs


def _concat(rng) -> Case:
    rank = int(rng.integers(1, 5))
    shape = list(_shape(rng, rank))
    axis = int(rng.integers(-rank, rank))
    arrays = []
    kind = _any_array(rng, (1,))
    for _ in range(int(rng.integers(1, 4))):
        s = list(shape)
        s[axis] = int(rng.integers(0, 5))
        arrays.append(_same_kind(rng, kind, tuple(s)))
    return movement.ConcatenateOp, arrays, {"axis": axis}


def _same_kind(rng, like: np.ndarray, shape) -> np.ndarray:
    if like.dtype == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(like.dtype, np.integer):
        return rng.integers(-50, 50, shape).astype(like.dtype)
    return _floats(rng, shape, like.dtype)


def _split(rng) -> Case:
    rank = int(rng.integers(1, 5))
    shape = _shape(rng, rank, 1, 9)
    axis = int(rng.integers(-rank, rank))
    d = shape[axis]
    cuts = sorted(int(c) for c in rng.integers(0, d + 1, int(rng.integers(0, 3))))
    edges = [0, *cuts, d]
    split = [b - a for a, b in zip(edges, edges[1:])]
    return movement.SplitOp, [_any_array(rng, shape)], {"axis": axis, "split": split}


def _tile(rng) -> Case:
    shape = _shape(rng, int(rng.integers(1, 5)), 1, 5)
    repeats = [int(r) for r in rng.integers(1, 4, len(shape))]
    return movement.TileOp, [_any_array(rng, shape)], {"repeats": repeats}


def _pad(rng) -> Case:
    shape = _shape(rng, int(rng.integers(1, 5)), 2, 7)
    mode = ["constant", "reflect", "edge", "wrap"][int(rng.integers(4))]
    high = [d if mode == "reflect" else d + 3 for d in shape]
    pads = [int(rng.integers(0, h)) for h in high] + [int(rng.integers(0, h)) for h in high]
    x = _floats(rng, shape, _float_dtype(rng))
    return movement.PadOp, [x], {"pads": pads, "mode": mode, "value": float(rng.integers(-2, 3))}


# -- indexing ---------------------------------------------------------------------------------


def _gather(rng) -> Case:
    data_shape = _shape(rng, int(rng.integers(1, 4)))
    axis = int(rng.integers(-len(data_shape), len(data_shape)))
    d = data_shape[axis]
    indices = rng.integers(-d, d, _shape(rng, int(rng.integers(0, 3)))).astype(np.int64)
    return indexing.GatherOp, [_any_array(rng, data_shape), indices], {"axis": axis}


def _gather_elements(rng) -> Case:
    rank = int(rng.integers(1, 4))
    data_shape = _shape(rng, rank)
    axis = int(rng.integers(-rank, rank))
    ishape = list(data_shape)
    ishape[axis] = int(rng.integers(1, 6))
    ishape = [int(rng.integers(1, s + 1)) if i != axis % rank else s
              for i, s in enumerate(ishape)]
    d = data_shape[axis]
    indices = rng.integers(-d, d, ishape).astype(np.int64)
    return indexing.GatherElementsOp, [_any_array(rng, data_shape), indices], {"axis": axis}


def _scatter_nd(rng) -> Case:
    data_shape = _shape(rng, int(rng.integers(1, 4)))
    q = int(rng.integers(1, len(data_shape) + 1))
    batch = _shape(rng, int(rng.integers(1, 3)), 1, 3)
    # distinct index tuples, so the order of updates does not matter
    space = np.array(list(np.ndindex(*data_shape[:q])))
    count = min(int(np.prod(batch)), len(space))
    batch = (count,)
    chosen = space[rng.permutation(len(space))[:count]]
    indices = chosen.reshape(*batch, q).astype(np.int64)
    data = _floats(rng, data_shape)
    updates = _floats(rng, (*batch, *data_shape[q:]))
    return indexing.ScatterNDOp, [data, indices, updates], {}


# -- backend ------------------------------------------------------------------------------------


def _identity(cls, attrs=None) -> Callable[[np.random.Generator], Case]:
    def make(rng) -> Case:
        shape = _shape(rng, int(rng.integers(1, 5)))
        return cls, [_any_array(rng, shape)], dict(attrs or {})

    return make


# -- ops added with the frontend's breadth (issue 14) --------------------------------------


def _mod(rng) -> Case:
    shape = _shape(rng, int(rng.integers(1, 5)))
    other = _broadcastable(rng, shape)
    if rng.random() < 0.5:
        a = rng.integers(-20, 20, shape).astype(np.int32)
        b = (rng.integers(1, 9, other) * rng.choice([-1, 1], other)).astype(np.int32)
        return elementwise.ModOp, [a, b], {"fmod": bool(rng.random() < 0.5)}
    a = _floats(rng, shape, np.float32, 10)
    b = rng.uniform(0.5, 3, other).astype(np.float32)
    return elementwise.ModOp, [a, b], {"fmod": True}


def _topk(rng) -> Case:
    shape = _shape(rng, int(rng.integers(1, 4)), 1, 8)
    axis = int(rng.integers(-len(shape), len(shape)))
    x = rng.integers(-5, 5, shape).astype(np.float32)  # ties
    return sort.TopKOp, [x], {"k": int(rng.integers(0, shape[axis] + 1)), "axis": axis,
                              "largest": bool(rng.random() < 0.5)}


def _matmul_integer(rng) -> Case:
    batch = _shape(rng, int(rng.integers(0, 3)), 1, 4)
    m, k, n = (int(v) for v in rng.integers(1, 9, 3))
    dtype = np.int8 if rng.random() < 0.5 else np.int32
    a = rng.integers(-128, 128, (*batch, m, k)).astype(dtype)
    b = rng.integers(-128, 128, (*_broadcastable(rng, batch), k, n)).astype(dtype)
    return quant.MatMulIntegerOp, [a, b], {}


def _conv_integer(rng) -> Case:
    _, (x, weight, *_), attrs = _conv(rng)
    if attrs["data_format"] == "NHWC":
        x = x.transpose(0, 3, 1, 2)
    if attrs["weight_format"] == "HWOI":
        weight = weight.transpose(2, 3, 0, 1)
    x = rng.integers(-128, 128, x.shape).astype(np.int8)
    weight = rng.integers(-128, 128, weight.shape).astype(np.int8)
    attrs = {k: attrs[k] for k in ("strides", "pads", "dilations", "groups")}
    return quant.ConvIntegerOp, [x, weight], attrs


E = elementwise
CASES: dict[str, Callable[[np.random.Generator], Case]] = {
    "Add": _binary(E.AddOp, "numeric"), "Sub": _binary(E.SubOp, "numeric"),
    "Mul": _binary(E.MulOp, "numeric"), "Div": _binary(E.DivOp, "numeric"),
    "Max": _binary(E.MaxOp, "numeric"), "Min": _binary(E.MinOp, "numeric"),
    "Pow": _binary(E.PowOp, "positive"), "Equal": _binary(E.EqualOp, "numeric"),
    "Less": _binary(E.LessOp, "numeric"), "LessOrEqual": _binary(E.LessOrEqualOp, "numeric"),
    "Greater": _binary(E.GreaterOp, "numeric"),
    "GreaterOrEqual": _binary(E.GreaterOrEqualOp, "numeric"),
    "And": _binary(E.AndOp, "bool"), "Or": _binary(E.OrOp, "bool"),
    "Where": _where,
    "Relu": _unary(E.ReluOp),
    "LeakyRelu": _unary(E.LeakyReluOp, attrs=lambda r: {"alpha": float(r.uniform(0, 0.3))}),
    "Clip": _unary(E.ClipOp, attrs=lambda r: {"min": -0.5, "max": float(r.uniform(0, 2))}),
    "Sigmoid": _unary(E.SigmoidOp), "Tanh": _unary(E.TanhOp), "Erf": _unary(E.ErfOp),
    "Gelu": _unary(E.GeluOp, attrs=lambda r: {"approximate": str(r.choice(["none", "tanh"]))}),
    "Silu": _unary(E.SiluOp), "HardSigmoid": _unary(E.HardSigmoidOp),
    "HardSwish": _unary(E.HardSwishOp), "Exp": _unary(E.ExpOp),
    "Log": _unary(E.LogOp, "positive"), "Sqrt": _unary(E.SqrtOp, "positive"),
    "Rsqrt": _unary(E.RsqrtOp, "positive"), "Reciprocal": _unary(E.ReciprocalOp, "positive"),
    "Abs": _unary(E.AbsOp), "Neg": _unary(E.NegOp), "Not": _unary(E.NotOp, "bool"),
    "Sin": _unary(E.SinOp), "Cos": _unary(E.CosOp), "Floor": _unary(E.FloorOp),
    "Ceil": _unary(E.CeilOp), "Cast": _cast,
    "Mod": _mod, "Round": _unary(E.RoundOp), "Atan": _unary(E.AtanOp),
    "TopK": _topk, "MatMulInteger": _matmul_integer, "ConvInteger": _conv_integer,
    "Conv": _conv, "Gemm": _gemm,
    "BatchNorm_Inference": _batchnorm,
    "LayerNorm": _last_dims_norm(norm.LayerNormOp, 2),
    "RMSNorm": _last_dims_norm(norm.RMSNormOp, 1),
    "Softmax": _softmax,
    "Reduce": _reduce, "Pool": _pool, "Resize": _resize,
    "Reshape": _reshape, "Transpose": _transpose, "Relabel": _relabel,
    "BroadCast": _broadcast, "Slice": _slice,
    "Concatenate": _concat, "Split": _split, "Tile": _tile, "Pad": _pad,
    "Gather": _gather, "GatherElements": _gather_elements, "ScatterND": _scatter_nd,
    "ChannelNorm": _identity(backend.ChannelNormOp, {"direction": True}),
    "LoadVar": _identity(backend.LoadVarOp), "StoreVar": _identity(backend.StoreVarOp),
}

NOT_SLICED = {"Group", "Yield", "Constant", "LoadConst"}
"""Ops outside the slicing contract: containers, terminators and compile-time constants."""
