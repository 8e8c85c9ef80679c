"""The layout stage: its speed on synthetic graphs and ResNet-50, and what it inserts.

    .venv/bin/python bench/bench_layout.py [--sizes 1000,10000,100000] [--models DIR]
    .venv/bin/python bench/bench_layout.py --moves [MODEL.onnx ...]

1. Synthetic graphs of about 1k, 10k and 100k ops (residual conv blocks with a
   Tensor-class side branch: Conv, Relu, Add, Pool, Reshape, Gemm, Softmax, constants):
   seconds of the layout passes together, and the growth per 10x.
2. ResNet-50 (torch export, bench/export_models.py) after import and the mid-end: seconds
   of the layout passes.
3. For every bundled example and exported model, with `greedy` and with `optimal`: the
   ChannelNorms and Transposes inserted (count, MB).
4. (`--moves`, alone) What still moves bytes after the layout stage (optimal), per
   model: ChannelNorms (count, MB, of which at the graph's inputs and outputs, through
   relabels: a graph input read aligned, an aligned op's result returned), the
   Transposes layout-preset-to-npu inserted, every Transpose and Reshape left that moves
   bytes in its family (count, MB: what each writes), and the relabels. Counted on the
   final IR with the address functions of `tx8c.target.mem_layout` only (an op's element
   map is its compute on an index array), so the same table can be measured on another
   checkout of tx8c (PYTHONPATH=<its source>) for a before/after comparison.

Python's cyclic garbage collector is paused while the passes run (`pipeline.gc_paused`,
as `tx8c compile` does): the IR is millions of long-lived objects and full collections
would otherwise make big graphs look superlinear.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from xdsl.dialects import func  # noqa: E402
from xdsl.dialects.builtin import ModuleOp, f32  # noqa: E402
from xdsl.ir import Block, Region  # noqa: E402
from xdsl.passes import PassPipeline  # noqa: E402

from bench.bench_models import models_to_run  # noqa: E402
from tx8c.dialect import make_context  # noqa: E402
from tx8c.dialect.ops import elementwise as ew  # noqa: E402
from tx8c.dialect.ops.backend import ConstantOp  # noqa: E402
from tx8c.dialect.ops.conv_gemm import ConvOp, GemmOp  # noqa: E402
from tx8c.dialect.ops.movement import ReshapeOp  # noqa: E402
from tx8c.dialect.ops.norm import SoftmaxOp  # noqa: E402
from tx8c.dialect.ops.reduce_pool import PoolOp  # noqa: E402
from tx8c.dialect.types import tensor  # noqa: E402
from tx8c.frontend.onnx.importer import import_onnx  # noqa: E402
from tx8c.passes import available_passes  # noqa: E402
from tx8c.pipeline import gc_paused, layout_spec, midend_spec  # noqa: E402

C, H, W = 16, 8, 8


class SyntheticGraph:
    """Residual conv blocks; every fourth block also feeds a Tensor-class branch."""

    def __init__(self, seed: int = 0):
        self.rng = np.random.default_rng(seed)
        self.block = Block(arg_types=[tensor((1, C, H, W), f32)])
        self.weight = self.const((C, C, 3, 3))
        self.matrix = self.const((H * W, H * W))

    def const(self, shape) -> object:
        op = ConstantOp.from_array((self.rng.standard_normal(shape) * 0.1).astype(np.float32))
        self.block.add_op(op)
        return op.results[0]

    def add(self, op_cls, *operands, **attrs):
        op = op_cls.make(list(operands), **attrs)
        self.block.add_op(op)
        return op.results[0]

    def residual_block(self, x, with_branch: bool):
        y = self.add(ConvOp, x, self.weight, pads=[1, 1, 1, 1])
        y = self.add(ew.ReluOp, y)
        y = self.add(ConvOp, y, self.weight, pads=[1, 1, 1, 1])
        y = self.add(ew.AddOp, y, x)
        y = self.add(ew.ReluOp, y)
        y = self.add(PoolOp, y, mode="max", kernel=[3, 3], pads=[1, 1, 1, 1])
        if with_branch:
            t = self.add(ReshapeOp, y, shape=[1, C, H * W])
            t = self.add(GemmOp, t, self.matrix)
            t = self.add(SoftmaxOp, t)
            t = self.add(ReshapeOp, t, shape=[1, C, H, W])
            y = self.add(ew.AddOp, y, t)
        return y

    def build(self, target_ops: int) -> ModuleOp:
        x = self.block.args[0]
        i = 0
        while len(self.block.ops) < target_ops:
            x = self.residual_block(x, with_branch=i % 4 == 3)
            i += 1
        self.block.add_op(func.ReturnOp(x))
        function = func.FuncOp("main", ([self.block.args[0].type], [x.type]),
                               Region(self.block))
        return ModuleOp([function])


def run_passes(module: ModuleOp, spec: list[str]) -> float:
    passes = PassPipeline.parse_spec(available_passes(), ",".join(spec)).passes
    ctx = make_context()
    with gc_paused():
        start = time.perf_counter()
        for p in passes:
            p.apply(ctx, module)
        return time.perf_counter() - start


def bench_synthetic(sizes: list[int]) -> None:
    print("layout passes on synthetic graphs (strategy optimal)")
    print(f"{'ops':>8} {'seconds':>9} {'us/op':>7} {'growth per 10x':>15}")
    previous = None
    for n in sizes:
        module = SyntheticGraph().build(n)
        ops = len(module.ops.first.body.block.ops)
        seconds = run_passes(module, layout_spec("optimal"))
        growth = ""
        if previous is not None and ops > previous[0]:
            factor = (seconds / previous[1]) / (ops / previous[0])
            growth = f"{factor:.2f}x linear"
        print(f"{ops:>8} {seconds:>9.3f} {seconds / ops * 1e6:>7.1f} {growth:>15}", flush=True)
        previous = (ops, seconds)


def bench_resnet50(models_dir: Path) -> None:
    path = models_dir / "resnet50.onnx"
    if not path.is_file():
        print(f"\n(no {path}: run bench/export_models.py for the ResNet-50 row)")
        return
    module = import_onnx(path).module
    run_passes(module, midend_spec())
    ops = sum(1 for _ in module.ops.first.body.block.ops)
    seconds = run_passes(module, layout_spec("optimal"))
    print(f"\nResNet-50 (after the mid-end, {ops} ops): layout passes {seconds:.3f} s")


def read_layout_stats(module: ModuleOp) -> dict:
    try:
        from tx8c.analysis.layout_problem import read_layout_stats as read
    except ImportError:  # a checkout before the layout skeleton moved (for --moves)
        from tx8c.transforms.layout.common import read_layout_stats as read
    return read(module)


def inserted(module: ModuleOp) -> tuple[int, int, int, int]:
    """(ChannelNorms, their bytes, Transposes, their bytes) the layout stage inserted."""
    stats = read_layout_stats(module)
    align = stats.get("layout-align-opt", stats.get("layout-align-to-npu", {}))
    preset = stats.get("layout-preset-to-npu", {})
    return (
        int(align.get("channel_norms", 0)), int(align.get("channel_norm_bytes", 0)),
        int(preset.get("transposes", 0)), int(preset.get("transpose_bytes", 0)),
    )


def bench_inserted(models_dir: Path) -> None:
    print("\nconversions inserted by the layout stage (after the mid-end)")
    head = (f"{'model':<22} {'strategy':<8} {'ChannelNorms':>12} {'CN MB':>8} "
            f"{'Transposes':>10} {'T MB':>8}")
    print(head)
    print("-" * len(head))
    sources = models_to_run([str(models_dir)]) if models_dir.is_dir() else []
    for name, source in models_to_run([]) if not sources else _with_examples(sources):
        for strategy in ("greedy", "optimal"):
            module = import_onnx(source).module
            run_passes(module, midend_spec())
            run_passes(module, layout_spec(strategy))
            cn, cn_bytes, tr, tr_bytes = inserted(module)
            print(f"{name:<22} {strategy:<8} {cn:>12} {cn_bytes / 1e6:>8.3f} {tr:>10} "
                  f"{tr_bytes / 1e6:>8.3f}", flush=True)


def _moves_bytes(op) -> int:
    """Bytes a Reshape/Transpose writes in its family, 0 when its result's bytes are its
    operand's (the element map, its compute on an index array, carries the operand's
    address map onto the result's)."""
    from tx8c.dialect.layout import is_aligned, mem_layout_for
    from tx8c.target.mem_layout import address_map, byte_size

    aligned = is_aligned(op.dev_info.get("mem_layout"))
    src, dst = op.operands[0].type, op.results[0].type
    src_shape, dst_shape = tuple(src.get_shape()), tuple(dst.get_shape())
    dtype = dst.get_element_type()
    src_layout, dst_layout = mem_layout_for(src_shape, aligned), mem_layout_for(dst_shape, aligned)
    written = byte_size(dst_shape, dtype, dst_layout)
    if byte_size(src_shape, dtype, src_layout) != written:
        return written
    (moved,) = op.compute(address_map(src_shape, dtype, src_layout))
    return 0 if np.array_equal(moved, address_map(dst_shape, dtype, dst_layout)) else written


