"""NE ops: 2-D convolution (Conv) and batched matrix multiplication (Gemm).

Both run on the neural engine (seed 003: "op_Gemm and op_Conv" are the only NE ops) and
need channel-aligned data (seed 000 lists Gemm and Conv as ALIGN-only). Conv also needs
its features in NHWC and its weights in HWOI (seed 002), so its OpAttr asks for a preset;
the layout passes then insert transposes and flip `data_format` / `weight_format`, which
is why Conv computes correctly in every arrangement of its operands.

Layout (seeds 001, 003): both are the ops whose layout is known from the start, so
`initial_layout_str()` gives it and the other layout methods only repeat it: Conv
"{data_format}-{weight_format}-{data_format}" (e.g. "NCHW-OIHW-NCHW"), Gemm the Tensor
class of a, b and the result (e.g. "Tensor-Tensor-Tensor"); a bias is not listed and is
Tensor-class.

Both derive from `ProductOp`, which says where their channels and bias are (output and
data channel axes, the weight's output axis, the bias as an Add operand and back) and how
they absorb a per-channel scale into their weights: the knowledge the mid-end's folding
passes ask for.

Low-precision floats (f16, bf16) are computed in fp32 and rounded to the result type.
Quantised (integer) convolutions and matmuls are separate ops, so these take floats only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from tx8c.dialect.attrs import AlignMode
from tx8c.dialect.base import (
    FLOATS,
    Tx8beOp,
    bool_attr,
    float_attr,
    int_attr,
    ints_attr,
    result_type_like,
    str_attr,
    tx8be_op,
)
from tx8c.dialect.layout import join_layout_str, tensor_class_layout
from tx8c.dialect.ops._util import broadcast_shape, upcast
from tx8c.dialect.ops.backend import ConstantOp
from tx8c.interfaces import Engine
from tx8c.interfaces.oplib import Matmul, OpCode, Work, volume
from tx8c.interfaces.shape_inference import elementwise_view, fixed_operand_layouts
from tx8c.interfaces.sharding import (
    Combine,
    LoopDim,
    Slicer,
    Window,
    broadcast_axes,
    slicer_fields,
)
from tx8c.ir_utils import channel_vector, constant_array, rebuilt

# --------------------------------------------------------------------------------------
# What Conv and Gemm share: a product with weights, and a bias per output channel
# --------------------------------------------------------------------------------------


class ProductOp(Tx8beOp):
    """Conv and Gemm: `result = product(data, weight) + bias`, linear in the data (operand
    0) and in the weight (operand 1), with an optional bias (operand 2) added after the
    product per output channel.

    The mid-end passes that move scales and biases into and out of these ops
    (simplify-inference, fold-scale-axis, canonicalize-op, peephole, combine-parallel-*)
    ask the op where its channels are and how it absorbs a scale, through the methods
    below, instead of keeping a table per op kind. Each op says where its channels are;
    the folds that follow from that are written once, here.
    """

    # -- where the channels are (each op) -----------------------------------------------
    def output_channel_axis(self) -> int:
        """The result axis of the output channels (what the bias is added along)."""
        raise NotImplementedError

    def data_channel_axis(self) -> int:
        """The axis of the data operand that the product sums over: a scale along it can
        move into the weight (`weight_scaled_by_input`)."""
        raise NotImplementedError

    def weight_output_axis(self) -> int:
        """The weight axis of the output channels: a scale per output channel multiplies
        the weight along it."""
        raise NotImplementedError

    def weight_scaled_by_input(self, weight: np.ndarray, scale: np.ndarray) -> np.ndarray:
        """The weight that gives `product(data * scale, weight)` from the unscaled data,
        `scale` being a vector along `data_channel_axis`."""
        raise NotImplementedError

    def bias_addend_shape(self, bias_shape: tuple[int, ...]) -> tuple[int, ...]:
        """The shape the bias takes as the second operand of an Add with the result that
        adds it like the op does (it broadcasts along the output channels)."""
        raise NotImplementedError

    def bias_from_addend(
        self, addend: np.ndarray, out_shape: Sequence[int]
    ) -> np.ndarray | None:
        """The bias operand equal to adding `addend` to a result of `out_shape`; None when
        no bias is (the addend varies where a bias cannot)."""
        raise NotImplementedError

    # -- scale factors the op has in its attributes (Gemm's alpha and beta) ---------------
    def bias_scale(self) -> float:
        """The factor the op multiplies its bias by (Gemm: beta); 1 by default."""
        return 1.0

    def unscaled_bias_attrs(self) -> dict[str, Any]:
        """The attribute changes under which the bias is added as it is (Gemm: beta = 1)."""
        return {}

    def attrs_scaled_by(self, factor: float) -> dict[str, Any] | None:
        """The attribute changes that scale the whole result by `factor`; None when the
        op has no such attribute (Conv)."""
        return None

    # -- folds (shared) -----------------------------------------------------------------
    def constant_weights(self) -> tuple[np.ndarray, np.ndarray | None] | None:
        """(weight, bias) arrays when both are constants (a missing bias is None)."""
        weight = constant_array(self.operands[1])
        bias_value = self.operand_named("bias")
        bias = constant_array(bias_value)
        if weight is None or (bias_value is not None and bias is None):
            return None
        return weight, bias

    def output_affine_folded(
        self, scale: np.ndarray, shift: np.ndarray | None
    ) -> list[Operation] | None:
        """Ops computing `self * scale + shift`, `scale` and `shift` being per output
        channel: new weight and bias Constants, then a copy of the op reading them (last).
        None when the weight or bias is not constant or a factor is not finite. The new
        weights are computed in float64 and rounded once to the result's type."""
        weights = self.constant_weights()
        if weights is None or not _finite(scale) or (shift is not None and not _finite(shift)):
            return None
        weight, bias = (w.astype(np.float64) if w is not None else None for w in weights)
        scale = scale.astype(np.float64)
        if bias is not None:
            bias = bias * self.bias_scale()  # the new bias is added unscaled
        new_bias = _affine(bias, scale, None if shift is None else shift.astype(np.float64))
        new_weight = _scaled_along(weight, scale, self.weight_output_axis())
        return self._with_weights(
            self.operands[0], new_weight, new_bias, self.unscaled_bias_attrs()
        )

    def input_scale_folded(self, data: SSAValue, scale: np.ndarray) -> list[Operation] | None:
        """Ops computing `self` on `data * scale` from `data` itself, `scale` being a
        vector along `data_channel_axis`: a new weight Constant, then a copy of the op on
        `data` reading it (last; the bias stays). None when the weight or bias is not
        constant."""
        weights = self.constant_weights()
        if weights is None:
            return None
        weight = self.weight_scaled_by_input(
            weights[0].astype(np.float64), scale.astype(np.float64)
        )
        return self._with_weights(data, weight, None, {}, keep_bias=True)

    def uniform_scale_folded(self, scale: np.ndarray) -> Operation | None:
        """A copy of the op computing `self * s` for one scalar s (all of `scale` equal)
        through its attributes (Gemm: alpha and beta), for weights that are not constants;
        None when the op has no such attribute or the factors differ."""
        if not _finite(scale) or np.any(scale != scale.flat[0]):
            return None
        attrs = self.attrs_scaled_by(float(scale.flat[0]))
        return None if attrs is None else rebuilt(self, **attrs)

    def _with_weights(
        self,
        data: SSAValue,
        weight: np.ndarray,
        bias: np.ndarray | None,
        attrs: dict[str, Any],
        keep_bias: bool = False,
    ) -> list[Operation]:
        """Constants for `weight` (and `bias`) in the result's type, then a copy of the op
        on `data` reading them (keeping its own bias when `keep_bias`), with `attrs`."""
        dtype = self.result_dtype()
        constants = [
            ConstantOp.from_array(np.asarray(array).astype(dtype))
            for array in (weight, bias)
            if array is not None
        ]
        operands = [data, *(c.results[0] for c in constants)]
        own_bias = self.operand_named("bias")
        if keep_bias and own_bias is not None:
            operands.append(own_bias)
        return [*constants, rebuilt(self, operands, **attrs)]


