"""Estimate vs cmodel v2 on the zoo models (issue 12), with the DDR allocation quality and
the time it all takes.

    .venv/bin/python bench/bench_cmodel.py [--functional] [MODEL.onnx ...]

For each model (default: every /work/models/*.onnx without "_full"): the whole compile
(import -> pipeline -> DDR -> lowering) time, the DDR variables peak against its max-live
lower bound, the estimate and the simulated latency of the model and the worst groups
(estimate / simulated, in the run and with each group alone on the chip: `serialized`),
and - with --functional - the time of a full cmodel v2 run (bytes and timing) on random
inputs. Prints tables; asserts nothing.

The model's estimate is the chained one (each group's constant prefix hidden in the
previous group's tail: `tx8c.slicing.overlap`), as cmodel v2 runs the Program's early
loads. A group's estimate is the group with the chip to itself (made while its plan is
searched, before its neighbours' plans exist), so `alone<=5%` is the per-group
criterion; `grp<=5%` is the group's span in the run, where the groups of one barrier
epoch share the DDR and their spans overlap (bench/README "Round 4 (branch runcnt)").
"""

from __future__ import annotations

import argparse
import glob
import sys
import time
from pathlib import Path

# This checkout's tx8c, not the one the venv installed: A/B runs from a `git archive`
# tree must measure that tree's code.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def compile_model(path: str):
    from tx8c.codegen.lower import lower_module
    from tx8c.const_container import module_container
    from tx8c.frontend.onnx.importer import import_onnx
    from tx8c.frontend.onnx.loader import prepare
    from tx8c.frontend.onnx.runtime import random_inputs
    from tx8c.pipeline import CompileOptions, run_pipeline

    start = time.perf_counter()
    model, _ = prepare(path, None)
    module = import_onnx(model).module
    run_pipeline(module, CompileOptions())
    container = module_container(module)
    program = lower_module(module, container)
    seconds = time.perf_counter() - start
    return module, program, container, random_inputs(model, seed=0), seconds


def row(path: str, functional: bool) -> tuple[dict, list[dict]]:
    from tx8c.analysis.ddr_tensors import read_placement
    from tx8c.sim.cmodel_v2 import run_program, simulate
    from tx8c.sim.reference import input_names, main_function

    module, program, container, inputs, compile_s = compile_model(path)
    placement = read_placement(module)
    start = time.perf_counter()
    timing = simulate(program, module)
    sim_s = time.perf_counter() - start
    alone = simulate(serialized(program), module).group_cycles
    run_s = None
    if functional:
        ordered = [inputs[n] for n in input_names(main_function(module))]
        start = time.perf_counter()
        run_program(program, module, ordered, container)
        run_s = time.perf_counter() - start
    estimate = timing.estimate  # the chained estimate (tx8c.slicing.overlap)
    piped, deep = pipeline_quality(module)
    kinds: dict[int, list[str]] = {}
    for info in program.ops:
        kinds.setdefault(info.group_id, []).append(info.name.split(".")[-1])
    groups = [{"group": g, "estimate": timing.group_estimates[g], "simulated": c,
               "ratio": timing.group_estimates[g] / c if c else 0.0,
               "alone": alone[g], "alone_ratio": timing.group_estimates[g] / alone[g]
               if alone[g] else 0.0, "ops": "+".join(kinds.get(g, []))}
              for g, c in timing.group_cycles.items()]
    within = sum(1 for g in groups if abs(g["ratio"] - 1) <= 0.05)
    within_alone = sum(1 for g in groups if abs(g["alone_ratio"] - 1) <= 0.05)
    return {
        "model": Path(path).stem, "compile_s": compile_s, "instructions": timing.instructions,
        "estimate": estimate, "simulated": timing.cycles,
        "ratio": estimate / timing.cycles if timing.cycles else 0.0,
        "groups": len(groups), "groups_within_5pct": within,
        "groups_alone_within_5pct": within_alone,
        "ddr_peak": placement.peak, "ddr_bound": placement.lower_bound,
        "timing_s": sim_s, "run_s": run_s, "pipelined": piped, "long": deep,
    }, (sorted(groups, key=lambda g: -abs(g["ratio"] - 1))[:3],
        sorted(groups, key=lambda g: -abs(g["alone_ratio"] - 1))[:3])


