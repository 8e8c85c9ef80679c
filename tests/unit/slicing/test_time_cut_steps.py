"""The default search trades a reduction cut in time for a deep pipeline's steps
(`search._steps_for_time_cuts`, issue 11's search quality).

BERT-base's Gemm + Add + LayerNorm (group 18, 128 rows of 768) was 1.076 of the
exhaustive best: the search cut K over the 2 tiles its row sharding leaves idle and in
8 pieces in time, while the best plan cuts K over 4 idle tiles, not in time, and runs
4 steps of rows through a deep pipeline (each step's loads overlap the previous step's
Gemm). The search tried the cut over 4 tiles only at its base's split (no row steps),
where it is slow, and deepened only its fastest plans (all cut in time)."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from tests.unit.slicing.helpers import grouped_graph
from tx8c.slicing import search as search_module
from tx8c.slicing.evaluate import evaluate
from tx8c.slicing.group import group_spec
from tx8c.slicing.plan import Candidate, ReduceCut
from tx8c.slicing.search import search
from tx8c.target.config import DEFAULT_CONFIG
from tx8c.transforms.slice.group_cost import groups_to_slice

ROWS, WIDTH = 128, 512


def gemm_add_layernorm():
    """y = LayerNorm(x @ w + b + r) over [1, 128, 512]: one group (the Gemm reduces 512
    channels, 8 blocks of 64)."""
    rng = np.random.default_rng(0)
    consts = {"w": rng.standard_normal((WIDTH, WIDTH)).astype(np.float32),
              "b": rng.standard_normal(WIDTH).astype(np.float32),
              "g": np.ones(WIDTH, np.float32), "be": np.zeros(WIDTH, np.float32)}
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]),
             helper.make_node("Add", ["m", "b"], ["a"]),
             helper.make_node("Add", ["a", "r"], ["s"]),
             helper.make_node("LayerNormalization", ["s", "g", "be"], ["y"], axis=-1)]
    rows = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, ROWS, WIDTH])
            for n in ("x", "r", "y")]
    graph = helper.make_graph(nodes, "gemm_add_layernorm", rows[:2], rows[2:],
                              [numpy_helper.from_array(v, k) for k, v in consts.items()])
    (group,) = groups_to_slice(grouped_graph(graph))
    return group_spec(group)


def test_the_search_trades_the_cut_in_time_for_row_steps():
    """The search's plan is within 3 % (issue 11's quality bar) of the Gemm's K over the
    4 idle tiles of a sharding of 4 row shares (not in time), with 5 steps of rows,
    deep: 11 939 cycles (the search finds 12 056: the phase runs after the polish, so
    it only adds plans). Before, the search took K over 2 tiles with 2 steps of rows
    (13 218, 1.107)."""
    spec = gemm_add_layernorm()
    gemm = next(n.index for n in spec.nodes if n.label.startswith("Gemm"))
    assert [d.size for d in spec.anchor_loops] == [1, 1, ROWS, WIDTH]
    over_idle_tiles = Candidate((1, 4, 4, 1), (1, 1, 5, 1),
                                ReduceCut(gemm, (4,), (1,), (64,)), True, True)
    search_module._searched.cache_clear()
    plan = search(spec, DEFAULT_CONFIG)
    search_module._searched.cache_clear()
    assert plan.cycles <= 1.03 * evaluate(spec, over_idle_tiles, DEFAULT_CONFIG).cycles
    if plan.candidate.interchange:  # since the interchanged order: K over 2 tiles and in
        return  # 4 pieces, 2 row steps inside them, faster than the traded plan
    assert plan.candidate.deep and plan.candidate.reduce is not None
    assert plan.candidate.reduce.split == (1,) and plan.candidate.reduce.sharding == (4,)
