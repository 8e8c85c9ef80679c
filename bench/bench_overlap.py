"""Cross-group overlap (issue 11, branch overlap): cmodel v2's latency with and without
each group's constant prefix loading during the previous group's tail.

    .venv/bin/python bench/bench_overlap.py [MODEL.onnx ...]

For each model (default: resnet50 and bert_base from /work/models), compiled once with
the default options, the Program lowered four ways and simulated (timing only):

- `off`: `lower_module(overlap=False)`, groups whole one after another;
- `early`: constant prefixes early, every group's buffers as planned (the lowering's
  `mirrored_plan` replaced by "never": what early loads give with the current addresses);
- `early+mirror`: the default lowering (buffers mirrored where that keeps them apart);
- `mirror only`: the default lowering with the early marks cleared (the reordered lists
  and mirrored addresses alone).

Beside them: the estimate (groups alone, and chained: `tx8c.slicing.overlap`), the
roofline bound, and est/roofline and sim/roofline. Prints a table; asserts nothing.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import tx8c.codegen.lower as lower  # noqa: E402
from tx8c.analysis.roofline import model_roofline  # noqa: E402
from tx8c.codegen.program import Dma, NocCopy  # noqa: E402
from tx8c.const_container import module_container  # noqa: E402
from tx8c.frontend.onnx.importer import import_onnx  # noqa: E402
from tx8c.frontend.onnx.loader import prepare  # noqa: E402
from tx8c.pipeline import CompileOptions, run_pipeline  # noqa: E402
from tx8c.sim.cmodel_v2 import simulate  # noqa: E402
from tx8c.target.config import target_config  # noqa: E402

MODELS = ("/work/models/resnet50.onnx", "/work/models/bert_base.onnx")


def without_early(program):
    """`program` with no instruction marked early."""
    def whole(tile):
        return replace(tile, instructions=tuple(
            replace(i, early=False) if isinstance(i, Dma | NocCopy) and i.early else i
            for i in tile.instructions))

    return replace(program, groups=tuple(
        replace(g, tiles=tuple(whole(t) for t in g.tiles)) for g in program.groups))


def row(path: str) -> dict:
    model, _ = prepare(path, None)
    module = import_onnx(model).module
    run_pipeline(module, CompileOptions())
    container = module_container(module)
    config = target_config(module)
    on = lower.lower_module(module, container, overlap=True)
    with mock.patch.object(lower, "mirrored_plan", lambda *args: None):
        unmirrored = lower.lower_module(module, container, overlap=True)
    programs = {"off": lower.lower_module(module, container, overlap=False),
                "early": unmirrored, "early+mirror": on, "mirror only": without_early(on)}
    sim = {name: simulate(p, module).cycles for name, p in programs.items()}
    roof = model_roofline(module, config).seconds * config.clock_hz
    return {"model": Path(path).stem, **sim, "roofline": roof,
            "alone": sum(g.estimate_cycles for g in on.groups),
            "chained": sum(g.chain_cycles or g.estimate_cycles for g in on.groups)}


def main() -> None:
    models = sys.argv[1:] or list(MODELS)
    head = (f"{'model':<12} {'off':>9} {'early':>9} {'early+mirror':>12} {'mirror only':>11} "
            f"{'roofline':>9} {'sim/roof off':>12} {'on':>6} {'est alone':>9} "
            f"{'chained':>9} {'est/roof':>8} {'est/sim':>7}")
    print(head)
    print("-" * len(head))
    for path in models:
        r = row(path)
        on, roof = r["early+mirror"], r["roofline"]
        print(f"{r['model']:<12} {r['off']:>9} {r['early']:>9} {on:>12} "
              f"{r['mirror only']:>11} {roof:>9.0f} {r['off'] / roof:>12.3f} "
              f"{on / roof:>6.3f} {r['alone']:>9} {r['chained']:>9} "
              f"{r['chained'] / roof:>8.3f} {r['chained'] / on:>7.3f}", flush=True)


if __name__ == "__main__":
    main()