def serialized(program):
    """`program` with a barrier after every group and no early instruction: each group
    runs whole with the chip to itself, as its estimate assumes (in the Program groups
    of one barrier epoch run at once on their tiles and share the DDR bandwidth, which
    a group's estimate, made before the neighbours' plans exist, does not see, and a
    group's constant prefix loads during the previous group's tail)."""
    from dataclasses import replace

    from tx8c.codegen.program import Dma, NocCopy

    def whole(tile):
        return replace(tile, instructions=tuple(
            replace(i, early=False) if isinstance(i, Dma | NocCopy) and i.early else i
            for i in tile.instructions))

    return replace(program, groups=tuple(
        replace(g, barrier=True, tiles=tuple(whole(t) for t in g.tiles))
        for g in program.groups))


def pipeline_quality(module) -> tuple[int, int]:
    """(groups with >= 4 time steps whose estimate is within 1.10 x their busiest engine's
    total cycles, groups with >= 4 time steps) - issue 11's pipeline criterion."""
    from tx8c.analysis.ddr_tensors import main_body
    from tx8c.codegen.lower import group_plan
    from tx8c.dialect.ops.backend import GroupOp

    plans = [group_plan(g) for g in main_body(module).ops
             if isinstance(g, GroupOp) and g.attr("group_tag") == 0]
    long = [p for p in plans if p.steps >= 4 and p.engines]
    good = sum(p.cycles <= 1.10 * max(e.cycles for e in p.engines) for p in long)
    return good, len(long)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("models", nargs="*")
    parser.add_argument("--functional", action="store_true",
                        help="also time a full cmodel v2 run (bytes + timing)")
    parser.add_argument("--worst", type=int, default=12,
                        help="how many of the worst groups (3 per model at most) to list")
    args = parser.parse_args()
    models = args.models or sorted(p for p in glob.glob("/work/models/*.onnx")
                                   if "_full" not in p)
    head = (f"{'model':<16} {'compile s':>9} {'instr':>7} {'estimate':>10} {'simulated':>10} "
            f"{'est/sim':>7} {'grp<=5%':>8} {'alone<=5%':>9} {'DDR peak/bound':>14} "
            f"{'timing s':>8} "
            f"{'run s':>7} {'pipe<=1.1':>9}")
    print(head)
    print("-" * len(head))
    worst, worst_alone = [], []
    for path in models:
        try:
            r, (bad, bad_alone) = row(path, args.functional)
        except Exception as e:  # a model the pipeline cannot take yet: say so, go on
            print(f"{Path(path).stem:<16} failed: {type(e).__name__}: {str(e)[:120]}")
            continue
        ddr = r["ddr_peak"] / r["ddr_bound"] if r["ddr_bound"] else 1.0
        run = f"{r['run_s']:7.1f}" if r["run_s"] is not None else f"{'-':>7}"
        print(f"{r['model']:<16} {r['compile_s']:9.1f} {r['instructions']:7d} "
              f"{r['estimate']:10d} {r['simulated']:10d} {r['ratio']:7.3f} "
              f"{r['groups_within_5pct']:>3d}/{r['groups']:<4d} "
              f"{r['groups_alone_within_5pct']:>4d}/{r['groups']:<4d} {ddr:14.3f} "
              f"{r['timing_s']:8.1f} {run} {r['pipelined']:>4d}/{r['long']:<4d}", flush=True)
        worst += [(r["model"], g) for g in bad]
        worst_alone += [(r["model"], g) for g in bad_alone]
    print("\nworst groups (estimate / simulated in the run):")
    for model, g in sorted(worst, key=lambda x: -abs(x[1]["ratio"] - 1))[:args.worst]:
        print(f"  {model:<16} group {g['group']:>4}: estimate {g['estimate']:>9} simulated "
              f"{g['simulated']:>9} ratio {g['ratio']:.3f} (alone {g['alone_ratio']:.3f})"
              f"  {g['ops'][:60]}")
    print("\nworst groups (estimate / simulated with the chip to itself):")
    for model, g in sorted(worst_alone,
                           key=lambda x: -abs(x[1]["alone_ratio"] - 1))[:args.worst]:
        print(f"  {model:<16} group {g['group']:>4}: estimate {g['estimate']:>9} alone "
              f"{g['alone']:>9} ratio {g['alone_ratio']:.3f}  {g['ops'][:60]}")


if __name__ == "__main__":
    main()
