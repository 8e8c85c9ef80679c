"""ProductOp: Conv and Gemm say where their channels and bias are, and fold scales.

Each fold is checked numerically: the ops a fold returns, run by the reference executor,
give what the op's own compute followed by the scale (and shift) gives.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Region

from tx8c.dialect.ops.backend import ConstantOp
from tx8c.dialect.ops.conv_gemm import ConvOp, GemmOp
from tx8c.dialect.types import tensor_of
from tx8c.ir_utils import shape_of
from tx8c.sim.reference import run_reference

RNG = np.random.default_rng(5)

CASES = {
    "conv_nchw": (ConvOp, (2, 4, 5, 5), [(6, 4, 3, 3), (6,)], {}),
    "conv_nhwc_hwoi": (ConvOp, (1, 5, 5, 4), [(3, 3, 6, 4), (6,)],
                       {"data_format": "NHWC", "weight_format": "HWOI"}),
    "conv_grouped": (ConvOp, (1, 4, 5, 5), [(6, 2, 3, 3)], {"groups": 2}),
    "gemm": (GemmOp, (3, 4), [(4, 5), (5,)], {"beta": 0.5}),
    "gemm_transposed": (GemmOp, (2, 4, 3), [(5, 4)],
                        {"trans_a": True, "trans_b": True, "alpha": 2.0}),
}


def f32(*shape) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


class Case:
    """One op on a graph input x and constant weights, and its expected output."""

    def __init__(self, name: str):
        cls, x_shape, w_shapes, attrs = CASES[name]
        self.x = f32(*x_shape)
        self.weights = [f32(*s) for s in w_shapes]
        self.block = Block(arg_types=[tensor_of(self.x)])
        constants = [ConstantOp.from_array(w) for w in self.weights]
        self.block.add_ops(constants)
        self.op = cls.make([self.block.args[0], *(c.results[0] for c in constants)], **attrs)
        self.block.add_op(self.op)
        self.output = self.op.compute(self.x, *self.weights)[0]
        self.out_shape = shape_of(self.op.results[0])

    def along(self, vector: np.ndarray, axis: int, rank: int) -> np.ndarray:
        shape = [1] * rank
        shape[axis] = -1
        return vector.reshape(shape)

    def run(self, new_ops: list, x: np.ndarray | None = None) -> np.ndarray:
        """Run the graph whose result is the last of `new_ops` (added to the block)."""
        self.block.add_ops(new_ops)
        result = new_ops[-1].results[0]
        self.block.add_op(func.ReturnOp(result))
        arg_types = [a.type for a in self.block.args]
        module = ModuleOp([func.FuncOp("main", (arg_types, [result.type]), Region(self.block))])
        module.verify()
        return run_reference(module, [self.x if x is None else x])[0]


@pytest.mark.parametrize("name", list(CASES))
def test_output_affine_folded_computes_scale_and_shift(name) -> None:
    case = Case(name)
    axis = case.op.output_channel_axis()
    scale, shift = f32(case.out_shape[axis]), f32(case.out_shape[axis])
    new_ops = case.op.output_affine_folded(scale, shift)
    assert new_ops is not None and type(new_ops[-1]) is type(case.op)
    rank = len(case.out_shape)
    want = case.output * case.along(scale, axis, rank) + case.along(shift, axis, rank)
    np.testing.assert_allclose(case.run(new_ops), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", list(CASES))
def test_input_scale_folded_scales_the_data_channels(name) -> None:
    case = Case(name)
    x_rank = case.x.ndim
    axis = case.op.data_channel_axis() % x_rank
    scale = f32(case.x.shape[axis])
    new_ops = case.op.input_scale_folded(case.block.args[0], scale)
    assert new_ops is not None
    want = case.op.compute(case.x * case.along(scale, axis, x_rank), *case.weights)[0]
    np.testing.assert_allclose(case.run(new_ops), want, rtol=1e-4, atol=1e-4)


def test_uniform_scale_goes_into_gemm_alpha_and_beta_but_not_into_conv() -> None:
    gemm = Case("gemm")
    new = gemm.op.uniform_scale_folded(np.full(5, 3.0, np.float32))
    assert new is not None and new.attr("alpha") == 3.0 and new.attr("beta") == 1.5
    np.testing.assert_allclose(gemm.run([new]), gemm.output * 3, rtol=1e-5, atol=1e-5)
    assert gemm.op.uniform_scale_folded(np.arange(5, dtype=np.float32)) is None
    assert Case("conv_nchw").op.uniform_scale_folded(np.full(6, 3.0, np.float32)) is None


def test_folds_refuse_non_finite_factors_and_non_constant_weights() -> None:
    case = Case("conv_nchw")
    bad = np.array([1, np.inf, 1, 1, 1, 1], np.float32)
    assert case.op.output_affine_folded(bad, None) is None
    block = Block(arg_types=[tensor_of(case.x), tensor_of(case.weights[0])])
    conv = ConvOp.make(list(block.args))
    assert conv.constant_weights() is None
    assert conv.output_affine_folded(np.ones(6, np.float32), None) is None
    assert conv.input_scale_folded(block.args[0], np.ones(4, np.float32)) is None


@pytest.mark.parametrize(
    ("name", "axes", "addend_shape"),
    [
        ("conv_nchw", (1, 1, 0), (6, 1, 1)),
        ("conv_nhwc_hwoi", (3, 3, 2), (6,)),
        ("gemm", (1, -1, -1), (5,)),
        ("gemm_transposed", (2, -2, -2), (5,)),
    ],
)
def test_channel_axes_and_bias_shape(name, axes, addend_shape) -> None:
    op = Case(name).op
    assert (op.output_channel_axis(), op.data_channel_axis(), op.weight_output_axis()) == axes
    assert op.bias_addend_shape((op.results[0].type.get_shape()[axes[0]],)) == addend_shape


def test_bias_from_addend_and_back() -> None:
    conv = Case("conv_nchw").op
    out = shape_of(conv.results[0])  # (2, 6, 3, 3)
    per_channel = np.arange(6, dtype=np.float32).reshape(6, 1, 1)
    assert conv.bias_from_addend(per_channel, out).tolist() == list(range(6))
    assert conv.bias_from_addend(np.ones((3, 3), np.float32), out) is None  # varies in HW
    gemm = Case("gemm").op
    row = np.ones((1, 5), np.float32)
    assert gemm.bias_from_addend(row, (3, 5)) is row  # any addend that broadcasts
    assert gemm.bias_from_addend(np.ones((2, 3, 5), np.float32), (3, 5)) is None
    assert (gemm.bias_scale(), gemm.unscaled_bias_attrs()) == (0.5, {"beta": 1.0})
    assert (conv.bias_scale(), conv.unscaled_bias_attrs()) == (1.0, {})
    assert conv.kernel_size() == (3, 3)
