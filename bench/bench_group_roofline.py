"""Whole-model estimate against the roofline, group by group: which groups are far from
their own bound, which part of the bound binds, and how far per-group plans can go.

    .venv/bin/python bench/bench_group_roofline.py [--models resnet50,bert_base]
        [--models-dir /work/models] [--examples] [--groups 10]

Each model is run through the stages up to group-cost (as `bench_slicing`). Every group's
own bound (`tx8c.slicing.evaluate.bound_parts`) has three parts: its NE work and its CT
work spread over all tiles, and its compulsory DDR bytes over the bandwidth; the bound is
the largest. Tables:

1. Per model: the estimate (sum of the groups' estimates), the sum of the groups' own
   bounds, the pooled bound (the largest of the three parts summed over all groups: what
   a schedule that overlaps one group's DDR traffic with another group's compute could
   reach) and the roofline (`analysis.roofline`), all over the roofline; the groups within
   5 % / 20 % of their own bound; how many groups each part binds; the search's wall
   seconds and the candidates it evaluated (groups that reuse a template excluded); the
   groups' compulsory DDR bytes split into weights and activations (group inputs loaded,
   outputs stored: what crosses DDR between groups), beside the model's compulsory bytes.
2. Per model, the `--groups` groups farthest from their bound (estimate - bound): the
   anchor, the plan (sharding, split, reduction cut, tiles), the parts and the estimate.

Groups run one after another, so the sum of their own bounds is the floor of any plan
made group by group; estimate / roofline cannot go below (sum of bounds) / roofline.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_grouping import model_sources  # noqa: E402
from bench.bench_slicing import Searched, model_arguments, sliced  # noqa: E402
from tx8c.analysis.roofline import model_roofline  # noqa: E402
from tx8c.pipeline import CompileOptions  # noqa: E402
from tx8c.slicing.evaluate import bound_parts, ddr_side, window_bytes  # noqa: E402
from tx8c.slicing.group import group_spec  # noqa: E402
from tx8c.target.config import DEFAULT_CONFIG  # noqa: E402

PARTS = ("ne", "ct", "ddr")
MB = 1e6


def ddr_traffic(spec) -> tuple[int, int]:
    """The compulsory DDR bytes of a group (its bound's "ddr" part) split into weights
    (constants loaded) and activations (group inputs loaded, outputs stored)."""
    weights = activations = 0
    for n in spec.nodes:
        if n.kind not in ("load", "store"):
            continue
        nbytes = window_bytes(n.results[0].shape, ddr_side(spec, n), DEFAULT_CONFIG)
        if n.kind == "load" and not (n.inputs and n.inputs[0].is_input):
            weights += nbytes
        else:
            activations += nbytes
    return weights, activations


def group_rows(run: Searched) -> list[dict]:
    """Per sliced group: its id, anchor label, plan and bound parts."""
    rows = []
    for group, plan, template in run.plans:
        spec = group_spec(group)
        parts = bound_parts(spec, DEFAULT_CONFIG)
        rows.append({"id": group.attr("group_id"), "anchor": spec.nodes[spec.anchor].label,
                     "plan": plan, "parts": parts, "bound": max(parts.values()),
                     "searched": template < 0, "traffic": ddr_traffic(spec)})
    return rows


def model_table(runs: list[Searched], rows: dict[str, list[dict]]) -> None:
    print("per model, over the roofline: estimate, sum of the groups' own bounds, pooled "
          "bound (largest part summed over groups), each part summed over groups, and the "
          "roofline's compute and memory times")
    head = (f"{'model':<14} {'groups':>6} {'est/roof':>8} {'sum bounds':>10} {'pooled':>7} "
            f"{'ne':>6} {'ct':>6} {'ddr':>6} {'roof cmp':>8} {'roof mem':>8} "
            f"{'est/sum b':>9} {'<=5%':>5} {'<=20%':>6} {'bound by ne/ct/ddr':>18} "
            f"{'search s':>8} {'candidates':>10} {'weights MB':>10} {'acts MB':>8} "
            f"{'compulsory MB':>13}")
    print(head)
    print("-" * len(head))
    for run in runs:
        model = rows[run.name]
        roofline = model_roofline(run.module, DEFAULT_CONFIG)
        roof = roofline.seconds * DEFAULT_CONFIG.clock_hz
        est = sum(r["plan"].cycles for r in model)
        bounds = sum(r["bound"] for r in model)
        sums = {p: sum(r["parts"][p] for r in model) / roof for p in PARTS}
        weights = sum(r["traffic"][0] for r in model)
        acts = sum(r["traffic"][1] for r in model)
        candidates = sum(r["plan"].candidates for r in model if r["searched"])
        near5 = sum(r["plan"].cycles <= 1.05 * r["bound"] for r in model)
        near20 = sum(r["plan"].cycles <= 1.20 * r["bound"] for r in model)
        binds = [sum(max(PARTS, key=lambda p, r=r: r["parts"][p]) == p for r in model)
                 for p in PARTS]
        cmp_, mem = (t / roofline.seconds for t in (roofline.compute_seconds,
                                                     roofline.memory_seconds))
        print(f"{run.name:<14} {len(model):>6} {est / roof:>8.3f} {bounds / roof:>10.3f} "
              f"{max(sums.values()):>7.3f} {sums['ne']:>6.3f} {sums['ct']:>6.3f} "
              f"{sums['ddr']:>6.3f} {cmp_:>8.3f} {mem:>8.3f} {est / bounds:>9.3f} "
              f"{near5:>5} {near20:>6} {'/'.join(map(str, binds)):>18} {run.wall:>8.2f} "
              f"{candidates:>10} {weights / MB:>10.1f} {acts / MB:>8.1f} "
              f"{roofline.ddr_bytes / MB:>13.1f}", flush=True)


def worst_table(runs: list[Searched], rows: dict[str, list[dict]], count: int) -> None:
    for run in runs:
        model = sorted(rows[run.name], key=lambda r: r["bound"] - r["plan"].cycles)
        print(f"\n{run.name}: the {count} groups farthest from their own bound")
        head = (f"{'group':>5} {'anchor':<28} {'sharding':<16} {'split':<16} "
                f"{'reduce':<18} {'tiles':>5} {'ne':>8} {'ct':>8} {'ddr':>8} "
                f"{'estimate':>9} {'est/bound':>9}")
        print(head)
        print("-" * len(head))
        for r in model[:count]:
            plan = r["plan"]
            cand = plan.candidate
            red = "-" if cand.reduce is None else \
                f"{list(cand.reduce.sharding)}x{list(cand.reduce.split)}"
            parts = r["parts"]
            print(f"{r['id']:>5} {r['anchor'][:28]:<28} {str(list(cand.sharding)):<16} "
                  f"{str(list(cand.split)):<16} {red:<18} {plan.tiles:>5} "
                  f"{parts['ne']:>8} {parts['ct']:>8} {parts['ddr']:>8} {plan.cycles:>9} "
                  f"{plan.cycles / max(1, r['bound']):>9.2f}", flush=True)


def main(argv: list[str]) -> int:
    parser = model_arguments(__doc__)
    parser.add_argument("--groups", type=int, default=10,
                        help="how many of the groups farthest from their bound to list")
    args = parser.parse_args(argv)
    options = CompileOptions()
    runs = [sliced(name, source, options)
            for name, source in model_sources(args.models, args.models_dir, args.examples)]
    rows = {run.name: group_rows(run) for run in runs}
    model_table(runs, rows)
    worst_table(runs, rows, args.groups)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
