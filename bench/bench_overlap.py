"""Cross-group overlap (issue 11, branches overlap and chain): cmodel v2's latency with
groups whole, with each group's constant prefix early, and with every leading load
early (values once the stores of their window are done), beside the chained estimate.

    .venv/bin/python bench/bench_overlap.py [MODEL.onnx ...]

For each model (default: resnet50 and bert_base from /work/models), compiled once with
the default options, the Program lowered three ways and simulated (timing only):

- `off`: `lower_module(overlap=False)`, groups whole one after another;
- `constants`: the default lowering with only constant loads early (`mark_early`'s
  `variables=False`: branch overlap's Program);
- `values`: the default lowering (every load leading a tile's ld lane early, a value's
  waiting for the stores of its window: `tx8c.codegen.program` "Cross-group overlap").

Beside them: the estimate (groups alone, and chained: `tx8c.slicing.overlap`), the
roofline bound, est/roofline, sim/roofline and est/sim (chained estimate / `values`).
The timing does not depend on the machine's load. Prints a table; asserts nothing.
"""

from __future__ import annotations

import sys
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import tx8c.codegen.lower as lower  # noqa: E402
from tx8c.analysis.roofline import model_roofline  # noqa: E402
from tx8c.const_container import module_container  # noqa: E402
from tx8c.frontend.onnx.importer import import_onnx  # noqa: E402
from tx8c.frontend.onnx.loader import prepare  # noqa: E402
from tx8c.pipeline import CompileOptions, run_pipeline  # noqa: E402
from tx8c.sim.cmodel_v2 import simulate  # noqa: E402
from tx8c.target.config import target_config  # noqa: E402

MODELS = ("/work/models/resnet50.onnx", "/work/models/bert_base.onnx")


def constants_only(module, container):
    """The default Program with only the constant loads early."""
    marked = lower.mark_early
    with mock.patch.object(lower, "mark_early",
                           lambda *args: marked(*args, variables=False)):
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
    return {"model": Path(path).stem, **sim, "roofline": roof,
            "alone": sum(g.estimate_cycles for g in on.groups),
            "chained": sum(g.chain_cycles or g.estimate_cycles for g in on.groups)}


def main() -> None:
    models = sys.argv[1:] or list(MODELS)
    head = (f"{'model':<12} {'off':>9} {'constants':>9} {'values':>9} {'roofline':>9} "
            f"{'sim/roof':>8} {'est alone':>9} {'chained':>9} {'est/roof':>8} "
            f"{'est/sim':>7}")
    print(head)
    print("-" * len(head))
    for path in models:
        r = row(path)
        on, roof = r["values"], r["roofline"]
        print(f"{r['model']:<12} {r['off']:>9} {r['constants']:>9} {on:>9} {roof:>9.0f} "
              f"{on / roof:>8.3f} {r['alone']:>9} {r['chained']:>9} "
              f"{r['chained'] / roof:>8.3f} {r['chained'] / on:>7.3f}", flush=True)


if __name__ == "__main__":
    main()
