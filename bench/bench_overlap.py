"""Cross-group overlap (issue 11, branches overlap and chain): cmodel v2's latency with
groups whole, with each group's constant prefix early, and with every leading load
early (values once the stores of their window are done), beside the chained estimate.

    .venv/bin/python bench/bench_overlap.py [MODEL.onnx ...]

For each model (default: resnet50 and bert_base from /work/models), compiled once with
the default options, the Program lowered three ways and simulated (timing only):

- `off`: `lower_module(overlap=False)`, groups whole one after another;
- `constants`: only constant loads moved first (every input counted as waiting) and
  early (`mark_early`'s `variables=False`): branch overlap's Program;
- `values`: the default lowering (every load leading a tile's ld lane early, a value's
  waiting for the stores of its window: `tx8c.codegen.program` "Cross-group overlap").

Beside them: the estimate (groups alone, and chained: `tx8c.slicing.overlap`), the
roofline bound, est/roofline, sim/roofline and est/sim (chained estimate / `values`),
and the pipeline columns of `bench_slicing.py` on the groups with >= 4 time steps: `pipe`
(a group's estimate alone / its busiest engine) and `chain` (its share of the chained
estimate / its busiest engine), median, max and the share <= 1.10. The timing does not
depend on the machine's load. Prints two tables; asserts nothing.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import tx8c.codegen.lower as lower  # noqa: E402
from bench.bench_slicing import ratio_stats  # noqa: E402
from tx8c.analysis.roofline import model_roofline  # noqa: E402
from tx8c.const_container import module_container  # noqa: E402
from tx8c.frontend.onnx.importer import import_onnx  # noqa: E402
from tx8c.frontend.onnx.loader import prepare  # noqa: E402
from tx8c.pipeline import CompileOptions, run_pipeline  # noqa: E402
from tx8c.sim.cmodel_v2 import simulate  # noqa: E402
from tx8c.target.config import target_config  # noqa: E402
from tx8c.transforms.slice.group_cost import STATS_ATTR  # noqa: E402

MODELS = ("/work/models/resnet50.onnx", "/work/models/bert_base.onnx")


def constants_only(module, container):
    """The default Program with only the constant loads first and early (branch
    overlap's): every group input counted as waiting for a store, none marked early."""
    marked = lower.mark_early
    with mock.patch.object(lower, "mark_early",
                           lambda *args: marked(*args, variables=False)), \
            mock.patch.object(lower, "waiting_operands", lambda groups: [
                frozenset(range(len(g.operands))) for g in groups]):
        return lower.lower_module(module, container)


def row(path: str) -> dict:
    model, _ = prepare(path, None)
    module = import_onnx(model).module
    run_pipeline(module, CompileOptions())
    container = module_container(module)
    config = target_config(module)
    on = lower.lower_module(module, container)
    programs = {"off": lower.lower_module(module, container, overlap=False),
                "constants": constants_only(module, container), "values": on}
    sim = {name: simulate(p, module).cycles for name, p in programs.items()}
    roof = model_roofline(module, config).seconds * config.clock_hz
    stats = json.loads(module.attributes[STATS_ATTR].data)
    long = [r for r in stats["groups"] if r["steps"] >= 4 and r["engines"]]
    return {"model": Path(path).stem, **sim, "roofline": roof,
            "alone": stats["alone_cycles"], "chained": stats["cycles"],
            "pipe": [r["cycles"] / max(r["engines"].values()) for r in long],
            "chain": [r["chain_cycles"] / max(r["engines"].values()) for r in long]}


def main() -> None:
    models = sys.argv[1:] or list(MODELS)
    head = (f"{'model':<12} {'off':>9} {'constants':>9} {'values':>9} {'roofline':>9} "
            f"{'sim/roof':>8} {'est alone':>9} {'chained':>9} {'est/roof':>8} "
            f"{'est/sim':>7}")
    print(head)
    print("-" * len(head))
    rows = []
    for path in models:
        r = row(path)
        rows.append(r)
        on, roof = r["values"], r["roofline"]
        print(f"{r['model']:<12} {r['off']:>9} {r['constants']:>9} {on:>9} {roof:>9.0f} "
              f"{on / roof:>8.3f} {r['alone']:>9} {r['chained']:>9} "
              f"{r['chained'] / roof:>8.3f} {r['chained'] / on:>7.3f}", flush=True)
    print("\nper group with >= 4 steps: estimate alone (pipe) / chained share (chain) "
          "over the busiest engine")
    head = (f"{'model':<12} {'n':>4} {'pipe med':>8} {'max':>7} {'<=1.10':>7} "
            f"{'chain med':>9} {'max':>7} {'<=1.10':>7}")
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r['model']:<12} {len(r['pipe']):>4} {ratio_stats(r['pipe'], 1.10)} "
              f"  {ratio_stats(r['chain'], 1.10)}")


if __name__ == "__main__":
    main()
