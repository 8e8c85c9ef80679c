"""The grouping stage: what it groups on real models and how fast it is.

    .venv/bin/python bench/bench_grouping.py [--sizes 1000,10000,100000]
        [--models resnet50,bert_base] [--models-dir /work/models] [--examples] [--runs N]

1. Models (bundled examples with --examples, and the named exports in --models-dir;
   bench/export_models.py makes them), after import, the mid-end, the layout and the
   constants stage, grouped with opt-group=none (every op its own group) and with the
   default patterns: groups, bytes crossing group boundaries (the DDR traffic between
   groups: `tx8c.analysis.group_stats`), their ratio, barriers kept by group-dag, and
   the wall and CPU seconds of the grouping passes.
2. Synthetic graphs of about 1k, 10k and 100k ops (bench_layout's residual conv blocks
   with a Tensor-class branch, through the layout and constants stages first): seconds
   of the grouping stage (default patterns), wall and CPU, per compute op, and the
   growth of the CPU time per 10x ops (1.00x = linear). With --runs N the stage runs on N
   copies of each graph; the median run is shown, and beside it the fastest CPU time (on
   a loaded machine the minimum is the figure least disturbed by other processes).

The garbage collector is paused while passes run, as `tx8c compile` does
(`pipeline.gc_paused`). Verification after each pass is not counted.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from xdsl.dialects.builtin import ModuleOp  # noqa: E402
from xdsl.passes import PassPipeline  # noqa: E402

from bench.bench_layout import SyntheticGraph  # noqa: E402
from tx8c.analysis.group_stats import group_report  # noqa: E402
from tx8c.dialect import make_context  # noqa: E402
from tx8c.frontend.onnx.importer import import_onnx  # noqa: E402
from tx8c.ir import parse_module, print_module  # noqa: E402
from tx8c.ir_utils import is_compute_op  # noqa: E402
from tx8c.passes import available_passes  # noqa: E402
from tx8c.pipeline import (  # noqa: E402
    CompileOptions,
    constants_spec,
    gc_paused,
    grouping_spec,
    layout_spec,
    midend_spec,
)

MB = 1e6


@dataclass
class Timing:
    wall: float
    cpu: float
    """Seconds of CPU the process and the children it waited for (the search's forked
    workers) used: on a shared machine the wall time also counts the time other
    processes held the cores."""


def cpu_seconds() -> float:
    """CPU seconds of this process and of its children that have ended."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def run_passes(module: ModuleOp, spec: list[str]) -> Timing:
    """Wall and CPU seconds of the passes of `spec` on `module`; verified afterwards."""
    passes = PassPipeline.parse_spec(available_passes(), ",".join(spec)).passes
    ctx = make_context()
    with gc_paused():
        wall, cpu = time.perf_counter(), cpu_seconds()
        for p in passes:
            p.apply(ctx, module)
        timing = Timing(time.perf_counter() - wall, cpu_seconds() - cpu)
    module.verify()
    return timing


def grouping_stage(mode: str) -> list[str]:
    return grouping_spec(CompileOptions(opt_group=mode))


# --------------------------------------------------------------------------------------
# models
# --------------------------------------------------------------------------------------


def laid_out(source) -> str:
    module = import_onnx(source).module
    run_passes(module, midend_spec() + layout_spec("optimal") + constants_spec())
    return print_module(module)


def bench_models(sources: list[tuple[str, object]]) -> None:
    print("groups and DDR bytes between groups: opt-group=none vs the default patterns")
    head = (f"{'model':<20} {'ops':>6} {'groups none':>11} {'MB none':>9} "
            f"{'groups default':>14} {'MB default':>10} {'ratio':>6} {'barriers':>8} "
            f"{'seconds':>8} {'cpu s':>6}")
    print(head)
    print("-" * len(head))
    for name, source in sources:
        text = laid_out(source)
        row = {}
        for mode in ("none", "default"):
            module = parse_module(text)
            timing = run_passes(module, grouping_stage(mode))
            row[mode] = (group_report(module), timing)
        none, default = row["none"][0], row["default"][0]
        print(f"{name:<20} {none['ops']:>6} {none['count']:>11} "
              f"{none['boundary_bytes'] / MB:>9.2f} {default['count']:>14} "
              f"{default['boundary_bytes'] / MB:>10.2f} "
              f"{default['boundary_bytes'] / none['boundary_bytes']:>6.3f} "
              f"{default['barriers']:>8} {row['default'][1].wall:>8.3f} "
              f"{row['default'][1].cpu:>6.3f}", flush=True)


# --------------------------------------------------------------------------------------
# synthetic graphs
# --------------------------------------------------------------------------------------


def bench_synthetic(sizes: list[int], runs: int = 1) -> None:
    print("\ngrouping stage (default patterns) on synthetic graphs (after layout, constants)")
    head = (f"{'ops':>8} {'groups':>7} {'wall s':>8} {'cpu s':>8} {'min cpu s':>9} "
            f"{'cpu us/op':>9} {'cpu growth per 10x':>18}")
    print(head)
    print("-" * len(head))
    previous = None
    for n in sizes:
        module = SyntheticGraph().build(n)
        run_passes(module, layout_spec("optimal") + constants_spec())
        ops = sum(is_compute_op(op) for op in module.ops.first.body.block.ops)
        copies = [module.clone() for _ in range(runs - 1)] + [module]
        timings = sorted((run_passes(copy, grouping_stage("default")) for copy in copies),
                         key=lambda t: t.cpu)
        timing = timings[len(timings) // 2]  # the median run (the upper one of an even count)
        groups = len(module.ops.first.body.block.ops) - 1
        growth = ""
        if previous is not None and ops > previous[0]:
            factor = (timing.cpu / previous[1]) / (ops / previous[0])
            growth = f"{factor:.2f}x linear"
        print(f"{ops:>8} {groups:>7} {timing.wall:>8.3f} {timing.cpu:>8.3f} "
              f"{timings[0].cpu:>9.3f} {timing.cpu / ops * 1e6:>9.1f} {growth:>18}",
              flush=True)
        previous = (ops, timing.cpu)


def model_sources(models: str, models_dir: Path, examples: bool) -> list[tuple[str, object]]:
    """(name, ONNX model or path): the bundled examples when `examples`, then each of the
    comma-separated exported `models` found in `models_dir` (a line for each missing)."""
    sources: list[tuple[str, object]] = []
    if examples:
        from examples.make_models import MODELS

        sources += [(name, fn()) for name, fn in MODELS.items()]
    for name in filter(None, models.split(",")):
        path = models_dir / f"{name}.onnx"
        if path.is_file():
            sources.append((name, path))
        else:
            print(f"(no {path}: run bench/export_models.py for the {name} row)")
    return sources


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000",
                        help="synthetic graph sizes (empty: none)")
    parser.add_argument("--models", default="resnet50,bert_base",
                        help="exported models to group (empty: none)")
    parser.add_argument("--models-dir", default="/work/models", type=Path)
    parser.add_argument("--examples", action="store_true",
                        help="also the bundled example models")
    parser.add_argument("--runs", type=int, default=1,
                        help="grouping runs per synthetic graph; the median run is shown "
                             "(and the fastest CPU time)")
    args = parser.parse_args(argv)
    sources = model_sources(args.models, args.models_dir, args.examples)
    if sources:
        bench_models(sources)
    if args.sizes:
        bench_synthetic([int(s) for s in args.sizes.split(",")], max(1, args.runs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
