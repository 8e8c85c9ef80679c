"""CT normalisation ops: BatchNorm_Inference, LayerNorm, RMSNorm and Softmax.

All run on the CT engine. BatchNorm_Inference follows seed 003 to the letter: operands
(input, scale, offset, mean, variance), input of rank 2 to 4, an ALIGN op that needs its
data preset to the NPU's layout. The others read compact and channel-aligned data alike
(BOTH).

Layout (seed 001, seed 003's BatchNorm inferLayout): every op of the family keeps the
layout of its input; the 1-D parameters are Tensor-class.

Low-precision floats (f16, bf16) are computed in fp32 and rounded to the result type.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import TensorType

from tx8c.dialect.attrs import AlignMode
from tx8c.dialect.base import (
    FLOATS,
    Tx8beOp,
    float_attr,
    int_attr,
    tx8be_op,
)
from tx8c.dialect.ops._util import broadcast_shape, normalize_axis, upcast
from tx8c.dialect.types import short_name
from tx8c.interfaces.oplib import LOW_PRECISION, OpCode, ct_work, volume
from tx8c.interfaces.shape_inference import (
    fit_to_operands,
    has_rank,
    keep_operand_layout,
    moved_axis,
    view_axis_attributes,
)
from tx8c.interfaces.sharding import LoopDim, Slicer, slicer_fields


def _axis(op: Tx8beOp) -> int:
    """The op's `axis` attribute as 0..rank-1 for its first operand."""
    rank = len(op.input_shapes()[0])
    axis = normalize_axis(op.attr("axis"), rank)
    if axis is None:
        raise op.fail(f"axis {op.attr('axis')} is out of range for an input of rank {rank}")
    return axis


def _check_epsilon(op: Tx8beOp) -> None:
    if op.attr("epsilon") < 0:
        raise op.fail(f"epsilon must be non-negative, got {op.attr('epsilon')}")


class _NormFamilyOp(Tx8beOp):
    """What every op of this file shares: the result has the input's type, and the layout
    rule of the family (module docstring)."""

    OP_ATTR: ClassVar[dict] = {"align_mode": AlignMode.BOTH}

    def infer_shapes(self) -> list[TensorType]:
        return [self.operands[0].type]

    def query_op_attr(self):
        return self.op_attr(**self.OP_ATTR)

    infer_layout = keep_operand_layout
    infer_operand_layouts = fit_to_operands


# --------------------------------------------------------------------------------------
# BatchNorm_Inference
# --------------------------------------------------------------------------------------


