"""LSU indexing ops: Gather, GatherElements and ScatterND (ONNX semantics).

These ops move data by index on the LSU (seed 003: RDMA `op_rdmaGather` reads rows from
DDR, TDMA `op_gatherScatter` rearranges data inside SPM, WDMA `op_wdmaScatter` writes it
back). The data operands accept every dtype; the index operand is i32 or i64 and is left
out of the shared-dtype check. Index values may be negative (they count from the end of
their dimension, index + dim); an index outside [-dim, dim - 1] is an input error raised
at compute time as `Tx8ComputeError` naming the op and the bad index.

Gather is embedding-style: its table (operand 0) is read from DDR by the gather itself,
so its OpAttr clears bit 0 of `need_load` (seed 003, needLoad). ScatterND is on seed 000's
ALIGN-only list (Scatter); Gather and GatherElements accept both alignments.

Layout (seed 001): the result is laid out like the data, fitted to the result (a CNN
layout stays only when the rank does, so a Gather whose indices are not 1-D gives a
Tensor-class result); indices are Tensor-class. Backward, operands of the result's rank
get its layout and the others are left alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import TensorType, i32, i64

from tx8c.dialect.attrs import AlignMode
from tx8c.dialect.base import (
    ALL_DTYPES,
    BOOLS,
    Tx8beOp,
    int_attr,
    result_type_like,
    str_attr,
    tx8be_op,
)
from tx8c.dialect.ops._util import normalize_axis, upcast
from tx8c.dialect.types import short_name
from tx8c.errors import Tx8ComputeError
from tx8c.interfaces.oplib import ALL_OPERANDS, Engine, OpCode
from tx8c.interfaces.shape_inference import fit_to_operands, keep_operand_layout
from tx8c.interfaces.sharding import LoopDim, Slicer, slicer_fields

INDEX_OPERAND = 1
"""Every op of this family takes its indices as operand #1."""


class IndexingOp(Tx8beOp):
    """Shared rules of the family: an i32/i64 index operand and index bounds checks."""

    DTYPES: ClassVar[frozenset[str] | None] = ALL_DTYPES

    def verify_op(self) -> None:
        element_type = self.operands[INDEX_OPERAND].type.get_element_type()
        if element_type not in (i32, i64):
            raise self.fail(
                f"indices (operand #{INDEX_OPERAND}) must have element type i32 or i64, "
                f"got {short_name(element_type)}"
            )
        self.verify_shapes()

    def verify_shapes(self) -> None:
        """Rank and shape rules beyond what infer_shapes checks. Override."""

    def data_axis(self) -> int:
        """The `axis` attribute as 0..rank-1 of the data operand (operand #0)."""
        rank = len(self.input_shapes()[0])
        if rank == 0:
            raise self.fail("data (operand #0) must have rank >= 1, got a rank-0 tensor")
        axis = normalize_axis(self.attr("axis"), rank)
        if axis is None:
            raise self.fail(
                f"axis {self.attr('axis')} is out of range for data of rank {rank} "
                f"(valid: {-rank}..{rank - 1})"
            )
        return axis

    def wrap_indices(
        self, indices: np.ndarray, dims: np.ndarray, axis_of: Callable[[tuple], int]
    ) -> np.ndarray:
        """`indices` with negative values wrapped (index + dim), after a bounds check.

        `dims` broadcasts against `indices` and gives the size each index selects from;
        `axis_of(position)` is the data dimension the index at `position` selects in.
        """
        indices = np.asarray(indices).astype(np.int64)
        bad = (indices < -dims) | (indices >= dims)
        if bad.any():
            position = tuple(int(p) for p in np.argwhere(bad)[0])
            value = int(indices[position])
            dim = int(np.broadcast_to(dims, indices.shape)[position])
            where = f"indices{list(position)}" if position else "the scalar indices"
            raise Tx8ComputeError(
                f"op '{self.name}' index {value} (at {where}) is out of range for "
                f"dimension {axis_of(position)} of data, of size {dim} "
                f"(valid: {-dim}..{dim - 1})"
            )
        return np.where(indices < 0, indices + dims, indices)

    def query_op_attr(self):
        return self.op_attr(align_mode=AlignMode.BOTH, engine=Engine.LSU)

    DDR_TABLE: ClassVar[bool] = False
    """The data operand is read from DDR by the op itself (Gather's embedding table)."""

    def slicer(self):
        """Operand dims follow the result as `indexing_axes` says; a gather/scatter of the
        slice's elements on the LSU (seed 003: TDMA gatherScatter inside SPM; RDMA
        rdmaGather from DDR for a table read in place)."""
        return IndexSlicer(**slicer_fields(self, self.indexing_loops(), self.indexing_axes()),
                           ddr=self.DDR_TABLE)

    def indexing_loops(self):
        """The loop dims: the result's by default."""
        return None

    def indexing_axes(self):
        raise NotImplementedError

    # layout rule of the family (module docstring)
    infer_layout = keep_operand_layout

    def infer_operand_layouts(self, result_layout):
        return fit_to_operands(
            self, result_layout, same_rank_only=True, tensor_class=(INDEX_OPERAND,)
        )


