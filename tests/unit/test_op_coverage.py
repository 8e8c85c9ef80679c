"""Every tx8be op has what the foundation promises: a verifier, shape inference, an OpAttr,
a compute (or an executor hook), and a place in the round-trip lit tests."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tx8c.dialect import all_ops
from tx8c.dialect.base import Tx8beOp
from tx8c.interfaces import Compute, OpLib, ShapeInference

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