@tx8be_op
class BatchNormInferenceOp(_NormFamilyOp):
    """Batch normalisation with stored statistics (ONNX BatchNormalization, inference).

    `output = (input - mean) / sqrt(variance + epsilon) * scale + offset`, where scale,
    offset, mean and variance are 1-D [C] and broadcast along the channel axis.

    The input has rank 2, 3 or 4 (seed 003) and any float type; the four parameters share
    one float type, which is the input's or f32 (seed 003: "the other inputs are fp32").

    Attributes: `epsilon` (default 1e-5) keeps the division finite; `axis` is the channel
    axis (default 1, NCHW; NHWC data uses -1 or 3).
    """

    name = "tx8be.BatchNorm_Inference"
    OP_ATTR: ClassVar[dict] = {"align_mode": AlignMode.ALIGN, "need_preset_to_npu": True}
    OPERANDS: ClassVar[tuple[str, ...]] = ("input", "scale", "offset", "mean", "variance")
    DTYPES: ClassVar[frozenset[str] | None] = FLOATS
    DATA_OPERANDS: ClassVar[tuple[int, ...] | None] = (0,)
    PARAMS: ClassVar[tuple[str, ...]] = ("scale", "offset", "mean", "variance")

    epsilon = float_attr(1e-5)
    axis = int_attr(1)

    def verify_op(self) -> None:
        shape = self.input_shapes()[0]
        if not 2 <= len(shape) <= 4:
            raise self.fail(f"input must have rank 2, 3 or 4, got rank {len(shape)}")
        axis = _axis(self)
        _check_epsilon(self)
        channels = shape[axis]
        for i, name in enumerate(self.PARAMS, start=1):
            got = list(self.input_shapes()[i])
            if got != [channels]:
                raise self.fail(
                    f"{name} (operand #{i}) must have shape [{channels}] (the input's dim "
                    f"{axis}), got {got}"
                )
        self._verify_param_dtypes()

    def _verify_param_dtypes(self) -> None:
        types = [short_name(o.type.get_element_type()) for o in self.operands]
        params = sorted(set(types[1:]))
        if len(params) != 1 or params[0] not in {types[0], "f32"}:
            raise self.fail(
                f"scale, offset, mean and variance must share the input's element type "
                f"({types[0]}) or f32, got {', '.join(types[1:])}"
            )

    def permute_attributes(self, perm):
        """The channel axis moves with the data; the 1-D parameters stay."""
        if not has_rank(self, perm):
            return None
        return {"axis": moved_axis(_axis(self), perm)}

    def compute(self, x, scale, offset, mean, variance):
        x, scale, offset, mean, variance = upcast(x, scale, offset, mean, variance)
        axis = _axis(self)
        along = [1] * x.ndim
        along[axis] = -1  # the parameters broadcast along the channel axis

        def param(p):
            return p.astype(np.float32).reshape(along)

        inv_std = 1 / np.sqrt(param(variance) + np.float32(self.attr("epsilon")))
        return [(x - param(mean)) * (inv_std * param(scale)) + param(offset)]

    def gen_op_code(self, loops):
        return OpCode("op_batchnorm", (_axis(self),), (self.attr("epsilon"),))

    # -- slicing (seed 003, BatchNorm's tileShardingSplit): see BatchNormSlicer
    def slicer(self):
        axis = _axis(self)
        shape = self.input_shapes()[0]
        loops = [LoopDim(d, shard=i == axis, split=i != axis) for i, d in enumerate(shape)]
        axes = [tuple(range(len(shape))), *[(axis,)] * len(self.PARAMS)]
        return BatchNormSlicer(**slicer_fields(self, loops, axes), channel_axis=axis)


# --------------------------------------------------------------------------------------
# LayerNorm and RMSNorm
# --------------------------------------------------------------------------------------


def _check_affine(op: Tx8beOp, axis: int, names: tuple[str, ...]) -> None:
    """The optional scale/bias operands broadcast to the normalised shape."""
    normalized = op.input_shapes()[0][axis:]
    for name in names:
        value = op.operand_named(name)
        if value is None:
            continue
        shape = tuple(value.type.get_shape())
        if broadcast_shape(shape, normalized) != normalized:
            raise op.fail(
                f"{name} shape {list(shape)} does not broadcast to the normalised shape "
                f"{list(normalized)} (input dims {axis}..)"
            )


class _LastDimsNorm(_NormFamilyOp):
    """A normalisation over the dims axis..end of its input, with optional affine operands."""

    DTYPES: ClassVar[frozenset[str] | None] = FLOATS
    AFFINE: ClassVar[tuple[str, ...]] = ()

    def verify_op(self) -> None:
        axis = _axis(self)
        _check_epsilon(self)
        _check_affine(self, axis, self.AFFINE)

    def permute_attributes(self, perm):
        """Only when the normalised dims stay the trailing block (their order inside it
        does not matter to the statistics; the affine operands are data operands and are
        rearranged with it): NCHW -> NHWC keeps axis 1 or 0, not axis 2 or 3."""
        if not has_rank(self, perm):
            return None
        normalised = self.reduced_axes()
        moved = {moved_axis(a, perm) for a in normalised}
        return {} if moved == set(normalised) else None

    def reduced_axes(self) -> tuple[int, ...]:
        rank = len(self.input_shapes()[0])
        return tuple(range(_axis(self), rank))

    def view_attributes(self, view):
        """The first normalised dim follows its dim; inserted unit dims inside the
        normalised block change no statistic, and the affine operands (of lower rank)
        broadcast against the same trailing dims."""
        return view_axis_attributes(self, view)

    # -- slicing: the normalised dims are whole in every slice (no two-pass form yet);
    # the rows may be cut freely. The affine operands broadcast to the normalised dims.
    PASSES: ClassVar[tuple[int, int]] = (0, 0)
    """(simple passes over a slice, special operations per row)."""

    def slicer(self):
        arith, row_special = self.PASSES
        return NormSlicer.over(self, self.reduced_axes(), arith, 0, row_special)

    C_KERNEL: ClassVar[str] = ""
    """The C runtime's kernel (its params: the axis, the number of affine operands, and
    epsilon)."""

    def gen_op_code(self, loops):
        return OpCode(self.C_KERNEL, (_axis(self), len(self.operands) - 1),
                      (self.attr("epsilon"),))


