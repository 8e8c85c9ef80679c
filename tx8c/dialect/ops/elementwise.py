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

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import TensorType, i1
from xdsl.irdl import traits_def
from xdsl.traits import Commutative

from tx8c.dialect.attrs import AlignMode
from tx8c.dialect.base import (
    ALL_DTYPES,
    BOOLS,
    FLOATS,
    NUMERIC,
    Tx8beOp,
    bool_attr,
    float_attr,
    result_type_like,
    str_attr,
    tx8be_op,
)
from tx8c.dialect.ops._util import broadcast_shape, upcast
from tx8c.dialect.types import short_name, to_numpy_dtype
from tx8c.interfaces.oplib import LOW_PRECISION, OpCode, ct_work
from tx8c.interfaces.shape_inference import (
    elementwise_view,
    fit_to_operands,
    has_rank,
    keep_operand_layout,
    unchanged_by,
)
from tx8c.interfaces.sharding import Slicer, slicer_fields
from tx8c.ir_utils import shape_of

# --------------------------------------------------------------------------------------
# Slicing
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ElementwiseSlicer(Slicer):
    """Element-wise slicing (the Slicer defaults: every dim cut freely, operands follow
    the result with numpy broadcasting) and one CT pass per element, `special` for
    transcendental functions, division and roots."""

    special: bool

    def work(self, shape):
        return ct_work(self.dtype, shape, **{"special" if self.special else "arith": 1})

    def imm_bytes(self, shape, config):
        """A special function on f16/bf16 converts the slice to fp32 first (seed 003's
        BatchNorm flow: gatherScatter + convert), so it needs an fp32 copy."""
        if self.special and self.dtype in LOW_PRECISION:
            return self.scratch(shape, "f32", config)
        return 0


# --------------------------------------------------------------------------------------
# Declaring an op by class keywords
# --------------------------------------------------------------------------------------


class DeclaredByKeywords:
    """Lets an element-wise op state its facts in its class line, e.g.
    `class ExpOp(UnaryOp, fn=np.exp, c_op="TX_EXP", special=True)`:

    - `fn`: the numpy function that computes it (becomes `apply`);
    - `c_op`: the op code of the C runtime's `op_binary` / `op_unary`;
    - `special`: the CT computes it as a special function (transcendentals, division,
      roots), not simple arithmetic;
    - `dtypes`: the element types its data operands accept;
    - `kernel`: False when the TX8 op library has no kernel for it (legalize rewrites it).

    An op that needs attributes or more than one numpy call writes its methods instead.
    """

    def __init_subclass__(
        cls, *, fn=None, c_op=None, special=None, dtypes=None, kernel=None, **kwargs
    ):
        super().__init_subclass__(**kwargs)
        if fn is not None:
            cls.apply = staticmethod(fn)
        for attr, value in (
            ("C_OP", c_op), ("CT_SPECIAL", special), ("DTYPES", dtypes), ("HAS_KERNEL", kernel)
        ):
            if value is not None:
                setattr(cls, attr, value)
                # IRDL accepts an upper-case class field only when it is annotated ClassVar
                cls.__annotations__[attr] = ClassVar[type(value)]


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
        if not self.results:
            out = self._out_shape()
            return "V_VV" if all(s == out for s in self.input_shapes()) else "V_VS"
        # The shape attributes compared, not tuples of ints built for each operand: the
        # OpAttr query asks this, and the grouping stage queries about every op twice.
        out = self.results[0].type.shape
        return "V_VV" if all(o.type.shape == out for o in self.operands) else "V_VS"

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


class BinaryOp(DeclaredByKeywords, BroadcastingOp):
    """Two operands, numpy broadcasting, one result."""

    OPERANDS: ClassVar[tuple[str, ...]] = ("lhs", "rhs")
    DTYPES: ClassVar[frozenset[str] | None] = NUMERIC
    CT_SPECIAL: ClassVar[bool] = False
    """The CT computes it as a special function (division, power), not simple arithmetic."""
    C_OP: ClassVar[str | None] = None
    """The op code of the C runtime's `op_binary` (None: no C kernel)."""

    def gen_op_code(self, loops):
        """`op_binary` with the op's code; the operands broadcast to the slice."""
        return OpCode("op_binary", (self.C_OP,)) if self.C_OP else None

    def broadcast_result_shape(self) -> tuple[int, ...]:
        """The shape both operands broadcast to; raises when they do not."""
        lhs, rhs = self.input_shapes()
        shape = broadcast_shape(lhs, rhs)
        if shape is None:
            raise self.fail(f"operand shapes {list(lhs)} and {list(rhs)} do not broadcast")
        return shape

    def infer_shapes(self) -> list[TensorType]:
        return [result_type_like(self.broadcast_result_shape(), self.operands[0].type)]

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

    def slicer(self):
        """Operands follow the result (numpy broadcasting); one V_VV or V_VS pass."""
        return ElementwiseSlicer(**slicer_fields(self), special=self.CT_SPECIAL)


