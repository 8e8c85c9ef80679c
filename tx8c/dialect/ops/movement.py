"""Data-movement ops: Reshape, Transpose, Relabel, BroadCast, Slice, Concatenate, Split,
Tile, Pad.

These ops only move elements around, so they accept every element type and compute in
the operand's own dtype (no fp32 upcast: nothing is rounded). Their shapes are static:
attributes that ONNX takes as tensor inputs (Reshape's shape, Slice's starts/ends, Pad's
pads, ...) are attributes here, resolved by the importer.

Alignment (seed 000): Transpose, Concatenate and Pad are ALIGN-only; Slice is ALIGN
except for one case (`SliceOp.query_op_attr`); a Relabel runs in the families where it
moves no bytes; the others are BOTH. Concatenate and Pad need NHWC data (seed 002).
Reshape runs on the LSU (TDMA `op_reshape`, seed 003), a Relabel on no engine (it is an
alias of its operand's bytes), the others on CT.

Relabels (issue 15): Reshape, Transpose and Relabel state the reordering they perform
(`element_map()`), from which the layout stage decides whether it moves bytes; Split and
the other ops that can run on a rank view say so with `view_attributes`.

Layout (seed 001):
- Slice, Concatenate, Split, Tile and Pad keep the rank and the layout of their data, in
  both directions (MovementOp's rule);
- Reshape and BroadCast keep a CNN layout forward only when the rank is unchanged (else
  the result is Tensor-class) and cannot infer backward (seed 001);
- Transpose permutes a CNN layout: NCHW <-> NHWC by (0,2,3,1) / (0,3,1,2), OIHW <-> HWOI
  by (2,3,0,1), and keeps it under the identity; any other result is Tensor-class.
  Backward it asks its operand only for a CNN layout that its permutation turns into the
  result's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import TensorType

from tx8c.dialect.attrs import AlignMode
from tx8c.dialect.base import (
    ALL_DTYPES,
    INTS,
    Tx8beOp,
    float_attr,
    int_attr,
    ints_attr,
    result_type_like,
    str_attr,
    tx8be_op,
)
from tx8c.dialect.layout import UNKNOWN, tensor_class_layout
from tx8c.dialect.ops._util import broadcast_shape, normalize_axis
from tx8c.dialect.relabel import ViewMap, relabel_families
from tx8c.dialect.types import short_name
from tx8c.interfaces.oplib import Engine, OpAttr
from tx8c.interfaces.shape_inference import (
    cannot_infer_backward,
    fit_to_operands,
    has_rank,
    inverse_permutation,
    keep_operand_layout,
    moved_axis,
    permute_layout,
    permute_per_dim,
    result_shape,
    view_axis_attributes,
)


class MovementOp(Tx8beOp):
    """One data operand of any element type; results have the operand's element type."""

    OPERANDS: ClassVar[tuple[str, ...]] = ("input",)
    DTYPES: ClassVar[frozenset[str] | None] = ALL_DTYPES

    def input_shape(self) -> tuple[int, ...]:
        return tuple(self.operands[0].type.get_shape())

    def result_like_input(self, shape: Sequence[int]) -> TensorType:
        return result_type_like(shape, self.operands[0].type)

    def axis_in_range(self, axis: int, rank: int, what: str = "axis") -> int:
        """`axis` as 0..rank-1; fails naming `what` when it is out of range."""
        normalized = normalize_axis(axis, rank)
        if normalized is None:
            raise self.fail(f"{what} {axis} is out of range for rank {rank}")
        return normalized

    def check_length(self, name: str, values: Sequence[int], length: int, of: str) -> None:
        if len(values) != length:
            raise self.fail(f"{name} has {len(values)} entries, expected {length} ({of})")

    # layout rule of the family (module docstring)
    infer_layout = keep_operand_layout
    infer_operand_layouts = fit_to_operands


# --------------------------------------------------------------------------------------
# Reshape, Transpose, BroadCast, Tile
# --------------------------------------------------------------------------------------


