"""Checking a converter against onnxruntime: one ONNX graph, imported and run by the
reference executor (and, with `pipeline=True`, after the whole compile pipeline, and by
the byte-level cmodel), compared with onnxruntime on the same inputs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import onnx
from onnx import helper, numpy_helper

from tests.helpers import _ONNX_TYPE
from tx8c.frontend.onnx.importer import import_onnx
from tx8c.frontend.onnx.runtime import run_onnxruntime
from tx8c.sim.reference import run_reference


def graph_model(nodes: Sequence[onnx.NodeProto], inputs: Mapping[str, np.ndarray],
                outputs: Sequence[str], initializers: Mapping[str, np.ndarray] | None = None,
                opset: int = 17) -> onnx.ModelProto:
    graph_inputs = [helper.make_tensor_value_info(n, _elem(a), list(a.shape))
                    for n, a in inputs.items()]
    graph_outputs = [onnx.ValueInfoProto(name=o) for o in outputs]
    inits = [numpy_helper.from_array(np.asarray(v), k) for k, v in (initializers or {}).items()]
    graph = helper.make_graph(list(nodes), "check", graph_inputs, graph_outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10 if opset >= 21 else 8
    return model


def _elem(a: np.ndarray) -> int:
    import ml_dtypes

    if a.dtype == ml_dtypes.bfloat16:
        return onnx.TensorProto.BFLOAT16
    return _ONNX_TYPE[a.dtype]


def check_model(model: onnx.ModelProto, inputs: Mapping[str, np.ndarray], rtol=1e-5,
                atol=1e-6, pipeline: bool = False, ort_optimize: bool = True):
    """The model's outputs under tx8c equal onnxruntime's (with its graph optimisation
    unless `ort_optimize` is False: see `run_onnxruntime`); returns the import result."""
    expected = run_onnxruntime(model, inputs, optimize=ort_optimize)
    result = import_onnx(model)
    _compare(run_reference(result.module, dict(inputs)), expected, rtol, atol, "import")
    if pipeline:
        from tx8c.pipeline import CompileOptions, run_pipeline
        from tx8c.sim.cmodel import run_cmodel

        run_pipeline(result.module, CompileOptions(verify_each_pass=True))
        _compare(run_reference(result.module, dict(inputs)), expected, rtol, atol, "pipeline")
        _compare(run_cmodel(result.module, dict(inputs)), expected, rtol, atol, "cmodel")
    return result


def check_node(op_type: str, inputs: Mapping[str, np.ndarray], n_outputs: int = 1,
               initializers: Mapping[str, np.ndarray] | None = None, opset: int = 18,
               rtol=1e-5, atol=1e-6, pipeline: bool = False, **attrs):
    """One ONNX node reading `inputs` (then `initializers`, in the order given) and
    writing out0..outN, checked against onnxruntime."""
    names = [*inputs, *(initializers or {})]
    outputs = [f"out{i}" for i in range(n_outputs)]
    node = helper.make_node(op_type, names, outputs, **attrs)
    model = graph_model([node], inputs, outputs, initializers, opset)
    return check_model(model, inputs, rtol, atol, pipeline)


def _compare(got, expected, rtol, atol, stage: str) -> None:
    assert len(got) == len(expected)
    for i, (g, e) in enumerate(zip(got, expected, strict=True)):
        assert g.shape == e.shape, f"{stage} output {i}: shape {g.shape} != {e.shape}"
        if e.dtype == np.bool_ or np.issubdtype(e.dtype, np.integer):
            np.testing.assert_array_equal(g, e, err_msg=f"{stage} output {i}")
        else:
            np.testing.assert_allclose(g.astype(np.float64), e.astype(np.float64), rtol=rtol,
                                       atol=atol, err_msg=f"{stage} output {i}")
