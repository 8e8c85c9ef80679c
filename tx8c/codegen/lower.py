"""Lowering a compiled module to its Program (issue 12, DESIGN.md "Backend data model";
seed 003 "OpLibInterface": load -> compute -> store per step, "LSU").

Requires: the whole pipeline up to the DDR stage: every sliced group (`group_tag` 0)
carries its plan (group-cost), the module its DDR placement (ddr-alloc, ddr-reorder),
and - when a group loads constants - the ConstContainer whose `ddr_layout` the
placement assumed (the one `consts.bin` is written from).

What each sliced group becomes, per tile (a share of `tx8c.slicing.steps.tiles`), step
by step in the order `tx8c.slicing.steps.steps` gives - the same semantics
`tx8c.sim.plan_run` checks on logical arrays:

- a load node that runs: a `Dma` on lane "ld" from its window of the DDR tensor (a group
  input, or the constant of a LoadConst) into the next copy of its value buffer; for a
  load the plan multicasts (`Plan.multicast`), a window a tile of higher index already
  loads at the same step (same node, same window) is not read from DDR again: the tile
  gets a `NocCopy` of that tile's buffer instead (a multicast; the source is the
  highest tile loading it, lowered first). Windows that only overlap (halos) stay separate loads;
- a compute node that runs: a `Kernel` on its engine's lane whose operands are the SPM
  buffers holding the windows it reads (with the window each holds; an operand read
  straight from DDR is a `DdrRef`), whose results go to the next copy of their buffers
  (an in-place result into its operand's buffer), with the node's scratch (`imm`);
  a reduction cut in time accumulates into its buffer after its first piece;
- a store node that runs: a `Dma` on lane "st" from the buffer holding the value to its
  window of the group's result tensor;
- a reduction cut over tiles: the partial sums of an output window meet along a binary
  tree (`tx8c.slicing.steps.reduce_tree`): when a tile's own partial is complete, one
  `NocReduce` per child, round by round, adds the child's (complete) partial into it;
  the owner, the root, then runs what follows the reduction.

Buffer copies rotate as the SPM allocation assumed (`tx8c.slicing.evaluate.lifetimes`):
the k-th run of a producer writes copy k mod copies (for a partial sum, the k-th output
window). Offsets are the plan's `BufferPlan.offsets`.

A value spm-resident keeps in SPM is a "resident" DdrTensor (its pages' base and page
size); its loads and stores are the same `Dma` windows.

Groups that run in DDR (`group_tag` 2, relabels only) get no instructions: their results
are `alias` tensors at the offset of what they relabel (same bytes, another shape).

**Cross-group overlap** (`overlap`, group-cost's option, on by default; issue 11): a
group's loads may start while the previous group still runs (`tx8c.codegen.program`,
"Cross-group overlap"): a constant's at once, a value's once the stores of its window
are done, not after the barrier. The lowering
- places each sliced group's buffers as planned or mirrored from the top of its region
  (`placed_plan`: offset' = top - offset - size), whichever puts the buffers of its
  constants' first loads over fewer bytes of the previous group's buffers (a tie
  alternates), so consecutive groups' buffers tend to lie apart;
- moves each tile's first load of every ready value - a constant, or an input no group
  it may run beside still writes (`tx8c.analysis.group_dag.waiting_operands`) - to the
  front of the tile's list where nothing before it touches its buffer (`_ready_first`);
- marks the leading loads of each tile's ld lane and the NocCopys of those on its noc
  lane `early` (`mark_early`), up to the first whose buffer reaches above the region
  top of a group the tile may still run beside.
The instructions' meaning is unchanged (a sequential run gives the same bytes).

Departs from the seed: the seed's main.c loops are rolled; the Program is the unrolled
list (the C emitter may roll it back), so the cmodel checks exactly what runs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace

from xdsl.dialects.builtin import ModuleOp

from tx8c.analysis.ddr_tensors import ddr_tensors, main_body, read_placement
from tx8c.analysis.group_dag import waiting_operands
from tx8c.analysis.spm_resident import Residency, ResidentValue, read_residency
from tx8c.codegen.program import (
    DdrRef,
    DdrTensor,
    Dma,
    GroupProgram,
    Instruction,
    Kernel,
    NocCopy,
    NocReduce,
    Operand,
    OpInfo,
    Program,
    SpmRef,
    TileProgram,
)
from tx8c.dialect.layout import mem_layout_for
from tx8c.dialect.ops.backend import GroupOp
from tx8c.dialect.types import short_name
from tx8c.errors import Tx8Error
from tx8c.interfaces.sharding import Window
from tx8c.interfaces.traits import ReadsConstContainer
from tx8c.ir_utils import group_ops, shape_of, stored_layout
from tx8c.slicing.evaluate import frame_schedule, node_lane
from tx8c.slicing.group import GroupSpec, Node, Stored, ValueRef, group_spec
from tx8c.slicing.plan import BufferPlan, Plan
from tx8c.slicing.propagate import SweepMemo
from tx8c.slicing.steps import Tile, downstream_of, lead, reduce_tree, steps, tiles
from tx8c.target.config import TX8Config, target_config
from tx8c.target.mem_layout import stored_bytes

PLAN_ATTR = "tx8c.plan"
SLICING_ATTR = "tx8c.slicing"
"""group-cost's statistics (`tx8c.transforms.slice.group_cost.STATS_ATTR`)."""