@tx8be_op
class ReshapeOp(MovementOp):
    """The input's elements, in row-major order, as a tensor of `shape`.

    `shape` is the full static result shape: every entry is positive (ONNX's -1 and 0
    are resolved by the importer), and it holds as many elements as the input.
    """

    name = "tx8be.Reshape"
    shape = ints_attr()

    def target_shape(self) -> tuple[int, ...]:
        shape = self.attr("shape")
        bad = [d for d in shape if d < 1]
        if bad:
            raise self.fail(
                f"shape {list(shape)} has non-positive entries {bad}; give the full static "
                "shape (no -1 or 0)"
            )
        have, want = int(np.prod(self.input_shape())), int(np.prod(shape))
        if have != want:
            raise self.fail(
                f"cannot reshape {list(self.input_shape())} ({have} elements) to "
                f"{list(shape)} ({want} elements)"
            )
        return shape

    def verify_op(self) -> None:
        self.target_shape()

    def infer_shapes(self) -> list[TensorType]:
        return [self.result_like_input(self.target_shape())]

    def query_op_attr(self) -> OpAttr:
        return self.op_attr(align_mode=AlignMode.BOTH, engine=Engine.LSU)

    infer_operand_layouts = cannot_infer_backward

    def element_map(self) -> ViewMap:
        return ViewMap.reshape(self.input_shape(), self.target_shape())

    def compute(self, x: np.ndarray) -> list[np.ndarray]:
        return [x.reshape(self.target_shape())]


@tx8be_op
class TransposeOp(MovementOp):
    """Result dim i is input dim `perm[i]`; `perm` defaults to reversing the dims (ONNX)."""

    name = "tx8be.Transpose"
    perm = ints_attr(optional=True)

    def permutation(self) -> tuple[int, ...]:
        rank = len(self.input_shape())
        perm = self.attr("perm")
        if perm is None:
            return tuple(reversed(range(rank)))
        self.check_length("perm", perm, rank, "the input rank")
        if sorted(perm) != list(range(rank)):
            raise self.fail(f"perm {list(perm)} is not a permutation of 0..{rank - 1}")
        return perm

    def verify_op(self) -> None:
        self.permutation()

    def infer_shapes(self) -> list[TensorType]:
        shape = self.input_shape()
        return [self.result_like_input([shape[p] for p in self.permutation()])]

    def query_op_attr(self) -> OpAttr:
        return self.op_attr(align_mode=AlignMode.ALIGN)

    def infer_layout(self, operand_layouts):
        """The operand's CNN layout permuted, if that is one; else the Tensor class."""
        if operand_layouts[0] == UNKNOWN:
            return UNKNOWN
        permuted = permute_layout(operand_layouts[0], self.permutation())
        return tensor_class_layout(result_shape(self)) if permuted == UNKNOWN else permuted

    def infer_operand_layouts(self, result_layout):
        """The CNN layout this permutation turns into `result_layout`; else nothing."""
        return [permute_layout(result_layout, inverse_permutation(self.permutation()))]

    def permute_attributes(self, perm):
        """Input and result both permuted by p: the new perm is p^-1 . perm . p."""
        if not has_rank(self, perm):
            return None
        inverse = inverse_permutation(perm)
        own = self.permutation()
        return {"perm": tuple(inverse[own[p]] for p in perm)}

    def element_map(self) -> ViewMap:
        return ViewMap.transpose(self.input_shape(), self.permutation())

    def compute(self, x: np.ndarray) -> list[np.ndarray]:
        return [np.transpose(x, self.permutation())]


