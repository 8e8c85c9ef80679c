"""canonicalize-concat-pos: channel-wise ops move from after a Concat to before it, with
the same results bit for bit, and ops that may not move stay."""

from __future__ import annotations

import numpy as np
import pytest

from tests.unit.midend.test_combine_parallel import Graph, apply_and_compare, op_counts
from tx8c.dialect.ops.elementwise import (
    AddOp,
    CastOp,
    ClipOp,
    MulOp,
    ReluOp,
    SubOp,
)
from tx8c.dialect.ops.movement import ConcatenateOp
from tx8c.dialect.ops.norm import BatchNormInferenceOp, SoftmaxOp
from tx8c.transforms.midend.canonicalize_concat_pos import CanonicalizeConcatPosPass

PASS = CanonicalizeConcatPosPass()


def _graph():
    """Two NCHW inputs with 2 and 3 channels, concatenated on the channel axis."""
    g = Graph((1, 2, 4, 4), (1, 3, 4, 4))
    return g, g(ConcatenateOp, *g.args, axis=1)


def _exact(g: Graph, *outs):
    return apply_and_compare(g.module(*outs), g.random_inputs(), PASS, rtol=0, atol=0)


def _last_op(module):
    return list(module.body.block.first_op.body.block.ops)[-2]  # before func.return


@pytest.mark.parametrize("unary, attrs", [
    (ReluOp, {}), (ClipOp, {"min": -0.5, "max": 0.5}), (CastOp, {"to": "f16"}),
])
def test_unary_ops_move_before_the_concat(unary, attrs):
    g, cat = _graph()
    after = _exact(g, g(unary, cat, **attrs))
    assert op_counts(after)[unary.name.removeprefix("tx8be.")] == 2
    assert isinstance(_last_op(after), ConcatenateOp)


def test_a_chain_of_channel_wise_ops_moves_with_constants_cut_per_piece():
    g, cat = _graph()
    y = g(MulOp, cat, g.rand(1, 5, 1, 1))        # cut: [1,2,1,1] and [1,3,1,1]
    y = g(SubOp, g.rand(5, 1, 1), y)             # constant first, cut along its dim 0
    y = g(AddOp, y, g.rand(4))                   # 1 along the concat axis: shared
    y = g(ReluOp, y)
    after = _exact(g, y)
    counts = op_counts(after)
    assert (counts["Mul"], counts["Sub"], counts["Add"], counts["Relu"]) == (2, 2, 2, 2)
    assert counts["Concatenate"] == 1 and isinstance(_last_op(after), ConcatenateOp)
    assert counts["Constant"] == 2 + 2 + 1  # the cut Mul and Sub constants, the shared one


def _batch_norm(g: Graph, x, channels: int, axis: int):
    params = [g.rand(channels), g.rand(channels), g.rand(channels),
              g.const(np.abs(g.rng.standard_normal(channels)).astype(np.float32) + 0.5)]
    return g(BatchNormInferenceOp, x, *params, axis=axis)


def test_batch_norm_along_the_concat_axis_is_cut_per_piece():
    g, cat = _graph()
    after = apply_and_compare(g.module(_batch_norm(g, cat, 5, 1)), g.random_inputs(), PASS)
    assert op_counts(after)["BatchNorm_Inference"] == 2
    assert op_counts(after)["Constant"] == 8


def test_batch_norm_along_another_axis_keeps_its_parameters():
    g = Graph((1, 4, 2, 3), (1, 4, 3, 3))
    cat = g(ConcatenateOp, *g.args, axis=2)
    after = _exact(g, _batch_norm(g, cat, 4, 1))
    assert op_counts(after)["BatchNorm_Inference"] == 2
    assert op_counts(after)["Constant"] == 4


def test_the_concat_axis_may_be_negative():
    g = Graph((2, 3), (2, 5))
    cat = g(ConcatenateOp, *g.args, axis=-1)
    after = _exact(g, g(MulOp, cat, g.rand(8)))
    assert op_counts(after)["Mul"] == 2


@pytest.mark.parametrize("case", [
    "concat-read-twice", "broadcasting-constant", "dynamic-operand", "softmax",
    "batch-norm-dynamic-params",
])
def test_ops_that_may_not_move_stay(case):
    g = Graph((1, 2, 4, 4), (1, 3, 4, 4), (1, 5, 4, 4))
    cat = g(ConcatenateOp, g.args[0], g.args[1], axis=1)
    outs = []
    if case == "concat-read-twice":
        outs = [g(ReluOp, cat), cat]
    elif case == "broadcasting-constant":
        outs = [g(AddOp, cat, g.rand(3, 1, 5, 4, 4))]
    elif case == "dynamic-operand":
        outs = [g(MulOp, cat, g.args[2])]
    elif case == "softmax":
        outs = [g(SoftmaxOp, cat, axis=1)]
    else:
        params = [g(ReluOp, g.rand(5)) for _ in range(4)]
        outs = [g(BatchNormInferenceOp, cat, *params)]
    after = _exact(g, *outs)
    (concat,) = [op for op in after.walk() if isinstance(op, ConcatenateOp)]
    assert [type(v).__name__ for v in concat.operands] == ["BlockArgument"] * 2
