"""What passes share: the one home of the small IR helpers (DESIGN.md, "Source layout").

A helper that two passes need lives here, once, instead of in one pass that the other
imports (passes never import other passes) or in a copy per pass. This module sits below
the dialect's op classes: it imports xDSL and the dialect's leaf helpers only and
recognises ops by structure or through their interfaces, never by class.

- functions: `function_bodies`;
- ops: `is_compute_op` (what belongs in a group);
- constant sources (ops whose values depend on nothing at run time): `is_constant_source`,
  `pull_constant_sources` (what a new group takes inside with its ops);
- memory: `stored_layout`, `stored_bytes` (the layout and size a value has in memory).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.traits import IsTerminator

from tx8c.dialect.attrs import LayoutMode
from tx8c.dialect.layout import is_aligned, mem_layout_for
from tx8c.target.config import DEFAULT_CONFIG, TX8Config

# --------------------------------------------------------------------------------------
# Functions
# --------------------------------------------------------------------------------------


def function_bodies(module: ModuleOp) -> Iterator[Block]:
    """The body block of every function of `module` that has one."""
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.body.blocks:
            yield op.body.block


# --------------------------------------------------------------------------------------
# Constant sources
# --------------------------------------------------------------------------------------


def is_constant_source(op: Operation) -> bool:
    """An op whose results depend on nothing at run time: it has results but no operands
    and no regions (tx8be.Constant, and tx8be.LoadConst after move-constant). The seed's
    createSingleGroup moves such producers (its LoadConstOp and NoneOp) into the group of
    their user instead of making them group inputs."""
    return bool(op.results) and not op.operands and not op.regions


def is_compute_op(op: Operation) -> bool:
    """A tx8be op that runs as a step of the program and so belongs in a group: not a
    constant source, not a terminator, not an op with regions (a Group)."""
    return (
        op.dialect_name() == "tx8be" and not op.regions and not is_constant_source(op)
        and not op.has_trait(IsTerminator)
    )


def pull_constant_sources(ops: Sequence[Operation]) -> list[Operation]:
    """Put the constant sources that `ops` read right in front of them, ready to be
    wrapped into one group with them; return the sources followed by `ops`.

    `ops` are consecutive ops of one block. A source read only by `ops` moves; a source
    that other ops read too is cloned, and `ops` read the clone (the original stays for
    the others, so a value shared by several groups gets one copy per group). Each source
    is pulled once however often `ops` read it.
    """
    first = ops[0]
    block = first.parent
    members = set(ops)
    pulled: dict[Operation, Operation] = {}
    for op in ops:
        for index, value in enumerate(op.operands):
            source = value.owner
            if not isinstance(source, Operation) or source in members:
                continue
            if source.parent is not block or not is_constant_source(source):
                continue
            if source not in pulled:
                pulled[source] = _pulled_source(source, members, first)
            op.operands[index] = pulled[source].results[value.index]
    return [*pulled.values(), *ops]


def _pulled_source(source: Operation, members: set[Operation], before: Operation):
    """`source` moved in front of `before` when only `members` read it, else a clone of it
    placed there."""
    block = before.parent
    if all(_only_used_by(result, members) for result in source.results):
        source.detach()
        block.insert_op_before(source, before)
        return source
    clone = source.clone()
    block.insert_op_before(clone, before)
    return clone


def _only_used_by(value: SSAValue, members: set[Operation]) -> bool:
    """Every use of `value` is by one of `members` (stops at the first other user, so a
    value with many users costs only as many steps as `members` have uses of it)."""
    return all(use.operation in members for use in value.uses)


# --------------------------------------------------------------------------------------
# Memory
# --------------------------------------------------------------------------------------


def stored_layout(value: SSAValue) -> LayoutMode:
    """The memory layout `value` is stored in.

    - a function argument: compact (graph inputs are NALIGN, seed 000);
    - an argument of a region (a group's body): the layout of the region op's operand;
    - a result of an op with regions (a group): the layout of what its terminator returns;
    - a result of an op with `dev_info`: its `mem_layout` for a single-result op, else the
      compact or aligned layout of the result's shape in the family `mem_layout` names
      (as the cmodel writes results);
    - any other result: compact.
    """
    owner = value.owner
    if isinstance(owner, Block):
        parent = owner.parent_op()
        if parent is None or isinstance(parent, func.FuncOp):
            return mem_layout_for(_shape(value), aligned=False)
        return stored_layout(parent.operands[value.index])
    if owner.regions:
        terminator = owner.regions[0].block.last_op
        return stored_layout(terminator.operands[value.index])
    dev = owner.attributes.get("dev_info")
    if dev is None:
        return mem_layout_for(_shape(value), aligned=False)
    layout = _mem_layout(dev)
    if len(owner.results) == 1:
        return layout
    return mem_layout_for(_shape(value), aligned=is_aligned(layout))


_MEM_LAYOUTS: dict[int, tuple[Attribute, LayoutMode]] = {}


def _mem_layout(dev: Attribute) -> LayoutMode:
    """The mem_layout of a dev_info, remembered by identity: few distinct dev_info
    objects exist, and reading a field of the struct attribute (or hashing it) is slow."""
    known = _MEM_LAYOUTS.get(id(dev))
    if known is None or known[0] is not dev:
        if len(_MEM_LAYOUTS) >= 1 << 16:  # parsed IR has one dev_info object per op
            _MEM_LAYOUTS.clear()
        known = _MEM_LAYOUTS[id(dev)] = (dev, dev.get("mem_layout"))
    return known[1]


def stored_bytes(value: SSAValue, config: TX8Config = DEFAULT_CONFIG) -> int:
    """Bytes `value` occupies in memory, in its `stored_layout`."""
    from tx8c.target.mem_layout import byte_size

    return byte_size(_shape(value), value.type.get_element_type(), stored_layout(value), config)


def _shape(value: SSAValue) -> tuple[int, ...]:
    return tuple(value.type.get_shape())
