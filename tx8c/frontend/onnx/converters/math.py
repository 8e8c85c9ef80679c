"""Converters of ONNX math ops: Mod, Round, Sign, trigonometric and hyperbolic functions.

Mod, Round and Atan have tx8be ops (an exact float remainder, halves to even, and the
arc tangent have no composition of the others). The rest are composed, with the care
floating point needs: where the textbook formula cancels (sinh, asinh and atanh near 0)
a short Taylor series takes over, where it overflows (cosh, sinh near 89, asinh and acosh
beyond 1e18) a rewritten form does; every branch is exact to a few ulps of float32 in
its range (tests compare with onnxruntime across the ranges).
"""

from __future__ import annotations

import math

import numpy as np

from tx8c.dialect.ops import elementwise as ew
from tx8c.frontend.onnx.compose import add, composed_unary, div, like, mul, sub, where
from tx8c.frontend.onnx.context import NodeContext, Value
from tx8c.frontend.onnx.converters.elementwise import check_integer_divisor
from tx8c.frontend.onnx.registry import converter

SERIES_BELOW = 0.125
"""|x| under which sinh, asinh and atanh use their Taylor series (the next term is below
1e-8 relative there)."""
LARGE = 1e18
"""|x| over which asinh and acosh use log(2|x|) (x * x overflows float32 near 1.8e19)."""


@converter("Mod")
def convert_mod(ctx: NodeContext) -> Value:
    """fmod = 1, or integers: tx8be.Mod. Floats with fmod = 0 (allowed from opset 28):
    the remainder with the sign of the divisor, from the exact fmod: r + b where r is not
    0 and its sign differs from b's."""
    a, b = ctx.input(0), ctx.input(1)
    check_integer_divisor(ctx, b)
    fmod = bool(ctx.attr("fmod", 0))
    is_float = np.issubdtype(a.dtype, np.floating) or a.dtype.name == "bfloat16"
    if fmod or not is_float:
        return ctx.emit(ew.ModOp, [a, b], fmod=fmod)
    r = ctx.emit(ew.ModOp, [a, b], fmod=True)
    zero = like(ctx, 0, r)
    signs_differ = ctx.emit(ew.NotOp, [ctx.emit(ew.EqualOp, [
        ctx.emit(ew.LessOp, [r, zero]), ctx.emit(ew.LessOp, [b, zero])])])
    nonzero = ctx.emit(ew.NotOp, [ctx.emit(ew.EqualOp, [r, zero])])
    return where(ctx, ctx.emit(ew.AndOp, [signs_differ, nonzero]), add(ctx, r, b), r)


@converter("Round")
def convert_round(ctx: NodeContext) -> Value:
    return ctx.emit(ew.RoundOp, [ctx.input(0)])


@converter("Sign")
def convert_sign(ctx: NodeContext) -> Value:
    x = ctx.input(0)  # exact in any type: no float32 detour
    zero = like(ctx, 0, x)
    negative = where(ctx, ctx.emit(ew.LessOp, [x, zero]), like(ctx, -1, x), zero)
    return where(ctx, ctx.emit(ew.GreaterOp, [x, zero]), like(ctx, 1, x), negative)


# --------------------------------------------------------------------------------------
# Trigonometric
# --------------------------------------------------------------------------------------


@composed_unary("Tan")
def convert_tan(ctx: NodeContext, x: Value) -> Value:
    return div(ctx, ctx.emit(ew.SinOp, [x]), ctx.emit(ew.CosOp, [x]))


@converter("Atan")
def convert_atan(ctx: NodeContext) -> Value:
    return ctx.emit(ew.AtanOp, [ctx.input(0)])


def _one_minus_x_one_plus_x(ctx: NodeContext, x: Value) -> tuple[Value, Value]:
    one = like(ctx, 1, x)
    return sub(ctx, one, x), add(ctx, one, x)


@composed_unary("Asin")
def convert_asin(ctx: NodeContext, x: Value) -> Value:
    """atan(x / sqrt((1 - x)(1 + x))): exact near +-1, where 1 - x * x is not."""
    lo, hi = _one_minus_x_one_plus_x(ctx, x)
    root = ctx.emit(ew.SqrtOp, [mul(ctx, lo, hi)])
    return ctx.emit(ew.AtanOp, [div(ctx, x, root)])


@composed_unary("Acos")
def convert_acos(ctx: NodeContext, x: Value) -> Value:
    """2 atan(sqrt((1 - x) / (1 + x))): no cancellation near 1 (pi/2 - asin has it)."""
    lo, hi = _one_minus_x_one_plus_x(ctx, x)
    half = ctx.emit(ew.AtanOp, [ctx.emit(ew.SqrtOp, [div(ctx, lo, hi)])])
    return mul(ctx, half, like(ctx, 2, x))