def _from_input(value, block) -> bool:
    """`value` is a graph input, maybe through relabels."""
    while value.owner is not block and value.owner.name == "tx8be.Relabel":
        value = value.owner.operands[0]
    return value.owner is block


def _to_output(value) -> bool:
    """`value` is only read by the graph's return, maybe through relabels."""
    uses = list(value.uses)
    return bool(uses) and all(
        u.operation.name == "func.return"
        or (u.operation.name == "tx8be.Relabel" and _to_output(u.operation.results[0]))
        for u in uses
    )


def moves_row(module: ModuleOp) -> dict[str, int]:
    """What moves bytes in a module after the layout stage (see the module docstring)."""
    from tx8c.dialect.layout import mem_layout_for
    from tx8c.target.mem_layout import byte_size

    row = dict.fromkeys(("cn", "cn_bytes", "cn_edge_bytes", "transposes", "transpose_bytes",
                         "reshapes", "reshape_bytes", "relabels"), 0)
    block = module.ops.first.body.block
    for op in block.ops:
        if op.name == "tx8be.ChannelNorm":
            shape = tuple(op.results[0].type.get_shape())
            size = byte_size(shape, op.results[0].type.get_element_type(),
                             mem_layout_for(shape, op.attr("direction")))
            row["cn"] += 1
            row["cn_bytes"] += size
            at_edge = _from_input(op.operands[0], block) or _to_output(op.results[0])
            row["cn_edge_bytes"] += size if at_edge else 0
        elif op.name in ("tx8be.Transpose", "tx8be.Reshape"):
            written = _moves_bytes(op)
            kind = "transpose" if op.name == "tx8be.Transpose" else "reshape"
            row[kind + "s"] += written > 0
            row[kind + "_bytes"] += written
        elif op.name == "tx8be.Relabel":
            row["relabels"] += 1
    return row


