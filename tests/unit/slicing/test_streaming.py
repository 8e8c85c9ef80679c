"""Plans that stream a group's weights in pieces (issue 11's pipeline point: short fill
and drain). A Gemm's K read from a channel-aligned activation is cut on its channel
blocks (`steps.reduce_granules`): K = 768 is 12 blocks of 64, so a power-of-two cut
in 8 pieces fell off the blocks and was rejected, and the search could stream the
weights in at most 2 pieces per tile; on the blocks it streams them in 3. The plan runs
in cmodel v2 to the reference's result, and the estimate matches cmodel v2's cycles."""

from __future__ import annotations

import json

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.unit.group.common import run
from tests.unit.slicing.helpers import grouped_graph
from tx8c.codegen.lower import lower_module
from tx8c.const_container import module_container
from tx8c.interfaces.sharding import piece_bounds
from tx8c.pipeline import (
    CompileOptions,
    ddr_spec,
    slicing_spec,
)
from tx8c.sim.cmodel_v2 import run_program
from tx8c.sim.reference import run_reference
from tx8c.slicing.evaluate import Rejected, evaluate
from tx8c.slicing.group import group_spec
from tx8c.slicing.plan import Candidate, ReduceCut
from tx8c.slicing.search import reduce_cuts
from tx8c.slicing.steps import reduce_granules
from tx8c.target.config import DEFAULT_CONFIG
from tx8c.transforms.slice.group_cost import groups_to_slice

ROWS, K, N = 16, 768, 256


def two_layers():
    """x [1, 16, 128] -> MatMul (128 x 768) -> Relu -> MatMul (768 x 256): the second
    Gemm (its own group) reads a channel-aligned activation of 768 = 12 blocks of 64
    and a weight of 768 KB, large beside its 16 KB output."""
    rng = np.random.default_rng(0)
    w1 = numpy_helper.from_array((rng.standard_normal((128, K)) / 11).astype(np.float32),
                                 "w1")
    w2 = numpy_helper.from_array((rng.standard_normal((K, N)) / 28).astype(np.float32), "w2")
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"]),
             helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("MatMul", ["r", "w2"], ["y"])]
    graph = helper.make_graph(
        nodes, "two_layers",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, ROWS, 128])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, ROWS, N])], [w1, w2])
    return grouped_graph(graph)


def second_gemm(module):
    spec = group_spec(groups_to_slice(module)[-1])
    gemm = next(n for n in spec.nodes if n.label.startswith("Gemm"))
    return spec, gemm.index


def test_a_reduction_cut_falls_on_the_operands_channel_blocks():
    spec, gemm = second_gemm(two_layers())
    assert reduce_granules(spec, gemm, DEFAULT_CONFIG) == (64,)
    sharding = (1, 1, 2, 8)
    with pytest.raises(Rejected, match="channel blocks"):  # 384 / 4 = 96: off the blocks
        evaluate(spec, Candidate(sharding, (1, 1, 1, 1), ReduceCut(gemm, (2,), (4,))),
                 DEFAULT_CONFIG)
    plan = evaluate(spec, Candidate(sharding, (1, 1, 1, 1),
                                    ReduceCut(gemm, (2,), (4,), (64,))), DEFAULT_CONFIG)
    assert plan.steps == 3  # 6 blocks per tile, 2 per step
    # every cut the search tries gives other pieces: (tiles, steps) counts all distinct
    cuts = reduce_cuts(spec, 16, DEFAULT_CONFIG)
    assert all(c.granule == (64,) for c in cuts)
    pieces = []
    for cut in cuts:
        shares = piece_bounds(K, cut.sharding[0], 64)
        pieces.append((len(shares), len(piece_bounds(shares[0][1], cut.split[0], 64))))
    assert len(set(pieces)) == len(pieces) and (1, 1) not in pieces
    assert (2, 3) in pieces and (1, 12) in pieces


def test_the_search_streams_the_weights_and_cmodel_v2_agrees():
    """The search's plan for the second Gemm streams its weights in 3 or more pieces per
    tile; it beats the same plan in 2 pieces (what the search could do before); lowered,
    it computes the reference's result in cmodel v2, in the cycles the estimate says.
    (The K cut in 4 and in 8 pieces over 2 tiles, 3 and 6 steps, are 0.3 % apart in
    cmodel v2: 4540 and 4552 cycles; which one the search takes is within the
    estimate's error.)"""
    module = two_layers()
    spec, gemm = second_gemm(module)
    # Weights streamed from DDR: with values kept in SPM (on by default) the group's
    # reserve leaves less room and the plan is another. Without cross-group overlap: the
    # group's estimate alone is compared with its span run whole (with overlap its
    # constant prefix loads before it is entered).
    options = CompileOptions(jobs=1, spm_resident=0, overlap=False)
    run(module, slicing_spec(options) + ddr_spec(options))
    rows = json.loads(module.attributes["tx8c.slicing"].data)["groups"]
    row = rows[-1]
    assert row["reduce"] is not None and row["steps"] >= 3
    cand = Candidate(tuple(row["sharding"]), tuple(row["split"]),
                     ReduceCut(gemm, tuple(row["reduce"]["sharding"]), (2,), (64,)))
    assert row["cycles"] < evaluate(spec, cand, DEFAULT_CONFIG).cycles
    container = module_container(module)
    program = lower_module(module, container)
    x = np.random.default_rng(1).standard_normal((1, ROWS, 128)).astype(np.float32)
    got, timing = run_program(program, module, [x], container)
    expected = run_reference(module, [x])
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-4, atol=1e-4)
    simulated = timing.group_cycles[row["group"]]
    assert abs(row["cycles"] - simulated) <= 0.02 * simulated
