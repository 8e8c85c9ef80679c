"""group-cost (seed 003, GroupCostPass): choose every group's sharding, split, pipeline
and SPM placement by searching a cost model, and write the plan into the IR.

Requires: groups made by the grouping stage (`group_tag` 0 groups are sliced; 2 run in
DDR and are left alone), every op with its `dev_info` mem_layout (the layout stage).

For each group the pass reads the body once into plain data (`tx8c.slicing.group`),
searches (`tx8c.slicing.search`: the seed's space -> data split -> time step -> SPM
allocation -> estimate loop, keeping the cheapest), and writes the result once:

- on the group: `spm_alloc_size` (the SPM peak), `template_id` (the group whose plan it
  reuses, or -1), `pipeline_parallel`, `sp_stage_num`, and `tx8c.plan`, the whole plan
  as JSON (round-trips through tx8c-opt; the lowered Program reads it);
- on every op of the body: `tile_parallel` (its loop dims' tile factors in
  shape_spatial_sharding) and `dev_info` (temporal_mem_slice: its largest slice;
  mem_addr: its result buffer's copies; multi_buf_en/num; imm_size and imm_addr).

Templates (seed 003, sliceHelpMap): groups whose plain-data form is equal (same ops,
attributes that matter to slicing, shapes, layouts, element types) take the first one's
plan without a search.

Options: `search` ("default" or "exhaustive"), `max-sharding`, `n-first`, `opt-search`
(how many factor levels the default search visits; 0, the default, visits all; the
seed's 2 is faster and misses plans that use fewer tiles), `dump-space` (print each
group's ranked sharding space, the seed's levels, to stdout), `jobs` (worker processes
searching distinct groups side by side, `tx8c.slicing.parallel`; 0, the default, as
many as the cores available; the plans do not depend on it).

`overlap` (default on): the lowering starts each group's constant prefix during the
previous group's tail (`tx8c.slicing.overlap`, `tx8c.codegen.lower`); the model's
estimate is then the chained one. Off, groups run one after another whole.

Statistics (module attribute `tx8c.slicing`, read into report.json): per group its ops,
plan, estimate alone (`cycles`), its ready lead, its share of the model's
estimate (`chain_cycles`), bound, SPM peak and lower bound; totals: `cycles` the model's
estimate (chained when `overlap`), `alone_cycles` the sum of the groups alone, `overlap`.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, replace

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, i1, i64
from xdsl.ir import OpResult
from xdsl.passes import ModulePass

from tx8c.analysis.group_dag import relabelled_sources, waiting_operands
from tx8c.dialect.attrs import DevAttr, ParallelAttr
from tx8c.dialect.ops.backend import GroupOp
from tx8c.slicing.evaluate import Evaluator, evaluate
from tx8c.slicing.group import GroupSpec, group_spec
from tx8c.slicing.overlap import (
    chained,
    idle_tail,
    lane_loads,
    ready_lead,
    stores_lag,
    waiting_refs,
)
from tx8c.slicing.parallel import search_all
from tx8c.slicing.plan import Plan
from tx8c.slicing.search import SearchOptions, search
from tx8c.slicing.space import ranked_shardings, tiles_used
from tx8c.slicing.steps import anchor_granules, tiles
from tx8c.target.config import TX8Config
from tx8c.target.config import target_config as target_config

PLAN_ATTR = "tx8c.plan"
STATS_ATTR = "tx8c.slicing"


@dataclass(frozen=True)
class GroupCostPass(ModulePass):
    name = "group-cost"

    search: str = "default"
    max_sharding: int = 0
    n_first: bool = True
    opt_search: int = 0
    dump_space: bool = False
    jobs: int = 0
    overlap: bool = True

    def options(self) -> SearchOptions:
        return SearchOptions(
            mode=self.search, max_sharding=self.max_sharding or None, n_first=self.n_first,
            levels=self.opt_search or None, constants_first=self.overlap,
        )

    def spec_of(self, group: GroupOp, waiting: frozenset[int]) -> GroupSpec:
        """The group's spec; with overlap, the inputs the lowering loads first (those
        not `waiting`) are its `ready_inputs`, so the estimate loads them first too."""
        spec = group_spec(group)
        if not self.overlap:
            return spec
        return replace(spec, ready_inputs=frozenset(range(len(spec.inputs))) - waiting)

    def group_specs(self, op: ModuleOp
                    ) -> tuple[list[tuple[GroupOp, GroupSpec]], dict[GroupOp, frozenset[int]]]:
        """The groups to slice with their specs (`spec_of`), and per group of the module
        its waiting operands (`waiting_operands`)."""
        every = [g for g in op.walk() if isinstance(g, GroupOp)]
        waiting = dict(zip(every, waiting_operands(every), strict=True))
        return [(g, self.spec_of(g, waiting[g])) for g in groups_to_slice(op)], waiting

    def as_run_by(self, spec: GroupSpec, searched: GroupSpec, plan: Plan,
                  config: TX8Config) -> Plan:
        """The template's plan (searched for `searched`) as the group of `spec` runs it:
        its candidate estimated with the group's own `ready_inputs`, which change the
        order of the first loads, not the buffers (ResNet-50's Conv+Add+Relu groups of
        one shape differ in them: 0.933 of cmodel v2 alone with the template's). Equal
        keys, equal buffers: the candidate fits the group as it fits the template."""
        if spec.ready_inputs == searched.ready_inputs:
            return plan
        own = evaluate(spec, plan.candidate, config,
                       shared=Evaluator(spec, config, self.overlap))
        return replace(own, candidates=plan.candidates)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        config = target_config(op)
        options = self.options()
        groups, waiting = self.group_specs(op)
        keys = [spec.key for _, spec in groups]
        firsts: dict[tuple, GroupOp] = {}  # per key, the group whose plan is the template
        for (group, spec), key in zip(groups, keys, strict=True):
            if self.dump_space:
                print_space(spec, group.attr("group_id"), config)
            firsts.setdefault(key, group)
        searched = [(g, s, key) for (g, s), key in zip(groups, keys, strict=True)
                    if firsts[key] is g]
        # `search` looked up here, at run time: a test that replaces it is obeyed
        plans = search_all(search, [s for _, s, _ in searched], config, options,
                           [f"group {g.attr('group_id')}" for g, _, _ in searched],
                           self.jobs)
        templates = {key: (g.attr("group_id"), s, plan)
                     for (g, s, key), plan in zip(searched, plans, strict=True)}
        alike = Alike()
        rows, previous = [], None
        for (group, spec), key in zip(groups, keys, strict=True):
            gid, searched_spec, plan = templates[key]
            template = -1 if firsts[key] is group else gid
            run = (key, spec.ready_inputs)  # equal runs, equal plans and lanes
            plan = alike.get("plan", run, self.as_run_by, spec, searched_spec, plan, config)
            write_plan(group, spec, plan, template, config, alike, run)
            rows.append(group_row(group, spec, plan, template, config, waiting[group]))
            if self.overlap:
                rows[-1]["early_loads"] = early_lane(group, spec, plan, previous, config,
                                                     waiting[group], alike, run)
            previous = (group, spec, plan, run)
        op.attributes[STATS_ATTR] = StringAttr(json.dumps(summary(rows, self.overlap),
                                                          sort_keys=True))


class Alike:
    """What group-cost computes after the search, once per run of a template: groups
    with equal keys and equal `ready_inputs` (a `run`) get the same plan, windows and
    early loads, so their second ... n-th group reuse the first's (BERT-base's 12 layers
    are 92 groups of 17 templates: the per-group tail took 1.8 s of a loaded machine,
    its early loads 1.3 s)."""

    def __init__(self):
        self.tables: dict[str, dict] = {}

    def get(self, table: str, key, compute, *args):
        """`compute(*args)` the first time `table` is asked for `key`; then its result."""
        found = self.tables.setdefault(table, {})
        if key not in found:
            found[key] = compute(*args)
        return found[key]


def groups_to_slice(module: ModuleOp) -> list[GroupOp]:
    return [g for g in module.walk()
            if isinstance(g, GroupOp) and g.attr("group_tag") != GroupOp.IN_DDR]


def print_space(spec: GroupSpec, gid: int, config: TX8Config) -> None:
    """The seed's ranked sharding levels of the anchor (DS_SpaceInit)."""
    loops = spec.anchor_loops
    granules = anchor_granules(spec, config)
    base = granules[-1] if granules else 1
    shape = [d.size for d in loops]
    print(f"group {gid}: {spec.nodes[spec.anchor].label} {shape}")
    for i, level in enumerate(ranked_shardings(loops, config.tiles_per_chip, base)):
        used = 1 << max(0, tiles_used(loops, level[0], base).bit_length() - 1)
        listed = ", ".join(str(list(s)) for s in level)
        print(f"  level{i}: factor={used}: {listed}")
    sys.stdout.flush()