def bench_moves(paths: list[Path]) -> None:
    from tx8c.pipeline import CompileOptions, run_pipeline

    print("what moves bytes after the layout stage (optimal); MB = 1e6 bytes")
    head = (f"{'model':<14} {'CNs':>5} {'CN MB':>8} {'at edges':>8} {'ins. T':>6} "
            f"{'T left':>6} {'T MB':>7} {'R left':>6} {'R MB':>7} {'relabels':>8} "
            f"{'CN+T MB':>8} {'all MB':>7}")
    print(head)
    print("-" * len(head))
    for path in paths:
        module = import_onnx(path).module
        with gc_paused():
            run_pipeline(module, CompileOptions())
        row = moves_row(module)
        ins = read_layout_stats(module).get("layout-preset-to-npu", {}).get("transposes", 0)
        cn_t = row["cn_bytes"] + row["transpose_bytes"]
        print(f"{path.stem:<14} {row['cn']:>5} {row['cn_bytes'] / 1e6:>8.3f} "
              f"{row['cn_edge_bytes'] / 1e6:>8.3f} {ins:>6} {row['transposes']:>6} "
              f"{row['transpose_bytes'] / 1e6:>7.3f} {row['reshapes']:>6} "
              f"{row['reshape_bytes'] / 1e6:>7.3f} {row['relabels']:>8} {cn_t / 1e6:>8.3f} "
              f"{(cn_t + row['reshape_bytes']) / 1e6:>7.3f}", flush=True)


def _with_examples(sources):
    from examples.make_models import MODELS

    return [(name, fn()) for name, fn in MODELS.items()] + sources


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--models", default="/work/models", type=Path)
    parser.add_argument("--moves", nargs="*", type=Path, default=None,
                        help="only the table of what moves, for these ONNX files")
    args = parser.parse_args(argv)
    if args.moves is not None:
        bench_moves(args.moves or sorted(args.models.glob("*.onnx")))
        return 0
    bench_synthetic([int(s) for s in args.sizes.split(",")])
    bench_resnet50(args.models)
    bench_inserted(args.models)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
