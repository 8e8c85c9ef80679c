"""What the grouping stage produced, for report.json and the benchmarks.

Bytes crossing a group's boundary are the DDR traffic between groups: every group input
is read from DDR (once per group that reads it) and every group output is written to DDR
once, each in the layout it is stored in (`value_stored_bytes`). Constant sources are not
counted: they move inside the groups that read them and are loaded from the constant
area, not passed between groups.

The same count over the singles-only grouping (every compute op its own group, as
`opt-group=none` makes) is computed from the grouped IR itself, by looking through the
group boundaries and the LoadVar/StoreVar that group-ldst inserted, so the two figures
compare the same program.
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue

from tx8c.dialect.ops.backend import GroupOp
from tx8c.interfaces.traits import ByteMove
from tx8c.ir_utils import (
    function_bodies,
    is_compute_op,
    is_constant_source,
    value_stored_bytes,
)


def _is_dma(op: Operation) -> bool:
    """A LoadVar or StoreVar (the ByteMove trait): the boundary moves group-ldst inserts,
    the grouping's own ops, not steps of the program."""
    return op.has_trait(ByteMove)


def group_report(module: ModuleOp) -> dict:
    """Groups (id, ops, tag, barrier, inputs and outputs with their bytes) and totals:
    boundary bytes of this grouping and of the singles-only grouping."""
    groups = [op for block in function_bodies(module) for op in block.ops
              if isinstance(op, GroupOp)]
    entries = [_group_entry(g) for g in groups]
    tags: dict[str, int] = {}
    for e in entries:
        tags[str(e["tag"])] = tags.get(str(e["tag"]), 0) + 1
    total = sum(e["boundary_bytes"] for e in entries)
    singles = singles_boundary_bytes(module)
    return {
        "count": len(groups),
        "ops": sum(len(e["ops"]) for e in entries),
        "tags": dict(sorted(tags.items())),
        "barriers": sum(e["barrier"] for e in entries),
        "boundary_bytes": total,
        "singles_boundary_bytes": singles,
        "boundary_ratio_to_singles": round(total / singles, 6) if singles else None,
        "groups": entries,
    }


def _group_entry(group: GroupOp) -> dict:
    inputs = [_tensor(v) for v in group.operands if not _is_constant(v)]
    outputs = [_tensor(v) for v in group.results]
    return {
        "id": group.attr("group_id"),
        "ops": [op.name.removeprefix("tx8be.") for op in group.block.ops
                if is_compute_op(op) and not _is_dma(op)],
        "tag": group.attr("group_tag"),
        "barrier": group.attr("need_barrier"),
        "loads": sum(_is_dma(op) and op.ddr_transfer() == "load" for op in group.block.ops),
        "stores": sum(_is_dma(op) and op.ddr_transfer() == "store" for op in group.block.ops),
        "inputs": inputs,
        "outputs": outputs,
        "boundary_bytes": sum(t["bytes"] for t in inputs + outputs),
    }


def _tensor(value: SSAValue) -> dict:
    t = value.type
    return {
        "shape": list(t.get_shape()),
        "dtype": str(t.get_element_type()),
        "bytes": value_stored_bytes(value),
    }


def _is_constant(value: SSAValue) -> bool:
    return isinstance(value.owner, Operation) and is_constant_source(value.owner)


def boundary_bytes(module: ModuleOp) -> int:
    """Bytes crossing the boundaries of the module's top-level groups."""
    return sum(
        sum(value_stored_bytes(v) for v in g.operands if not _is_constant(v))
        + sum(value_stored_bytes(v) for v in g.results)
        for block in function_bodies(module) for g in block.ops if isinstance(g, GroupOp)
    )


def singles_boundary_bytes(module: ModuleOp) -> int:
    """The bytes that would cross group boundaries if every compute op were its own
    group: each op reads its distinct non-constant operands and writes every result
    something reads."""
    total = 0
    for block in function_bodies(module):
        for op in _program_steps(block):
            sources = {source_value(v) for v in op.operands}
            total += sum(value_stored_bytes(v) for v in sources if not _is_constant(v))
            total += sum(value_stored_bytes(r) for r in op.results if r.first_use is not None)
    return total


def _program_steps(block: Block):
    """The compute ops of `block` and of its groups, without the groups' DMA moves."""
    for op in block.ops:
        if isinstance(op, GroupOp):
            yield from _program_steps(op.block)
        elif is_compute_op(op) and not _is_dma(op):
            yield op


def source_value(value: SSAValue) -> SSAValue:
    """The value a compute op really reads: through group arguments and results and the
    LoadVar/StoreVar moves, to the op (or function argument) that produced it."""
    while True:
        owner = value.owner
        if isinstance(owner, Block):
            parent = owner.parent_op()
            if not isinstance(parent, GroupOp):
                return value
            value = parent.operands[value.index]
        elif isinstance(owner, GroupOp):
            value = owner.yield_op.operands[value.index]
        elif _is_dma(owner):
            value = owner.operands[0]
        else:
            return value
