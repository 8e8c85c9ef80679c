"""What passes share: the one home of the small IR helpers (DESIGN.md, "Source layout").

A helper that two passes need lives here, once, instead of in one pass that the other
imports (passes never import other passes) or in a copy per pass:

- shapes and sizes: `shape_of`, `num_elements`, `logical_bytes`, `stored_bytes`;
- constants: `defining_constant`, `constant_array`, `is_constant`, and
  `erase_dead_constants` for the constants a rewrite left without users; `dense_array`,
  the value of a dense elements attribute as a read-only view of its bytes (no copy: the
  constant container holds a model's weights this way);
- constants beside a result, along one axis of it (per-channel parameters):
  `aligned_along`, `channel_vector`, `masked`, `stack_along`;
- ops: `rebuilt` (a copy of an op with other operands, attributes or result types),
  `sole_user`, `blocks_of`, `function_bodies`, `is_compute_op` (what belongs in a group);
  `terminator_of`, `body_and_terminator` and `move_to_end` (reordering the ops of a
  block); `set_operand` and `replace_operands` (`op.operands[i] = v` for the passes
  that rewire every op); `insert_new_op_before` and `move_ops_to_new_block` (the
  grouping stage's insertions without xDSL's ancestor walk);
- constant sources (ops whose values depend on nothing at run time, Constant and
  LoadConst): `is_constant_source`, `pull_constant_sources` (what a new group takes
  inside with its ops);
- where a value lives: `stored_layout` (its memory layout, looking through groups) and
  `value_stored_bytes` (its stored bytes in that layout);
- statistics: `record_pass_stats` / `read_pass_stats`, a pass's counts in a module
  attribute (a dictionary of dictionaries of ints and strings, so they survive printing
  and parsing).

Bytes. A tensor value has two sizes, and each has one name:

- `logical_bytes(value)`: element count x element size, the compact size of its values
  whatever layout holds them. Cost models that compare data moved before any layout is
  decided use it (peephole's concat-to-pad model, layout-preset-to-npu's transposes).
- `stored_bytes(shape, dtype, mem_layout, config)` (defined with the layouts in
  `tx8c.target.mem_layout`, re-exported here): the bytes the value occupies in a
  mem_layout, channel padding and batch alignment included (Cx/NCx hold more than
  Tensor/NTensor). SPM and DDR allocation must only ever use stored bytes: a buffer sized
  by its logical bytes overlaps the next one as soon as the value is channel-aligned.

This module sits below the dialect: it imports xDSL, numpy, the dialect's leaf helpers and
`tx8c.target` only, so the interfaces and the op classes can use it too. It therefore recognises a
constant by xDSL's `ConstantLike` trait (which `tx8be.Constant` declares) and rebuilds an
op through the op's own class, never by importing an op class.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, OpResult, SSAValue
from xdsl.ir.core import SSAValues
from xdsl.rewriter import Rewriter
from xdsl.traits import ConstantLike, IsTerminator

from tx8c.dialect.attrs import LayoutMode
from tx8c.dialect.layout import is_aligned, mem_layout_for
from tx8c.dialect.ops._util import broadcast_shape
from tx8c.dialect.types import to_numpy_dtype
from tx8c.target.config import DEFAULT_CONFIG, TX8Config
from tx8c.target.mem_layout import stored_bytes as stored_bytes  # re-exported (docstring)

if TYPE_CHECKING:
    from tx8c.dialect.ops.backend import ConstantOp

# --------------------------------------------------------------------------------------
# Shapes
# --------------------------------------------------------------------------------------


def shape_of(value: SSAValue) -> tuple[int, ...]:
    """The shape of a tensor value."""
    return tuple(value.type.get_shape())


def num_elements(value: SSAValue) -> int:
    """How many elements the tensor `value` holds."""
    return int(np.prod(shape_of(value), dtype=np.int64))


def logical_bytes(value: SSAValue) -> int:
    """The compact size of the tensor `value`: its element count times its element size,
    whatever memory layout it will be stored in."""
    return num_elements(value) * _itemsize(value.type.get_element_type())


@lru_cache(maxsize=64)
def _itemsize(element_type: Attribute) -> int:
    return to_numpy_dtype(element_type).itemsize


# --------------------------------------------------------------------------------------
# Constants
# --------------------------------------------------------------------------------------


def defining_constant(value: SSAValue | None) -> ConstantOp | None:
    """The `tx8be.Constant` (the op with the `ConstantLike` trait) that defines `value`;
    None when something else does (another op, a block argument) or `value` is None."""
    owner = value.owner if value is not None else None
    if isinstance(owner, Operation) and owner.has_trait(ConstantLike):
        return owner
    return None


def constant_array(value: SSAValue | None) -> np.ndarray | None:
    """The array of `value` when a `tx8be.Constant` defines it, else None."""
    constant = defining_constant(value)
    return constant.attr("value") if constant is not None else None


def dense_array(attr: DenseIntOrFPElementsAttr) -> np.ndarray:
    """The attribute's value, a read-only view of its bytes (a splat is expanded)."""
    dtype = to_numpy_dtype(attr.get_element_type())
    shape = tuple(attr.get_shape())
    data = np.frombuffer(attr.data.data, dtype=dtype)
    if data.size == 1 and int(np.prod(shape)) != 1:  # splat: one element for all
        data = np.full(shape, data[0], dtype=dtype)
        data.flags.writeable = False
        return data
    return data.reshape(shape)


