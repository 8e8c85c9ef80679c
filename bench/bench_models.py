"""Import every model and check it against onnxruntime; print one table.

    .venv/bin/python bench/bench_models.py [MODEL.onnx | DIR ...]

With no arguments: the bundled examples (built in memory) and, if it exists, every
`.onnx` in /work/models (made by bench/export_models.py). For each model: ONNX nodes,
tx8be ops after import (and how many are Constants), import seconds, cosine and max abs
error of the reference executor against onnxruntime on random inputs.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import onnx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from examples.make_models import MODELS  # noqa: E402
from tx8c.dialect.base import Tx8beOp  # noqa: E402
from tx8c.frontend.onnx.importer import import_onnx  # noqa: E402
from tx8c.frontend.onnx.loader import prepare  # noqa: E402
from tx8c.frontend.onnx.runtime import random_inputs, run_onnxruntime  # noqa: E402
from tx8c.sim.numerics import compare_arrays  # noqa: E402
from tx8c.sim.reference import run_reference  # noqa: E402

DEFAULT_DIR = Path("/work/models")


def models_to_run(args: list[str]) -> list[tuple[str, onnx.ModelProto | Path]]:
    if not args:
        found = [(name, fn()) for name, fn in MODELS.items()]
        if DEFAULT_DIR.is_dir():
            found += [(p.stem, p) for p in sorted(DEFAULT_DIR.glob("*.onnx"))]
        return found
    found = []
    for arg in args:
        path = Path(arg)
        paths = sorted(path.glob("*.onnx")) if path.is_dir() else [path]
        found += [(p.stem, p) for p in paths]
    return found


def measure(source: onnx.ModelProto | Path) -> dict:
    model, _ = prepare(source, None)
    inputs = random_inputs(model, seed=0)
    expected = run_onnxruntime(model, inputs)
    start = time.perf_counter()
    result = import_onnx(model)
    seconds = time.perf_counter() - start
    got = run_reference(result.module, inputs)
    comparisons = [compare_arrays(e, g) for e, g in zip(expected, got, strict=True)]
    ops = [op for op in result.module.walk() if isinstance(op, Tx8beOp)]
    return {
        "nodes": result.onnx_nodes,
        "ops": len(ops),
        "constants": sum(op.name == "tx8be.Constant" for op in ops),
        "seconds": seconds,
        "cosine": min(c.cosine for c in comparisons),
        "max_err": max(c.max_abs_error for c in comparisons),
    }


def main(argv: list[str]) -> int:
    head = (f"{'model':<22} {'ONNX nodes':>10} {'tx8be ops':>9} {'(consts)':>8} "
            f"{'import s':>9} {'cosine':>12} {'max abs err':>12}")
    print(head)
    print("-" * len(head))
    for name, source in models_to_run(argv):
        r = measure(source)
        print(f"{name:<22} {r['nodes']:>10} {r['ops']:>9} {r['constants']:>8} "
              f"{r['seconds']:>9.3f} {r['cosine']:>12.8f} {r['max_err']:>12.3e}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
