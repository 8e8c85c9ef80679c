"""Helpers shared by the tests: build single-op modules, run them, run onnxruntime."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Region

from tx8c.dialect.types import tensor_of
from tx8c.sim.reference import run_reference


def single_op_module(op_cls, inputs: Sequence[np.ndarray], **attrs: Any) -> ModuleOp:
    """A module whose main function applies one op to its arguments (types inferred)."""
    block = Block(arg_types=[tensor_of(np.asarray(a)) for a in inputs])
    op = op_cls.make(list(block.args), **attrs)
    block.add_op(op)
    block.add_op(func.ReturnOp(*op.results))
    function = func.FuncOp(
        "main",
        ([a.type for a in block.args], [r.type for r in op.results]),
        Region(block),
    )
    module = ModuleOp([function])
    module.verify()
    return module


def run_op(op_cls, inputs: Sequence[np.ndarray], **attrs: Any) -> list[np.ndarray]:
    """Build, verify and run one op through the reference executor."""
    module = single_op_module(op_cls, inputs, **attrs)
    return run_reference(module, [np.asarray(a) for a in inputs])


def inferred_types(op_cls, inputs: Sequence[np.ndarray], **attrs: Any):
    block = Block(arg_types=[tensor_of(np.asarray(a)) for a in inputs])
    return op_cls.make(list(block.args), **attrs).infer_shapes()


_ONNX_TYPE = {
    np.dtype(np.float32): onnx.TensorProto.FLOAT,
    np.dtype(np.float16): onnx.TensorProto.FLOAT16,
    np.dtype(np.float64): onnx.TensorProto.DOUBLE,
    np.dtype(np.int8): onnx.TensorProto.INT8,
    np.dtype(np.uint8): onnx.TensorProto.UINT8,
    np.dtype(np.int32): onnx.TensorProto.INT32,
    np.dtype(np.int64): onnx.TensorProto.INT64,
    np.dtype(np.bool_): onnx.TensorProto.BOOL,
}


@dataclass
class OnnxCase:
    """One comparison of a tx8be op against an ONNX graph run by onnxruntime.

    `inputs` feed both; `initializers` are ONNX-only constant inputs (for example the
    `axes` or `pads` tensors of ops that take them as inputs), named in the node's input
    list. `nodes` are ONNX NodeProtos whose graph inputs are named in0, in1, ... and
    whose outputs are out0, out1, ...
    """

    op_cls: type
    inputs: list[np.ndarray]
    attrs: dict[str, Any]
    nodes: list[onnx.NodeProto]
    n_outputs: int = 1
    initializers: dict[str, np.ndarray] = field(default_factory=dict)
    opset: int = 17
    rtol: float = 1e-5
    atol: float = 1e-5

    @property
    def id(self) -> str:
        return self.op_cls.name.removeprefix("tx8be.")


def node(op_type: str, inputs: Sequence[str] | None = None, n_outputs: int = 1,
         **attrs: Any) -> onnx.NodeProto:
    """An ONNX node reading in0..inN (or the given names) and writing out0..outM."""
    return helper.make_node(
        op_type,
        list(inputs) if inputs is not None else [],
        [f"out{i}" for i in range(n_outputs)],
        **attrs,
    )


def _tally(case: OnnxCase) -> None:
    """With TX8C_ORT_TALLY=path, record each op compared with onnxruntime (for reports)."""
    path = os.environ.get("TX8C_ORT_TALLY")
    if path:
        with open(path, "a") as f:
            f.write(case.op_cls.name + "\n")


def run_onnx(case: OnnxCase) -> list[np.ndarray]:
    _tally(case)
    graph_inputs = [
        helper.make_tensor_value_info(f"in{i}", _ONNX_TYPE[a.dtype], list(a.shape))
        for i, a in enumerate(case.inputs)
    ]
    outputs = [
        onnx.ValueInfoProto(name=f"out{i}")
        for i in range(case.n_outputs)
    ]
    inits = [onnx.numpy_helper.from_array(v, k) for k, v in case.initializers.items()]
    graph = helper.make_graph(case.nodes, "case", graph_inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", case.opset)])
    model.ir_version = 8
    sess = ort.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    feeds = {f"in{i}": a for i, a in enumerate(case.inputs)}
    return sess.run(None, feeds)


def check_against_onnx(case: OnnxCase) -> None:
    expected = run_onnx(case)
    got = run_op(case.op_cls, case.inputs, **case.attrs)
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        assert g.shape == e.shape, f"shape {g.shape} != onnxruntime {e.shape}"
        if e.dtype == np.bool_ or np.issubdtype(e.dtype, np.integer):
            np.testing.assert_array_equal(g, e)
        else:
            np.testing.assert_allclose(
                g.astype(np.float64), e.astype(np.float64), rtol=case.rtol, atol=case.atol
            )


def check_shapes(case: OnnxCase) -> None:
    """infer_shapes() equals the shapes (and dtypes) compute() produces."""
    block = Block(arg_types=[tensor_of(np.asarray(a)) for a in case.inputs])
    op = case.op_cls.make(list(block.args), **case.attrs)
    types = op.infer_shapes()
    outs = op.compute(*case.inputs)
    assert [tuple(t.get_shape()) for t in types] == [np.shape(o) for o in outs]


def parse_verified(text: str) -> ModuleOp:
    """Parse IR text and verify it."""
    from tx8c.ir import parse_module

    module = parse_module(text)
    module.verify()
    return module


def main_block(module: ModuleOp) -> Block:
    """The body of the module's (first) function."""
    return next(op for op in module.ops if isinstance(op, func.FuncOp)).body.block


def op_counts(module: ModuleOp) -> Counter:
    """tx8be ops by name (without the dialect prefix)."""
    from tx8c.dialect.base import Tx8beOp

    return Counter(
        op.name.removeprefix("tx8be.") for op in module.walk() if isinstance(op, Tx8beOp)
    )


def assert_same_values(before: list[np.ndarray], after: list[np.ndarray]) -> None:
    """Bit-identical results: same dtypes, shapes and values."""
    for b, a in zip(before, after, strict=True):
        assert b.dtype == a.dtype and b.shape == a.shape
        np.testing.assert_array_equal(a, b)


def contracted_is_acyclic(successors, groups) -> bool:
    """Whether the graph (`successors[i]`: the nodes node i feeds) stays acyclic with
    every group of `groups` (sets of nodes) contracted to one node (Kahn's algorithm)."""
    unit = {i: i for i in range(len(successors))}
    for k, group in enumerate(groups):
        for i in group:
            unit[i] = ("g", k)
    edges = {(unit[i], unit[j]) for i, s in enumerate(successors) for j in s
             if unit[i] != unit[j]}
    nodes = set(unit.values())
    indegree = {u: 0 for u in nodes}
    for _, b in edges:
        indegree[b] += 1
    ready = [u for u in nodes if indegree[u] == 0]
    seen = 0
    while ready:
        u = ready.pop()
        seen += 1
        for a, b in edges:
            if a == u:
                indegree[b] -= 1
                if indegree[b] == 0:
                    ready.append(b)
    return seen == len(nodes)