def is_constant(value: SSAValue | None) -> bool:
    """A `tx8be.Constant` defines `value`."""
    return defining_constant(value) is not None


def erase_dead_constants(
    values: Sequence[SSAValue | None],
    erase: Callable[[Operation], None] = Rewriter.erase_op,
) -> None:
    """Erase the Constants defining `values` that no op uses any more (each once, and
    only if still in a block). Inside a rewrite pattern, `erase` is the PatternRewriter's
    `erase`, so the walker hears of it."""
    for constant in dict.fromkeys(defining_constant(v) for v in values):
        if constant is not None and constant.parent is not None:
            if constant.results[0].first_use is None:
                erase(constant)


# --------------------------------------------------------------------------------------
# Constants along one axis of a result (per-channel parameters)
# --------------------------------------------------------------------------------------


def aligned_along(
    array_shape: tuple[int, ...], out_shape: tuple[int, ...], axis: int
) -> tuple[int, ...] | None:
    """The shape an operand of `array_shape` takes beside a result of `out_shape` when it
    is extended to the result's rank and its `axis` dim to the result's: None when the
    operand would broadcast the result to a bigger shape."""
    rank = len(out_shape)
    if len(array_shape) > rank or broadcast_shape(array_shape, out_shape) != out_shape:
        return None
    shape = [1] * (rank - len(array_shape)) + list(array_shape)
    shape[axis] = out_shape[axis]
    return tuple(shape)


def channel_vector(
    constant: np.ndarray, out_shape: Sequence[int], axis: int
) -> np.ndarray | None:
    """`constant` as a [C] vector (C = out_shape[axis]) when, beside a value of
    `out_shape`, it varies along `axis` only: it broadcasts to `out_shape` without
    growing it and has size 1 in every other dim (a scalar qualifies: the same factor for
    every channel). None otherwise."""
    out_shape = tuple(out_shape)
    aligned = aligned_along(constant.shape, out_shape, axis)
    if aligned is None or any(d != 1 for i, d in enumerate(aligned) if i != axis):
        return None
    full = constant.reshape((1,) * (len(aligned) - constant.ndim) + constant.shape)
    return np.broadcast_to(full, aligned).reshape(-1)


def masked(shape: Sequence[int], axis: int) -> tuple[int, ...]:
    """`shape` with its `axis` dim replaced by -1 (the part that must agree across
    values stacked along `axis`)."""
    out = list(shape)
    out[axis] = -1
    return tuple(out)


