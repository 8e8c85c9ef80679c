"""The tx8be dialect (seed 003, "TX8 BE"): its ops and attributes."""

from __future__ import annotations

from functools import cache

from xdsl.ir import Dialect


@cache
def all_ops() -> tuple[type, ...]:
    """Every tx8be op class, family by family."""
    from tx8c.dialect.ops import families

    return tuple(op for family in families() for op in family.OPS)


@cache
def tx8be_dialect() -> Dialect:
    from tx8c.dialect.attrs import ATTRIBUTES

    return Dialect("tx8be", list(all_ops()), list(ATTRIBUTES))


def op_by_name(name: str) -> type:
    """The op class called `name` (with or without the "tx8be." prefix)."""
    full = name if name.startswith("tx8be.") else f"tx8be.{name}"
    for op in all_ops():
        if op.name == full:
            return op
    raise KeyError(name)


def make_context():
    """An xDSL context with the builtin, func and tx8be dialects loaded."""
    from xdsl.context import Context
    from xdsl.dialects.builtin import Builtin
    from xdsl.dialects.func import Func

    ctx = Context()
    ctx.load_dialect(Builtin)
    ctx.load_dialect(Func)
    ctx.load_dialect(tx8be_dialect())
    return ctx
