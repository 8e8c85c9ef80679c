"""regroup-by-cost vs the pattern grouping on real models: estimated latency, estimate /
roofline, DDR bytes of the plans, and the compile time the pass adds.

    .venv/bin/python bench/bench_regroup.py [--models resnet50,mobilenetv2,bert_base,vit_full]
        [--models-dir /work/models] [--windows 2,4]

Each model is imported and run through the mid-end, layout, constants and grouping
stages (the default patterns), then sliced two ways, each from an empty search memo
(`tx8c.slicing.search` remembers searches per group key for the process; it is cleared
so the second way does not reuse the first's searches):

- pattern: group-cost alone;
- regroup W: regroup-by-cost{window=W} then group-cost.

Columns: groups sliced, estimated latency (sum of the groups' estimates), estimate /
roofline bound of the model (`analysis.roofline`), the DDR bytes the plans move (loads
and stores of every tile, weights included) beside the compulsory bytes of the roofline
(every input, weight and output once), and CPU seconds: group-cost, regroup-by-cost, and
the time added (regroup + group-cost after it - group-cost alone).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_grouping import model_sources  # noqa: E402
from bench.bench_slicing import grouped, plans, seconds  # noqa: E402
from tx8c.analysis.roofline import model_roofline  # noqa: E402
from tx8c.dialect import make_context  # noqa: E402
from tx8c.pipeline import gc_paused  # noqa: E402
from tx8c.slicing import search as search_module  # noqa: E402
from tx8c.target.config import DEFAULT_CONFIG  # noqa: E402
from tx8c.transforms.group.regroup_by_cost import RegroupByCostPass  # noqa: E402
from tx8c.transforms.slice.group_cost import GroupCostPass  # noqa: E402

US = 1e6
MB = 1e6


def cpu(fn) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def sliced(source, window: int) -> dict:
    """One way of slicing a model (window 0: the pattern grouping as it is)."""
    module = grouped(source)
    search_module._searched.cache_clear()
    ctx = make_context()
    with gc_paused():
        regroup_s = 0.0
        if window > 1:
            regroup_s = cpu(lambda: RegroupByCostPass(window=window).apply(ctx, module))
        cost_s = cpu(lambda: GroupCostPass().apply(ctx, module))
    rows = plans(module)
    roofline = model_roofline(module, DEFAULT_CONFIG)
    est = seconds(sum(p.cycles for _, p, _ in rows))
    return {
        "groups": len(rows),
        "est_us": est * US,
        "ratio": est / roofline.seconds,
        "ddr_mb": sum(p.ddr_bytes for _, p, _ in rows) / MB,
        "compulsory_mb": roofline.ddr_bytes / MB,
        "cost_s": cost_s,
        "regroup_s": regroup_s,
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="resnet50,mobilenetv2,bert_base,vit_full")
    parser.add_argument("--models-dir", default="/work/models", type=Path)
    parser.add_argument("--windows", default="2,4",
                        help="comma-separated regroup windows to compare with the patterns")
    args = parser.parse_args(argv)
    windows = [int(w) for w in args.windows.split(",") if w]
    head = (f"{'model':<12} {'grouping':<10} {'groups':>6} {'est us':>9} {'est/roof':>8} "
            f"{'plan DDR MB':>11} {'compulsory MB':>13} {'group-cost s':>12} "
            f"{'regroup s':>9} {'added s':>7}")
    print("regroup-by-cost vs the pattern grouping (CPU seconds; estimate = sum of groups)")
    print(head)
    print("-" * len(head))
    for name, source in model_sources(args.models, args.models_dir, False):
        base = sliced(source, 0)
        ways = [("pattern", base)] + [(f"regroup {w}", sliced(source, w))
                                      for w in windows]
        for label, r in ways:
            added = r["regroup_s"] + r["cost_s"] - base["cost_s"]
            print(f"{name:<12} {label:<10} {r['groups']:>6} {r['est_us']:>9.1f} "
                  f"{r['ratio']:>8.2f} {r['ddr_mb']:>11.1f} {r['compulsory_mb']:>13.1f} "
                  f"{r['cost_s']:>12.2f} {r['regroup_s']:>9.2f} "
                  f"{'' if label == 'pattern' else f'{added:.2f}':>7}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
