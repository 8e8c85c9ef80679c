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

ONNX_MODE = {"nearest": "nearest", "bilinear": "linear", "bicubic": "cubic"}


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


@pytest.mark.parametrize(
    ("mode", "preset"), [("bilinear", True), ("nearest", False), ("bicubic", False)]
)
def test_op_attr(mode: str, preset: bool) -> None:
    module = single_op_module(ResizeOp, [np.zeros((1, 2, 3, 4), np.float32)], mode=mode,
                              sizes=[1, 2, 6, 8])
    op = next(o for o in module.walk() if isinstance(o, ResizeOp))
    attr = op.query_op_attr()
    assert attr.align_mode == AlignMode.BOTH
    assert attr.engine == Engine.CT
    assert attr.need_preset_to_npu is preset


# --------------------------------------------------------------------------------------
# Opset 19: bicubic, half_pixel_symmetric, tf_crop_and_resize; the model's own scales
# --------------------------------------------------------------------------------------


def resize19_case(
    mode: str, seed: int, factors: tuple[float, ...], transform: str, *,
    use_scales: bool = False, roi: tuple[float, ...] | None = None, **extra,
) -> OnnxCase:
    """ONNX Resize (opset 19) of a random input of rank len(factors): by `scales` (the
    factors as float32) or by `sizes`; `roi` for tf_crop_and_resize; `extra` holds
    nearest_mode, cubic_coeff_a, exclude_outside or extrapolation_value."""
    rng = np.random.default_rng(seed)
    shape = tuple(int(d) for d in rng.integers(2, 7, size=len(factors)))
    x = rng.standard_normal(shape).astype(np.float32)
    scales = [float(np.float32(f)) for f in factors]
    if use_scales:
        sizes = [int(np.floor(d * s)) for d, s in zip(shape, scales, strict=True)]
    else:
        sizes = [max(1, round(d * f)) for d, f in zip(shape, factors, strict=True)]
    attrs = {"mode": mode, "sizes": sizes, "coordinate_transformation_mode": transform,
             **extra}
    onnx_attrs = {"mode": ONNX_MODE[mode], "coordinate_transformation_mode": transform}
    onnx_attrs.update({k: int(v) if isinstance(v, bool) else v for k, v in extra.items()})
    names, inits = ["in0", "", "", ""], {}
    if use_scales:
        attrs["scales"] = scales
        names[2], inits["scales"] = "scales", np.array(scales, np.float32)
    else:
        names[3], inits["sizes"] = "sizes", np.array(sizes, np.int64)
    if roi is not None:
        attrs["roi"] = roi
        names[1], inits["roi"] = "roi", np.array(roi, np.float32)
    while not names[-1]:
        names.pop()
    return OnnxCase(ResizeOp, [x], attrs, [node("Resize", names, **onnx_attrs)],
                    initializers=inits, opset=19)


BICUBIC_CASES = [
    resize19_case("bicubic", 0, (1, 1, 2, 2), "half_pixel", use_scales=True),
    resize19_case("bicubic", 1, (1, 1, 0.6, 0.8), "half_pixel", use_scales=True),
    resize19_case("bicubic", 2, (1, 1, 1.7, 2.5), "align_corners"),
    resize19_case("bicubic", 3, (1, 1, 2, 0.5), "asymmetric", use_scales=True),
    resize19_case("bicubic", 4, (1, 1, 0.4, 1.6), "pytorch_half_pixel"),
    resize19_case("bicubic", 5, (1, 1, 2.3, 0.7), "half_pixel", cubic_coeff_a=-0.5,
                  exclude_outside=True),
    resize19_case("bicubic", 6, (1, 1, 0.5, 3), "align_corners", use_scales=True,
                  cubic_coeff_a=-0.6, exclude_outside=True),
]
SYMMETRIC_CASES = [  # scales whose size is fractional: differs from half_pixel there
    resize19_case("bilinear", 7, (1, 1, 2.3, 0.6), "half_pixel_symmetric", use_scales=True),
    resize19_case("bicubic", 8, (1, 1, 0.7, 2.94), "half_pixel_symmetric", use_scales=True),
    resize19_case("nearest", 9, (1, 1.5, 1.3, 0.6), "half_pixel_symmetric", use_scales=True),
    resize19_case("nearest", 10, (1, 1, 2, 3), "half_pixel_symmetric"),
]
CROP_CASES = [
    resize19_case("bilinear", 11, (1, 1, 1.5, 0.7), "tf_crop_and_resize",
                  roi=(0, 0, 0.2, 0.1, 1, 1, 0.9, 0.7)),
    resize19_case("bilinear", 12, (1, 1, 2, 1.5), "tf_crop_and_resize",
                  roi=(0, 0, -0.3, 0.4, 1, 1, 0.8, 1.5), extrapolation_value=-4.5),
    resize19_case("bicubic", 13, (1, 1, 1.3, 2), "tf_crop_and_resize",
                  roi=(0, 0, 0.1, -0.2, 1, 1, 1.2, 0.8), extrapolation_value=3.0),
    resize19_case("bicubic", 14, (1, 1, 0.8, 1.6), "tf_crop_and_resize",
                  roi=(0, 0, 0.25, 0, 1, 1, 0.75, 1), cubic_coeff_a=-0.5,
                  exclude_outside=True),
    resize19_case("nearest", 15, (2, 1, 1.5, 0.5), "tf_crop_and_resize",
                  roi=(0.5, 0, -0.2, 0.1, 1, 1, 0.9, 1.3), extrapolation_value=7.0,
                  nearest_mode="floor"),
]
CASES_19 = BICUBIC_CASES + SYMMETRIC_CASES + CROP_CASES
IDS_19 = [
    f"{c.attrs['mode']}-{c.attrs['coordinate_transformation_mode']}-"
    f"{'scales' if 'scales' in c.attrs else 'sizes'}-{i}"
    for i, c in enumerate(CASES_19)
]


