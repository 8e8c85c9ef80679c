"""Resize: compute vs onnxruntime (ONNX Resize with a `sizes` input), shapes, OpAttr."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers import (
    OnnxCase,
    check_against_onnx,
    check_shapes,
    node,
    run_onnx,
    run_op,
    single_op_module,
)
from tx8c.dialect.attrs import AlignMode
from tx8c.dialect.ops.resize import ResizeOp
from tx8c.interfaces import Engine

ONNX_MODE = {"nearest": "nearest", "bilinear": "linear"}


def resize_case(
    mode: str, seed: int, factors: tuple[float, ...], transform: str,
    nearest_mode: str = "round_prefer_floor", dtype=np.float32,
) -> OnnxCase:
    """Resize a random input of rank len(factors), each axis scaled by its factor."""
    rng = np.random.default_rng(seed)
    shape = tuple(int(d) for d in rng.integers(2, 7, size=len(factors)))
    sizes = [max(1, round(d * f)) for d, f in zip(shape, factors, strict=True)]
    if np.issubdtype(dtype, np.integer):
        x = rng.integers(-50, 50, shape).astype(dtype)
    else:
        x = rng.standard_normal(shape).astype(dtype)
    attrs = {"mode": mode, "sizes": sizes, "coordinate_transformation_mode": transform}
    onnx_attrs = {"mode": ONNX_MODE[mode], "coordinate_transformation_mode": transform}
    if mode == "nearest":
        attrs["nearest_mode"] = onnx_attrs["nearest_mode"] = nearest_mode
    return OnnxCase(
        ResizeOp, [x], attrs, [node("Resize", ["in0", "", "", "sizes"], **onnx_attrs)],
        initializers={"sizes": np.array(sizes, np.int64)}, opset=13,
    )


NEAREST_CASES = [
    resize_case("nearest", 0, (1, 1, 2, 3), "half_pixel", "round_prefer_floor"),
    resize_case("nearest", 1, (1, 1, 0.5, 0.4), "asymmetric", "floor"),
    resize_case("nearest", 2, (1, 1, 1.7, 0.6), "align_corners", "round_prefer_ceil"),
    resize_case("nearest", 3, (1, 1, 2.5, 1.5), "pytorch_half_pixel", "ceil"),
    resize_case("nearest", 4, (1, 0.5, 3, 1), "half_pixel", "round_prefer_ceil"),
    resize_case("nearest", 5, (2, 1.5, 0.5), "asymmetric", "round_prefer_floor"),
]
BILINEAR_CASES = [
    resize_case("bilinear", 0, (1, 1, 2, 2), "half_pixel"),
    resize_case("bilinear", 1, (1, 1, 0.5, 0.7), "half_pixel"),
    resize_case("bilinear", 2, (1, 1, 1.6, 2.3), "align_corners"),
    resize_case("bilinear", 3, (1, 1, 3, 0.5), "asymmetric"),
    resize_case("bilinear", 4, (1, 1, 0.2, 1.8), "pytorch_half_pixel"),
]
CASES = NEAREST_CASES + BILINEAR_CASES
IDS = [
    f"{c.attrs['mode']}-{c.attrs['coordinate_transformation_mode']}-{i}"
    for i, c in enumerate(CASES)
]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_matches_onnxruntime(case: OnnxCase) -> None:
    check_against_onnx(case)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_infer_shapes_matches_compute(case: OnnxCase) -> None:
    check_shapes(case)


def test_every_nearest_mode_at_exact_ties() -> None:
    # Halving with half_pixel puts every source coordinate on a .5 tie; doubling with
    # asymmetric puts half of them on one: the four nearest modes all differ there.
    for nearest_mode in ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil"):
        check_against_onnx(resize_case("nearest", 6, (1, 1, 0.5, 0.5), "half_pixel",
                                       nearest_mode))
        check_against_onnx(resize_case("nearest", 7, (1, 1, 1.5, 2.5), "asymmetric",
                                       nearest_mode))


def test_nearest_int32_matches_onnxruntime() -> None:
    check_against_onnx(resize_case("nearest", 8, (1, 1, 2, 0.5), "asymmetric", "floor",
                                   np.int32))
    check_against_onnx(resize_case("nearest", 9, (1, 2, 1.5, 3), "half_pixel",
                                   "round_prefer_ceil", np.int8))


def test_bilinear_f16_matches_fp32_onnxruntime() -> None:
    case = resize_case("bilinear", 10, (1, 1, 1.5, 2), "half_pixel")
    low = case.inputs[0].astype(np.float16)
    case.inputs = [low.astype(np.float32)]
    (expected,) = run_onnx(case)
    (got,) = run_op(ResizeOp, [low], **case.attrs)
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float32), expected, rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize(("mode", "preset"), [("bilinear", True), ("nearest", False)])
def test_op_attr(mode: str, preset: bool) -> None:
    module = single_op_module(ResizeOp, [np.zeros((1, 2, 3, 4), np.float32)], mode=mode,
                              sizes=[1, 2, 6, 8])
    op = next(o for o in module.walk() if isinstance(o, ResizeOp))
    attr = op.query_op_attr()
    assert attr.align_mode == AlignMode.BOTH
    assert attr.engine == Engine.CT
    assert attr.need_preset_to_npu is preset
