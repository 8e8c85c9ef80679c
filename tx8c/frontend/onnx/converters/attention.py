"""Attention (opset 23, its sliding windows from 24) and RotaryEmbedding (opset 23),
composed.

Attention follows ONNX's definition step for step: 3-D inputs split into heads; the
scale (default 1/sqrt(head size)) applied as its square root to Q and K; past_key/value
concatenated in front (present_key/value); an additive bias from attn_mask (boolean:
0 / -inf; shorter than the keys: padded with -inf), is_causal (bottom-right aligned
after the past), the sliding window and nonpad_kv_seqlen; K and V heads repeated for
grouped-query attention; Q @ K^T, softcap, + bias, Softmax (in softmax_precision), rows
whose every key is masked set to 0; @ V. The four outputs are Y, present_key,
present_value and qk_matmul_output (in the mode asked for).

RotaryEmbedding rotates the first rotary_embedding_dim features of each head by the
position's angle: halves (x1, x2) or interleaved pairs, (x1 cos - x2 sin, x1 sin + x2 cos),
with cos/sin gathered by position_ids when given.
"""

from __future__ import annotations

import math

import numpy as np

from tx8c.dialect.ops import elementwise as ew
from tx8c.dialect.ops.indexing import GatherOp
from tx8c.frontend.onnx.compose import (
    add,
    broadcast,
    cast,
    concat,
    div,
    iota,
    like,
    matmul,
    mul,
    pad,
    reduce,
    reshape,
    slice_axis,
    softmax,
    sub,
    transpose,
    where,
)
from tx8c.frontend.onnx.context import NodeContext, Value
from tx8c.frontend.onnx.registry import converter
from tx8c.frontend.onnx.types import numpy_dtype_of

NEG_INF = -np.inf


