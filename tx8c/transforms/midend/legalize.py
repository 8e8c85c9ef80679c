"""legalize: rewrite ops the TX8 op library lacks into ops it has (seed 004, Legalize).

Seed 004, Legalize: every op with a registered legalize function (`FTVMLegalize`) is
replaced by the expression that function returns. Here the registry is two tables, keyed
by op name, of functions that build the replacement in front of the op and return the
value that replaces its result:

- `DECOMPOSITIONS`: ops the op library has no kernel for. Which ops those are comes from
  OpLib: `query_op_attr().has_kernel` is False. Entries:
  - Gelu(approximate="none") -> 0.5 * x * (1 + Erf(x / sqrt 2));
  - Gelu(approximate="tanh") -> 0.5 * x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 x^3)));
  - HardSwish -> x * HardSigmoid(x, alpha=1/6, beta=0.5);
  - HardSigmoid -> Clip(x * alpha + beta, 0, 1) (only if HardSigmoid lacks a kernel);
  - Silu -> x * Sigmoid(x).
  A decomposition may use another op of the table: its result is legalized in turn.
- `CONSTANT_FORMS`: canonical forms of ops with a constant operand, applied whether or not
  the op has a kernel, because the CT engine's scalar/broadcast Add and Mul are its
  cheapest forms and later passes (fold-scale-axis, peephole) look for Add and Mul:
  - Sub(x, c) -> Add(x, -c) (integers too, unless -c overflows: c is the type's minimum);
  - Div(x, c) -> Mul(x, 1/c), float types only (integer division truncates, so it must
    not change), and only when every 1/c is finite and non-zero in x's type.

Requires: verified tx8be IR. Guarantees: every tx8be op has a kernel (has_kernel True);
an op without a kernel and without an entry raises Tx8UnsupportedError naming it. The
program's meaning is kept up to float rounding (x / c and x * (1/c) may differ in the
last bit; the decompositions round at each step). Constants of the replaced ops that are
left without users are erased.

Departures from the seed: TVM's legalize functions live on the ops (attribute
FTVMLegalize) and may return None; here the tables live in this pass, since what to
rewrite into is a property of the target's op library, not of the op, and whether a rule
is needed is asked of the op (has_kernel). The seed legalizes by dtype too (types are
passed to the function); no rule here needs that yet.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern
from xdsl.rewriter import InsertPoint

from tx8c.dialect.base import Tx8beOp
from tx8c.dialect.ops.backend import ConstantOp
from tx8c.dialect.ops.elementwise import (
    AddOp,
    ClipOp,
    ErfOp,
    HardSigmoidOp,
    MulOp,
    SigmoidOp,
    TanhOp,
)
from tx8c.dialect.types import is_float, to_numpy_dtype
from tx8c.errors import Tx8UnsupportedError
from tx8c.ir_utils import constant_array, erase_dead_constants, is_constant


class Emitter:
    """Builds a replacement in front of the op being legalized, in that op's dtype."""

    def __init__(self, rewriter: PatternRewriter, op: Operation):
        self.rewriter = rewriter
        self.op = op
        self.dtype = to_numpy_dtype(op.results[0].type.get_element_type())

    def __call__(self, op_cls: type[Tx8beOp], *operands: SSAValue, **attrs) -> SSAValue:
        """Create `op_cls(operands, attrs)` in front of the op; its result."""
        new = op_cls.make(list(operands), **attrs)
        self.rewriter.insert(new, InsertPoint.before(self.op))
        return new.results[0]

    def const(self, value: float | np.ndarray) -> SSAValue:
        """A constant (a scalar for a Python number) of the op's dtype."""
        new = ConstantOp.from_array(np.asarray(value).astype(self.dtype))
        self.rewriter.insert(new, InsertPoint.before(self.op))
        return new.results[0]

    def mul(self, x: SSAValue, y: SSAValue | float) -> SSAValue:
        return self(MulOp, x, y if isinstance(y, SSAValue) else self.const(y))

    def add(self, x: SSAValue, y: SSAValue | float) -> SSAValue:
        return self(AddOp, x, y if isinstance(y, SSAValue) else self.const(y))


Rule = Callable[[Emitter, Operation], SSAValue | None]
"""Builds the replacement of an op and returns its value; None when it does not apply."""


# --------------------------------------------------------------------------------------
# Decompositions of ops without a kernel
# --------------------------------------------------------------------------------------


