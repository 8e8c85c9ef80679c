"""regroup-by-cost: merge adjacent groups where the slicing search's estimate says one
group is cheaper than its parts (issue 11, "Beyond the seed"; not in seed 003).

Every group boundary sends data through DDR: a StoreVar writes the value, the next
group's LoadVar reads it back. Merging the two keeps the value in SPM, one slice at a
time, at the price of one slicing plan for both (a shared sharding and split, more
buffers in SPM). Which is cheaper is the cost model's call: for every function, an
interval dynamic program over its groups in block order (`tx8c.slicing.regroup`)
chooses the cut that minimises the sum of the groups' estimated cycles, each group's
estimate being what group-cost's search finds for it. Intervals hold at most `window`
groups (so the work stays linear); groups themselves are not capped (a merged group
holds every op of its members).

Requires: group-ldst has run (groups with their LoadVar/StoreVar and `group_tag`),
every op with its `dev_info` (the layout stage), the body of each function in a
topological order of its groups (the grouping stage guarantees it).

Guarantees:
- each chosen interval of groups becomes one `tx8be.Group` with the attributes of its
  first member; its body is what group-ldst would make of the members' ops: the
  LoadVars first, one per group input (in operand order), then the members' ops in
  order, then one StoreVar per result still read outside (in result order). A value
  passed between members is read by the later ones from its producer in SPM; its
  StoreVar stays only when the value is read after the group too;
- only groups of `group_tag` 0 whose crossing values go StoreVar -> LoadVar are merged
  (a group that runs in DDR, or a value read from DDR by an op without a load, keeps
  its boundary: merging would need loads and stores group-ldst did not plan);
- the group graph stays acyclic: intervals of a topological order cannot close a
  cycle, and the result is checked (`tx8c.slicing.regroup` explains both);
- values are unchanged; statistics under the module attribute `tx8c.regroup`
  (groups before / after, estimated cycles before / after, searches).

Options: `window` (groups per interval, default 4), `opt-search` (factor levels the
search of a merged group visits, as in group-cost; 0 = all).

Runs before group-mapping and group-dag, so the region, barriers and group numbers are
set on the final groups.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass

from tx8c.dialect.ops.backend import GroupOp, YieldOp
from tx8c.errors import Tx8Error
from tx8c.ir_utils import function_bodies, group_ops, record_pass_stats
from tx8c.slicing.group import group_spec
from tx8c.slicing.regroup import Costs, Regrouping, Unit, regroup
from tx8c.slicing.search import SearchOptions
from tx8c.target.config import target_config

STATS_ATTR = "tx8c.regroup"
"""group_tag of a group that runs in DDR (group-ldst): never merged."""


@dataclass(frozen=True)
class RegroupByCostPass(ModulePass):
    name = "regroup-by-cost"

    window: int = 4
    opt_search: int = 0

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.window < 1:
            raise Tx8Error(f"regroup-by-cost: window must be >= 1, got {self.window}")
        costs = Costs(target_config(op), SearchOptions(levels=self.opt_search or None))
        stats = {"groups_before": 0, "groups_after": 0, "cycles_before": 0,
                 "cycles_after": 0}
        for block in function_bodies(op):
            result = regroup_block(block, costs, self.window)
            stats["groups_before"] += result.intervals[-1][1] if result.intervals else 0
            stats["groups_after"] += len(result.intervals)
            stats["cycles_before"] += int(result.before_cycles)
            stats["cycles_after"] += int(result.cycles)
        stats["searches"] = costs.searches
        record_pass_stats(op, STATS_ATTR, self.name, stats)


def regroup_block(block: Block, costs, window: int) -> Regrouping:
    """Cut the groups of `block` where `costs` (a `Costs`, or any callable with its
    interface) says, merge each interval, and check the result is acyclic."""
    groups = group_ops(block)
    result = regroup(read_units(groups), costs, window)
    for first, last in result.intervals:
        if last - first > 1:
            merge_groups(groups[first:last])
    check_acyclic(block)
    return result


def read_units(groups: list[GroupOp]) -> list[Unit]:
    """The groups of one block as the dynamic program's units."""
    unit_of = {g: i for i, g in enumerate(groups)}
    ids: dict[SSAValue, int] = {}

    def number(value: SSAValue) -> int:
        return ids.setdefault(value, len(ids))

    units = []
    for group in groups:
        readers = tuple(
            tuple(sorted({unit_of.get(use.operation, -1) for use in result.uses}))
            for result in group.results)
        units.append(Unit(
            spec=group_spec(group),
            inputs=tuple(number(v) for v in group.operands),
            outputs=tuple(number(r) for r in group.results),
            readers=readers,
            movable=group.attr("group_tag") != GroupOp.IN_DDR,
        ))
    return units


