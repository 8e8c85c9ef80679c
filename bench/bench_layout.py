"""The layout stage: its speed on synthetic graphs and ResNet-50, and what it inserts.

    .venv/bin/python bench/bench_layout.py [--sizes 1000,10000,100000] [--models DIR]

1. Synthetic graphs of about 1k, 10k and 100k ops (residual conv blocks with a
   Tensor-class side branch: Conv, Relu, Add, Pool, Reshape, Gemm, Softmax, constants):
   seconds of the layout passes together, and the growth per 10x.
2. ResNet-50 (torch export, bench/export_models.py) after import and the mid-end: seconds
   of the layout passes.
3. For every bundled example and exported model, with `greedy` and with `optimal`: the
   ChannelNorms and Transposes inserted (count, MB).

What the layout stage leaves that moves bytes per model, before and after: see
`bench_layout_traffic.py`.

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
from tx8c.analysis.layout_problem import read_layout_stats  # noqa: E402
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
        self.count = 0  # ops added: xDSL's len(block.ops) walks the whole block
        self.weight = self.const((C, C, 3, 3))
        self.matrix = self.const((H * W, H * W))

    def const(self, shape) -> object:
        op = ConstantOp.from_array((self.rng.standard_normal(shape) * 0.1).astype(np.float32))
        self.block.add_op(op)
        self.count += 1
        return op.results[0]

    def add(self, op_cls, *operands, **attrs):
        op = op_cls.make(list(operands), **attrs)
        self.block.add_op(op)
        self.count += 1
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
        while self.count < target_ops:
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


def _with_examples(sources):
    from examples.make_models import MODELS

    return [(name, fn()) for name, fn in MODELS.items()] + sources


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--models", default="/work/models", type=Path)
    args = parser.parse_args(argv)
    bench_synthetic([int(s) for s in args.sizes.split(",")])
    bench_resnet50(args.models)
    bench_inserted(args.models)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
