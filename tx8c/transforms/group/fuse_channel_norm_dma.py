"""fuse-channel-norm-dma: a ChannelNorm group becomes the DMA of its neighbour (issue 15;
seed 000 "Odd-Dimension Output" and the NALIGN graph outputs, seed 003 "Tensor Layout",
"LSU", "OpLibInterface").

After group-ldst a ChannelNorm (compact <-> channel-aligned) that could not join a
pattern sits alone in a group: LoadVar -> ChannelNorm -> StoreVar. It costs a whole DDR
round trip: its producer stores the tensor, the group loads it, converts it on the CT
and stores it again. The LSU's DMA writes each side at its own layout's addresses
(`tx8c.target.dma`), so the conversion can be the store (or the load) itself, and every
byte moves once:

- **Converting store.** The ChannelNorm group's input is a result of a sliced group
  (group_tag 0) that leaves it through its own StoreVar (returned once), and the
  ChannelNorm group is its only reader: that StoreVar takes the ChannelNorm's
  `dev_info.mem_layout` and `layout_str` (it now writes DDR in the converted layout
  from its SPM buffer in the producer's), the ChannelNorm group's readers read the
  producer's result, and the ChannelNorm group is erased. This is GPT-2's logits: the
  LM-head Gemm (ALIGN-only) stores its `[1,128,50257]` result straight into the compact
  graph output.
- **Converting load** (compact DDR -> aligned SPM only; otherwise a load window could
  cut a channel block of the DDR tensor, which the slicing search never plans). When
  the store cannot take it (the input is a graph input, or has other readers), and every
  reader of the ChannelNorm group's result is a sliced group that reads it only through
  LoadVars: those groups read the ChannelNorm's input instead, their LoadVars (already
  in the aligned layout, their SPM side) now convert, and the ChannelNorm group is
  erased. This is a CNN's input: the graph input (compact) loaded aligned by the first
  Conv's group.

What the LSU can address: a fusion happens only when `tx8c.target.dma.addressable`
finds the transfer between the two layouts of the value expressible as strided runs
(one descriptor per run length, `dma_loop_dims` loops each), from the `mem_layout`
address functions, never from a list of shapes.

Requires: group-ldst (loads, stores, group_tag); runs after regroup-by-cost (whose
merges replace a member's load by the value another member stored, assuming the SPM
side in the stored layout: a converting DMA would break that) and before group-mapping
and group-dag (the barriers go between the groups that remain; group ids stay as they
were, no longer dense). Guarantees: values unchanged (the reference executor
sees identities either way); every StoreVar/LoadVar whose `mem_layout` family differs
from its operand's stored layout is a converting DMA, and the cmodels, the lowering and
the C runtime move its bytes by the two address maps; the slicing cost counts a
transfer's DDR side in the DDR tensor's layout. Records in `tx8c.layout_stats` under
its name: `fused_stores`, `fused_loads` and `fused_bytes` (the bytes the erased
ChannelNorms wrote), and `kept` / `kept_bytes`: the ChannelNorm groups it could not
fuse (ChannelNorms inside larger groups are not its business).

Departs from the seed: the seed keeps every ChannelNorm as a CT op (op_channelNorm);
here the conversion is folded into an LSU transfer, which the seed's DMA instructions
(op_loadVar / op_dma_store with strided TSRs) can express.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import BlockArgument, SSAValue
from xdsl.passes import ModulePass

from tx8c.analysis.layout_problem import read_layout_stats, record_layout_stats
from tx8c.dialect.attrs import DevAttr
from tx8c.dialect.layout import is_aligned
from tx8c.dialect.ops.backend import ChannelNormOp, GroupOp, LoadVarOp, StoreVarOp
from tx8c.ir_utils import (
    function_bodies,
    group_ops,
    shape_of,
    stored_layout,
    value_stored_bytes,
)
from tx8c.target.dma import addressable


@dataclass(frozen=True)
class FuseChannelNormDmaPass(ModulePass):
    name = "fuse-channel-norm-dma"

    loads: bool = True
    """Also fuse into the readers' loads (a graph input converted for its readers)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        earlier = read_layout_stats(op).get(self.name, {})  # a run before fused these
        stats = {key: int(earlier.get(key, 0)) if key in FUSED else 0 for key in STATS}
        for block in function_bodies(op):
            for group in group_ops(block):
                norm = lone_channel_norm(group)
                if norm is None:
                    continue
                written = value_stored_bytes(norm.results[0])
                if fuse_into_store(group, norm):
                    stats["fused_stores"] += 1
                elif self.loads and fuse_into_loads(group, norm):
                    stats["fused_loads"] += 1
                else:
                    stats["kept"] += 1
                    stats["kept_bytes"] += written
                    continue
                stats["fused_bytes"] += written
        record_layout_stats(op, self.name, stats)