def _expit(x: np.ndarray) -> np.ndarray:
    from scipy.special import expit  # imported on use: scipy.special takes 0.3-1 s to load

    return expit(x)


def _erf(x: np.ndarray) -> np.ndarray:
    from scipy.special import erf

    return erf(x)


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


@tx8be_op
class AddOp(BinaryOp, fn=np.add, c_op="TX_ADD"):
    """Element-wise Add with numpy broadcasting."""

    name = "tx8be.Add"
    traits = traits_def(Commutative())


@tx8be_op
class SubOp(BinaryOp, fn=np.subtract, c_op="TX_SUB"):
    """Element-wise Sub with numpy broadcasting."""

    name = "tx8be.Sub"


@tx8be_op
class MulOp(BinaryOp, fn=np.multiply, c_op="TX_MUL"):
    """Element-wise Mul with numpy broadcasting."""

    name = "tx8be.Mul"
    traits = traits_def(Commutative())


@tx8be_op
class DivOp(BinaryOp, fn=_int_div, c_op="TX_DIV", special=True):
    """Element-wise Div with numpy broadcasting (integers truncate toward zero)."""

    name = "tx8be.Div"


@tx8be_op
class MaxOp(BinaryOp, fn=np.maximum, c_op="TX_MAX"):
    """Element-wise Max with numpy broadcasting."""

    name = "tx8be.Max"
    traits = traits_def(Commutative())


@tx8be_op
class MinOp(BinaryOp, fn=np.minimum, c_op="TX_MIN"):
    """Element-wise Min with numpy broadcasting."""

    name = "tx8be.Min"
    traits = traits_def(Commutative())


@tx8be_op
class PowOp(BinaryOp, fn=_pow, c_op="TX_POW", special=True):
    """Element-wise Pow with numpy broadcasting."""

    name = "tx8be.Pow"


class ComparisonOp(BinaryOp):
    """A comparison: an i1 result whatever the operand type."""

    def infer_shapes(self) -> list[TensorType]:
        return [TensorType(i1, list(self.broadcast_result_shape()))]


@tx8be_op
class EqualOp(ComparisonOp, fn=np.equal, c_op="TX_EQUAL", dtypes=ALL_DTYPES):
    """Element-wise Equal with numpy broadcasting."""

    name = "tx8be.Equal"
    traits = traits_def(Commutative())


@tx8be_op
class LessOp(ComparisonOp, fn=np.less, c_op="TX_LESS"):
    """Element-wise Less with numpy broadcasting."""

    name = "tx8be.Less"


@tx8be_op
class LessOrEqualOp(ComparisonOp, fn=np.less_equal, c_op="TX_LESS_EQUAL"):
    """Element-wise LessOrEqual with numpy broadcasting."""

    name = "tx8be.LessOrEqual"


@tx8be_op
class GreaterOp(ComparisonOp, fn=np.greater, c_op="TX_GREATER"):
    """Element-wise Greater with numpy broadcasting."""

    name = "tx8be.Greater"


@tx8be_op
class GreaterOrEqualOp(ComparisonOp, fn=np.greater_equal, c_op="TX_GREATER_EQUAL"):
    """Element-wise GreaterOrEqual with numpy broadcasting."""

    name = "tx8be.GreaterOrEqual"


@tx8be_op
class AndOp(BinaryOp, fn=np.logical_and, c_op="TX_AND", dtypes=BOOLS):
    """Element-wise And with numpy broadcasting."""

    name = "tx8be.And"
    traits = traits_def(Commutative())


@tx8be_op
class OrOp(BinaryOp, fn=np.logical_or, c_op="TX_OR", dtypes=BOOLS):
    """Element-wise Or with numpy broadcasting."""

    name = "tx8be.Or"
    traits = traits_def(Commutative())


BINARY_OPS = [
    AddOp, SubOp, MulOp, DivOp, MaxOp, MinOp, PowOp, EqualOp, LessOp, LessOrEqualOp,
    GreaterOp, GreaterOrEqualOp, AndOp, OrOp,
]


