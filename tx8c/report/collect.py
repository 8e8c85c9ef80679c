"""What the report shows, gathered from the compiled module and report.json as plain
JSON-able data (the page's scripts only draw it).

- `graph`: one node per compute op (the ops report.json lists per group; the groups'
  LoadVar/StoreVar and the LoadConsts are not drawn), each with its group, attributes,
  layout_str, dev_info; one edge per tensor read, traced through group boundaries, with
  the memory layout the tensor is stored in.
- `groups`: report.json's group rows joined with the plans of the slicing stage.
- `views`: per sliced group, its pipeline (tasks on engine lanes over the first steps,
  as the slicing search scheduled them) and its SPM occupancy (each buffer copy's
  address range over its live intervals, at the offsets the plan gives), rebuilt from
  the plan with `tx8c.slicing` (the same functions the search used, so the picture is
  the plan's and not a re-derivation).
- `summary`: latency estimate (and the cmodel v2 latency when report.json has it: the
  `simulation` entry, `simulated_seconds` or `simulated_cycles`, and per group
  `simulation.groups[].simulated_cycles`), roofline
  bound and ratio, engine utilisation, DDR traffic, SPM peak vs lower bound, compile
  time per stage.
"""

from __future__ import annotations

import json
from typing import Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from tx8c.analysis.group_stats import source_value
from tx8c.dialect.base import Tx8beOp
from tx8c.dialect.ops.backend import GroupOp
from tx8c.interfaces.traits import ByteMove
from tx8c.ir_utils import function_bodies, is_compute_op, stored_layout
from tx8c.target.config import TX8Config

STEPS_SHOWN = 6
"""Pipeline steps drawn per group (the steady state repeats after the first three)."""

CONVERSIONS = ("ChannelNorm", "Transpose")


def collect(module: ModuleOp, report: dict, config: TX8Config,
            compare: dict | None = None) -> dict[str, Any]:
    graph = graph_data(module)
    groups = group_rows(module, report)
    return {
        "summary": summary(report, config, groups),
        "graph": graph,
        "groups": groups,
        "views": group_views(module, config),
        "numerics": compare,
    }


# --------------------------------------------------------------------------------------
# Graph
# --------------------------------------------------------------------------------------


def drawn_ops(module: ModuleOp) -> list[tuple[Operation, int]]:
    """The compute ops, in program order, with their group id (-1 outside groups)."""
    out = []
    for block in function_bodies(module):
        for op in block.ops:
            if isinstance(op, GroupOp):
                gid = op.attr("group_id")
                out += [(inner, gid) for inner in op.block.ops if _drawn(inner)]
            elif _drawn(op):
                out.append((op, -1))
    return out


def _drawn(op: Operation) -> bool:
    return is_compute_op(op) and not op.has_trait(ByteMove)


def graph_data(module: ModuleOp) -> dict:
    ops = drawn_ops(module)
    index = {op: i for i, (op, _) in enumerate(ops)}
    nodes, edges = [], []
    for i, (op, gid) in enumerate(ops):
        kind = op.name.removeprefix("tx8be.")
        nodes.append({
            "id": i, "op": kind, "group": gid,
            "shape": _shape_text(op),
            "conversion": kind in CONVERSIONS,
            "attrs": _attributes(op),
        })
        for operand in op.operands:
            source = source_value(operand)
            producer = source.owner
            if isinstance(producer, Operation) and producer in index:
                edges.append({"from": index[producer], "to": i,
                              "layout": stored_layout(source).name,
                              "shape": list(source.type.get_shape())})
    return {"nodes": nodes, "edges": edges}


def _shape_text(op: Operation) -> str:
    shapes = ["x".join(str(d) for d in r.type.get_shape()) for r in op.results]
    return ", ".join(shapes)


def _attributes(op: Operation) -> dict[str, str]:
    attrs = {name: str(value) for name, value in sorted(op.attributes.items())}
    if isinstance(op, Tx8beOp):
        attrs["results"] = ", ".join(str(r.type) for r in op.results)
    return attrs


# --------------------------------------------------------------------------------------
# Groups and their views
# --------------------------------------------------------------------------------------


def group_rows(module: ModuleOp, report: dict) -> list[dict]:
    """report.json's groups with their plans (when sliced) and simulated cycles (when the
    report has them)."""
    plans = {row["group"]: row for row in (report.get("slicing") or {}).get("groups", [])}
    simulated = {row["group"]: row["simulated_cycles"]
                 for row in (report.get("simulation") or {}).get("groups", [])}
    rows = []
    for g in (report.get("groups") or {}).get("groups", []):
        plan = plans.get(g["id"], {})
        rows.append({
            "id": g["id"], "ops": g["ops"], "tag": g["tag"],
            "boundary_bytes": g["boundary_bytes"],
            "sharding": plan.get("sharding"), "split": plan.get("split"),
            "tiles": plan.get("tiles"), "steps": plan.get("steps"),
            "cycles": plan.get("cycles"), "bound_cycles": plan.get("bound_cycles"),
            "engines": plan.get("engines", {}),
            "spm_peak": plan.get("spm_peak"), "spm_lower_bound": plan.get("spm_lower_bound"),
            "ddr_bytes": plan.get("ddr_bytes"), "template_id": plan.get("template_id"),
            "simulated_cycles": simulated.get(g["id"]),
        })
    return rows


