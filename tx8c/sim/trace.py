"""The cmodel v2's timeline as a trace file (`tx8c trace`).

A compiler engineer asking why a group takes the cycles it does wants to see what each
engine of each tile did when: which load the first kernel waited for, where a lane sat
idle, how far one group's loads ran under the previous group's kernels. `chrome_trace`
turns the timing simulation's instructions (`tx8c.sim.cmodel_v2.simulate_events`) into
the Chrome trace event format (a JSON object; https://ui.perfetto.dev and
chrome://tracing open it): one process per tile, one thread per engine lane (ld, st, ne,
ct, tdma, noc) with a slice per instruction, and a "groups" thread with a slice per
group from when the tile entered it to its last instruction there. Times are
microseconds at the target's clock; every slice also carries its cycles, group, step
and instruction index (the `where` of the cmodel's errors), and a DMA its tensor,
window and DDR bytes. `groups` keeps the trace of a large model to the groups asked
for.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from tx8c.codegen.program import Dma, Kernel, NocCopy, NocReduce, Program
from tx8c.sim.cmodel_v2 import Event

LANES = ("ld", "st", "ne", "ct", "tdma", "noc")
"""The engine lanes in the order the threads are listed (cmodel v2's lanes)."""

GROUPS_THREAD = 0


def chrome_trace(program: Program, events: Iterable[Event],
                 entered: dict[tuple[int, int], float], clock_hz: float,
                 groups: Collection[int] | None = None) -> dict:
    """The trace of `events` (of the groups in `groups`, every group when None)."""
    us = 1e6 / clock_hz
    kept = [e for e in events if groups is None or e.group_id in groups]
    out: list[dict] = []
    ends: dict[tuple[int, int], float] = {}
    for e in kept:
        out.append(_slice(_name(program, e.ins), e.start, e.finish, us, e.tile,
                          LANES.index(e.lane) + 1, _args(e)))
        key = (e.group_id, e.tile)
        ends[key] = max(ends.get(key, 0.0), e.finish)
    estimates = {g.group_id: g.estimate_cycles for g in program.groups}
    for (gid, tile), end in ends.items():
        begin = entered[(gid, tile)]
        out.append(_slice(f"group {gid}", begin, end, us, tile, GROUPS_THREAD,
                          {"group": gid, "cycles": round(end - begin),
                           "estimate_cycles_alone": estimates[gid]}))
    return {"traceEvents": _names(sorted({e.tile for e in kept})) + out,
            "displayTimeUnit": "ns",
            "otherData": {"clock_hz": clock_hz, "groups": sorted({e.group_id for e in kept})}}


def _slice(name: str, start: float, finish: float, us: float, pid: int, tid: int,
           args: dict) -> dict:
    return {"name": name, "ph": "X", "ts": round(start * us, 6),
            "dur": round((finish - start) * us, 6),
            "pid": pid, "tid": tid, "args": {"start_cycle": round(start), **args}}


def _names(tiles: list[int]) -> list[dict]:
    """The metadata events naming the processes (tiles) and threads (lanes)."""
    out = []
    for t in tiles:
        out.append({"name": "process_name", "ph": "M", "pid": t, "args": {"name": f"tile {t}"}})
        out.append({"name": "process_sort_index", "ph": "M", "pid": t, "args": {"sort_index": t}})
        for tid, lane in enumerate(("groups",) + LANES):
            out.append({"name": "thread_name", "ph": "M", "pid": t, "tid": tid,
                        "args": {"name": lane}})
    return out


def _name(program: Program, ins) -> str:
    """What the slice is called: the op a kernel runs, the tensor a DMA moves, the tile
    a NoC transfer reads."""
    if isinstance(ins, Dma):
        return f"{'load' if ins.lane == 'ld' else 'store'} {ins.tensor}"
    if isinstance(ins, Kernel):
        return program.ops[ins.op].name
    if isinstance(ins, NocCopy):
        return f"copy from tile {ins.source_tile}"
    assert isinstance(ins, NocReduce)
    return f"{ins.combine} from tile {ins.source_tile}"


def _args(e: Event) -> dict:
    args = {"group": e.group_id, "step": e.ins.step, "instruction": e.index,
            "cycles": round(e.finish - e.start)}
    if isinstance(e.ins, Dma):
        args.update(window=str(e.ins.window), ddr_bytes=e.ddr_bytes, early=e.ins.early)
    elif isinstance(e.ins, NocCopy):
        args["early"] = e.ins.early
    elif isinstance(e.ins, Kernel):
        args.update(loops=list(e.ins.loops.shape), accumulate=e.ins.accumulate)
        if e.ddr_bytes:
            args["ddr_bytes"] = e.ddr_bytes
    return args