def write_plan(group: GroupOp, spec: GroupSpec, plan: Plan, template: int,
               config: TX8Config, alike: Alike, run: tuple) -> None:
    """The plan into the IR (see the module docstring); its JSON and its tiles' windows
    computed once per `run` (`Alike`)."""
    group.attributes["spm_alloc_size"] = _int(plan.spm_peak)
    group.attributes["template_id"] = _int(template)
    group.attributes["pipeline_parallel"] = _bool(plan.candidate.pipelined)
    group.attributes["sp_stage_num"] = _int(max(plan.stages, default=0) + 1)
    group.attributes[PLAN_ATTR] = StringAttr(alike.get("json", run, lambda: json.dumps(
        plan.as_dict(), sort_keys=True, separators=(",", ":"))))
    from tx8c.slicing.propagate import propagate

    shares = alike.get("shares", run, lambda: [
        propagate(spec, tile.anchor) for tile in tiles(spec, plan.candidate, config)])
    body = [op for op in group.block.ops if op is not group.yield_op]
    for node, op in zip(spec.nodes, body, strict=True):
        dev = op.attributes.get("dev_info")
        op.attributes["tile_parallel"], op.attributes["dev_info"] = alike.get(
            "attrs", (run, node.index, dev), _op_attrs, node, plan, shares, dev)


