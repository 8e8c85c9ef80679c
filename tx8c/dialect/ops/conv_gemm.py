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

Low-precision floats (f16, bf16) are computed in fp32 and rounded to the result type.
Quantised (integer) convolutions and matmuls are separate ops, so these take floats only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from xdsl.dialects.builtin import TensorType

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
from tx8c.interfaces import Engine
from tx8c.interfaces.shape_inference import elementwise_view, fixed_operand_layouts

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
class ConvOp(Tx8beOp):
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


def conv2d_nhwc(x, weight, strides, pads, dilations, groups: int) -> np.ndarray:
    """Grouped 2-D convolution of NHWC `x` with OIHW `weight`; the result is NHWC.

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
    out = np.matmul(patches, kernels.transpose(0, 2, 1))  # [G, N*OH*OW, C_out/G]
    out = out.reshape(groups, n, oh, ow, c_out // groups).transpose(1, 2, 3, 0, 4)
    return out.reshape(n, oh, ow, c_out)


# --------------------------------------------------------------------------------------
# Gemm
# --------------------------------------------------------------------------------------


@tx8be_op
class GemmOp(Tx8beOp):
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

    def compute(self, a: np.ndarray, b: np.ndarray, bias: np.ndarray | None = None):
        a, b = upcast(a, b)
        if self.attr("trans_a"):
            a = np.swapaxes(a, -1, -2)
        if self.attr("trans_b"):
            b = np.swapaxes(b, -1, -2)
        out = np.matmul(a, b)
        if self.attr("alpha") != 1.0:
            out = out * np.float32(self.attr("alpha"))
        if bias is not None:
            (bias,) = upcast(bias)
            out = out + np.float32(self.attr("beta")) * bias
        return [np.asarray(out)]


OPS = [ConvOp, GemmOp]
