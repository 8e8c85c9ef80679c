"""Integer NE ops: MatMulInteger and ConvInteger (exact int32 accumulation).

Quantised models compute integer matrix products and convolutions whose int32 result
must be exact: a float32 Gemm or Conv is not (its sums round past 2^24), so these are ops
of their own, the NE's integer path (seed 003: INT8 at 256 TOPS, int32 accumulators).
Zero points are subtracted by the importer before these ops (an int32 Sub), so the
operands are the centred integers: i8, or i32 (uint8 data and centred values are carried
in i32). The result is i32, wrapping on overflow as the hardware's accumulator does.

Both run on the NE and need channel-aligned (ALIGN) data like Gemm and Conv. ConvInteger
works in NCHW / OIHW only: it does not take the NHWC preset (permute_attributes gives
None), a departure from seed 002 until the int8 backend path exists.

Layout (seeds 001, 003): fixed by the op like Gemm's and Conv's: MatMulInteger lists the
Tensor class of a, b and the result, ConvInteger "NCHW-OIHW-NCHW".

Slicing: Gemm's and Conv's slicers (GemmSlicer, ConvSlicer): the result's dims, then the
contraction (K, or the input channels) whose partial int32 sums add up (wrapping like the
accumulator, so the pieces' sum is the whole's).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import TensorType, i32

from tx8c.dialect.attrs import AlignMode
from tx8c.dialect.base import Tx8beOp, int_attr, ints_attr, tx8be_op
from tx8c.dialect.layout import join_layout_str, tensor_class_layout
from tx8c.dialect.ops._util import broadcast_shape
from tx8c.dialect.ops.conv_gemm import ConvGeometry, ConvSlicer, GemmSlicer, conv2d_nhwc
from tx8c.interfaces import Engine
from tx8c.interfaces.oplib import OpCode
from tx8c.interfaces.shape_inference import fixed_operand_layouts
from tx8c.interfaces.sharding import Combine, LoopDim, broadcast_axes, slicer_fields

INTEGER_OPERANDS = frozenset({"i8", "i32"})


class _IntegerNeOp(Tx8beOp):
    """Two integer operands (i8 or i32, the same type), an i32 result."""

    DTYPES: ClassVar[frozenset[str] | None] = INTEGER_OPERANDS

    def query_op_attr(self):
        return self.op_attr(align_mode=AlignMode.ALIGN, engine=Engine.NE)

    def infer_layout(self, operand_layouts):
        """Fixed by the op, whatever the operands' layouts."""
        return self.initial_layout_str()

    def infer_operand_layouts(self, result_layout):
        return fixed_operand_layouts(self, self.initial_layout_str())


@tx8be_op
class MatMulIntegerOp(_IntegerNeOp):
    """Batched integer matrix product `a @ b` with an exact int32 result (ONNX
    MatMulInteger after its zero points are subtracted).

    `a` [..., M, K] and `b` [..., K, N], both of rank >= 2 and one integer type; their
    batch dims broadcast like numpy's matmul. The result is [..., M, N] i32.
    """

    name = "tx8be.MatMulInteger"
    OPERANDS: ClassVar[tuple[str, ...]] = ("a", "b")

    def result_shape(self) -> tuple[int, ...]:
        a, b = self.input_shapes()
        if len(a) < 2 or len(b) < 2:
            raise self.fail(f"a and b must have rank >= 2, got {list(a)} and {list(b)}")
        if a[-1] != b[-2]:
            raise self.fail(f"contraction dims differ: a is {list(a)}, b is {list(b)}")
        batch = broadcast_shape(a[:-2], b[:-2])
        if batch is None:
            raise self.fail(f"batch dims {list(a[:-2])} and {list(b[:-2])} do not broadcast")
        return (*batch, a[-2], b[-1])

    def verify_op(self) -> None:
        self.result_shape()

    def infer_shapes(self) -> list[TensorType]:
        return [TensorType(i32, list(self.result_shape()))]

    def initial_layout_str(self) -> str:
        a, b = self.input_shapes()
        return join_layout_str(tensor_class_layout(s) for s in (a, b, self.result_shape()))

    def slicer(self) -> GemmSlicer:
        result = self.result_shape()
        rank = len(result)
        k_loop, m_loop, n_loop = rank, rank - 2, rank - 1
        a, b = self.input_shapes()
        axes = [(*broadcast_axes(a[:-2], result[:-2]), m_loop, k_loop),
                (*broadcast_axes(b[:-2], result[:-2]), k_loop, n_loop)]
        loops = (*(LoopDim(d) for d in result), LoopDim(a[-1], Combine.SUM))
        return GemmSlicer(**slicer_fields(self, loops, axes), has_bias=False)

    def compute(self, a: np.ndarray, b: np.ndarray) -> list[np.ndarray]:
        product = np.matmul(a.astype(np.int64), b.astype(np.int64))
        return [product.astype(np.int32)]  # wraps like an int32 accumulator

    def gen_op_code(self, loops):
        """`op_gemm`'s integer path (no transposes, bias or alpha)."""
        return OpCode("op_gemm", (0, 0, 0), (1.0, 0.0))