@tx8be_op
class RelabelOp(MovementOp):
    """The operand's bytes, unchanged, read as a tensor of another shape: a relabel.

    Logically the result is `x.reshape(view).transpose(perm).reshape(shape)`: `view`
    defaults to the operand's shape and `perm` to the identity, so a Relabel is a
    Reshape, a Transpose, or a chain of them (the head split of attention: `[1,128,768]`
    viewed as `[128,12,64]`, perm `[1,0,2]`, shape `[1,12,128,64]`). What makes it a
    relabel is the bytes: the layout stage (`layout-normalize-rank`, `layout-relabel`)
    makes one only where, in the alignment family the op runs in, the result's
    mem_layout puts every element at the byte where the operand's mem_layout holds it
    (`tx8c.dialect.relabel.relabel_families`, decided from the address functions).

    So the op moves no bytes and runs no kernel (engine NONE): `is_relabel()` (OpLib) is
    true, the question the backend asks of every op ("do you move bytes, or are you a
    relabel of your operand's bytes?"); it gives the result the operand's buffer, and
    the cmodel passes the bytes through, so a Relabel that is not the identity on the
    bytes of its family gives a wrong answer there. Its OpAttr align_mode is the
    families where it is a relabel: BOTH, ALIGN (the head split) or NALIGN.
    """

    name = "tx8be.Relabel"
    shape = ints_attr()
    view = ints_attr(optional=True)
    perm = ints_attr(optional=True)

    def element_map(self) -> ViewMap:
        shape = self.input_shape()
        view = self.attr("view")
        view = shape if view is None else view
        perm = self.attr("perm")
        perm = tuple(range(len(view))) if perm is None else perm
        return ViewMap(shape, tuple(view), tuple(perm), tuple(self.attr("shape")))

    def verify_op(self) -> None:
        self.checked_map()

    def checked_map(self) -> ViewMap:
        """`element_map()`, checked against the operand's shape."""
        m = self.element_map()
        size = int(np.prod(m.source))
        for name, dims in (("view", m.view), ("shape", m.result)):
            if any(d < 1 for d in dims) or int(np.prod(dims)) != size:
                raise self.fail(
                    f"{name} {list(dims)} must have positive entries and hold the "
                    f"operand's {size} elements"
                )
        self.check_length("perm", m.perm, len(m.view), "one per dim of view")
        if sorted(m.perm) != list(range(len(m.view))):
            raise self.fail(f"perm {list(m.perm)} is not a permutation of 0..{len(m.view) - 1}")
        return m

    def infer_shapes(self) -> list[TensorType]:
        return [self.result_like_input(self.checked_map().result)]

    def families(self) -> frozenset[bool]:
        """The families in which the op is a relabel (True: aligned, False: compact)."""
        return relabel_families(self.element_map(), self.operands[0].type.get_element_type())

    def query_op_attr(self) -> OpAttr:
        families = self.families()
        mode = (
            AlignMode.BOTH if len(families) == 2
            else AlignMode.ALIGN if True in families
            else AlignMode.NALIGN if False in families
            else AlignMode.UNKNOWN
        )
        return self.op_attr(align_mode=mode, engine=Engine.NONE, mem_inplace=True)

    def is_relabel(self) -> bool:
        return True

    infer_operand_layouts = cannot_infer_backward

    def compute(self, x: np.ndarray) -> list[np.ndarray]:
        return [self.element_map().apply(x)]


@tx8be_op
class BroadCastOp(MovementOp):
    """The input broadcast with `shape` (ONNX Expand).

    The result shape is numpy's broadcast of the input shape and `shape`, so `shape` may
    have fewer dims than the input, and a 1 in `shape` keeps the input's dim.
    """

    name = "tx8be.BroadCast"
    shape = ints_attr()

    def result_shape(self) -> tuple[int, ...]:
        shape = self.attr("shape")
        if any(d < 0 for d in shape):
            raise self.fail(f"shape {list(shape)} has negative entries")
        result = broadcast_shape(self.input_shape(), shape)
        if result is None:
            raise self.fail(
                f"input shape {list(self.input_shape())} does not broadcast to {list(shape)}"
            )
        return result

    def verify_op(self) -> None:
        self.result_shape()

    def infer_shapes(self) -> list[TensorType]:
        return [self.result_like_input(self.result_shape())]

    def query_op_attr(self) -> OpAttr:
        return self.op_attr(align_mode=AlignMode.BOTH)

    infer_operand_layouts = cannot_infer_backward

    def compute(self, x: np.ndarray) -> list[np.ndarray]:
        return [np.broadcast_to(x, self.result_shape()).copy()]