def _op_attrs(node, plan: Plan, shares, dev):
    """The op's `tile_parallel` and its `dev_info` (`dev`, the one it has, with the
    plan's slice, buffer and scratch fields); `shares`: each tile's windows (`propagate`
    of its anchor). The same for a node of every group of a run (`Alike`: BERT-base
    builds 129 pairs of attributes for its 764 ops)."""
    per_dim = [set() for _ in node.slicer.loops]
    for windows in shares:
        window = windows.loops[node.index]
        if window is not None:
            for d in range(window.rank):
                per_dim[d].add(window.dim(d))
    parallel = ParallelAttr.make(shape_spatial_sharding=tuple(max(1, len(s))
                                                            for s in per_dim))
    value = next((b for b in plan.buffers if b.node == node.index and b.kind == "value"),
                 None)
    imm = next((b for b in plan.buffers if b.node == node.index and b.kind == "imm"), None)
    return parallel, (dev or DevAttr.make()).replace(
        temporal_mem_slice=tuple(plan.slice_shapes[node.index]),
        mem_addr=value.offsets if value else (),
        multi_buf_en=bool(value and value.copies > 1),
        multi_buf_num=value.copies if value else 1,
        imm_size=imm.size if imm else 0,
        imm_addr=imm.offsets[0] if imm else 0,
    )


def _int(v: int) -> IntegerAttr:
    return IntegerAttr(v, i64)


def _bool(v: bool) -> IntegerAttr:
    return IntegerAttr(1 if v else 0, i1)


