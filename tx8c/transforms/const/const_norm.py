"""const-norm: fold ChannelNorms of loaded constants into the stored constant; one layout
per constant (processMultiUse).

Implements seed 003 constNormPass (constChannelNormErase, ConstNormDoPass and
processMultiUse).

Requires: a module after move-constant (LoadConsts naming ids of the module's
ConstContainer, `tx8c.const_container`).
Guarantees:
- a LoadConst whose only user is a `tx8be.ChannelNorm` loses the ChannelNorm: the
  ChannelNorm's readers read the LoadConst, whose `dev_info.mem_layout` becomes the layout
  the ChannelNorm wrote (its own dev_info's when that agrees with its direction, else
  `mem_layout_for(shape, direction)`). The constant is then stored in that layout: its
  bytes are converted once, at compile time, by `tx8c.target.mem_layout.pack` when the
  container's stored bytes or DDR image are made, instead of on every run;
- processMultiUse: every LoadConst of one id has the id's stored layout. Per id the layout
  is the first channel-aligned one among its LoadConsts (in program order), else the
  first one (the seed's rule: aligned preferred). A LoadConst that needs another layout
  (its user reads the other family) is given the id of a second stored copy of the data
  in its own layout (one copy per layout, shared; an existing entry with identical data
  in that layout is reused);
- the container's layout of every id equals the `dev_info.mem_layout` of its LoadConsts
  (compact for a LoadConst without dev_info), so the cmodel, which reads the stored
  bytes, sees every constant in the layout its reader expects.
Why a second copy and not a runtime ChannelNorm for the other layout: a ChannelNorm costs
a CT pass over the constant on every run and loads the (larger or equal) aligned bytes; a
copy costs only its bytes in DDR, once, and its load moves the compact bytes. DDR holds
64 GiB per chip, so the copy costs less whatever the constant (the copies and their bytes
are counted in the statistics).

Statistics under "const-norm" in `tx8c.const_stats`: `channel_norms_folded`,
`folded_bytes` (what those ChannelNorms would have converted per run: the size of their
target layouts), `multi_layout_ids` (ids whose LoadConsts asked for more than one
layout), `copies` and `copy_bytes` (new entries made for them), `ids`.

Division of work with layout-align-opt: at the layout stage the constants are still
`tx8be.Constant`s and layout-align-opt folds every ChannelNorm of a Constant into it (its
ConstChannelNormErase, generalised to any rank, with a copy when other readers need the
original layout), so after the standard pipeline no ChannelNorm reads a constant and this
pass finds none to fold. What this pass owns is the LoadConst form: IR where the
constants were moved before the layout passes ran or where ChannelNorms were placed
after move-constant (tx8c-opt pipelines, later stages that re-lay data), and the
guarantee that the container and the LoadConsts agree on one layout per id.

Departures from the seed: the seed forces every LoadConst of an id to the chosen layout,
leaving a reader of the other family to read misaligned data; here such a reader gets a
copy in its layout. The seed's last step (reshaping the constant of an UnpackOp, for
packed int4 weights) has no counterpart: tx8be has no Unpack op.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tx8c.const_container import CONST_STATS_ATTR, ConstContainer
from tx8c.dialect.attrs import DevAttr, LayoutMode
from tx8c.dialect.base import to_attr
from tx8c.dialect.layout import is_aligned, mem_layout_for
from tx8c.dialect.ops.backend import ChannelNormOp, LoadConstOp
from tx8c.ir_utils import record_pass_stats, shape_of, stored_bytes


@dataclass
class NormStats:
    channel_norms_folded: int = 0
    folded_bytes: int = 0
    multi_layout_ids: int = 0
    copies: int = 0
    copy_bytes: int = 0
    ids: int = 0


def load_layout(load: LoadConstOp) -> LayoutMode:
    """The layout a LoadConst delivers: its dev_info's, else compact."""
    dev = load.dev_info
    return dev.get("mem_layout") if dev is not None else mem_layout_for(
        shape_of(load.results[0]), aligned=False)


