"""The reduction cut moved on the runner-up shardings' plans (`search._reduce_moves`,
issue 11's search quality).

Two groups of the zoo were above 1.03 of the exhaustive best (bench/README.md, branch
quality4): GPT-2's Gemm 1024 -> 256 over 128 rows (group 28) took (1,1,4,4) with K cut
in 4 in time, 9 010 cycles, where (1,1,4,2) with K over 2 tiles (taken from the
anchor's sharding) and in 8 takes 8 205 (1.098); MobileNetV2's 1x1 Conv 192 -> 64 over
14 x 14 (group 29) took (1,2,8,1) uncut, 1 321, where the runner-up sharding (1,4,4,1)
with K cut in 2 in time takes 1 256 (1.052). Both have their input and output
SPM-resident, as group-cost searches them."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.unit.slicing.helpers import grouped_graph
from tx8c.analysis.spm_resident import GroupResidency, write_group_residency
from tx8c.slicing import search as search_module
from tx8c.slicing.evaluate import evaluate
from tx8c.slicing.group import group_spec
from tx8c.slicing.plan import Candidate, ReduceCut
from tx8c.slicing.search import search
from tx8c.target.config import DEFAULT_CONFIG
from tx8c.transforms.slice.group_cost import groups_to_slice

RESERVE = 256 * 1024
"""The SPM reserve spm-resident gives both groups."""


def resident(nodes, inputs, outputs, consts, anchor):
    """The spec of the group of the `anchor` op (its inputs and output SPM-resident)."""
    graph = helper.make_graph(nodes, "g", inputs, outputs,
                              [numpy_helper.from_array(c, n) for n, c in consts.items()])
    group = next(g for g in groups_to_slice(grouped_graph(graph))
                 if any(op.name.endswith(anchor) for op in g.block.ops))
    write_group_residency(group, GroupResidency(RESERVE, (0,), (0,)))
    return group_spec(group)


def gemm_1024_256():
    """y = x @ w + b, x [1, 128, 1024], w [1024, 256] (GPT-2's group 28: the MatMul and
    Add fold into a Gemm)."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal((1024, 256)).astype(np.float32)
    b = rng.standard_normal(256).astype(np.float32)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 128, 1024])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 128, 256])
    nodes = [helper.make_node("MatMul", ["x", "w"], ["xw"]),
             helper.make_node("Add", ["xw", "b"], ["y"])]
    return resident(nodes, [x], [y], {"w": w, "b": b}, "Gemm")


def conv1x1_192_64():
    """y = Conv1x1(x) + b over [1, 192, 14, 14] -> [1, 64, 14, 14] (MobileNetV2's
    group 29)."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal((64, 192, 1, 1)).astype(np.float32)
    b = rng.standard_normal(64).astype(np.float32)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 192, 14, 14])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64, 14, 14])
    return resident([helper.make_node("Conv", ["x", "w", "b"], ["y"])], [x], [y],
                    {"w": w, "b": b}, "Conv")


@pytest.mark.parametrize("build, best", [
    (gemm_1024_256, Candidate((1, 1, 4, 2), (1, 1, 1, 1), ReduceCut(3, (2,), (8,), (64,)))),
    (conv1x1_192_64, Candidate((1, 4, 4, 1), (1, 1, 1, 1), ReduceCut(3, (1,), (2,), (64,)))),
])
def test_the_search_comes_within_3_percent_of_the_best(build, best):
    """The search's plan within 1.03 of the exhaustive best (its plan, estimated here:
    the exhaustive search takes 3 070 - 7 956 candidates). Both fail without the moves
    (the Gemm's input here is not channel-aligned as GPT-2's is; its plans are the
    same)."""
    spec = build()
    search_module._searched.cache_clear()
    plan = search(spec, DEFAULT_CONFIG)
    search_module._searched.cache_clear()
    bound = evaluate(spec, best, DEFAULT_CONFIG).cycles
    assert plan.cycles <= 1.03 * bound
