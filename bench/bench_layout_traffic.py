"""What the layout stage leaves that moves bytes, per model (issue 15's table).

    .venv/bin/python bench/bench_layout_traffic.py [MODEL.onnx ...]
    .venv/bin/python bench/bench_layout_traffic.py --baseline /work/main [MODEL.onnx ...]

Each model is imported, run through the mid-end, the layout stage (strategy optimal),
the constants stage (whose const-norm folds the ChannelNorms of constants into their
stored bytes, so what is left runs at inference time) and the grouping stage up to the
loads and stores and fuse-channel-norm-dma (where the checkout has it: a ChannelNorm
group folded into its neighbour's store or load moves no extra byte and is gone from
the IR), and then counted on the IR:

- ChannelNorms: count, and bytes (each writes its result in its `dev_info` layout), and
  of those bytes the ones at the graph's edges (a graph input, which is compact, read
  aligned; an aligned result returned, as the graph's outputs are compact; through
  relabels), which no choice inside the graph removes while Gemm/Conv are ALIGN-only;
- Transposes: count and bytes written (`tx8be.Transpose` always moves its bytes: one that
  would not is a relabel), and how many of them layout-preset-to-npu inserted;
- Reshapes that move bytes in their family (their element map, applied to the operand's
  address map, is not the result's address map; counted with
  `tx8c.target.mem_layout.address_map` only): count and bytes;
- relabels (`tx8be.Relabel`): count;
- fused: the ChannelNorms fuse-channel-norm-dma turned into converting DMAs (its
  statistics), and the bytes they would have written (not in the CN columns).

The checkout measured is the one Python imports `tx8c` from (the venv's editable
install, or PYTHONPATH). Only functions every checkout of tx8c has are used
(`ir_utils.value_stored_bytes`, `mem_layout.address_map`, the pipeline's stage lists;
edges are traced through loads, stores and group boundaries), so
`--baseline DIR` runs this same script on another checkout (its `.venv/bin/python` when
it has one, with DIR first on PYTHONPATH) and prints the two tables and the ratios. MB = 1e6 bytes.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

MODELS = ("bert_base", "gpt2_base", "vit_full", "llama_small", "resnet50", "mobilenetv2",
          "convnext")
COLUMNS = ("channel_norms", "channel_norm_bytes", "edge_bytes", "transposes", "transpose_bytes",
           "transposes_inserted", "reshapes", "reshape_bytes", "relabels", "fused",
           "fused_bytes")


def _address_bytes(op) -> int:
    """Bytes a Reshape writes: 0 when its result's bytes are its operand's in its family
    (its compute carries the operand's address map onto the result's)."""
    from tx8c.dialect.layout import mem_layout_for
    from tx8c.ir_utils import stored_layout, value_stored_bytes
    from tx8c.target.mem_layout import address_map

    src, dst = op.operands[0], op.results[0]
    src_shape, dst_shape = tuple(src.type.get_shape()), tuple(dst.type.get_shape())
    written = value_stored_bytes(dst)
    aligned = stored_layout(dst).name in ("Cx", "NCx")
    src_layout = mem_layout_for(src_shape, aligned)
    dst_layout = mem_layout_for(dst_shape, aligned)
    dtype = dst.type.get_element_type()
    if value_stored_bytes(src) != written:
        return written
    (moved,) = op.compute(address_map(src_shape, dtype, src_layout))
    return 0 if np.array_equal(moved, address_map(dst_shape, dtype, dst_layout)) else written


PASS_THROUGH = ("tx8be.Relabel", "tx8be.LoadVar", "tx8be.StoreVar")
"""Ops that hand a value on unchanged as far as the graph's edges are concerned."""


def _from_input(value) -> bool:
    """`value` is a graph input, maybe through relabels, loads, stores and group
    boundaries (the module may be grouped)."""
    from xdsl.ir import BlockArgument

    while True:
        if isinstance(value, BlockArgument):
            parent = value.owner.parent_op()
            if parent is None or parent.name != "tx8be.Group":
                return True
            value = parent.operands[value.index]
        elif value.owner.name in PASS_THROUGH:
            value = value.owner.operands[0]
        elif value.owner.name == "tx8be.Group":
            value = value.owner.regions[0].block.last_op.operands[value.index]
        else:
            return False


def _to_output(value) -> bool:
    """`value` is only returned, maybe through relabels, stores and group boundaries."""
    uses = list(value.uses)
    return bool(uses) and all(_returned(u) for u in uses)


def _returned(use) -> bool:
    op = use.operation
    if op.name == "func.return":
        return True
    if op.name in PASS_THROUGH:
        return _to_output(op.results[0])
    if op.name == "tx8be.Yield":
        return _to_output(op.parent_op().results[use.index])
    if op.name == "tx8be.Group":  # read by a group: follow its block argument
        return _to_output(op.regions[0].block.args[use.index])
    return False


