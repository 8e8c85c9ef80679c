"""Multicast loads (`TX8Config.noc_multicast`): a window several tiles load at the same
step is read from DDR once by its source tile and copied to the others over the NoC
(`NocCopy`). The estimate decides it per load (`evaluate.multicast_loads`,
`Plan.multicast`), the lowering follows the plan, and cmodel v2 moves the bytes once,
equal to the reference, in the time the estimate counts."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from xdsl.dialects.builtin import StringAttr

from tests.unit.slicing.helpers import compiled_with, single, the_group
from tx8c.codegen.lower import group_plan
from tx8c.codegen.program import Dma, NocCopy
from tx8c.dialect.ops.conv_gemm import GemmOp
from tx8c.sim.cmodel_v2 import CModelV2, _Simulation, resolve_ops, run_program
from tx8c.sim.reference import run_reference
from tx8c.slicing.evaluate import (
    Evaluator,
    TileClass,
    data_split,
    evaluate,
    multicast_loads,
    tile_classes,
)
from tx8c.slicing.group import group_spec
from tx8c.slicing.plan import Candidate
from tx8c.slicing.steps import tiles
from tx8c.target.config import DEFAULT_CONFIG, TX8Config
from tx8c.target.cost import mesh_hops, noc_multicast_cycles

A_NODE, B_NODE = 0, 1


def gemm(m: int, k: int, n: int):
    rng = np.random.default_rng(5)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    return single(GemmOp, [a, b]), [a, b]


def compiled(monkeypatch, cand: Candidate, multicast: bool = True, shape=(64, 256, 256)):
    """A Gemm group compiled with `cand` as its plan (and `noc_multicast` as given),
    lowered."""
    module, inputs = gemm(*shape)
    if not multicast:
        module.attributes["tx8c.target"] = StringAttr(json.dumps({"noc_multicast": False}))
    return (*compiled_with(monkeypatch, module, cand), inputs)


def loads_of(program, tensor_index: int):
    """(Dma loads, NocCopies) of the group's input `tensor_index`, over all tiles."""
    tensor = program.inputs[tensor_index]
    tiles_ = program.groups[0].tiles
    dmas = [i for t in tiles_ for i in t.instructions
            if isinstance(i, Dma) and i.lane == "ld" and i.tensor == tensor]
    copies = [(t.tile, i) for t in tiles_ for i in t.instructions if isinstance(i, NocCopy)]
    return dmas, copies


@pytest.mark.parametrize("sharding, shared, own", [((1, 16), 0, 1), ((16, 1), 1, 0)])
def test_the_shared_operand_is_read_once_and_multicast(monkeypatch, sharding, shared, own):
    """Sharded over N every tile needs all of A; over M, all of B: one DMA reads it, the
    other 15 tiles get a NocCopy of the source's buffer; the unshared operand is loaded
    by every tile."""
    cand = Candidate(sharding, (1, 1))
    module, program, container, inputs = compiled(monkeypatch, cand)
    assert group_plan(the_group(module)).multicast == (shared,)
    dmas, copies = loads_of(program, shared)
    assert len(dmas) == 1 and len(copies) == 15
    source = program.groups[0].tiles[-1].tile  # the highest tile reads, lowered first
    assert all(c.source_tile == source and c.source == dmas[0].spm for _, c in copies)
    assert len(loads_of(program, own)[0]) == 16
    got, timing = run_program(program, module, inputs, container)
    np.testing.assert_allclose(got[0], run_reference(module, inputs)[0], rtol=1e-5,
                               atol=1e-5)
    # the DMAs move the shared operand once
    _, plain, _, _ = compiled(monkeypatch, cand, multicast=False)
    nbytes = inputs[shared].nbytes
    assert not loads_of(plain, shared)[1]
    _, alone = run_program(plain, module, inputs, container)
    assert alone.ddr_bytes - timing.ddr_bytes == 15 * nbytes
    assert timing.cycles < alone.cycles


@pytest.mark.parametrize("sharding, split", [((1, 16), (1, 1)), ((16, 1), (1, 1)),
                                             ((4, 4), (1, 1)), ((1, 16), (4, 1))])
def test_the_estimate_counts_the_multicast_as_cmodel_v2_times_it(monkeypatch, sharding,
                                                                 split):
    """Within 5 % (issue 12's per-group bound: the sources and the receivers are timed
    as tile classes side by side, `evaluate.tile_classes`), the DDR bytes exactly."""
    module, program, container, inputs = compiled(monkeypatch, Candidate(sharding, split))
    _, timing = run_program(program, module, inputs, container)
    plan = group_plan(the_group(module))
    assert abs(plan.cycles / timing.cycles - 1) <= 0.05, (plan.cycles, timing.cycles)
    assert plan.ddr_bytes == timing.ddr_bytes


def test_a_group_s_span_on_a_receiver_counts_the_wait_for_its_source(monkeypatch):
    """(64 x 256) @ (256 x 256) over 2 x 8 tiles: tiles 0-6 receive their rows of A from
    tile 7 and their first instruction waits for tile 7's read (it starts at ~1539 of
    ~2776). The group's simulated cycles are a tile's time in the group from when it
    entered it (0 here: the run's only group), so they are the run's cycles; counted
    from each tile's first start (before) they left a receiver's wait out (2748)."""
    module, program, _, _ = compiled(monkeypatch, Candidate((2, 8), (1, 1)))
    sim = _Simulation(CModelV2(program, resolve_ops(program, module), functional=False))
    timing = sim.run()
    first = {}
    for op in sim.ops:
        first[op.tile] = min(first.get(op.tile, math.inf), op.start)
    assert first[0] > 0 and first[7] == 0
    assert timing.group_cycles == {0: timing.cycles}