def _is_input_load(op: Operation) -> bool:
    """A LoadVar of a group input (what group-ldst puts at the top of a body)."""
    return (_transfer(op) == "load" and len(op.operands) == 1
            and isinstance(op.operands[0], BlockArgument))


def _transfer(op: Operation) -> str:
    """The op's DDR transfer ("load", "store" or none); the Yield has none."""
    return "" if isinstance(op, YieldOp) else op.ddr_transfer()


def merge_groups(members: list[GroupOp]) -> GroupOp:
    """Replace `members` (consecutive groups of one block, in order, a merge that
    `merge_specs` found legal) by one group (module docstring)."""
    merger = _Merger(members)
    return merger.run()


class _Merger:
    def __init__(self, members: list[GroupOp]):
        self.members = members
        self.inside = set(members)
        self.produced = {res: (p, r) for p, g in enumerate(members)
                         for r, res in enumerate(g.results)}
        self.inputs: dict[SSAValue, None] = {}
        for g in members:
            for v in g.operands:
                if v not in self.produced:
                    self.inputs.setdefault(v, None)

    def outside_value(self, g: GroupOp, arg: BlockArgument) -> SSAValue:
        return g.operands[arg.index]

    def run(self) -> GroupOp:
        body = Block(arg_types=[v.type for v in self.inputs])
        argument = dict(zip(self.inputs, body.args, strict=True))
        for value, arg in argument.items():
            arg.name_hint = value.name_hint  # %x outside reads as %x inside
        loads = self._loads()
        for value in self.inputs:
            if value in loads:
                load = loads[value]
                load.detach()
                load.operands[0] = argument[value]
                body.add_op(load)
        for g in self.members:
            for op in [o for o in g.block.ops if not isinstance(o, YieldOp)]:
                if _transfer(op) == "store":
                    continue
                for index, operand in enumerate(op.operands):
                    if isinstance(operand, BlockArgument) and operand.owner is g.block:
                        op.operands[index] = argument[self.outside_value(g, operand)]
                op.detach()
                body.add_op(op)
        kept = [(g, r) for g in self.members for r, res in enumerate(g.results)
                if any(u.operation not in self.inside for u in res.uses)]
        stored: list[SSAValue] = [g.yield_op.operands[r] for g, r in kept]
        for value in dict.fromkeys(stored):
            owner = value.owner
            if isinstance(owner, Operation) and _transfer(owner) == "store":
                owner.detach()
                body.add_op(owner)
        body.add_op(YieldOp.create(operands=stored))
        merged = GroupOp.make(list(self.inputs), body=body)
        merged.attributes.update(self.members[0].attributes)
        last = self.members[-1]
        last.parent.insert_op_before(merged, last)
        for (g, r), result in zip(kept, merged.results, strict=True):
            result.name_hint = g.results[r].name_hint
            g.results[r].replace_all_uses_with(result)
        for g in self.members:
            g.detach()
        for g in self.members:
            g.erase(safe_erase=False)
        return merged

    def _loads(self) -> dict[SSAValue, Operation]:
        """The LoadVar kept for each merged input; every other LoadVar of a member is
        replaced (by the kept one, or by the value an earlier member stored) and erased."""
        kept: dict[SSAValue, Operation] = {}
        for g in self.members:
            for load in [o for o in g.block.ops if _is_input_load(o)]:
                value = self.outside_value(g, load.operands[0])
                if value in self.produced:
                    p, r = self.produced[value]
                    store = self.members[p].yield_op.operands[r].owner
                    load.results[0].replace_all_uses_with(store.operands[0])
                elif value in kept:
                    load.results[0].replace_all_uses_with(kept[value].results[0])
                else:
                    kept[value] = load
                    continue
                load.detach()
                load.erase()
        return kept


def check_acyclic(block: Block) -> None:
    """Every operand of a top-level op is defined before it (the block is a topological
    order of the groups, so the group graph is acyclic)."""
    seen: set[SSAValue] = set(block.args)
    for op in block.ops:
        for operand in op.operands:
            if isinstance(operand.owner, Operation) and operand.owner.parent is block \
                    and operand not in seen:
                raise Tx8Error(f"regroup-by-cost: {op.name} reads a value defined after "
                               "it; the groups would form a cycle (an internal error)")
        seen.update(op.results)
