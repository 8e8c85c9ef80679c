"""The polish moves steps from a stepped dim to another (`search._traded_steps`, issue 11's
search quality).

ResNet-50's group 3 (a 1x1 Conv 64 -> 256 over 56 x 56, its input and output kept in
SPM by spm-resident) was 1.040 of the exhaustive best: the search took 7 row steps of
all 128 channels of a tile's share, 6 541 cycles. The plans within 3 % of the best
(6 288) spread their steps over two dims (rows and channel halves, or rows and
columns) and, on a sharding of the first phase, split the rows in 3, 5 or 6, which
the refine phase's doublings never give; the polish moved one dim at a time."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from tests.unit.slicing.helpers import grouped_graph
from tx8c.analysis.spm_resident import GroupResidency, write_group_residency
from tx8c.slicing import search as search_module
from tx8c.slicing.evaluate import evaluate
from tx8c.slicing.group import group_spec
from tx8c.slicing.plan import Candidate
from tx8c.slicing.search import _traded_steps, search
from tx8c.target.config import DEFAULT_CONFIG
from tx8c.transforms.slice.group_cost import groups_to_slice

SIDE, C_IN, C_OUT = 56, 64, 256
RESERVE = 512 * 1024
"""The SPM reserve spm-resident gives ResNet-50's group 3 (its default budget)."""


def resident_conv1x1():
    """y = Conv1x1(x) + b over [1, 64, 56, 56] -> [1, 256, 56, 56], with x and y
    SPM-resident and x ready, as group-cost searches ResNet-50's group 3 (the same
    spec key)."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal((C_OUT, C_IN, 1, 1)).astype(np.float32)
    b = rng.standard_normal(C_OUT).astype(np.float32)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, C_IN, SIDE, SIDE])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, C_OUT, SIDE, SIDE])
    graph = helper.make_graph([helper.make_node("Conv", ["x", "w", "b"], ["y"])],
                              "conv1x1", [x], [y],
                              [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    conv = next(g for g in groups_to_slice(grouped_graph(graph))
                if any(op.name.endswith("Conv") for op in g.block.ops))
    write_group_residency(conv, GroupResidency(RESERVE, (0,), (0,)))
    return replace(group_spec(conv), ready_inputs=frozenset({0}))


def test_the_search_finds_a_conv1x1_plan_within_3_percent_of_the_best():
    """The exhaustive best of this group (13 462 candidates, too slow for a unit test)
    is (1, 2, 8, 1) x (1, 3, 1, 4), 6 288 cycles; the search must come within 3 % of it
    (it finds 5 row steps of 2 channel halves, 6 426; before: 6 541, 1.040)."""
    spec = resident_conv1x1()
    assert [d.size for d in spec.anchor_loops] == [1, SIDE, SIDE, C_OUT]
    assert all(n.resident for n in spec.nodes if n.kind == "store")
    best = Candidate((1, 2, 8, 1), (1, 3, 1, 4), None, True, False)
    search_module._searched.cache_clear()
    plan = search(spec, DEFAULT_CONFIG)
    search_module._searched.cache_clear()
    assert plan.cycles <= 1.03 * evaluate(spec, best, DEFAULT_CONFIG).cycles


def test_traded_steps_move_steps_from_each_stepped_dim_to_each_other():
    """From 7 row steps, the channels (2 granules) or the columns doubled and the rows
    in 4, 5 or 6 (about half of 7 up to below it); an unsplit plan gives none, and a dim
    at one granule per piece (the channels in 2) takes none."""
    share, granules, order = [1, 28, 14, 128], [1, 1, 1, 64], [0, 1, 2, 3]
    traded = set(_traded_steps((1, 7, 1, 1), share, granules, order))
    assert traded == {(1, v, 2, 1) for v in (4, 5, 6)} | {(1, v, 1, 2) for v in (4, 5, 6)}
    assert set(_traded_steps((1, 1, 1, 1), share, granules, order)) == set()
    assert set(_traded_steps((1, 2, 1, 2), share, granules, order)) == {
        (1, 1, 2, 2),  # the rows' steps to the columns
        (1, 4, 1, 1), (1, 2, 2, 1)}  # the channels' to the rows, to the columns
