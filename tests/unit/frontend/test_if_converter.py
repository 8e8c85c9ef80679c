"""If with a compile-time condition: the chosen branch is inlined (it sees the outer
scope and its own initializers); a run-time condition is refused clearly."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.unit.frontend.onnx_check import check_model, graph_model
from tx8c.frontend.onnx.importer import import_onnx
from tx8c.frontend.onnx.loader import OnnxImportError


def _branch(name: str, op: str) -> object:
    scale = numpy_helper.from_array(np.array(2.0 if op == "Mul" else 1.0, np.float32),
                                    f"{name}_k")
    node = helper.make_node(op, ["x", f"{name}_k"], [f"{name}_out"])
    out = helper.make_tensor_value_info(f"{name}_out", TensorProto.FLOAT, [2, 3])
    return helper.make_graph([node], name, [], [out], [scale])


def _model(condition):
    nodes = [helper.make_node("If", ["c"], ["y"], then_branch=_branch("then", "Mul"),
                              else_branch=_branch("else", "Sub"))]
    inputs = {"x": np.arange(6, dtype=np.float32).reshape(2, 3)}
    inits = {}
    if condition is None:
        inputs["c"] = np.array(True)
    else:
        inits["c"] = np.array(condition)
    return graph_model(nodes, inputs, ["y"], inits), inputs


@pytest.mark.parametrize("condition", [True, False])
def test_constant_condition_inlines_the_branch(condition) -> None:
    model, inputs = _model(condition)
    result = check_model(model, inputs, pipeline=True)
    assert {"If"} == set(result.onnx_op_counts)


def test_run_time_condition_is_refused() -> None:
    model, _ = _model(None)
    with pytest.raises(OnnxImportError, match="must be computable at compile time"):
        import_onnx(model)
