"""CT element-wise ops: binary (numpy broadcasting), ternary Where, and unary.

Binary ops run on the CT engine as V_VV (both operands the same shape) or V_VS (one
operand broadcast); `vector_mode()` tells which, because the alignment rules of seed 000
depend on it (a V_VS op follows its complete input). Their OpAttr is BOTH: the CT engine
reads compact and channel-aligned data alike.

Layout (seed 001): every op of the family keeps the layout of its data; a broadcast
op takes the layout of its complete operand, and its lower-rank operands are Tensor-class.

Low-precision floats (f16, bf16) are computed in fp32 and rounded to the result type.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import numpy as np
import scipy.special
from xdsl.dialects.builtin import TensorType, i1

from tx8c.dialect.attrs import AlignMode
from tx8c.dialect.base import (
    ALL_DTYPES,
    BOOLS,
    FLOATS,
    NUMERIC,
    Tx8beOp,
    float_attr,
    result_type_like,
    str_attr,
    tx8be_op,
)
from tx8c.dialect.base import (
    tx8be_op as _op,
)
from tx8c.dialect.ops._util import broadcast_shape, upcast
from tx8c.dialect.types import to_numpy_dtype
from tx8c.interfaces.shape_inference import (
    elementwise_view,
    fit_to_operands,
    has_rank,
    keep_operand_layout,
    shape_of,
    unchanged_by,
)

# --------------------------------------------------------------------------------------
# Binary
# --------------------------------------------------------------------------------------


class BroadcastingOp(Tx8beOp):
    """Ops whose operands broadcast to the result (numpy rules): V_VV or V_VS (seed 000)."""

    def _out_shape(self) -> tuple[int, ...] | None:
        if self.results:
            return tuple(self.results[0].type.get_shape())
        return broadcast_shape(*self.input_shapes())

    def vector_mode(self) -> str:
        """"V_VV" when every operand has the result's shape, else "V_VS"."""
        out = self._out_shape()
        return "V_VV" if all(s == out for s in self.input_shapes()) else "V_VS"

    def is_broadcast(self) -> bool:
        return self.vector_mode() == "V_VS"

    def complete_operand(self) -> int:
        """The first data operand that is not broadcast (the first data operand when every
        one is)."""
        out = self._out_shape()
        shapes = self.input_shapes()
        indices = self.DATA_OPERANDS or tuple(range(len(shapes)))
        return next((i for i in indices if shapes[i] == out), indices[0])

    def follows_operand(self) -> int | None:
        """A broadcast (V_VS) op follows its complete operand (seed 000)."""
        return self.complete_operand() if self.is_broadcast() else None

    view_attributes = elementwise_view


