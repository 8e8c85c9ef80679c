"""Where the pipeline gap of each plan is: the estimate's event run, group by group.

    .venv/bin/python bench/bench_pipeline_gap.py [--models resnet50,bert_base]
        [--models-dir /work/models] [--examples] [--pieces 4] [--groups]

Issue 11's pipeline point asks, on groups with >= 4 time steps, for the estimate to be
within 1.10 of the busiest engine's total (`Plan.engines`; bench_slicing's pipe column).
Each model is sliced as `tx8c compile` slices it (bench_slicing's `sliced`); then every
such group's plan is estimated again with its own spec and its event run traced
(`evaluate.simulate_tile`'s `trace`, every step simulated), and its gap (estimate -
busiest engine) is split into:

- fill: the time before the busiest lane's first instruction (the busiest engine's lane,
  or ld and st for the DDR channel, on the tile class that keeps it busiest);
- mid: the time that lane idles between its first and its last instruction;
- drain: the time after its last instruction, and what runs then on the tile class that
  ends last: per lane (ne: the last compute; noc, ct: what follows it - a reduction over
  tiles, the nodes after a reduction; st: the stores).

A group is classed by its largest part (ok: within 1.10). The projections say how many
groups would be within 1.10 if a lever shortened a part, the busiest engine unchanged
(an upper bound on what the lever can do: it also moves more pieces, whose setups the
projection leaves out), with `--pieces` p:

- chain/p: the drain's last compute, what follows it and its stores cut into p pieces
  that pipeline (an anchor dim cut under the last step: for a reduction cut in time, the
  anchor pieces innermost and the reduction's pieces outside them);
- +setups: chain/p paying the DMA setups of the pieces on the busiest lane, one DMA cut
  into p at every step of a reduction cut in time (the interchanged loop runs p times the
  steps), else at the last step only; kept only where it does not lengthen the estimate
  (the search would keep the plan it has);
- post/p: only what follows the last compute and the stores issued per piece;
- fill/p: the first compute starts after 1/p of the fill (a hoisted weight loaded and
  multicast in pieces, its first compute too);
- drain=0, fill=0: the bounds.

Tables: per model, the gap's parts and the classes' sizes, the projections, and the
cycles +setups takes off the groups' estimates (saved, alone: not chained); with
--groups, every group (its plan, ratio, fill, mid, drain and the drain's lanes).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_grouping import model_sources  # noqa: E402
from bench.bench_slicing import model_arguments, searched_specs, sliced  # noqa: E402
from tx8c.pipeline import CompileOptions  # noqa: E402
from tx8c.slicing.evaluate import (  # noqa: E402
    Evaluator,
    Traced,
    evaluate,
    longest,
    simulate_tile,
)
from tx8c.slicing.plan import Plan  # noqa: E402
from tx8c.target.config import DEFAULT_CONFIG  # noqa: E402

PIPE_LIMIT = 1.10
DRAIN_LANES = ("ne", "noc", "ct", "st")
LEVERS = ("chain/p", "+setups", "post/p", "fill/p", "drain=0", "fill=0")


@dataclass
class Gap:
    """One group's pipeline gap (see the module docstring)."""

    group: int
    label: str
    plan: Plan
    busiest: int
    fill: float
    mid: float
    drain: float
    drain_lanes: dict[str, float]

    @property
    def ratio(self) -> float:
        return self.plan.cycles / self.busiest

    @property
    def kind(self) -> str:
        if self.ratio <= PIPE_LIMIT:
            return "ok"
        parts = {"fill": self.fill, "mid": self.mid, "drain": self.drain}
        return max(parts, key=parts.get)


def union(intervals) -> float:
    """The length of the union of (start, end) intervals."""
    total, reach = 0.0, -float("inf")
    for a, b in sorted(intervals):
        if b > reach:
            total += b - max(a, reach)
            reach = b
    return total


def traced_run(spec, plan: Plan) -> tuple[float, list[Traced]]:
    """The plan's event run with every step simulated, traced (`simulate_tile`)."""
    shared = Evaluator(spec, DEFAULT_CONFIG)
    evaluate(spec, plan.candidate, DEFAULT_CONFIG, shared=shared)
    (ts, schedule), = shared.estimates  # one candidate: one (tasks, schedule)
    trace: list[Traced] = []
    total, _ = simulate_tile(spec, list(ts), schedule, DEFAULT_CONFIG, longest(schedule),
                             trace)
    return total, trace


def gap_of(group: int, spec, plan: Plan) -> Gap:
    """`Gap` of one plan: its busiest lane (on the tile class keeping it busiest), the
    time before, between and after that lane's instructions, and the drain's lanes on
    the class that ends last."""
    top = max(plan.engines, key=lambda e: e.cycles)
    lanes = {"ld", "st"} if top.lane == "ddr" else {top.lane}
    total, trace = traced_run(spec, plan)
    mine: dict[int, list[Traced]] = {}
    for t in trace:
        if t.lane in lanes:
            mine.setdefault(t.tile_class, []).append(t)
    busiest = max(mine.values(), key=lambda ts: union((t.began, t.ended) for t in ts))
    first = min(t.began for t in busiest)
    last = max(t.ended for t in busiest)
    busy = union((t.began, t.ended) for t in busiest)
    ending = max(trace, key=lambda t: t.ended).tile_class
    drain_lanes = {lane: union((max(t.began, last), t.ended) for t in trace
                               if t.tile_class == ending and t.lane == lane and t.ended > last)
                   for lane in DRAIN_LANES}
    return Gap(group, spec.nodes[spec.anchor].label, plan, top.cycles, first,
               last - first - busy, total - last, drain_lanes)