@tx8be_op
class LayerNormOp(_LastDimsNorm):
    """Layer normalisation (ONNX LayerNormalization, its first output).

    `output = (x - mean(x)) / sqrt(var(x) + epsilon) * scale + bias`, mean and (biased)
    variance taken over the dims `axis`..end. `scale` and `bias` are optional and
    broadcast to the normalised shape input.shape[axis:]; a bias needs a scale before it
    (pass ones for a bias alone).

    Attributes: `axis` (default -1), the first normalised dim; `epsilon` (default 1e-5).
    """

    name = "tx8be.LayerNorm"
    C_KERNEL: ClassVar[str] = "op_layernorm"
    OPERANDS: ClassVar[tuple[str, ...]] = ("input", "scale?", "bias?")
    AFFINE: ClassVar[tuple[str, ...]] = ("scale", "bias")
    PASSES: ClassVar[tuple[int, int]] = (7, 1)
    """mean, subtract, square, mean, normalise, scale, shift; one rsqrt per row."""

    axis = int_attr(-1)
    epsilon = float_attr(1e-5)

    def compute(self, x, *affine):
        x, *affine = upcast(x, *affine)
        axes = self.reduced_axes()
        centred = x - x.mean(axis=axes, keepdims=True)
        variance = np.mean(centred * centred, axis=axes, keepdims=True)
        out = centred / np.sqrt(variance + np.float32(self.attr("epsilon")))
        if len(affine) >= 1:
            out = out * affine[0]
        if len(affine) == 2:
            out = out + affine[1]
        return [out]


@tx8be_op
class RMSNormOp(_LastDimsNorm):
    """Root-mean-square normalisation (ONNX RMSNormalization, opset 23).

    `output = x / sqrt(mean(x^2) + epsilon) * scale`, the mean taken over the dims
    `axis`..end; the optional `scale` broadcasts to the normalised shape.

    Attributes: `axis` (default -1); `epsilon` (default 1e-6, the value LLaMA-style models
    use; ONNX's default is 1e-5, so imported models set it explicitly).
    """

    name = "tx8be.RMSNorm"
    C_KERNEL: ClassVar[str] = "op_rmsnorm"
    OPERANDS: ClassVar[tuple[str, ...]] = ("input", "scale?")
    AFFINE: ClassVar[tuple[str, ...]] = ("scale",)
    PASSES: ClassVar[tuple[int, int]] = (4, 1)
    """square, mean, normalise, scale; one rsqrt per row."""

    axis = int_attr(-1)
    epsilon = float_attr(1e-6)

    def compute(self, x, *scale):
        x, *scale = upcast(x, *scale)
        mean_square = np.mean(x * x, axis=self.reduced_axes(), keepdims=True)
        out = x / np.sqrt(mean_square + np.float32(self.attr("epsilon")))
        if scale:
            out = out * scale[0]
        return [out]


# --------------------------------------------------------------------------------------
# Softmax
# --------------------------------------------------------------------------------------


