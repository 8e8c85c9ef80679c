"""peephole: each of the seed's patterns rewrites what it should (numerics before/after on
random inputs) and leaves alone what it must not."""

from __future__ import annotations

import numpy as np
import pytest

from tests.unit.midend.test_combine_parallel import Graph, apply_and_compare, op_counts
from tx8c.dialect.ops.conv_gemm import ConvOp, GemmOp
from tx8c.dialect.ops.elementwise import AddOp, MulOp, ReluOp
from tx8c.dialect.ops.movement import ConcatenateOp
from tx8c.transforms.midend.peephole import PeepholePass, concat_add_bytes

ONLY = {
    "conv_add_mul": PeepholePass(merge_const_adds=False, concat_to_pad=False),
    "merge_const_adds": PeepholePass(conv_add_mul=False, concat_to_pad=False),
    "concat_to_pad": PeepholePass(conv_add_mul=False, merge_const_adds=False),
    "fc_to_conv": PeepholePass(
        conv_add_mul=False, merge_const_adds=False, concat_to_pad=False, fc_to_conv=True
    ),
}

# --------------------------------------------------------------------------------------
# PatternTransformer1: Conv -> Add -> Mul
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("layout, bias", [("NCHW", True), ("NCHW", False), ("NHWC", True)])
def test_conv_add_mul_folds_into_the_conv(layout, bias):
    nchw = layout == "NCHW"
    g = Graph((1, 3, 6, 6) if nchw else (1, 6, 6, 3))
    weight = g.rand(4, 3, 3, 3) if nchw else g.rand(3, 3, 4, 3)
    operands = [g.args[0], weight, *([g.rand(4)] if bias else [])]
    y = g(ConvOp, *operands, pads=[1, 1, 1, 1], data_format=layout,
          weight_format="OIHW" if nchw else "HWOI")
    y = g(AddOp, y, g.rand(4, 1, 1) if nchw else g.rand(4))
    y = g(MulOp, g.rand(1, 4, 1, 1) if nchw else g.rand(1, 1, 1, 4), y)
    after = apply_and_compare(g.module(y), g.random_inputs(), PeepholePass())
    counts = op_counts(after)
    assert (counts["Conv"], counts["Add"], counts["Mul"], counts["Constant"]) == (1, 0, 0, 2)


def test_conv_add_alone_folds_into_the_bias():
    g = Graph((1, 3, 4, 4))
    y = g(ConvOp, g.args[0], g.rand(4, 3, 1, 1))
    y = g(AddOp, g.rand(1, 4, 1, 1), y)
    after = apply_and_compare(g.module(g(ReluOp, y)), g.random_inputs(), PeepholePass())
    counts = op_counts(after)
    assert (counts["Conv"], counts["Add"], counts["Constant"]) == (1, 0, 2)


def test_a_conv_read_twice_keeps_its_add():
    g = Graph((1, 3, 4, 4))
    conv = g(ConvOp, g.args[0], g.rand(4, 3, 1, 1))
    y = g(MulOp, g(AddOp, conv, g.rand(4, 1, 1)), g.rand(4, 1, 1))
    after = apply_and_compare(g.module(y, conv), g.random_inputs(), PeepholePass())
    assert (op_counts(after)["Add"], op_counts(after)["Mul"]) == (1, 1)


def _conv_add_mul(g: Graph, add_const, mul_operand=None):
    y = g(ConvOp, g.args[0], g.rand(4, 3, 1, 1))
    y = g(AddOp, y, add_const)
    return y, g(MulOp, y, mul_operand if mul_operand is not None else g.rand(4, 1, 1))


@pytest.mark.parametrize("case", ["spatial-add", "add-read-twice", "dynamic-scale"])
def test_conv_add_mul_leaves_other_shapes_alone(case):
    g = Graph((1, 3, 4, 4), (1, 4, 4, 4))
    add_const = g.rand(1, 1, 4, 4) if case == "spatial-add" else g.rand(4, 1, 1)
    scale = g.args[1] if case == "dynamic-scale" else None
    add, out = _conv_add_mul(g, add_const, scale)
    outs = (out, add) if case == "add-read-twice" else (out,)
    after = apply_and_compare(g.module(*outs), g.random_inputs(), ONLY["conv_add_mul"])
    # the Mul stays; an Add by a per-channel constant still folds into the bias
    assert op_counts(after)["Mul"] == 1
    assert op_counts(after)["Add"] == (1 if case == "spatial-add" else 0)


# --------------------------------------------------------------------------------------
# PatternTransformer2: consecutive constant adds
# --------------------------------------------------------------------------------------


def test_consecutive_constant_adds_merge():
    g = Graph((2, 3, 4))
    y = g(AddOp, g.args[0], g.rand(4))
    y = g(AddOp, g.rand(1, 4), y)
    y = g(AddOp, y, g.rand(3, 4))
    after = apply_and_compare(g.module(y), g.random_inputs(), ONLY["merge_const_adds"])
    counts = op_counts(after)
    assert (counts["Add"], counts["Constant"]) == (1, 1)


def test_constant_adds_merge_in_half_precision():
    g = Graph((2, 4), dtype=np.float16)
    y = g(AddOp, g.args[0], g.rand(4, dtype=np.float16))
    y = g(AddOp, y, g.rand(4, dtype=np.float16))
    after = apply_and_compare(g.module(y), g.random_inputs(), ONLY["merge_const_adds"],
                              rtol=1e-2, atol=1e-2)
    assert op_counts(after)["Add"] == 1


