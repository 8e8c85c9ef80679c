"""Reductions cut over tiles in the lowered Program: partial sums meet along a binary tree
(`steps.reduce_tree`), the cmodel v2 runs it to the reference's result, and its NoC
time is the tree's log2(n) rounds, as the estimate counts them."""

from __future__ import annotations

import numpy as np
import pytest

from tests.unit.group.common import run
from tests.unit.slicing.helpers import single, the_group
from tx8c.codegen.lower import lower_module
from tx8c.codegen.program import NocReduce
from tx8c.const_container import module_container
from tx8c.dialect.ops.conv_gemm import GemmOp
from tx8c.interfaces.sharding import Window
from tx8c.pipeline import CompileOptions, ddr_spec, slicing_spec
from tx8c.sim.cmodel_v2 import run_program
from tx8c.sim.reference import run_reference
from tx8c.slicing.evaluate import evaluate
from tx8c.slicing.group import group_spec
from tx8c.slicing.plan import Candidate, ReduceCut
from tx8c.slicing.steps import Tile, reduce_tree
from tx8c.target.config import DEFAULT_CONFIG


def test_reduce_tree_pairs_neighbours_round_by_round():
    anchor = Window.of([(0, 4)])
    shares = [Tile(i, anchor, Window.of([(i, i + 1)]), i == 0) for i in range(6)]
    assert reduce_tree(shares) == {0: [1, 2, 4], 1: [], 2: [3], 3: [], 4: [5], 5: []}
    other = Window.of([(4, 8)])
    shares += [Tile(6 + i, other, Window.of([(i, i + 1)]), i == 0) for i in range(2)]
    assert reduce_tree(shares)[6] == [7]


def forced(monkeypatch, cand: Candidate):
    """A Gemm group compiled with `cand` as its plan, lowered."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((16, 1024)).astype(np.float32)
    b = rng.standard_normal((1024, 32)).astype(np.float32)
    module = single(GemmOp, [a, b])
    import tx8c.transforms.slice.group_cost as group_cost

    monkeypatch.setattr(group_cost, "search",
                        lambda spec, config, options, name="": evaluate(spec, cand, config))
    run(module, slicing_spec(CompileOptions()) + ddr_spec(CompileOptions()))
    container = module_container(module)
    return module, lower_module(module, container), container, [a, b]


@pytest.mark.parametrize("tiles, split", [(16, 1), (8, 2), (5, 1)])
def test_tree_reduction_equals_the_reference(monkeypatch, tiles, split):
    cand = Candidate((1, 1), (1, 1), ReduceCut(2, (tiles,), (split,)))
    module, program, container, inputs = forced(monkeypatch, cand)
    nocs = {t.tile: [i for i in t.instructions if isinstance(i, NocReduce)]
            for t in program.groups[0].tiles}
    children = reduce_tree([t for t in _shares(module, cand)])
    assert {t: [n.source_tile for n in ns] for t, ns in nocs.items() if ns} == {
        t: c for t, c in children.items() if c}
    got, timing = run_program(program, module, inputs, container)
    expected = run_reference(module, inputs)
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-4, atol=1e-4)
    # the owner's NoC lane runs ceil(log2(tiles)) rounds, not tiles - 1 transfers
    assert len(nocs[0]) == (tiles - 1).bit_length()


def _shares(module, cand):
    from tx8c.slicing.steps import tiles

    return tiles(group_spec(the_group(module)), cand, DEFAULT_CONFIG)
