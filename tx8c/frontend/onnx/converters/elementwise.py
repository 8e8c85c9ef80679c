"""Converters of ONNX element-wise ops to tx8be CT ops."""

from __future__ import annotations

import numpy as np

from tx8c.dialect.ops import elementwise as ew
from tx8c.frontend.onnx.compose import dtype_name, like
from tx8c.frontend.onnx.context import NodeContext, Value
from tx8c.frontend.onnx.loader import OnnxDtypeError
from tx8c.frontend.onnx.registry import converter
from tx8c.frontend.onnx.types import cast_target_name

_BINARY = {
    "Add": ew.AddOp, "Sub": ew.SubOp, "Mul": ew.MulOp, "Div": ew.DivOp, "Pow": ew.PowOp,
    "Equal": ew.EqualOp, "Less": ew.LessOp, "LessOrEqual": ew.LessOrEqualOp,
    "Greater": ew.GreaterOp, "GreaterOrEqual": ew.GreaterOrEqualOp, "And": ew.AndOp,
    "Or": ew.OrOp,
}
_UNARY = {
    "Relu": ew.ReluOp, "Sigmoid": ew.SigmoidOp, "Tanh": ew.TanhOp, "Erf": ew.ErfOp,
    "Exp": ew.ExpOp, "Log": ew.LogOp, "Sqrt": ew.SqrtOp, "Reciprocal": ew.ReciprocalOp,
    "Abs": ew.AbsOp, "Neg": ew.NegOp, "Not": ew.NotOp, "Sin": ew.SinOp, "Cos": ew.CosOp,
    "Floor": ew.FloorOp, "Ceil": ew.CeilOp, "HardSwish": ew.HardSwishOp,
}


@converter(*_BINARY)
def convert_binary(ctx: NodeContext) -> Value:
    lhs, rhs = ctx.input(0), ctx.input(1)
    if ctx.op_type == "Div":
        check_integer_divisor(ctx, rhs)
    if ctx.op_type == "Pow" and rhs.dtype != lhs.dtype:
        rhs = ctx.emit(ew.CastOp, [rhs], to=dtype_name(lhs.dtype))
    return ctx.emit(_BINARY[ctx.op_type], [lhs, rhs])


def check_integer_divisor(ctx: NodeContext, divisor: Value) -> None:
    """An integer division by a compile-time zero is undefined in ONNX: refuse it rather
    than compile whatever numpy gives."""
    if (divisor.is_const and np.issubdtype(divisor.dtype, np.integer)
            and np.any(divisor.const == 0)):
        raise ctx.error(
            f"divides integers by zero (input #1 '{ctx.node.input[1]}' holds a 0); the "
            "result is undefined. Fix the model's divisor."
        )


@converter("Max", "Min", "Sum", "Mean")
def convert_variadic(ctx: NodeContext) -> Value:
    op_cls = {"Max": ew.MaxOp, "Min": ew.MinOp, "Sum": ew.AddOp, "Mean": ew.AddOp}[ctx.op_type]
    values = [ctx.input(i) for i in range(len(ctx.inputs))]
    acc = values[0]
    for v in values[1:]:
        acc = ctx.emit(op_cls, [acc, v])
    if ctx.op_type == "Mean" and len(values) > 1:
        acc = ctx.emit(ew.DivOp, [acc, like(ctx, len(values), acc)])
    return acc


@converter("Xor")
def convert_xor(ctx: NodeContext) -> Value:
    return ctx.emit(ew.NotOp, [ctx.emit(ew.EqualOp, [ctx.input(0), ctx.input(1)])])


@converter("Where")
def convert_where(ctx: NodeContext) -> Value:
    return ctx.emit(ew.WhereOp, [ctx.input(0), ctx.input(1), ctx.input(2)])


@converter(*_UNARY)
def convert_unary(ctx: NodeContext) -> Value:
    return ctx.emit(_UNARY[ctx.op_type], [ctx.input(0)])


@converter("LeakyRelu")
def convert_leaky_relu(ctx: NodeContext) -> Value:
    return ctx.emit(ew.LeakyReluOp, [ctx.input(0)], alpha=ctx.attr("alpha", 0.01))


@converter("HardSigmoid")
def convert_hard_sigmoid(ctx: NodeContext) -> Value:
    return ctx.emit(
        ew.HardSigmoidOp, [ctx.input(0)], alpha=ctx.attr("alpha", 0.2), beta=ctx.attr("beta", 0.5)
    )


@converter("Gelu")
def convert_gelu(ctx: NodeContext) -> Value:
    return ctx.emit(ew.GeluOp, [ctx.input(0)], approximate=ctx.attr("approximate", "none"))


