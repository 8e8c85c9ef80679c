"""compare --all-tensors: a deliberately broken rewrite is localised to the op it broke;
references that are all zero or subnormal give INCONCLUSIVE, not FAIL."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from tx8c.cli.tensor_compare import (
    FAIL,
    INCONCLUSIVE,
    PASS,
    Arrangements,
    onnx_intermediates,
    run_and_compare,
    verdict,
)
from tx8c.dialect.ops.backend import ConstantOp
from tx8c.frontend.onnx.importer import import_onnx


def _mlp() -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal(s).astype(np.float32), n)
             for n, s in (("w1", (8, 16)), ("b1", (16,)), ("w2", (16, 4)))]
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h"], name="fc1"),
        helper.make_node("Add", ["h", "b1"], ["hb"], name="bias1"),
        helper.make_node("Relu", ["hb"], ["r"], name="act1"),
        helper.make_node("MatMul", ["r", "w2"], ["o"], name="fc2"),
        helper.make_node("Tanh", ["o"], ["y"], name="act2"),
    ]
    graph = helper.make_graph(
        nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def _break_bias(result) -> None:
    """A wrong rewrite: the bias Add reads another constant (its op and value survive,
    so its name stays; what it computes changes)."""
    value = next(v for v, n in result.value_names.items() if n == "hb")
    add = value.owner
    wrong = ConstantOp.from_array(np.full((16,), 3.0, np.float32))
    add.parent_block().insert_op_before(wrong, add)
    add.operands = [add.operands[0], wrong.results[0]]


def test_broken_rewrite_is_localised_to_its_op() -> None:
    model = _mlp()
    inputs = {"x": np.random.default_rng(1).standard_normal((2, 8)).astype(np.float32)}
    tensors = onnx_intermediates(model, inputs)
    result = import_onnx(model)
    _, clean = run_and_compare(result.module, inputs, result.value_names, tensors,
                               Arrangements())
    assert clean.failures == [] and clean.compared == 5
    _break_bias(result)
    _, broken = run_and_compare(result.module, inputs, result.value_names, tensors,
                                Arrangements())
    first = broken.failures[0]
    assert (first["tensor"], first["producer"]) == ("hb", "bias1 (Add)")
    assert [f["tensor"] for f in broken.failures][:1] == ["hb"]
    assert "h" not in {f["tensor"] for f in broken.failures}  # before the break: right


def test_verdicts() -> None:
    zeros = np.zeros((4,), np.float32)
    assert verdict(zeros, zeros)[0] == PASS  # exact is exact
    v, figures = verdict(zeros, np.array([0, 0, 1e-3, 0], np.float32))
    assert v == INCONCLUSIVE and "all zero" in figures["reason"]
    sub = np.full((4,), 1e-42, np.float32)
    v, figures = verdict(sub, sub * 2)
    assert v == INCONCLUSIVE and "subnormal" in figures["reason"]
    assert verdict(np.zeros(3, np.int32), np.ones(3, np.int32))[0] == FAIL
    assert verdict(np.ones(3, np.float32), -np.ones(3, np.float32))[0] == FAIL


def test_cli_all_zero_output_is_inconclusive(tmp_path: Path) -> None:
    """Relu(-|x| - 1) is all zero: the stage rows say INCONCLUSIVE with the reason,
    and compare does not fail on it."""
    one = numpy_helper.from_array(np.ones((1,), np.float32), "one")
    nodes = [helper.make_node("Abs", ["x"], ["a"]), helper.make_node("Neg", ["a"], ["n"]),
             helper.make_node("Sub", ["n", "one"], ["s"]),
             helper.make_node("Relu", ["s"], ["y"])]
    graph = helper.make_graph(
        nodes, "zero", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8])], [one])
    path = tmp_path / "zero.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                                ir_version=8), path)
    r = subprocess.run([sys.executable, "-m", "tx8c.cli.main", "compare", str(path), "--json",
                        "--all-tensors"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    stages = json.loads(r.stdout)["stages"]
    assert {s["verdict"] for s in stages} == {PASS}  # exact zeros are exact
    assert stages[0]["tensors"]["compared"] >= 3


def test_stage_row_inconclusive_has_a_reason_and_is_printed() -> None:
    from tx8c.cli.main import _stage_row, format_table

    expected = [np.zeros((2, 3), np.float32), np.ones((2,), np.float32)]
    got = [np.full((2, 3), 1e-6, np.float32), np.ones((2,), np.float32)]
    row = _stage_row("s", None, {}, expected, lambda module, inputs: got)
    assert row["verdict"] == INCONCLUSIVE
    assert row["reason"].startswith("output 0: the reference is all zero")
    assert "inconclusive: output 0: the reference is all zero" in format_table([row])
    got[1] = -got[1]
    assert _stage_row("s", None, {}, expected, lambda module, inputs: got)["verdict"] == FAIL