class LoweringError(Tx8Error):
    """The module is not ready to lower (a stage missing) or its plan is inconsistent."""


def spm_ref(addr: int, window: Window, stored: Stored) -> SpmRef:
    layout = mem_layout_for(window.shape, stored.aligned)
    return SpmRef(addr, window.shape, stored.dtype, layout.name)


# --------------------------------------------------------------------------------------
# The module
# --------------------------------------------------------------------------------------


def lower_module(module: ModuleOp, container=None, config: TX8Config | None = None,
                 overlap: bool | None = None) -> Program:
    """The Program of a compiled module (see the module docstring). `container`: the
    ConstContainer (default: the one the module carries). `overlap`: the groups'
    constant prefixes marked early and their buffers placed for it (module docstring,
    "Cross-group overlap"); None: as group-cost's `overlap` option said."""
    config = config or target_config(module)
    if overlap is None:
        overlap = planned_overlap(module)
    placement = read_placement(module)
    if placement is None:
        raise LoweringError("the module has no DDR placement (module attribute tx8c.ddr); "
                            "run the DDR stage (ddr-alloc) before lowering")
    if container is None:
        from tx8c.const_container import module_container

        container = module_container(module)
    found = ddr_tensors(module, config)
    residency = read_residency(module)
    resident = {v.name: v for v in residency.values} if residency is not None else {}
    tensors = [_tensor(v, placement, resident.get(v.name), residency, config)
               for v in found.values]
    for name, (root, value) in found.aliases.items():
        shape, layout = tuple(shape_of(value)), stored_layout(value)
        dtype = value.type.get_element_type()
        tensors.append(DdrTensor(name, placement.offsets[root], shape, short_name(dtype),
                                 layout.name, stored_bytes(shape, dtype, layout, config),
                                 "alias", root))
    body = main_body(module)
    groups = group_ops(body)
    constants = _constants(groups, container, placement.opt_ddr)
    tensors += constants.values()
    ops: list[OpInfo] = []
    programs = []
    derived: dict = {}  # what equal groups derive from their windows alone (`lower_group`)
    waiting = dict(zip(groups, waiting_operands(groups), strict=True))
    previous = None  # the placed plan of the last sliced group, and whether mirrored
    for g in groups:
        inputs = [found.names[v] for v in g.operands]
        outputs = [found.names[v] for v in g.results]
        if g.attr("group_tag") == GroupOp.IN_DDR:
            programs.append(GroupProgram(g.attr("group_id"), bool(g.attr("need_barrier")),
                                         (), 0, "ddr"))
            continue
        spec = group_spec(g)  # once: placing and lowering both read it
        placed = placed_plan(g, previous, config, spec) if overlap else None
        programs.append(lower_group(g, inputs, outputs, ops, config, derived, placed,
                                    ready_first=overlap, waiting=waiting[g], spec=spec))
        previous = placed
    if overlap:
        programs = mark_early(programs, {t.name: t for t in tensors}, config)
    shares = chain_shares(module) if overlap else {}
    programs = [replace(gp, chain_cycles=shares.get(gp.group_id, gp.estimate_cycles))
                for gp in programs]
    return Program(
        config=json.loads(json.dumps(config.as_dict())), ddr_bytes=placement.total_bytes,
        tensors=tuple(tensors),
        inputs=found.inputs, outputs=found.outputs, ops=tuple(ops), groups=tuple(programs),
        notes=(f"ddr peak {placement.peak} B, lower bound {placement.lower_bound} B, "
               f"constants {placement.constants_bytes} B, opt_ddr {placement.opt_ddr}",),
    )


