"""The slicing search (group-cost) on real models: plan quality beside its bounds, and time.

    .venv/bin/python bench/bench_slicing.py [--models resnet50,bert_base]
        [--models-dir /work/models] [--examples] [--exhaustive-limit 20000]
        [--no-quality] [--spm-resident BYTES]

Each model is imported and run through the mid-end, layout, constants and grouping
stages; then the slicing stage as `tx8c compile` runs it (spm-resident at the default
budget, or --spm-resident BYTES, 0 for off; then group-cost), timed, wall and CPU.
Tables:

1. Per model: groups, groups searched (the rest reuse a template), search seconds, the
   estimated latency (the model's estimate: chained, each group's constant prefix
   hidden in the previous group's tail, `tx8c.slicing.overlap`; and `alone us`, the sum
   of the groups' estimates alone), the sum of the groups' bounds, the roofline bound of
   the model (`analysis.roofline`) and estimate / roofline (chained, and alone).
2. Per model, bounds per group: SPM peak / its lower bound (the larger of max-live and
   the heaviest clique of conflicting buffers, `analysis.interval_alloc`; median, max, share of
   groups <= 1.02); on groups with >= 4 time steps, estimate / the busiest engine's total
   (median, max, share <= 1.10).
3. Search quality (unless --no-quality): every searched group whose exhaustive space has
   at most --exhaustive-limit candidates is searched exhaustively too; default estimate /
   exhaustive best (median, max, share <= 1.03) and the worst groups.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_grouping import model_sources, run_passes  # noqa: E402
from tx8c.analysis.roofline import model_roofline  # noqa: E402
from tx8c.frontend.onnx.importer import import_onnx  # noqa: E402
from tx8c.pipeline import (  # noqa: E402
    CompileOptions,
    constants_spec,
    grouping_spec,
    layout_spec,
    midend_spec,
    slicing_spec,
)
from tx8c.slicing.plan import Plan  # noqa: E402
from tx8c.slicing.search import SearchOptions, exhaustive_candidates, search  # noqa: E402
from tx8c.target.config import DEFAULT_CONFIG  # noqa: E402
from tx8c.transforms.slice.group_cost import (  # noqa: E402
    PLAN_ATTR,
    STATS_ATTR,
    GroupCostPass,
    groups_to_slice,
)

US = 1e6


@dataclass
class Searched:
    """A model after group-cost: the module, the search's seconds, and every sliced
    group with its plan and template id (read from the IR once)."""

    name: str
    module: object
    wall: float
    cpu: float
    plans: list[tuple[object, Plan, int]]
    shares: dict[int, int]
    """Per group id, its share of the model's chained estimate (group-cost's stats)."""
    estimate: int
    """The model's estimate (group-cost's stats: chained)."""


def grouped(source):
    module = import_onnx(source).module
    run_passes(module, midend_spec() + layout_spec("optimal") + constants_spec()
               + grouping_spec(CompileOptions()))
    return module


def sliced(name: str, source, options: CompileOptions) -> Searched:
    module = grouped(source)
    timing = run_passes(module, slicing_spec(options))
    stats = json.loads(module.attributes[STATS_ATTR].data)
    return Searched(name, module, timing.wall, timing.cpu, plans(module),
                    {r["group"]: r["chain_cycles"] for r in stats["groups"]}, stats["cycles"])


def plans(module) -> list[tuple[object, Plan, int]]:
    return [(g, Plan.from_dict(json.loads(g.attributes[PLAN_ATTR].data)),
             g.attr("template_id")) for g in groups_to_slice(module)]


def seconds(cycles: int) -> float:
    return cycles / DEFAULT_CONFIG.clock_hz


def ratio_stats(values: list[float], limit: float) -> str:
    if not values:
        return f"{'-':>7} {'-':>7} {'-':>7}"
    share = sum(v <= limit for v in values) / len(values)
    return f"{statistics.median(values):>7.3f} {max(values):>7.3f} {share:>7.0%}"


def model_table(runs: list[Searched]) -> None:
    print("group-cost per model (estimate: chained; alone: the sum of the groups' estimates)")
    head = (f"{'model':<18} {'groups':>6} {'searched':>8} {'wall s':>7} {'cpu s':>6} "
            f"{'est us':>9} {'alone us':>9} {'groups bound us':>15} {'roofline us':>11} "
            f"{'est/roof':>8} {'alone/roof':>10}")
    print(head)
    print("-" * len(head))
    for run in runs:
        rows = run.plans
        alone = sum(p.cycles for _, p, _ in rows)
        est = run.estimate
        bound = sum(p.bound_cycles for _, p, _ in rows)
        roof = model_roofline(run.module, DEFAULT_CONFIG).seconds
        searched = sum(1 for *_, t in rows if t < 0)
        print(f"{run.name:<18} {len(rows):>6} {searched:>8} {run.wall:>7.2f} {run.cpu:>6.2f} "
              f"{seconds(est) * US:>9.1f} {seconds(alone) * US:>9.1f} "
              f"{seconds(bound) * US:>15.1f} {roof * US:>11.1f} "
              f"{seconds(est) / roof:>8.2f} {seconds(alone) / roof:>10.2f}", flush=True)


def bounds_table(runs: list[Searched]) -> None:
    print("\nper group: SPM peak / lower bound; estimate / busiest engine or DDR channel "
          "(groups with >= 4 steps)")
    head = (f"{'model':<18} {'spm med':>7} {'max':>7} {'<=1.02':>7} "
            f"{'pipe n':>6} {'pipe med':>8} {'max':>7} {'<=1.10':>7} "
            f"{'chain med':>9} {'max':>7} {'<=1.10':>7}")
    print(head)
    print("-" * len(head))
    for run in runs:
        rows = run.plans
        spm = [p.spm_peak / p.spm_lower_bound for _, p, _ in rows if p.spm_lower_bound]
        long = [(g, p) for g, p, _ in rows if p.steps >= 4 and p.engines]
        pipe = [p.cycles / max(e.cycles for e in p.engines) for _, p in long]
        chain = [run.shares[g.attr("group_id")] / max(e.cycles for e in p.engines)
                 for g, p in long]
        print(f"{run.name:<18} {ratio_stats(spm, 1.02)} {len(pipe):>6} "
              f"{ratio_stats(pipe, 1.10)}  {ratio_stats(chain, 1.10)}", flush=True)


def space_size(spec, limit: int) -> int:
    options = SearchOptions(mode="exhaustive")
    return sum(1 for _ in islice(exhaustive_candidates(spec, DEFAULT_CONFIG, options),
                                 limit + 1))


def searched_specs(module) -> dict:
    """Per sliced group, the spec group-cost searched (its `ready_inputs` set as with
    cross-group overlap, the default): the exhaustive search must estimate the same
    spec as the plan it certifies (the plain `group_spec` loads no input first, so a
    plan estimated with ready inputs first was compared against another estimate)."""
    return dict(GroupCostPass().group_specs(module)[0])


def quality_table(runs: list[Searched], limit: int) -> None:
    print(f"\nsearch quality: default / exhaustive best, on groups with <= {limit} candidates")
    head = (f"{'model':<18} {'groups':>6} {'certified':>9} {'median':>7} {'max':>7} "
            f"{'<=1.03':>7} {'exh. s':>7}  worst")
    print(head)
    print("-" * len(head))
    for run in runs:
        ratios, worst, spent = [], [], 0.0
        searched = [(g, p) for g, p, t in run.plans if t < 0]
        specs = searched_specs(run.module)
        for group, plan in searched:
            spec = specs[group]
            if not spec.sliceable or space_size(spec, limit) > limit:
                continue
            start = time.perf_counter()
            best = search(spec, DEFAULT_CONFIG,
                          SearchOptions(mode="exhaustive", max_candidates=limit))
            spent += time.perf_counter() - start
            r = plan.cycles / best.cycles
            ratios.append(r)
            worst.append((r, group.attr("group_id"), spec.nodes[spec.anchor].label))
        worst.sort(reverse=True)
        listed = ", ".join(f"g{g} {label} {r:.3f}" for r, g, label in worst[:3] if r > 1.0)
        print(f"{run.name:<18} {len(searched):>6} {len(ratios):>9} "
              f"{ratio_stats(ratios, 1.03)} {spent:>7.1f}  {listed or '-'}", flush=True)


def model_arguments(doc: str) -> argparse.ArgumentParser:
    """A parser with the models to slice: --models, --models-dir, --examples."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--models", default="resnet50,bert_base",
                        help="exported models (empty: none)")
    parser.add_argument("--models-dir", default="/work/models", type=Path)
    parser.add_argument("--examples", action="store_true",
                        help="also the bundled example models")
    return parser


def main(argv: list[str]) -> int:
    parser = model_arguments(__doc__)
    parser.add_argument("--exhaustive-limit", type=int, default=20000)
    parser.add_argument("--no-quality", action="store_true",
                        help="skip the exhaustive comparison")
    parser.add_argument("--spm-resident", type=int, default=None, metavar="BYTES",
                        help="spm-resident's budget per tile (default: the compile's; "
                             "0: off)")
    args = parser.parse_args(argv)
    sources = model_sources(args.models, args.models_dir, args.examples)
    options = CompileOptions(spm_resident=args.spm_resident)
    runs = [sliced(name, source, options) for name, source in sources]
    model_table(runs)
    bounds_table(runs)
    if not args.no_quality:
        quality_table(runs, args.exhaustive_limit)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
