"""CT reductions and 2-D / 3-D pooling: Reduce and Pool.

Both run on the CT engine and, by seed 000, produce channel-aligned (ALIGN) data only:
their oplib kernels support no other mode. Neither needs NHWC "preset" (seed 002 does
not list them); Pool reads where its spatial dims are from `data_format` instead.

Layout (seed 001): both keep the layout of their input, fitted to the result: Pool keeps
its rank, a Reduce with keepdims=false drops dims, and its result is then Tensor-class;
backward, a Reduce that changes the rank says nothing about its input.

Low-precision floats (f16, bf16) are computed in fp32 and rounded to the result type.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from xdsl.dialects.builtin import TensorType

from tx8c.dialect.attrs import AlignMode
from tx8c.dialect.base import (
    BOOLS,
    FLOATS,
    NUMERIC,
    Tx8beOp,
    bool_attr,
    ints_attr,
    result_type_like,
    str_attr,
    tx8be_op,
)
from tx8c.dialect.ops._util import normalize_axis, upcast
from tx8c.dialect.types import short_name
from tx8c.interfaces import Engine
from tx8c.interfaces.oplib import ct_work, volume
from tx8c.interfaces.shape_inference import (
    fit_to_operands,
    fit_to_same_rank_operands,
    keep_operand_layout,
    moved_axis,
    result_shape,
)
from tx8c.interfaces.sharding import Combine, LoopDim, Slicer, Window, slicer_fields

# --------------------------------------------------------------------------------------
# Reduce
# --------------------------------------------------------------------------------------

_REDUCERS = {
    "sum": np.sum,
    "mean": np.mean,
    "max": np.max,
    "min": np.min,
    "prod": np.prod,
}
_INT_REDUCE_MODES = ("sum", "max", "min", "prod")


@tx8be_op
class ReduceOp(Tx8beOp):
    """Reduction of `input` over `axes`.

    - `mode`: "sum", "mean", "max", "min" or "prod";
    - `axes`: the reduced axes (negative counts from the end); empty reduces every axis;
    - `keepdims`: keep each reduced axis as a dim of size 1 (default true), else drop it.

    Floats are accepted by every mode, integers by all but "mean", bools by "max" (any)
    and "min" (all). Integer sums and products wrap around in the input's type, as they
    do on the device.
    """

    name = "tx8be.Reduce"
    DTYPES: ClassVar[frozenset[str] | None] = NUMERIC | BOOLS
    mode = str_attr()
    axes = ints_attr(())
    keepdims = bool_attr(True)

    def verify_op(self) -> None:
        mode = self.attr("mode")
        if mode not in _REDUCERS:
            raise self.fail(
                f"mode must be one of {', '.join(_REDUCERS)}, got \"{mode}\""
            )
        dtype = short_name(self.operands[0].type.get_element_type())
        if dtype not in FLOATS and mode not in _INT_REDUCE_MODES:
            raise self.fail(f"mode \"{mode}\" needs a float element type, got {dtype}")
        if dtype in BOOLS and mode not in ("max", "min"):
            raise self.fail(f"mode \"{mode}\" needs a numeric element type, got {dtype}")
        self.reduced_axes()

    def reduced_axes(self) -> tuple[int, ...]:
        """The reduced axes as 0..rank-1, in increasing order (all axes when empty)."""
        rank = self.operands[0].type.get_num_dims()
        axes = self.attr("axes")
        if not axes:
            return tuple(range(rank))
        normalized = []
        for axis in axes:
            n = normalize_axis(axis, rank)
            if n is None:
                raise self.fail(f"axis {axis} is out of range for rank {rank}")
            if n in normalized:
                raise self.fail(f"axes {list(axes)} name axis {n} more than once")
            normalized.append(n)
        return tuple(sorted(normalized))

    def infer_shapes(self) -> list[TensorType]:
        shape = list(self.operands[0].type.get_shape())
        axes = self.reduced_axes()
        if self.attr("keepdims"):
            out = [1 if i in axes else d for i, d in enumerate(shape)]
        else:
            out = [d for i, d in enumerate(shape) if i not in axes]
        return [result_type_like(out, self.operands[0].type)]

    def query_op_attr(self):
        return self.op_attr(align_mode=AlignMode.ALIGN, engine=Engine.CT)

    # layout rule of the family (module docstring)
    infer_layout = keep_operand_layout
    infer_operand_layouts = fit_to_same_rank_operands

    def permute_attributes(self, perm):
        """The reduced axes move with the data. Without keepdims the result has another
        rank and must come out as before: the kept dims must keep their order
        (NCHW -> NHWC reducing H and W gives [N, C] either way)."""
        if self.operands[0].type.get_num_dims() != len(perm):
            return None
        reduced = self.reduced_axes()
        if not self.attr("keepdims"):
            kept = [p for p in perm if p not in reduced]
            if kept != sorted(kept):
                return None
        if len(reduced) == len(perm):
            return {}
        return {"axes": sorted(moved_axis(a, perm) for a in reduced)}

    def view_attributes(self, view):
        """With keepdims the reduced axes follow their dims (an empty list, every axis,
        takes the inserted unit dims too, which changes nothing); without, the result
        has another rank than the operand and no one view fits both."""
        if not self.attr("keepdims") or len(result_shape(self)) != view.rank:
            return None
        if not self.attr("axes"):
            return {}
        return {"axes": tuple(view.axis(a) for a in self.reduced_axes())}

    # -- slicing: loop dims are the result's, then one per reduced axis; partial results
    # over pieces of a reduced axis combine like the mode (a mean is a sum of partial
    # sums each divided by the whole count).
    COMBINE: ClassVar[dict[str, Combine]] = {
        "sum": Combine.SUM, "mean": Combine.SUM, "max": Combine.MAX, "min": Combine.MIN,
        "prod": Combine.PROD,
    }

    def slicer(self):
        shape = self.input_shapes()[0]
        result = tuple(self.results[0].type.get_shape())
        reduced = self.reduced_axes()
        combine = self.COMBINE[self.attr("mode")]
        loops = [
            *(LoopDim(d) for d in result),
            *(LoopDim(shape[a], combine) for a in reduced),
        ]
        axes, kept = [], 0
        for i in range(len(shape)):
            if i in reduced:
                axes.append(len(result) + reduced.index(i))
                kept += bool(self.attr("keepdims"))
            else:
                axes.append(kept)
                kept += 1
        return ReduceSlicer(**slicer_fields(self, loops, [tuple(axes)]))

    def compute_slice(self, loops, operands):
        (out,) = self.compute(*operands)
        if self.attr("mode") == "mean":  # partial sums of the whole mean
            (x,) = operands
            piece = volume(x.shape[a] for a in self.reduced_axes())
            whole = volume(self.input_shapes()[0][a] for a in self.reduced_axes())
            if piece != whole:
                out = (out.astype(np.float32) * np.float32(piece / whole)).astype(out.dtype)
        return [out]

    def compute(self, x: np.ndarray) -> list[np.ndarray]:
        (x,) = upcast(x)
        mode = self.attr("mode")
        kwargs = {"axis": self.reduced_axes(), "keepdims": self.attr("keepdims")}
        if mode in ("sum", "prod"):
            kwargs["dtype"] = x.dtype  # integers wrap in their own type
        if mode in ("max", "min"):  # the identity, so an empty reduction is -inf / +inf
            kwargs["initial"] = _lowest(x.dtype) if mode == "max" else _highest(x.dtype)
        return [np.asarray(_REDUCERS[mode](x, **kwargs))]


def _sum_dtype(dtype: np.dtype) -> np.dtype:
    """Float sums accumulate in float64 (order-independent once rounded back)."""
    return np.dtype(np.float64) if dtype.kind == "f" else dtype


def _lowest(dtype: np.dtype):
    if dtype == np.bool_:
        return False
    return -np.inf if np.issubdtype(dtype, np.floating) else np.iinfo(dtype).min


def _highest(dtype: np.dtype):
    if dtype == np.bool_:
        return True
    return np.inf if np.issubdtype(dtype, np.floating) else np.iinfo(dtype).max


# --------------------------------------------------------------------------------------
# Pool
# --------------------------------------------------------------------------------------

_POOL_MODES = ("max", "avg")
_DATA_FORMATS = {4: ("NCHW", "NHWC"), 5: ("NCDHW", "NDHWC")}
"""The accepted data_format values by input rank (channels first, channels last)."""
_WINDOW_FILL = {"strides": 1, "pads": 0, "dilations": 1}
"""The value every entry of a window attribute has by default."""


def pool_output_size(
    size: int, kernel: int, stride: int, pad_begin: int, pad_end: int, dilation: int,
    ceil_mode: bool,
) -> int:
    """ONNX's pooled size of one spatial dim.

    In ceil mode the last window must start inside the input or the left padding; a
    window starting in the right padding is dropped.
    """
    span = size + pad_begin + pad_end - dilation * (kernel - 1) - 1
    if span < 0:
        return 0
    if not ceil_mode:
        return span // stride + 1
    out = -(-span // stride) + 1
    if (out - 1) * stride >= size + pad_begin:
        out -= 1
    return out


@tx8be_op
class PoolOp(Tx8beOp):
    """2-D max or average pooling of a rank-4 input, 3-D of a rank-5 input.

    The window attributes list one value per spatial dim (H, W; or D, H, W for rank 5),
    in that order whatever `data_format` is:

    - `mode`: "max" (padding counts as -inf) or "avg";
    - `global_pool`: pool all the spatial dims to 1 (kernel, strides, pads, dilations and
      ceil_mode are then ignored); default false;
    - `kernel`: [kh, kw] (or [kd, kh, kw]), required unless `global_pool`;
    - `strides`: [sh, sw] (or [sd, sh, sw]), default all ones;
    - `pads`: all begins then all ends, [top, left, bottom, right] (or [d0, h0, w0, d1,
      h1, w1]), default zeros; each pad is smaller than the kernel along its axis (as
      onnxruntime requires);
    - `dilations`: [dh, dw] (or [dd, dh, dw]), default all ones;
    - `ceil_mode`: round the output size up (ONNX's formula), default false;
    - `count_include_pad`: "avg" only; divide by the whole window including padding (but
      not the part a ceil-mode window reaches beyond the padding) instead of by the number
      of real elements; default false;
    - `data_format`: where the spatial dims are: "NCHW" (default) or "NHWC" for rank 4,
      "NCDHW" (the default) or "NDHWC" for rank 5.

    The defaults are stored in their 2-D form (strides [1, 1], pads [0, 0, 0, 0],
    dilations [1, 1], data_format "NCHW"); on a rank-5 input they stand for the 3-D
    defaults (all ones, all zeros, "NCDHW").
    """

    name = "tx8be.Pool"
    DTYPES: ClassVar[frozenset[str] | None] = NUMERIC
    mode = str_attr()
    global_pool = bool_attr(False)
    kernel = ints_attr(optional=True)
    strides = ints_attr((1, 1))
    pads = ints_attr((0, 0, 0, 0))
    dilations = ints_attr((1, 1))
    ceil_mode = bool_attr(False)
    count_include_pad = bool_attr(False)
    data_format = str_attr("NCHW")

    # -- rules ---------------------------------------------------------------------------
    def verify_op(self) -> None:
        mode, rank = self.attr("mode"), self.operands[0].type.get_num_dims()
        if mode not in _POOL_MODES:
            raise self.fail(f"mode must be \"max\" or \"avg\", got \"{mode}\"")
        if rank not in _DATA_FORMATS:
            raise self.fail(f"input must have rank 4 (NCHW) or 5 (NCDHW), got rank {rank}")
        fmt = self.spatial_format()
        if fmt not in _DATA_FORMATS[rank]:
            first, last = _DATA_FORMATS[rank]
            raise self.fail(
                f"data_format must be \"{first}\" or \"{last}\" for a rank-{rank} input, "
                f"got \"{fmt}\""
            )
        dtype = short_name(self.operands[0].type.get_element_type())
        if mode == "avg" and dtype not in FLOATS:
            raise self.fail(f"mode \"avg\" needs a float element type, got {dtype}")
        if mode == "max" and self.attr("count_include_pad"):
            raise self.fail("count_include_pad applies to mode \"avg\" only")
        if not self.attr("global_pool"):
            self._verify_window()

    def _verify_window(self) -> None:
        kernel = self.attr("kernel")
        if kernel is None:
            raise self.fail("kernel is required unless global_pool is set")
        n = self.spatial_rank()
        for name, want in (("kernel", n), ("strides", n), ("pads", 2 * n), ("dilations", n)):
            values = kernel if name == "kernel" else self.window(name)
            if len(values) != want:
                raise self.fail(f"{name} must have {want} values, got {list(values)}")
            low = 0 if name == "pads" else 1
            if any(v < low for v in values):
                word = "non-negative" if low == 0 else "positive"
                raise self.fail(f"{name} must be {word}, got {list(values)}")
        pads = self.window("pads")
        for axis, k in enumerate(kernel):
            if pads[axis] >= k or pads[axis + n] >= k:
                raise self.fail(f"pads {list(pads)} must be smaller than kernel {list(kernel)}")

    # -- attributes at this rank ------------------------------------------------------------
    def spatial_rank(self) -> int:
        """2 for a rank-4 input, 3 for a rank-5 one."""
        return self.operands[0].type.get_num_dims() - 2

    def window(self, name: str) -> tuple[int, ...]:
        """`strides`, `pads` or `dilations`; on a rank-5 input the stored 2-D default
        stands for the 3-D one."""
        values = self.attr(name)
        n = self.spatial_rank()
        fill = _WINDOW_FILL[name]
        if n == 3 and values == (fill,) * (4 if name == "pads" else 2):
            return (fill,) * (6 if name == "pads" else 3)
        return values

    def spatial_format(self) -> str:
        """`data_format`; on a rank-5 input the default "NCHW" stands for "NCDHW"."""
        fmt = self.attr("data_format")
        return "NCDHW" if fmt == "NCHW" and self.spatial_rank() == 3 else fmt

    # -- shapes --------------------------------------------------------------------------
    def spatial_axes(self) -> tuple[int, ...]:
        """The axes of (D,) H and W in the input (by `data_format`)."""
        n = self.spatial_rank()
        first = 2 if self.spatial_format().startswith("NC") else 1
        return tuple(range(first, first + n))

    def output_spatial(self, sizes: tuple[int, ...]) -> tuple[int, ...]:
        """The pooled spatial dims of input spatial dims `sizes` ((D,) H, W)."""
        if self.attr("global_pool"):
            return (1,) * len(sizes)
        kernel, strides = self.attr("kernel"), self.window("strides")
        pads, dilations = self.window("pads"), self.window("dilations")
        n = len(sizes)
        return tuple(
            pool_output_size(
                size, kernel[i], strides[i], pads[i], pads[i + n], dilations[i],
                self.attr("ceil_mode"),
            )
            for i, size in enumerate(sizes)
        )

    def output_hw(self, height: int, width: int) -> tuple[int, int]:
        """The pooled (H, W) of a 2-D pool."""
        return self.output_spatial((height, width))

    def infer_shapes(self) -> list[TensorType]:
        shape = list(self.operands[0].type.get_shape())
        axes = self.spatial_axes()
        sizes = tuple(shape[a] for a in axes)
        out = self.output_spatial(sizes)
        if any(d < 1 for d in out):
            names = "H x W" if len(axes) == 2 else "D x H x W"
            raise self.fail(
                f"the window does not fit: input {names} {' x '.join(map(str, sizes))} "
                f"gives output {' x '.join(map(str, out))}"
            )
        for a, d in zip(axes, out, strict=True):
            shape[a] = d
        return [result_type_like(shape, self.operands[0].type)]

    def query_op_attr(self):
        return self.op_attr(
            align_mode=AlignMode.ALIGN, engine=Engine.CT, need_preset_to_npu=False
        )

    # layout rule of the family (module docstring)
    infer_layout = keep_operand_layout
    infer_operand_layouts = fit_to_operands

    def permute_attributes(self, perm):
        """`data_format` says where the spatial dims are: channels first <-> channels last
        only (NCHW <-> NHWC, NCDHW <-> NDHWC; kernel, strides and pads are given in
        (D,) H, W order and stay)."""
        fmt = self.spatial_format()
        permuted = "".join(fmt[p] for p in perm) if len(perm) == len(fmt) else ""
        return {"data_format": permuted} if permuted in _DATA_FORMATS[len(fmt)] else None

    # -- slicing: loop dims are the result's; a slice of output rows reads the input rows
    # under its windows (a halo), clamped at the borders; the kernel adds the declared
    # padding its border rows need (and what ceil mode reaches beyond it). A global pool
    # reads its spatial dims whole.
    def slicer(self):
        rank = self.operands[0].type.get_num_dims()
        spatial = self.spatial_axes()
        global_pool = self.attr("global_pool")
        axes = tuple(None if global_pool and a in spatial else a for a in range(rank))
        n = self.spatial_rank()
        taps = (volume(self.input_shapes()[0][a] for a in spatial) if global_pool
                else volume(self.attr("kernel")))
        return PoolSlicer(
            **slicer_fields(self, axes=[axes]), spatial=spatial, global_pool=global_pool,
            kernel=tuple(self.attr("kernel") or (1,) * n), strides=self.window("strides"),
            dilations=self.window("dilations"), pads=self.window("pads"), taps=taps,
            average=self.attr("mode") == "avg",
        )

    def compute_slice(self, loops, operands):
        if self.attr("global_pool"):
            return self.compute(*operands)
        (x,) = upcast(*operands)
        channels_last = not self.spatial_format().startswith("NC")
        if channels_last:
            x = np.moveaxis(x, -1, 1)
        slicer = self.slicer()
        spans = [slicer.input_span(i, loops.dim(a)) for i, a in enumerate(slicer.spatial)]
        pads = tuple(s[2] for s in spans) + tuple(s[3] for s in spans)
        out_size = tuple(loops.shape[a] for a in self.spatial_axes())
        out = self._pool_channels_first(np.ascontiguousarray(x), out_size, pads)
        if channels_last:
            out = np.moveaxis(out, 1, -1)
        return [np.ascontiguousarray(out)]

    # -- compute -------------------------------------------------------------------------
    def compute(self, x: np.ndarray) -> list[np.ndarray]:
        (x,) = upcast(x)
        channels_last = not self.spatial_format().startswith("NC")
        if channels_last:  # to channels first: N, C, spatial...
            x = np.moveaxis(x, -1, 1)
        if self.attr("global_pool"):
            spatial = tuple(range(2, x.ndim))
            if self.attr("mode") == "max":
                out = np.max(x, axis=spatial, keepdims=True)
            else:  # float64 mean: the same float32 for any slice of N and C
                out = np.mean(x, axis=spatial, keepdims=True, dtype=_sum_dtype(x.dtype))
                out = out.astype(x.dtype)
        else:
            out = self._pool_channels_first(x)
        if channels_last:
            out = np.moveaxis(out, 1, -1)
        return [np.ascontiguousarray(out)]

    def _pool_channels_first(
        self, x: np.ndarray, out_size: tuple[int, ...] | None = None,
        pads: tuple[int, ...] | None = None,
    ) -> np.ndarray:
        """Windowed pooling of an N, C, spatial... array (pads, strides, dilations, ceil
        mode); a slice gives its own output size and the pads its border rows need."""
        if out_size is None:
            out_size = self.output_spatial(x.shape[2:])
        window_axes = tuple(range(-len(out_size), 0))
        if self.attr("mode") == "max":
            low = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
            return self._windows(x, out_size, low, pads=pads).max(axis=window_axes)
        # float64 sums round to the same float32 whatever the summation order numpy picks
        # for a window view of this shape, so a slice computes what the whole does
        windows = self._windows(x, out_size, 0, pads=pads)
        sums = windows.sum(axis=window_axes, dtype=_sum_dtype(x.dtype)).astype(x.dtype)
        # Which positions count towards the divisor: the real elements, or with
        # count_include_pad also the declared padding (never what ceil mode adds beyond it).
        counted = np.ones(x.shape[2:], x.dtype)
        fill = 1 if self.attr("count_include_pad") else 0
        counts = self._windows(counted, out_size, 0, pad_fill=fill, pads=pads).sum(
            axis=window_axes
        )
        return sums / counts

    def _windows(
        self, x: np.ndarray, out_size: tuple[int, ...], fill, pad_fill=None, pads=None
    ) -> np.ndarray:
        """Every pooling window of the last n axes (n spatial dims): shape
        (..., *out_size, *kernel).

        The declared pads are filled with `pad_fill` (default `fill`); what ceil mode
        needs beyond them is filled with `fill`.
        """
        n = len(out_size)
        kernel, strides = self.attr("kernel"), self.window("strides")
        dilations = self.window("dilations")
        pads = self.window("pads") if pads is None else pads
        pad_fill = fill if pad_fill is None else pad_fill
        lead = [(0, 0)] * (x.ndim - n)
        declared = [(pads[i], pads[i + n]) for i in range(n)]
        x = np.pad(x, lead + declared, constant_values=pad_fill)
        extents = [dilations[i] * (kernel[i] - 1) + 1 for i in range(n)]
        # Ceil mode may let the last window reach past the declared padding.
        extra = [
            max(0, (out_size[i] - 1) * strides[i] + extents[i] - x.shape[x.ndim - n + i])
            for i in range(n)
        ]
        x = np.pad(x, lead + [(0, e) for e in extra], constant_values=fill)
        windows = sliding_window_view(x, extents, axis=tuple(range(-n, 0)))
        steps = tuple(slice(None, None, s) for s in strides)
        taps = tuple(slice(None, None, d) for d in dilations)
        windows = windows[(..., *steps, *taps)]
        return windows[(..., *(slice(0, o) for o in out_size), *(slice(None),) * n)]


# --------------------------------------------------------------------------------------
# Slicing
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReduceSlicer(Slicer):
    """Reduce's loop dims: the result's, then one per reduced axis; partial results over
    pieces of a reduced axis combine like the mode (a mean is the sum of partial sums each
    divided by the whole count). One reduction pass over the elements read."""

    def imm_bytes(self, shape, config):
        """An fp32 accumulator of the slice's results."""
        return self.scratch(shape[: self.num_outputs], "f32", config)


@dataclass(frozen=True)
class PoolSlicer(Slicer):
    """Pool's loop dims are the result's; a slice of output rows reads the input rows
    under its windows (a halo), clamped at the borders; the kernel adds the declared
    padding its border rows need (and what ceil mode reaches beyond it). A global pool
    reads its spatial dims whole."""

    spatial: tuple[int, ...]
    global_pool: bool
    kernel: tuple[int, ...]
    strides: tuple[int, ...]
    dilations: tuple[int, ...]
    pads: tuple[int, ...]
    taps: int
    average: bool

    def input_span(self, axis: int, out: tuple[int, int]) -> tuple[int, int, int, int]:
        """For output rows [a, b) of spatial axis `axis` (index into `spatial`): the
        input rows read [lo, hi) and the declared padding rows before and after them."""
        n = len(self.spatial)
        size = self.operands[0][self.spatial[axis]]
        first = out[0] * self.strides[axis] - self.pads[axis]
        end = ((out[1] - 1) * self.strides[axis] - self.pads[axis]
               + (self.kernel[axis] - 1) * self.dilations[axis] + 1)
        lo = min(max(first, 0), size)
        hi = max(min(end, size), lo)
        before = max(0, min(0, end) - first)
        after = max(0, min(end, size + self.pads[axis + n]) - max(first, size))
        return lo, hi, before, after

    def back_window(self, loops):
        if self.global_pool:
            return super().back_window(loops)
        pairs = loops.pairs()
        for i, a in enumerate(self.spatial):
            pairs[a] = self.input_span(i, loops.dim(a))[:2]
        return (Window.of(pairs),)

    def work(self, shape):
        """One pass per kernel tap over the slice's outputs (a division per output for
        "avg")."""
        return ct_work(self.dtype, shape, arith=self.taps, special=int(self.average))

    def imm_bytes(self, shape, config):
        """"avg" keeps the window counts of the slice's outputs in fp32."""
        return self.scratch(shape, "f32", config) if self.average else 0


OPS = [ReduceOp, PoolOp]
