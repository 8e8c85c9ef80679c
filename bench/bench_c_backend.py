"""The C backend on the bundled examples and the zoo models (issue 12): the emitted C
program's outputs against the cmodel v2's and onnxruntime's, and how long emitting,
building and running it take.

    .venv/bin/python bench/bench_c_backend.py [MODEL.onnx | EXAMPLE ...]

Default: every bundled example, then resnet50, mobilenetv2, vit, bert, gpt2 and llama of
/work/models. For each: the compile time (import -> pipeline -> lowering), the cmodel v2
run (bytes and timing), onnxruntime, and the C program (emit, build with the system C
compiler, run) on the same random inputs (seed 0). "C vs v2": "exact" when every output
is bit for bit the cmodel v2's, else the worst output's cosine; "C vs ORT": the worst
output's cosine. A model that does not compile or run is listed with its error. Prints
a table; asserts nothing.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_cmodel import compile_model  # noqa: E402

ZOO = ("resnet50", "mobilenetv2", "vit", "bert", "gpt2", "llama")


def _cosine(expected, got) -> float:
    from tx8c.cli.tensor_compare import compare_arrays

    return compare_arrays(expected, got).cosine


def _worst_cosine(expected, got) -> float:
    return min(_cosine(e, g) for e, g in zip(expected, got, strict=True))


def _timed(fn, *args):
    start = time.perf_counter()
    result = fn(*args)
    return result, time.perf_counter() - start


def measure(path: str) -> dict:
    import onnx

    from tx8c.codegen.c_backend import build, execute
    from tx8c.codegen.emit_c import emit_c
    from tx8c.frontend.onnx.runtime import run_onnxruntime
    from tx8c.sim.cmodel_v2 import resolve_ops, run_program
    from tx8c.sim.reference import input_names, main_function

    module, program, container, inputs, compile_s = compile_model(path)
    ordered = [inputs[n] for n in input_names(main_function(module))]
    (v2, _), v2_s = _timed(run_program, program, module, ordered, container)
    ort = run_onnxruntime(onnx.load(path), inputs)
    with tempfile.TemporaryDirectory(prefix="tx8c-bench-c-") as work:
        sources, emit_s = _timed(emit_c, program, work, resolve_ops(program, module))
        c_bytes = sum((Path(work) / f).stat().st_size for f in sources.files)
        executable, build_s = _timed(build, sources)
        got, run_s = _timed(execute, program, executable, ordered, container)
    exact = all(g.tobytes() == v.tobytes() for g, v in zip(got, v2, strict=True))
    return {
        "instructions": program.instruction_count(), "c_mb": c_bytes / 1e6,
        "compile_s": compile_s, "v2_s": v2_s, "emit_s": emit_s, "build_s": build_s,
        "run_s": run_s, "vs_v2": "exact" if exact else f"{_worst_cosine(v2, got):.8f}",
        "vs_ort": f"{_worst_cosine(ort, got):.8f}",
    }


def example_paths(names, directory: Path) -> list[str]:
    import onnx

    from examples.make_models import MODELS

    paths = []
    for name in names:
        path = directory / f"{name}.onnx"
        onnx.save(MODELS[name](), path)
        paths.append(str(path))
    return paths


def main() -> None:
    from examples.make_models import MODELS

    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="*", help="ONNX files or bundled example names")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tx8c-bench-examples-") as tmp:
        wanted = args.models or [*sorted(MODELS), *(f"/work/models/{m}.onnx" for m in ZOO)]
        paths = [m if m not in MODELS else example_paths([m], Path(tmp))[0] for m in wanted]
        head = (f"{'model':<20} {'instr':>8} {'C MB':>6} {'compile s':>9} {'v2 s':>7} "
                f"{'emit s':>7} {'build s':>8} {'run s':>7} {'C vs v2':>11} {'C vs ORT':>11}")
        print(head)
        print("-" * len(head))
        for path in paths:
            name = Path(path).stem
            try:
                r = measure(path)
            except Exception as e:  # noqa: BLE001 - a failing model is a row of the table
                traceback.print_exc(file=sys.stderr)
                print(f"{name:<20} FAILED: {type(e).__name__}: {str(e).splitlines()[0][:160]}",
                      flush=True)
                continue
            print(f"{name:<20} {r['instructions']:>8} {r['c_mb']:>6.1f} {r['compile_s']:>9.1f} "
                  f"{r['v2_s']:>7.1f} {r['emit_s']:>7.1f} {r['build_s']:>8.1f} "
                  f"{r['run_s']:>7.1f} {r['vs_v2']:>11} {r['vs_ort']:>11}", flush=True)


if __name__ == "__main__":
    main()
