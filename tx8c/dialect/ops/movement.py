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
from dataclasses import dataclass
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
from tx8c.dialect.ops._util import broadcast_shape, element_bits, normalize_axis
from tx8c.dialect.relabel import ViewMap, map_windows, relabel_families
from tx8c.dialect.types import short_name
from tx8c.interfaces.oplib import Engine, OpAttr, OpCode, Work, ct_work, volume
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
from tx8c.interfaces.sharding import (
    LoopDim,
    Slicer,
    Window,
    broadcast_axes,
    cut_to,
    slicer_fields,
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

    def slicer(self):
        """Operands follow the result dim for dim; one copy pass (MoveSlicer)."""
        return MoveSlicer(**slicer_fields(self, axes=self.move_axes()))

    def move_axes(self):
        """Which result dim each operand dim follows: the same dim by default."""
        return [tuple(range(len(shape))) for shape in self.input_shapes()]

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

    # -- slicing: the result's dims fall into groups that hold the same elements as a
    # group of input dims (equal products, in order). A window of a group's outermost
    # result dim is a window of its outermost input dim when one of the two inner
    # products divides the other (splitting C into heads, merging heads back); every
    # other dim of a group is whole in every slice. Dims of size 1 are groups of their own.
    def slicer(self):
        groups = reshape_groups(self.input_shape(), self.target_shape())
        out = self.target_shape()
        loops = [LoopDim(d) if d == 1 else LoopDim.whole(d) for d in out]
        axes: list[int | None] = [None] * len(self.input_shape())
        maps = []
        for ins, outs in groups:
            if not ins or not outs:
                continue
            inner_in = volume(self.input_shape()[i] for i in ins[1:])
            inner_out = volume(out[o] for o in outs[1:])
            if inner_out % inner_in == 0:  # a window of result rows is one of input rows
                maps.append((outs[0], ins[0], inner_out // inner_in, 1))
                loops[outs[0]] = LoopDim(out[outs[0]])
            elif inner_in % inner_out == 0:  # on multiples of the input row
                granule = inner_in // inner_out
                maps.append((outs[0], ins[0], 1, granule))
                loops[outs[0]] = LoopDim(out[outs[0]], granule=granule)
            else:
                continue
            axes[ins[0]] = outs[0]
        return ReshapeSlicer(**slicer_fields(self, loops, [tuple(axes)]), maps=tuple(maps))

    def compute_slice(self, loops, operands):
        return [operands[0].reshape(loops.shape)]

    def gen_op_code(self, loops):
        """The window's elements in row-major order, under the slice's shape."""
        return OpCode("op_copy")


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

    def gen_op_code(self, loops):
        return OpCode("op_transpose", tuple(self.permutation()))

    def move_axes(self):
        """Input dim perm[i] follows result dim i."""
        return [inverse_permutation(self.permutation())]


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

    So the op moves no bytes and runs no kernel (engine NONE): `moves_no_bytes()` is
    True, the answer to the question the backend asks of every op (OpLib: "do you move
    bytes, or are you a relabel of your operand's bytes?"); group-ldst neither loads nor
    stores for it, it computes nothing on a slice, and the cmodel passes its operand's
    bytes through, so a Relabel that is not the identity on the bytes of its family
    gives a wrong answer there. Its OpAttr align_mode is the
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

    def moves_no_bytes(self) -> bool:
        return True

    infer_operand_layouts = cannot_infer_backward

    def compute(self, x: np.ndarray) -> list[np.ndarray]:
        return [self.element_map().apply(x)]

    # -- slicing: a window of a result dim that is the outermost factor of an input dim
    # reads that input dim's window (times the dim's inner factors, read whole); other
    # result dims are whole in every slice (`map_windows`). No work: nothing moves.
    def slicer(self):
        m = self.element_map()
        windows = map_windows(m)
        loops = [LoopDim(d) if d == 1 else LoopDim.whole(d) for d in m.result]
        axes: list[int | None] = [None] * len(m.source)
        maps = []
        for result_dim, source_dim, inner in windows.cuts if windows else ():
            loops[result_dim] = LoopDim(m.result[result_dim])
            axes[source_dim] = result_dim
            maps.append((result_dim, source_dim, inner, 1))
        return RelabelSlicer(**slicer_fields(self, loops, [tuple(axes)]), maps=tuple(maps))

    def compute_slice(self, loops, operands):
        (x,) = operands
        m = self.element_map()
        windows = map_windows(m)
        if windows is None:
            return self.compute(x)
        view = windows.local_view(m.source, loops.shape)
        return [np.transpose(x.reshape(view), windows.perm).reshape(loops.shape)]


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

    def move_axes(self):
        """numpy broadcasting: a broadcast dim is read whole."""
        return [broadcast_axes(self.input_shape(), self.result_shape())]

    def compute_slice(self, loops, operands):
        """The window broadcast to the slice."""
        return [np.broadcast_to(operands[0], loops.shape).copy()]

    def gen_op_code(self, loops):
        return OpCode("op_broadcast")


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

    def move_axes(self):
        """Dims repeated more than once are read whole; the others follow the result."""
        return [tuple(i if r == 1 else None for i, r in enumerate(self.checked_repeats()))]

    def compute_slice(self, loops, operands):
        (tiled,) = self.compute(*operands)
        computed = Window(
            tuple(a if r == 1 else 0 for a, r in zip(loops.start, self.checked_repeats())),
            tuple(a + d for a, d in zip(
                (a if r == 1 else 0 for a, r in zip(loops.start, self.checked_repeats())),
                tiled.shape,
            )),
        )
        return [cut_to(tiled, loops, computed)]

    def gen_op_code(self, loops):
        """`op_tile` with the repeats (a dim repeated more than once is read whole)."""
        return OpCode("op_tile", tuple(self.checked_repeats()))


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

    # -- slicing: result index j of a dim reads input index start + j * step
    def slicer(self):
        return SliceSlicer(**slicer_fields(self, axes=self.move_axes()),
                           bounds=tuple(self.bounds()))

    def compute_slice(self, loops, operands):
        x = operands[0]
        index = tuple(
            slice(None) if step > 0 else slice(None, None, -1) for _, _, step in self.bounds()
        )
        x = x[index]  # a negative step walks the window from its end
        return [x[tuple(slice(None, None, abs(step)) for _, _, step in self.bounds())].copy()]

    def gen_op_code(self, loops):
        """The step of every dim (the window starts at the slice's first element)."""
        return OpCode("op_slice", tuple(step for _, _, step in self.bounds()))


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

    def gen_op_code(self, loops):
        return OpCode("op_concat", (self.axis_in_range(self.attr("axis"), len(loops.shape)),))

    # -- slicing: each operand gives the part of the slice that falls in its range
    def slicer(self):
        axis = self.axis_in_range(self.attr("axis"), len(self.result_shape()))
        return ConcatSlicer(**slicer_fields(self, axes=self.move_axes()), axis=axis)


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

    # -- slicing: the loop dims are the input's (the results are pieces of it); a slice
    # gives each piece its part of the window, None to the pieces it misses
    def slicer(self):
        axis, sizes = self.checked()
        loops = [LoopDim(d) for d in self.input_shape()]
        return SplitSlicer(**slicer_fields(self, loops, self.move_axes()), axis=axis,
                           sizes=tuple(sizes))

    def compute_slice(self, loops, operands):
        axis, sizes = self.checked()
        x = operands[0]
        pieces, offset = [], 0
        for n, wanted in zip(sizes, self.slicer().result_windows(loops), strict=True):
            if wanted is not None:
                lo = wanted.start[axis] + offset - loops.start[axis]
                index = [slice(None)] * x.ndim
                index[axis] = slice(lo, lo + wanted.shape[axis])
                pieces.append(x[tuple(index)].copy())
            else:
                pieces.append(None)
            offset += n
        return pieces

    def gen_op_code(self, loops):
        """The axis, then where each result's piece starts in the window (-1: none)."""
        axis, sizes = self.checked()
        starts, offset = [], 0
        for n, wanted in zip(sizes, self.slicer().result_windows(loops), strict=True):
            starts.append(-1 if wanted is None
                          else wanted.start[axis] + offset - loops.start[axis])
            offset += n
        return OpCode("op_split", (axis, *starts))


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

    # -- slicing: with "constant" a slice reads the input under it (none if it lies in
    # the padding); the other modes mirror or wrap, so a padded dim is read whole
    def slicer(self):
        width = tuple(self.pad_width())
        constant = self.attr("mode") == "constant"
        axes = tuple(i if constant or w == (0, 0) else None for i, w in enumerate(width))
        return PadSlicer(**slicer_fields(self, axes=[axes]), width=width, constant=constant)

    def compute_slice(self, loops, operands):
        x = operands[0]
        if self.attr("mode") == "constant":
            fill = np.asarray(self.attr("value")).astype(x.dtype)
            out = np.full(loops.shape, fill, x.dtype)
            (window,) = self.slicer().back_window(loops)
            at = [lo + before - a for (lo, _), (before, _), a in zip(
                window.pairs(), self.pad_width(), loops.start, strict=True)]
            out[Window.of([(s, s + d) for s, d in zip(at, x.shape)]).slices()] = x
            return [out]
        width = [w if w != (0, 0) else (0, 0) for w in self.pad_width()]
        padded = np.pad(x, width, mode=self.attr("mode"))
        computed = Window(
            tuple(a if w == (0, 0) else 0 for a, w in zip(loops.start, width)),
            tuple(
                (a if w == (0, 0) else 0) + d
                for a, w, d in zip(loops.start, width, padded.shape)
            ),
        )
        return [cut_to(padded, loops, computed)]

    def gen_op_code(self, loops):
        """`op_pad`: the mode, the fill value's element bits, the begin pads."""
        mode = "TX_PAD_" + self.attr("mode").upper()
        fill = element_bits(self.attr("value"), self.operands[0].type.get_element_type())
        return OpCode("op_pad", (mode, fill, *(b for b, _ in self.pad_width())))


# --------------------------------------------------------------------------------------
# Slicing
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MoveSlicer(Slicer):
    """Data movement: loop dims are the result's, operand dims follow them (`axes`:
    permuted for Transpose, broadcast for BroadCast, read whole where Tile repeats); one
    copy pass over the slice, no arithmetic."""

    def work(self, shape):
        return ct_work(self.dtype, shape, arith=1, flops=0)


@dataclass(frozen=True)
class ReshapeSlicer(MoveSlicer):
    """Reshape: the result's dims fall into groups that hold the same elements as a group
    of input dims (equal products, in order). A window of a group's outermost result dim
    is a window of its outermost input dim when one of the two inner products divides the
    other (splitting C into heads: result rows x k; merging heads back: on multiples of
    the input row); every other dim of a group is whole in every slice, and dims of size
    1 are groups of their own. `maps`: (result dim, input dim, times, per) - a result
    window [a, b) reads [a * times // per, ceil(b * times / per)). A TDMA move of the
    slice on the LSU (seed 003: op_reshape)."""

    maps: tuple[tuple[int, int, int, int], ...]

    def back_window(self, loops):
        pairs = [(0, d) for d in self.operands[0]]
        for out, dim, times, per in self.maps:
            a, b = loops.dim(out)
            pairs[dim] = (a * times // per, -(-b * times // per))
        return (Window.of(pairs),)

    def work(self, shape):
        return self.transfer(shape, ddr=False)


@dataclass(frozen=True)
class RelabelSlicer(ReshapeSlicer):
    """Relabel: windows as a Reshape's (`maps`), and no work at all: a relabel runs no
    kernel, its result is its operand's bytes."""

    def work(self, shape):
        return Work(Engine.NONE, self.dtype)


@dataclass(frozen=True)
class SliceSlicer(MoveSlicer):
    """Slice: result index j of a dim reads input index start + j * step (`bounds`: the
    normalised (start, end, step) per dim)."""

    bounds: tuple[tuple[int, int, int], ...]

    def back_window(self, loops):
        pairs = []
        for (start, _, step), (a, b) in zip(self.bounds, loops.pairs(), strict=True):
            if b <= a:
                pairs.append((0, 0))
                continue
            first, last = start + a * step, start + (b - 1) * step
            pairs.append((min(first, last), max(first, last) + 1))
        return (Window.of(pairs),)


@dataclass(frozen=True)
class ConcatSlicer(MoveSlicer):
    """Concatenate: each operand gives the part of a slice that falls in its range along
    `axis` (possibly none of it)."""

    axis: int

    def back_window(self, loops):
        a, b = loops.dim(self.axis)
        windows, offset = [], 0
        for shape in self.operands:
            n = shape[self.axis]
            lo, hi = min(max(a - offset, 0), n), min(max(b - offset, 0), n)
            windows.append(loops.replace(self.axis, lo, max(lo, hi)))
            offset += n
        return tuple(windows)


@dataclass(frozen=True)
class SplitSlicer(MoveSlicer):
    """Split: the loop dims are the input's (the results are pieces of it, `sizes` along
    `axis`); a slice gives each piece its part of the window, None to those it misses."""

    axis: int
    sizes: tuple[int, ...]

    def result_windows(self, loops):
        a, b = loops.dim(self.axis)
        windows, offset = [], 0
        for n in self.sizes:
            lo, hi = max(a, offset), min(b, offset + n)
            windows.append(
                None if hi <= lo else loops.replace(self.axis, lo - offset, hi - offset)
            )
            offset += n
        return tuple(windows)

    def loops_for(self, results):
        """The hull of the needed pieces, each placed at its offset along `axis`."""
        hull, offset = None, 0
        for n, window in zip(self.sizes, results, strict=True):
            if window is not None:
                placed = window.replace(self.axis, window.start[self.axis] + offset,
                                        window.stop[self.axis] + offset)
                hull = placed if hull is None else hull.hull(placed)
            offset += n
        return hull if hull is not None else Window.whole(self.operands[0])


@dataclass(frozen=True)
class PadSlicer(MoveSlicer):
    """Pad: with `constant` a slice reads the input under it (none of it when the slice
    lies in the padding); the other modes mirror or wrap, so a padded dim is read whole.
    `width`: (begin, end) per dim."""

    width: tuple[tuple[int, int], ...]
    constant: bool

    def back_window(self, loops):
        if not self.constant:
            return super().back_window(loops)
        pairs = []
        for (a, b), (before, _), n in zip(loops.pairs(), self.width, self.operands[0],
                                          strict=True):
            lo = min(max(a - before, 0), n)
            pairs.append((lo, max(lo, min(max(b - before, 0), n))))
        return (Window.of(pairs),)


def reshape_groups(
    in_shape: Sequence[int], out_shape: Sequence[int]
) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """The dims of a reshape in groups of equal element counts, in order: (input dims,
    result dims) per group; dims of size 1 are groups of their own (one side empty)."""
    groups = []
    i = o = 0
    while i < len(in_shape) or o < len(out_shape):
        if i < len(in_shape) and in_shape[i] == 1:
            groups.append(((i,), ()))
            i += 1
            continue
        if o < len(out_shape) and out_shape[o] == 1:
            groups.append(((), (o,)))
            o += 1
            continue
        ins, outs = [i], [o]
        p_in, p_out = in_shape[i], out_shape[o]
        i, o = i + 1, o + 1
        while p_in != p_out:
            if p_in < p_out:
                p_in *= in_shape[i]
                ins.append(i)
                i += 1
            else:
                p_out *= out_shape[o]
                outs.append(o)
                o += 1
        groups.append((tuple(ins), tuple(outs)))
    return groups


OPS = [
    ReshapeOp, TransposeOp, RelabelOp, BroadCastOp, SliceOp, ConcatenateOp, SplitOp, TileOp,
    PadOp,
]
