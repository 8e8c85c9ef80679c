"""canonicalize-cast: remove casts that do nothing and merge chains of casts.

Seed 004, CanonicalizeCast ("normalise casts, to help op fusion").

Requires: a verified module of tx8be ops.
Guarantees, for every `tx8be.Cast`, visited once in block order (so chains of any length
collapse in one pass, O(n)):
- a Cast to its operand's own element type is removed (its users take the operand);
- a Cast of a Cast, `x : T0 -> T1 -> T2`, becomes `x -> T2` (or just `x` when T2 is T0)
  when, and only when, that gives the same bits as the chain, by the rule below;
- an inner Cast left without users is erased; one that still has other users stays, so
  no rewrite adds an op.

The rule. A chain `T0 -> T1 -> T2` merges when
  (A) `T0 -> T1` is exact: T1 holds every value of T0 exactly, so the second cast sees
      x's own value and converts it as the direct cast would; or
  (B) T0, T1, T2 are integers (not i1) and T2 is no wider than T1: two's-complement
      truncations compose (mod 2^bits(T1), then mod 2^bits(T2), is mod 2^bits(T2)).

    first cast T0 -> T1                        then T1 -> T2   merged?  why
    -----------------------------------------  --------------  -------  -------------------
    i1 -> any type                             any T2          yes (A)  0 and 1 are exact
    i8 -> i32, i64, f16, bf16, f32             any T2          yes (A)  |x| <= 128 is exact
    i32 -> i64                                 any T2          yes (A)  widening
    f16 -> f32, bf16 -> f32                    any T2          yes (A)  widening
    i64 -> i32                                 -> i8           yes (B)  truncations compose
    e.g. i8 -> i32 -> i8, f16 -> f32 -> f16                    yes (A)  (becomes x itself)
    f32 -> f16 (or bf16)                       -> f32          NO       rounds the mantissa
    f16 -> bf16, bf16 -> f16                   -> any          NO       each drops bits
    i32 -> f32, i64 -> f32 (or f16, bf16)      -> int          NO       f32 holds 24 bits
    i32 -> f32                                 -> bf16         NO       rounds twice
    float -> int                               -> float        NO       truncates
    float -> i32                               -> i8           NO       float -> int overflow
                                                                        is implementation
                                                                        defined
    any -> i1                                  -> any          NO       keeps only x != 0
    i32 -> i8, i64 -> i8                       -> wider int    NO       sign-extends the
                                                                        truncation

Bit-identical means for every input value, with one exception: a *signalling* NaN (which
no computation produces) can come out of `bf16 -> f32 -> bf16` (or `-> f16`) quieted,
while the merged chain keeps it as it was; NaN stays NaN either way.
tests/unit/midend/test_canonicalize.py checks the table on every f16/bf16/i8 bit pattern
and on edge and random values of the wider types, through `Cast.compute()`.

Departure from the seed: Relay's CanonicalizeCast duplicates an up-cast that has several
users, so that each user can fuse its own copy. tx8c's grouping handles values with
several users without copies, so that step is not done here; merging chains and removing
identities (not in the seed's excerpt) is what the issue asks for.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from tx8c.dialect.ops.elementwise import CastOp
from tx8c.dialect.types import short_name

EXACT_CASTS: frozenset[tuple[str, str]] = frozenset(
    [("i1", t) for t in ("i8", "i32", "i64", "f16", "bf16", "f32")]
    + [("i8", t) for t in ("i32", "i64", "f16", "bf16", "f32")]
    + [("i32", "i64"), ("f16", "f32"), ("bf16", "f32")]
)
"""(T0, T1): every value of T0 is a value of T1 (rule A)."""

INT_BITS = {"i8": 8, "i32": 32, "i64": 64}
"""The two's-complement integers and their widths (rule B; i1 is not one)."""


def _elem(value: SSAValue) -> str:
    return short_name(value.type.get_element_type())


def chain_is_mergeable(t0: str, t1: str, t2: str) -> bool:
    """Whether casting T0 -> T1 -> T2 gives the bits of casting T0 -> T2 directly."""
    if (t0, t1) in EXACT_CASTS:
        return True
    if t0 in INT_BITS and t1 in INT_BITS and t2 in INT_BITS:
        return INT_BITS[t2] <= INT_BITS[t1]
    return False


def _replace_by(cast: CastOp, value: SSAValue) -> None:
    """Give `cast`'s users `value` and erase `cast`."""
    Rewriter.replace_op(cast, [], [value])


def _canonicalize(cast: CastOp) -> None:
    source = cast.operands[0]
    target: Attribute = cast.results[0].type.get_element_type()
    if source.type.get_element_type() == target:
        _replace_by(cast, source)
        return
    inner = source.owner
    if not isinstance(inner, CastOp):
        return
    origin = inner.operands[0]
    if not chain_is_mergeable(_elem(origin), _elem(source), _elem(cast.results[0])):
        return
    if origin.type.get_element_type() == target:
        _replace_by(cast, origin)
    else:
        cast.operands = [origin]
    if not inner.results[0].uses:
        Rewriter.erase_op(inner)


def canonicalize_casts(module: ModuleOp) -> None:
    """Apply the rewrites to every Cast of `module`, in block order."""
    # walk() is a pre-order snapshot: an inner cast is seen before its users; ops erased
    # along the way (inner casts) have no parent any more and are skipped.
    for op in list(module.walk()):
        if isinstance(op, CastOp) and op.parent is not None:
            _canonicalize(op)


@dataclass(frozen=True)
class CanonicalizeCastPass(ModulePass):
    """Remove identity casts and merge safe cast chains (see the module docstring)."""

    name = "canonicalize-cast"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        canonicalize_casts(op)
