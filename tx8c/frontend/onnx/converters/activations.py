"""Converters of ONNX activations that are compositions of tx8be element-wise ops:
Mish, Selu, Celu, Softsign, ThresholdedRelu, Shrink."""

from __future__ import annotations

from tx8c.dialect.ops import elementwise as ew
from tx8c.frontend.onnx.compose import add, composed_unary, div, like, mul, sub, where
from tx8c.frontend.onnx.context import NodeContext, Value


def _expm1_scaled(ctx: NodeContext, x: Value, alpha: float) -> Value:
    """alpha * (exp(x) - 1)."""
    expm1 = sub(ctx, ctx.emit(ew.ExpOp, [x]), like(ctx, 1, x))
    return mul(ctx, expm1, like(ctx, alpha, x))


@composed_unary("Mish")
def convert_mish(ctx: NodeContext, x: Value) -> Value:
    """x * tanh(softplus(x)) as x * n / (n + 2) with n = e^x (e^x + 2): no log(1 + tiny)
    to lose precision for negative x; x itself above 20 (where e^2x would overflow and
    the factor is 1 in float32)."""
    e = ctx.emit(ew.ExpOp, [x])
    n = mul(ctx, e, add(ctx, e, like(ctx, 2, x)))
    formula = mul(ctx, x, div(ctx, n, add(ctx, n, like(ctx, 2, x))))
    return where(ctx, ctx.emit(ew.GreaterOp, [x, like(ctx, 20, x)]), x, formula)


@composed_unary("Selu")
def convert_selu(ctx: NodeContext, x: Value) -> Value:
    """gamma * (x if x > 0 else alpha * (exp(x) - 1))."""
    alpha = ctx.attr("alpha", 1.67326319217681884765625)
    gamma = ctx.attr("gamma", 1.05070102214813232421875)
    positive = ctx.emit(ew.GreaterOp, [x, like(ctx, 0, x)])
    inner = where(ctx, positive, x, _expm1_scaled(ctx, x, alpha))
    return mul(ctx, inner, like(ctx, gamma, x))


@composed_unary("Celu")
def convert_celu(ctx: NodeContext, x: Value) -> Value:
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    alpha = ctx.attr("alpha", 1.0)
    if alpha == 0:
        raise ctx.error("alpha must not be 0 (Celu divides by it)")
    zero = like(ctx, 0, x)
    negative = _expm1_scaled(ctx, div(ctx, x, like(ctx, alpha, x)), alpha)
    return add(ctx, ctx.emit(ew.MaxOp, [x, zero]), ctx.emit(ew.MinOp, [negative, zero]))


@composed_unary("Softsign")
def convert_softsign(ctx: NodeContext, x: Value) -> Value:
    return div(ctx, x, add(ctx, ctx.emit(ew.AbsOp, [x]), like(ctx, 1, x)))


@composed_unary("ThresholdedRelu")
def convert_thresholded_relu(ctx: NodeContext, x: Value) -> Value:
    above = ctx.emit(ew.GreaterOp, [x, like(ctx, ctx.attr("alpha", 1.0), x)])
    return where(ctx, above, x, like(ctx, 0, x))


@composed_unary("Shrink")
def convert_shrink(ctx: NodeContext, x: Value) -> Value:
    """x + bias below -lambd, x - bias above lambd, 0 between."""
    lambd, bias = ctx.attr("lambd", 0.5), ctx.attr("bias", 0.0)
    below = ctx.emit(ew.LessOp, [x, like(ctx, -lambd, x)])
    above = ctx.emit(ew.GreaterOp, [x, like(ctx, lambd, x)])
    inner = where(ctx, above, sub(ctx, x, like(ctx, bias, x)), like(ctx, 0, x))
    return where(ctx, below, add(ctx, x, like(ctx, bias, x)), inner)


@composed_unary("Swish")
def convert_swish(ctx: NodeContext, x: Value) -> Value:
    """x * sigmoid(alpha * x) (opset 24)."""
    alpha = ctx.attr("alpha", 1.0)
    scaled = x if alpha == 1.0 else mul(ctx, x, like(ctx, alpha, x))
    return mul(ctx, x, ctx.emit(ew.SigmoidOp, [scaled]))