def _slicing_stats(module: ModuleOp) -> dict:
    attr = module.attributes.get(SLICING_ATTR)
    return json.loads(attr.data) if attr is not None else {}


def planned_overlap(module: ModuleOp) -> bool:
    """Whether group-cost planned the model with cross-group overlap (its statistics'
    `overlap`; a module without them: no)."""
    return bool(_slicing_stats(module).get("overlap", False))


def chain_shares(module: ModuleOp) -> dict[int, int]:
    """Per group id, its share of the model's estimate (group-cost's `chain_cycles`)."""
    return {row["group"]: row["chain_cycles"]
            for row in _slicing_stats(module).get("groups", ()) if "chain_cycles" in row}


def _tensor(value, placement, resident: ResidentValue | None, residency: Residency | None,
            config: TX8Config) -> DdrTensor:
    """The DdrTensor of a variable: at its DDR offset, or (`resident`, one of
    `residency`'s values) in pages in the tiles' SPM."""
    if resident is None:
        return DdrTensor(value.name, placement.offsets[value.name], value.shape, value.dtype,
                         value.layout, value.size, value.kind)
    return DdrTensor(value.name, resident.base(config), value.shape, value.dtype,
                     value.layout, value.size, "resident", page=residency.page)


def _constants(groups, container, opt_ddr: bool) -> dict[int, DdrTensor]:
    """A DdrTensor per constant a LoadConst reads, where `consts.bin` puts it."""
    ids = sorted({op.attr("const_id") for g in groups for op in g.block.ops
                  if op.has_trait(ReadsConstContainer)})
    if not ids:
        return {}
    if container is None:
        raise LoweringError("the module loads constants but carries no ConstContainer; "
                            "give the one consts.json describes")
    layout = container.ddr_layout(opt_ddr)
    out = {}
    for i in ids:
        entry, slot = container.entry(i), layout.slot(i)
        out[i] = DdrTensor(f"c{i}", slot.offset, tuple(entry.shape), entry.dtype,
                           container.layout(i).name, slot.nbytes, "constant")
    return out


def op_text(op) -> str:
    """The op's IR text (attributes included) without its region or operands' names."""
    from io import StringIO

    from xdsl.printer import Printer

    stream = StringIO()
    Printer(stream=stream).print_op(op)
    return stream.getvalue()


# --------------------------------------------------------------------------------------
# One group
# --------------------------------------------------------------------------------------


def group_plan(group: GroupOp) -> Plan:
    attr = group.attributes.get(PLAN_ATTR)
    if attr is None:
        raise LoweringError(f"group {group.attr('group_id')} has no plan; run group-cost "
                            "before lowering")
    return Plan.from_dict(json.loads(attr.data))