@converter("Clip")
def convert_clip(ctx: NodeContext) -> Value:
    if ctx.opset < 11:
        lo, hi = ctx.attr("min"), ctx.attr("max")
    else:
        lo = ctx.optional_const(1)
        hi = ctx.optional_const(2)
    lo = None if lo is None else float(np.asarray(lo).reshape(-1)[0])
    hi = None if hi is None else float(np.asarray(hi).reshape(-1)[0])
    return ctx.emit(ew.ClipOp, [ctx.input(0)], min=lo, max=hi)


@converter("Cast")
def convert_cast(ctx: NodeContext) -> Value:
    x = ctx.input(0)
    to = ctx.attr("to")
    if x.is_const:  # shape arithmetic may cast to types tx8be does not hold (double)
        from tx8c.frontend.onnx.types import numpy_dtype_of

        return ctx.constant(x.const.astype(numpy_dtype_of(to)))
    try:
        name = cast_target_name(to)
    except ValueError as e:
        raise OnnxDtypeError(
            f"node '{ctx.name}' (Cast): casting to {e} is not supported at run time"
        ) from None
    return ctx.emit(ew.CastOp, [x], to=name)


@converter("CastLike")
def convert_cast_like(ctx: NodeContext) -> Value:
    x, target = ctx.input(0), ctx.input(1)
    if x.is_const:
        return ctx.constant(x.const.astype(target.dtype))
    return ctx.emit(ew.CastOp, [x], to=dtype_name(target.dtype))


@converter("PRelu")
def convert_prelu(ctx: NodeContext) -> Value:
    """max(x, 0) + slope * min(x, 0)."""
    x, slope = ctx.input(0), ctx.input(1)
    zero = like(ctx, 0, x)
    pos = ctx.emit(ew.MaxOp, [x, zero])
    neg = ctx.emit(ew.MinOp, [x, zero])
    return ctx.emit(ew.AddOp, [pos, ctx.emit(ew.MulOp, [neg, slope])])


@converter("Elu")
def convert_elu(ctx: NodeContext) -> Value:
    """x if x > 0 else alpha * (exp(x) - 1)."""
    x = ctx.input(0)
    alpha = ctx.attr("alpha", 1.0)
    expm1 = ctx.emit(ew.SubOp, [ctx.emit(ew.ExpOp, [x]), like(ctx, 1, x)])
    neg = ctx.emit(ew.MulOp, [expm1, like(ctx, alpha, x)])
    return ctx.emit(ew.WhereOp, [ctx.emit(ew.GreaterOp, [x, like(ctx, 0, x)]), x, neg])


@converter("Softplus")
def convert_softplus(ctx: NodeContext) -> Value:
    x = ctx.input(0)
    return ctx.emit(ew.LogOp, [ctx.emit(ew.AddOp, [ctx.emit(ew.ExpOp, [x]), like(ctx, 1, x)])])


@converter("Identity", "Dropout")
def convert_identity(ctx: NodeContext) -> Value | list[Value]:
    """Identity and (inference) Dropout disappear; Dropout's mask output is all true."""
    x = ctx.input(0)
    training = ctx.op_type == "Dropout" and ctx.has_input(2) and np.any(ctx.const(2))
    ratio = float(np.asarray(ctx.optional_const(1, 0.5))) if training else 0.0
    if training and ratio != 0.0:  # random masks cannot be compiled; ratio 0 is identity
        raise ctx.error("training_mode = true is not supported; export in inference mode")
    if ctx.op_type == "Dropout" and ctx.num_outputs > 1 and ctx.node.output[1]:
        return [x, ctx.constant(np.ones(x.shape, dtype=bool))]
    return x


@converter("IsNaN")
def convert_isnan(ctx: NodeContext) -> Value:
    """x != x, the one value not equal to itself."""
    x = ctx.input(0)
    return ctx.emit(ew.NotOp, [ctx.emit(ew.EqualOp, [x, x])])


@converter("IsInf")
def convert_isinf(ctx: NodeContext) -> Value:
    x = ctx.input(0)
    pos, neg = ctx.attr("detect_positive", 1), ctx.attr("detect_negative", 1)
    inf = like(ctx, np.inf, x)
    if pos and neg:
        return ctx.emit(ew.EqualOp, [ctx.emit(ew.AbsOp, [x]), inf])
    if pos:
        return ctx.emit(ew.EqualOp, [x, inf])
    if neg:
        return ctx.emit(ew.EqualOp, [x, like(ctx, -np.inf, x)])
    return ctx.constant(np.zeros(x.shape, dtype=bool))