@pytest.mark.parametrize("case", CASES_19, ids=IDS_19)
def test_opset19_matches_onnxruntime(case: OnnxCase) -> None:
    check_against_onnx(case)
    check_shapes(case)


def run_onnx_reference(case: OnnxCase) -> np.ndarray:
    """The case run by ONNX's reference implementation (onnx.reference)."""
    import onnx
    from onnx import helper
    from onnx.reference import ReferenceEvaluator

    x = case.inputs[0]
    graph = helper.make_graph(
        case.nodes, "case",
        [helper.make_tensor_value_info("in0", onnx.TensorProto.FLOAT, list(x.shape))],
        [onnx.ValueInfoProto(name="out0")],
        [onnx.numpy_helper.from_array(v, k) for k, v in case.initializers.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", case.opset)])
    return ReferenceEvaluator(model).run(None, {"in0": x})[0]


@pytest.mark.parametrize(
    "case",
    [
        # tf_crop_and_resize crops an axis whose size does not change (onnxruntime
        # leaves such an axis as it is)
        resize19_case("bilinear", 16, (1, 1, 2, 1), "tf_crop_and_resize",
                      roi=(0, 0, -0.3, 0.4, 1, 1, 0.8, 1.5), extrapolation_value=-4.5),
        # with the model's scales, the resized length is in_size * scale, fractional here
        # (onnxruntime uses the whole output size)
        resize19_case("bicubic", 17, (1, 1, 0.7, 1.3), "align_corners", use_scales=True),
        resize19_case("bicubic", 18, (1, 1, 0.7, 1.3), "tf_crop_and_resize",
                      use_scales=True, roi=(0, 0, 0.25, 0, 1, 1, 0.75, 1)),
    ],
    ids=["crop-same-size", "align-corners-scales", "crop-scales"],
)
def test_where_onnxruntime_departs_from_onnx_we_follow_onnx(case: OnnxCase) -> None:
    """Where onnxruntime departs from the ONNX specification (and its reference
    implementation, which ONNX's own conformance tests check), tx8c follows ONNX."""
    (got,) = run_op(ResizeOp, case.inputs, **case.attrs)
    np.testing.assert_allclose(got, run_onnx_reference(case), rtol=1e-5, atol=1e-5)


def test_bicubic_keeps_a_constant_image() -> None:
    """The four weights sum to 1, with and without exclude_outside (which renormalises
    them), so a constant image stays constant."""
    x = np.full((1, 2, 3, 4), 2.5, np.float32)
    for exclude in (False, True):
        (got,) = run_op(ResizeOp, [x], mode="bicubic", sizes=[1, 2, 7, 5],
                        exclude_outside=exclude)
        np.testing.assert_allclose(got, 2.5, rtol=1e-6)


def test_tf_crop_and_resize_int_nearest_extrapolates_in_the_input_type() -> None:
    x = np.arange(12, dtype=np.int32).reshape(1, 1, 3, 4)
    (got,) = run_op(ResizeOp, [x], mode="nearest", sizes=[1, 1, 2, 3],
                    coordinate_transformation_mode="tf_crop_and_resize",
                    roi=[0, 0, 0, -1, 1, 1, 1, 1], extrapolation_value=-9.0)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got[0, 0, :, 0], [-9, -9])


def test_permute_attributes_moves_roi_with_the_axes() -> None:
    x = np.zeros((1, 3, 4, 5), np.float32)
    module = single_op_module(ResizeOp, [x], mode="nearest", sizes=[1, 3, 6, 5],
                              coordinate_transformation_mode="tf_crop_and_resize",
                              roi=[0, 0, 0.1, 0.2, 1, 1, 0.8, 0.9])
    op = next(o for o in module.walk() if isinstance(o, ResizeOp))
    new = op.permute_attributes((0, 2, 3, 1))
    assert new["sizes"] == (1, 6, 5, 3)
    assert new["roi"] == (0, 0.1, 0.2, 0, 1, 0.8, 0.9, 1)
    assert "data_format" not in new  # nearest resizes any axis: no H and W to name
    cubic = single_op_module(ResizeOp, [x], mode="bicubic", sizes=[1, 3, 6, 5],
                             scales=[1, 1, 1.5, 1])
    op = next(o for o in cubic.walk() if isinstance(o, ResizeOp))
    nhwc = op.permute_attributes((0, 2, 3, 1))
    assert nhwc["data_format"] == "NHWC" and nhwc["sizes"] == (1, 6, 5, 3)
    assert nhwc["scales"] == (1, 1.5, 1, 1)
    swapped = op.permute_attributes((1, 0, 3, 2))  # H and W stay on axes 2 and 3
    assert swapped["data_format"] == "NCHW" and swapped["sizes"] == (3, 1, 5, 6)
    assert op.permute_attributes((0, 2, 1, 3)) is None  # H on axis 1, W on axis 3


def test_permute_attributes_nhwc_back_to_nchw() -> None:
    x = np.zeros((1, 4, 5, 3), np.float32)  # NHWC
    module = single_op_module(ResizeOp, [x], mode="bilinear", sizes=[1, 8, 10, 3],
                              data_format="NHWC",
                              coordinate_transformation_mode="tf_crop_and_resize",
                              roi=[0, 0.1, 0.2, 0, 1, 0.8, 0.9, 1])
    op = next(o for o in module.walk() if isinstance(o, ResizeOp))
    back = op.permute_attributes((0, 3, 1, 2))
    assert back["data_format"] == "NCHW" and back["sizes"] == (1, 3, 8, 10)
    assert back["roi"] == (0, 0, 0.1, 0.2, 1, 1, 0.8, 0.9)
    assert op.permute_attributes((0, 2, 3, 1)) is None  # H and W would land on 3 and 1


NHWC_CASES = [
    resize_case("bilinear", 20, (1, 1, 1.6, 2.3), "half_pixel"),
    resize_case("bilinear", 21, (1, 1, 0.5, 1.5), "align_corners"),
    resize19_case("bilinear", 22, (1, 1, 2.3, 0.6), "half_pixel_symmetric", use_scales=True),
    resize19_case("bilinear", 23, (1, 1, 2, 1.5), "tf_crop_and_resize",
                  roi=(0, 0, -0.3, 0.4, 1, 1, 0.8, 1.5), extrapolation_value=-4.5),
    resize19_case("bicubic", 24, (1, 1, 2, 0.5), "asymmetric", use_scales=True),
    resize19_case("bicubic", 25, (1, 1, 2.3, 0.7), "half_pixel", cubic_coeff_a=-0.5,
                  exclude_outside=True),
    resize19_case("bicubic", 26, (1, 1, 1.3, 2), "tf_crop_and_resize",
                  roi=(0, 0, 0.1, -0.2, 1, 1, 1.2, 0.8), extrapolation_value=3.0),
]


def to_nhwc(values, rank: int = 4) -> list:
    """Per-axis values (or roi: starts then ends) from NCHW order to NHWC."""
    values = list(values)
    if len(values) == 2 * rank:
        return to_nhwc(values[:rank]) + to_nhwc(values[rank:])
    return [values[p] for p in (0, 2, 3, 1)]


@pytest.mark.parametrize(
    "case", NHWC_CASES,
    ids=[f"{c.attrs['mode']}-{c.attrs['coordinate_transformation_mode']}-{i}"
         for i, c in enumerate(NHWC_CASES)],
)
def test_nhwc_is_the_nchw_result_transposed(case: OnnxCase) -> None:
    """data_format "NHWC" on the NHWC input gives onnxruntime's result on the NCHW input,
    transposed to NHWC."""
    (expected,) = run_onnx(case)
    attrs = dict(case.attrs, data_format="NHWC")
    for name in ("sizes", "scales", "roi"):
        if name in attrs:
            attrs[name] = to_nhwc(attrs[name])
    x = np.transpose(case.inputs[0], (0, 2, 3, 1))
    (got,) = run_op(ResizeOp, [x], **attrs)
    np.testing.assert_allclose(got, np.transpose(expected, (0, 2, 3, 1)), rtol=1e-5,
                               atol=1e-5)
    nhwc_case = OnnxCase(ResizeOp, [x], attrs, case.nodes, initializers=case.initializers,
                         opset=case.opset)
    check_shapes(nhwc_case)
