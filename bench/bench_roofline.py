"""The roofline bound of each model (issue 8): the yardstick of every latency estimate.

    .venv/bin/python bench/bench_roofline.py [MODEL.onnx | DIR ...]

With no arguments: the bundled examples and, if present, every model in /work/models.
Each model is imported and run through the pipeline (mid-end and layout); the row gives
its FLOPs per element type, the compulsory DDR bytes (weights once, graph inputs and
outputs once), both times and the bound (`tx8c.analysis.roofline`, default TX8Config).
A second table gives the cost model's cycles for representative slices.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from bench.bench_models import models_to_run  # noqa: E402
from tx8c.analysis.roofline import model_roofline  # noqa: E402
from tx8c.frontend.onnx.importer import import_onnx  # noqa: E402
from tx8c.frontend.onnx.loader import prepare  # noqa: E402
from tx8c.pipeline import CompileOptions, run_pipeline  # noqa: E402
from tx8c.target.config import DEFAULT_CONFIG  # noqa: E402
from tx8c.target.cost import cycles  # noqa: E402


def roofline_of(source):
    model, _ = prepare(source, None)
    module = import_onnx(model).module
    run_pipeline(module, CompileOptions())
    return model_roofline(module, DEFAULT_CONFIG)


def slice_table() -> None:
    """Cycles of representative slices (the closing note's hand-checked examples)."""
    from tests.helpers import single_op_module
    from tx8c.dialect.ops.conv_gemm import ConvOp, GemmOp
    from tx8c.dialect.ops.elementwise import AddOp
    from tx8c.dialect.ops.norm import LayerNormOp, SoftmaxOp

    def op_of(cls, inputs, **attrs):
        module = single_op_module(cls, inputs, **attrs)
        return next(o for o in module.walk() if isinstance(o, cls))

    f32 = np.float32
    cases = [
        ("Gemm 64x64x64 f32", op_of(GemmOp, [np.zeros((64, 64), f32)] * 2)),
        ("Gemm 128x768x768 f32", op_of(GemmOp, [np.zeros((128, 768), f32),
                                                np.zeros((768, 768), f32)])),
        ("Conv dw 3x3 1x32x16x16 f32", op_of(
            ConvOp, [np.zeros((1, 32, 16, 16), f32), np.zeros((32, 1, 3, 3), f32)],
            groups=32, pads=[1, 1, 1, 1])),
        ("Conv 3x3 1x64x56x56->64 f32", op_of(
            ConvOp, [np.zeros((1, 64, 56, 56), f32), np.zeros((64, 64, 3, 3), f32)],
            pads=[1, 1, 1, 1])),
        ("LayerNorm 1x128x768 f32", op_of(LayerNormOp, [np.zeros((1, 128, 768), f32)])),
        ("Softmax 1x12x128x128 f32", op_of(SoftmaxOp, [np.zeros((1, 12, 128, 128), f32)])),
        ("Add 1x128x768 f32", op_of(AddOp, [np.zeros((1, 128, 768), f32)] * 2)),
    ]
    print(f"\n{'slice (whole op)':<30} {'engine':>6} {'cycles':>10} {'us':>9}")
    for name, op in cases:
        c = cycles(op.work(op.loop_shape()), DEFAULT_CONFIG)
        print(f"{name:<30} {c.engine:>6} {c.cycles:>10} {c.cycles / 1e3:>9.2f}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*",
                        help="ONNX files or directories of them (default: the bundled "
                             "examples and every model in /work/models)")
    args = parser.parse_args(argv)
    head = (f"{'model':<20} {'GFLOP':>9} {'weights MB':>10} {'io MB':>7} {'compute us':>10} "
            f"{'memory us':>10} {'bound us':>9} {'bound':>8}")
    print(head)
    print("-" * len(head))
    for name, source in models_to_run(args.models):
        r = roofline_of(source)
        gflop = sum(n for _, n in r.flops) / 1e9
        print(
            f"{name:<20} {gflop:>9.3f} {r.weight_bytes / 1e6:>10.2f} {r.io_bytes / 1e6:>7.2f} "
            f"{r.compute_seconds * 1e6:>10.1f} {r.memory_seconds * 1e6:>10.1f} "
            f"{r.seconds * 1e6:>9.1f} {r.bound_by:>8}",
            flush=True,
        )
    slice_table()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