def lower_group(group: GroupOp, inputs: list[str], outputs: list[str], ops: list[OpInfo],
                config: TX8Config, derived: dict | None = None,
                placed: tuple[Plan, bool] | None = None, ready_first: bool = False,
                waiting: frozenset[int] = frozenset(), spec: GroupSpec | None = None
                ) -> GroupProgram:
    """One sliced group's instructions per tile; its kernels' ops are appended to
    `ops`. `derived` keeps, per group key and plan, what the lowering derives from the
    windows alone (a `_Derived`): each tile's steps (`tx8c.slicing.steps.steps`, the
    windows propagated step by step) and each kernel's operand and result windows and
    lane. Equal groups
    (a template's, a model's repeated layers) walk the same steps, so the lowering of a
    module derives them once. `placed`: the group's plan with its buffers as placed
    (`placed_plan`: maybe mirrored) and whether they were mirrored; None: as planned.
    `ready_first`: each tile's first load of each ready value - a constant, or an input
    whose index is not in `waiting` (those a group it may run beside still writes:
    `tx8c.analysis.group_dag.waiting_operands`) - moves to the front of its list where
    no instruction before it touches its buffer (`GroupLowering._ready_first`), so that
    these loads lead the early prefix of the ld (noc) lane (`mark_early`) and do not
    queue behind a load that waits for the previous group's stores. `spec`: the
    group's `group_spec`, when the caller has it."""
    gid = group.attr("group_id")
    spec = spec or group_spec(group)
    plan, mirrored = placed or (group_plan(group), False)
    limit = config.spm_bytes_per_tile - spec.spm_reserve
    body = [op for op in group.block.ops if op is not group.yield_op]
    op_index = {}
    for node in spec.nodes:
        if node.kind == "compute":  # loads and stores are DMAs, "ddr" nodes never run
            op_index[node.index] = len(ops)
            ops.append(OpInfo(body[node.index].name, op_text(body[node.index]), gid,
                              node.index))
    names = GroupNames(inputs, _store_targets(spec, outputs), _const_names(spec, body))
    shares = tiles(spec, plan.candidate, config)
    lowering = GroupLowering(spec, plan, names, op_index, config, gid,
                             {} if derived is None else derived, ready_first, waiting)
    # leaves of the reduction tree first: a tile's NocReduce names the instruction of
    # its source after which the source's partial sum is complete
    done: dict[int, tuple[Instruction, ...]] = {}
    for tile in sorted(shares, key=lambda t: -t.index):
        done[tile.index] = lowering.tile(tile)
    programs = tuple(TileProgram(t.index, done[t.index]) for t in shares if done[t.index])
    return GroupProgram(gid, bool(group.attr("need_barrier")), programs, plan.cycles,
                        spm_limit=limit, mirrored=mirrored)


def placed_plan(group: GroupOp, previous: tuple[Plan, bool] | None, config: TX8Config,
                spec: GroupSpec | None = None) -> tuple[Plan, bool]:
    """The group's plan with its buffers as the lowering places them for cross-group
    overlap, and whether they are mirrored (`mirrored_plan`): of the two orientations,
    the one where the buffers of its constants' first loads (what can load while the
    previous group runs) overlap fewer bytes of `previous`'s buffers (the last sliced
    group's placed plan); on a tie the opposite of `previous`'s. `spec`: the group's
    `group_spec`, when the caller has it."""
    plan = group_plan(group)
    spec = spec or group_spec(group)
    mirrored = mirrored_plan(plan, config.spm_bytes_per_tile - spec.spm_reserve,
                             config.batch_align_bytes)
    if mirrored is None:
        return plan, False
    if previous is None:
        return plan, False
    body = [op for op in group.block.ops if op is not group.yield_op]
    consts = _const_names(spec, body)
    taken = [(o, o + b.size) for b in previous[0].buffers for o in b.offsets]

    def clash(candidate: Plan) -> int:
        return sum(max(0, min(hi, b.offsets[0] + b.size) - max(lo, b.offsets[0]))
                   for b in candidate.buffers if b.kind == "value" and b.node in consts
                   for lo, hi in taken)

    kept, moved = clash(plan), clash(mirrored)
    if kept != moved:
        return (mirrored, True) if moved < kept else (plan, False)
    return (plan, False) if previous[1] else (mirrored, True)


