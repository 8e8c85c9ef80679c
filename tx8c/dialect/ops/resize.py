"""CT resize: nearest-neighbour, bilinear and bicubic interpolation to a given shape.

Resize runs on the CT engine on compact or channel-aligned data alike (BOTH). Seed 002
lists "bilinear" among the ops that need NHWC features, so a bilinear Resize asks for
preset; a nearest Resize is a gather along each axis and does not, and neither does a
bicubic one (the seed does not list it). `data_format` says where a bilinear or bicubic
Resize finds H and W (NCHW: axes 2 and 3; NHWC: axes 1 and 2), so `layout-preset-to-npu`
can run it on NHWC data.

Layout (seed 001): Resize keeps the rank, and the layout, of its input.

Source coordinates follow ONNX Resize. They are computed in float32, with the scale of an
axis taken as float32(out) / float32(in), as onnxruntime does, so that the rounding of a
nearest source index agrees with it at exact ties. Bicubic interpolation is ONNX's: four
taps per output coordinate along each axis, floor(x) - 1 .. floor(x) + 2, weighted by the
cubic convolution kernel with coefficient `cubic_coeff_a`; taps outside the input read
its edge (or, with `exclude_outside`, get weight 0 and the others are renormalised).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import TensorType

from tx8c.dialect.attrs import AlignMode
from tx8c.dialect.base import (
    FLOATS,
    NUMERIC,
    Tx8beOp,
    bool_attr,
    float_attr,
    floats_attr,
    ints_attr,
    result_type_like,
    str_attr,
    tx8be_op,
)
from tx8c.dialect.ops._util import element_bits, upcast
from tx8c.dialect.types import short_name
from tx8c.interfaces import Engine
from tx8c.interfaces.oplib import OpCode, ct_work, volume
from tx8c.interfaces.shape_inference import (
    fit_to_operands,
    has_rank,
    keep_operand_layout,
    permute_per_dim,
)
from tx8c.interfaces.sharding import Slicer, Window, compute_embedded, slicer_fields

_MODES = ("nearest", "bilinear", "bicubic")
_SPATIAL_MODES = ("bilinear", "bicubic")
"""The modes that interpolate H and W (the spatial axes of `data_format`) only."""
_SPATIAL_AXES = {"NCHW": (2, 3), "NHWC": (1, 2)}
"""The axes (H, W) of each `data_format`; the other two are N and C."""
_COORDINATE_MODES = (
    "half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel", "half_pixel_symmetric",
    "tf_crop_and_resize",
)
_NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


def source_coordinates(
    in_size: int, out_size: int, mode: str, scale: float | None = None,
    roi: tuple[float, float] | None = None,
) -> np.ndarray:
    """ONNX's `x_original` (float32) for every output index of one axis; the scale is the
    model's own when it gave one (ONNX `scales`), else out_size / in_size. `roi` is the
    (start, end) of the axis for "tf_crop_and_resize", as fractions of in_size - 1."""
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
    if mode == "half_pixel_symmetric":
        # half_pixel about the centres of input and output: they differ from half_pixel
        # only when the model's scale makes in_size * scale fractional
        adjustment = np.float32(out_size) / resized
        offset = np.float32(in_size) / np.float32(2) * (np.float32(1) - adjustment)
        return offset + (x + half) / scale - half
    if mode == "tf_crop_and_resize":
        start, end = (np.float32(v) for v in roi)
        span = np.float32(in_size - 1)
        if resized <= 1:
            return np.full(out_size, np.float32(0.5 * (start + end) * span), np.float32)
        return start * span + (x * (end - start) * span) / (resized - np.float32(1))
    raise ValueError(f"unknown coordinate_transformation_mode {mode}")


def outside_input(coords: np.ndarray, in_size: int) -> np.ndarray:
    """Which coordinates lie outside [0, in_size - 1] ("tf_crop_and_resize" gives them
    `extrapolation_value`)."""
    return (coords < 0) | (coords > in_size - 1)


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


def cubic_taps(
    coords: np.ndarray, in_size: int, a: float = -0.75, exclude_outside: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """The four source indices and their weights for each coordinate: shapes (n, 4).

    The taps are floor(x) - 1 .. floor(x) + 2, at distances t + 1, t, 1 - t, 2 - t from
    x (t = x - floor(x)), weighted by the cubic convolution kernel with coefficient `a`
    (ONNX's and onnxruntime's polynomials). Taps outside the input read its edge, or with
    `exclude_outside` get weight 0, the others renormalised to sum to 1.
    """
    base = np.floor(coords.astype(np.float64))
    t = coords - base
    near = np.stack([t, 1 - t], axis=1)  # |d| <= 1
    far = np.stack([t + 1, 2 - t], axis=1)  # 1 <= |d| <= 2
    w_near = ((a + 2) * near - (a + 3)) * near * near + 1
    w_far = ((a * far - 5 * a) * far + 8 * a) * far - 4 * a
    weights = np.stack([w_far[:, 0], w_near[:, 0], w_near[:, 1], w_far[:, 1]], axis=1)
    index = base.astype(np.int64)[:, None] + np.arange(-1, 3)
    if exclude_outside:
        weights = np.where((index < 0) | (index >= in_size), 0.0, weights)
        weights = weights / weights.sum(axis=1, keepdims=True)
    return np.clip(index, 0, in_size - 1), weights


@tx8be_op
class ResizeOp(Tx8beOp):
    """Resize of `input` to the shape `sizes`.

    - `mode`: "nearest" (any axis may change size), "bilinear" or "bicubic" (rank-4
      input; they interpolate over H and W, the only axes that change);
    - `data_format`: "NCHW" (default) or "NHWC", where "bilinear" and "bicubic" find H
      and W (axes 2 and 3, or 1 and 2; the other two axes are resized by neither);
      ignored by "nearest";
    - `sizes`: the output shape, every axis (the importer turns ONNX scales into sizes);
    - `scales` (optional): the model's scale per axis when it gave ONNX `scales`; source
      coordinates then use it, as ONNX does, instead of sizes / input shape (they differ
      when a scale does not divide evenly, e.g. 0.6 on 5 -> 3);
    - `coordinate_transformation_mode`: how an output index maps to a source coordinate:
      "half_pixel" (default), "asymmetric", "align_corners", "pytorch_half_pixel",
      "half_pixel_symmetric" or "tf_crop_and_resize", as in ONNX;
    - `nearest_mode`: how "nearest" rounds a source coordinate: "round_prefer_floor"
      (default), "round_prefer_ceil", "floor" or "ceil"; ignored by the other modes;
    - `cubic_coeff_a` (default -0.75) and `exclude_outside` (default false): "bicubic"'s
      kernel coefficient, and whether taps outside the input get weight 0 (the others
      renormalised) instead of reading its edge; ignored by the other modes;
    - `roi` (required by, and only allowed with, "tf_crop_and_resize"): the region of
      the input to resize, ONNX's [start_0, .., start_{r-1}, end_0, .., end_{r-1}] as
      fractions of each axis; "bilinear" and "bicubic" need [0, 1] on N and C;
    - `extrapolation_value` (default 0.0): "tf_crop_and_resize" gives it to the outputs
      whose source coordinate lies outside the input; ignored by the other modes.

    "nearest" accepts floats and integers, "bilinear" and "bicubic" floats only.
    """

    name = "tx8be.Resize"
    DTYPES: ClassVar[frozenset[str] | None] = NUMERIC
    mode = str_attr()
    sizes = ints_attr()
    coordinate_transformation_mode = str_attr("half_pixel")
    nearest_mode = str_attr("round_prefer_floor")
    scales = floats_attr(optional=True)
    cubic_coeff_a = float_attr(-0.75)
    exclude_outside = bool_attr(False)
    roi = floats_attr(optional=True)
    extrapolation_value = float_attr(0.0)
    data_format = str_attr("NCHW")

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
        self._verify_roi(len(shape))
        if self.attr("mode") in _SPATIAL_MODES:
            self._verify_spatial(shape, sizes)

    def _verify_choices(self) -> None:
        for name, choices in (
            ("mode", _MODES),
            ("coordinate_transformation_mode", _COORDINATE_MODES),
            ("nearest_mode", _NEAREST_MODES),
            ("data_format", tuple(_SPATIAL_AXES)),
        ):
            value = self.attr(name)
            if value not in choices:
                raise self.fail(f"{name} must be one of {', '.join(choices)}, got \"{value}\"")

    def _verify_roi(self, rank: int) -> None:
        roi = self.attr("roi")
        crop = self.attr("coordinate_transformation_mode") == "tf_crop_and_resize"
        if roi is None and crop:
            raise self.fail("coordinate_transformation_mode \"tf_crop_and_resize\" needs roi")
        if roi is not None and not crop:
            raise self.fail(
                "roi applies to coordinate_transformation_mode \"tf_crop_and_resize\" only"
            )
        if roi is not None and len(roi) != 2 * rank:
            raise self.fail(
                f"roi {list(roi)} must have two values per input axis, starts then ends "
                f"({2 * rank})"
            )

    def _verify_spatial(self, shape: list[int], sizes: list[int]) -> None:
        mode = self.attr("mode")
        dtype = short_name(self.operands[0].type.get_element_type())
        if dtype not in FLOATS:
            raise self.fail(f"mode \"{mode}\" needs a float element type, got {dtype}")
        fmt = self.attr("data_format")
        if len(shape) != 4:
            raise self.fail(f"mode \"{mode}\" needs a rank-4 {fmt} input, got rank {len(shape)}")
        others = self._other_axes()
        if any(sizes[axis] != shape[axis] for axis in others):
            raise self.fail(
                f"mode \"{mode}\" resizes H and W only: sizes {sizes} must keep N and C "
                f"of the {fmt} input {shape}"
            )
        roi = self.attr("roi")
        if roi is not None and any(self._roi(axis) != (0.0, 1.0) for axis in others):
            raise self.fail(
                f"mode \"{mode}\" resizes H and W only: roi {list(roi)} must be [0, 1] on "
                "N and C"
            )

    def _spatial_axes(self) -> tuple[int, int]:
        """(H, W): the axes "bilinear" and "bicubic" interpolate."""
        return _SPATIAL_AXES[self.attr("data_format")]

    def _other_axes(self) -> tuple[int, int]:
        """(N, C): the axes "bilinear" and "bicubic" keep."""
        return tuple(a for a in range(4) if a not in self._spatial_axes())

    def infer_shapes(self) -> list[TensorType]:
        # `sizes` gives every axis, in the input's own arrangement (NCHW or NHWC alike);
        # verify_op checks that the spatial modes keep N and C of `data_format`
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
        """`sizes`, `scales` (one per axis) and `roi` (a start and an end per axis) move
        with the axes. The spatial modes interpolate H and W only: they run permuted when
        H and W land on the spatial axes of a `data_format`, which then follows (NCHW ->
        NHWC for (0, 2, 3, 1), NHWC -> NCHW for (0, 3, 1, 2); a perm that keeps H and W
        where they are, e.g. swapping them, keeps it); other perms give None."""
        if not has_rank(self, perm):
            return None
        attrs = {}
        if self.attr("mode") in _SPATIAL_MODES:
            moved = {perm.index(axis) for axis in self._spatial_axes()}
            fmt = next((f for f, axes in _SPATIAL_AXES.items() if moved == set(axes)), None)
            if fmt is None:
                return None
            attrs["data_format"] = fmt
        scales, roi = self.attr("scales"), self.attr("roi")
        rank = len(perm)
        return {
            **attrs,
            "sizes": permute_per_dim(self.attr("sizes"), perm),
            "scales": None if scales is None else permute_per_dim(scales, perm),
            "roi": None if roi is None else (  # starts, then ends
                permute_per_dim(roi[:rank], perm) + permute_per_dim(roi[rank:], perm)
            ),
        }

    def compute(self, x: np.ndarray) -> list[np.ndarray]:
        mode = self.attr("mode")
        if mode == "nearest":
            out = self._nearest(x)
            axes = range(x.ndim)
        else:
            (x,) = upcast(x)
            axes = self._spatial_axes()
            # interpolate on an NCHW view: H and W moved to axes 2 and 3, then back
            view = (*self._other_axes(), *axes)
            x_view = np.transpose(x, view)
            out = self._bilinear(x_view) if mode == "bilinear" else self._bicubic(x_view)
            out = np.transpose(out, np.argsort(view))
        if self.attr("coordinate_transformation_mode") == "tf_crop_and_resize":
            out = self._extrapolate(out, x.shape, axes)
        return [out]

    # -- slicing: loop dims are the result's; a slice of output indices along an axis
    # reads the input indices its source coordinates touch (nearest: the picked index;
    # bilinear: the two taps; bicubic: the four), clamped to the input.
    def _interpolated_axes(self) -> tuple[int, ...]:
        rank = self.operands[0].type.get_num_dims()
        return tuple(range(rank)) if self.attr("mode") == "nearest" else self._spatial_axes()

    def _source_indices(self, axis: int) -> np.ndarray:
        """For every output index along `axis`, the input indices it reads (columns)."""
        n_in = self.input_shapes()[0][axis]
        coords = self._coordinates(axis, n_in)
        mode = self.attr("mode")
        if mode == "nearest":
            return nearest_indices(coords, n_in, self.attr("nearest_mode"))[:, None]
        if mode == "bilinear":
            low, high, _ = linear_taps(coords, n_in)
            return np.stack([low, high], axis=1)
        index, _ = cubic_taps(coords, n_in, self.attr("cubic_coeff_a"),
                              self.attr("exclude_outside"))
        return index

    def slicer(self):
        reads = []
        for axis in range(self.operands[0].type.get_num_dims()):
            if axis in self._interpolated_axes():
                taps = self._source_indices(axis)
                reads.append((tuple(int(v) for v in taps.min(axis=1)),
                              tuple(int(v) + 1 for v in taps.max(axis=1))))
            else:
                reads.append(None)
        return ResizeSlicer(**slicer_fields(self), reads=tuple(reads),
                            taps={"nearest": 1, "bilinear": 4, "bicubic": 16}[self.attr("mode")])

    def compute_slice(self, loops, operands):
        return compute_embedded(self, loops, operands)

    _TAPS: ClassVar[dict[str, int]] = {"nearest": 1, "bilinear": 2, "bicubic": 4}

    def gen_op_code(self, loops):
        """`op_resize`: per interpolated axis, the taps (input indices) and weights of the
        slice's output indices, computed here as `compute` computes them (weights in
        the dtype it interpolates in), and with "tf_crop_and_resize" which output
        indices lie outside the input."""
        mode = self.attr("mode")
        crop = self.attr("coordinate_transformation_mode") == "tf_crop_and_resize"
        element = self.operands[0].type.get_element_type()
        wide = short_name(element) == "f64"
        in_shape = self.input_shapes()[0]
        axes = self._interpolated_axes()
        taps, weights, outside = [], [], []
        for axis in axes:
            a, b = loops.dim(axis)
            coords = self._coordinates(axis, in_shape[axis])
            taps.extend(int(i) for i in self._source_indices(axis)[a:b].reshape(-1))
            weights.extend(float(w) for w in self._tap_weights(axis, coords, wide)[a:b]
                           .reshape(-1))
            outside.extend(int(o) for o in outside_input(coords, in_shape[axis])[a:b])
        flags = tuple(int(axis in axes) for axis in range(len(in_shape)))
        value = self.attr("extrapolation_value")
        fill = element_bits(value, element) if mode == "nearest" else 0
        ints = (self._TAPS[mode], int(crop), fill, *flags, *taps, *(outside if crop else ()))
        return OpCode("op_resize", ints, (*weights, value))

    def _tap_weights(self, axis: int, coords: np.ndarray, wide: bool) -> np.ndarray:
        """The weight of each tap of every output index along `axis` (shape (n, taps)),
        in the dtype `_bilinear` and `_bicubic` compute in; none for "nearest"."""
        mode = self.attr("mode")
        dtype = np.float64 if wide else np.float32
        n_in = self.input_shapes()[0][axis]
        if mode == "bilinear":
            _, _, w = linear_taps(coords, n_in)
            w = w.astype(dtype)
            return np.stack([1 - w, w], axis=1)
        if mode == "bicubic":
            _, w = cubic_taps(coords, n_in, self.attr("cubic_coeff_a"),
                              self.attr("exclude_outside"))
            return w.astype(dtype)
        return np.zeros((len(coords), 0), dtype)

    def _scale(self, axis: int) -> float | None:
        scales = self.attr("scales")
        return None if scales is None else scales[axis]

    def _roi(self, axis: int) -> tuple[float, float] | None:
        roi = self.attr("roi")
        return None if roi is None else (roi[axis], roi[axis + len(roi) // 2])

    def _coordinates(self, axis: int, in_size: int) -> np.ndarray:
        """The source coordinate of every output index along `axis`."""
        return source_coordinates(
            in_size, self.attr("sizes")[axis], self.attr("coordinate_transformation_mode"),
            self._scale(axis), self._roi(axis),
        )

    def _nearest(self, x: np.ndarray) -> np.ndarray:
        """Gather along every axis with the nearest source indices."""
        indices = [
            nearest_indices(self._coordinates(axis, n_in), n_in, self.attr("nearest_mode"))
            for axis, n_in in enumerate(x.shape)
        ]
        return x[np.ix_(*indices)]

    def _bilinear(self, x: np.ndarray) -> np.ndarray:
        """Linear interpolation along H, then along W (the result equals bilinear); `x`
        is the NCHW view (compute)."""
        h_axis, w_axis = self._spatial_axes()
        low, high, w = linear_taps(self._coordinates(h_axis, x.shape[2]), x.shape[2])
        w = w[:, None].astype(x.dtype)
        x = x[:, :, low, :] * (1 - w) + x[:, :, high, :] * w
        low, high, w = linear_taps(self._coordinates(w_axis, x.shape[3]), x.shape[3])
        w = w.astype(x.dtype)
        return x[:, :, :, low] * (1 - w) + x[:, :, :, high] * w

    def _bicubic(self, x: np.ndarray) -> np.ndarray:
        """Cubic interpolation along H, then along W: four weighted taps per output index
        of each axis (the result equals bicubic); `x` is the NCHW view (compute)."""
        a, exclude = self.attr("cubic_coeff_a"), self.attr("exclude_outside")
        h_axis, w_axis = self._spatial_axes()
        index, w = cubic_taps(self._coordinates(h_axis, x.shape[2]), x.shape[2], a, exclude)
        x = np.einsum("nchkw,hk->nchw", x[:, :, index, :], w.astype(x.dtype))
        index, w = cubic_taps(self._coordinates(w_axis, x.shape[3]), x.shape[3], a, exclude)
        return np.einsum("nchwk,wk->nchw", x[:, :, :, index], w.astype(x.dtype))

    def _extrapolate(self, out: np.ndarray, in_shape, axes) -> np.ndarray:
        """"tf_crop_and_resize": `extrapolation_value` wherever the source coordinate of
        any resized axis lies outside the input."""
        outside = np.zeros(out.shape, bool)
        for axis in axes:
            along = outside_input(self._coordinates(axis, in_shape[axis]), in_shape[axis])
            outside |= along.reshape([-1 if a == axis else 1 for a in range(out.ndim)])
        value = np.asarray(self.attr("extrapolation_value")).astype(out.dtype)
        return np.where(outside, value, out)


@dataclass(frozen=True)
class ResizeSlicer(Slicer):
    """Resize's loop dims are the result's; along an interpolated axis output index j
    reads input indices [reads[axis][0][j], reads[axis][1][j]) (nearest: the picked
    index; bilinear: two taps; bicubic: four, clamped to the input); source coordinates
    grow with j, so a window [a, b) reads [first[a], end[b - 1]). Other axes follow."""

    reads: tuple[tuple[tuple[int, ...], tuple[int, ...]] | None, ...]
    taps: int

    def back_window(self, loops):
        pairs = loops.pairs()
        for axis, read in enumerate(self.reads):
            a, b = loops.dim(axis)
            if read is not None:
                pairs[axis] = (read[0][a], read[1][b - 1]) if b > a else (0, 0)
        return (Window.of(pairs),)

    def work(self, shape):
        """A weighted sum of the taps per output: 1 (nearest), 4 (bilinear) or 16
        (bicubic) passes over the slice."""
        return ct_work(self.dtype, shape, arith=self.taps,
                       flops=2 * self.taps * volume(shape))

    def imm_bytes(self, shape, config):
        """The tap indices and weights of the slice's output rows and columns (int32 and
        fp32 per tap along each interpolated axis)."""
        lines = sum(shape[a] for a, read in enumerate(self.reads) if read is not None)
        return lines * {1: 1, 4: 2, 16: 4}[self.taps] * 8


OPS = [ResizeOp]