def stack_along(
    arrays: Sequence[np.ndarray], out_shapes: Sequence[tuple[int, ...]], axis: int
) -> np.ndarray | None:
    """Operands of several results (`out_shapes`) concatenated along the results' `axis`;
    each is first extended to the result rank and broadcast along `axis`. The leading unit
    dims that no operand had are dropped again, so per-channel vectors stay vectors. None
    when an operand broadcasts its result or the operands disagree outside `axis`."""
    pieces = []
    for array, out_shape in zip(arrays, out_shapes, strict=True):
        shape = aligned_along(array.shape, out_shape, axis)
        if shape is None:
            return None
        full = array.reshape((1,) * (len(shape) - array.ndim) + array.shape)
        pieces.append(np.broadcast_to(full, shape))
    if len({masked(p.shape, axis) for p in pieces}) != 1:
        return None
    stacked = np.concatenate(pieces, axis=axis)
    keep = max(a.ndim for a in arrays)
    lead = stacked.ndim - keep
    if axis < lead:  # the operands were scalars along the axis: keep it
        lead = axis
    return stacked.reshape(stacked.shape[lead:])


# --------------------------------------------------------------------------------------
# Ops
# --------------------------------------------------------------------------------------


def rebuilt(
    op: Operation,
    operands: Sequence[SSAValue] | None = None,
    *,
    result_types: Sequence[Attribute] | None = None,
    **attrs: Any,
) -> Operation:
    """A new op of `op`'s class, not inserted anywhere, that replaces `op`.

    It reads `operands` (op's own when None) and has op's attributes, those named in
    `attrs` replaced (Python values, as `Op.make` takes them). Its result types are
    `result_types` when given, else what the new op's `infer_shapes()` says (an op with
    regions, whose types come from its body, needs them given). op's regions move into
    the new op.
    """
    cls = type(op)
    operands = list(op.operands if operands is None else operands)
    attributes = {**op.attributes, **cls.ir_attributes(attrs)}
    if result_types is None:
        result_types = cls.inferred_result_types(operands, attributes)
    return cls.create(
        operands=operands,
        result_types=list(result_types),
        attributes=attributes,
        properties=dict(op.properties),
        regions=[op.detach_region(r) for r in list(op.regions)],
    )


def sole_user(value: SSAValue) -> Operation | None:
    """The op that uses `value`, when it has exactly one use and that op is in the same
    block as `value`'s definition (a value read twice by one op has two uses)."""
    user = value.get_user_of_unique_use()
    if user is None:
        return None
    home = value.owner if isinstance(value.owner, Block) else value.owner.parent_block()
    return user if user.parent_block() is home else None


def blocks_of(op: Operation) -> Iterator[Block]:
    """Every block nested in `op` (function bodies and the regions inside them)."""
    for inner in op.walk():
        for region in inner.regions:
            yield from region.blocks


def group_ops(block: Block) -> list:
    """The tx8be.Group ops of `block`, in program order."""
    from tx8c.dialect.ops.backend import GroupOp

    return [op for op in op_list(block) if isinstance(op, GroupOp)]


def op_list(block: Block) -> list[Operation]:
    """`list(block.ops)`, read through the ops' links: xDSL's (pinned 0.74) iterator
    makes two Python-level calls per op (its `__next__` and the `next_op` property), and
    the grouping passes list the ops of a function body of thousands of ops several
    times, and those of every group's body. `tests/unit/test_ir_utils.py` compares it
    with `list(block.ops)`."""
    ops = []
    op = block._first_op
    while op is not None:
        ops.append(op)
        op = op._next_op
    return ops


def function_bodies(module: ModuleOp) -> Iterator[Block]:
    """The body block of every function of `module` that has one."""
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.body.blocks:
            yield op.body.block


# --------------------------------------------------------------------------------------
# Constant sources and groups
# --------------------------------------------------------------------------------------


def is_constant_source(op: Operation) -> bool:
    """An op whose results depend on nothing at run time: it has results but no operands
    and no regions (tx8be.Constant, and tx8be.LoadConst after move-constant). The seed's
    createSingleGroup moves such producers (its LoadConstOp and NoneOp) into the group of
    their user instead of making them group inputs."""
    return not op.operands and bool(op.results) and not op.regions  # operands first:
    # most ops have some, and the grouping passes ask this of every operand's producer


def is_compute_op(op: Operation) -> bool:
    """A tx8be op that runs as a step of the program and so belongs in a group: not a
    constant source, not a terminator, not an op with regions (a Group)."""
    return _tx8be_step_class(type(op)) and not op.regions and not is_constant_source(op)