def pipelined(stages: list[float], pieces: int) -> float:
    """Cycles of a chain of stages, each cut into `pieces` that pipeline."""
    stages = [s for s in stages if s > 0]
    return sum(stages) / pieces + max(stages, default=0.0) * (pieces - 1) / pieces


def projections(g: Gap, pieces: int) -> dict[str, tuple[float, float]]:
    """(estimate, busiest engine) of the group under each lever of the module
    docstring."""
    ne, noc, ct, st = (g.drain_lanes[lane] for lane in DRAIN_LANES)
    chain = min(g.drain, ne + noc + ct + st)
    post = min(g.drain, noc + ct + st)
    est, top = g.plan.cycles, g.busiest
    in_time = g.plan.candidate.reduce is not None and math.prod(g.plan.candidate.reduce.split) > 1
    setups = ((pieces - 1) * DEFAULT_CONFIG.dma_setup_cycles
              * (g.plan.steps if in_time else 1))
    paid = est - chain * (1 - 1 / pieces) + setups
    return {
        "chain/p": (est - chain * (1 - 1 / pieces), top),
        "+setups": (paid, top + setups) if paid <= est else (est, top),
        "post/p": (est - post + pipelined([noc, ct, st], pieces), top),
        "fill/p": (est - g.fill * (1 - 1 / pieces), top),
        "drain=0": (est - g.drain, top),
        "fill=0": (est - g.fill, top),
    }


def model_gaps(name: str, source) -> list[Gap]:
    run = sliced(name, source, CompileOptions())
    specs = searched_specs(run.module)
    return [gap_of(group.attr("group_id"), specs[group], plan)
            for group, plan, _ in run.plans if plan.steps >= 4 and plan.engines]


def summary(name: str, gaps: list[Gap], pieces: int) -> None:
    gap = sum(g.plan.cycles - g.busiest for g in gaps) or 1
    parts = {part: sum(getattr(g, part) for g in gaps) / gap for part in ("fill", "mid", "drain")}
    kinds = {kind: sum(g.kind == kind for g in gaps) for kind in ("ok", "fill", "mid", "drain")}
    within = dict.fromkeys(LEVERS, 0)
    saved = 0.0  # cycles "+setups" takes off the groups' estimates
    for g in gaps:
        for lever, (cycles, busiest) in projections(g, pieces).items():
            within[lever] += cycles / busiest <= PIPE_LIMIT
            if lever == "+setups":
                saved += g.plan.cycles - cycles
    print(f"{name:<12} {len(gaps):>6} {kinds['ok']:>7} {gap:>10.0f} "
          f"{parts['fill']:>5.0%} {parts['mid']:>5.0%} {parts['drain']:>6.0%} "
          f"{kinds['fill']:>5} {kinds['mid']:>5} {kinds['drain']:>6}  "
          + " ".join(f"{within[lever]:>7}" for lever in within) + f" {saved:>9.0f}", flush=True)


def group_table(name: str, gaps: list[Gap]) -> None:
    print(f"\n{name}: per group (drain lanes on the tile class that ends last)")
    for g in gaps:
        c = g.plan.candidate
        lanes = " ".join(f"{lane} {g.drain_lanes[lane]:.0f}" for lane in DRAIN_LANES
                         if g.drain_lanes[lane])
        print(f"  g{g.group:<4} {g.label:<14} {g.kind:<5} {g.ratio:6.3f} steps {g.plan.steps:>3} "
              f"fill {g.fill:>7.0f} mid {g.mid:>7.0f} drain {g.drain:>7.0f} ({lanes})  "
              f"{c.sharding} x {c.split} reduce "
              f"{(c.reduce.sharding, c.reduce.split) if c.reduce else '-'}", flush=True)


def summary_table(runs: dict[str, list[Gap]], pieces: int) -> None:
    print(f"groups with >= 4 steps: within {PIPE_LIMIT:.2f} (ok), the gap (estimate - busiest "
          f"engine) summed and its parts, groups by largest part; groups within "
          f"{PIPE_LIMIT:.2f} projected under each lever (p = {pieces})")
    head = (f"{'model':<12} {'groups':>6} {'ok':>7} {'gap':>10} {'fill':>5} {'mid':>5} "
            f"{'drain':>6} {'fill':>5} {'mid':>5} {'drain':>6}  "
            + " ".join(f"{lever:>7}" for lever in LEVERS) + f" {'saved':>9}")
    print(head)
    print("-" * len(head))
    for name, gaps in runs.items():
        summary(name, gaps, pieces)


def arguments(argv: list[str]):
    """The models (`model_arguments`), --pieces and --groups."""
    parser = model_arguments(__doc__)
    parser.add_argument("--pieces", type=int, default=4, help="p of the projections")
    parser.add_argument("--groups", action="store_true", help="also every group")
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = arguments(argv)
    sources = model_sources(args.models, args.models_dir, args.examples)
    runs = {name: model_gaps(name, source) for name, source in sources}
    summary_table(runs, args.pieces)
    if args.groups:
        for name, gaps in runs.items():
            group_table(name, gaps)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
