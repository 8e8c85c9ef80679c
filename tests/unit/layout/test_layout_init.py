"""layout-init (seed 003, layoutInitPass): Conv and Gemm from their attributes, every
other op UNKNOWN, recorded input layouts removed, the program's meaning kept."""

from __future__ import annotations

import numpy as np
import pytest

from examples.make_models import MODELS
from tx8c.dialect import make_context
from tx8c.dialect.base import Tx8beOp
from tx8c.dialect.layout import UNKNOWN
from tx8c.dialect.ops import backend as be
from tx8c.dialect.ops import conv_gemm as cg
from tx8c.dialect.ops import elementwise as ew
from tx8c.frontend.onnx.importer import import_onnx
from tx8c.ir import parse_module
from tx8c.sim.reference import main_function, run_reference
from tx8c.transforms.layout.layout_init import LayoutInitPass
from tx8c.transforms.layout.layout_transmit import LayoutTransmitPass, input_layouts

from .test_layout_transmit import Graph, _example_feeds, _onnx_model, random_inputs


def init(module):
    LayoutInitPass().apply(make_context(), module)
    return module


def tx8be_ops(module) -> list[Tx8beOp]:
    return [op for op in module.walk() if isinstance(op, Tx8beOp)]


@pytest.mark.parametrize(
    "data_format, weight_format, x, w, expected",
    [
        ("NCHW", "OIHW", (1, 3, 8, 8), (4, 3, 3, 3), "NCHW-OIHW-NCHW"),
        ("NHWC", "HWOI", (2, 8, 8, 3), (3, 3, 4, 3), "NHWC-HWOI-NHWC"),
        ("NCHW", "HWOI", (1, 3, 8, 8), (3, 3, 4, 3), "NCHW-HWOI-NCHW"),
        ("NHWC", "OIHW", (1, 8, 8, 3), (4, 3, 3, 3), "NHWC-OIHW-NHWC"),
    ],
)
def test_conv_from_its_formats(data_format, weight_format, x, w, expected):
    g = Graph(x, w)
    conv = g.op(cg.ConvOp, *g.args, data_format=data_format, weight_format=weight_format,
                layout_str="Tensor")
    init(g.module(conv.results[0]))
    assert conv.layout == expected


@pytest.mark.parametrize(
    "a, b, expected",
    [
        ((1, 4), (4, 5), "Tensor-NTensor-Tensor"),
        ((1, 4, 3), (1, 3, 5), "Tensor-Tensor-Tensor"),  # seed 003's figure
        ((2, 4, 3), (3, 5), "NTensor-NTensor-NTensor"),
        ((1, 4, 3), (2, 3, 5), "Tensor-NTensor-NTensor"),  # the result is batched
        ((3,), (3, 5), None),  # rank < 2 is rejected by Gemm itself
    ],
)
def test_gemm_from_its_shapes(a, b, expected):
    g = Graph(a, b)
    if expected is None:
        with pytest.raises(Exception, match="rank"):
            g.op(cg.GemmOp, *g.args)
        return
    gemm = g.op(cg.GemmOp, *g.args)
    init(g.module(gemm.results[0]))
    assert gemm.layout == expected


def test_a_gemm_bias_is_not_listed():
    g = Graph((2, 4), (4, 5), (5,))
    gemm = g.op(cg.GemmOp, *g.args)
    init(g.module(gemm.results[0]))
    assert gemm.layout == "NTensor-NTensor-NTensor"


def test_every_other_op_becomes_unknown_whatever_it_had():
    text = """
    func.func @main(%x: tensor<1x4x6x6xf32> {tx8c.layout = "NCHW", tx8c.name = "x"})
        -> tensor<1x4x6x6xf32> {
      %k = tx8be.Constant {value = dense<2.0> : tensor<6xf32>, layout_str = "Tensor"}
        : () -> tensor<6xf32>
      %0 = tx8be.Relu %x {layout_str = "NHWC"} : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
      %1 = tx8be.Mul %0, %k {layout_str = "NCHW"}
        : (tensor<1x4x6x6xf32>, tensor<6xf32>) -> tensor<1x4x6x6xf32>
      func.return %1 : tensor<1x4x6x6xf32>
    }"""
    module = init(parse_module(text))
    assert [op.layout for op in tx8be_ops(module)] == [UNKNOWN] * 3
    function = main_function(module)
    assert input_layouts(function) == [UNKNOWN]
    # other argument attributes stay
    assert function.arg_attrs.data[0].data["tx8c.name"].data == "x"


def test_ops_inside_groups_are_initialised_too():
    g = Graph((1, 4, 6, 6), (4, 4, 1, 1))
    x, w = g.args
    conv = g.op(cg.ConvOp, x, w)
    relu = g.op(ew.ReluOp, conv.results[0], layout_str="NCHW")
    module = g.module(relu.results[0])
    group = be.GroupOp.wrap([conv, relu], layout_str="NCHW")
    init(module)
    module.verify()
    assert conv.layout == "NCHW-OIHW-NCHW"
    assert relu.layout == UNKNOWN
    assert group.layout == UNKNOWN


def test_init_after_transmit_starts_over():
    g = Graph((1, 4, 6, 6), (4, 4, 1, 1))
    x, w = g.args
    relu = g.op(ew.ReluOp, x)
    conv = g.op(cg.ConvOp, relu.results[0], w)
    module = g.module(conv.results[0])
    init(module)
    LayoutTransmitPass().apply(make_context(), module)
    assert relu.layout == "NCHW"
    init(module)
    assert relu.layout == UNKNOWN
    assert input_layouts(main_function(module)) == [UNKNOWN, UNKNOWN]
    assert conv.layout == "NCHW-OIHW-NCHW"


@pytest.mark.parametrize("name", sorted(MODELS))
def test_examples_only_conv_and_gemm_are_known_and_meaning_is_kept(name):
    model = _onnx_model(name)
    module = import_onnx(model).module
    feeds = _example_feeds(model)
    before = run_reference(module, feeds)
    init(module)
    module.verify()
    for op in tx8be_ops(module):
        if op.name in ("tx8be.Conv", "tx8be.Gemm"):
            assert op.layout == op.initial_layout_str() != UNKNOWN
        else:
            assert op.layout == UNKNOWN
    after = run_reference(module, feeds)
    for b, a in zip(before, after, strict=True):
        np.testing.assert_array_equal(a, b)


def test_meaning_kept_on_a_small_graph():
    g = Graph((1, 3, 8, 8), (4, 3, 3, 3))
    conv = g.op(cg.ConvOp, *g.args)
    module = g.module(conv.results[0])
    inputs = random_inputs(module)
    before = run_reference(module, inputs)
    init(module)
    np.testing.assert_array_equal(run_reference(module, inputs)[0], before[0])