def count(module) -> dict[str, int]:
    """The row of one module after the layout and constants stages (module docstring)."""
    from tx8c.ir_utils import value_stored_bytes

    try:
        from tx8c.analysis.layout_problem import read_layout_stats
    except ImportError:  # a checkout before the layout passes' skeleton left transforms/
        from tx8c.transforms.layout.common import read_layout_stats

    row = dict.fromkeys(COLUMNS, 0)
    for op in module.walk():
        if op.name == "tx8be.ChannelNorm":
            row["channel_norms"] += 1
            written = value_stored_bytes(op.results[0])
            row["channel_norm_bytes"] += written
            if _from_input(op.operands[0]) or _to_output(op.results[0]):
                row["edge_bytes"] += written
        elif op.name == "tx8be.Transpose":
            row["transposes"] += 1
            row["transpose_bytes"] += value_stored_bytes(op.results[0])
        elif op.name == "tx8be.Reshape":
            written = _address_bytes(op)
            row["reshapes"] += written > 0
            row["reshape_bytes"] += written
        elif op.name == "tx8be.Relabel":
            row["relabels"] += 1
    stats = read_layout_stats(module)
    row["transposes_inserted"] = int(stats.get("layout-preset-to-npu", {}).get("transposes", 0))
    fused = stats.get("fuse-channel-norm-dma", {})
    row["fused"] = int(fused.get("fused_stores", 0)) + int(fused.get("fused_loads", 0))
    row["fused_bytes"] = int(fused.get("fused_bytes", 0))
    return row


def measure(path: Path) -> dict[str, float]:
    from xdsl.passes import PassPipeline

    from tx8c import pipeline
    from tx8c.dialect import make_context
    from tx8c.frontend.onnx.importer import import_onnx
    from tx8c.passes import available_passes

    module = import_onnx(path).module
    stages = pipeline.midend_spec() + pipeline.layout_spec("optimal") + \
        pipeline.constants_spec()
    # grouping up to the loads and stores (and the DMA fusion where the checkout has it)
    passes = pipeline.grouping_spec(pipeline.CompileOptions())
    stages += passes[:passes.index("group-ldst") + 1] + [
        p for p in passes if p == "fuse-channel-norm-dma"]
    spec = ",".join(stages)
    start = time.perf_counter()
    with pipeline.gc_paused():
        PassPipeline.parse_spec(available_passes(), spec).apply(make_context(), module)
    row = count(module)
    return {**row, "seconds": round(time.perf_counter() - start, 2)}


def print_table(title: str, rows: dict[str, dict]) -> None:
    print(title)
    head = (f"{'model':<12} {'CNs':>5} {'CN MB':>8} {'edges':>7} {'T':>4} {'T MB':>7} "
            f"{'T ins.':>6} {'R mov.':>6} {'R MB':>7} {'relabels':>8} {'fused':>5} "
            f"{'fused MB':>8} {'CN+T MB':>8} {'s':>6}")
    print(head)
    print("-" * len(head))
    for name, r in rows.items():
        cn_t = r["channel_norm_bytes"] + r["transpose_bytes"]
        print(f"{name:<12} {r['channel_norms']:>5} {r['channel_norm_bytes'] / 1e6:>8.3f} "
              f"{r['edge_bytes'] / 1e6:>7.3f} "
              f"{r['transposes']:>4} {r['transpose_bytes'] / 1e6:>7.3f} "
              f"{r['transposes_inserted']:>6} {r['reshapes']:>6} "
              f"{r['reshape_bytes'] / 1e6:>7.3f} {r['relabels']:>8} {r.get('fused', 0):>5} "
              f"{r.get('fused_bytes', 0) / 1e6:>8.3f} {cn_t / 1e6:>8.3f} "
              f"{r['seconds']:>6.1f}")
    print()


def print_ratios(before: dict[str, dict], after: dict[str, dict]) -> None:
    print("before / after (x lower; inf: nothing left)")
    print(f"{'model':<12} {'CN bytes':>10} {'CN+T bytes':>11} {'inside':>8}")
    for name in after:
        if name not in before:
            continue
        b, a = before[name], after[name]
        cn = _ratio(b["channel_norm_bytes"], a["channel_norm_bytes"])
        cn_t = _ratio(b["channel_norm_bytes"] + b["transpose_bytes"],
                      a["channel_norm_bytes"] + a["transpose_bytes"])
        inside = _ratio(_inside(b), _inside(a))
        print(f"{name:<12} {cn:>10} {cn_t:>11} {inside:>8}")


def _inside(row: dict) -> int:
    """ChannelNorm and Transpose bytes away from the graph's edges."""
    return row["channel_norm_bytes"] - row["edge_bytes"] + row["transpose_bytes"]


def _ratio(before: int, after: int) -> str:
    if after == 0:
        return "same" if before == 0 else "inf"
    return f"{before / after:.1f}"


def run_baseline(checkout: Path, paths: list[Path]) -> dict[str, dict]:
    """This script's rows measured on another checkout of tx8c."""
    python = checkout / ".venv" / "bin" / "python"
    env = {**os.environ, "PYTHONPATH": str(checkout.resolve())}
    command = [str(python if python.exists() else sys.executable), __file__, "--json",
               *map(str, paths)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False,
                          cwd=checkout)
    if done.returncode != 0:
        sys.exit(f"baseline run failed:\n{done.stderr}")
    return json.loads(done.stdout)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", type=Path)
    parser.add_argument("--models-dir", default=Path("/work/models"), type=Path)
    parser.add_argument("--baseline", type=Path, help="another tx8c checkout to compare")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args(argv)
    paths = args.models or [args.models_dir / f"{m}.onnx" for m in MODELS]
    before = run_baseline(args.baseline, paths) if args.baseline else None
    rows = {}
    for path in paths:
        rows[path.stem] = measure(path)
        if not args.json:
            print(f"measured {path.stem}", file=sys.stderr, flush=True)
    if args.json:
        print(json.dumps(rows))
        return 0
    if before is not None:
        print_table(f"before ({args.baseline})", before)
    print_table(f"after ({Path(__file__).resolve().parents[1]})", rows)
    if before is not None:
        print_ratios(before, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
