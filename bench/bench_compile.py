"""Whole-compile wall time per model, phase by phase (issues 9 and 12).

    .venv/bin/python bench/bench_compile.py [--models resnet50,bert_base]
        [--models-dir /work/models] [--examples] [--runs 3] [--baseline DIR]

Runs `tx8c compile MODEL -o TMP --quiet` as a fresh process `--runs` times per model and
prints the median of each figure: the process's wall seconds (interpreter start to exit:
what a user waits for), its CPU seconds (user + system: on a shared machine the wall
time also counts the time other processes held the cores), its peak resident memory,
and the phases `report.json` records in `phase_seconds` (import, the pipeline's stages,
the constants file (started: a thread writes it), lowering, the report, the IR and
program texts (the waits for the children that make them), the wait for the cmodel
v2 simulation (a child running beside them));
`to consts` is the time to
the end of the constants stage (import .. constants: where the pipeline ended when
issue 9 set its target), `rest` what no phase counts (interpreter start, imports of
Python modules, writing the files).

`--baseline DIR` runs another checkout of tx8c (DIR on PYTHONPATH, this venv) first in
each pair (A B A B ...), prints its rows, and the ratio new / baseline of the wall time
pair by pair (the median of the ratios: robust when the machine's load drifts). A
checkout older than `phase_seconds` shows the pipeline's stages from `pass_seconds` and
"-" for the phases it did not record.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tx8c.pipeline import CompileOptions, pipeline_stages  # noqa: E402

PHASES = ["import", "midend", "layout", "constants", "grouping", "slicing", "ddr",
          "write-constants", "lower", "report", "write-ir", "write-program", "simulate"]
SHOWN = ["wall", "cpu", "to consts", *PHASES, "rest", "peak MB"]


def compile_once(model: Path, checkout: Path) -> dict[str, float]:
    """One `tx8c compile` of `model` with the tx8c of `checkout`: wall seconds, peak
    memory (MB) and the phases of its report."""
    with tempfile.TemporaryDirectory() as out:
        env = dict(os.environ, PYTHONPATH=str(checkout))
        start = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "tx8c.cli.main", "compile", str(model), "-o", out + "/o",
             "--quiet"], env=env, cwd=checkout,  # `-m` puts the cwd first on sys.path
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            raise SystemExit(f"compile of {model} failed:\n{proc.stderr.read().decode()}")
        report = json.loads((Path(out) / "o" / "report.json").read_text())
    row = {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
           "peak MB": usage.ru_maxrss / 1024, **phases_of(report)}
    counted = [row[p] for p in PHASES if p in row]
    row["rest"] = wall - sum(counted)
    row["to consts"] = sum(row.get(p, 0.0) for p in PHASES[:4])
    return row


def phases_of(report: dict) -> dict[str, float]:
    """`phase_seconds`, or for an older report the stages summed from `pass_seconds`."""
    if "phase_seconds" in report:
        return dict(report["phase_seconds"])
    stage_of = {p.split("{")[0]: stage for stage, passes in pipeline_stages(CompileOptions())
                for p in passes}
    out: dict[str, float] = {}
    for record in report["pass_seconds"]:
        name = record["pass"].split("{")[0]
        stage = "import" if name == "import" else stage_of.get(name, "other")
        out[stage] = out.get(stage, 0.0) + record["seconds"]
    return out


def median_row(rows: list[dict[str, float]]) -> dict[str, float]:
    return {k: statistics.median(r[k] for r in rows) for k in SHOWN if all(k in r for r in rows)}


def print_table(results: list[tuple[str, str, dict[str, float]]], runs: int) -> None:
    print(f"tx8c compile, median of {runs} runs (seconds; peak resident MB)")
    head = f"{'model':<20} {'code':<9} " + " ".join(f"{k:>{max(6, len(k))}}" for k in SHOWN)
    print(head)
    print("-" * len(head))
    for model, code, row in results:
        cells = []
        for k in SHOWN:
            width = max(6, len(k))
            value = row.get(k)
            cells.append(f"{'-':>{width}}" if value is None else
                         f"{value:>{width}.0f}" if k == "peak MB" else f"{value:>{width}.2f}")
        print(f"{model:<20} {code:<9} " + " ".join(cells), flush=True)


def model_paths(models: str, models_dir: Path, examples: bool, tmp: Path) -> list[Path]:
    paths = []
    if examples:
        from examples.make_models import MODELS

        for name, make in MODELS.items():
            import onnx

            path = tmp / f"{name}.onnx"
            onnx.save(make(), path)
            paths.append(path)
    for name in filter(None, models.split(",")):
        path = models_dir / f"{name}.onnx"
        if not path.is_file():
            raise SystemExit(f"{path} not found (bench/export_models.py makes it)")
        paths.append(path)
    return paths


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="resnet50,bert_base")
    parser.add_argument("--models-dir", default="/work/models", type=Path)
    parser.add_argument("--examples", action="store_true", help="also the bundled examples")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline", type=Path, help="another tx8c checkout to compare")
    args = parser.parse_args(argv)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for model in model_paths(args.models, args.models_dir, args.examples, Path(tmp)):
            rows: dict[str, list] = {"baseline": [], "new": []}
            for _ in range(args.runs):
                if args.baseline is not None:
                    rows["baseline"].append(compile_once(model, args.baseline))
                rows["new"].append(compile_once(model, ROOT))
            if args.baseline is not None:
                results.append((model.stem, "baseline", median_row(rows["baseline"])))
            results.append((model.stem, "new", median_row(rows["new"])))
            if args.baseline is not None:
                ratios = [n["wall"] / b["wall"] for b, n in zip(rows["baseline"], rows["new"],
                                                               strict=True)]
                results[-1][2]["new/base"] = statistics.median(ratios)
    print_table(results, args.runs)
    if args.baseline is not None:
        print("\nwall time new / baseline, median of the pairs' ratios:")
        for model, code, row in results:
            if code == "new":
                print(f"  {model:<20} {row['new/base']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