@tx8be_op
class ConvIntegerOp(_IntegerNeOp):
    """2-D integer convolution with an exact int32 result (ONNX ConvInteger after its
    zero points are subtracted; the padding is then 0).

    `input` [N, C_in, H, W] (NCHW), `weight` [C_out, C_in/groups, kh, kw] (OIHW), one
    integer type. Attributes as tx8be.Conv: `strides` [sh, sw], `pads` [top, left, bottom,
    right], `dilations` [dh, dw], `groups`. The result is [N, C_out, OH, OW] i32.
    """

    name = "tx8be.ConvInteger"
    OPERANDS: ClassVar[tuple[str, ...]] = ("input", "weight")

    strides = ints_attr([1, 1])
    pads = ints_attr([0, 0, 0, 0])
    dilations = ints_attr([1, 1])
    groups = int_attr(1)

    def result_shape(self) -> tuple[int, ...]:
        geo = self.geometry()
        return (geo.n, geo.c_out, geo.oh, geo.ow)

    def geometry(self) -> ConvGeometry:
        x, w = self.input_shapes()
        if len(x) != 4 or len(w) != 4:
            raise self.fail(f"input and weight must have rank 4, got {list(x)} and {list(w)}")
        for name, length, lowest in (("strides", 2, 1), ("dilations", 2, 1), ("pads", 4, 0)):
            values = self.attr(name)
            if len(values) != length or any(v < lowest for v in values):
                raise self.fail(f"{name} must be {length} values >= {lowest}, got "
                                f"{list(values)}")
        groups = self.attr("groups")
        n, c_in, h, width = x
        c_out, per_group, kh, kw = w
        if groups < 1 or c_in % groups or c_out % groups or per_group != c_in // groups:
            raise self.fail(f"{c_in} input and {c_out} output channels with {per_group} "
                            f"per group do not fit groups = {groups}")
        top, left, bottom, right = self.attr("pads")
        (sh, sw), (dh, dw) = self.attr("strides"), self.attr("dilations")
        extent = ((kh - 1) * dh + 1, (kw - 1) * dw + 1)
        padded = (h + top + bottom, width + left + right)
        if extent[0] > padded[0] or extent[1] > padded[1]:
            raise self.fail(f"kernel {kh}x{kw} does not fit in the padded input "
                            f"{padded[0]}x{padded[1]}")
        oh, ow = (padded[0] - extent[0]) // sh + 1, (padded[1] - extent[1]) // sw + 1
        return ConvGeometry(n, c_in, h, width, c_out, kh, kw, oh, ow)

    def verify_op(self) -> None:
        self.result_shape()

    def infer_shapes(self) -> list[TensorType]:
        return [TensorType(i32, list(self.result_shape()))]

    def initial_layout_str(self) -> str:
        return join_layout_str(("NCHW", "OIHW", "NCHW"))

    def permute_attributes(self, perm):
        """NCHW / OIHW only: ConvInteger has no NHWC form yet (module docstring), so it
        never runs permuted."""
        return None

    def slicer(self) -> ConvSlicer:
        geo, groups = self.geometry(), self.attr("groups")
        loops = [LoopDim(geo.n),
                 LoopDim(geo.c_out, granule=geo.c_out // groups if groups > 1 else 1),
                 LoopDim(geo.oh), LoopDim(geo.ow)]
        per_group = geo.c_in // groups
        loops.append(LoopDim(per_group, Combine.SUM) if groups == 1
                     else LoopDim.whole(per_group, Combine.SUM))
        channel = 1 if groups > 1 else 4
        axes = [(0, channel, 2, 3), (1, None if groups > 1 else 4, None, None)]
        return ConvSlicer(
            **slicer_fields(self, loops, axes), data_format="NCHW", weight_format="OIHW",
            geometry=geo, groups=groups, strides=tuple(self.attr("strides")),
            dilations=tuple(self.attr("dilations")), pads=tuple(self.attr("pads")),
        )

    def compute_slice(self, loops, operands):
        """The integer convolution of the windows with the zero padding the slice's
        border rows need (ConvSlicer.input_rows)."""
        slicer = self.slicer()
        _, _, top, bottom = slicer.input_rows(loops.dim(2), 0)
        _, _, left, right = slicer.input_rows(loops.dim(3), 1)
        x, weight = operands
        groups = self.attr("groups")
        if groups > 1:  # the slice's whole groups
            groups = weight.shape[0] // (slicer.geometry.c_out // groups)
        return [self._convolve(x, weight, (top, left, bottom, right), groups)]

    def gen_op_code(self, loops):
        """`op_conv`'s integer path (NCHW, OIHW, no bias) with the padding rows and the
        groups of this slice, as `compute_slice`."""
        slicer = self.slicer()
        _, _, top, bottom = slicer.input_rows(loops.dim(2), 0)
        _, _, left, right = slicer.input_rows(loops.dim(3), 1)
        groups = self.attr("groups")
        if groups > 1:
            out_channels = slicer.back_window(loops)[1].shape[0]
            groups = out_channels // (slicer.geometry.c_out // groups)
        (sh, sw), (dh, dw) = self.attr("strides"), self.attr("dilations")
        return OpCode("op_conv", (0, 0, sh, sw, dh, dw, groups, top, left, bottom, right, 0))

    def compute(self, x: np.ndarray, weight: np.ndarray) -> list[np.ndarray]:
        return [self._convolve(x, weight, self.attr("pads"), self.attr("groups"))]

    def _convolve(self, x, weight, pads, groups) -> np.ndarray:
        out = conv2d_nhwc(
            x.astype(np.int64).transpose(0, 2, 3, 1), weight.astype(np.int64),
            self.attr("strides"), pads, self.attr("dilations"), groups, matmul=np.matmul,
        )
        return np.ascontiguousarray(out.transpose(0, 3, 1, 2)).astype(np.int32)


OPS = [MatMulIntegerOp, ConvIntegerOp]