def _gelu(emit: Emitter, op: Operation) -> SSAValue:
    x = op.operands[0]
    if op.attr("approximate") == "tanh":
        k = math.sqrt(2 / math.pi)
        # k * (x + 0.044715 x^3) = x * (k + 0.044715 k * x^2)
        inner = emit.mul(x, emit.add(emit.mul(emit.mul(x, x), 0.044715 * k), k))
        gate = emit(TanhOp, inner)
    else:
        gate = emit(ErfOp, emit.mul(x, 1 / math.sqrt(2)))
    return emit.mul(emit.mul(x, 0.5), emit.add(gate, 1.0))


def _hard_swish(emit: Emitter, op: Operation) -> SSAValue:
    x = op.operands[0]
    return emit.mul(x, emit(HardSigmoidOp, x, alpha=1 / 6, beta=0.5))


def _hard_sigmoid(emit: Emitter, op: Operation) -> SSAValue:
    x = op.operands[0]
    affine = emit.add(emit.mul(x, op.attr("alpha")), op.attr("beta"))
    return emit(ClipOp, affine, min=0.0, max=1.0)


def _silu(emit: Emitter, op: Operation) -> SSAValue:
    x = op.operands[0]
    return emit.mul(x, emit(SigmoidOp, x))


DECOMPOSITIONS: dict[str, Rule] = {
    "tx8be.Gelu": _gelu,
    "tx8be.HardSwish": _hard_swish,
    "tx8be.HardSigmoid": _hard_sigmoid,
    "tx8be.Silu": _silu,
}
"""Op name -> its decomposition, applied when the op has no kernel."""


# --------------------------------------------------------------------------------------
# Canonical forms of ops with a constant operand
# --------------------------------------------------------------------------------------


def _constant_rhs(op: Operation) -> np.ndarray | None:
    """The rhs's array when it is a constant and the lhs is not, else None."""
    lhs, rhs = op.operands
    return None if is_constant(lhs) else constant_array(rhs)


def _sub_constant(emit: Emitter, op: Operation) -> SSAValue | None:
    c = _constant_rhs(op)
    if c is None:
        return None
    if np.issubdtype(c.dtype, np.integer) and np.any(c == np.iinfo(c.dtype).min):
        return None  # -c overflows
    return emit.add(op.operands[0], emit.const(-c))


def _div_constant(emit: Emitter, op: Operation) -> SSAValue | None:
    c = _constant_rhs(op)
    if c is None or not is_float(op.results[0].type.get_element_type()):
        return None  # integer division truncates: it stays a Div
    with np.errstate(divide="ignore", over="ignore"):
        reciprocal = (1 / c.astype(np.float64)).astype(emit.dtype)
    wide = reciprocal.astype(np.float64)
    if not np.all(np.isfinite(wide)) or np.any(wide == 0):
        return None
    return emit.mul(op.operands[0], emit.const(reciprocal))


CONSTANT_FORMS: dict[str, Rule] = {
    "tx8be.Sub": _sub_constant,
    "tx8be.Div": _div_constant,
}
"""Op name -> its form with a constant operand, applied whether or not it has a kernel."""


# --------------------------------------------------------------------------------------
# The pass
# --------------------------------------------------------------------------------------


def has_kernel(op: Operation) -> bool:
    """Whether the TX8 op library runs `op` (non-tx8be ops, like func.return, need none)."""
    return not isinstance(op, Tx8beOp) or op.query_op_attr().has_kernel


def _rule_for(op: Operation) -> Rule | None:
    """The rule that rewrites `op`, None when it stays."""
    if op.name in CONSTANT_FORMS:
        return CONSTANT_FORMS[op.name]
    if has_kernel(op):
        return None
    return DECOMPOSITIONS.get(op.name)


def check_legalizable(module: ModuleOp) -> None:
    """Raise Tx8UnsupportedError for the first op with neither a kernel nor a rule."""
    for op in module.walk():
        if not has_kernel(op) and op.name not in DECOMPOSITIONS:
            raise Tx8UnsupportedError(
                f"'{op.name}' has no kernel in the TX8 op library and legalize knows no "
                "equivalent for it; add a decomposition to legalize.DECOMPOSITIONS"
            )


class LegalizePattern(RewritePattern):
    """Applies the rule of an op (DECOMPOSITIONS or CONSTANT_FORMS) to it."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        rule = _rule_for(op)
        if rule is None:
            return
        value = rule(Emitter(rewriter, op), op)
        if value is None:
            return
        operands = list(op.operands)
        rewriter.replace(op, [], [value])
        erase_dead_constants(operands, rewriter.erase)  # constants only op used


@dataclass(frozen=True)
class LegalizePass(ModulePass):
    """Rewrite ops into what the TX8 op library supports (module docstring)."""

    name = "legalize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_legalizable(op)  # before rewriting: the module is left as it was
        PatternRewriteWalker(LegalizePattern()).rewrite_module(op)
