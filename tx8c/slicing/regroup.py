"""Regrouping by cost on plain data: the spec of adjacent groups merged into one, and the
interval dynamic program that chooses where the groups of a function are cut.

A function's groups, in their block order (a topological order of the group graph), are
the units. The program partitions them into intervals of at most `window` consecutive
units and makes each interval one group. Cutting a topological order into consecutive
intervals can never close a cycle: every edge of the graph goes forward in the order, so
every edge between two intervals goes from an earlier interval to a later one, and the
contracted graph is ordered too (acyclic by construction; `acyclic_in_order` checks it
on the IR after the rewrite).

**Merging** (`merge_specs`) mirrors what group-ldst makes of the merged group, on the
groups' `GroupSpec`s: a value that leaves an earlier member through a StoreVar and
enters a later one through a LoadVar (the only reader of that group input) stays in SPM
- the later member's ops read the stored value's producer, the LoadVar goes, and the
StoreVar goes too unless the value is still read outside the interval (or returned).
Group inputs read by several members become one input with one LoadVar. The merged
node order is group-ldst's: the LoadVars first (in input order), then the members'
other ops in member order, then the StoreVars (in output order). A merge is illegal
(None) when a value crosses between members any other way - read from DDR by an op
that has no load for it (Gather's table), or produced in DDR (a relabel of a DDR value,
a group input passed through) - or when a member runs in DDR (`group_tag` 2): those
would need loads or stores group-ldst did not plan.

**The program** (`regroup`): best[j] = min over i in [j - window, j) of
best[i] + cost(units i..j-1), where a single unit's cost is its own plan's estimate
(the same search group-cost runs) and a merged interval's is the estimate of the merged
group's best plan (infinite when illegal or when no plan fits the SPM). The search runs
once per distinct merged group (`GroupSpec.key`, the template key), and not at all when
the group's lower bound (`evaluate.group_bound`: compulsory NE, CT and DDR work, which
no plan's estimate undercuts) plus best[i] cannot beat the best cut found for j (branch
and bound: exact for the estimate). The work is O(units x window) merges and at most as
many searches, linear in the model for a fixed window.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from tx8c.slicing.evaluate import group_bound
from tx8c.slicing.group import GroupSpec, Node, Stored, ValueRef, assemble_spec
from tx8c.slicing.search import NoPlan, SearchOptions, search
from tx8c.target.config import TX8Config

INFINITE = math.inf


@dataclass(frozen=True)
class Unit:
    """One group of the function, as the program sees it.

    `inputs[k]` / `outputs[r]`: an id of the value the group reads as operand k / yields
    as result r (ids are the function's own numbering); `readers[r]`: the units that
    read result r, with -1 for anything that is not a group (the return); `movable`:
    the group works in SPM (group_tag 0) and may be merged."""

    spec: GroupSpec
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    readers: tuple[tuple[int, ...], ...]
    movable: bool


def _is_input_load(node: Node) -> bool:
    """A LoadVar of a group input (a LoadConst has no operand)."""
    return node.kind == "load" and len(node.inputs) == 1 and node.inputs[0].is_input


class _Merge:
    """The merged spec of units[first:last] (see the module docstring)."""

    def __init__(self, units: Sequence[Unit], first: int, last: int):
        self.units = units
        self.first, self.last = first, last
        self.members = units[first:last]
        self.produced: dict[int, tuple[int, int]] = {}
        for p, unit in enumerate(self.members):
            for r, value in enumerate(unit.outputs):
                self.produced[value] = (p, r)
        self.input_of: dict[int, int] = {}
        self.inputs: list[Stored] = []
        self.redirect: dict[tuple[int, int], tuple[int, ValueRef]] = {}
        self.position: dict[tuple[int, int], int] = {}
        self.order: list[tuple[int, Node]] = []

    def spec(self) -> GroupSpec | None:
        if not all(u.movable for u in self.members):
            return None
        self._register_inputs()
        if not self._place_loads():
            return None
        for p, unit in enumerate(self.members):
            for node in unit.spec.nodes:
                if not _is_input_load(node) and node.kind != "store":
                    self._place(p, node)
        outputs = self._outputs()
        if outputs is None:
            return None
        nodes = [self._renumbered(p, node, i) for i, (p, node) in enumerate(self.order)]
        return assemble_spec(nodes, tuple(self.inputs), outputs)

    def _internal(self, p: int, value: int) -> tuple[int, int] | None:
        found = self.produced.get(value)
        return found if found is not None and found[0] < p else None

    def _register_inputs(self) -> None:
        for p, unit in enumerate(self.members):
            for k, value in enumerate(unit.inputs):
                if self._internal(p, value) is None and value not in self.input_of:
                    self.input_of[value] = len(self.inputs)
                    self.inputs.append(unit.spec.inputs[k])

    def _place_loads(self) -> bool:
        """One LoadVar per merged input, in input order; a duplicate LoadVar and an
        internal value's LoadVar are redirected (to the one placed, to the value its
        producer stored). False when a value crosses between members other than
        StoreVar -> LoadVar."""
        loads: dict[int, tuple[int, Node]] = {}
        for p, unit in enumerate(self.members):
            readers = _input_readers(unit.spec)
            for k, value in enumerate(unit.inputs):
                producer = self._internal(p, value)
                if producer is None:
                    for node in filter(_is_input_load, readers[k]):
                        first = loads.setdefault(value, (p, node))
                        if first[1] is not node:
                            self.redirect[(p, node.index)] = (
                                first[0], ValueRef(first[1].index, 0))
                    continue
                stored = self._stored_value(*producer)
                only_load = len(readers[k]) == 1 and _is_input_load(readers[k][0])
                if stored is None or not only_load:
                    return False
                self.redirect[(p, readers[k][0].index)] = stored
        for value in sorted(loads, key=self.input_of.__getitem__):
            self._place(*loads[value])
        return True

    def _stored_value(self, p: int, r: int) -> tuple[int, ValueRef] | None:
        """What member p's StoreVar of its result r stores (None: r is not stored)."""
        spec = self.members[p].spec
        ref = spec.outputs[r]
        if ref.is_input or spec.nodes[ref.node].kind != "store":
            return None
        return p, spec.nodes[ref.node].inputs[0]

    def _escapes(self, unit: Unit, r: int) -> bool:
        return any(not self.first <= u < self.last for u in unit.readers[r])

    def _outputs(self) -> tuple[ValueRef, ...] | None:
        kept: list[tuple[int, ValueRef]] = []
        for p, unit in enumerate(self.members):
            for r in range(len(unit.outputs)):
                if self._escapes(unit, r):
                    kept.append((p, unit.spec.outputs[r]))
        for p, ref in kept:
            if not ref.is_input and (p, ref.node) not in self.position:
                self._place(p, self.members[p].spec.nodes[ref.node])
        return tuple(self._resolve(p, ref) for p, ref in kept)

    def _place(self, p: int, node: Node) -> None:
        self.position[(p, node.index)] = len(self.order)
        self.order.append((p, node))

    def _resolve(self, p: int, ref: ValueRef) -> ValueRef:
        if ref.is_input:
            return ValueRef(-1, self.input_of[self.members[p].inputs[ref.index]])
        target = self.redirect.get((p, ref.node))
        if target is not None:
            return self._resolve(*target)
        return ValueRef(self.position[(p, ref.node)], ref.index)

    def _renumbered(self, p: int, node: Node, index: int) -> Node:
        return replace(node, index=index,
                       inputs=tuple(self._resolve(p, ref) for ref in node.inputs),
                       label=f"{node.label.rsplit('#', 1)[0]}#{index}")


