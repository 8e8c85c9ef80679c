"""CT resize: nearest-neighbour and bilinear interpolation to a given output shape.

Resize runs on the CT engine on compact or channel-aligned data alike (BOTH). Seed 002
lists "bilinear" among the ops that need NHWC features, so a bilinear Resize asks for
preset; a nearest Resize is a gather along each axis and does not.

Layout (seed 001): Resize keeps the rank, and the layout, of its input.

Source coordinates follow ONNX Resize. They are computed in float32, with the scale of an
axis taken as float32(out) / float32(in), as onnxruntime does, so that the rounding of a
nearest source index agrees with it at exact ties.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import TensorType

from tx8c.dialect.attrs import AlignMode
from tx8c.dialect.base import (
    FLOATS,
    NUMERIC,
    Tx8beOp,
    floats_attr,
    ints_attr,
    result_type_like,
    str_attr,
    tx8be_op,
)
from tx8c.dialect.ops._util import upcast
from tx8c.dialect.types import short_name
from tx8c.interfaces import Engine
from tx8c.interfaces.shape_inference import (
    fit_to_operands,
    has_rank,
    keep_operand_layout,
    permute_per_dim,
)

_MODES = ("nearest", "bilinear")
_COORDINATE_MODES = ("half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel")
_NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


def source_coordinates(
    in_size: int, out_size: int, mode: str, scale: float | None = None
) -> np.ndarray:
    """ONNX's `x_original` (float32) for every output index of one axis; the scale is the
    model's own when it gave one (ONNX `scales`), else out_size / in_size."""
    x = np.arange(out_size, dtype=np.float32)
    # ONNX's length_resized is in_size * scale, unrounded, when the model gave a scale
    resized = np.float32(out_size) if scale is None else np.float32(in_size * scale)
    scale = resized / np.float32(in_size) if scale is None else np.float32(scale)
    half = np.float32(0.5)
    if mode == "half_pixel":
        return (x + half) / scale - half
    if mode == "pytorch_half_pixel":
        if out_size == 1:
            return np.zeros(1, np.float32)
        return (x + half) / scale - half
    if mode == "asymmetric":
        return x / scale
    if mode == "align_corners":
        if out_size == 1:
            return np.zeros(1, np.float32)
        return x * (np.float32(in_size - 1) / (resized - np.float32(1)))
    raise ValueError(f"unknown coordinate_transformation_mode {mode}")


def nearest_indices(coords: np.ndarray, in_size: int, nearest_mode: str) -> np.ndarray:
    """The source index of each coordinate by `nearest_mode`, clamped to the input."""
    if nearest_mode == "floor":
        index = np.floor(coords)
    elif nearest_mode == "ceil":
        index = np.ceil(coords)
    elif nearest_mode in ("round_prefer_floor", "round_prefer_ceil"):
        # np.round breaks ties to even; ties get the preferred direction explicitly.
        tie = coords - np.floor(coords) == 0.5
        broken = np.floor(coords) if nearest_mode == "round_prefer_floor" else np.ceil(coords)
        index = np.where(tie, broken, np.round(coords))
    else:
        raise ValueError(f"unknown nearest_mode {nearest_mode}")
    return np.clip(index, 0, in_size - 1).astype(np.int64)


