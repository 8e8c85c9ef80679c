"""The compile output with weights as binary: size, compile time, run load time and memory.

    .venv/bin/python bench/bench_constants.py [-n RUNS] [--baseline DIR] [MODEL.onnx ...]

For each model (default: the bundled examples, then resnet50, vit_full, bert_base and
gpt2_base from /work/models when present) it runs, as separate processes under
`/usr/bin/time -f "%e %M"` (wall seconds, peak resident KiB), RUNS times each (median
reported):

- `tx8c compile MODEL -o OUT/`: wall time and peak memory; the size of OUT/ (every file)
  against the bytes of the model's weights (its ONNX initializers and Constant-node
  tensors, as stored in the .onnx file);
- `tx8c run OUT/ --inputs in.npz -o out.npz` on random inputs: the load time (run's
  "running the reference executor" progress line: model.mlir parsed, consts.bin checked
  and the inputs read, counted from the command's start), the whole run's wall time and
  peak memory against the weight bytes.

`--baseline DIR` measures the same commands with the tx8c checkout in DIR first on
PYTHONPATH (e.g. `git archive <commit> | tar -x -C DIR` of an earlier commit), for a
before/after table on the same machine and load. This machine may be shared: quote
medians, and compare columns measured in one invocation.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from examples.make_models import MODELS  # noqa: E402
from tx8c.frontend.onnx.loader import prepare  # noqa: E402
from tx8c.frontend.onnx.runtime import random_inputs  # noqa: E402

REAL_MODELS = ("resnet50", "vit_full", "bert_base", "gpt2_base")
MODEL_DIR = Path("/work/models")
TIME = "/usr/bin/time"
MiB = 1024 * 1024


def weight_bytes(model: onnx.ModelProto) -> int:
    """Bytes of the weights as the ONNX file stores them: initializers and the tensors of
    Constant nodes (raw data, or the typed fields for small ones)."""
    def tensor_bytes(t: onnx.TensorProto) -> int:
        itemsize = onnx.helper.tensor_dtype_to_np_dtype(t.data_type).itemsize
        return int(np.prod(t.dims, dtype=np.int64)) * itemsize

    total = sum(tensor_bytes(t) for t in model.graph.initializer)
    for node in model.graph.node:
        if node.op_type == "Constant":
            total += sum(tensor_bytes(a.t) for a in node.attribute if a.HasField("t"))
    return total


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, int, str]:
    """(wall seconds, peak KiB, stderr) of one run of `cmd`."""
    r = subprocess.run([TIME, "-f", "TIME %e %M", *cmd], capture_output=True, text=True,
                       env=env, cwd=tempfile.gettempdir())  # not a checkout: PYTHONPATH decides
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{r.stderr[-2000:]}")
    line = [ln for ln in r.stderr.splitlines() if ln.startswith("TIME ")][-1]
    _, wall, kib = line.split()
    return float(wall), int(kib), r.stderr


def load_seconds(stderr: str) -> float | None:
    """When run starts the executor (its progress line): the model is parsed, consts.bin
    checked and the inputs read, counted from the command's start."""
    found = re.findall(r"\[\s*([\d.]+)s\] running the reference executor", stderr)
    return float(found[-1]) if found else None


def directory_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def measure(name: str, onnx_path: Path, runs: int, env: dict[str, str], work: Path) -> dict:
    model, _ = prepare(onnx_path, None)
    weights = weight_bytes(model)
    inputs_path = work / f"{name}-inputs.npz"
    np.savez(inputs_path, **random_inputs(model, seed=0))
    out = work / f"{name}-out"
    compile_runs, run_runs, loads = [], [], []
    for _ in range(runs):
        shutil.rmtree(out, ignore_errors=True)
        compile_runs.append(timed([sys.executable, "-m", "tx8c.cli.main", "compile",
                                   str(onnx_path), "-o", str(out), "--quiet"], env)[:2])
    size = directory_bytes(out)
    for i in range(runs):
        wall, kib, err = timed([sys.executable, "-m", "tx8c.cli.main", "run", str(out),
                                "--inputs", str(inputs_path), "-o", str(work / f"o{i}.npz")],
                               env)
        run_runs.append((wall, kib))
        loads.append(load_seconds(err))
    shutil.rmtree(out, ignore_errors=True)
    med = statistics.median
    return {
        "model": name,
        "weights": weights,
        "out_bytes": size,
        "compile_s": med(w for w, _ in compile_runs),
        "compile_peak": med(k for _, k in compile_runs) * 1024,
        "load_s": med(x for x in loads if x is not None) if any(loads) else float("nan"),
        "run_s": med(w for w, _ in run_runs),
        "run_peak": med(k for _, k in run_runs) * 1024,
    }


def table(rows: list[dict], title: str) -> str:
    head = (f"{'model':<20} {'weights MB':>10} {'out MB':>9} {'out/w':>6} {'compile s':>9} "
            f"{'peak MB':>8} {'load s':>7} {'run s':>7} {'run peak MB':>11} {'peak/w':>6}")
    lines = [title, head, "-" * len(head)]
    for r in rows:
        lines.append(
            f"{r['model']:<20} {r['weights'] / MiB:>10.1f} {r['out_bytes'] / MiB:>9.1f} "
            f"{r['out_bytes'] / r['weights']:>6.3f} {r['compile_s']:>9.2f} "
            f"{r['compile_peak'] / MiB:>8.0f} {r['load_s']:>7.2f} {r['run_s']:>7.2f} "
            f"{r['run_peak'] / MiB:>11.0f} {r['run_peak'] / r['weights']:>6.2f}"
        )
    return "\n".join(lines)


def models(args: list[str], work: Path) -> list[tuple[str, Path]]:
    if args:
        return [(Path(a).stem, Path(a)) for a in args]
    found = []
    for name, make in MODELS.items():
        path = work / f"{name}.onnx"
        onnx.save(make(), path)
        found.append((name, path))
    found += [(n, MODEL_DIR / f"{n}.onnx") for n in REAL_MODELS
              if (MODEL_DIR / f"{n}.onnx").is_file()]
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", help=".onnx files (default: see the docstring)")
    parser.add_argument("-n", "--runs", type=int, default=3, help="runs per command (3)")
    parser.add_argument("--baseline", help="a tx8c checkout to measure first, for comparison")
    args = parser.parse_args()
    if not Path(TIME).is_file():
        print(f"error: {TIME} (GNU time) is needed to measure peak memory", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="bench-constants-") as tmp:
        work = Path(tmp)
        todo = models(args.models, work)
        checkouts = [("baseline", args.baseline)] if args.baseline else []
        checkouts.append(("this checkout", str(Path(__file__).resolve().parents[1])))
        for title, root in checkouts:
            env = dict(os.environ, PYTHONPATH=root)
            rows = []
            for name, path in todo:
                rows.append(measure(name, path, args.runs, env, work))
                print(f"  measured {name} ({title})", file=sys.stderr, flush=True)
            print(table(rows, f"{title}: median of {args.runs} runs"))
            print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
