"""`tx8c report` on big graphs: how long the report takes to write and the page to open.

    .venv/bin/python bench/bench_report.py [--blocks 1000] [--compiled build/bert_base,...]
        [--runs 3]

For each compiled output directory given (`tx8c compile MODEL -o DIR`) and for a
synthetic chain of `--blocks` residual MLP blocks (MatMul, Add, Relu, Add per block:
about 3 ops per block after the mid-end fuses the bias), compiled here:

- ops drawn, groups, page size;
- seconds to write the report (`tx8c report`: parse model.mlir, collect, dot layout);
- page-open time in headless Chromium: the page's own clock when its script has drawn
  everything and the browser has laid the page out (`performance.now()` since the
  navigation started, which `data-render-ms` records), median of `--runs`; and the wall
  time of the whole `chromium --dump-dom` process (browser start-up included).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.browser import FLAGS, body_facts, chromium  # noqa: E402


def residual_chain(blocks: int, width: int = 64) -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    nodes, inits, x = [], [], "x"
    for i in range(blocks):
        w = (rng.standard_normal((width, width)) / np.sqrt(width)).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"w{i}"),
                  numpy_helper.from_array(np.zeros(width, np.float32), f"b{i}")]
        nodes += [helper.make_node("MatMul", [x, f"w{i}"], [f"m{i}"]),
                  helper.make_node("Add", [f"m{i}", f"b{i}"], [f"a{i}"]),
                  helper.make_node("Relu", [f"a{i}"], [f"r{i}"]),
                  helper.make_node("Add", [f"r{i}", x], [f"x{i}"])]
        x = f"x{i}"
    graph = helper.make_graph(
        nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, width])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, width])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def tx8c(*args: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "tx8c.cli.main", *args, "--quiet"], check=True)
    return time.perf_counter() - start


def measure(name: str, compiled: Path, runs: int) -> dict:
    page = compiled / "report.html"
    write_s = tx8c("report", str(compiled), "-o", str(page))
    opens, walls = [], []
    for _ in range(runs):
        start = time.perf_counter()
        facts = body_facts(page)
        walls.append(time.perf_counter() - start)
        assert facts.get("ready") == "1" and "errors" not in facts, facts
        opens.append(int(facts["render-ms"]))
    return {"name": name, "ops": int(facts["nodes"]), "groups": int(facts["group-rows"]),
            "mb": page.stat().st_size / 1e6, "write_s": write_s,
            "open_ms": statistics.median(opens), "wall_s": statistics.median(walls)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--blocks", type=int, default=1000)
    parser.add_argument("--compiled", default="")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if chromium() is None:
        sys.exit("headless Chromium not found (make report-deps)")
    rows = []
    for d in filter(None, args.compiled.split(",")):
        rows.append(measure(Path(d).name, Path(d), args.runs))
    if args.blocks:
        with tempfile.TemporaryDirectory() as tmp:
            model = Path(tmp) / "chain.onnx"
            onnx.save(residual_chain(args.blocks), model)
            out = Path(tmp) / "out"
            compile_s = tx8c("compile", str(model), "-o", str(out))
            print(f"chain of {args.blocks} blocks compiled in {compile_s:.1f} s")
            rows.append(measure(f"chain{args.blocks}", out, args.runs))
    print(f"Chromium flags: {' '.join(FLAGS)}; {args.runs} runs, medians")
    print(f"| {'model':<19} | {'ops':>5} | {'groups':>6} | {'page MB':>7} | {'write s':>7} "
          f"| {'open ms':>7} | {'chromium s':>10} |")
    print(f"|{'-' * 21}|{'-' * 7}|{'-' * 8}|{'-' * 9}|{'-' * 9}|{'-' * 9}|{'-' * 12}|")
    for r in rows:
        print(f"| {r['name']:<19} | {r['ops']:>5} | {r['groups']:>6} | {r['mb']:>7.2f} "
              f"| {r['write_s']:>7.1f} | {r['open_ms']:>7.0f} | {r['wall_s']:>10.2f} |")


if __name__ == "__main__":
    main()