# --------------------------------------------------------------------------------------
# Gather
# --------------------------------------------------------------------------------------


@tx8be_op
class GatherOp(IndexingOp):
    """ONNX Gather: pick the entries of `data` along `axis` named by `indices`.

    `axis` (default 0, negative counts from the end) is the data dimension indexed.
    `indices` of any rank (rank 0 = one index, which drops the axis) replaces that
    dimension: the result shape is data.shape[:axis] + indices.shape + data.shape[axis+1:].
    Negative indices count from the end (index + dim).
    """

    name = "tx8be.Gather"
    OPERANDS: ClassVar[tuple[str, ...]] = ("data", "indices")
    DATA_OPERANDS: ClassVar[tuple[int, ...] | None] = (0,)
    axis = int_attr(0)

    def infer_shapes(self) -> list[TensorType]:
        data, indices = self.input_shapes()
        axis = self.data_axis()
        shape = data[:axis] + indices + data[axis + 1:]
        return [result_type_like(shape, self.operands[0].type)]

    def query_op_attr(self):
        # The table stays in DDR and is read by the gather itself (embedding, seed 003).
        return self.op_attr(
            align_mode=AlignMode.BOTH, engine=Engine.LSU, need_load=ALL_OPERANDS & ~1
        )

    def compute(self, data: np.ndarray, indices: np.ndarray) -> list[np.ndarray]:
        axis = self.data_axis()
        wrapped = self.wrap_indices(indices, np.int64(data.shape[axis]), lambda _: axis)
        return [np.take(data, wrapped, axis=axis)]

    def gen_op_code(self, loops):
        return OpCode("op_gather", (self.data_axis(),))

    DDR_TABLE: ClassVar[bool] = True

    def indexing_axes(self):
        """Data dims before the axis follow the result's first dims, those after it the
        result's last; the indexed dim is read whole. Indices follow the result dims they
        become."""
        data, indices = self.input_shapes()
        axis = self.data_axis()
        after = axis + len(indices)
        data_axes = (*range(axis), None, *range(after, after + len(data) - axis - 1))
        return [data_axes, tuple(range(axis, after))]


# --------------------------------------------------------------------------------------
# GatherElements
# --------------------------------------------------------------------------------------


@tx8be_op
class GatherElementsOp(IndexingOp):
    """ONNX GatherElements: out[i][j][k] = data[i][indices[i][j][k]][k] for axis = 1.

    `indices` has the rank of `data`; the result has the shape of `indices`. Along the
    other dimensions indices.shape[d] <= data.shape[d] (the leading part of data is read).
    `axis` (default 0, negative counts from the end) is the dimension the indices select
    in; negative indices count from the end of it.
    """

    name = "tx8be.GatherElements"
    OPERANDS: ClassVar[tuple[str, ...]] = ("data", "indices")
    DATA_OPERANDS: ClassVar[tuple[int, ...] | None] = (0,)
    axis = int_attr(0)

    def same_rank_axis(self) -> int:
        """The normalized axis, after checking that indices has the rank of data."""
        data, indices = self.input_shapes()
        axis = self.data_axis()
        if len(indices) != len(data):
            raise self.fail(
                f"indices must have the rank of data ({len(data)}), got rank {len(indices)}"
            )
        return axis

    def verify_shapes(self) -> None:
        data, indices = self.input_shapes()
        axis = self.same_rank_axis()
        for d, (n, m) in enumerate(zip(indices, data, strict=True)):
            if d != axis and n > m:
                raise self.fail(
                    f"indices dimension {d} has size {n}, larger than data's {m}; "
                    f"only along axis {axis} may indices be larger than data"
                )

    def infer_shapes(self) -> list[TensorType]:
        self.same_rank_axis()
        return [result_type_like(self.input_shapes()[1], self.operands[0].type)]

    def compute(self, data: np.ndarray, indices: np.ndarray) -> list[np.ndarray]:
        axis = self.data_axis()
        wrapped = self.wrap_indices(indices, np.int64(data.shape[axis]), lambda _: axis)
        # An open grid over indices' shape, with the axis coordinate replaced by the
        # indices (take_along_axis would need indices to broadcast against all of data).
        grid = list(np.indices(wrapped.shape, sparse=True))
        grid[axis] = wrapped
        return [data[tuple(grid)]]

    def gen_op_code(self, loops):
        return OpCode("op_gather_elements", (self.data_axis(),))

    def indexing_axes(self):
        """Data follows the result except along the axis (read whole); the indices have
        the result's shape."""
        rank = len(self.input_shapes()[1])
        axis = self.data_axis()
        return [tuple(None if d == axis else d for d in range(rank)), tuple(range(rank))]


