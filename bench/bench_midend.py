"""What the mid-end does to each model: op counts before and after, and its seconds.

    .venv/bin/python bench/bench_midend.py [MODEL.onnx | DIR ...]

With no arguments: the bundled examples and, if present, every model in /work/models
(bench/export_models.py). Each row: tx8be ops before -> after (all ops, BatchNorms, Gemms,
Convs, Constants, Splits made by combine-parallel), mid-end seconds, and the cosine of the
reference executor after the mid-end against onnxruntime.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from xdsl.passes import PassPipeline  # noqa: E402

from bench.bench_models import models_to_run  # noqa: E402
from tx8c.dialect import make_context  # noqa: E402
from tx8c.dialect.base import Tx8beOp  # noqa: E402
from tx8c.frontend.onnx.importer import import_onnx  # noqa: E402
from tx8c.frontend.onnx.loader import prepare  # noqa: E402
from tx8c.frontend.onnx.runtime import random_inputs, run_onnxruntime  # noqa: E402
from tx8c.passes import available_passes  # noqa: E402
from tx8c.pipeline import midend_spec  # noqa: E402
from tx8c.sim.numerics import compare_arrays  # noqa: E402
from tx8c.sim.reference import run_reference  # noqa: E402

KINDS = ("BatchNorm_Inference", "Gemm", "Conv", "Constant", "Split")


def counts(module) -> Counter:
    ops = [op.name.removeprefix("tx8be.") for op in module.walk() if isinstance(op, Tx8beOp)]
    c = Counter(ops)
    c["all"] = len(ops)
    return c


def run_midend(module) -> float:
    passes = PassPipeline.parse_spec(available_passes(), ",".join(midend_spec())).passes
    ctx = make_context()
    start = time.perf_counter()
    for p in passes:
        p.apply(ctx, module)
    return time.perf_counter() - start


def measure(source) -> tuple[Counter, Counter, float, float]:
    model, _ = prepare(source, None)
    inputs = random_inputs(model, seed=0)
    expected = run_onnxruntime(model, inputs)
    module = import_onnx(model).module
    before = counts(module)
    seconds = run_midend(module)
    module.verify()
    got = run_reference(module, inputs)
    cosine = min(compare_arrays(e, g).cosine for e, g in zip(expected, got, strict=True))
    return before, counts(module), seconds, cosine


def main(argv: list[str]) -> int:
    cols = ("all", "BN", "Gemm", "Conv", "Const", "Split")
    head = f"{'model':<20} " + " ".join(f"{c:>11}" for c in cols)
    head += f" {'mid-end s':>9} {'cosine':>11}"
    print(head)
    print("-" * len(head))
    for name, source in models_to_run(argv):
        before, after, seconds, cosine = measure(source)
        cells = [f"{before[k]:>4} -> {after[k]:<3}" for k in ("all", *KINDS)]
        print(f"{name:<20} " + " ".join(cells) + f" {seconds:>9.3f} {cosine:>11.8f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
