"""A group read once into frozen plain data: what the slicing search works on.

`group_spec(group_op)` walks a `tx8be.Group`'s body once and records, for every op, its
`Slicer` (shapes, windows, work), its engine, where its operands come from, and how its
results are stored; after that the search never touches an xDSL object (DESIGN.md,
"Backend data model"). Equal groups give equal specs, whose `key` makes the template
cache of group-cost (seed 003: sliceHelpMap / GroupKey).

What the search assumes of a group (group-ldst, issue 10, establishes it):
- the body is topologically sorted and isolated from above: its block arguments are the
  group inputs (tensors in DDR);
- a group input is read into SPM by a load (`ddr_transfer() == "load"`, LoadVar), or read
  from DDR by the op itself when its OpAttr `need_load` bit is clear (Gather's table);
  constants are loaded by LoadConst nodes inside the group, except a constant that
  every reader takes straight from DDR (need_load bit clear: an embedding table, which
  can be far larger than the SPM): its LoadConst becomes a "ddr" node that never runs
  and holds no SPM (the reader's own DDR transfer is its cost);
- every yielded value is written back by a store (StoreVar);
- the producer of the largest output drives the slicing (the anchor; the seed cuts its
  "storeOp outShape", the same dims). Every node must lie upstream of it, or be a store of a value
  computed on the way (an intermediate that leaves the group, another piece of a Split
  that is the anchor), and the anchor's whole window must make every store write its
  whole value, for the group to be cut; a group with another sink (a store of a Split's
  piece that no upstream node reads, or of a Conv whose rows a Slice on the way to the
  anchor drops) can only run whole (`sliceable` False).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import NamedTuple

from tx8c.analysis.spm_resident import GroupResidency, read_group_residency
from tx8c.dialect.layout import is_aligned
from tx8c.dialect.types import short_name
from tx8c.interfaces.oplib import Engine
from tx8c.interfaces.sharding import Slicer, cached_field
from tx8c.ir_utils import stored_layout
from tx8c.slicing.propagate import stores_whole


class ValueRef(NamedTuple):
    """A value of the group: result `index` of node `node`, or group input `index` when
    `node` is -1.

    A named tuple rather than a frozen dataclass: the search hashes and builds millions
    of them (window tables are keyed by them), and a tuple's hash and equality run in C.
    Same hash as the dataclass had (the hash of its fields' tuple), so sets of them
    iterate in the same order; the same repr."""

    node: int
    index: int

    @property
    def is_input(self) -> bool:
        return self.node < 0


@dataclass(frozen=True)
class Stored:
    """How a value is stored: shape, element type and whether channel-aligned (Cx/NCx)."""

    shape: tuple[int, ...]
    dtype: str
    aligned: bool


@dataclass(frozen=True)
class Node:
    """One op of the group.

    `kind`: "load" (DDR -> SPM), "store" (SPM -> DDR), "ddr" (a constant left in DDR for
    readers that fetch from it themselves) or "compute"; `inputs`: where each
    operand comes from; `from_ddr[i]`: operand i is read straight from DDR (no SPM
    buffer); `inplace`: the result may take the buffer of operand 0; `results`: how each
    result is stored; `label`: the op's name and position, for reports."""

    index: int
    kind: str
    engine: Engine
    slicer: Slicer
    inputs: tuple[ValueRef, ...]
    from_ddr: tuple[bool, ...]
    inplace: bool
    results: tuple[Stored, ...]
    label: str
    resident: bool = False
    """A load from (store to) an SPM-resident tensor (`tx8c.analysis.spm_resident`):
    its DMA moves the window over the NoC, not through DDR."""


@dataclass(frozen=True)
class GroupSpec:
    """A group as plain data (see the module docstring)."""

    nodes: tuple[Node, ...]
    inputs: tuple[Stored, ...]
    outputs: tuple[ValueRef, ...]
    anchor: int
    """The node whose output dims the search cuts (the producer of the group's largest
    output, or its store)."""
    sliceable: bool
    spm_reserve: int = 0
    """SPM bytes at the top of every tile kept for resident values live while the group
    runs: its buffers fit in `spm_bytes_per_tile - spm_reserve`."""
    ready_inputs: frozenset[int] = frozenset()
    """The group's inputs no group it may run beside still writes (every input but
    `tx8c.analysis.group_dag.waiting_operands`'), set by group-cost with cross-group
    overlap: the lowering loads them first, as constants, and so does the estimate
    (`tx8c.slicing.evaluate.simulate_tile`). Not part of `key`: groups of one template
    share its plan, each estimated with its own ready inputs (group-cost's
    `as_run_by`)."""

    @property
    def anchor_loops(self):
        """The anchor's output loop dims: what a candidate shards and splits."""
        slicer = self.nodes[self.anchor].slicer
        return slicer.loops[: slicer.num_outputs]

    @property
    def anchor_shape(self) -> tuple[int, ...]:
        return tuple(d.size for d in self.anchor_loops)

    @property
    def key(self) -> tuple:
        """Equal keys, equal plans (the template cache key): everything but labels."""
        return (
            tuple((n.kind, n.engine, n.slicer, n.inputs, n.from_ddr, n.inplace, n.results,
                   n.resident) for n in self.nodes),
            self.inputs, self.outputs, self.anchor, self.spm_reserve,
        )

    @cached_field
    def result_refs(self) -> tuple[tuple[ValueRef, ...], ...]:
        """For each node, the refs of its results."""
        return tuple(tuple(ValueRef(n.index, r) for r in range(len(n.results)))
                     for n in self.nodes)

    @cached_field
    def transfers(self) -> tuple[int, ...]:
        """The indices of the load and store nodes (the DMAs between DDR and SPM)."""
        return tuple(n.index for n in self.nodes if n.kind in ("load", "store"))

    def users(self) -> list[list[tuple[int, int]]]:
        """For each node, the (node, operand index) pairs that read one of its results."""
        users: list[list[tuple[int, int]]] = [[] for _ in self.nodes]
        for n in self.nodes:
            for i, ref in enumerate(n.inputs):
                if not ref.is_input:
                    users[ref.node].append((n.index, i))
        return users

    def value(self, ref: ValueRef) -> Stored:
        return self.inputs[ref.index] if ref.is_input else self.nodes[ref.node].results[ref.index]


def _stored(value) -> Stored:
    """How `value` is stored (`ir_utils.stored_layout`: a group input as its producer
    outside the group stored it)."""
    t = value.type
    return Stored(tuple(t.get_shape()), short_name(t.get_element_type()),
                  is_aligned(stored_layout(value)))


def group_spec(group) -> GroupSpec:
    """Read `group` (a tx8be.Group) into a GroupSpec."""
    block = group.block
    number = {}
    nodes = []
    args = {arg: i for i, arg in enumerate(block.args)}
    body = [op for op in block.ops if op is not group.yield_op]
    for i, op in enumerate(body):
        for r, result in enumerate(op.results):
            number[result] = ValueRef(i, r)
    attrs = [op.query_op_attr() for op in body]
    in_ddr = _constants_left_in_ddr(body, attrs, number)
    for i, (op, attr) in enumerate(zip(body, attrs, strict=True)):
        transfer = op.ddr_transfer()
        inputs, from_ddr = [], []
        for k, operand in enumerate(op.operands):
            ref = ValueRef(-1, args[operand]) if operand in args else number[operand]
            inputs.append(ref)
            needs_load = bool(attr.need_load >> k & 1)
            from_ddr.append((ref.is_input and (transfer == "load" or not needs_load))
                            or ref.node in in_ddr)
        kind = "ddr" if i in in_ddr else (
            transfer if transfer in ("load", "store") else "compute")
        nodes.append(Node(
            index=i, kind=kind, engine=attr.engine, slicer=op.slicer(), inputs=tuple(inputs),
            from_ddr=tuple(from_ddr), inplace=attr.mem_inplace,
            results=tuple(_stored(r) for r in op.results),
            label=f"{op.name.removeprefix('tx8be.')}#{i}",
        ))
    outputs = tuple(
        ValueRef(-1, args[v]) if v in args else number[v] for v in group.yield_op.operands
    )
    residency = read_group_residency(group)
    if residency.reserve:
        nodes = _mark_resident(nodes, outputs, residency)
    spec = assemble_spec(nodes, tuple(_stored(arg) for arg in block.args), outputs)
    return replace(spec, spm_reserve=residency.reserve) if residency.reserve else spec


def _mark_resident(nodes: list[Node], outputs: tuple[ValueRef, ...],
                   residency: GroupResidency) -> list[Node]:
    """The loads of resident operands and the stores of resident results, marked."""
    stores = {outputs[r].node for r in residency.results if not outputs[r].is_input}
    operands = set(residency.operands)
    return [replace(n, resident=True) if (
        n.kind == "store" and n.index in stores) or (
        n.kind == "load" and n.inputs and n.inputs[0].is_input
        and n.inputs[0].index in operands) else n for n in nodes]


def assemble_spec(nodes, inputs: tuple[Stored, ...], outputs: tuple[ValueRef, ...]
                  ) -> GroupSpec:
    """A GroupSpec of `nodes` (topologically ordered, numbered by position) with its
    anchor found (also how regroup-by-cost makes the spec of merged groups)."""
    nodes = tuple(nodes)
    choices = _anchor_choices(nodes)
    for producer in choices:
        spec = GroupSpec(nodes, inputs, outputs, producer, True)
        if _covers(nodes, producer) and stores_whole(spec):
            return spec
    fallback = choices[0] if choices else len(nodes) - 1
    return GroupSpec(nodes, inputs, outputs, fallback, False)


def _constants_left_in_ddr(body, attrs, number) -> set[int]:
    """The constant loads (no operands) whose every reader has the operand's need_load
    bit clear: they stay in DDR."""
    readers: dict[int, list[bool]] = {}
    for op, attr in zip(body, attrs, strict=True):
        for k, operand in enumerate(op.operands):
            ref = number.get(operand)
            if ref is not None:
                readers.setdefault(ref.node, []).append(bool(attr.need_load >> k & 1))
    return {i for i, op in enumerate(body)
            if op.ddr_transfer() == "load" and not op.operands
            and readers.get(i) and not any(readers[i])}


def _anchor_choices(nodes) -> list[int]:
    """The nodes that may drive the group, best first: the producers of stored values (a
    store of a group input stands for itself) in order of the size of what they store;
    none when nothing is stored (the last node drives the group, whole).

    The first whose slices cover the group drives it (`assemble_spec`): every node lies
    upstream of it or stores a value computed on the way (`_covers`), and its whole window
    makes every store write its whole value (`propagate.stores_whole`: not so when a
    Slice on the way drops rows of a stored value). When none does, the first drives it
    and the group runs whole."""
    stores = [n for n in nodes if n.kind == "store"]
    ranked = sorted(stores, key=lambda n: (-_volume(n.results[0].shape), n.index))
    producers = []
    for store in ranked:
        producer = store.index if store.inputs[0].is_input else store.inputs[0].node
        if producer not in producers:
            producers.append(producer)
    return producers


def _covers(nodes: list[Node], anchor: int) -> bool:
    """Every node lies upstream of `anchor` or stores a value that the anchor's slices
    compute whole on the way: a result of the anchor itself, or one that an upstream node
    reads. Another result of an upstream multi-result node that only its store reads (a
    Split's other piece) is not computed by the anchor's slices (propagation asks each
    node for what its readers need), so its store would write nothing."""
    upstream = {anchor}
    read: set[ValueRef] = set()
    for n in reversed(nodes):
        if n.index in upstream:
            operands = [ref for ref in n.inputs if not ref.is_input]
            upstream.update(ref.node for ref in operands)
            read.update(operands)
    side_stores = {n.index for n in nodes if n.kind == "store" and not n.inputs[0].is_input
                   and (n.inputs[0].node == anchor or n.inputs[0] in read)}
    return len(upstream | side_stores) == len(nodes)


def _volume(shape) -> int:
    count = 1
    for d in shape:
        count *= d
    return count