# --------------------------------------------------------------------------------------
# ScatterND
# --------------------------------------------------------------------------------------

_REDUCTIONS = {
    "add": np.add,
    "mul": np.multiply,
    "max": np.maximum,
    "min": np.minimum,
}


@tx8be_op
class ScatterNDOp(IndexingOp):
    """ONNX ScatterND: a copy of `data` with slices at `indices` replaced by `updates`.

    `indices` has shape [..., k] with 1 <= k <= rank(data): each row of k indices names one
    slice data[i0, ..., ik-1] of shape data.shape[k:]; `updates` has shape
    indices.shape[:-1] + data.shape[k:]. `reduction` says how an update meets the data:
    "none" (default) replaces it (with duplicate indices the last update wins; ONNX leaves
    that undefined), "add", "mul", "max" and "min" combine them, applying duplicates one
    after another. Reductions need numeric data; f16/bf16 reductions accumulate in fp32.
    Negative indices count from the end of their dimension.
    """

    name = "tx8be.ScatterND"
    OPERANDS: ClassVar[tuple[str, ...]] = ("data", "indices", "updates")
    DATA_OPERANDS: ClassVar[tuple[int, ...] | None] = (0, 2)
    reduction = str_attr("none")

    def index_depth(self) -> int:
        """k = indices.shape[-1], checked against the data rank."""
        data, indices = self.input_shapes()[:2]
        if not data:
            raise self.fail("data (operand #0) must have rank >= 1, got a rank-0 tensor")
        if not indices:
            raise self.fail("indices (operand #1) must have rank >= 1, got a rank-0 tensor")
        k = indices[-1]
        if not 1 <= k <= len(data):
            raise self.fail(
                f"the last dimension of indices ({k}) must be between 1 and the rank "
                f"of data ({len(data)})"
            )
        return k

    def verify_shapes(self) -> None:
        reduction = self.attr("reduction")
        if reduction != "none" and reduction not in _REDUCTIONS:
            raise self.fail(
                f"reduction must be \"none\", \"add\", \"mul\", \"max\" or \"min\", "
                f"got \"{reduction}\""
            )
        dtype = short_name(self.operands[0].type.get_element_type())
        if reduction != "none" and dtype in BOOLS:
            raise self.fail(
                f"reduction \"{reduction}\" needs numeric data, got element type {dtype}"
            )
        data, indices, updates = self.input_shapes()
        k = self.index_depth()
        expected = indices[:-1] + data[k:]
        if updates != expected:
            raise self.fail(
                f"updates must have shape indices.shape[:-1] + data.shape[{k}:] = "
                f"{list(expected)}, got {list(updates)}"
            )

    def infer_shapes(self) -> list[TensorType]:
        self.index_depth()
        return [self.operands[0].type]

    def query_op_attr(self):
        return self.op_attr(align_mode=AlignMode.ALIGN, engine=Engine.LSU)

    # -- slicing: the first k data dims are addressed by the index values, so they are
    # whole in every slice; the trailing dims (each update's slice) may be cut, with the
    # updates' trailing dims following them; the indices are read whole.
    def indexing_loops(self):
        k = self.index_depth()
        shape = self.input_shapes()[0]
        return [LoopDim(d) if i >= k else LoopDim.whole(d) for i, d in enumerate(shape)]

    def indexing_axes(self):
        data, indices, updates = self.input_shapes()
        k = self.index_depth()
        batch = len(indices) - 1
        return [
            tuple(range(len(data))),
            (None,) * len(indices),
            (*(None,) * batch, *range(k, len(data))),
        ]

    def compute(
        self, data: np.ndarray, indices: np.ndarray, updates: np.ndarray
    ) -> list[np.ndarray]:
        k = self.index_depth()
        # The last index dimension runs over data dimensions 0..k-1.
        dims = np.asarray(data.shape[:k], np.int64)
        rows = self.wrap_indices(indices, dims, lambda position: position[-1]).reshape(-1, k)
        target = tuple(rows.T)
        slices = updates.reshape(rows.shape[0], *data.shape[k:])
        reduction = self.attr("reduction")
        if reduction == "none":
            out = data.copy()
            out[target] = slices
            return [out]
        out, slices = upcast(data.copy(), slices)
        _REDUCTIONS[reduction].at(out, target, slices)
        return [out]

    def gen_op_code(self, loops):
        """`op_scatter_nd`: the index depth and the reduction."""
        return OpCode("op_scatter_nd", (self.index_depth(),
                                        "TX_SCATTER_" + self.attr("reduction").upper()))


@dataclass(frozen=True)
class IndexSlicer(Slicer):
    """Indexing ops: operand dims follow the loop dims they become (an indexed dim is
    read whole); the work is a gather/scatter transfer of the slice (`ddr`: the table is
    read from DDR by the op itself)."""

    ddr: bool

    def work(self, shape):
        return self.transfer(shape, ddr=self.ddr)


OPS = [GatherOp, GatherElementsOp, ScatterNDOp]