@cache
def _tx8be_step_class(cls: type[Operation]) -> bool:
    """Ops of `cls` are tx8be ops and not terminators (what is_compute_op knows from the
    class alone: the grouping passes ask it of every op, and the trait lookup costs
    microseconds)."""
    return cls.dialect_name() == "tx8be" and not cls.has_trait(IsTerminator)


def terminator_of(block: Block) -> Operation | None:
    """The terminator `block` ends with, or None."""
    last = block.last_op
    return last if last is not None and last.has_trait(IsTerminator) else None


def body_and_terminator(block: Block) -> tuple[list[Operation], Operation | None]:
    """The ops of `block` in order without its terminator, and the terminator (None when
    the block does not end with one)."""
    ops = op_list(block)
    terminator = terminator_of(block)
    return (ops[:-1] if terminator is not None else ops), terminator


def move_to_end(block: Block, ops: Sequence[Operation]) -> None:
    """Move `ops` (ops of `block`), in this order, to the end of `block`: before its
    terminator when it has one."""
    terminator = terminator_of(block)
    for op in ops:
        op.detach()
        if terminator is None:
            block.add_op(op)
        else:
            block.insert_op_before(op, terminator)


def set_operand(op: Operation, index: int, value: SSAValue) -> None:
    """`op.operands[index] = value`: the use moves to `value`'s use list, the operand
    tuple is rebuilt once. xDSL's (pinned 0.74) `OpOperands.__setitem__` does the same
    through two slices of the tuple, each a Python-level `SSAValues.__getitem__` call,
    three times slower; the grouping passes rewire an operand of about every op of the
    graph. `tests/unit/test_ir_utils.py` checks both leave the same operands and uses."""
    operands = op._operands
    use = op._operand_uses[index]
    tuple.__getitem__(operands, index).remove_use(use)
    value.add_use(use)
    changed = list(operands)
    changed[index] = value
    op._operands = SSAValues(changed)


def replace_operands(op: Operation, new_values: Mapping[int, SSAValue]) -> None:
    """Replace every operand `v` of `op` with `id(v)` in `new_values` by
    `new_values[id(v)]`, as `set_operand` for each, with one rebuild of the operand
    tuple. Keyed by `id`: an SSAValue's hash is a Python call, and `GroupOp.wrap` looks up
    every operand of every op it wraps."""
    operands = op._operands
    changed = None
    for index, value in enumerate(operands):
        new = new_values.get(id(value))
        if new is not None:
            if changed is None:
                changed = list(operands)
            use = op._operand_uses[index]
            value.remove_use(use)
            new.add_use(use)
            changed[index] = new
    if changed is not None:
        op._operands = SSAValues(changed)


def insert_new_op_before(new_op: Operation, existing: Operation) -> None:
    """`existing.parent.insert_op_before(new_op, existing)` for an unattached `new_op`
    that cannot contain `existing`'s block: one without regions, or one whose regions
    hold only new blocks and ops taken from elsewhere than that block's ancestors (a
    group just built around ops of the block).

    xDSL's (pinned 0.74) insertion walks up from the block to the module to check that
    the op does not contain it, about ten steps deep in a group's body; the grouping
    stage inserts a group, LoadVar or StoreVar for about every op of the graph.
    `tests/unit/test_ir_utils.py` checks the links against xDSL's insertion."""
    block = existing.parent
    if block is None:
        raise ValueError("insert_new_op_before: the op to insert before is in no block")
    if new_op.parent is not None:
        raise ValueError("insert_new_op_before: the new op is already in a block")
    new_op.parent = block
    previous = existing._prev_op
    new_op._prev_op = previous
    new_op._next_op = existing
    existing._prev_op = new_op
    _link_forward(block, previous, new_op)