@tx8be_op
class TileOp(MovementOp):
    """The input repeated `repeats[i]` times along dim i (one entry per dim, >= 0)."""

    name = "tx8be.Tile"
    repeats = ints_attr()

    def checked_repeats(self) -> tuple[int, ...]:
        repeats = self.attr("repeats")
        self.check_length("repeats", repeats, len(self.input_shape()), "the input rank")
        if any(r < 0 for r in repeats):
            raise self.fail(f"repeats {list(repeats)} has negative entries")
        return repeats

    def verify_op(self) -> None:
        self.checked_repeats()

    def infer_shapes(self) -> list[TensorType]:
        shape = [d * r for d, r in zip(self.input_shape(), self.checked_repeats(), strict=True)]
        return [self.result_like_input(shape)]

    def query_op_attr(self) -> OpAttr:
        return self.op_attr(align_mode=AlignMode.BOTH)

    def permute_attributes(self, perm):
        """One repeat count per dim: they move with the dims."""
        if not has_rank(self, perm):
            return None
        return {"repeats": permute_per_dim(self.checked_repeats(), perm)}

    def compute(self, x: np.ndarray) -> list[np.ndarray]:
        return [np.tile(x, self.checked_repeats())]


# --------------------------------------------------------------------------------------
# Slice
# --------------------------------------------------------------------------------------


def _slice_bounds(start: int, end: int, step: int, dim: int) -> tuple[int, int, int]:
    """ONNX Slice normalisation of one axis: (start, end, step) with end -1 meaning "past
    the first element" for negative steps. INT64 max/min sentinels clamp like any value."""
    if start < 0:
        start += dim
    if end < 0:
        end += dim
    if step > 0:
        return min(max(start, 0), dim), min(max(end, 0), dim), step
    return min(max(start, 0), dim - 1), min(max(end, -1), dim - 1), step


def _as_slice(start: int, end: int, step: int) -> slice:
    """A Python slice of normalised bounds (-1 as a stop is "before index 0", not "last")."""
    return slice(start, None if end < 0 else end, step)


@tx8be_op
class SliceOp(MovementOp):
    """Elements start, start+step, ... (before end) along each axis in `axes` (ONNX Slice).

    `starts`, `ends`, `axes` and `steps` have one entry per sliced axis. `axes` defaults to
    0..len(starts)-1 and `steps` to ones. Negative starts/ends count from the end of the
    dim; out-of-range values (including INT64 max/min) are clamped; a negative step walks
    backwards. Axes not listed are kept whole.
    """

    name = "tx8be.Slice"
    starts = ints_attr()
    ends = ints_attr()
    axes = ints_attr(optional=True)
    steps = ints_attr(optional=True)

    def slices(self) -> tuple[slice, ...]:
        """One normalised Python slice per input dim."""
        return tuple(_as_slice(*b) for b in self.bounds())

    def bounds(self) -> list[tuple[int, int, int]]:
        """Normalised (start, end, step) per input dim, whole dims for unlisted axes."""
        shape = self.input_shape()
        starts, ends = self.attr("starts"), self.attr("ends")
        n = len(starts)
        self.check_length("ends", ends, n, "one per entry of starts")
        axes = self.attr("axes")
        axes = tuple(range(n)) if axes is None else axes
        self.check_length("axes", axes, n, "one per entry of starts")
        steps = self.attr("steps")
        steps = (1,) * n if steps is None else steps
        self.check_length("steps", steps, n, "one per entry of starts")
        result = [(0, d, 1) for d in shape]
        seen: set[int] = set()
        for start, end, axis, step in zip(starts, ends, axes, steps, strict=True):
            dim_index = self.axis_in_range(axis, len(shape), "axes entry")
            if dim_index in seen:
                raise self.fail(f"axes {list(axes)} names dim {dim_index} twice")
            seen.add(dim_index)
            if step == 0:
                raise self.fail(f"steps {list(steps)} has a zero entry")
            result[dim_index] = _slice_bounds(start, end, step, shape[dim_index])
        return result

    def verify_op(self) -> None:
        self.bounds()

    def infer_shapes(self) -> list[TensorType]:
        shape = [len(range(d)[s]) for d, s in zip(self.input_shape(), self.slices(), strict=True)]
        return [self.result_like_input(shape)]

    def query_op_attr(self) -> OpAttr:
        """Seed 000: NALIGN when the slice starts inside C (the last dim) and ends on a
        multiple of 64 there; ALIGN otherwise."""
        bounds = self.bounds()
        if not bounds:
            return self.op_attr(align_mode=AlignMode.ALIGN)
        start, end, _ = bounds[-1]
        if start > 0 and end % 64 == 0:
            return self.op_attr(align_mode=AlignMode.NALIGN)
        return self.op_attr(align_mode=AlignMode.ALIGN)

    def permute_attributes(self, perm):
        """The sliced axes move with the data (starts, ends and steps stay paired)."""
        if not has_rank(self, perm):
            return None
        n = len(self.attr("starts"))
        axes = self.attr("axes")
        axes = tuple(range(n)) if axes is None else axes
        rank = len(perm)
        return {"axes": tuple(moved_axis(self.axis_in_range(a, rank), perm) for a in axes)}

    def compute(self, x: np.ndarray) -> list[np.ndarray]:
        return [x[self.slices()].copy()]


