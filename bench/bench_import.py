"""How ONNX import time scales with graph size (developer benchmark; prints, asserts nothing).

Builds BERT-style encoder stacks with ``examples/make_models.py:transformer_stack`` (hidden
64, 4 heads, FFN 256, seq 16, the exporter's shape sub-graphs in every layer) for 1, 4, 16
and 24 layers (and 64 with ``--big``), imports each in-memory ``ModelProto`` with
``tx8c.frontend.onnx.importer.import_onnx`` and prints, per model: layers, ONNX nodes,
tx8be ops in the imported module, import seconds (median of ``--repeats`` runs,
``time.perf_counter`` around ``import_onnx`` only; model building is not timed) and seconds
per 1000 ONNX nodes.  One untimed warm-up import runs first so one-time costs (loading the
converter registry, first-use caches) do not land on the 1-layer row.

It then prints the scaling ratios the issue asks for: time(4x)/time(1x) and
time(16x)/time(1x) next to the matching ONNX-node ratios (equal ratios mean linear growth),
and checks the 24-layer row against the target "a generated 24-layer transformer of about
3000 nodes imports in under 5 s".  When 24 of these layers are far from 3000 nodes it says
so and also times the layer count that comes closest to 3000 nodes.

Usage::

    .venv/bin/python bench/bench_import.py [--big] [--repeats N] [--layers 1,4,16,24]
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import onnx

from tx8c.frontend.onnx.importer import ImportResult, import_onnx

ROOT = Path(__file__).resolve().parents[1]
MAKE_MODELS = ROOT / "examples" / "make_models.py"
DEFAULT_LAYERS = (1, 4, 16, 24)
BIG_LAYERS = (64,)
TARGET_LAYERS = 24
TARGET_NODES = 3000
TARGET_SECONDS = 5.0
NODE_TOLERANCE = 0.15  # "about 3000 nodes": within 15 %


def load_make_models() -> ModuleType:
    """``examples/make_models.py`` as a module (``examples`` is not a package)."""
    name = "tx8c_bench_make_models"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, MAKE_MODELS)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True)
class Row:
    layers: int
    onnx_nodes: int
    tx8be_ops: int
    seconds: float  # median import time
    runs: tuple[float, ...]

    @property
    def per_1000_nodes(self) -> float:
        return self.seconds / self.onnx_nodes * 1000.0


def count_tx8be_ops(module) -> int:
    return sum(1 for op in module.walk() if op.name.startswith("tx8be."))


def time_import(model: onnx.ModelProto, repeats: int) -> tuple[tuple[float, ...], ImportResult]:
    runs = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = import_onnx(model)
        runs.append(time.perf_counter() - start)
    return tuple(runs), result


def measure(layers: int, repeats: int = 3) -> Row:
    model = load_make_models().transformer_stack(layers)
    runs, result = time_import(model, repeats)
    return Row(
        layers=layers,
        onnx_nodes=len(model.graph.node),
        tx8be_ops=count_tx8be_ops(result.module),
        seconds=statistics.median(runs),
        runs=runs,
    )


def warm_up() -> None:
    import_onnx(load_make_models().transformer_stack(1))


def format_table(rows: Sequence[Row]) -> str:
    header = (
        f"{'layers':>6}  {'ONNX nodes':>10}  {'tx8be ops':>9}  {'import s (median)':>17}  "
        f"{'s / 1000 nodes':>14}  runs (s)"
    )
    lines = [header, "-" * len(header)]
    for r in rows:
        runs = ", ".join(f"{t:.3f}" for t in r.runs)
        lines.append(
            f"{r.layers:>6}  {r.onnx_nodes:>10}  {r.tx8be_ops:>9}  {r.seconds:>17.3f}  "
            f"{r.per_1000_nodes:>14.3f}  {runs}"
        )
    return "\n".join(lines)


def scaling_lines(rows: Sequence[Row]) -> list[str]:
    by_layers = {r.layers: r for r in rows}
    base = by_layers.get(1)
    if base is None:
        return ["scaling: no 1-layer row to compare against"]
    lines = ["scaling against 1 layer (linear growth: time ratio == node ratio):"]
    for n in sorted(by_layers):
        if n == 1:
            continue
        r = by_layers[n]
        t_ratio = r.seconds / base.seconds
        n_ratio = r.onnx_nodes / base.onnx_nodes
        exponent = math.log(t_ratio) / math.log(n_ratio) if t_ratio > 0 else float("nan")
        verdict = "linear or better" if t_ratio <= n_ratio * 1.25 else "WORSE than linear"
        lines.append(
            f"  time({n}x)/time(1x) = {t_ratio:6.2f}   nodes({n}x)/nodes(1x) = {n_ratio:6.2f}   "
            f"time ~ nodes^{exponent:.2f}   {verdict}"
        )
    # Per-layer marginal cost between the two largest rows, free of the fixed overhead.
    if len(rows) >= 3:
        lo, hi = sorted(rows, key=lambda r: r.layers)[-2:]
        if hi.onnx_nodes > lo.onnx_nodes:
            marginal = (hi.seconds - lo.seconds) / (hi.onnx_nodes - lo.onnx_nodes) * 1000.0
            lines.append(
                f"  marginal cost {lo.layers}->{hi.layers} layers: {marginal:.3f} s / 1000 nodes"
                f" (vs {base.per_1000_nodes:.3f} at 1 layer)"
            )
    return lines


def nodes_per_layer(rows: Sequence[Row]) -> tuple[float, float]:
    """(nodes per encoder layer, nodes outside the layers) from the smallest two rows."""
    a, b = sorted(rows, key=lambda r: r.layers)[:2]
    per = (b.onnx_nodes - a.onnx_nodes) / (b.layers - a.layers)
    return per, a.onnx_nodes - per * a.layers


def target_lines(rows: Sequence[Row], per_layer: float, fixed: float) -> list[str]:
    lines = [
        f"target: a generated {TARGET_LAYERS}-layer transformer of about {TARGET_NODES} nodes "
        f"imports in under {TARGET_SECONDS:.0f} s"
    ]
    nodes_24 = round(fixed + per_layer * TARGET_LAYERS)
    lines.append(
        f"  this stack: {per_layer:.0f} nodes per layer x {TARGET_LAYERS} + {fixed:.0f} "
        f"(embeddings, mask) = {nodes_24} nodes"
    )
    if abs(nodes_24 - TARGET_NODES) > NODE_TOLERANCE * TARGET_NODES:
        lines.append(
            f"  NOTE: {nodes_24} nodes is {nodes_24 / TARGET_NODES:.0%} of the ~{TARGET_NODES} "
            f"in the target, which implies ~{(TARGET_NODES - fixed) / TARGET_LAYERS:.0f} nodes "
            f"per layer; this generator emits {per_layer:.0f}. See the ~{TARGET_NODES}-node "
            "row below."
        )
    by_layers = {r.layers: r for r in rows}
    if TARGET_LAYERS in by_layers:
        r = by_layers[TARGET_LAYERS]
        ok = "PASS" if r.seconds < TARGET_SECONDS else "FAIL"
        lines.append(f"  {TARGET_LAYERS} layers ({r.onnx_nodes} nodes): {r.seconds:.3f} s   {ok}")
    return lines


def layers_for_nodes(nodes: int, per_layer: float, fixed: float) -> int:
    return max(1, round((nodes - fixed) / per_layer))


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--big", action="store_true", help="also time a 64-layer stack")
    p.add_argument("--repeats", type=int, default=3, help="timed imports per model (median)")
    p.add_argument(
        "--layers",
        default=",".join(map(str, DEFAULT_LAYERS)),
        help="comma-separated layer counts (default: %(default)s)",
    )
    args = p.parse_args(argv)
    args.layer_counts = sorted({int(x) for x in args.layers.split(",") if x.strip()})
    if args.big:
        args.layer_counts = sorted(set(args.layer_counts) | set(BIG_LAYERS))
    if not args.layer_counts or min(args.layer_counts) < 1 or args.repeats < 1:
        p.error("layer counts and --repeats must be >= 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    print(
        f"tx8c ONNX import benchmark: transformer_stack(L) (hidden 64, 4 heads, FFN 256, "
        f"seq 16); median of {args.repeats} imports of the in-memory ModelProto"
    )
    warm_up()
    rows = [measure(n, args.repeats) for n in args.layer_counts]
    print()
    print(format_table(rows))
    print()
    for line in scaling_lines(rows):
        print(line)
    if len(rows) >= 2:
        per_layer, fixed = nodes_per_layer(rows)
        print()
        for line in target_lines(rows, per_layer, fixed):
            print(line)
        matched = layers_for_nodes(TARGET_NODES, per_layer, fixed)
        if matched not in args.layer_counts:
            row = measure(matched, args.repeats)
            ok = "PASS" if row.seconds < TARGET_SECONDS else "FAIL"
            print(
                f"  ~{TARGET_NODES}-node stack: {matched} layers ({row.onnx_nodes} nodes, "
                f"{row.tx8be_ops} tx8be ops): {row.seconds:.3f} s "
                f"({row.per_1000_nodes:.3f} s / 1000 nodes)   {ok}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
