"""group-ldst: LoadVar at a group's inputs, StoreVar at its outputs, and group_tag
(seed 003, "Sharding Search and SPM Management", GroupLdStPass).

For every top-level group:

- **Loads.** For each body argument (group input) the uses that need it in SPM get one
  `LoadVar`, shared by all of them, at the start of the body (in argument order). A use
  needs SPM when bit `i` of its op's `need_load` is set (`i` the operand's index; the
  seed's needLoad, e.g. Gather reads its table straight from DDR). A relabel
  (`moves_no_bytes()`, issue 15) runs where its operand lives: its use needs SPM exactly
  when a use of its result does, so the load happens before the relabel.
- **Stores.** Each value the `Yield` returns that lives in SPM gets one `StoreVar` in
  front of the `Yield`, which then returns the StoreVar. A value lives in SPM when its
  producer's `need_store` bit for it is set (the seed's needStore; a StoreVar's result is
  in DDR), when it is a LoadVar's result, or when it is a relabel of a value in SPM; a
  body argument returned as it is lives in DDR.
- **Tag.** `group_tag` = 0 when the group has a LoadVar or a StoreVar (it works in SPM
  and is sliced by the next stage), 2 when it has none (all its ops work in DDR: a group
  of relabels; the slicing search skips it).

LoadVar and StoreVar move bytes unchanged: each gets `dev_info.mem_layout` = the layout
its value is stored in (`stored_layout`: the producer's) and the value's `layout_str`.
The seed's special case for Add/Sub/Mul/Div with a rank-1 operand (load it as Cx when
the op works channel-aligned) holds by construction: layout-align-to-npu stores every
operand in its reader's family, and the aligned layout of a rank-1 value is Cx
(`mem_layout_for`), never NCx.

Requires: top-level groups (group-pattern / group-optimization); the layout stage has
run when the layouts should be meaningful (without dev_info values are compact).

Guarantees (for the slicing search): every group input that any op reads in SPM is read
through exactly one LoadVar at the top of the body, nothing else reads it in SPM; every
group output produced in SPM leaves through exactly one StoreVar just before the Yield;
`group_tag` is 0 or 2 as above; the body stays topologically ordered; values are
unchanged. Running the pass again changes nothing (a LoadVar needs no load, a StoreVar's
result no store).

Cost: linear in the ops of the groups.

Departs from the seed: the seed decides a store from needStore alone; the residency rule
above adds relabels (not in the seed's op set) and never stores a returned body argument.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue, Use
from xdsl.passes import ModulePass

from tx8c.dialect.attrs import DevAttr, LayoutMode
from tx8c.dialect.base import build_op, to_attr
from tx8c.dialect.layout import value_layout
from tx8c.dialect.ops.backend import GroupOp, LoadVarOp, StoreVarOp
from tx8c.interfaces import OpAttr
from tx8c.interfaces.traits import ByteMove
from tx8c.ir_utils import (
    function_bodies,
    group_ops,
    insert_new_op_before,
    op_list,
    set_operand,
    stored_layout,
)

"""The group_tag values this pass sets (seed: 0 normal slicing, 2 no slicing)."""


@dataclass(frozen=True)
class GroupLdStPass(ModulePass):
    name = "group-ldst"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for block in function_bodies(op):
            loaded: dict[SSAValue, dict[str, Attribute]] = {}
            for group in group_ops(block):
                insert_loads_and_stores(group, loaded)


def insert_loads_and_stores(
    group: GroupOp, loaded: dict[SSAValue, dict[str, Attribute]] | None = None
) -> None:
    """The loads, stores and tag of `group` (module docstring). `loaded` remembers the
    LoadVar attributes of each value loaded so far: a value that several groups read
    gets the same ones in each, computed once."""
    loaded = {} if loaded is None else loaded
    body = group.block
    terminator = body.last_op
    residency = _Residency(terminator)
    first = body.first_op
    moved = False
    outside = list(group.operands)
    for arg in body.args:
        uses = [use for use in arg.uses if residency.use_needs_spm(use)]
        if uses:
            value = outside[arg.index]  # the one stored in DDR
            attributes = loaded.get(value)
            if attributes is None:
                attributes = loaded[value] = _move_attributes(value)
            load = _move(LoadVarOp, arg, attributes)
            insert_new_op_before(load, first)
            for use in uses:
                set_operand(use.operation, use.index, load.results[0])
            moved = True
    stores: dict[SSAValue, Operation] = {}
    for index, value in enumerate(terminator.operands):
        if not residency.in_spm(value):
            continue
        store = stores.get(value)
        if store is None:
            store = stores[value] = _move(StoreVarOp, value, _move_attributes(value))
            insert_new_op_before(store, terminator)
        set_operand(terminator, index, store.results[0])
        moved = True
    moved = moved or any(o.has_trait(ByteMove) for o in op_list(body))
    group.attributes["group_tag"] = to_attr("int", GroupOp.SLICED if moved else GroupOp.IN_DDR)


class _Residency:
    """Where values of one group body live (module docstring), memoised."""

    def __init__(self, terminator: Operation):
        self._terminator = terminator
        self._needs_spm: dict[SSAValue, bool] = {}
        self._in_spm: dict[SSAValue, bool] = {}
        self._attrs: dict[Operation, OpAttr] = {}

    def _op_attr(self, op: Operation) -> OpAttr:
        if op not in self._attrs:
            self._attrs[op] = op.query_op_attr()
        return self._attrs[op]

    def use_needs_spm(self, use: Use) -> bool:
        """The op of `use` reads that operand in SPM."""
        reader = use.operation
        if reader is self._terminator:
            return False  # a returned value is stored from wherever it lives
        if reader.moves_no_bytes():
            return any(self.needs_spm(r) for r in reader.results)
        return self._op_attr(reader).loads(use.index)

    def needs_spm(self, value: SSAValue) -> bool:
        if value not in self._needs_spm:
            self._needs_spm[value] = any(self.use_needs_spm(u) for u in value.uses)
        return self._needs_spm[value]

    def in_spm(self, value: SSAValue) -> bool:
        """`value` lives in SPM (it needs a store to leave the group)."""
        if isinstance(value, BlockArgument):
            return False
        if value not in self._in_spm:
            producer = value.owner
            if producer.moves_no_bytes():
                spm = any(self.in_spm(v) for v in producer.operands)
            else:
                spm = self._op_attr(producer).stores(value.index)
            self._in_spm[value] = spm
        return self._in_spm[value]


def _move(
    cls: type[LoadVarOp | StoreVarOp], value: SSAValue, attributes: dict[str, Attribute]
) -> Operation:
    """A LoadVar or StoreVar of `value` with `attributes` (`_move_attributes`; its result
    type is its operand's: no shape inference needed)."""
    return build_op(cls, [value], [value.type], attributes)


def _move_attributes(value: SSAValue) -> dict[str, Attribute]:
    """The layout_str and dev_info of a move of `value` (the value stored in DDR for a
    load, the value in SPM for a store): its layout, and the memory layout it is stored
    in."""
    return {
        "layout_str": to_attr("str", value_layout(value)),
        "dev_info": _dev_info(stored_layout(value)),
    }


@cache
def _dev_info(layout: LayoutMode) -> DevAttr:
    return DevAttr.make(mem_layout=layout)