# --------------------------------------------------------------------------------------
# Concatenate, Split
# --------------------------------------------------------------------------------------


@tx8be_op
class ConcatenateOp(MovementOp):
    """The operands joined along `axis` (ONNX Concat); all other dims must agree."""

    name = "tx8be.Concatenate"
    OPERANDS: ClassVar[tuple[str, ...]] = ("inputs*",)
    axis = int_attr()

    @classmethod
    def operand_count_range(cls) -> tuple[int, int | None]:
        return 1, None

    def result_shape(self) -> tuple[int, ...]:
        shapes = self.input_shapes()
        if not shapes:
            raise self.fail("expects at least 1 operand(s) (inputs*), got 0")
        first = shapes[0]
        axis = self.axis_in_range(self.attr("axis"), len(first))
        for i, shape in enumerate(shapes[1:], start=1):
            if len(shape) != len(first):
                raise self.fail(
                    f"operand #{i} has rank {len(shape)}, operand #0 has rank {len(first)}"
                )
            if any(a != b for d, (a, b) in enumerate(zip(shape, first, strict=True))
                   if d != axis):
                raise self.fail(
                    f"operand #{i} has shape {list(shape)}, which differs from operand #0's "
                    f"{list(first)} outside axis {axis}"
                )
        total = sum(s[axis] for s in shapes)
        return (*first[:axis], total, *first[axis + 1:])

    def verify_op(self) -> None:
        self.result_shape()

    def infer_shapes(self) -> list[TensorType]:
        return [self.result_like_input(self.result_shape())]

    def query_op_attr(self) -> OpAttr:
        return self.op_attr(align_mode=AlignMode.ALIGN, need_preset_to_npu=True)

    def permute_attributes(self, perm):
        """The joined axis moves with the data."""
        if not has_rank(self, perm):
            return None
        return {"axis": moved_axis(self.axis_in_range(self.attr("axis"), len(perm)), perm)}

    def compute(self, *inputs: np.ndarray) -> list[np.ndarray]:
        axis = self.axis_in_range(self.attr("axis"), inputs[0].ndim)
        return [np.concatenate(inputs, axis=axis)]


@tx8be_op
class SplitOp(MovementOp):
    """The input cut along `axis` into pieces of `split[i]` elements (ONNX Split).

    There is one result per entry of `split`, and the entries sum to the dim size.
    """

    name = "tx8be.Split"
    NUM_RESULTS: ClassVar[int | None] = None
    axis = int_attr(0)
    split = ints_attr()

    def num_results(self) -> int:
        return len(self.attr("split"))

    def checked(self) -> tuple[int, tuple[int, ...]]:
        """(normalised axis, split sizes), checked against the input shape."""
        shape = self.input_shape()
        axis = self.axis_in_range(self.attr("axis"), len(shape))
        sizes = self.attr("split")
        if not sizes:
            raise self.fail("split must have at least one entry")
        if any(s < 0 for s in sizes):
            raise self.fail(f"split {list(sizes)} has negative entries")
        if sum(sizes) != shape[axis]:
            raise self.fail(
                f"split {list(sizes)} sums to {sum(sizes)}, but dim {axis} of the input has "
                f"size {shape[axis]}"
            )
        return axis, sizes

    def verify_op(self) -> None:
        self.checked()

    def infer_shapes(self) -> list[TensorType]:
        axis, sizes = self.checked()
        shape = self.input_shape()
        return [
            self.result_like_input((*shape[:axis], size, *shape[axis + 1:])) for size in sizes
        ]

    def query_op_attr(self) -> OpAttr:
        return self.op_attr(align_mode=AlignMode.BOTH)

    def permute_attributes(self, perm):
        """The cut axis moves with the data; every result is permuted alike."""
        if not has_rank(self, perm):
            return None
        axis, _ = self.checked()
        return {"axis": moved_axis(axis, perm)}

    def view_attributes(self, view):
        """The cut axis follows its dim; every result takes the view."""
        return view_axis_attributes(self, view)

    def compute(self, x: np.ndarray) -> list[np.ndarray]:
        axis, sizes = self.checked()
        cuts = np.cumsum(sizes)[:-1]
        return [piece.copy() for piece in np.split(x, cuts, axis=axis)]