def _finite(array: np.ndarray) -> bool:
    return bool(np.all(np.isfinite(array)))


def _scaled_along(array: np.ndarray, factors: np.ndarray, axis: int) -> np.ndarray:
    """`array` multiplied by the vector `factors` along `axis`."""
    along = [1] * array.ndim
    along[axis] = -1
    return array * factors.reshape(along)


def _affine(bias: np.ndarray | None, scale: np.ndarray, shift: np.ndarray | None):
    """bias * scale + shift, with a missing bias or shift being zero (None if both are)."""
    if bias is None and shift is None:
        return None
    out = scale * bias if bias is not None else np.zeros_like(scale)
    return out + shift if shift is not None else out


# --------------------------------------------------------------------------------------
# Conv
# --------------------------------------------------------------------------------------

DATA_FORMATS = ("NCHW", "NHWC")
WEIGHT_FORMATS = ("OIHW", "HWOI")


@dataclass(frozen=True)
class ConvGeometry:
    """The sizes of one convolution, independent of how its operands are laid out."""

    n: int
    c_in: int
    h: int
    w: int
    c_out: int
    kh: int
    kw: int
    oh: int
    ow: int


def _shape_str(shape) -> str:
    return "x".join(str(d) for d in shape)


@tx8be_op
class ConvOp(ProductOp):
    """2-D convolution `output = conv(input, weight) + bias`, like ONNX Conv in 2-D.

    Operands: `input` [N, C_in, H, W] (NCHW) or [N, H, W, C_in] (NHWC); `weight`
    [C_out, C_in/groups, kh, kw] (OIHW) or [kh, kw, C_out, C_in/groups] (HWOI); optional
    `bias` [C_out]. The result is laid out like the input.

    Attributes:
    - `strides` [sh, sw] (default [1, 1]);
    - `pads` [top, left, bottom, right], i.e. ONNX's [x1_begin, x2_begin, x1_end, x2_end]
      (default zeros);
    - `dilations` [dh, dw] (default [1, 1]);
    - `groups`: input and output channels split into this many independent groups
      (default 1; depthwise convolution is groups == C_in);
    - `data_format`: "NCHW" (default) or "NHWC", the layout of input and result;
    - `weight_format`: "OIHW" (default) or "HWOI", the layout of the weight.

    A 1-D convolution is a 2-D one with H = 1 (and kh = 1).
    """

    name = "tx8be.Conv"
    OPERANDS: ClassVar[tuple[str, ...]] = ("input", "weight", "bias?")
    DTYPES: ClassVar[frozenset[str] | None] = FLOATS

    strides = ints_attr([1, 1])
    pads = ints_attr([0, 0, 0, 0])
    dilations = ints_attr([1, 1])
    groups = int_attr(1)
    data_format = str_attr("NCHW")
    weight_format = str_attr("OIHW")

    # -- rules ---------------------------------------------------------------------------
    def _check_attributes(self) -> None:
        if self.attr("data_format") not in DATA_FORMATS:
            raise self.fail(
                f"data_format must be \"NCHW\" or \"NHWC\", got \"{self.attr('data_format')}\""
            )
        if self.attr("weight_format") not in WEIGHT_FORMATS:
            raise self.fail(
                f"weight_format must be \"OIHW\" or \"HWOI\", "
                f"got \"{self.attr('weight_format')}\""
            )
        for name, length, lowest in (("strides", 2, 1), ("dilations", 2, 1), ("pads", 4, 0)):
            values = list(self.attr(name))
            if len(values) != length:
                raise self.fail(f"{name} must have {length} values, got {values}")
            if any(v < lowest for v in values):
                what = "positive" if lowest == 1 else "non-negative"
                raise self.fail(f"{name} must be {what}, got {values}")
        if self.attr("groups") < 1:
            raise self.fail(f"groups must be at least 1, got {self.attr('groups')}")

    def geometry(self) -> ConvGeometry:
        """The convolution's sizes; raises when operands and attributes disagree."""
        self._check_attributes()
        in_shape, w_shape = self.input_shapes()[:2]
        if len(in_shape) != 4:
            raise self.fail(f"input must have rank 4, got rank {len(in_shape)}")
        if len(w_shape) != 4:
            raise self.fail(f"weight must have rank 4, got rank {len(w_shape)}")
        if self.attr("data_format") == "NCHW":
            n, c_in, h, w = in_shape
        else:
            n, h, w, c_in = in_shape
        if self.attr("weight_format") == "OIHW":
            c_out, c_per_group, kh, kw = w_shape
        else:
            kh, kw, c_out, c_per_group = w_shape
        groups = self.attr("groups")
        if c_in % groups:
            raise self.fail(f"input channels ({c_in}) must be divisible by groups ({groups})")
        if c_out % groups:
            raise self.fail(f"output channels ({c_out}) must be divisible by groups ({groups})")
        if c_per_group != c_in // groups:
            raise self.fail(
                f"weight has {c_per_group} input channel(s) per group, but the input's "
                f"{c_in} channels in {groups} group(s) give {c_in // groups}"
            )
        oh, ow = self._output_size(h, w, kh, kw)
        return ConvGeometry(n, c_in, h, w, c_out, kh, kw, oh, ow)

    def _output_size(self, h: int, w: int, kh: int, kw: int) -> tuple[int, int]:
        top, left, bottom, right = self.attr("pads")
        (sh, sw), (dh, dw) = self.attr("strides"), self.attr("dilations")
        padded = (h + top + bottom, w + left + right)
        kernel = ((kh - 1) * dh + 1, (kw - 1) * dw + 1)  # the dilated kernel's extent
        if kh < 1 or kw < 1 or kernel[0] > padded[0] or kernel[1] > padded[1]:
            raise self.fail(
                f"kernel {kh}x{kw} (dilated {_shape_str(kernel)}) does not fit in the "
                f"padded input {_shape_str(padded)}"
            )
        return (padded[0] - kernel[0]) // sh + 1, (padded[1] - kernel[1]) // sw + 1

    # -- channels (ProductOp) ------------------------------------------------------------
    def output_channel_axis(self) -> int:
        """C of `data_format`."""
        return self.attr("data_format").index("C")

    def data_channel_axis(self) -> int:
        """C of `data_format` (the input is laid out like the result)."""
        return self.attr("data_format").index("C")

    def weight_output_axis(self) -> int:
        """O of `weight_format`."""
        return self.attr("weight_format").index("O")

    def weight_scaled_by_input(self, weight: np.ndarray, scale: np.ndarray) -> np.ndarray:
        """Output channel o meets only the input channels of its group: with groups > 1,
        input channel c is the weight's input index c mod (C_in / groups) of the outputs
        of group c // (C_in / groups)."""
        fmt = self.attr("weight_format")
        o_axis, i_axis = fmt.index("O"), fmt.index("I")
        c_out, per_group = weight.shape[o_axis], weight.shape[i_axis]
        groups = self.attr("groups")
        # factor[o, i] = scale[the input channel output o reads at weight index i]
        factor = np.repeat(scale.reshape(groups, per_group), c_out // groups, axis=0)
        if o_axis == 0:  # OIHW: [O, I] broadcast over the trailing kh, kw
            factor = factor[:, :, None, None]
        return weight * factor

    def bias_addend_shape(self, bias_shape: tuple[int, ...]) -> tuple[int, ...]:
        """The bias [C] along the channel axis, right-aligned (ExpandBiasToMatchAxis):
        [C, 1, 1] in NCHW, [C] in NHWC."""
        return (*bias_shape, *([1] * (3 - self.output_channel_axis())))

    def bias_from_addend(
        self, addend: np.ndarray, out_shape: Sequence[int]
    ) -> np.ndarray | None:
        """A Conv bias is a [C_out] vector: only an addend that varies along the channel
        axis alone is one."""
        return channel_vector(addend, out_shape, self.output_channel_axis())

    def kernel_size(self) -> tuple[int, int]:
        """(kh, kw) of the weight, whatever its format."""
        geometry = self.geometry()
        return geometry.kh, geometry.kw

    def verify_op(self) -> None:
        geo = self.geometry()
        bias = self.operand_named("bias")
        if bias is not None and tuple(bias.type.get_shape()) != (geo.c_out,):
            raise self.fail(
                f"bias must have shape [{geo.c_out}] (C_out), got {list(bias.type.get_shape())}"
            )

    # -- interfaces ------------------------------------------------------------------------
    def infer_shapes(self) -> list[TensorType]:
        geo = self.geometry()
        if self.attr("data_format") == "NCHW":
            shape = (geo.n, geo.c_out, geo.oh, geo.ow)
        else:
            shape = (geo.n, geo.oh, geo.ow, geo.c_out)
        return [result_type_like(shape, self.operands[0].type)]

    def query_op_attr(self):
        return self.op_attr(
            align_mode=AlignMode.ALIGN, need_preset_to_npu=True, engine=Engine.NE
        )

    def initial_layout_str(self) -> str:
        """"{data_format}-{weight_format}-{data_format}": input, weight, result."""
        data = self.attr("data_format")
        return join_layout_str((data, self.attr("weight_format"), data))

    def infer_layout(self, operand_layouts):
        """Fixed by the attributes, whatever the operands' layouts."""
        return self.initial_layout_str()

    def infer_operand_layouts(self, result_layout):
        """The operands listed in the fixed layout_str; a bias is Tensor-class."""
        return fixed_operand_layouts(self, self.initial_layout_str())

    def permute_attributes(self, perm):
        """Input and result permuted by `perm`: `data_format` follows (NCHW <-> NHWC
        only). The weight is not permuted by `perm`: it takes the NPU's HWOI whenever the
        features end up NHWC (seed 002), and keeps its format otherwise; the bias is per
        output channel and stays."""
        fmt = self.attr("data_format")
        permuted = "".join(fmt[p] for p in perm) if len(perm) == len(fmt) else ""
        if permuted not in DATA_FORMATS:
            return None
        weight = "HWOI" if permuted == "NHWC" else self.attr("weight_format")
        return {"data_format": permuted, "weight_format": weight}

    # -- slicing (seed 003 ShardingInterface): see ConvSlicer --------------------------
    def slicer(self) -> ConvSlicer:
        geo = self.geometry()
        data, weight = self.attr("data_format"), self.attr("weight_format")
        groups = self.attr("groups")
        result = tuple(self.results[0].type.get_shape())
        channel = data.index("C")
        loops = [
            LoopDim(size, granule=geo.c_out // groups if d == channel and groups > 1 else 1)
            for d, size in enumerate(result)
        ]
        per_group = geo.c_in // groups
        loops.append(LoopDim(per_group, Combine.SUM) if groups == 1
                     else LoopDim.whole(per_group, Combine.SUM))
        return ConvSlicer(
            **slicer_fields(self, loops, _conv_operand_axes(data, weight, groups,
                                                             len(self.operands))),
            data_format=data, weight_format=weight, geometry=geo, groups=groups,
            strides=tuple(self.attr("strides")), dilations=tuple(self.attr("dilations")),
            pads=tuple(self.attr("pads")),
        )

    def compute_slice(self, loops, operands):
        """A convolution of the windows with the padding the slice's border rows need;
        the bias joins the partial sums of the first input-channel piece only."""
        slicer = self.slicer()
        x, weight, *bias = upcast(*operands)
        if self.attr("data_format") == "NCHW":
            x = x.transpose(0, 2, 3, 1)
        if self.attr("weight_format") == "HWOI":
            weight = weight.transpose(2, 3, 0, 1)
        _, _, top, bottom = slicer.input_rows(loops.dim(slicer.axis("H")), 0)
        _, _, left, right = slicer.input_rows(loops.dim(slicer.axis("W")), 1)
        groups = self.attr("groups")
        if groups > 1:
            groups = weight.shape[0] // (slicer.geometry.c_out // groups)
        out = conv2d_nhwc(
            np.ascontiguousarray(x), np.ascontiguousarray(weight), self.attr("strides"),
            (top, left, bottom, right), self.attr("dilations"), groups,
        )
        if bias and loops.start[4] == 0:
            out = out + bias[0]
        if self.attr("data_format") == "NCHW":
            out = out.transpose(0, 3, 1, 2)
        return [np.ascontiguousarray(out)]

    def gen_op_code(self, loops):
        """`op_conv` with the geometry and the padding rows of this slice (as
        `compute_slice`), the groups the slice's weight window holds, and whether the
        slice adds the bias (its first input-channel piece)."""
        slicer = self.slicer()
        _, _, top, bottom = slicer.input_rows(loops.dim(slicer.axis("H")), 0)
        _, _, left, right = slicer.input_rows(loops.dim(slicer.axis("W")), 1)
        groups = self.attr("groups")
        if groups > 1:
            out_channels = slicer.back_window(loops)[1].shape[
                self.attr("weight_format").index("O")]
            groups = out_channels // (slicer.geometry.c_out // groups)
        (sh, sw), (dh, dw) = self.attr("strides"), self.attr("dilations")
        return OpCode("op_conv", (
            int(self.attr("data_format") == "NHWC"), int(self.attr("weight_format") == "HWOI"),
            sh, sw, dh, dw, groups, top, left, bottom, right, int(loops.start[4] == 0),
        ))

    def compute(self, x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None = None):
        x, weight = upcast(x, weight)
        if self.attr("data_format") == "NCHW":
            x = x.transpose(0, 2, 3, 1)
        if self.attr("weight_format") == "HWOI":
            weight = weight.transpose(2, 3, 0, 1)
        out = conv2d_nhwc(
            x, weight, self.attr("strides"), self.attr("pads"), self.attr("dilations"),
            self.attr("groups"),
        )
        if bias is not None:
            (bias,) = upcast(bias)
            out = out + bias
        if self.attr("data_format") == "NCHW":
            out = out.transpose(0, 3, 1, 2)
        return [np.ascontiguousarray(out)]


def exact_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`a @ b` of float32 matrices, each element the same whatever the matrices' extents.

    BLAS blocks a float32 product by the sizes of its operands, so an element of a
    sub-matrix product (one slice of a sliced Gemm) can differ in its last bit from the
    same element of the whole product. Products of float32 values are exact in float64
    and a float64 sum of them rounds to the same float32 in any order but in cases of
    probability ~2^-29 per term, so computing in float64 and rounding once makes a slice
    compute what the whole does: the reference, the sliced cmodel and constant folding
    agree bit for bit.
    """
    return np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(np.float32)


def conv2d_nhwc(x, weight, strides, pads, dilations, groups: int,
                matmul=None) -> np.ndarray:
    """Grouped 2-D convolution of NHWC `x` with OIHW `weight`; the result is NHWC.
    `matmul`: the product of patches by weights (default `exact_matmul`, float32; an
    integer convolution passes np.matmul on int64, exact).

    im2col: a strided window view gathers, for every output pixel, the (dilated) input
    patch; each group is then one matrix product of patches by weights (one batched
    matmul over the groups), so no Python loop runs over pixels or groups.
    """
    top, left, bottom, right = pads
    (sh, sw), (dh, dw) = strides, dilations
    c_out, c_per_group, kh, kw = weight.shape
    xp = np.pad(x, ((0, 0), (top, bottom), (left, right), (0, 0)))
    extent = ((kh - 1) * dh + 1, (kw - 1) * dw + 1)
    windows = sliding_window_view(xp, extent, axis=(1, 2))  # [N, H', W', C, ekh, ekw]
    patches = windows[:, ::sh, ::sw, :, ::dh, ::dw]  # [N, OH, OW, C, kh, kw]
    n, oh, ow = patches.shape[:3]
    patches = patches.reshape(n, oh, ow, groups, c_per_group * kh * kw)
    patches = patches.transpose(3, 0, 1, 2, 4).reshape(groups, n * oh * ow, -1)
    kernels = weight.reshape(groups, c_out // groups, c_per_group * kh * kw)
    matmul = matmul or exact_matmul
    out = matmul(patches, kernels.transpose(0, 2, 1))  # [G, N*OH*OW, C_out/G]
    out = out.reshape(groups, n, oh, ow, c_out // groups).transpose(1, 2, 3, 0, 4)
    return out.reshape(n, oh, ow, c_out)


# --------------------------------------------------------------------------------------
# Gemm
# --------------------------------------------------------------------------------------


@tx8be_op
class GemmOp(ProductOp):
    """Batched matrix product `alpha * op(a) @ op(b) + beta * bias`.

    Operands: `a` [..., M, K] ([..., K, M] when `trans_a`), `b` [..., K, N] ([..., N, K]
    when `trans_b`), both of rank >= 2, their leading (batch) dims broadcast like numpy
    matmul; optional `bias`, which broadcasts to the result [..., M, N]. This covers ONNX
    Gemm (2-D, with transposes, alpha, beta and C) and ONNX MatMul (batched).

    Attributes: `trans_a`, `trans_b` (default false) transpose the last two dims of `a`
    and `b`; `alpha`, `beta` (default 1.0) scale the product and the bias.
    """

    name = "tx8be.Gemm"
    OPERANDS: ClassVar[tuple[str, ...]] = ("a", "b", "bias?")
    DTYPES: ClassVar[frozenset[str] | None] = FLOATS

    trans_a = bool_attr(False)
    trans_b = bool_attr(False)
    alpha = float_attr(1.0)
    beta = float_attr(1.0)

    def _matrices(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The shapes of op(a) and op(b) (transposes applied)."""
        shapes = []
        for name, shape in zip(("a", "b"), self.input_shapes()[:2]):
            if len(shape) < 2:
                raise self.fail(f"{name} must have rank >= 2, got rank {len(shape)}")
            if self.attr(f"trans_{name}"):
                shape = (*shape[:-2], shape[-1], shape[-2])
            shapes.append(shape)
        return shapes[0], shapes[1]

    def _result_shape(self) -> tuple[int, ...]:
        a, b = self._matrices()
        if a[-1] != b[-2]:
            raise self.fail(
                f"contraction dims differ: op(a) is {list(a)} (K = {a[-1]}), op(b) is "
                f"{list(b)} (K = {b[-2]})"
            )
        batch = broadcast_shape(a[:-2], b[:-2])
        if batch is None:
            raise self.fail(
                f"batch dims {list(a[:-2])} of a and {list(b[:-2])} of b do not broadcast"
            )
        return (*batch, a[-2], b[-1])

    def verify_op(self) -> None:
        shape = self._result_shape()
        bias = self.operand_named("bias")
        if bias is not None:
            bias_shape = tuple(bias.type.get_shape())
            if broadcast_shape(bias_shape, shape) != shape:
                raise self.fail(
                    f"bias shape {list(bias_shape)} does not broadcast to the result "
                    f"shape {list(shape)}"
                )

    # -- channels (ProductOp) ------------------------------------------------------------
    def output_channel_axis(self) -> int:
        """N, the result's last axis."""
        return len(self.results[0].type.get_shape()) - 1

    def data_channel_axis(self) -> int:
        """K of op(a): the last axis of a, or the one before when `trans_a`."""
        return -2 if self.attr("trans_a") else -1

    def weight_output_axis(self) -> int:
        """N of op(b): the last axis of b, or the one before when `trans_b`."""
        return -2 if self.attr("trans_b") else -1

    def weight_scaled_by_input(self, weight: np.ndarray, scale: np.ndarray) -> np.ndarray:
        """op(a) * s along K is op(a) @ (s * op(b)) along op(b)'s K axis."""
        return _scaled_along(weight, scale, -1 if self.attr("trans_b") else -2)

    def bias_addend_shape(self, bias_shape: tuple[int, ...]) -> tuple[int, ...]:
        """The bias already broadcasts to the result."""
        return bias_shape

    def bias_from_addend(
        self, addend: np.ndarray, out_shape: Sequence[int]
    ) -> np.ndarray | None:
        """Any addend that broadcasts to the result is a Gemm bias."""
        out_shape = tuple(out_shape)
        return addend if broadcast_shape(addend.shape, out_shape) == out_shape else None

    def bias_scale(self) -> float:
        return self.attr("beta")

    def unscaled_bias_attrs(self) -> dict[str, Any]:
        return {"beta": 1.0}

    def attrs_scaled_by(self, factor: float) -> dict[str, Any] | None:
        """s * (alpha * A @ B + beta * bias): the factor goes into alpha (and beta)."""
        attrs = {"alpha": self.attr("alpha") * factor}
        if self.operand_named("bias") is not None:
            attrs["beta"] = self.attr("beta") * factor
        return attrs

    def infer_shapes(self) -> list[TensorType]:
        return [result_type_like(self._result_shape(), self.operands[0].type)]

    def query_op_attr(self):
        return self.op_attr(align_mode=AlignMode.ALIGN, engine=Engine.NE)

    def initial_layout_str(self) -> str:
        """The Tensor class of a, b and the result (seed 003: "Tensor-Tensor-Tensor")."""
        a, b = self.input_shapes()[:2]
        return join_layout_str(tensor_class_layout(s) for s in (a, b, self._result_shape()))

    def infer_layout(self, operand_layouts):
        """Fixed by the attributes, whatever the operands' layouts."""
        return self.initial_layout_str()

    def infer_operand_layouts(self, result_layout):
        """The operands listed in the fixed layout_str; a bias is Tensor-class."""
        return fixed_operand_layouts(self, self.initial_layout_str())

    def view_attributes(self, view):
        """Unit batch dims: the batch dims broadcast like numpy matmul, so operands of
        the result's rank take the view and lower-rank ones (a weight [K, N], a bias)
        keep theirs, as long as the view keeps the matrix dims (the last two)."""
        if not view.keeps_trailing(2):
            return None
        return elementwise_view(self, view)

    def reshaped_operand_attributes(self, index, shape):
        """The rows of `a` may come with any leading dims (batch dims that broadcast like
        numpy matmul, merged or split) when only `a` has them: b a [K, N] matrix, a bias
        of at most one dim, `a` not transposed and its last dim (K) kept. The result's
        rows then carry the same leading dims, in the same order."""
        a_shape, b_shape = self.input_shapes()[:2]
        bias = self.operand_named("bias")
        if index != 0 or self.attr("trans_a") or len(b_shape) != 2:
            return None
        if bias is not None and bias.type.get_num_dims() > 1:
            return None
        if len(shape) < 2 or shape[-1] != a_shape[-1]:
            return None
        return {}

    # -- slicing (seed 003 ShardingInterface): see GemmSlicer --------------------------
    def slicer(self) -> GemmSlicer:
        result = tuple(self.results[0].type.get_shape())
        rank = len(result)
        k_loop, m_loop, n_loop = rank, rank - 2, rank - 1
        axes = []
        for name, rows, cols in (("a", m_loop, k_loop), ("b", k_loop, n_loop)):
            shape = self.operand_named(name).type.get_shape()
            batch = broadcast_axes(shape[:-2], result[:-2])
            matrix = (cols, rows) if self.attr(f"trans_{name}") else (rows, cols)
            axes.append((*batch, *matrix))
        bias = self.operand_named("bias")
        if bias is not None:
            axes.append(broadcast_axes(tuple(bias.type.get_shape()), result))
        k = self._matrices()[0][-1]
        loops = (*(LoopDim(d) for d in result), LoopDim(k, Combine.SUM))
        return GemmSlicer(**slicer_fields(self, loops, axes), has_bias=bias is not None)

    def compute_slice(self, loops, operands):
        a, b, *bias = operands
        first_k = loops.start[-1] == 0
        return self.compute(a, b, *(bias if first_k else ()))

    def gen_op_code(self, loops):
        """`op_gemm`: transposes, whether the slice adds the bias (its first K piece),
        alpha and beta."""
        return OpCode(
            "op_gemm",
            (int(self.attr("trans_a")), int(self.attr("trans_b")), int(loops.start[-1] == 0)),
            (self.attr("alpha"), self.attr("beta")),
        )

    def compute(self, a: np.ndarray, b: np.ndarray, bias: np.ndarray | None = None):
        a, b = upcast(a, b)
        if self.attr("trans_a"):
            a = np.swapaxes(a, -1, -2)
        if self.attr("trans_b"):
            b = np.swapaxes(b, -1, -2)
        out = exact_matmul(a, b)
        if self.attr("alpha") != 1.0:
            out = out * np.float32(self.attr("alpha"))
        if bias is not None:
            (bias,) = upcast(bias)
            out = out + np.float32(self.attr("beta")) * bias
        return [np.asarray(out)]


# --------------------------------------------------------------------------------------
# Slicing
# --------------------------------------------------------------------------------------


def _conv_operand_axes(data: str, weight: str, groups: int, operands: int):
    """Conv's operand dims -> loop dims (the result's dims, then input channels at 4): the
    input follows N, H, W and its channels follow the reduction (a grouped Conv's, the
    output channels: a slice reads the channels of its groups); the weight's O follows
    the output channels and its I the reduction; the bias the output channels."""
    loop = {k: data.index(k) for k in "NCHW"}
    channel_loop = loop["C"] if groups > 1 else 4
    x = [None] * 4
    for k in "NHW":
        x[data.index(k)] = loop[k]
    x[data.index("C")] = channel_loop
    w = [None] * 4
    w[weight.index("O")] = loop["C"]
    w[weight.index("I")] = None if groups > 1 else 4
    axes = [tuple(x), tuple(w)]
    if operands > 2:
        axes.append((loop["C"],))
    return axes


@dataclass(frozen=True)
class ConvSlicer(Slicer):
    """Conv's loop dims: the result's dims in its own order (N, C_out, OH, OW for NCHW;
    N, OH, OW, C_out for NHWC), then the input channels of one group (a reduction: partial
    sums add up). A slice of output rows reads the input rows under its kernel windows:
    a halo of (kernel extent - stride) rows, clamped at the borders where the padding is.
    A grouped Conv cuts its output channels on whole groups, so a slice reads the input
    channels of its groups only; its input channels are not cut (only one group's
    channels are contiguous in a reduction window)."""

    data_format: str
    weight_format: str
    geometry: ConvGeometry
    groups: int
    strides: tuple[int, int]
    dilations: tuple[int, int]
    pads: tuple[int, int, int, int]

    def axis(self, dim: str) -> int:
        """Where N, C, H or W is in the input and the result."""
        return self.data_format.index(dim)

    def input_rows(self, out: tuple[int, int], spatial: int) -> tuple[int, int, int, int]:
        """For output rows [a, b) along spatial axis 0 (H) or 1 (W): the input rows read
        [lo, hi) and the padding rows the kernel adds before and after them."""
        geo = self.geometry
        size, k = (geo.h, geo.w)[spatial], (geo.kh, geo.kw)[spatial]
        stride, dilation = self.strides[spatial], self.dilations[spatial]
        first = out[0] * stride - self.pads[spatial]
        end = (out[1] - 1) * stride - self.pads[spatial] + (k - 1) * dilation + 1
        lo = min(max(first, 0), size)
        hi = max(min(end, size), lo)
        before = max(min(lo, end) - first, 0)  # 0 when the rows start past the input
        return lo, hi, before, (end - first) - before - (hi - lo)

    def _channel_windows(self, loops: Window) -> tuple[tuple[int, int], tuple[int, int]]:
        """(input channels, weight input channels) a slice reads."""
        if self.groups == 1:
            return loops.dim(4), loops.dim(4)
        per_in = self.geometry.c_in // self.groups
        per_out = self.geometry.c_out // self.groups
        c = self.axis("C")
        first, last = loops.start[c] // per_out, -(-loops.stop[c] // per_out)
        return (first * per_in, last * per_in), (0, per_in)

    def back_window(self, loops):
        channels, weight_channels = self._channel_windows(loops)
        data = [None] * 4
        data[self.axis("N")] = loops.dim(self.axis("N"))
        data[self.axis("C")] = channels
        data[self.axis("H")] = self.input_rows(loops.dim(self.axis("H")), 0)[:2]
        data[self.axis("W")] = self.input_rows(loops.dim(self.axis("W")), 1)[:2]
        weight = [(0, d) for d in self.operands[1]]
        weight[self.weight_format.index("O")] = loops.dim(self.axis("C"))
        weight[self.weight_format.index("I")] = weight_channels
        windows = [Window.of(data), Window.of(weight)]
        if len(self.operands) > 2:
            windows.append(Window.of([loops.dim(self.axis("C"))]))
        return tuple(windows)

    def work(self, shape):
        """An implicit GEMM per group on the NE: (N*OH*OW) x (C_in/groups * kh * kw) x
        (C_out/groups), on the slice's share."""
        geo = self.geometry
        out_channels = shape[self.axis("C")]
        groups = 1
        if self.groups > 1:
            groups = max(1, -(-out_channels // (geo.c_out // self.groups)))
        pixels = shape[self.axis("N")] * shape[self.axis("H")] * shape[self.axis("W")]
        matmul = Matmul(groups, pixels, shape[4] * geo.kh * geo.kw, out_channels // groups)
        bias = pixels * out_channels if len(self.operands) > 2 else 0
        return Work(Engine.NE, self.dtype, matmuls=(matmul,), flops=2 * matmul.macs + bias)


@dataclass(frozen=True)
class GemmSlicer(Slicer):
    """Gemm's loop dims: the result's (batch..., M, N), then K (partial products add up;
    alpha scales each partial, the bias joins the first K piece only). op(a) follows
    (batch, M, K), op(b) (batch, K, N), both with numpy matmul broadcasting of the batch
    dims; the bias broadcasts to the result."""

    has_bias: bool

    def work(self, shape):
        """Batched (M x K) @ (K x N) on the NE, K = the slice's K piece."""
        *batch, m, n, k = shape
        matmul = Matmul(volume(batch), m, k, n)
        bias = volume(shape[:-1]) if self.has_bias else 0
        return Work(Engine.NE, self.dtype, matmuls=(matmul,), flops=2 * matmul.macs + bias)


OPS = [ConvOp, GemmOp]