FUSED = ("fused_stores", "fused_loads", "fused_bytes")
STATS = (*FUSED, "kept", "kept_bytes")
"""The statistics the pass records (module docstring); the fused counts add up over
runs (the module's conversions fused so far), the ChannelNorm groups kept are counted
anew."""


def lone_channel_norm(group: GroupOp) -> ChannelNormOp | None:
    """The ChannelNorm of a sliced group that is exactly LoadVar -> ChannelNorm ->
    StoreVar of its one input to its one result, else None."""
    load = group.block.first_op  # the op kinds first: most groups fail there, cheaply
    norm = load.next_op if isinstance(load, LoadVarOp) else None
    if not isinstance(norm, ChannelNormOp):
        return None
    store = norm.next_op
    if not isinstance(store, StoreVarOp) or store.next_op is not group.block.last_op:
        return None
    if group.attr("group_tag") != GroupOp.SLICED or len(group.operands) != 1:
        return None
    chained = (load.operands[0] is group.block.args[0] and norm.operands[0] is load.results[0]
               and store.operands[0] is norm.results[0]
               and tuple(group.yield_op.operands) == (store.results[0],))
    return norm if chained else None


def fuse_into_store(group: GroupOp, norm: ChannelNormOp) -> bool:
    """The converting store of the module docstring; False (nothing changed) when the
    input's producer cannot take the conversion."""
    source = group.operands[0]
    store = _own_store(source)
    if store is None:
        return False
    target = stored_layout(norm.results[0])
    if not addressable(tuple(shape_of(source)), source.type.get_element_type(),
                       stored_layout(store.operands[0]), target):
        return False
    store.attributes["dev_info"] = DevAttr.make(mem_layout=target)
    store.attributes["layout_str"] = norm.attributes["layout_str"]
    _bypass(group)
    return True


def _own_store(value: SSAValue) -> StoreVarOp | None:
    """The StoreVar that writes `value`, a result of a sliced group read by nothing but
    one op (the ChannelNorm group), when that StoreVar writes this result alone."""
    producer = value.owner
    if isinstance(value, BlockArgument) or not isinstance(producer, GroupOp) \
            or producer.attr("group_tag") != GroupOp.SLICED or len(tuple(value.uses)) != 1:
        return None
    stored = producer.yield_op.operands[value.index]
    store = stored.owner
    if not isinstance(store, StoreVarOp) \
            or sum(v is stored for v in producer.yield_op.operands) != 1:
        return None
    return store


def fuse_into_loads(group: GroupOp, norm: ChannelNormOp) -> bool:
    """The converting loads of the module docstring (compact DDR -> aligned SPM); False
    (nothing changed) when a reader is not a sliced group reading through LoadVars."""
    if not norm.attr("direction"):
        return False
    source = group.operands[0]
    loads = _reader_loads(group.results[0])
    if not loads:
        return False
    shape, dtype = tuple(shape_of(source)), source.type.get_element_type()
    ddr = stored_layout(source)
    if not all(is_aligned(stored_layout(load.results[0]))
               and addressable(shape, dtype, ddr, stored_layout(load.results[0]))
               for load in loads):
        return False
    _bypass(group)
    return True


def _reader_loads(value: SSAValue) -> list[LoadVarOp]:
    """The LoadVars through which sliced groups read `value`, or [] when a reader reads
    it otherwise (returned, read in DDR, a group of relabels)."""
    loads: list[LoadVarOp] = []
    for use in value.uses:
        reader = use.operation
        if not isinstance(reader, GroupOp) or reader.attr("group_tag") != GroupOp.SLICED:
            return []
        arg_uses = [u.operation for u in reader.block.args[use.index].uses]
        if not all(isinstance(op, LoadVarOp) for op in arg_uses):
            return []
        loads += arg_uses
    return loads


def _bypass(group: GroupOp) -> None:
    """The ChannelNorm group's readers read its input instead; the group goes."""
    group.results[0].replace_all_uses_with(group.operands[0])
    group.detach()
    group.erase()