@tx8be_op
class SoftmaxOp(_NormFamilyOp):
    """`exp(x) / sum(exp(x))` along `axis` (default -1), like ONNX Softmax (opset >= 13).

    Computed as exp(x - max(x)) so that large inputs do not overflow.
    """

    name = "tx8be.Softmax"
    OPERANDS: ClassVar[tuple[str, ...]] = ("input",)
    DTYPES: ClassVar[frozenset[str] | None] = FLOATS

    axis = int_attr(-1)

    def verify_op(self) -> None:
        _axis(self)

    def permute_attributes(self, perm):
        """The one softmax axis moves with the data (any permutation)."""
        if not has_rank(self, perm):
            return None
        return {"axis": moved_axis(_axis(self), perm)}

    def view_attributes(self, view):
        """The softmax axis follows its dim."""
        return view_axis_attributes(self, view)

    # -- slicing: the softmax axis is whole in every slice (no two-pass form yet);
    # max, subtract, sum, divide (simple) and exp (special) over the slice
    def slicer(self):
        return NormSlicer.over(self, (_axis(self),), arith=4, special=1, row_special=0)

    def compute(self, x):
        (x,) = upcast(x)
        if x.size == 0:  # nothing to normalise (and max() of an empty axis fails)
            return [x]
        axis = _axis(self)
        e = np.exp(x - x.max(axis=axis, keepdims=True))
        return [e / e.sum(axis=axis, keepdims=True)]

    def gen_op_code(self, loops):
        return OpCode("op_softmax", (_axis(self),))


# --------------------------------------------------------------------------------------
# Slicing
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BatchNormSlicer(Slicer):
    """Seed 003's BatchNorm: the input is sharded over tiles along C only and split in
    time along every dim but C, so each tile keeps the parameters of its channels for all
    its steps: the four 1-D parameters follow the channel loop dim and are never split."""

    channel_axis: int

    def work(self, shape):
        """Seed 003's flow: variance + epsilon and rsqrt on the C parameters (special),
        then (x - mean) * inv_std * scale + offset: four passes over the slice."""
        channels = shape[self.channel_axis]
        work = ct_work(self.dtype, shape, arith=4)
        return replace(work, ct_arith=work.ct_arith + channels, ct_special=channels,
                       flops=work.flops + 2 * channels)

    def imm_bytes(self, shape, config):
        """Seed 003: a non-fp32 input is converted to fp32 in two scratch buffers of the
        slice (2 x sizeof(input) in fp32); an fp32 one needs the C factors only."""
        if self.dtype in LOW_PRECISION:
            return 2 * self.scratch(shape, "f32", config)
        return 2 * 4 * shape[self.channel_axis]


@dataclass(frozen=True)
class NormSlicer(Slicer):
    """A normalisation over the dims `normalised` (whole in every slice: no two-pass form
    yet) of each row: `arith` simple and `special` special passes over the slice's
    elements, `row_special` special operations per row (an rsqrt)."""

    normalised: tuple[int, ...]
    arith: int
    special: int
    row_special: int

    @staticmethod
    def over(op, normalised, arith: int, special: int, row_special: int) -> NormSlicer:
        shape = op.input_shapes()[0]
        loops = [LoopDim.whole(d) if i in normalised else LoopDim(d)
                 for i, d in enumerate(shape)]
        return NormSlicer(**slicer_fields(op, loops), normalised=tuple(normalised),
                          arith=arith, special=special, row_special=row_special)

    def rows(self, shape) -> int:
        return volume(shape) // max(1, volume(shape[d] for d in self.normalised))

    def work(self, shape):
        work = ct_work(self.dtype, shape, arith=self.arith, special=self.special)
        extra = self.row_special * self.rows(shape)
        return replace(work, ct_special=work.ct_special + extra, flops=work.flops + extra)

    def imm_bytes(self, shape, config):
        """Two fp32 statistics per row, and an fp32 copy of a low-precision slice."""
        copy = self.scratch(shape, "f32", config) if self.dtype in LOW_PRECISION else 0
        return copy + 2 * 4 * self.rows(shape)


OPS = [BatchNormInferenceOp, LayerNormOp, RMSNormOp, SoftmaxOp]
