"""Converters of ops that select or place by position (ArgMax ... CumProd) against
onnxruntime: ties, negative indices and axes, batch dims, reductions, run-time and
compile-time indices."""

from __future__ import annotations

import numpy as np
import pytest

from tests.unit.frontend.onnx_check import check_node

RNG = np.random.default_rng(0)
TIES = RNG.integers(0, 4, (3, 5, 4)).astype(np.float32)


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("axis, keepdims, last", [(0, 1, 0), (-1, 0, 0), (1, 1, 1), (2, 0, 1)])
def test_arg_extremes_with_ties(op, axis, keepdims, last) -> None:
    check_node(op, {"x": TIES}, axis=axis, keepdims=keepdims, select_last_index=last)


def test_argmax_of_integers_through_the_pipeline() -> None:
    check_node("ArgMax", {"x": TIES.astype(np.int32)}, axis=1, pipeline=True)


@pytest.mark.parametrize("axis, opset", [(-1, 13), (1, 11), (2, 13)])
def test_hardmax(axis, opset) -> None:
    check_node("Hardmax", {"x": TIES}, axis=axis, opset=opset)


@pytest.mark.parametrize("largest", [0, 1])
@pytest.mark.parametrize("axis", [0, -1])
def test_topk_with_ties(largest, axis) -> None:
    check_node("TopK", {"x": TIES}, n_outputs=2, initializers={"k": np.array([2], np.int64)},
               axis=axis, largest=largest)


def test_topk_through_the_pipeline() -> None:
    x = RNG.standard_normal((2, 16)).astype(np.float32)
    check_node("TopK", {"x": x}, n_outputs=2, initializers={"k": np.array([5], np.int64)},
               pipeline=True)


@pytest.mark.parametrize("batch_dims, indices", [
    (0, np.array([[0, 1], [2, -1], [-3, 0]], np.int64)),
    (0, np.array([[[1], [0]], [[2], [1]]], np.int64)),
    (1, np.array([[1, 0], [2, 3], [0, -1]], np.int64)),
])
def test_gather_nd(batch_dims, indices) -> None:
    data = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    check_node("GatherND", {"data": data}, initializers={"i": indices}, batch_dims=batch_dims)


def test_gather_nd_with_run_time_indices() -> None:
    data = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    idx = np.array([[[0, 1]], [[2, 3]]], np.int64)
    check_node("GatherND", {"data": data, "i": idx})


@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
def test_scatter_elements(reduction) -> None:
    data = RNG.standard_normal((3, 4)).astype(np.float32)
    indices = np.array([[1, 0, -1], [3, 2, 0], [0, 0, 1]], np.int64)
    if reduction == "none":
        indices = np.array([[1, 0, -1], [3, 2, 0], [0, 2, 1]], np.int64)
    updates = RNG.standard_normal((3, 3)).astype(np.float32)
    check_node("ScatterElements", {"data": data, "i": indices, "u": updates}, axis=1,
               reduction=reduction)


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_one_hot(axis) -> None:
    indices = np.array([[0, 3, -1], [2, -4, 1]], np.int64)
    check_node("OneHot", {"i": indices},
               initializers={"depth": np.array(4, np.int64),
                             "values": np.array([-1.0, 2.5], np.float32)}, axis=axis)


@pytest.mark.parametrize("time_axis", [0, 1])
def test_reverse_sequence(time_axis) -> None:
    x = RNG.standard_normal((4, 4, 3)).astype(np.float32)
    check_node("ReverseSequence", {"x": x}, initializers={"lens": np.array([4, 1, 2, 0],
                                                                           np.int64)},
               time_axis=time_axis, batch_axis=1 - time_axis)


def test_reverse_sequence_with_run_time_lengths() -> None:
    x = RNG.standard_normal((5, 3)).astype(np.float32)
    check_node("ReverseSequence", {"x": x, "lens": np.array([5, 2, 3], np.int64)},
               time_axis=0, batch_axis=1)


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_compress(axis) -> None:
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    condition = np.array([True, False, True], bool)
    attrs = {} if axis is None else {"axis": axis}
    check_node("Compress", {"x": x}, initializers={"c": condition}, **attrs)


@pytest.mark.parametrize("op", ["CumSum", "CumProd"])
@pytest.mark.parametrize("exclusive, reverse", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_running_sums_and_products(op, exclusive, reverse) -> None:
    x = RNG.uniform(0.5, 1.5, (3, 7)).astype(np.float32)
    opset = 26 if op == "CumProd" else 18
    if op == "CumProd":  # onnxruntime has no CumProd yet: numpy is the reference
        _check_cumprod(x, exclusive, reverse)
        return
    check_node(op, {"x": x}, initializers={"axis": np.array(1, np.int64)}, opset=opset,
               exclusive=exclusive, reverse=reverse)


def _check_cumprod(x, exclusive, reverse) -> None:
    from onnx import helper

    from tests.unit.frontend.onnx_check import graph_model
    from tx8c.frontend.onnx.importer import import_onnx
    from tx8c.sim.reference import run_reference

    model = graph_model([helper.make_node("CumProd", ["x", "axis"], ["out0"],
                                          exclusive=exclusive, reverse=reverse)],
                        {"x": x}, ["out0"], {"axis": np.array(1, np.int64)}, opset=26)
    (got,) = run_reference(import_onnx(model).module, {"x": x})
    y = np.flip(x, 1) if reverse else x
    if exclusive:
        y = np.concatenate([np.ones_like(y[:, :1]), y[:, :-1]], axis=1)
    expected = np.cumprod(y, axis=1)
    expected = np.flip(expected, 1) if reverse else expected
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_integer_cumsum_is_exact() -> None:
    x = RNG.integers(-1000, 1000, (2, 33)).astype(np.int64)
    check_node("CumSum", {"x": x}, initializers={"axis": np.array(-1, np.int64)})


@pytest.mark.parametrize("shape, axes", [((3, 4), None), ((7, 2), [0]), ((1, 9), [-1])])
def test_center_crop_pad(shape, axes) -> None:
    x = RNG.standard_normal((5, 6)).astype(np.float32)
    attrs = {} if axes is None else {"axes": axes}
    check_node("CenterCropPad", {"x": x}, initializers={
        "s": np.array(shape if axes is None else [shape[a] for a in axes], np.int64)}, **attrs)
