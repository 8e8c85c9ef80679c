"""ConvTranspose and Einsum converters against onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

from tests.unit.frontend.onnx_check import check_node

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("attrs, groups", [
    ({}, 1),
    ({"strides": [2, 2]}, 1),
    ({"strides": [2, 3], "pads": [1, 0, 0, 1]}, 1),
    ({"strides": [2, 2], "output_padding": [1, 1]}, 1),
    ({"dilations": [2, 1], "pads": [1, 1, 1, 1]}, 1),
    ({"strides": [2, 2]}, 2),
    ({"strides": [3, 2], "output_shape": [10, 8]}, 1),
    ({"strides": [2, 2], "auto_pad": "SAME_UPPER"}, 1),
    ({"strides": [2, 2], "auto_pad": "SAME_LOWER"}, 1),
    ({"strides": [1, 1], "pads": [2, 2, 2, 2]}, 1),
])
def test_conv_transpose(attrs, groups) -> None:
    x = RNG.standard_normal((1, 4, 3, 4)).astype(np.float32)
    w = RNG.standard_normal((4, 6 // groups, 3, 3)).astype(np.float32)  # C_out = 6
    b = RNG.standard_normal(6).astype(np.float32)
    check_node("ConvTranspose", {"x": x}, initializers={"w": w, "b": b}, group=groups,
               rtol=1e-4, atol=1e-5, **attrs)


def test_conv_transpose_1d_and_run_time_weight() -> None:
    x = RNG.standard_normal((2, 3, 5)).astype(np.float32)
    w = RNG.standard_normal((3, 2, 4)).astype(np.float32)
    check_node("ConvTranspose", {"x": x, "w": w}, strides=[3], output_padding=[1],
               rtol=1e-4, atol=1e-5)


def test_conv_transpose_through_the_pipeline() -> None:
    x = RNG.standard_normal((1, 4, 5, 5)).astype(np.float32)
    w = RNG.standard_normal((4, 2, 3, 3)).astype(np.float32)
    check_node("ConvTranspose", {"x": x}, initializers={"w": w}, strides=[2, 2],
               pads=[1, 1, 1, 1], output_padding=[1, 1], rtol=1e-4, atol=1e-5, pipeline=True)


EINSUM = [
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("bhqk,bhkd->bhqd", [(2, 3, 4, 6), (2, 3, 6, 5)]),
    ("ij->ji", [(3, 4)]),
    ("ij->i", [(3, 4)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("i,j->ij", [(3,), (4,)]),
    ("i,i", [(5,), (5,)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,jk->...ik", [(2, 2, 3, 4), (4, 5)]),
    ("bij,bjk,bkl->bil", [(2, 3, 4), (2, 4, 5), (2, 5, 2)]),
    ("bnqd,bnkd->bnqk", [(1, 2, 3, 4), (1, 1, 5, 4)]),
    ("ijk->", [(2, 3, 4)]),
    ("abc,cd->abd", [(2, 3, 4), (4, 6)]),
    ("bqhd,bkhd->bhqk", [(2, 4, 3, 5), (2, 6, 3, 5)]),
]


@pytest.mark.parametrize("equation, shapes", EINSUM, ids=[e for e, _ in EINSUM])
def test_einsum(equation, shapes) -> None:
    inputs = {f"x{i}": RNG.standard_normal(s).astype(np.float32) for i, s in enumerate(shapes)}
    check_node("Einsum", inputs, equation=equation, rtol=1e-5, atol=1e-5)


def test_integer_einsum_is_exact() -> None:
    inputs = {"a": RNG.integers(-9, 9, (2, 3, 4)).astype(np.int64),
              "b": RNG.integers(-9, 9, (2, 4, 5)).astype(np.int64)}
    check_node("Einsum", inputs, equation="bij,bjk->bik")


def test_einsum_through_the_pipeline() -> None:
    inputs = {"q": RNG.standard_normal((1, 2, 4, 8)).astype(np.float32),
              "k": RNG.standard_normal((1, 2, 6, 8)).astype(np.float32)}
    check_node("Einsum", inputs, equation="bhqd,bhkd->bhqk", rtol=1e-5, atol=1e-5,
               pipeline=True)


def test_einsum_diagonal_is_refused() -> None:
    from onnx import helper

    from tests.unit.frontend.onnx_check import graph_model
    from tx8c.frontend.onnx.importer import import_onnx
    from tx8c.frontend.onnx.loader import OnnxImportError

    x = np.ones((3, 3), np.float32)
    model = graph_model([helper.make_node("Einsum", ["x"], ["out0"], equation="ii->i")],
                        {"x": x}, ["out0"])
    with pytest.raises(OnnxImportError, match="repeats a letter"):
        import_onnx(model)
