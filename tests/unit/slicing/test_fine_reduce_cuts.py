"""A reduction cut in time finer than the channel block (issue 11's pipeline point).

A Conv 3x3 reading a channel-aligned activation of 256 channels (4 blocks of 64) could
stream its weights in at most 4 pieces: the seed's alignCx cut a value a DMA moves on
whole blocks. A window of 32 channels (the plain-NHWC threshold) inside a block is
stored in SPM as plain NHWC without padding, and the DMA reads exactly its bytes (runs
of 128 bytes at a stride of 256), so the search may cut the reduction in 8
(`steps.loaded_channel_granule`, `search.reduce_cuts`): the first step's weight piece,
ResNet-50's stage-3 fill, halves. The plan runs on cmodel v2 and in C to the reference's
result bit for bit (integer-valued data: every partial sum is exact in fp32)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from tests.unit.group.common import run
from tests.unit.slicing.helpers import grouped_graph
from tx8c.codegen.c_backend import find_compiler, run_c
from tx8c.codegen.lower import lower_module
from tx8c.codegen.program import Dma
from tx8c.const_container import module_container
from tx8c.pipeline import CompileOptions, ddr_spec, slicing_spec
from tx8c.sim.cmodel_v2 import resolve_ops, run_program
from tx8c.sim.reference import run_reference
from tx8c.slicing.evaluate import _channel_blocks, _cuts_inside_blocks, evaluate
from tx8c.slicing.group import group_spec
from tx8c.slicing.plan import Candidate, ReduceCut
from tx8c.slicing.search import _reduce_candidates, reduce_cuts
from tx8c.slicing.steps import reduce_granules
from tx8c.target.config import DEFAULT_CONFIG
from tx8c.transforms.slice import group_cost
from tx8c.transforms.slice.group_cost import groups_to_slice

C_IN, C_OUT, HW = 256, 64, 8


def two_convs():
    """x [1, 16, 8, 8] -> Conv 1x1 (16 -> 256) -> Relu -> Conv 3x3 (256 -> 64): the
    second Conv (its own group) reads a channel-aligned activation of 4 blocks. Weights
    and input are small integers, so every sum is exact in any order."""
    rng = np.random.default_rng(0)
    w1 = rng.integers(-1, 2, (C_IN, 16, 1, 1)).astype(np.float32)
    w2 = rng.integers(-1, 2, (C_OUT, C_IN, 3, 3)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w1"], ["h"], kernel_shape=[1, 1]),
             helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("Conv", ["r", "w2"], ["y"], kernel_shape=[3, 3],
                              pads=[1, 1, 1, 1])]
    graph = helper.make_graph(
        nodes, "two_convs",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, HW, HW])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, C_OUT, HW, HW])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2")])
    return grouped_graph(graph)


def second_conv(module):
    """The 3x3 Conv's group (the Transposes to and from NHWC are groups of their own)."""
    for group in groups_to_slice(module):
        spec = group_spec(group)
        for n in spec.nodes:
            if n.label.startswith("Conv") and n.results[0].shape[-1] == C_OUT:
                return spec, n.index
    raise AssertionError("no 3x3 Conv group")


def fine_cut(conv: int) -> Candidate:
    """The second Conv's input channels in 8 pieces of 32, in time, on one tile."""
    return Candidate((1, 1, 1, 1), (1, 1, 1, 1), ReduceCut(conv, (1,), (8,), (32,)))


def test_the_search_offers_the_cut_inside_the_channel_blocks():
    spec, conv = second_conv(two_convs())
    assert reduce_granules(spec, conv, DEFAULT_CONFIG)[0] == 64
    assert reduce_granules(spec, conv, DEFAULT_CONFIG, fine=True)[0] == 32
    cuts = reduce_cuts(spec, 16, DEFAULT_CONFIG)
    assert fine_cut(conv).reduce in cuts  # 8 pieces in time: beyond the 4 blocks
    assert all(c.granule[0] == 64 for c in cuts if c.split[0] <= 4)  # the blocks suffice
    offered = list(_reduce_candidates(spec, Candidate((1, 1, 1, 1), (1, 1, 1, 1)), 1,
                                      DEFAULT_CONFIG))
    assert {c.pipelined for c in offered if c.reduce.granule[0] == 64} == {True, False}
    assert {c.pipelined for c in offered if c.reduce.granule[0] == 32} == {True}


def test_the_fine_cut_is_planned_in_8_steps():
    spec, conv = second_conv(two_convs())
    plan = evaluate(spec, fine_cut(conv), DEFAULT_CONFIG)
    assert plan.steps == 8
    coarse = evaluate(spec, Candidate((1, 1, 1, 1), (1, 1, 1, 1),
                                      ReduceCut(conv, (1,), (4,), (64,))),
                      DEFAULT_CONFIG)
    assert coarse.steps == 4


def test_loads_are_cut_inside_the_blocks_stores_on_them():
    """Under a cut inside the blocks, a load's channel window may end inside a block
    (the DMA reads part of each block); a store's may not (the DDR tensor the next
    group reads keeps whole blocks). Other candidates keep whole blocks everywhere."""
    spec, conv = second_conv(two_convs())
    assert _cuts_inside_blocks(spec, fine_cut(conv), DEFAULT_CONFIG)
    assert not _cuts_inside_blocks(spec, replace(fine_cut(conv), reduce=ReduceCut(
        conv, (1,), (8,))), DEFAULT_CONFIG)
    assert set(_channel_blocks(spec, DEFAULT_CONFIG).values()) == {(3, 64)}
    blocks = _channel_blocks(spec, DEFAULT_CONFIG, inside=True)
    stored = {n.inputs[0] for n in spec.nodes if n.kind == "store"}
    loaded = [r for r in blocks if spec.nodes[r.node].kind == "load"]
    assert loaded and all(blocks[r][1] == 32 for r in loaded)
    assert stored and all(blocks[r][1] == 64 for r in stored)


def test_the_fine_cut_runs_to_the_reference_bit_for_bit(monkeypatch, tmp_path):
    module = two_convs()
    spec, conv = second_conv(module)

    monkeypatch.setattr(group_cost, "search", _forcing(spec.key, fine_cut(conv)))
    options = CompileOptions(jobs=1, spm_resident=0)
    run(module, slicing_spec(options) + ddr_spec(options))
    container = module_container(module)
    program = lower_module(module, container)
    loads = [i for g in program.groups for t in g.tiles for i in t.instructions
             if isinstance(i, Dma) and i.lane == "ld" and len(i.window.shape) == 4
             and i.window.shape[-1] == 32]
    assert len(loads) == 16  # the activation and the weight, each in 8 windows of 32
    x = np.random.default_rng(1).integers(-2, 3, (1, 16, HW, HW)).astype(np.float32)
    got, _ = run_program(program, module, [x], container)
    want = run_reference(module, [x])
    for value, expected in zip(got, want, strict=True):
        assert value.tobytes() == expected.tobytes()
    if find_compiler() is not None:
        ops = resolve_ops(program, module)
        for value, expected in zip(run_c(program, [x], container, tmp_path, ops), want,
                                   strict=True):
            assert np.asarray(value).tobytes() == expected.tobytes()


def _forcing(key, cand: Candidate):
    from tx8c.slicing.search import search

    def plan(spec, config, options, name=""):
        if spec.key == key:
            return evaluate(spec, cand, config)
        return search(spec, config, options, name)
    return plan