def group_row(group: GroupOp, spec: GroupSpec, plan: Plan, template: int,
              config: TX8Config, waiting: frozenset[int] = frozenset()) -> dict:
    """The group's statistics; `waiting`: its operands a group it may run beside writes
    (its lead counts the loads of the others: `tx8c.slicing.overlap.ready_lead`)."""
    return {
        "group": group.attr("group_id"),
        "ops": [n.label for n in spec.nodes],
        "sharding": list(plan.candidate.sharding),
        "split": list(plan.candidate.split),
        "reduce": None if plan.candidate.reduce is None else {
            "node": plan.candidate.reduce.node,
            "sharding": list(plan.candidate.reduce.sharding),
            "split": list(plan.candidate.reduce.split)},
        "pipelined": plan.candidate.pipelined,
        "tiles": plan.tiles,
        "steps": plan.steps,
        "cycles": plan.cycles,
        "lead_cycles": ready_lead(spec, plan, config, waiting),
        "bound_cycles": plan.bound_cycles,
        "engines": {e.lane: e.cycles for e in plan.engines},
        "spm_peak": plan.spm_peak,
        "spm_lower_bound": plan.spm_lower_bound,
        "ddr_bytes": plan.ddr_bytes,
        "candidates": plan.candidates,
        "template_id": template,
    }


def early_lane(group: GroupOp, spec: GroupSpec, plan: Plan, previous, config: TX8Config,
               waiting: frozenset[int], alike: Alike, run: tuple) -> list[list]:
    """The group's early loads in lane order as `tx8c.slicing.overlap.chained` takes
    them ([cycles, lag], `lane_loads`): a ready load's lag None; a load of an input the
    previous sliced group (`previous`: its op, spec, plan and run) writes, how long
    before that group's end its stores of the load's windows are done (`_lag`); the
    loads behind a waiting load in the lane wait with it. The lane and the lags are
    computed once per run (`Alike`: they depend on the runs, not on the groups)."""
    idle = 0 if previous is None else idle_tail(previous[2].cycles, next(
        (e.cycles for e in previous[2].engines if e.lane == "ld"), 0))
    out = []
    lane = alike.get("lane", (run, waiting, idle > 0), lane_loads, spec, plan, config,
                     waiting, idle > 0)
    for index, cycles, windows in lane:
        refs = waiting_refs(spec.nodes[index], waiting)
        out.append([cycles, None if not refs else
                    min(_lag(group, k, previous, config, windows, alike) for k in refs)])
    return out


def _lag(group: GroupOp, k: int, previous, config: TX8Config, windows,
         alike: Alike) -> int:
    """How long before the previous sliced group's end the stores the group's operand
    `k` waits for are done: `stores_lag` when that group writes it - through relabels
    (`IN_DDR` groups: a Reshape, a head split...), of the windows of its result the
    relabelled windows read (`relabelled_sources`; Swin's Transpose after the relabel
    of a Gemm's result: the chain hid 2 030 of its 3 076 cycles counting it an older
    group's output, cmodel v2 none) -; its whole cycles when another (earlier) group
    does - cmodel v2 gives a tile the group's early loads once it entered the previous
    group, which it does once its own instructions of the earlier groups finished,
    stores included (the other tiles' skew is not counted, as the chain counts none);
    0 without a previous group or windows, or when the relabels read several values,
    the previous group's among them, or could not be followed."""
    value = group.operands[k]
    if previous is None or not windows or not isinstance(value, OpResult):
        return 0
    writer, written, its_plan, its_run = previous
    sources = relabelled_sources(value, windows)
    if not any(isinstance(v, OpResult) and v.owner is writer for v, _ in sources):
        return its_plan.cycles
    (source, read), = sources if len(sources) == 1 else ((None, None),)
    if read is None:
        return 0
    return alike.get("lag", (its_run, source.index, tuple(read)), stores_lag, written,
                     its_plan, config, source.index, read)


def summary(rows: list[dict], overlap: bool = True) -> dict:
    """The statistics: `rows` in program order, each given its share of the model's
    estimate (`chain_cycles`: `tx8c.slicing.overlap.chained` when `overlap`, else its
    cycles alone)."""
    shares = (chained([(r["cycles"], r["engines"].get("ld", 0), r.get("early_loads", ()))
                       for r in rows])
              if overlap else [r["cycles"] for r in rows])
    for r, share in zip(rows, shares, strict=True):
        r["chain_cycles"] = share
    return {
        "groups": rows,
        "overlap": overlap,
        "cycles": sum(shares),
        "alone_cycles": sum(r["cycles"] for r in rows),
        "bound_cycles": sum(r["bound_cycles"] for r in rows),
        "templates_reused": sum(1 for r in rows if r["template_id"] >= 0),
    }