@tx8be_op
class ModOp(BinaryOp):
    """Element-wise remainder of lhs / rhs with numpy broadcasting (ONNX Mod).

    `fmod` false (default): the remainder has the sign of the divisor (Python's `%`),
    integers only, as in ONNX; `fmod` true: the sign of the dividend (C's fmod), any
    numeric type. Floats need `fmod` true (ONNX's rule); the float remainder is exact (no
    quotient is rounded), which no composition of Div, Floor and Sub gives.
    """

    name = "tx8be.Mod"
    CT_SPECIAL: ClassVar[bool] = True  # a division: a special CT pass
    fmod = bool_attr(False)

    def verify_op(self) -> None:
        dtype = short_name(self.operands[0].type.get_element_type())
        if dtype in FLOATS and not self.attr("fmod"):
            raise self.fail(f"a {dtype} remainder needs fmod = true (ONNX Mod's rule)")

    def gen_op_code(self, loops):
        """`op_binary`: Python's remainder (TX_MOD) or C's fmod (TX_FMOD)."""
        return OpCode("op_binary", ("TX_FMOD" if self.attr("fmod") else "TX_MOD",))

    def apply(self, a, b):
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.fmod(a, b) if self.attr("fmod") else np.mod(a, b)


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

    def gen_op_code(self, loops):
        return OpCode("op_where")

    def slicer(self):
        """Operands follow the result (numpy broadcasting); one select pass."""
        return ElementwiseSlicer(**slicer_fields(self), special=False)


# --------------------------------------------------------------------------------------
# Unary
# --------------------------------------------------------------------------------------


class UnaryOp(DeclaredByKeywords, Tx8beOp):
    """One operand, one result of the same shape (and dtype, except Cast)."""

    OPERANDS: ClassVar[tuple[str, ...]] = ("input",)
    DTYPES: ClassVar[frozenset[str] | None] = FLOATS
    HAS_KERNEL: ClassVar[bool] = True
    """False when the TX8 op library has no kernel for the op (OpAttr.has_kernel)."""
    CT_SPECIAL: ClassVar[bool] = False
    """A transcendental function (or a root or reciprocal): a special CT pass."""
    C_OP: ClassVar[str | None] = None
    """The op code of the C runtime's `op_unary` (None: no C kernel)."""

    def gen_op_code(self, loops):
        """`op_unary` with the op's code and its float params (`c_params`)."""
        if self.C_OP is None:
            return None
        ints, floats = self.c_params()
        return OpCode("op_unary", (self.C_OP, *ints), floats)

    def c_params(self) -> tuple[tuple[int, ...], tuple[float, ...]]:
        """The integer and float params of `op_unary` after the op code. Default: none."""
        return (), ()

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

    def slicer(self):
        """The operand follows the result; one pass (special for transcendentals)."""
        return ElementwiseSlicer(**slicer_fields(self), special=self.CT_SPECIAL)


SIGNED = FLOATS | frozenset({"i8", "i32", "i64"})


def _relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0).astype(x.dtype)


def _silu(x: np.ndarray) -> np.ndarray:
    return x * _expit(x)


def _hard_swish(x: np.ndarray) -> np.ndarray:
    return x * np.clip(x / 6 + 0.5, 0, 1)


def _rsqrt(x: np.ndarray) -> np.ndarray:
    return 1 / np.sqrt(x)


def _reciprocal(x: np.ndarray) -> np.ndarray:
    return 1 / x


@tx8be_op
class ReluOp(UnaryOp, fn=_relu, c_op="TX_RELU", dtypes=NUMERIC):
    """max(x, 0), in the type of x."""

    name = "tx8be.Relu"


@tx8be_op
class SigmoidOp(UnaryOp, fn=_expit, c_op="TX_SIGMOID", special=True):
    """1 / (1 + exp(-x))."""

    name = "tx8be.Sigmoid"


@tx8be_op
class TanhOp(UnaryOp, fn=np.tanh, c_op="TX_TANH", special=True):
    """Element-wise Tanh."""

    name = "tx8be.Tanh"


@tx8be_op
class ErfOp(UnaryOp, fn=_erf, c_op="TX_ERF", special=True):
    """Element-wise Erf."""

    name = "tx8be.Erf"


@tx8be_op
class SiluOp(UnaryOp, fn=_silu, special=True, kernel=False):
    """x * sigmoid(x) (a.k.a. swish)."""

    name = "tx8be.Silu"
    # no TX8 kernel: legalize writes x * Sigmoid(x)


@tx8be_op
class HardSwishOp(UnaryOp, fn=_hard_swish, special=True, kernel=False):
    """x * clip(x / 6 + 0.5, 0, 1)."""

    name = "tx8be.HardSwish"
    # no TX8 kernel: legalize writes x * HardSigmoid(x)


@tx8be_op
class ExpOp(UnaryOp, fn=np.exp, c_op="TX_EXP", special=True):
    """Element-wise Exp."""

    name = "tx8be.Exp"


@tx8be_op
class LogOp(UnaryOp, fn=np.log, c_op="TX_LOG", special=True):
    """Element-wise Log."""

    name = "tx8be.Log"


@tx8be_op
class SqrtOp(UnaryOp, fn=np.sqrt, c_op="TX_SQRT", special=True):
    """Element-wise Sqrt."""

    name = "tx8be.Sqrt"