def _heads(ctx: NodeContext, x: Value, heads: int, name: str) -> Value:
    """A 3-D [B, S, heads * D] input as [B, heads, S, D]."""
    if x.rank == 4:
        return x
    b, s, hidden = x.shape
    if not heads or hidden % heads:
        raise ctx.error(f"{name} has {hidden} features, which {heads} heads do not divide "
                        "(set q_num_heads and kv_num_heads for 3-D inputs)")
    return transpose(ctx, reshape(ctx, x, [b, s, heads, hidden // heads]), [0, 2, 1, 3])


def _mask_bias(ctx: NodeContext, mask: Value, kv_len: int, dtype) -> Value:
    """attn_mask as an additive bias of `dtype`, its last dim padded to `kv_len`."""
    missing = kv_len - mask.shape[-1]
    if missing < 0:
        raise ctx.error(f"attn_mask has {mask.shape[-1]} key positions, more than the "
                        f"{kv_len} keys")
    if mask.dtype == np.bool_:
        if missing:
            mask = pad(ctx, mask, [0] * mask.rank + [0] * (mask.rank - 1) + [missing],
                       value=0.0)
        zero, minus_inf = ctx.constant(np.zeros((), dtype)), ctx.constant(
            np.asarray(NEG_INF, dtype))
        return where(ctx, mask, zero, minus_inf)
    mask = cast(ctx, mask, dtype)
    if missing:
        block = ctx.constant(np.full([*mask.shape[:-1], missing], NEG_INF, dtype))
        mask = concat(ctx, [mask, block], axis=mask.rank - 1)
    return mask


def _frontier_bias(ctx: NodeContext, q_len: int, kv_len: int, offset: Value,
                   left: int, right: int, causal: bool, dtype) -> Value:
    """0 where query i may see key j, -inf elsewhere: causal (j <= i + offset) and/or
    the window (i + offset - left <= j <= i + offset + right); `offset` is a scalar or
    [B, 1, 1, 1] (int64)."""
    i = iota(ctx, q_len, 2, 4)
    j = iota(ctx, kv_len, 3, 4)
    position = add(ctx, i, offset)
    allowed = None

    def both(a, b):
        return b if a is None else ctx.emit(ew.AndOp, [a, b])

    if causal:
        allowed = both(allowed, ctx.emit(ew.LessOrEqualOp, [j, position]))
    if left >= 0:
        allowed = both(allowed, ctx.emit(ew.LessOrEqualOp, [sub(ctx, position, like(
            ctx, left, position)), j]))
    if right >= 0:
        allowed = both(allowed, ctx.emit(ew.LessOrEqualOp, [j, add(ctx, position, like(
            ctx, right, position))]))
    zero, minus_inf = ctx.constant(np.zeros((), dtype)), ctx.constant(np.asarray(NEG_INF,
                                                                                 dtype))
    return where(ctx, allowed, zero, minus_inf)


def _repeat_heads(ctx: NodeContext, x: Value, heads: int) -> Value:
    """[B, kv, S, D] with each head repeated to `heads` heads (h0, h0, h1, h1, ...)."""
    b, kv, s, d = x.shape
    if kv == heads:
        return x
    if heads % kv:
        raise ctx.error(f"{heads} query heads are not a multiple of {kv} key/value heads")
    spread = broadcast(ctx, reshape(ctx, x, [b, kv, 1, s, d]), [b, kv, heads // kv, s, d])
    return reshape(ctx, spread, [b, heads, s, d])


@converter("Attention")
def convert_attention(ctx: NodeContext) -> list[Value]:
    q, k, v = ctx.input(0), ctx.input(1), ctx.input(2)
    if not q.rank == k.rank == v.rank or q.rank not in (3, 4):
        raise ctx.error(f"Q, K and V must all have rank 3 or 4, got {q.rank}, {k.rank}, "
                        f"{v.rank}")
    three_d = q.rank == 3
    q_heads, kv_heads = ctx.attr("q_num_heads"), ctx.attr("kv_num_heads")
    q, k, v = _heads(ctx, q, q_heads, "Q"), _heads(ctx, k, kv_heads, "K"), _heads(
        ctx, v, kv_heads, "V")
    dtype = q.dtype
    scale = ctx.attr("scale")
    root = np.asarray(math.sqrt(scale if scale is not None else 1 / math.sqrt(q.shape[3])),
                      dtype)
    q_scaled, k_scaled = mul(ctx, q, ctx.constant(root)), None
    past_len = 0
    if ctx.has_input(4) != ctx.has_input(5):
        raise ctx.error("past_key and past_value must be given together")
    if ctx.has_input(4):
        past_len = ctx.input(4).shape[2]
        k = concat(ctx, [ctx.input(4), k], axis=2)
        v = concat(ctx, [ctx.input(5), v], axis=2)
    present_key, present_value = k, v
    k_scaled = mul(ctx, k, ctx.constant(root))
    q_len, kv_len = q.shape[2], k.shape[2]

    bias = _attention_bias(ctx, q.shape[0], q_len, kv_len, past_len, dtype)
    heads = q.shape[1]
    scores = matmul(ctx, q_scaled, _repeat_heads(ctx, k_scaled, heads), trans_b=True)
    softcap = ctx.attr("softcap", 0.0)
    if softcap > 0:
        capped = ctx.emit(ew.TanhOp, [div(ctx, scores, like(ctx, softcap, scores))])
        scores = mul(ctx, capped, like(ctx, softcap, scores))
    qk_out = scores
    with_bias = add(ctx, scores, bias) if bias is not None else scores
    if ctx.attr("qk_matmul_output_mode", 0) == 2:
        qk_out = with_bias
    probabilities = _softmax_in(ctx, with_bias, ctx.attr("softmax_precision"))
    if bias is not None:
        probabilities = _zero_fully_masked_rows(ctx, probabilities, bias)
    if ctx.attr("qk_matmul_output_mode", 0) == 3:
        qk_out = probabilities
    y = matmul(ctx, probabilities, _repeat_heads(ctx, v, heads))
    if three_d:
        b, h, s, d = y.shape
        y = reshape(ctx, transpose(ctx, y, [0, 2, 1, 3]), [b, s, h * d])
    return [y, present_key, present_value, qk_out][:max(ctx.num_outputs, 1)]


def _attention_bias(ctx: NodeContext, batch: int, q_len: int, kv_len: int, past_len: int,
                    dtype) -> Value | None:
    """The additive bias of the mask, causality, the window and the padding (or None)."""
    bias = _mask_bias(ctx, ctx.input(3), kv_len, dtype) if ctx.has_input(3) else None
    causal = bool(ctx.attr("is_causal", 0))
    left, right = ctx.attr("left_window_size", -1), ctx.attr("right_window_size", -1)
    nonpad = ctx.input(6) if ctx.has_input(6) else None
    if nonpad is not None and ctx.has_input(4):
        raise ctx.error("nonpad_kv_seqlen cannot be combined with past_key/past_value")
    if causal or left >= 0 or right >= 0:
        if nonpad is not None:
            offset = sub(ctx, reshape(ctx, cast(ctx, nonpad, np.int64), [batch, 1, 1, 1]),
                         ctx.constant(np.asarray(q_len, np.int64)))
        else:
            offset = ctx.constant(np.asarray(past_len, np.int64))
        frontier = _frontier_bias(ctx, q_len, kv_len, offset, left, right, causal, dtype)
        bias = frontier if bias is None else add(ctx, bias, frontier)
    if nonpad is not None:
        keys = iota(ctx, kv_len, 3, 4)
        valid = ctx.emit(ew.LessOp, [keys, reshape(ctx, cast(ctx, nonpad, np.int64),
                                                   [batch, 1, 1, 1])])
        padding = where(ctx, valid, ctx.constant(np.zeros((), dtype)),
                        ctx.constant(np.asarray(NEG_INF, dtype)))
        bias = padding if bias is None else add(ctx, bias, padding)
    return bias


def _softmax_in(ctx: NodeContext, x: Value, precision: int | None) -> Value:
    """Softmax in `softmax_precision`; tx8be.Softmax computes in float32 at least, so a
    float64 request is served in float32 (tx8c has no float64 at run time)."""
    if precision is None:
        return softmax(ctx, x, -1)
    wanted = numpy_dtype_of(precision)
    if wanted == np.float64:
        wanted = np.dtype(np.float32)
    return cast(ctx, softmax(ctx, cast(ctx, x, wanted), -1), x.dtype)


def _zero_fully_masked_rows(ctx: NodeContext, probabilities: Value, bias: Value) -> Value:
    """Rows whose bias is -inf everywhere attend nothing: 0, not Softmax's NaN."""
    if bias.is_const and not np.any(np.all(np.isneginf(bias.const), axis=-1)):
        return probabilities
    masked = ctx.emit(ew.EqualOp, [reduce(ctx, bias, "max", [-1]), like(ctx, NEG_INF, bias)])
    return where(ctx, masked, like(ctx, 0, probabilities), probabilities)


# --------------------------------------------------------------------------------------
# RotaryEmbedding
# --------------------------------------------------------------------------------------


@converter("RotaryEmbedding")
def convert_rotary_embedding(ctx: NodeContext) -> Value:
    x, cos, sin = ctx.input(0), ctx.input(1), ctx.input(2)
    if x.rank == 4:  # [B, H, S, D] -> [B, S, H, D]
        view = transpose(ctx, x, [0, 2, 1, 3])
    elif x.rank == 3:
        heads = ctx.attr("num_heads", 0)
        b, s, hidden = x.shape
        if not heads or hidden % heads:
            raise ctx.error(f"a 3-D input needs num_heads dividing its {hidden} features, "
                            f"got num_heads = {heads}")
        view = reshape(ctx, x, [b, s, heads, hidden // heads])
    else:
        raise ctx.error(f"the input must have rank 3 or 4, got {list(x.shape)}")
    head = view.shape[3]
    dim = ctx.attr("rotary_embedding_dim", 0) or head
    if dim % 2 or dim > head:
        raise ctx.error(f"rotary_embedding_dim {dim} must be even and at most the head size "
                        f"{head}")
    if ctx.has_input(3):
        positions = ctx.input(3)
        cos = ctx.emit(GatherOp, [cos, positions], axis=0)
        sin = ctx.emit(GatherOp, [sin, positions], axis=0)
    if cos.shape[-1] != dim // 2 or sin.shape[-1] != dim // 2:
        raise ctx.error(f"cos_cache and sin_cache must end in rotary_embedding_dim / 2 = "
                        f"{dim // 2}, got {list(cos.shape)} and {list(sin.shape)}")
    b, s = view.shape[:2]
    cos = reshape(ctx, cos, [b, s, 1, dim // 2])
    sin = reshape(ctx, sin, [b, s, 1, dim // 2])
    rotated = _rotate(ctx, slice_axis(ctx, view, 3, 0, dim), cos, sin,
                      bool(ctx.attr("interleaved", 0)))
    if dim < head:
        rotated = concat(ctx, [rotated, slice_axis(ctx, view, 3, dim, head)], axis=3)
    if x.rank == 4:
        return transpose(ctx, rotated, [0, 2, 1, 3])
    return reshape(ctx, rotated, x.shape)


def _rotate(ctx: NodeContext, x: Value, cos: Value, sin: Value, interleaved: bool) -> Value:
    b, s, h, d = x.shape
    if interleaved:
        pairs = reshape(ctx, x, [b, s, h, d // 2, 2])
        x1 = reshape(ctx, slice_axis(ctx, pairs, 4, 0, 1), [b, s, h, d // 2])
        x2 = reshape(ctx, slice_axis(ctx, pairs, 4, 1, 2), [b, s, h, d // 2])
    else:
        x1, x2 = slice_axis(ctx, x, 3, 0, d // 2), slice_axis(ctx, x, 3, d // 2, d)
    real = sub(ctx, mul(ctx, cos, x1), mul(ctx, sin, x2))
    imag = add(ctx, mul(ctx, sin, x1), mul(ctx, cos, x2))
    if interleaved:
        joined = concat(ctx, [reshape(ctx, real, [b, s, h, d // 2, 1]),
                              reshape(ctx, imag, [b, s, h, d // 2, 1])], axis=4)
        return reshape(ctx, joined, [b, s, h, d])
    return concat(ctx, [real, imag], axis=3)
