"""The tensors a compiled function keeps in DDR, their lifetimes and their placement
(seed 003, "Compile Option 1: opt_ddr"; shared by the ddr-alloc and ddr-reorder passes
and the lowering to the Program).

**Which tensors.** After grouping every value of the function lives in DDR between
groups: the graph inputs (function arguments), every result of a group (written by its
StoreVars) and the constants (the ConstContainer's region, `consts.bin`). A group of
relabels alone (`group_tag` 2, every op `moves_no_bytes`) writes nothing: each of its
results is the bytes of one of its inputs read under another shape, so the result is an
alias of that input's tensor (same offset) and extends its life.

**Names.** `in<i>` for argument i, `g<id>.<r>` for result r of the group with
`group_id` id, `c<id>` for constant id. The names are what the Program and reports use.

**Time.** Lifetimes are counted in barrier epochs (`tx8c.analysis.group_dag`): groups
of one epoch may run at the same time on different tiles, so a tensor written in epoch
p and last read in epoch r is live in [p, r + 1); two tensors whose epochs meet may be
in use at once and must not share bytes, while a tensor last read in epoch r can give
its bytes to one written in epoch r + 1 or later (group-dag's rule). Graph inputs are
live from epoch 0, graph outputs to the end.

**Placement.** `place` puts the variables after the constants region with the shared
interval allocator (best of several greedy orders, then a local search of moves) and
reports the peak beside the max-live lower bound of the same lifetimes (DESIGN.md:
lower bounds beside every allocation). The result is stored as JSON in the module
attribute `tx8c.ddr`.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Block, BlockArgument, SSAValue

from tx8c.analysis.group_dag import barrier_epochs
from tx8c.analysis.interval_alloc import Buffer, aligned, allocate, max_live
from tx8c.dialect.ops.backend import GroupOp
from tx8c.dialect.types import short_name
from tx8c.errors import Tx8Error
from tx8c.ir_utils import group_ops, shape_of, stored_layout
from tx8c.target.config import TX8Config
from tx8c.target.mem_layout import stored_bytes

DDR_ATTR = "tx8c.ddr"
"""The group_tag of a group that runs in DDR (group-ldst)."""


@dataclass(frozen=True)
class DdrValue:
    """A variable tensor in DDR (see the module docstring)."""

    name: str
    kind: str
    """"input", "output" or "value" (between groups)."""
    shape: tuple[int, ...]
    dtype: str
    layout: str
    size: int
    live: tuple[int, int]


@dataclass(frozen=True)
class DdrTensors:
    """The variables of a function, and the name of every SSA value that lives in DDR
    (aliases of relabel groups map to the tensor they alias)."""

    values: tuple[DdrValue, ...]
    names: dict[SSAValue, str]
    aliases: dict[str, tuple[str, SSAValue]]
    """Per result of a relabel group (named like any group result), the tensor whose
    bytes it is and the SSA value."""
    epochs: int
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]


def main_body(module: ModuleOp) -> Block:
    """The body of `@main` (or of the only function)."""
    funcs = [op for op in module.ops if isinstance(op, func.FuncOp) and op.body.blocks]
    for f in funcs:
        if f.sym_name.data == "main":
            return f.body.block
    if len(funcs) != 1:
        raise Tx8Error(f"the module has {len(funcs)} functions and none is called @main; "
                       "DDR allocation needs one @main function")
    return funcs[0].body.block


def alias_source(group: GroupOp, index: int) -> SSAValue:
    """The group operand whose bytes result `index` of a relabel group reads."""
    value = group.yield_op.operands[index]
    while not isinstance(value, BlockArgument):
        owner = value.owner
        if not owner.operands or not owner.moves_no_bytes():
            raise Tx8Error(
                f"group {group.attr('group_id')} runs in DDR (group_tag 2) but "
                f"'{owner.name}' moves bytes; run group-ldst so it gets a load and a store")
        value = owner.operands[0]
    return group.operands[value.index]


def ddr_tensors(module: ModuleOp, config: TX8Config) -> DdrTensors:
    """The variables of `@main` with their lifetimes (see the module docstring)."""
    block = main_body(module)
    groups = group_ops(block)
    epoch = dict(zip(groups, barrier_epochs(groups), strict=True))
    end = (max(epoch.values()) + 1) if epoch else 1
    names: dict[SSAValue, str] = {}
    roots: dict[str, str] = {}
    aliases: dict[str, tuple[str, SSAValue]] = {}
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    kinds: dict[str, str] = {}
    values: dict[str, SSAValue] = {}
    for i, arg in enumerate(block.args):
        names[arg] = f"in{i}"
        first[names[arg]], last[names[arg]], kinds[names[arg]] = 0, 1, "input"
        values[names[arg]] = arg
    for g in groups:
        e = epoch[g]
        for v in g.operands:
            root = roots.get(names[v], names[v])
            last[root] = max(last[root], e + 1)
        for r, result in enumerate(g.results):
            name = f"g{g.attr('group_id')}.{r}"
            names[result] = name
            if g.attr("group_tag") == GroupOp.IN_DDR:
                source = names[alias_source(g, r)]
                roots[name] = roots.get(source, source)
                aliases[name] = (roots[name], result)
                continue
            first[name], last[name], kinds[name] = e, e + 1, "value"
            values[name] = result
    outputs = []
    for v in block.last_op.operands:
        if v not in names:
            raise Tx8Error(f"the function returns a value of '{v.owner.name}' outside any "
                           "group; run the grouping stage before DDR allocation")
        outputs.append(names[v])
        root = roots.get(names[v], names[v])
        last[root] = end
        if kinds[root] == "value":
            kinds[root] = "output"
    out = []
    for name, value in values.items():
        shape, layout = shape_of(value), stored_layout(value)
        dtype = value.type.get_element_type()
        out.append(DdrValue(name, kinds[name], tuple(shape), short_name(dtype), layout.name,
                            stored_bytes(shape, dtype, layout, config),
                            (first[name], last[name])))
    inputs = tuple(names[a] for a in block.args)
    return DdrTensors(tuple(out), names, aliases, end, inputs, tuple(outputs))


@dataclass(frozen=True)
class DdrPlacement:
    """Where everything sits in DDR: the constants region [0, constants_bytes) laid out
    as `opt_ddr` says, the variables from `variables_base` on at `offsets`."""

    opt_ddr: bool
    align: int
    constants_bytes: int
    variables_base: int
    offsets: dict[str, int]
    peak: int
    """Bytes of the variables region (highest aligned end)."""
    lower_bound: int
    """Max-live lower bound of the variables region at the same alignment."""
    order: str
    values: tuple[DdrValue, ...]
    reorder_bytes: int = 0
    """Bytes the 4096-byte bank alignment (ddr-reorder) added to the total."""

    @property
    def total_bytes(self) -> int:
        return self.variables_base + self.peak

    def as_dict(self) -> dict:
        data = asdict(self)
        data["total_bytes"] = self.total_bytes
        return data

    @staticmethod
    def from_dict(data: dict) -> DdrPlacement:
        values = tuple(DdrValue(v["name"], v["kind"], tuple(v["shape"]), v["dtype"],
                                v["layout"], v["size"], tuple(v["live"]))
                       for v in data["values"])
        return DdrPlacement(data["opt_ddr"], data["align"], data["constants_bytes"],
                            data["variables_base"], dict(data["offsets"]), data["peak"],
                            data["lower_bound"], data["order"], values,
                            data.get("reorder_bytes", 0))


MOVES_WORK = 50_000
"""Buffers placed, summed over the local search's moves (`interval_alloc.improve_order`;
each move places every buffer again): up to 200 moves on BERT's 48 to 120 tensors,
about 20 on a 2300-tensor GRU. The greedy orders alone left BERT 6.2 % above the
max-live bound and BERT-base 2.1 %; a few dozen moves reach it (bench/README.md)."""


def improve_moves(buffers: int) -> int:
    return max(1, min(200, MOVES_WORK // max(1, buffers)))


def place(tensors: DdrTensors, constants_bytes: int, align: int, opt_ddr: bool,
          resident: frozenset[str] = frozenset()) -> DdrPlacement:
    """Offsets of the variables after the constants region (see the module docstring);
    the `resident` values (kept in SPM, `tx8c.analysis.spm_resident`) get none."""
    kept = tuple(v for v in tensors.values if v.name not in resident)
    buffers = [Buffer(v.name, max(1, v.size), (v.live,)) for v in kept]
    placed = allocate(buffers, align, improve=improve_moves(len(buffers)))
    base = aligned(constants_bytes, align)
    return DdrPlacement(
        opt_ddr=opt_ddr, align=align, constants_bytes=constants_bytes, variables_base=base,
        offsets={name: base + off for name, off in placed.offsets},
        peak=placed.peak, lower_bound=max_live(buffers, align), order=placed.order,
        values=kept,
    )


def write_placement(module: ModuleOp, placement: DdrPlacement) -> None:
    module.attributes[DDR_ATTR] = StringAttr(json.dumps(placement.as_dict(), sort_keys=True,
                                                        separators=(",", ":")))


def read_placement(module: ModuleOp) -> DdrPlacement | None:
    attr = module.attributes.get(DDR_ATTR)
    if attr is None:
        return None
    return DdrPlacement.from_dict(json.loads(attr.data))


def constants_bytes(module: ModuleOp, opt_ddr: bool) -> int:
    """Bytes of the constants region of the module's ConstContainer (0 without one)."""
    from tx8c.const_container import module_container

    container = module_container(module)
    return container.ddr_layout(opt_ddr).region_bytes if container is not None else 0