def mirrored_plan(plan: Plan, limit: int, align: int) -> Plan | None:
    """`plan` with every buffer copy moved from `offset` to `top - offset - size`
    (`top`: `limit` rounded down to `align`; `size` rounded up to it), so buffers that
    sat at the bottom of the region sit at its top. Reflection keeps disjoint buffers
    disjoint and offsets aligned (every offset is a multiple of `align`). None when a
    buffer would not fit (a plan placed past `limit`)."""
    top = limit // align * align
    buffers = []
    for b in plan.buffers:
        size = -(-b.size // align) * align
        offsets = tuple(top - o - size for o in b.offsets)
        if any(o < 0 or o % align for o in offsets):
            return None
        buffers.append(replace(b, offsets=offsets))
    return replace(plan, buffers=tuple(buffers))


def mark_early(programs: list[GroupProgram], tensors: dict[str, DdrTensor],
               config: TX8Config, variables: bool = True) -> list[GroupProgram]:
    """The programs with each sliced group's leading loads marked `early` per tile
    (module docstring, "Cross-group overlap"): on lane "ld", the Dmas before the tile's
    first load that may not be early; on lane "noc", the NocCopys of those loads before
    its first other NoC instruction. A load whose buffer reaches above the SPM region of
    a group the tile may still run beside it (its previous group, and the groups of
    other tiles since: where their epochs' resident values may live) may not be early;
    without `variables`, nor may a load of anything but a constant (the constant prefix
    alone, as before branch chain)."""
    out, prev_limit = [], {}
    lowest = config.spm_bytes_per_tile  # the lowest region top so far (a tile's first group)
    for gp in programs:
        if gp.kind != "sliced":
            out.append(gp)
            continue
        early: dict[int, set[int]] = {}
        for tp in gp.tiles:
            top = prev_limit.get(tp.tile, lowest)
            early[tp.tile] = set(_early_loads(tp.instructions, top, config,
                                              None if variables else tensors))
        for tp in gp.tiles:
            top = prev_limit.get(tp.tile, lowest)
            early[tp.tile] |= _early_copies(tp.instructions, early, top, config)
        tiles = tuple(_marked(tp, early[tp.tile]) for tp in gp.tiles)
        out.append(replace(gp, tiles=tiles))
        lowest = min(lowest, gp.spm_limit)
        for tile in prev_limit:
            prev_limit[tile] = min(prev_limit[tile], gp.spm_limit)
        for tp in gp.tiles:
            prev_limit[tp.tile] = gp.spm_limit
    return out


def _marked(tp: TileProgram, early: set[int]) -> TileProgram:
    """The tile's program with its instructions at `early` marked early (the same
    TileProgram when none is)."""
    if not early:
        return tp
    return TileProgram(tp.tile, tuple(_early(ins) if i in early else ins
                                      for i, ins in enumerate(tp.instructions)))


def _early(ins: Dma | NocCopy) -> Dma | NocCopy:
    """`replace(ins, early=True)` for these dataclasses (no `__post_init__`, every
    field in `__dict__`), made without `dataclasses.replace`, which calls `__init__`
    with every field by name: BERT-base marks 18 662 loads, half the time of
    `mark_early` (a tenth of the lowering)."""
    marked = object.__new__(type(ins))
    marked.__dict__.update(ins.__dict__)
    marked.__dict__["early"] = True
    return marked


def _spm_top(ref: SpmRef, config: TX8Config) -> int:
    return ref.byte_range(config)[1]


def _own_refs(ins: Instruction) -> list[SpmRef]:
    """The buffers of its own tile's SPM an instruction reads or writes."""
    if isinstance(ins, Dma):
        return [ins.spm]
    if isinstance(ins, Kernel):
        refs = [o.ref for o in (*ins.operands, *ins.results)
                if o is not None and isinstance(o.ref, SpmRef)]
        return refs + ([ins.imm] if ins.imm is not None else [])
    return [ins.target]


def _early_loads(instructions, top: int, config: TX8Config,
                 constants_only: dict[str, DdrTensor] | None = None) -> list[int]:
    """The leading loads of the ld lane whose buffers lie below `top` (and that load a
    constant, when `constants_only` gives the tensors)."""
    found = []
    for i, ins in enumerate(instructions):
        if ins.lane != "ld":
            continue
        if (not isinstance(ins, Dma) or _spm_top(ins.spm, config) > top
                or (constants_only is not None
                    and constants_only[ins.tensor].kind != "constant")):
            break
        found.append(i)
    return found


def _early_copies(instructions, early: dict[int, set[int]], top: int,
                  config: TX8Config) -> set[int]:
    found = set()
    for i, ins in enumerate(instructions):
        if ins.lane != "noc":
            continue
        if (not isinstance(ins, NocCopy) or ins.after not in early.get(ins.source_tile, ())
                or _spm_top(ins.target, config) > top):
            break
        found.add(i)
    return found


@dataclass(frozen=True)
class GroupNames:
    """The DDR tensors a group touches: its inputs, per store node the results it
    writes, per LoadConst node its constant."""

    inputs: list[str]
    stores: dict[int, str]
    consts: dict[int, str]


def _store_targets(spec: GroupSpec, outputs: list[str]) -> dict[int, str]:
    targets = {}
    for j, ref in enumerate(spec.outputs):
        if not ref.is_input and spec.nodes[ref.node].kind == "store":
            targets.setdefault(ref.node, outputs[j])
    return targets


def _const_names(spec: GroupSpec, body) -> dict[int, str]:
    return {n.index: f"c{body[n.index].attr('const_id')}" for n in spec.nodes
            if body[n.index].has_trait(ReadsConstContainer)}


@dataclass
class _TileState:
    """Per tile while lowering: where each value is (buffer and window held), how often
    each node has run, the instructions so far."""

    where: dict[ValueRef, tuple[SpmRef, Window]] = field(default_factory=dict)
    runs: dict[tuple[int, int], int] = field(default_factory=dict)
    out: list[Instruction] = field(default_factory=list)
    first_ready: set[int] = field(default_factory=set)
    """Indices in `out` of each ready value's first load (a Dma or NocCopy) on the tile
    (`lower_group`'s `ready_first`)."""


@dataclass
class _Derived:
    """What the lowering of a group derives from its key and plan alone, shared by the
    module's equal groups (`lower_group`): the frame schedule, each tile's steps, and per
    (node, loop window) a kernel's operand windows, result windows and lane."""

    frame: tuple[dict[int, int], int]
    steps: dict[Tile, list] = field(default_factory=dict)
    kernels: dict[tuple[int, Window], tuple] = field(default_factory=dict)
    sweeps: SweepMemo = field(default_factory=SweepMemo)
    """The tiles' `steps` share their node windows' back windows (a tile's neighbours
    meet most of its node windows again)."""


class GroupLowering:
    def __init__(self, spec: GroupSpec, plan: Plan, names: GroupNames, op_index: dict,
                 config: TX8Config, gid: int, derived: dict, ready_first: bool = False,
                 waiting: frozenset[int] = frozenset()):
        self.spec, self.plan, self.names, self.op_index = spec, plan, names, op_index
        self.ready_first, self.waiting = ready_first, waiting
        self.config, self.gid = config, gid
        self.derived = derived.get((spec.key, plan.candidate))
        if self.derived is None:
            self.derived = derived[(spec.key, plan.candidate)] = _Derived(
                frame_schedule(spec, plan.candidate, config))
        self.buffers: dict[tuple[int, int], BufferPlan] = {}
        self.imm: dict[int, BufferPlan] = {}
        for b in plan.buffers:
            if any(o < 0 for o in b.offsets):
                raise LoweringError(f"group {gid}: buffer {b.name} has no SPM offset")
            if b.kind == "imm":
                self.imm[b.node] = b
            else:
                self.buffers[(b.node, b.result)] = b
        cut = plan.candidate.reduce
        self.reduce_node = cut.node if cut is not None else None
        self.interchange = plan.candidate.interchange
        self.late = downstream_of(spec, cut.node) if cut is not None else set()
        self.partials: dict[tuple[int, Window], tuple[SpmRef, int]] = {}
        self.loaded: dict[tuple[int, int, Window], tuple[int, SpmRef, int]] = {}
        """(step, load node, window) -> (tile, buffer, its Dma's index): the sources
        of multicasts."""
        self.ranges: dict[SpmRef, tuple[int, int]] = {}
        self.refs: dict[tuple, SpmRef] = {}  # `_spm_ref`
        self.starts, self.period = self.derived.frame
        self.children = reduce_tree(tiles(spec, plan.candidate, config))

    # -- one tile ------------------------------------------------------------------------
    def tile(self, tile: Tile) -> tuple[Instruction, ...]:
        """The tile's instructions, generated step by step in node order (the order of
        the values' semantics), then ordered by the time the schedule gives each
        (`evaluate.frame_schedule`: (step + stage) * period + start in the frame)."""
        state = _TileState()
        keys = []
        walk = self.derived.steps.get(tile)
        if walk is None:
            walk = self.derived.steps[tile] = steps(self.spec, self.plan.candidate, tile,
                                                    self.config, self.derived.sweeps)
        for step in walk:
            complete = step.last_piece  # the partial sum, if any
            for node in self.spec.nodes:
                if not step.runs[node.index] or node.kind == "ddr":
                    continue  # a constant left in DDR: its readers fetch it themselves
                before = len(state.out)
                loops = step.windows.loops[node.index]
                if node.kind == "load":
                    self._load(node, loops, state, step.index, tile.index)
                elif node.kind == "store":
                    self._store(node, loops, state, step.index)
                else:
                    self._kernel(node, loops, state, step)
                if node.index == self.reduce_node and complete:
                    self._after_reduce(node, loops, tile, state, step)
                at = ((step.index - lead(step, node.index)
                       + self.plan.stages[node.index]) * self.period
                      + self.starts.get(node.index, 0))
                keys += [(at, node.index, k) for k in range(before, len(state.out))]
        order = [k for _, _, k in sorted(keys)]
        if self.ready_first:
            order = self._ready_first(order, state)
        position = {k: i for i, k in enumerate(order)}
        for key, (ref, k) in list(self.partials.items()):
            if key[0] == tile.index:
                self.partials[key] = (ref, position[k])
        for key, (source, ref, k) in list(self.loaded.items()):
            if source == tile.index and k < 0:
                self.loaded[key] = (source, ref, position[-1 - k])
        return tuple(state.out[k] for k in order)

    def _ready_first(self, order: list[int], state: _TileState) -> list[int]:
        """`order` with each first load of a ready value (`state.first_ready`) moved to
        the front when no instruction before it touches its buffer's bytes: the list's
        meaning is unchanged (the moved load writes bytes nothing before it reads or
        writes), and the load can start while the tile's previous group still runs."""
        firsts = state.first_ready
        last = max((i for i, k in enumerate(order) if k in firsts), default=-1)
        front, rest = [], []
        touched: set[tuple[int, int]] = set()  # a set: a tile has few distinct buffers
        for k in order[:last + 1]:  # no first load after `last`: the rest stays in order
            ins = state.out[k]
            if k in firsts:
                lo, hi = self._spm_range(ins.spm if isinstance(ins, Dma) else ins.target)
                if not any(a < hi and lo < b for a, b in touched):
                    front.append(k)
                    continue
            rest.append(k)
            touched.update(self._spm_range(ref) for ref in _own_refs(ins))
        return front + rest + order[last + 1:]

    def _spm_ref(self, addr: int, window: Window, stored: Stored) -> SpmRef:
        """`spm_ref`, remembered per address, shape and storage: the group's tiles hold the
        same buffers at every step (BERT-base: 41 328 refs, 993 distinct)."""
        key = (addr, window.shape, stored.dtype, stored.aligned)
        found = self.refs.get(key)
        if found is None:
            found = self.refs[key] = spm_ref(addr, window, stored)
        return found

    def _spm_range(self, ref: SpmRef) -> tuple[int, int]:
        """`SpmRef.byte_range` of a buffer, remembered: the same refs recur at every step."""
        found = self.ranges.get(ref)
        if found is None:
            found = self.ranges[ref] = ref.byte_range(self.config)
        return found

    def _where(self, state: _TileState, ref: ValueRef, node: Node) -> tuple[SpmRef, Window]:
        found = state.where.get(ref)
        if found is None:
            raise LoweringError(f"group {self.gid}: {node.label} reads {ref}, which no "
                                "earlier instruction of its tile put in SPM")
        return found

    def _load(self, node: Node, loops: Window, state: _TileState, step: int, tile: int
              ) -> None:
        window = node.slicer.result_windows(loops)[0]
        ref = ValueRef(node.index, 0)
        if (node.index, 0) not in self.buffers:
            return  # nothing in the group reads it in SPM
        tensor = self.names.consts.get(node.index) or self.names.inputs[node.inputs[0].index]
        spm = self._spm_ref(self._copy(node, 0, state, True), window, node.results[0])
        state.where[ref] = (spm, window)
        if window.is_empty():  # an empty window moves nothing: no DMA is issued
            return
        ready = node.index in self.names.consts or node.inputs[0].index not in self.waiting
        if ready and state.runs[(node.index, 0)] == 1:
            state.first_ready.add(len(state.out))
        key = (step, node.index, window)
        source = self.loaded.get(key) if node.index in self.plan.multicast else None
        if source is not None:
            source_tile, source_ref, after = source
            state.out.append(NocCopy("noc", source_tile, source_ref, spm, after, step))
            return
        # the index is made final (the position in the tile's order) when the tile ends
        self.loaded[key] = (tile, spm, -1 - len(state.out))
        state.out.append(Dma("ld", tensor, window, spm, None, step))

    def _copy(self, node: Node, r: int, state: _TileState, advance: bool,
              copy: int | None = None) -> int:
        """The SPM address of result r's buffer for this run: the next copy, or (for a
        partial sum that accumulates) the one the run before used; `copy`: that copy
        (the interchanged order's partial sum of anchor step `copy`)."""
        buffer = self.buffers[(node.index, r)]
        if copy is not None:
            return buffer.offsets[copy % buffer.copies]
        count = state.runs.get((node.index, r), 0)
        if advance:
            state.runs[(node.index, r)] = count + 1
        else:
            count = max(0, count - 1)
        return buffer.offsets[count % buffer.copies]

    def _store(self, node: Node, loops: Window, state: _TileState, step: int) -> None:
        window = loops.head(node.slicer.num_outputs)
        ref = node.inputs[0]
        spm, held = self._where(state, ref, node)
        if not held.contains(window):
            raise LoweringError(f"group {self.gid}: {node.label} stores {window} of {ref}, "
                                f"but its buffer holds {held}")
        if window.is_empty():  # nothing of this result on this tile at this step
            return
        state.out.append(Dma("st", self.names.stores[node.index], window, spm,
                             None if held == window else held, step))

    def _windows(self, node: Node, loops: Window) -> tuple:
        """A kernel's operand windows, result windows and lane at `loops` (shared by
        equal groups: `derived`)."""
        found = self.derived.kernels.get((node.index, loops))
        if found is None:
            found = self.derived.kernels[(node.index, loops)] = (
                node.slicer.back_window(loops), node.slicer.result_windows(loops),
                node_lane(node, node.slicer.work(loops.shape)))
        return found

    def _kernel(self, node: Node, loops: Window, state: _TileState, step) -> None:
        operands = []
        reads, writes, lane = self._windows(node, loops)
        for k, (ref, window) in enumerate(zip(node.inputs, reads, strict=True)):
            if node.from_ddr[k]:
                name = self.names.inputs[ref.index] if ref.is_input else \
                    self.names.consts[ref.node]
                operands.append(Operand(DdrRef(name), Window.whole(
                    self.spec.value(ref).shape)))
                continue
            spm, held = self._where(state, ref, node)
            if not held.contains(window):
                raise LoweringError(f"group {self.gid}: {node.label} reads {window} of "
                                    f"{ref}, but its buffer holds {held}")
            operands.append(Operand(spm, held))
        accumulate = node.index == self.reduce_node and not step.first_piece
        # the interchanged order: each anchor step accumulates into a copy of its own
        copy = step.inner if node.index == self.reduce_node and self.interchange else None
        results = [self._result(node, r, window, state, not accumulate, operands, copy)
                   for r, window in enumerate(writes)]
        imm = self.imm.get(node.index)
        imm_ref = None if imm is None else SpmRef(imm.offsets[0], (imm.size,), "ui8",
                                                 "Tensor")
        state.out.append(Kernel(lane, self.op_index[node.index], loops,
                                tuple(operands), tuple(results), imm_ref, accumulate,
                                step.index))

    def _result(self, node: Node, r: int, window: Window | None, state: _TileState,
                advance: bool, operands: list[Operand], copy: int | None = None
                ) -> Operand | None:
        if window is None:
            return None
        ref = ValueRef(node.index, r)
        if (node.index, r) in self.buffers:
            spm = self._spm_ref(self._copy(node, r, state, advance, copy), window,
                                node.results[r])
        elif node.inplace and r == 0 and operands and isinstance(operands[0].ref, SpmRef):
            spm = self._spm_ref(operands[0].ref.addr, window, node.results[r])  # in place
        else:
            state.where.pop(ref, None)
            return None  # nothing reads it in SPM
        state.where[ref] = (spm, window)
        return Operand(spm, window)

    # -- reductions over tiles -------------------------------------------------------------
    def _after_reduce(self, node: Node, loops: Window, tile: Tile, state, step):
        """The tile's partial sum of this output window is complete: add its children's
        partials into it (each complete by then: children are lowered first), and, on
        a tile that is not the owner, remember the instruction after which its own
        partial is complete."""
        if tile.reduce is None:
            return
        window = node.slicer.result_windows(loops)[0]
        target = state.where[ValueRef(node.index, 0)][0]
        combine = node.slicer.combine.value
        for child in self.children[tile.index]:
            found = self.partials.get((child, window))
            if found is None:
                raise LoweringError(f"group {self.gid}: tile {child} has no partial sum "
                                    f"of {window} for tile {tile.index} to reduce")
            source, after = found
            state.out.append(NocReduce("noc", child, source, target, after, step.index,
                                       combine=combine))
        if not tile.owner:
            self.partials[(tile.index, window)] = (target, len(state.out) - 1)