# --------------------------------------------------------------------------------------
# Pad
# --------------------------------------------------------------------------------------

PAD_MODES = ("constant", "reflect", "edge", "wrap")


@tx8be_op
class PadOp(MovementOp):
    """The input padded by `pads` (ONNX Pad).

    `pads` is in ONNX order, all begins then all ends: [b0, b1, ..., e0, e1, ...], two
    entries per dim, each >= 0 (negative pads are Slices, made by the importer). `mode`:
    "constant" fills with `value` (cast to the element type), "reflect" mirrors without
    repeating the edge (so each pad must be smaller than its dim), "edge" repeats the edge,
    "wrap" continues the dim periodically (the begin pad takes the dim's last elements, the
    end pad its first ones; a pad longer than the dim wraps around again).
    """

    name = "tx8be.Pad"
    pads = ints_attr()
    mode = str_attr("constant")
    value = float_attr(0.0)

    def pad_width(self) -> list[tuple[int, int]]:
        """(begin, end) per dim, checked against the mode and the input shape."""
        shape = self.input_shape()
        rank = len(shape)
        pads = self.attr("pads")
        self.check_length("pads", pads, 2 * rank, "two per input dim, begins then ends")
        if any(p < 0 for p in pads):
            raise self.fail(
                f"pads {list(pads)} has negative entries; express cropping as a Slice"
            )
        mode = self.attr("mode")
        if mode not in PAD_MODES:
            raise self.fail(f"mode must be one of {', '.join(PAD_MODES)}, got \"{mode}\"")
        width = list(zip(pads[:rank], pads[rank:], strict=True))
        for axis, ((begin, end), dim) in enumerate(zip(width, shape, strict=True)):
            if mode == "reflect" and max(begin, end) >= dim:
                raise self.fail(
                    f"reflect pads ({begin}, {end}) on dim {axis} must be smaller than its "
                    f"size {dim}"
                )
            if mode in ("edge", "wrap") and dim == 0 and (begin or end):
                raise self.fail(f"{mode} padding of dim {axis} needs a non-empty dim")
        return width

    def verify_op(self) -> None:
        self.pad_width()
        self._verify_value()

    def _verify_value(self) -> None:
        """The fill value must be exactly representable in an integer or bool input."""
        value = self.attr("value")
        dtype = short_name(self.operands[0].type.get_element_type())
        if dtype in INTS and value != int(value):
            raise self.fail(f"value {value} is not an integer, the input is {dtype}")
        if dtype == "i1" and value not in (0.0, 1.0):
            raise self.fail(f"value {value} is not 0 or 1, the input is i1")

    def infer_shapes(self) -> list[TensorType]:
        shape = [d + b + e for d, (b, e) in zip(self.input_shape(), self.pad_width(), strict=True)]
        return [self.result_like_input(shape)]

    def query_op_attr(self) -> OpAttr:
        return self.op_attr(align_mode=AlignMode.ALIGN, need_preset_to_npu=True)

    def permute_attributes(self, perm):
        """The (begin, end) pair of each dim moves with the dim."""
        if not has_rank(self, perm):
            return None
        width = permute_per_dim(self.pad_width(), perm)
        return {"pads": tuple(b for b, _ in width) + tuple(e for _, e in width)}

    def compute(self, x: np.ndarray) -> list[np.ndarray]:
        width = self.pad_width()
        mode = self.attr("mode")
        if mode == "constant":
            fill = np.asarray(self.attr("value")).astype(x.dtype)
            return [np.pad(x, width, mode="constant", constant_values=fill)]
        return [np.pad(x, width, mode=mode)]


OPS = [
    ReshapeOp, TransposeOp, RelabelOp, BroadCastOp, SliceOp, ConcatenateOp, SplitOp, TileOp,
    PadOp,
]
