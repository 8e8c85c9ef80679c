"""Every tx8be op has what the foundation promises: a verifier, shape inference, an OpAttr,
a compute (or an executor hook), and a place in the round-trip lit tests; and what the
backend asks of it: its slicing knowledge (loop space, windows, a slice-equivalence case
generator) and its work on an engine."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tx8c.dialect import all_ops
from tx8c.dialect.base import Tx8beOp
from tx8c.interfaces import Compute, OpLib, ShapeInference, Work

ROUNDTRIP_DIR = Path(__file__).parents[1] / "filecheck" / "dialect"
OPS = [op for op in all_ops() if issubclass(op, Tx8beOp)]
EXPECTED = {
    # the op set the foundation issue asks for
    "Conv", "Gemm", "Add", "Sub", "Mul", "Div", "Max", "Min", "Pow", "Equal", "Less",
    "LessOrEqual", "Greater", "GreaterOrEqual", "And", "Or", "Where", "Relu", "LeakyRelu",
    "Clip", "Sigmoid", "Tanh", "Erf", "Gelu", "Silu", "HardSigmoid", "HardSwish", "Exp",
    "Log", "Sqrt", "Rsqrt", "Reciprocal", "Abs", "Neg", "Not", "Sin", "Cos", "Floor", "Ceil",
    "Cast", "BatchNorm_Inference", "LayerNorm", "RMSNorm", "Softmax", "Reduce", "Pool",
    "Reshape", "Transpose", "BroadCast", "Slice", "Concatenate", "Split", "Pad", "Gather",
    "GatherElements", "ScatterND", "Tile", "Resize", "Constant", "ChannelNorm", "LoadConst",
    "LoadVar", "StoreVar", "Group",
}


def _ids(ops):
    return [op.name for op in ops]


def test_every_expected_op_exists() -> None:
    names = {op.name.removeprefix("tx8be.") for op in all_ops()}
    assert EXPECTED <= names, sorted(EXPECTED - names)


@pytest.mark.parametrize("op", OPS, ids=_ids(OPS))
def test_op_implements_the_interfaces(op) -> None:
    assert op.infer_shapes is not ShapeInference.infer_shapes
    assert op.query_op_attr is not OpLib.query_op_attr
    has_exec_hook = hasattr(op, "run_region") or hasattr(op, "load_const")
    assert op.compute is not Compute.compute or has_exec_hook
    assert op.__doc__, f"{op.name} has no docstring"


def test_every_op_is_in_a_roundtrip_test() -> None:
    text = "\n".join(p.read_text() for p in ROUNDTRIP_DIR.glob("roundtrip_*.mlir"))
    used = set(re.findall(r"tx8be\.([A-Za-z_]+)", text))
    missing = [op.name for op in all_ops() if op.name.removeprefix("tx8be.") not in used]
    assert not missing, f"ops missing from roundtrip tests: {missing}"


SLICED = [op for op in OPS if op.name.removeprefix("tx8be.") not in
          {"Group", "Constant", "LoadConst"}]


@pytest.mark.parametrize("op", SLICED, ids=_ids(SLICED))
def test_op_knows_its_slicing_and_work(op) -> None:
    """A random case of the op answers every question of the slicing search: its loop
    space, each operand's window and factors, a slice's compute, scratch and work."""
    import numpy as np

    from tests.unit.sharding.cases import CASES
    from tests.unit.sharding.test_slice_equivalence import build
    from tx8c.interfaces import ShardingSplitParam, SliceParam, Window
    from tx8c.target.config import DEFAULT_CONFIG

    name = op.name.removeprefix("tx8be.")
    assert name in CASES, f"{op.name} has no slicing case generator (tests/unit/sharding)"
    instance, inputs = build(CASES[name](np.random.default_rng(0)))
    shape = instance.loop_shape()
    whole = Window.whole(shape)
    assert len(instance.back_window(whole)) == len(inputs)
    assert len(instance.tile_sharding_split(ShardingSplitParam.none(len(shape)))) == len(inputs)
    assert len(instance.temporal_slice_shape(SliceParam(shape))) == len(inputs)
    windows = instance.back_window(whole)
    cut = [np.array(a[w.slices()], order="C") for a, w in zip(inputs, windows, strict=True)]
    assert len(instance.compute_slice(whole, cut)) == len(instance.results)
    assert instance.imm_bytes(shape, DEFAULT_CONFIG) >= 0
    work = instance.work(shape)
    assert isinstance(work, Work)
    did_something = work.matmuls or work.ct_arith or work.ct_special or work.transfers
    if instance.moves_no_bytes():  # a relabel moves nothing: its result is its operand's bytes
        assert not did_something
    elif all(shape):  # a non-empty slice does something on its engine
        assert did_something
