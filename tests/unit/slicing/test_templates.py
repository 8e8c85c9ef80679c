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


def test_the_groups_of_a_template_share_the_work_after_its_search(monkeypatch) -> None:
    """After the searches group-cost computes a group's early loads (its lane, the
    lags of the stores they wait for) once per run of a template (`Alike`: equal key
    and ready inputs), not once per group; each group's statistics are still what it
    gives computed alone, from its own plan and previous group."""
    import tx8c.transforms.slice.group_cost as group_cost
    from tx8c.analysis.ddr_tensors import main_body
    from tx8c.analysis.group_dag import waiting_operands
    from tx8c.codegen.lower import group_plan
    from tx8c.ir_utils import group_ops
    from tx8c.slicing.group import group_spec
    from tx8c.target.config import target_config

    lanes = []
    real = group_cost.lane_loads
    monkeypatch.setattr(group_cost, "lane_loads",
                        lambda spec, *rest: lanes.append(spec.key) or real(spec, *rest))
    module = import_onnx(layered_model()).module
    run_pipeline(module, CompileOptions(verify_each_pass=True))
    rows = json.loads(module.attributes["tx8c.slicing"].data)["groups"]
    assert len(lanes) < len(rows)  # the layers alike computed their lanes once

    config = target_config(module)
    every = group_ops(main_body(module))
    waiting = dict(zip(every, waiting_operands(every), strict=True))
    previous = None
    for group, row in zip(group_cost.groups_to_slice(module), rows, strict=True):
        spec, plan = group_spec(group), group_plan(group)
        alone = (spec.key, spec.ready_inputs)  # a fresh Alike: nothing shared
        assert group_cost.early_lane(group, spec, plan, previous, config, waiting[group],
                                     group_cost.Alike(), alone) == row["early_loads"]
        previous = (group, spec, plan, alone)