@pytest.mark.parametrize("case", ["blow-up", "inner-read-twice", "not-constant"])
def test_constant_adds_that_must_stay(case):
    g = Graph((4, 4), (4, 4))
    c1 = g.rand(4, 1) if case == "blow-up" else g.rand(4)
    inner = g(AddOp, g.args[0], c1)
    c2 = g.args[1] if case == "not-constant" else g.rand(1, 4) if case == "blow-up" \
        else g.rand(4)
    outer = g(AddOp, inner, c2)
    outs = (outer, inner) if case == "inner-read-twice" else (outer,)
    after = apply_and_compare(g.module(*outs), g.random_inputs(), ONLY["merge_const_adds"])
    assert op_counts(after)["Add"] == 2


# --------------------------------------------------------------------------------------
# PatternTransformer3: concat -> add becomes pad -> add
# --------------------------------------------------------------------------------------


def _concat_add(g: Graph, y):
    a, b = g(ReluOp, g.args[0]), g(ReluOp, g.args[1])
    cat = g(ConcatenateOp, a, b, axis=1)
    return g(AddOp, cat, y)


def test_concat_add_becomes_pads_and_adds_when_it_pays():
    g = Graph((1, 2, 3, 3), (1, 5, 3, 3), (1, 7, 3, 3))
    y = g(ReluOp, g.args[2])  # an intermediate only the Add reads: it may be overwritten
    out = _concat_add(g, y)
    after = apply_and_compare(g.module(out), g.random_inputs(), ONLY["concat_to_pad"],
                              rtol=0, atol=0)
    counts = op_counts(after)
    assert (counts["Concatenate"], counts["Pad"], counts["Add"]) == (0, 2, 2)


@pytest.mark.parametrize("case", ["argument", "y-read-twice", "broadcast", "constant"])
def test_concat_add_stays_when_it_does_not_pay(case):
    g = Graph((1, 2, 3, 3), (1, 5, 3, 3), (1, 7, 3, 3), (1, 1, 1, 3))
    outs = []
    if case == "argument":
        y = g.args[2]
    elif case == "broadcast":  # not the in-place same-shape Add of the cost model
        y = g(ReluOp, g.args[3])
    elif case == "constant":
        y = g.rand(1, 7, 3, 3)
    else:
        y = g(ReluOp, g.args[2])
        outs.append(y)
    outs.append(_concat_add(g, y))
    after = apply_and_compare(g.module(*outs), g.random_inputs(), ONLY["concat_to_pad"])
    assert op_counts(after)["Concatenate"] == 1 and op_counts(after)["Pad"] == 0


def test_the_cost_model_counts_bytes():
    g = Graph((1, 2, 3, 3), (1, 5, 3, 3), (1, 7, 3, 3))
    y = g(ReluOp, g.args[2])
    add = _concat_add(g, y).owner
    concat = add.operands[0].owner
    total = 7 * 9 * 4
    assert concat_add_bytes(concat, y) == (5 * total, 3 * total)
    assert concat_add_bytes(concat, g.args[2]) == (5 * total, 5 * total)


# --------------------------------------------------------------------------------------
# PatternTransformer5: fully connected -> 1x1 conv
# --------------------------------------------------------------------------------------


def _fc(g: Graph, k: int, n: int, **attrs):
    b = g.rand(n, k) if attrs.get("trans_b") else g.rand(k, n)
    return g(GemmOp, g.args[0], b, g.rand(n), **attrs)


def test_fc_to_conv_is_off_by_default():
    g = Graph((4, 16))
    after = apply_and_compare(g.module(_fc(g, 16, 8)), g.random_inputs(), PeepholePass())
    assert op_counts(after)["Gemm"] == 1 and op_counts(after)["Conv"] == 0


@pytest.mark.parametrize("shape, attrs", [
    ((4, 16), {}),
    ((2, 3, 16), {"trans_b": True, "alpha": 0.5, "beta": 2.0}),
])
def test_fc_becomes_a_1x1_conv(shape, attrs):
    g = Graph(shape)
    after = apply_and_compare(g.module(_fc(g, 16, 8, **attrs)), g.random_inputs(),
                              ONLY["fc_to_conv"])
    counts = op_counts(after)
    assert (counts["Gemm"], counts["Conv"], counts["Reshape"]) == (0, 1, 2)


@pytest.mark.parametrize("case", ["too-many-inputs", "trans-a", "dynamic-b", "batched-b"])
def test_fc_to_conv_leaves_other_gemms(case):
    if case == "too-many-inputs":
        g = Graph((2, 2049))
        out = g(GemmOp, g.args[0], g.rand(2049, 3))
    elif case == "trans-a":
        g = Graph((16, 4))
        out = g(GemmOp, g.args[0], g.rand(16, 3), trans_a=True)
    elif case == "dynamic-b":
        g = Graph((4, 16), (16, 3))
        out = g(GemmOp, *g.args)
    else:
        g = Graph((2, 4, 16))
        out = g(GemmOp, g.args[0], g.rand(2, 16, 3))
    after = apply_and_compare(g.module(out), g.random_inputs(), ONLY["fc_to_conv"],
                              rtol=1e-4)
    assert op_counts(after)["Gemm"] == 1


def test_fc_max_inputs_is_an_option():
    g = Graph((2, 16))
    module = g.module(_fc(g, 16, 4))
    small = PeepholePass(fc_to_conv=True, fc_max_inputs=8)
    assert op_counts(apply_and_compare(module, g.random_inputs(), small))["Gemm"] == 1
