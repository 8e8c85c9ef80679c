"""group-dag: keep a barrier only after the last group of each layer (seed 003, "Compile
Option 1: opt_barrier", groupDAGPass).

The seed: set every group's `need_barrier` to false; walking the groups from the back,
give each a layer number (0 when its results have no reader or are returned, else its
reader's layer + 1), recording the first and last group of every layer; then set
`need_barrier` on the last group of each layer.

This pass computes the layers with `tx8c.analysis.group_dag.layers` (0 without group
readers, else 1 + the highest reader's layer), moves the groups into layer order
(highest layer first, block order within a layer: a topological order, since every edge
goes to a lower layer), and keeps `need_barrier = true` only on the last group of each
layer, false on the others.

Why it is correct (`missing_barriers` checks it): a barrier makes every tile finish all
groups up to it before any tile goes on. A reader R of a group P's result is in a lower
layer than P; all groups of P's layer come before all groups of R's layer, and the last
of them, at or after P and before R, keeps its barrier: R never starts before every
tile finished P. Dropped barriers separate only groups of one layer, which do not read
each other's results. They do rely on two things later stages must keep:
- groups of one layer may run at the same time on different tiles, so DDR allocation
  must not place a tensor written in one layer where a group of the same layer reads or
  writes another live tensor; reusing a buffer is safe from the epoch after the barrier
  that ends the layer of its last reader (`barrier_epochs`);
- the order of the groups in the block is the program order (codegen must not reorder
  them).

Requires: every compute op of each function in a top-level group (group-optimization);
otherwise a `Tx8Error` says to run group-optimization first.
Guarantees: the top-level groups of each function are in layer order, each layer
contiguous; `need_barrier` is true exactly on the last group of each layer;
`missing_barriers` is empty; `group_id` is 0, 1, ... in the new order (a `template_id`
follows the group it names); values are unchanged.

Departs from the seed: a group whose result is returned and also read by another group
gets its layer from its reader (the seed's "returned -> 0" would put the two in one
layer and could drop the barrier between them); the groups are reordered so that each
layer is contiguous (the seed's firstOpInLayers / lastOpInLayers only name the ends,
which is enough only when the layers already are), and the order of groups from the back
is their block order.

Cost: linear in the groups and their edges (plus a sort of the groups).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Block
from xdsl.passes import ModulePass

from tx8c.analysis.group_dag import group_graph, layers
from tx8c.dialect.base import to_attr
from tx8c.dialect.ops.backend import GroupOp
from tx8c.errors import Tx8Error
from tx8c.ir_utils import function_bodies, is_compute_op, move_to_end, op_list


@dataclass(frozen=True)
class GroupDagPass(ModulePass):
    name = "group-dag"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for block in function_bodies(op):
            _check_all_grouped(block)
            place_barriers(block)


def place_barriers(block: Block) -> None:
    """Order the groups of `block` by layer and keep the last barrier of each layer."""
    groups, readers = group_graph(block)
    layer = layers(readers)
    order = sorted(range(len(groups)), key=lambda i: (-layer[i], i))
    if order != sorted(order):
        move_to_end(block, [groups[i] for i in order])
    _renumber([groups[i] for i in order])
    last_of_layer = {layer[i]: i for i in order}
    for i, group in enumerate(groups):
        _set(group, "need_barrier", to_attr("bool", last_of_layer[layer[i]] == i))


def _renumber(groups: list[GroupOp]) -> None:
    """Number the groups 0, 1, ... in their new order (so ids read as the program
    order), and point every template_id at the new number of the group it named."""
    new_id = {g.attr("group_id"): number for number, g in enumerate(groups)}
    for number, group in enumerate(groups):
        _set(group, "group_id", to_attr("int", number))
        template = group.attr("template_id")
        if template >= 0 and template in new_id:
            _set(group, "template_id", to_attr("int", new_id[template]))


def _set(group: GroupOp, name: str, value: Attribute) -> None:
    """Set an attribute unless it already holds that value (attributes are shared)."""
    current = group.attributes.get(name)
    if current is not value and current != value:  # identity first: shared attributes
        group.attributes[name] = value


def _check_all_grouped(block: Block) -> None:
    for op in op_list(block):
        if is_compute_op(op):
            raise Tx8Error(
                f"group-dag: '{op.name}' is not in a group; group-dag orders groups and "
                "their barriers, so every compute op must be in one (run "
                "group-optimization first)"
            )