# --------------------------------------------------------------------------------------
# Hyperbolic
# --------------------------------------------------------------------------------------


def _polynomial(ctx: NodeContext, x: Value, coefficients: list[float]) -> Value:
    """x * (c0 + c1 x^2 + c2 x^4 + ...), by Horner's rule in x^2."""
    square = mul(ctx, x, x)
    acc = like(ctx, coefficients[-1], x)
    for c in reversed(coefficients[:-1]):
        acc = add(ctx, mul(ctx, acc, square), like(ctx, c, x))
    return mul(ctx, x, acc)


def _small(ctx: NodeContext, x: Value) -> Value:
    return ctx.emit(ew.LessOp, [ctx.emit(ew.AbsOp, [x]), like(ctx, SERIES_BELOW, x)])


def _half_exp_abs(ctx: NodeContext, x: Value) -> Value:
    """exp(|x|) / 2 as exp(|x| - ln 2): finite as long as sinh and cosh are."""
    shifted = sub(ctx, ctx.emit(ew.AbsOp, [x]), like(ctx, math.log(2), x))
    return ctx.emit(ew.ExpOp, [shifted])


def _sign(ctx: NodeContext, x: Value) -> Value:
    zero = like(ctx, 0, x)
    return where(ctx, ctx.emit(ew.LessOp, [x, zero]), like(ctx, -1, x), like(ctx, 1, x))


@composed_unary("Sinh")
def convert_sinh(ctx: NodeContext, x: Value) -> Value:
    """sign(x) (e - 1/(4e)) with e = exp(|x|)/2; the series x + x^3/6 + ... near 0."""
    e = _half_exp_abs(ctx, x)
    large = mul(ctx, _sign(ctx, x), sub(ctx, e, div(ctx, like(ctx, 0.25, x), e)))
    series = _polynomial(ctx, x, [1.0, 1 / 6, 1 / 120, 1 / 5040])
    return where(ctx, _small(ctx, x), series, large)


@composed_unary("Cosh")
def convert_cosh(ctx: NodeContext, x: Value) -> Value:
    """e + 1/(4e) with e = exp(|x|)/2."""
    e = _half_exp_abs(ctx, x)
    return add(ctx, e, div(ctx, like(ctx, 0.25, x), e))


def _log_of_2x(ctx: NodeContext, x: Value) -> Value:
    return add(ctx, ctx.emit(ew.LogOp, [x]), like(ctx, math.log(2), x))


@composed_unary("Asinh")
def convert_asinh(ctx: NodeContext, x: Value) -> Value:
    """sign(x) log(|x| + sqrt(x^2 + 1)); a series near 0, log(2|x|) for huge |x|."""
    a = ctx.emit(ew.AbsOp, [x])
    root = ctx.emit(ew.SqrtOp, [add(ctx, mul(ctx, a, a), like(ctx, 1, x))])
    middle = ctx.emit(ew.LogOp, [add(ctx, a, root)])
    huge = ctx.emit(ew.GreaterOp, [a, like(ctx, LARGE, x)])
    magnitude = where(ctx, huge, _log_of_2x(ctx, a), middle)
    series = _polynomial(ctx, x, [1.0, -1 / 6, 3 / 40, -15 / 336])
    return where(ctx, _small(ctx, x), series, mul(ctx, _sign(ctx, x), magnitude))


@composed_unary("Acosh")
def convert_acosh(ctx: NodeContext, x: Value) -> Value:
    """log(x + sqrt((x - 1)(x + 1))) (exact near 1); log(2x) for huge x."""
    one = like(ctx, 1, x)
    root = ctx.emit(ew.SqrtOp, [mul(ctx, sub(ctx, x, one), add(ctx, x, one))])
    middle = ctx.emit(ew.LogOp, [add(ctx, x, root)])
    huge = ctx.emit(ew.GreaterOp, [x, like(ctx, LARGE, x)])
    return where(ctx, huge, _log_of_2x(ctx, x), middle)


@composed_unary("Atanh")
def convert_atanh(ctx: NodeContext, x: Value) -> Value:
    """log((1 + x) / (1 - x)) / 2; the series x + x^3/3 + ... near 0."""
    lo, hi = _one_minus_x_one_plus_x(ctx, x)
    formula = mul(ctx, ctx.emit(ew.LogOp, [div(ctx, hi, lo)]), like(ctx, 0.5, x))
    series = _polynomial(ctx, x, [1.0, 1 / 3, 1 / 5, 1 / 7])
    return where(ctx, _small(ctx, x), series, formula)
