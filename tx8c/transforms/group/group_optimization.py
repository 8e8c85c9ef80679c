"""group-optimization: a group for every compute op not yet in one, and group numbers
(seed 003, "Sharding Search and SPM Management", GroupOptimizationPass).

The seed's createSingleGroup, for every op that is not a Group, a return, a LoadConst or
a None op (`is_compute_op`): the op's operands produced by constant sources (LoadConst,
and tx8be.Constant until move-constant has run: `is_constant_source`) move into the new
group as dependencies, in front of the op; every other operand becomes a group input
and every result a group output (those read later, `GroupOp.wrap`). A constant source
that other ops read too is cloned into the group (the seed moves it, which would leave
its other readers without a value).

Then every top-level group of each function without a `group_id` (-1), pattern groups
included, gets the next free number in block order: 0, 1, 2, ... on a first run.

Requires: function bodies of tx8be ops in SSA order (after group-pattern when patterns
are used).

Guarantees (the invariants the slicing search relies on, together with group-pattern's):
- every compute op of a function body is in exactly one top-level group; the top level
  holds only groups, constant sources read by nothing but the function's return, and
  the return;
- each group's body is isolated from above and topologically ordered; its operands are
  its boundary inputs (values of other groups or function arguments), its results the
  values read after it;
- `group_id` is unique per function; on a first run it increases in block order;
- values are unchanged.

Cost: linear in the ops.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block
from xdsl.passes import ModulePass

from tx8c.dialect.base import to_attr
from tx8c.dialect.ops.backend import GroupOp
from tx8c.ir_utils import (
    function_bodies,
    group_ops,
    is_compute_op,
    is_constant_source,
    op_list,
    pull_constant_sources,
)


@dataclass(frozen=True)
class GroupOptimizationPass(ModulePass):
    name = "group-optimization"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for block in function_bodies(op):
            for single in [o for o in op_list(block) if is_compute_op(o)]:
                GroupOp.wrap(pull_constant_sources([single]))
            _erase_unread_constant_sources(block)
            number_groups(block)


def number_groups(block: Block) -> None:
    """Give the top-level groups of `block` that have no `group_id` (it is -1) the next
    free numbers, in block order: 0, 1, ... on a first run."""
    groups = group_ops(block)
    number = max((g.attr("group_id") for g in groups), default=-1) + 1
    for group in groups:
        if group.attr("group_id") < 0:
            group.attributes["group_id"] = to_attr("int", number)
            number += 1


def _erase_unread_constant_sources(block: Block) -> None:
    """Constant sources nothing reads (dead before grouping): the top level keeps only
    groups, the sources the return reads, and the return."""
    for source in [o for o in op_list(block) if is_constant_source(o)]:
        if all(r.first_use is None for r in source.results):
            source.detach()
            source.erase()