def set_load_layout(load: LoadConstOp, layout: LayoutMode) -> None:
    dev = load.dev_info
    load.attributes["dev_info"] = (DevAttr.make(mem_layout=layout) if dev is None
                                   else dev.replace(mem_layout=layout))


def channel_norm_layout(cn: ChannelNormOp) -> LayoutMode:
    """The layout a ChannelNorm writes: its dev_info's when that agrees with its
    direction, else the one its direction names."""
    direction = cn.attr("direction")
    dev = cn.dev_info
    if dev is not None and is_aligned(dev.get("mem_layout")) == direction:
        return dev.get("mem_layout")
    return mem_layout_for(shape_of(cn.results[0]), aligned=direction)


def _only_channel_norm_user(load: LoadConstOp) -> ChannelNormOp | None:
    result = load.results[0]
    if not result.has_one_use():
        return None
    user = result.get_user_of_unique_use()
    return user if isinstance(user, ChannelNormOp) else None


class _ConstNorm:
    def __init__(self, module: ModuleOp):
        self.module = module
        self.container = ConstContainer.from_module(module)
        self.stats = NormStats()

    def run(self) -> None:
        loads = [op for op in self.module.walk() if isinstance(op, LoadConstOp)]
        for load in list(loads):
            cn = _only_channel_norm_user(load)
            if cn is not None:
                loads += self._fold(load, cn)
        self._one_layout_per_id(loads)
        self.stats.ids = len(self.container)
        self.container.to_module(self.module)
        record_pass_stats(self.module, CONST_STATS_ATTR, ConstNormPass.name, vars(self.stats))

    def _fold(self, load: LoadConstOp, cn: ChannelNormOp) -> list[LoadConstOp]:
        """constChannelNormErase: the ChannelNorm's readers read the constant, stored in
        the layout the ChannelNorm wrote. A ChannelNorm read by several ops leaves one
        LoadConst per reader (move-constant's rule: a LoadConst per use); the new ones
        are returned."""
        layout = channel_norm_layout(cn)
        set_load_layout(load, layout)
        uses = sorted(cn.results[0].uses, key=lambda u: u.index)
        added = []
        for use in uses[1:]:
            copy = load.clone()
            load.parent_block().insert_op_after(copy, load)
            use.operation.operands[use.index] = copy.results[0]
            added.append(copy)
        cn.results[0].replace_all_uses_with(load.results[0])
        cn.parent_block().erase_op(cn)
        self.stats.channel_norms_folded += 1
        result = load.results[0]
        self.stats.folded_bytes += stored_bytes(shape_of(result),
                                                result.type.get_element_type(), layout)
        return added

    def _one_layout_per_id(self, loads: list[LoadConstOp]) -> None:
        """processMultiUse (module docstring)."""
        by_id: dict[int, list[LoadConstOp]] = {}
        for load in loads:
            by_id.setdefault(load.attr("const_id"), []).append(load)
        chosen: dict[int, LayoutMode] = {}
        for const_id, group in by_id.items():  # every id's layout first: copies may
            layouts = list(dict.fromkeys(load_layout(load) for load in group))  # reuse ids
            chosen[const_id] = next((lay for lay in layouts if is_aligned(lay)), layouts[0])
            self.container.set_layout(const_id, chosen[const_id])
            self.stats.multi_layout_ids += len(layouts) > 1
        for const_id, group in by_id.items():
            self._give_copies(const_id, chosen[const_id], group)

    def _give_copies(self, const_id: int, chosen: LayoutMode, group: list[LoadConstOp]):
        copies: dict[LayoutMode, int] = {}
        for load in group:
            layout = load_layout(load)
            if layout == chosen:
                continue
            if layout not in copies:
                before = len(self.container)
                copies[layout] = self.container.copy(const_id, layout)
                if len(self.container) > before:
                    self.stats.copies += 1
                    self.stats.copy_bytes += self.container.nbytes(copies[layout])
            load.attributes["const_id"] = to_attr("int", copies[layout])


@dataclass(frozen=True)
class ConstNormPass(ModulePass):
    """Seed 003 constNormPass: ChannelNorms of constants folded, one layout per id."""

    name = "const-norm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        _ConstNorm(op).run()