@tx8be_op
class RsqrtOp(UnaryOp, fn=_rsqrt, c_op="TX_RSQRT", special=True):
    """1 / sqrt(x)."""

    name = "tx8be.Rsqrt"


@tx8be_op
class ReciprocalOp(UnaryOp, fn=_reciprocal, c_op="TX_RECIPROCAL", special=True):
    """1 / x."""

    name = "tx8be.Reciprocal"


@tx8be_op
class AbsOp(UnaryOp, fn=np.abs, c_op="TX_ABS", dtypes=NUMERIC):
    """Element-wise Abs."""

    name = "tx8be.Abs"


@tx8be_op
class NegOp(UnaryOp, fn=np.negative, c_op="TX_NEG", dtypes=SIGNED):
    """-x (signed types only)."""

    name = "tx8be.Neg"


@tx8be_op
class NotOp(UnaryOp, fn=np.logical_not, c_op="TX_NOT", dtypes=BOOLS):
    """Logical not of an i1 tensor."""

    name = "tx8be.Not"


@tx8be_op
class SinOp(UnaryOp, fn=np.sin, c_op="TX_SIN", special=True):
    """Element-wise Sin."""

    name = "tx8be.Sin"


@tx8be_op
class CosOp(UnaryOp, fn=np.cos, c_op="TX_COS", special=True):
    """Element-wise Cos."""

    name = "tx8be.Cos"


@tx8be_op
class FloorOp(UnaryOp, fn=np.floor, c_op="TX_FLOOR"):
    """Element-wise Floor."""

    name = "tx8be.Floor"


@tx8be_op
class CeilOp(UnaryOp, fn=np.ceil, c_op="TX_CEIL"):
    """Element-wise Ceil."""

    name = "tx8be.Ceil"


@tx8be_op
class RoundOp(UnaryOp, fn=np.rint, c_op="TX_ROUND"):
    """Round to the nearest integer, halves to even (ONNX Round): not floor(x + 0.5)."""

    name = "tx8be.Round"


@tx8be_op
class AtanOp(UnaryOp, fn=np.arctan, c_op="TX_ATAN", special=True):
    """Arc tangent (ONNX Atan); the importer builds Asin and Acos from it and Sqrt."""

    name = "tx8be.Atan"


@tx8be_op
class LeakyReluOp(UnaryOp):
    """x if x >= 0 else alpha * x."""

    name = "tx8be.LeakyRelu"
    C_OP: ClassVar[str | None] = "TX_LEAKY_RELU"
    alpha = float_attr(0.01)

    def apply(self, x):
        return np.where(x >= 0, x, x * self.attr("alpha"))

    def c_params(self):
        return (), (self.attr("alpha"),)


@tx8be_op
class HardSigmoidOp(UnaryOp):
    """max(0, min(1, alpha * x + beta))."""

    name = "tx8be.HardSigmoid"
    C_OP: ClassVar[str | None] = "TX_HARD_SIGMOID"
    alpha = float_attr(0.2)
    beta = float_attr(0.5)

    def apply(self, x):
        return np.clip(self.attr("alpha") * x + self.attr("beta"), 0, 1)

    def c_params(self):
        return (), (self.attr("alpha"), self.attr("beta"))


@tx8be_op
class GeluOp(UnaryOp):
    """Gaussian error linear unit; `approximate` is "none" (erf) or "tanh"."""

    name = "tx8be.Gelu"
    CT_SPECIAL: ClassVar[bool] = True  # a special CT pass
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
        return 0.5 * x * (1 + _erf(x / np.sqrt(2)))


@tx8be_op
class ClipOp(UnaryOp):
    """min(max(x, min), max); an absent bound does not clip. As in ONNX, a min above the
    max is allowed and makes every element the max."""

    name = "tx8be.Clip"
    C_OP: ClassVar[str | None] = "TX_CLIP"
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

    def c_params(self):
        """Whether min and max are given, then their values (0 when absent)."""
        lo, hi = self.attr("min"), self.attr("max")
        return (int(lo is not None), int(hi is not None)), (lo or 0.0, hi or 0.0)


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

    def gen_op_code(self, loops):
        return OpCode("op_cast")


UNARY_OPS = [
    ReluOp, LeakyReluOp, ClipOp, SigmoidOp, TanhOp, ErfOp, GeluOp, SiluOp, HardSigmoidOp,
    HardSwishOp, ExpOp, LogOp, SqrtOp, RsqrtOp, ReciprocalOp, AbsOp, NegOp, NotOp, SinOp,
    CosOp, FloorOp, CeilOp, CastOp, RoundOp, AtanOp,
]

OPS = [*BINARY_OPS, ModOp, WhereOp, *UNARY_OPS]
