"""Templates of group-cost (seed 003, sliceHelpMap): a group equal to an earlier one in
everything its plan depends on (ops, shapes, layouts, dtypes, attributes) takes that
group's plan without a search; names, weights and positions in the graph do not matter,
and a group that differs in a shape or an op gets its own search."""

from __future__ import annotations

import json

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from tx8c.dialect.ops.backend import GroupOp
from tx8c.frontend.onnx.importer import import_onnx
from tx8c.pipeline import CompileOptions, run_pipeline

LAYERS = [  # (name, output width, activation)
    # the entry layer's Gemm loads the compact graph input through a converting DMA
    # (fuse-channel-norm-dma), so it differs from the layers behind it; Tanh: its
    # activation differs too
    ("entry", 128, "Tanh"),
    ("first", 128, "Relu"),
    ("same_as_first", 128, "Relu"),  # other weights and names, same plan
    ("wider", 256, "Relu"),  # another shape
    ("other_op", 256, "Sigmoid"),  # another op
]


def layered_model() -> onnx.ModelProto:
    """x [1, 64, 128] through MatMul -> Add -> activation layers (LAYERS), each with its
    own random weights."""
    rng = np.random.default_rng(0)
    nodes, inits = [], []
    value, width = "x", 128
    for name, out, act in LAYERS:
        w = numpy_helper.from_array(
            (rng.standard_normal((width, out)) / np.sqrt(width)).astype(np.float32), f"{name}.w")
        b = numpy_helper.from_array(rng.standard_normal(out).astype(np.float32), f"{name}.b")
        inits += [w, b]
        nodes += [helper.make_node("MatMul", [value, w.name], [f"{name}.mm"]),
                  helper.make_node("Add", [f"{name}.mm", b.name], [f"{name}.add"]),
                  helper.make_node(act, [f"{name}.add"], [f"{name}.out"])]
        value, width = f"{name}.out", out
    graph = helper.make_graph(
        nodes, "layers",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64, 128])],
        [helper.make_tensor_value_info(value, TensorProto.FLOAT, [1, 64, width])],
        inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_identical_layers_share_a_template_and_different_ones_do_not() -> None:
    module = import_onnx(layered_model()).module
    run_pipeline(module, CompileOptions(verify_each_pass=True))
    stats = json.loads(module.attributes["tx8c.slicing"].data)
    rows = stats["groups"]
    gemms = [r for r in rows if any(op.startswith("Gemm#") for op in r["ops"])]
    activations = ("Tanh#", "Relu#", "Sigmoid#")
    acts = [r for r in rows if any(op.startswith(activations) for op in r["ops"])]
    assert len(gemms) == len(acts) == len(LAYERS)  # in layer order
    for layer in (gemms, acts):
        first, same, wider, other = layer[1:]
        assert first["template_id"] == -1  # searched
        assert same["template_id"] == first["group"]  # reused
        assert wider["template_id"] == -1 and other["template_id"] == -1
        # other_op's Gemm differs from wider's in its input width, its Sigmoid in the op
    plans = {g.attr("group_id"): g.attributes["tx8c.plan"].data
             for g in module.walk() if isinstance(g, GroupOp) and g.attr("group_tag") != 2}
    assert plans[gemms[2]["group"]] == plans[gemms[1]["group"]]
    assert stats["templates_reused"] == sum(r["template_id"] >= 0 for r in rows) >= 2