def move_ops_to_new_block(ops: Sequence[Operation], block: Block) -> None:
    """Move `ops` (consecutive ops of one block, in order) to the end of `block`, a block
    no region holds yet (so none of `ops` can contain it), in one splice of the op lists
    instead of a detach and an insertion per op (xDSL's insertion checks ancestors for
    each). `tests/unit/test_ir_utils.py` checks the links against detach and add_op."""
    if block.parent is not None:
        raise ValueError("move_ops_to_new_block: the block is already in a region")
    if not ops:
        return
    first, last = ops[0], ops[-1]
    source = first.parent
    if source is None:
        raise ValueError("move_ops_to_new_block: the ops are in no block")
    before, after = first._prev_op, last._next_op
    _link_forward(source, before, after)
    if after is None:
        source._last_op = before
    else:
        after._prev_op = before
    tail = block._last_op
    first._prev_op = tail
    last._next_op = None
    _link_forward(block, tail, first)
    block._last_op = last
    for op in ops:
        op.parent = block


def _link_forward(block: Block, previous: Operation | None, op: Operation | None) -> None:
    """Make `op` follow `previous` in `block`'s op list (start the list when `previous`
    is None); the caller sets the backward link."""
    if previous is None:
        block._first_op = op
    else:
        previous._next_op = op


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
            source = value.owner  # an argument's block: its parent is a region
            if source.parent is not block or source in members:
                continue
            if not is_constant_source(source):
                continue
            if source not in pulled:
                pulled[source] = _pulled_source(source, members, first)
            set_operand(op, index, pulled[source].results[value.index])
    return [*pulled.values(), *ops]


def _pulled_source(source: Operation, members: set[Operation], before: Operation):
    """`source` moved in front of `before` when only `members` read it, else a clone of it
    placed there."""
    if all(_only_used_by(result, members) for result in source.results):
        source.detach()
        insert_new_op_before(source, before)  # a source has no regions
        return source
    clone = source.clone()
    insert_new_op_before(clone, before)
    return clone


def _only_used_by(value: SSAValue, members: set[Operation]) -> bool:
    """Every use of `value` is by one of `members` (stops at the first other user, so a
    value with many users costs only as many steps as `members` have uses of it)."""
    return all(use.operation in members for use in value.uses)


# --------------------------------------------------------------------------------------
# Where a value lives
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
    if not isinstance(value, OpResult):  # an argument (an OpResult is tested cheaply:
        # its exact class, where an ABC test of the owner is a Python-level call)
        parent = owner.parent_op()
        if parent is None or isinstance(parent, func.FuncOp):
            return mem_layout_for(shape_of(value), aligned=False)
        return stored_layout(parent.operands[value.index])
    if owner.regions:
        terminator = owner.regions[0].block.last_op
        return stored_layout(terminator.operands[value.index])
    dev = owner.attributes.get("dev_info")
    if dev is None:
        return mem_layout_for(shape_of(value), aligned=False)
    layout = _mem_layout(dev)
    if len(owner.results) == 1:
        return layout
    return mem_layout_for(shape_of(value), aligned=is_aligned(layout))


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


def value_stored_bytes(value: SSAValue, config: TX8Config = DEFAULT_CONFIG) -> int:
    """Bytes `value` occupies in memory: `stored_bytes` in its `stored_layout`."""
    return stored_bytes(shape_of(value), value.type.get_element_type(), stored_layout(value),
                        config)


# --------------------------------------------------------------------------------------
# Statistics
# --------------------------------------------------------------------------------------


def record_pass_stats(module: ModuleOp, attr_name: str, pass_name: str,
                      stats: Mapping[str, int | str]) -> None:
    """Store `stats` under `pass_name` in the module attribute `attr_name`; a pass that
    runs again overwrites its own entry and keeps the others'."""
    current = module.attributes.get(attr_name)
    entries = dict(current.data) if isinstance(current, DictionaryAttr) else {}
    entries[pass_name] = DictionaryAttr(
        {
            key: StringAttr(value) if isinstance(value, str) else IntegerAttr(int(value), i64)
            for key, value in stats.items()
        }
    )
    module.attributes[attr_name] = DictionaryAttr(entries)


def read_pass_stats(module: ModuleOp, attr_name: str) -> dict[str, dict[str, int | str]]:
    """The statistics recorded under `attr_name`, as plain Python values ({} if none)."""
    current = module.attributes.get(attr_name)
    if not isinstance(current, DictionaryAttr):
        return {}
    return {
        name: {
            key: value.data if isinstance(value, StringAttr) else value.value.data
            for key, value in entry.data.items()
        }
        for name, entry in current.data.items()
    }