class BinaryOp(BroadcastingOp):
    """Two operands, numpy broadcasting, one result."""

    OPERANDS: ClassVar[tuple[str, ...]] = ("lhs", "rhs")
    DTYPES: ClassVar[frozenset[str] | None] = NUMERIC
    RESULT_BOOL: ClassVar[bool] = False
    """Comparisons give i1 whatever their operand type."""
    COMMUTATIVE: ClassVar[bool] = False
    """op(a, b) == op(b, a): rewrites may swap the operands."""

    def infer_shapes(self) -> list[TensorType]:
        lhs, rhs = self.input_types()
        shape = broadcast_shape(tuple(lhs.get_shape()), tuple(rhs.get_shape()))
        if shape is None:
            raise self.fail(
                f"operand shapes {list(lhs.get_shape())} and {list(rhs.get_shape())} "
                "do not broadcast"
            )
        if self.RESULT_BOOL:
            return [TensorType(i1, list(shape))]
        return [result_type_like(shape, lhs)]

    def query_op_attr(self):
        return self.op_attr(
            align_mode=AlignMode.BOTH, mem_inplace=self.vector_mode() == "V_VV"
        )

    # layout rule of the family (module docstring)
    infer_layout = keep_operand_layout
    infer_operand_layouts = fit_to_operands

    def permute_attributes(self, perm):
        """Element-wise: nothing changes; a lower-rank operand is rearranged alongside."""
        return {} if has_rank(self, perm) else None

    def apply(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def compute(self, *inputs: np.ndarray) -> list[np.ndarray]:
        a, b = upcast(*inputs)
        return [np.asarray(self.apply(a, b))]


def _binary(
    name: str, fn: Callable, dtypes=NUMERIC, result_bool: bool = False,
    commutative: bool = False,
):
    """Define a binary op class from its numpy function."""

    def apply(self, a, b):
        return fn(a, b)

    cls = type(
        f"{name}Op",
        (BinaryOp,),
        {
            "name": f"tx8be.{name}",
            "DTYPES": dtypes,
            "RESULT_BOOL": result_bool,
            "COMMUTATIVE": commutative,
            "apply": apply,
            "__doc__": f"Element-wise {name} with numpy broadcasting.",
            "__annotations__": {
                "DTYPES": ClassVar, "RESULT_BOOL": ClassVar, "COMMUTATIVE": ClassVar,
            },
        },
    )
    return _op(cls)


def _int_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Integer division truncating toward zero (C and ONNX semantics)."""
    if np.issubdtype(a.dtype, np.integer):
        q = np.floor_divide(a, b)
        return q + ((q < 0) & (q * b != a))
    return a / b


def _pow(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if np.issubdtype(a.dtype, np.integer):
        return np.power(a.astype(np.float64), b).astype(a.dtype)
    return np.power(a, b.astype(a.dtype))


AddOp = _binary("Add", np.add, commutative=True)
SubOp = _binary("Sub", np.subtract)
MulOp = _binary("Mul", np.multiply, commutative=True)
DivOp = _binary("Div", _int_div)
MaxOp = _binary("Max", np.maximum, commutative=True)
MinOp = _binary("Min", np.minimum, commutative=True)
PowOp = _binary("Pow", _pow)
EqualOp = _binary("Equal", np.equal, ALL_DTYPES, True, commutative=True)
LessOp = _binary("Less", np.less, NUMERIC, True)
LessOrEqualOp = _binary("LessOrEqual", np.less_equal, NUMERIC, True)
GreaterOp = _binary("Greater", np.greater, NUMERIC, True)
GreaterOrEqualOp = _binary("GreaterOrEqual", np.greater_equal, NUMERIC, True)
AndOp = _binary("And", np.logical_and, BOOLS, commutative=True)
OrOp = _binary("Or", np.logical_or, BOOLS, commutative=True)

BINARY_OPS = [
    AddOp, SubOp, MulOp, DivOp, MaxOp, MinOp, PowOp, EqualOp, LessOp, LessOrEqualOp,
    GreaterOp, GreaterOrEqualOp, AndOp, OrOp,
]


# --------------------------------------------------------------------------------------
# Ternary Where
# --------------------------------------------------------------------------------------


@tx8be_op
class WhereOp(BroadcastingOp):
    """`condition ? x : y` with numpy broadcasting of all three operands."""

    name = "tx8be.Where"
    OPERANDS: ClassVar[tuple[str, ...]] = ("condition", "x", "y")
    DTYPES: ClassVar[frozenset[str] | None] = ALL_DTYPES
    DATA_OPERANDS: ClassVar[tuple[int, ...] | None] = (1, 2)

    def verify_op(self) -> None:
        if self.operands[0].type.get_element_type() != i1:
            raise self.fail("condition (operand #0) must have element type i1")

    def infer_shapes(self) -> list[TensorType]:
        shapes = [tuple(s) for s in self.input_shapes()]
        shape = broadcast_shape(*shapes)
        if shape is None:
            raise self.fail(f"operand shapes {[list(s) for s in shapes]} do not broadcast")
        return [result_type_like(shape, self.operands[1].type)]

    def query_op_attr(self):
        return self.op_attr(align_mode=AlignMode.BOTH)

    # layout rule of the family (module docstring)
    infer_layout = keep_operand_layout
    infer_operand_layouts = fit_to_operands

    def permute_attributes(self, perm):
        """Element-wise: nothing changes. The condition is not a data operand, so one of
        lower rank must come out of the rearrangement unchanged."""
        condition = shape_of(self.operands[0])
        if not has_rank(self, perm):
            return None
        if len(condition) != len(perm) and not unchanged_by(condition, perm):
            return None
        return {}

    def compute(self, cond, x, y):
        return [np.where(cond, x, y)]


# --------------------------------------------------------------------------------------
# Unary
# --------------------------------------------------------------------------------------


class UnaryOp(Tx8beOp):
    """One operand, one result of the same shape (and dtype, except Cast)."""

    OPERANDS: ClassVar[tuple[str, ...]] = ("input",)
    DTYPES: ClassVar[frozenset[str] | None] = FLOATS
    HAS_KERNEL: ClassVar[bool] = True
    """False when the TX8 op library has no kernel for the op (OpAttr.has_kernel)."""

    def infer_shapes(self) -> list[TensorType]:
        return [self.operands[0].type]

    def query_op_attr(self):
        return self.op_attr(
            align_mode=AlignMode.BOTH, mem_inplace=True, has_kernel=self.HAS_KERNEL
        )

    # layout rule of the family (module docstring)
    infer_layout = keep_operand_layout
    infer_operand_layouts = fit_to_operands

    def permute_attributes(self, perm):
        """Element-wise (Cast too): nothing changes."""
        return {} if has_rank(self, perm) else None

    view_attributes = elementwise_view

    def apply(self, x: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def compute(self, x: np.ndarray) -> list[np.ndarray]:
        (x,) = upcast(x)
        return [np.asarray(self.apply(x))]


def _unary(name: str, fn: Callable, dtypes=FLOATS, doc: str = "", has_kernel: bool = True):
    def apply(self, x):
        return fn(x)

    cls = type(
        f"{name}Op",
        (UnaryOp,),
        {
            "name": f"tx8be.{name}",
            "DTYPES": dtypes,
            "HAS_KERNEL": has_kernel,
            "apply": apply,
            "__doc__": doc or f"Element-wise {name}.",
            "__annotations__": {"DTYPES": ClassVar, "HAS_KERNEL": ClassVar},
        },
    )
    return _op(cls)


def _sigmoid(x):
    return scipy.special.expit(x)


SIGNED = FLOATS | frozenset({"i8", "i32", "i64"})

ReluOp = _unary("Relu", lambda x: np.maximum(x, 0).astype(x.dtype), NUMERIC)
SigmoidOp = _unary("Sigmoid", _sigmoid)
TanhOp = _unary("Tanh", np.tanh)
ErfOp = _unary("Erf", scipy.special.erf)
# No TX8 kernel for Silu and HardSwish: legalize decomposes them (Sigmoid, HardSigmoid, Mul).
SiluOp = _unary(
    "Silu", lambda x: x * _sigmoid(x), doc="x * sigmoid(x) (a.k.a. swish).", has_kernel=False
)
HardSwishOp = _unary(
    "HardSwish", lambda x: x * np.clip(x / 6 + 0.5, 0, 1), has_kernel=False
)
ExpOp = _unary("Exp", np.exp)
LogOp = _unary("Log", np.log)
SqrtOp = _unary("Sqrt", np.sqrt)
RsqrtOp = _unary("Rsqrt", lambda x: 1 / np.sqrt(x), doc="1 / sqrt(x).")
ReciprocalOp = _unary("Reciprocal", lambda x: 1 / x)
AbsOp = _unary("Abs", np.abs, NUMERIC)
NegOp = _unary("Neg", np.negative, SIGNED)
NotOp = _unary("Not", np.logical_not, BOOLS)
SinOp = _unary("Sin", np.sin)
CosOp = _unary("Cos", np.cos)
FloorOp = _unary("Floor", np.floor)
CeilOp = _unary("Ceil", np.ceil)


@tx8be_op
class LeakyReluOp(UnaryOp):
    """x if x >= 0 else alpha * x."""

    name = "tx8be.LeakyRelu"
    alpha = float_attr(0.01)

    def apply(self, x):
        return np.where(x >= 0, x, x * self.attr("alpha"))


@tx8be_op
class HardSigmoidOp(UnaryOp):
    """max(0, min(1, alpha * x + beta))."""

    name = "tx8be.HardSigmoid"
    alpha = float_attr(0.2)
    beta = float_attr(0.5)

    def apply(self, x):
        return np.clip(self.attr("alpha") * x + self.attr("beta"), 0, 1)


@tx8be_op
class GeluOp(UnaryOp):
    """Gaussian error linear unit; `approximate` is "none" (erf) or "tanh"."""

    name = "tx8be.Gelu"
    HAS_KERNEL: ClassVar[bool] = False  # legalize decomposes it (Erf or Tanh, Mul, Add)
    approximate = str_attr("none")

    def verify_op(self) -> None:
        if self.attr("approximate") not in ("none", "tanh"):
            raise self.fail(
                f"approximate must be \"none\" or \"tanh\", got \"{self.attr('approximate')}\""
            )

    def apply(self, x):
        if self.attr("approximate") == "tanh":
            return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))
        return 0.5 * x * (1 + scipy.special.erf(x / np.sqrt(2)))


@tx8be_op
class ClipOp(UnaryOp):
    """min(max(x, min), max); an absent bound does not clip. As in ONNX, a min above the
    max is allowed and makes every element the max."""

    name = "tx8be.Clip"
    DTYPES: ClassVar[frozenset[str] | None] = NUMERIC
    min = float_attr(optional=True)
    max = float_attr(optional=True)

    def apply(self, x):
        lo, hi = self.attr("min"), self.attr("max")
        if lo is not None:
            x = np.maximum(x, np.asarray(lo).astype(x.dtype))
        if hi is not None:
            x = np.minimum(x, np.asarray(hi).astype(x.dtype))
        return x


@tx8be_op
class CastOp(UnaryOp):
    """Conversion to the element type named by `to` (f32, f16, bf16, i8, i32, i64, i1)."""

    name = "tx8be.Cast"
    DTYPES: ClassVar[frozenset[str] | None] = ALL_DTYPES
    to = str_attr()

    def target_type(self):
        from tx8c.dialect.types import from_numpy_dtype

        table = {
            "f32": np.float32, "f16": np.float16, "i8": np.int8, "i32": np.int32,
            "i64": np.int64, "i1": np.bool_,
        }
        name = self.attr("to")
        if name == "bf16":
            import ml_dtypes

            return from_numpy_dtype(ml_dtypes.bfloat16)
        if name not in table:
            raise self.fail(
                f"to = \"{name}\" is not a supported element type "
                f"(one of {', '.join(sorted(ALL_DTYPES))})"
            )
        return from_numpy_dtype(table[name])

    def infer_shapes(self) -> list[TensorType]:
        return [TensorType(self.target_type(), self.operands[0].type.get_shape())]

    def query_op_attr(self):
        return self.op_attr(align_mode=AlignMode.BOTH)

    def compute(self, x):
        dtype = to_numpy_dtype(self.target_type())
        if np.issubdtype(dtype, np.integer) and not np.issubdtype(x.dtype, np.integer):
            x = np.trunc(x.astype(np.float64))  # float -> int truncates toward zero
        return [x.astype(dtype)]


UNARY_OPS = [
    ReluOp, LeakyReluOp, ClipOp, SigmoidOp, TanhOp, ErfOp, GeluOp, SiluOp, HardSigmoidOp,
    HardSwishOp, ExpOp, LogOp, SqrtOp, RsqrtOp, ReciprocalOp, AbsOp, NegOp, NotOp, SinOp,
    CosOp, FloorOp, CeilOp, CastOp,
]

OPS = [*BINARY_OPS, WhereOp, *UNARY_OPS]
