"""Indexing ops: compute vs onnxruntime, infer_shapes vs compute, index bounds, OpAttr."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tests.helpers import (
    OnnxCase,
    check_against_onnx,
    check_shapes,
    node,
    run_onnx,
    run_op,
    single_op_module,
)
from tx8c.dialect.attrs import AlignMode
from tx8c.dialect.ops import indexing as ix
from tx8c.errors import Tx8ComputeError
from tx8c.interfaces.oplib import ALL_OPERANDS, Engine

RNG_SEEDS = (0, 1, 2)


def _shape(rng: np.random.Generator, lo_rank: int = 1, hi_rank: int = 4) -> tuple[int, ...]:
    rank = int(rng.integers(lo_rank, hi_rank + 1))
    return tuple(int(d) for d in rng.integers(1, 6, size=rank))


def _data(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def _indices(rng, dim: int, shape: tuple[int, ...], dtype=np.int64) -> np.ndarray:
    """Random indices into a dimension of size `dim`, negative ones included."""
    return rng.integers(-dim, dim, size=shape).astype(dtype)


# --------------------------------------------------------------------------------------
# Gather: several axes (negative too), negative indices, rank-0 and rank-2 indices
# --------------------------------------------------------------------------------------

GATHER_SETUPS = [  # (seed, indices rank, index dtype, negative axis)
    (0, 2, np.int64, False),
    (1, 1, np.int32, True),
    (2, 0, np.int64, False),  # a scalar index drops the axis
    (3, 0, np.int32, True),
    (4, 3, np.int64, True),
]


def gather_case(seed: int, indices_rank: int, index_dtype, negative_axis: bool) -> OnnxCase:
    rng = np.random.default_rng(seed)
    shape = _shape(rng)
    axis = int(rng.integers(0, len(shape)))
    indices_shape = tuple(int(d) for d in rng.integers(2, 5, size=indices_rank))
    indices = _indices(rng, shape[axis], indices_shape, index_dtype)
    if negative_axis:
        axis -= len(shape)
    return OnnxCase(
        ix.GatherOp, [_data(rng, shape), indices], {"axis": axis},
        [node("Gather", ["in0", "in1"], axis=axis)],
    )


# --------------------------------------------------------------------------------------
# GatherElements: indices of data's rank, smaller than data off the axis
# --------------------------------------------------------------------------------------


def gather_elements_case(seed: int) -> OnnxCase:
    rng = np.random.default_rng(12 + seed)
    shape = _shape(rng)
    axis = int(rng.integers(0, len(shape)))
    indices_shape = tuple(
        int(rng.integers(1, 6)) if d == axis else int(rng.integers(max(1, n - 1), n + 1))
        for d, n in enumerate(shape)
    )
    indices = _indices(rng, shape[axis], indices_shape, (np.int64, np.int32)[seed % 2])
    if seed == 1:
        axis -= len(shape)
    return OnnxCase(
        ix.GatherElementsOp, [_data(rng, shape), indices], {"axis": axis},
        [node("GatherElements", ["in0", "in1"], axis=axis)],
    )


# --------------------------------------------------------------------------------------
# ScatterND (opset 18 for max/min); "none" gets unique indices (duplicates are undefined)
# --------------------------------------------------------------------------------------

SCATTER_SETUPS = [  # (seed, reduction)
    (0, "none"), (1, "none"), (2, "none"), (3, "add"), (4, "mul"), (5, "max"), (6, "min"),
]


def scatter_inputs(rng: np.random.Generator, unique: bool, dtype=np.float32):
    """data, indices [..., k] (int64, some negative), updates for a random ScatterND."""
    shape = _shape(rng, 1, 4)
    k = int(rng.integers(1, len(shape) + 1))
    batch = tuple(int(d) for d in rng.integers(2, 5, size=int(rng.integers(0, 3))))
    count = int(np.prod(batch, dtype=np.int64))
    cells = int(np.prod(shape[:k]))
    if unique:
        count = min(int(rng.integers(2, 6)), cells)
        batch = (count,)
    flat = rng.choice(cells, size=count, replace=not unique)
    if not unique and count > 1:
        flat[-1] = flat[0]  # reductions apply duplicates one after another
    rows = np.stack(np.unravel_index(flat, shape[:k]), axis=-1).astype(np.int64)
    rows -= np.asarray(shape[:k]) * rng.integers(0, 2, size=rows.shape)  # some negative
    indices = rows.reshape(*batch, k)
    updates = rng.standard_normal(batch + shape[k:]) * 2
    data = rng.standard_normal(shape) * 2
    if np.issubdtype(dtype, np.integer):
        data, updates = np.round(data), np.round(updates)
    return data.astype(dtype), indices, updates.astype(dtype)


def scatter_case(seed: int, reduction: str, dtype=np.float32) -> OnnxCase:
    rng = np.random.default_rng(20 + seed)
    inputs = list(scatter_inputs(rng, unique=reduction == "none", dtype=dtype))
    return OnnxCase(
        ix.ScatterNDOp, inputs, {"reduction": reduction},
        [node("ScatterND", ["in0", "in1", "in2"], reduction=reduction)], opset=18,
    )


CASES = (
    [gather_case(*setup) for setup in GATHER_SETUPS]
    + [gather_elements_case(s) for s in RNG_SEEDS]
    + [scatter_case(*setup) for setup in SCATTER_SETUPS]
)
IDS = [f"{c.id}-{c.attrs}-{i}" for i, c in enumerate(CASES)]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_matches_onnxruntime(case: OnnxCase) -> None:
    check_against_onnx(case)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_infer_shapes_matches_compute(case: OnnxCase) -> None:
    check_shapes(case)


def test_cases_cover_the_interesting_inputs() -> None:
    """The random cases include what the ops must get right, so the tests above see it."""
    gathers = [c for c in CASES if c.op_cls is ix.GatherOp]
    assert any(c.inputs[1].ndim == 0 for c in gathers)
    assert len({c.attrs["axis"] for c in gathers}) >= 3
    assert any(c.attrs["axis"] < 0 for c in gathers)
    for op_cls in (ix.GatherOp, ix.GatherElementsOp, ix.ScatterNDOp):
        assert any((c.inputs[1] < 0).any() for c in CASES if c.op_cls is op_cls)
    depths = {c.inputs[1].shape[-1] for c in CASES if c.op_cls is ix.ScatterNDOp}
    assert len(depths) >= 2


# --------------------------------------------------------------------------------------
# Other dtypes
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.bool_, np.float16])
def test_gathers_in_other_dtypes(dtype) -> None:
    rng = np.random.default_rng(7)
    data = rng.integers(-50, 50, size=(3, 4, 5)).astype(dtype)
    indices = _indices(rng, 4, (2, 3))
    check_against_onnx(OnnxCase(
        ix.GatherOp, [data, indices], {"axis": 1}, [node("Gather", ["in0", "in1"], axis=1)]
    ))
    elements = _indices(rng, 5, (2, 4, 3), np.int32)
    check_against_onnx(OnnxCase(
        ix.GatherElementsOp, [data, elements], {"axis": -1},
        [node("GatherElements", ["in0", "in1"], axis=-1)],
    ))


def test_gather_in_bf16_moves_values_exactly() -> None:
    rng = np.random.default_rng(8)
    data = _data(rng, (4, 6)).astype(ml_dtypes.bfloat16)
    indices = _indices(rng, 6, (3,))
    (got,) = run_op(ix.GatherOp, [data, indices], axis=1)
    assert got.dtype == np.dtype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(got.astype(np.float32), data.astype(np.float32)[:, indices])


@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64])
def test_scatter_nd_integers(dtype, reduction: str) -> None:
    check_against_onnx(scatter_case(3, reduction, dtype))


def test_scatter_nd_bool_replaces() -> None:
    data = np.zeros((3, 4), np.bool_)
    indices = np.array([[2, 1], [0, -1]], np.int64)
    updates = np.array([True, True])
    check_against_onnx(OnnxCase(
        ix.ScatterNDOp, [data, indices, updates], {},
        [node("ScatterND", ["in0", "in1", "in2"])],
    ))


@pytest.mark.parametrize("reduction", ["add", "mul", "max"])
def test_scatter_nd_f16_reduces_in_fp32(reduction: str) -> None:
    """onnxruntime has no f16 ScatterND reduction: compare with its f32 result, rounded."""
    case = scatter_case(4, reduction)
    half = [a.astype(np.float16) if a.dtype == np.float32 else a for a in case.inputs]
    (expected,) = run_onnx(OnnxCase(
        case.op_cls, [a.astype(np.float32) if a.dtype == np.float16 else a for a in half],
        case.attrs, case.nodes, opset=18,
    ))
    (got,) = run_op(ix.ScatterNDOp, half, **case.attrs)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, expected.astype(np.float16))


def test_scatter_nd_int32_indices_match_int64() -> None:
    data, indices, updates = scatter_case(5, "add").inputs
    wide = run_op(ix.ScatterNDOp, [data, indices, updates], reduction="add")
    narrow = run_op(ix.ScatterNDOp, [data, indices.astype(np.int32), updates], reduction="add")
    np.testing.assert_array_equal(wide[0], narrow[0])


# --------------------------------------------------------------------------------------
# Index bounds
# --------------------------------------------------------------------------------------

OUT_OF_RANGE = [
    (ix.GatherOp, [np.zeros((2, 3), np.float32), np.array([[0, 3]], np.int64)], {"axis": 1},
     r"op 'tx8be.Gather' index 3 \(at indices\[0, 1\]\) is out of range for dimension 1 "
     r"of data, of size 3 \(valid: -3..2\)"),
    (ix.GatherOp, [np.zeros((2, 3), np.float32), np.array(-3, np.int32)], {},
     r"op 'tx8be.Gather' index -3 \(at the scalar indices\) is out of range for "
     r"dimension 0 of data, of size 2"),
    (ix.GatherElementsOp, [np.zeros((2, 3), np.float32), np.array([[0], [-4]], np.int64)],
     {"axis": -1},
     r"op 'tx8be.GatherElements' index -4 \(at indices\[1, 0\]\) is out of range for "
     r"dimension 1 of data, of size 3"),
    (ix.ScatterNDOp, [np.zeros((2, 3, 4), np.float32), np.array([[1, 0], [0, 3]], np.int64),
                      np.zeros((2, 4), np.float32)], {"reduction": "add"},
     r"op 'tx8be.ScatterND' index 3 \(at indices\[1, 1\]\) is out of range for "
     r"dimension 1 of data, of size 3"),
    (ix.ScatterNDOp, [np.zeros((2, 3), np.float32), np.array([[-3]], np.int64),
                      np.zeros((1, 3), np.float32)], {},
     r"op 'tx8be.ScatterND' index -3 \(at indices\[0, 0\]\) is out of range for "
     r"dimension 0 of data, of size 2"),
]


@pytest.mark.parametrize(
    ("op_cls", "inputs", "attrs", "message"), OUT_OF_RANGE,
    ids=[f"{c[0].name}-{i}" for i, c in enumerate(OUT_OF_RANGE)],
)
def test_out_of_range_index_is_a_compute_error(op_cls, inputs, attrs, message) -> None:
    with pytest.raises(Tx8ComputeError, match=message):
        run_op(op_cls, inputs, **attrs)


# --------------------------------------------------------------------------------------
# OpAttr
# --------------------------------------------------------------------------------------


def _op(op_cls, inputs, **attrs):
    module = single_op_module(op_cls, inputs, **attrs)
    return next(o for o in module.walk() if isinstance(o, op_cls))


def test_op_attrs() -> None:
    data = np.zeros((1, 4, 3), np.float32)
    gather = _op(ix.GatherOp, [data, np.zeros(2, np.int64)]).query_op_attr()
    assert gather.engine == Engine.LSU
    assert gather.align_mode == AlignMode.BOTH
    assert gather.need_load == ALL_OPERANDS & ~1  # the table is read from DDR directly
    assert gather.need_load & 0b10
    elements = _op(ix.GatherElementsOp, [data, np.zeros((1, 2, 3), np.int64)]).query_op_attr()
    assert (elements.engine, elements.align_mode) == (Engine.LSU, AlignMode.BOTH)
    assert elements.need_load == ALL_OPERANDS
    scatter = _op(
        ix.ScatterNDOp, [data, np.zeros((2, 1), np.int64), np.zeros((2, 4, 3), np.float32)]
    ).query_op_attr()
    assert (scatter.engine, scatter.align_mode) == (Engine.LSU, AlignMode.ALIGN)
    assert scatter.need_load == ALL_OPERANDS