def test_multicast_loads_groups_tiles_by_window():
    """Sharded 4 x 4: the 4 tiles of a row share A's rows, the 4 of a column B's
    columns; each window's source is its highest tile."""
    module, _ = gemm(64, 256, 256)
    spec = group_spec(the_group(module))
    cand = Candidate((4, 4), (1, 1))

    def shared(config):
        propagate = Evaluator(spec, config).propagate
        busy = tiles(spec, cand, config)
        return multicast_loads(spec, busy, [propagate(t.anchor).loops for t in busy], config)

    column = max(mesh_hops(12 + c, c + 4 * r, DEFAULT_CONFIG) for c in range(4)
                 for r in range(4))
    row = max(mesh_hops(4 * r + 3, 4 * r + c, DEFAULT_CONFIG) for r in range(4)
              for c in range(4))
    windows, senders = shared(DEFAULT_CONFIG)
    assert windows == {A_NODE: (4, row), B_NODE: (4, column)}
    assert senders == {A_NODE: tuple(4 * (t // 4) + 3 for t in range(16)),
                       B_NODE: tuple(12 + t % 4 for t in range(16))}
    assert shared(TX8Config(noc_multicast=False)) == ({}, {})


def test_a_small_shared_window_is_not_multicast():
    """A window whose DMA is mostly setup loses more to the NoC copy's setup and hops
    than it saves on the DDR: every tile loads it."""
    module, _ = gemm(8, 4, 128)
    spec = group_spec(the_group(module))
    plan = evaluate(spec, Candidate((1, 16), (1, 1)), DEFAULT_CONFIG)
    assert plan.multicast == ()


def test_noc_multicast_cycles():
    config = DEFAULT_CONFIG
    assert noc_multicast_cycles(0, 3, config) == 0
    assert noc_multicast_cycles(6400, 3, config) == (
        config.dma_setup_cycles + 3 * config.noc_hop_cycles + 6400 // config.noc_bytes_per_cycle)


def test_noc_multicast_must_be_a_bool():
    with pytest.raises(ValueError, match="noc_multicast must be a bool"):
        TX8Config(noc_multicast=1)


def test_tile_classes_of_a_multicast_over_rows_and_columns():
    """Sharded 4 x 4, A multicast along rows (source: a row's last tile), B along columns
    (source: a column's last, 12-15): tile 15 sources both; 3, 7, 11 source A and
    receive B; 12-14 receive A and source B; the other 9 receive both. The receivers at
    other distances from their sources are classes of their own (their deliveries end
    apart), so here each tile is one, and gets each load from its source's class at its
    own hops."""
    module, _ = gemm(64, 256, 256)
    spec = group_spec(the_group(module))
    split = data_split(spec, Candidate((4, 4), (1, 1)), DEFAULT_CONFIG)
    classes = tile_classes(split, frozenset({A_NODE, B_NODE}))
    expected = []
    for tile in range(16):
        row, column = divmod(tile, 4)
        gets = [(A_NODE, 4 * row + 3, 3 - column)] if column < 3 else []
        gets += [(B_NODE, 12 + column, 3 - row)] if row < 3 else []
        expected.append(TileClass(1, frozenset(), tuple((n, k) for n, k, _ in gets),
                                  reach=tuple((n, hops) for n, _, hops in gets)))
    assert classes == tuple(expected)
    assert tile_classes(split, frozenset()) == (TileClass(16),)


def test_a_tile_of_fewer_steps_is_not_the_source_of_a_window():
    """Sharded 4 x 4, tile 15's share (the 4th of a column) made to run 4 steps, the
    others 20 (BERT-base's q/k/v Gemm: the last 64 of 2304 columns). The lowering's
    source at a step is the highest tile loading the window then: tile 15 until its
    4th step, then tile 14, for all the others' 20. The estimate names 14 the source of
    that row's A (a source of 4 steps left its receivers 16 steps of deliveries that no
    read fed: 0.84 of cmodel v2); the other rows keep their highest tile. A load run
    once (at step 0, which tile 15 has) keeps tile 15 (Swin's LayerNorm weights)."""
    module, _ = gemm(64, 256, 256)
    spec = group_spec(the_group(module))
    cand = Candidate((4, 4), (1, 1))
    propagate = Evaluator(spec, DEFAULT_CONFIG).propagate
    busy = tiles(spec, cand, DEFAULT_CONFIG)
    steps = [20] * 15 + [4]
    windows = [propagate(t.anchor).loops for t in busy]
    counts = [1] * len(spec.nodes)
    _, hoisted = multicast_loads(spec, busy, windows, DEFAULT_CONFIG, steps, counts)
    counts[A_NODE] = 20
    _, senders = multicast_loads(spec, busy, windows, DEFAULT_CONFIG, steps, counts)
    assert senders[A_NODE] == tuple(4 * (t // 4) + 3 for t in range(12)) + (14,) * 4
    assert hoisted[A_NODE] == tuple(4 * (t // 4) + 3 for t in range(16))