def linear_taps(coords: np.ndarray, in_size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The two source indices and the weight of the second for each coordinate.

    Coordinates outside the input are clamped to its edge (no extrapolation).
    """
    coords = np.clip(coords, 0, in_size - 1)
    low = np.floor(coords).astype(np.int64)
    high = np.minimum(low + 1, in_size - 1)
    return low, high, (coords - low).astype(np.float32)


@tx8be_op
class ResizeOp(Tx8beOp):
    """Resize of `input` to the shape `sizes`.

    - `mode`: "nearest" (any axis may change size) or "bilinear" (rank-4 NCHW input;
      interpolates over H and W, the last two axes, which are the only ones that change);
    - `sizes`: the output shape, every axis (the importer turns ONNX scales into sizes);
    - `scales` (optional): the model's scale per axis when it gave ONNX `scales`; source
      coordinates then use it, as ONNX does, instead of sizes / input shape (they differ
      when a scale does not divide evenly, e.g. 0.6 on 5 -> 3);
    - `coordinate_transformation_mode`: how an output index maps to a source coordinate:
      "half_pixel" (default), "asymmetric", "align_corners" or "pytorch_half_pixel", as
      in ONNX;
    - `nearest_mode`: how "nearest" rounds a source coordinate: "round_prefer_floor"
      (default), "round_prefer_ceil", "floor" or "ceil"; ignored by "bilinear".

    "nearest" accepts floats and integers, "bilinear" floats only.
    """

    name = "tx8be.Resize"
    DTYPES: ClassVar[frozenset[str] | None] = NUMERIC
    mode = str_attr()
    sizes = ints_attr()
    coordinate_transformation_mode = str_attr("half_pixel")
    nearest_mode = str_attr("round_prefer_floor")
    scales = floats_attr(optional=True)

    def verify_op(self) -> None:
        self._verify_choices()
        shape = list(self.operands[0].type.get_shape())
        sizes = list(self.attr("sizes"))
        if len(sizes) != len(shape):
            raise self.fail(f"sizes {sizes} must have one value per input axis ({len(shape)})")
        if any(s < 1 for s in sizes):
            raise self.fail(f"sizes must be positive, got {sizes}")
        scales = self.attr("scales")
        if scales is not None and (len(scales) != len(shape) or any(v <= 0 for v in scales)):
            raise self.fail(
                f"scales {list(scales)} must have one positive value per input axis "
                f"({len(shape)})"
            )
        if self.attr("mode") == "bilinear":
            self._verify_bilinear(shape, sizes)

    def _verify_choices(self) -> None:
        for name, choices in (
            ("mode", _MODES),
            ("coordinate_transformation_mode", _COORDINATE_MODES),
            ("nearest_mode", _NEAREST_MODES),
        ):
            value = self.attr(name)
            if value not in choices:
                raise self.fail(f"{name} must be one of {', '.join(choices)}, got \"{value}\"")

    def _verify_bilinear(self, shape: list[int], sizes: list[int]) -> None:
        dtype = short_name(self.operands[0].type.get_element_type())
        if dtype not in FLOATS:
            raise self.fail(f"mode \"bilinear\" needs a float element type, got {dtype}")
        if len(shape) != 4:
            raise self.fail(f"mode \"bilinear\" needs a rank-4 NCHW input, got rank {len(shape)}")
        if sizes[:2] != shape[:2]:
            raise self.fail(
                f"mode \"bilinear\" resizes H and W only: sizes {sizes} must keep N and C "
                f"of the input {shape}"
            )

    def infer_shapes(self) -> list[TensorType]:
        return [result_type_like(self.attr("sizes"), self.operands[0].type)]

    def query_op_attr(self):
        return self.op_attr(
            align_mode=AlignMode.BOTH,
            engine=Engine.CT,
            need_preset_to_npu=self.attr("mode") == "bilinear",
        )

    # layout rule of the family (module docstring)
    infer_layout = keep_operand_layout
    infer_operand_layouts = fit_to_operands

    def permute_attributes(self, perm):
        """`sizes` and `scales` (one per axis) move with the axes. "bilinear" interpolates
        axes 2 and 3 only (NCHW), so it can run permuted only when H and W stay there:
        not in NHWC (that would need a data_format attribute)."""
        if not has_rank(self, perm):
            return None
        if self.attr("mode") == "bilinear" and set(perm[2:]) != {2, 3}:
            return None
        scales = self.attr("scales")
        return {
            "sizes": permute_per_dim(self.attr("sizes"), perm),
            "scales": None if scales is None else permute_per_dim(scales, perm),
        }

    def compute(self, x: np.ndarray) -> list[np.ndarray]:
        if self.attr("mode") == "nearest":
            return [self._nearest(x)]
        (x,) = upcast(x)
        return [self._bilinear(x)]

    def _scale(self, axis: int) -> float | None:
        scales = self.attr("scales")
        return None if scales is None else scales[axis]

    def _nearest(self, x: np.ndarray) -> np.ndarray:
        """Gather along every axis with the nearest source indices."""
        transform = self.attr("coordinate_transformation_mode")
        indices = [
            nearest_indices(
                source_coordinates(n_in, n_out, transform, self._scale(axis)), n_in,
                self.attr("nearest_mode"),
            )
            for axis, (n_in, n_out) in enumerate(zip(x.shape, self.attr("sizes"), strict=True))
        ]
        return x[np.ix_(*indices)]

    def _bilinear(self, x: np.ndarray) -> np.ndarray:
        """Linear interpolation along H, then along W (the result equals bilinear)."""
        transform = self.attr("coordinate_transformation_mode")
        out_h, out_w = self.attr("sizes")[2:]
        coords = source_coordinates(x.shape[2], out_h, transform, self._scale(2))
        low, high, w = linear_taps(coords, x.shape[2])
        w = w[:, None].astype(x.dtype)
        x = x[:, :, low, :] * (1 - w) + x[:, :, high, :] * w
        coords = source_coordinates(x.shape[3], out_w, transform, self._scale(3))
        low, high, w = linear_taps(coords, x.shape[3])
        w = w.astype(x.dtype)
        return x[:, :, :, low] * (1 - w) + x[:, :, :, high] * w


OPS = [ResizeOp]
