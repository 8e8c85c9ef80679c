"""Traits: facts about an op that passes and executors ask (DESIGN.md, "Source layout").

A fact that is true or false of an op kind is a trait, declared once in the op's class
(`traits = traits_def(...)`; subclasses inherit it) and asked with `op.has_trait(T)`,
which works on any xDSL op, tx8be or not, so no pass probes ops with getattr or keeps a
list of op classes. xDSL's own traits are used where they state the fact:

- `xdsl.traits.Commutative`: op(a, b) == op(b, a) (Add, Mul, Max, Min, Equal, And, Or);
  canonicalize-op puts the constant operand second;
- `xdsl.traits.ConstantLike`: a compile-time constant whose value is in the IR
  (`tx8be.Constant`); `tx8c.ir_utils` recognises constants by it;
- `xdsl.traits.IsTerminator`: ends its block (`tx8be.Yield`, `func.return`); the
  executors leave the block there.

The ones below are tx8c's own. The behaviour that goes with `ExecutesRegion` and
`ReadsConstContainer` is a method of the op (named in the trait), so the trait says which
ops have it and the op class says what it does.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.traits import OpTrait


@dataclass(frozen=True)
class MemoryOp(OpTrait):
    """The op moves or converts data between memories or layouts (LoadConst, ChannelNorm,
    LoadVar, StoreVar): on logical values it is the identity (or a load), but it is a
    planned transfer or conversion, so fold-constant never folds it and
    eliminate-common-subexpr never merges two of them."""


@dataclass(frozen=True)
class ByteMove(MemoryOp):
    """A memory op that copies its operand's bytes unchanged, layout included (the DMAs
    LoadVar and StoreVar): the byte-level cmodel passes the buffer through."""


@dataclass(frozen=True)
class ExecutesRegion(OpTrait):
    """Executors run the op's region in place of a compute (Group): the op's
    `run_region(executor, values)` runs its body with the block arguments bound to
    `values` and returns what the terminator yields."""


@dataclass(frozen=True)
class ReadsConstContainer(OpTrait):
    """The op's value is a constant of the module's ConstContainer, not in the IR
    (LoadConst): executors call the op's `load_const(constants)` instead of compute(); the
    byte-level cmodel calls `load_stored(container)`, the constant's stored bytes and
    their layout."""