def group_views(module: ModuleOp, config: TX8Config) -> dict[str, dict]:
    """Per sliced group: its pipeline Gantt and SPM occupancy (module docstring); equal
    groups (templates) share one view."""
    from tx8c.slicing.group import group_spec
    from tx8c.slicing.plan import Plan

    views: dict[str, dict] = {}
    by_template: dict[int, dict] = {}
    for block in function_bodies(module):
        for op in block.ops:
            if not isinstance(op, GroupOp) or "tx8c.plan" not in op.attributes:
                continue
            gid = op.attr("group_id")
            template = op.attr("template_id")
            if template is not None and template >= 0 and template in by_template:
                views[str(gid)] = by_template[template]
                continue
            plan = Plan.from_dict(json.loads(op.attributes["tx8c.plan"].data))
            view = plan_view(group_spec(op), plan, config)
            by_template[gid] = view
            views[str(gid)] = view
    return views


def plan_view(spec, plan, config: TX8Config) -> dict:
    from tx8c.slicing.evaluate import Rejected, data_split, frame_times, live_buffers, tasks

    try:
        split = data_split(spec, plan.candidate, config)
    except Rejected as e:  # compiled for another target than the one given
        return {"error": f"the plan does not fit this target: {e}"}
    ts = tasks(spec, plan.candidate, split, config)
    starts, ends, period = frame_times(spec, ts)
    shown = min(plan.steps, STEPS_SHOWN)
    labels = [n.label for n in spec.nodes]
    bars = []
    for t in ts:
        every = max(1, plan.steps // max(1, t.count))
        for step in range(0, shown, every):
            frame = (step + t.stage) * period
            begin = frame + (ends[t.node] if t.lane == "noc" else starts[t.node])
            bars.append([t.lane, begin, begin + max(1, t.cycles), t.node, step])
    offsets = _copy_offsets(plan)
    rects = []
    for b in live_buffers(spec, plan.candidate, config):
        base = offsets.get(b.name)
        if base is None or base < 0:
            continue
        for a, z in b.live:
            rects.append([b.name, base, b.size, a, z])
    return {"labels": labels, "period": period, "steps": plan.steps, "shown": shown,
            "bars": bars, "buffers": rects, "spm_peak": plan.spm_peak,
            "spm_lower_bound": plan.spm_lower_bound, "spm_bytes": config.spm_bytes_per_tile}


def _copy_offsets(plan) -> dict[str, int]:
    """SPM offset of each buffer copy `name#c` (the plan lists a buffer's copies' offsets
    in the sorted order of their names)."""
    out = {}
    for buf in plan.buffers:
        names = sorted(f"{buf.name}#{c}" for c in range(buf.copies))
        out.update(zip(names, buf.offsets, strict=False))
    return out


# --------------------------------------------------------------------------------------
# Summary
# --------------------------------------------------------------------------------------


def summary(report: dict, config: TX8Config, groups: list[dict]) -> dict:
    slicing = report.get("slicing") or {}
    cycles = slicing.get("cycles")
    engines: dict[str, int] = {}
    for g in groups:
        for lane, busy in (g["engines"] or {}).items():
            engines[lane] = engines.get(lane, 0) + busy
    roofline = slicing.get("roofline") or report.get("roofline") or {}
    estimate_s = cycles / config.clock_hz if cycles else None
    sim = report.get("simulation") or {}
    simulated_s = sim.get("simulated_seconds") or (
        sim["simulated_cycles"] / config.clock_hz if sim.get("simulated_cycles") else None)
    peaks = [g["spm_peak"] for g in groups if g["spm_peak"] is not None]
    bounds = [g["spm_lower_bound"] for g in groups if g["spm_lower_bound"] is not None]
    return {
        "model": report.get("model"),
        "options": report.get("options", {}),
        "target": report.get("target", {}),
        "clock_hz": config.clock_hz,
        "cycles": cycles,
        "bound_cycles": slicing.get("bound_cycles"),
        "estimate_seconds": estimate_s,
        "simulated_seconds": simulated_s,
        "roofline": roofline,
        "roofline_ratio": (estimate_s / roofline["seconds"]
                           if estimate_s and roofline.get("seconds") else None),
        "utilisation": {lane: busy / cycles for lane, busy in sorted(engines.items())}
        if cycles else {},
        "ddr_bytes": sum(g["ddr_bytes"] or 0 for g in groups),
        "spm_peak": max(peaks, default=None),
        "spm_lower_bound": max(bounds, default=None),
        "spm_bytes": config.spm_bytes_per_tile,
        "pass_seconds": report.get("pass_seconds", []),
        "phase_seconds": report.get("phase_seconds", {}),
        "op_counts": report.get("op_counts", {}),
        "layout": report.get("layout", {}),
        "groups": len(groups),
        "templates_reused": slicing.get("templates_reused"),
    }