def _input_readers(spec: GroupSpec) -> list[list[Node]]:
    readers: list[list[Node]] = [[] for _ in spec.inputs]
    for node in spec.nodes:
        for ref in node.inputs:
            if ref.is_input:
                readers[ref.index].append(node)
    return readers


def merge_specs(units: Sequence[Unit], first: int, last: int) -> GroupSpec | None:
    """The spec of units[first:last] merged into one group, or None when the merge is
    illegal (module docstring). One unit merges into itself."""
    if last - first == 1:
        return units[first].spec
    return _Merge(units, first, last).spec()


@dataclass
class Costs:
    """The estimate of a group's best plan, searched once per distinct group."""

    config: TX8Config
    options: SearchOptions
    cache: dict[tuple, float] = field(default_factory=dict)
    searches: int = 0

    def __call__(self, spec: GroupSpec) -> float:
        key = spec.key
        if key not in self.cache:
            self.searches += 1
            try:
                self.cache[key] = search(spec, self.config, self.options).cycles
            except NoPlan:
                self.cache[key] = INFINITE
        return self.cache[key]

    def lower_bound(self, spec: GroupSpec) -> float:
        return self.cache.get(spec.key) or group_bound(spec, self.config)


@dataclass(frozen=True)
class Regrouping:
    """The cut: `intervals` [first, last) of units in order, and the estimates."""

    intervals: tuple[tuple[int, int], ...]
    cycles: float
    before_cycles: float
    searches: int


class CostModel(Protocol):
    """What the program needs of its costs (`Costs`; tests substitute others)."""

    def __call__(self, spec: GroupSpec) -> float: ...

    def lower_bound(self, spec: GroupSpec) -> float: ...


def regroup(units: Sequence[Unit], costs: CostModel, window: int) -> Regrouping:
    """The cheapest partition of `units` into intervals of at most `window` units
    (module docstring). A unit alone always has a finite cost, so the partition into
    single units is always a candidate: a group in DDR costs nothing here, and a group
    with no plan at all counts as free and is left alone (group-cost reports it)."""
    n = len(units)
    best = [0.0] + [INFINITE] * n
    cut = [0] * (n + 1)
    singles = [costs(u.spec) if u.movable else 0.0 for u in units]
    singles = [0.0 if c == INFINITE else c for c in singles]
    for last in range(1, n + 1):
        for first in range(last - 1, max(0, last - window) - 1, -1):
            if first == last - 1:
                cost = singles[first]
            else:
                spec = merge_specs(units, first, last)
                if spec is None:
                    break  # the offending crossing stays in every longer interval
                if best[first] + costs.lower_bound(spec) >= best[last]:
                    continue
                cost = costs(spec)
            if best[first] + cost < best[last]:
                best[last], cut[last] = best[first] + cost, first
    intervals = []
    last = n
    while last > 0:
        intervals.append((cut[last], last))
        last = cut[last]
    return Regrouping(tuple(reversed(intervals)), best[n], sum(singles),
                      getattr(costs, "searches", 0))
