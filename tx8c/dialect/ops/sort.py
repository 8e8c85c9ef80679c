"""Selection by order: TopK.

TopK has no composition of other tx8be ops (it sorts), so it is an op of its own. It runs
on the CT engine and, like the reductions, writes channel-aligned (ALIGN) data.

Layout (seed 001): both results keep the layout of the input (TopK keeps the rank); the
indices are Tensor-class when the values are.

Slicing (TopKSlicer): the loop dims are the results'; the selection axis is whole in
every slice (a slice sorts whole rows: partial top-k lists have no cheap combine), the
other dims are cut freely.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import TensorType, i64

from tx8c.dialect.attrs import AlignMode
from tx8c.dialect.base import (
    NUMERIC,
    Tx8beOp,
    bool_attr,
    int_attr,
    result_type_like,
    tx8be_op,
)
from tx8c.dialect.ops._util import normalize_axis
from tx8c.interfaces import Engine
from tx8c.interfaces.oplib import OpCode, ct_work
from tx8c.interfaces.shape_inference import (
    fit_to_operands,
    has_rank,
    keep_operand_layout,
    moved_axis,
)
from tx8c.interfaces.sharding import LoopDim, Slicer, slicer_fields


@tx8be_op
class TopKOp(Tx8beOp):
    """The `k` largest (or smallest) entries of `input` along `axis`, and their indices
    (ONNX TopK).

    Results: `values` (the input's element type) and `indices` (i64), both of the input's
    shape with dim `axis` replaced by `k`. Attributes: `k` (0 <= k <= dim), `axis`
    (default -1, negative counts from the end), `largest` (default true; false gives the
    smallest), `sorted` (default true: the entries in order, largest or smallest first;
    false leaves the order free, and this op still sorts). Equal values keep their input
    order: the one at the lower index comes first, as ONNX requires.
    """

    name = "tx8be.TopK"
    OPERANDS: ClassVar[tuple[str, ...]] = ("input",)
    NUM_RESULTS: ClassVar[int | None] = 2
    DTYPES: ClassVar[frozenset[str] | None] = NUMERIC

    k = int_attr()
    axis = int_attr(-1)
    largest = bool_attr(True)
    sorted = bool_attr(True)

    def checked_axis(self) -> int:
        shape = self.input_shapes()[0]
        axis = normalize_axis(self.attr("axis"), len(shape))
        if axis is None:
            raise self.fail(
                f"axis {self.attr('axis')} is out of range for an input of rank {len(shape)}"
            )
        k = self.attr("k")
        if not 0 <= k <= shape[axis]:
            raise self.fail(f"k = {k} must be between 0 and the size of dim {axis} "
                            f"({shape[axis]})")
        return axis

    def verify_op(self) -> None:
        self.checked_axis()

    def infer_shapes(self) -> list[TensorType]:
        axis = self.checked_axis()
        shape = list(self.input_shapes()[0])
        shape[axis] = self.attr("k")
        return [result_type_like(shape, self.operands[0].type), TensorType(i64, shape)]

    def query_op_attr(self):
        return self.op_attr(align_mode=AlignMode.ALIGN, engine=Engine.CT)

    # layout rule of the family (module docstring)
    infer_layout = keep_operand_layout
    infer_operand_layouts = fit_to_operands

    def permute_attributes(self, perm):
        """The selection axis moves with the data."""
        if not has_rank(self, perm):
            return None
        return {"axis": moved_axis(self.checked_axis(), perm)}

    def slicer(self) -> TopKSlicer:
        axis = self.checked_axis()
        result = tuple(self.results[0].type.get_shape())
        loops = [LoopDim.whole(d) if i == axis else LoopDim(d) for i, d in enumerate(result)]
        axes = [tuple(None if i == axis else i for i in range(len(result)))]
        return TopKSlicer(**slicer_fields(self, loops, axes), axis=axis)

    def compute(self, x: np.ndarray) -> list[np.ndarray]:
        axis, k = self.checked_axis(), self.attr("k")
        n = x.shape[axis]
        if self.attr("largest"):
            # a stable ascending sort of the reversed data, read backwards, is a
            # descending order in which ties keep their original (ascending) order
            order = np.argsort(np.flip(x, axis), axis=axis, kind="stable")
            order = n - 1 - np.flip(order, axis)
        else:
            order = np.argsort(x, axis=axis, kind="stable")
        indices = np.take(order, np.arange(k), axis=axis)
        return [np.take_along_axis(x, indices, axis=axis), indices.astype(np.int64)]

    def gen_op_code(self, loops):
        """`op_topk`: axis, k, largest (a stable sort whatever `sorted` says, as
        `compute`)."""
        return OpCode("op_topk", (self.checked_axis(), self.attr("k"),
                                  int(self.attr("largest"))))


@dataclass(frozen=True)
class TopKSlicer(Slicer):
    """TopK's slicing (module docstring): both results cover the slice's window; the
    operand is read whole along the selection axis. A sort: about log2(n) compare passes
    over the n elements of each row read."""

    axis: int

    def result_windows(self, loops):
        window = loops.head(self.num_outputs)
        return (window, window)

    def work(self, shape):
        rows = list(shape)
        n = self.operands[0][self.axis]
        rows[self.axis] = n
        return ct_work(self.dtype, rows, arith=max(1, math.ceil(math.log2(max(n, 2)))))


OPS = [TopKOp]
