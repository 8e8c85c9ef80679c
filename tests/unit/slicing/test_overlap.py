"""The model's chained estimate (`tx8c.slicing.overlap`): each group's ready prefix
hidden in the previous group's run, never more than the time that group leaves its ld
lane idle or the group itself; the ready prefix counts the loads that wait for no store
of the groups it may run beside (`ready_lead`, `tx8c.analysis.group_dag.waiting_operands`)."""

from __future__ import annotations

import math

import numpy as np

from tests.unit.slicing.helpers import single, the_group
from tx8c.analysis.ddr_tensors import main_body
from tx8c.analysis.group_dag import relabelled_sources, waiting_operands
from tx8c.dialect.ops.backend import GroupOp
from tx8c.dialect.ops.elementwise import AddOp
from tx8c.interfaces.sharding import Window
from tx8c.ir_utils import group_ops
from tx8c.slicing.evaluate import window_bytes
from tx8c.slicing.group import group_spec
from tx8c.slicing.overlap import chained, early_loads, ready_lead
from tx8c.slicing.search import SearchOptions, search
from tx8c.slicing.steps import tiles
from tx8c.target.config import DEFAULT_CONFIG


def test_a_group_hides_its_lead_up_to_the_previous_groups_idle_ld_lane() -> None:
    # the first group hides nothing; the second its whole lead (30 < 100 - 40 idle);
    # the third only what the second leaves idle (20 - 5 of its lead of 50)
    assert chained([(100, 40, [(30, None)]), (20, 5, [(10, None)]),
                    (80, 70, [(50, None)])]) == [100, 10, 65]


def test_nothing_is_hidden_behind_a_busy_ld_lane_or_without_a_lead() -> None:
    assert chained([(100, 10, []), (50, 10, []), (70, 10, [])]) == [100, 50, 70]
    assert chained([(100, 100, []), (50, 10, [(40, None)])]) == [100, 50]


def test_a_share_never_goes_below_zero() -> None:
    assert chained([(100, 0, []), (20, 0, [(50, None)])]) == [100, 0]


def _add_group():
    a = np.ones((1, 64, 32, 32), np.float32)
    spec = group_spec(the_group(single(AddOp, [a, a])))
    return spec, search(spec, DEFAULT_CONFIG, SearchOptions())


def test_the_ready_lead_leaves_out_the_inputs_that_wait() -> None:
    """An Add of two inputs: waiting for both, nothing is ready; waiting for the first,
    the second's first window (setup + bytes at the DDR bandwidth its tiles share)."""
    spec, plan = _add_group()
    config = DEFAULT_CONFIG
    assert ready_lead(spec, plan, config, frozenset({0, 1})) == 0
    load = next(n for n in spec.nodes if n.kind == "load" and n.inputs[0].index == 1)
    nbytes = window_bytes(plan.slice_shapes[load.index], load.results[0], config)
    rate = min(config.lsu_bytes_per_cycle,
               config.ddr_bandwidth_bytes_per_s / config.clock_hz / max(1, plan.tiles))
    if load.index in plan.multicast:
        rate = min(config.lsu_bytes_per_cycle,
                   config.ddr_bandwidth_bytes_per_s / config.clock_hz)
    assert ready_lead(spec, plan, config, frozenset({0})) == math.ceil(
        config.dma_setup_cycles + nbytes / rate)
    assert ready_lead(spec, plan, config) > ready_lead(spec, plan, config, frozenset({0}))


def test_waiting_operands_follow_the_barrier_epochs() -> None:
    """On a compiled example: a sliced group waits for exactly the operands written by
    the groups from the first of its previous sliced group's epoch on (relabels as what
    they relabel); the first sliced group for what any group before it writes."""
    from tests.e2e.test_cmodel_v2 import compiled

    module = compiled("residual_cnn")[0]
    groups = group_ops(main_body(module))
    found = waiting_operands(groups)
    position = {g: i for i, g in enumerate(groups)}
    epoch, epochs = 0, []
    for g in groups:
        epochs.append(epoch)
        epoch += bool(g.attr("need_barrier"))

    def writer(value) -> int:
        owner = value.owner
        if owner not in position:
            return -1  # a graph input
        if owner.attr("group_tag") == GroupOp.IN_DDR:
            return max((writer(v) for v in owner.operands), default=-1)
        return position[owner]

    previous, waited = None, 0
    for i, g in enumerate(groups):
        since = 0 if previous is None else epochs.index(epochs[previous])
        assert found[i] == {k for k, v in enumerate(g.operands) if writer(v) >= since}
        waited += len(found[i])
        if g.attr("group_tag") != GroupOp.IN_DDR:
            previous = i
    assert 0 < waited < sum(len(g.operands) for g in groups)


def test_a_waiting_lead_hides_from_when_its_windows_are_stored() -> None:
    # the previous group (100 cycles) leaves its ld lane idle for its last 60; the ready
    # lead (10) goes first, then the waiting lead (40) from 25 cycles before its end
    # (the stores of its windows are done then): 25 of it hidden
    assert chained([(100, 40, []), (90, 0, [(10, None), (40, 25)])]) == [100, 55]
    # stored early enough: all of it, up to the idle lane left after the ready lead
    assert chained([(100, 40, []), (90, 0, [(10, None), (40, 80)])]) == [100, 40]
    assert chained([(100, 80, []), (90, 0, [(10, None), (40, 80)])]) == [100, 70]  # 20 idle
    # stored at the previous group's end (lag 0), or no idle lane: nothing of it
    assert chained([(100, 40, []), (90, 0, [(10, None), (40, 0)])]) == [100, 80]
    assert chained([(100, 100, []), (90, 0, [(10, None), (40, 80)])]) == [100, 90]


def test_the_stores_lag_is_a_busiest_lane_period_per_later_step() -> None:
    """The stem cut along W in 2 steps per tile: a window that meets only first steps'
    stores is done one period (busiest lane / steps) before the group's end; one that
    meets a last step's store, at its end."""
    from tests.unit.slicing.test_stem_cuts import W_CUT, stem, stem_group
    from tx8c.slicing.evaluate import evaluate
    from tx8c.slicing.overlap import stores_lag
    from tx8c.slicing.steps import steps, tiles

    _, spec = stem_group(stem())
    plan = evaluate(spec, W_CUT, DEFAULT_CONFIG)
    assert plan.steps == 2
    store = next(n for n in spec.nodes if n.kind == "store")
    walk = steps(spec, plan.candidate, tiles(spec, plan.candidate, DEFAULT_CONFIG)[0],
                 DEFAULT_CONFIG)
    first, last = (s.windows.loops[store.index].head(store.slicer.num_outputs)
                   for s in (walk[0], walk[-1]))
    output = spec.outputs.index(next(r for r in spec.outputs if r.node == store.index))
    period = max(e.cycles for e in plan.engines) / plan.steps
    assert stores_lag(spec, plan, DEFAULT_CONFIG, output, [first]) == math.floor(period)
    assert stores_lag(spec, plan, DEFAULT_CONFIG, output, [first, last]) == 0


def test_the_early_prefix_runs_until_a_load_reuses_a_buffer_copy() -> None:
    """A 4-step Add: the ld lane loads each input's windows step by step while their
    buffer copies are fresh; the first load into a copy an earlier step's kernel still
    reads waits for that kernel (run only inside the group), and so does the lane: the
    ready lead counts every load before it, not only each input's first window."""
    a = np.ones((1, 256, 64, 64), np.float32)
    spec = group_spec(the_group(single(AddOp, [a, a])))
    config = DEFAULT_CONFIG
    plan = search(spec, config, SearchOptions())
    copies = {b.node: b.copies for b in plan.buffers if b.kind == "value"}
    assert plan.steps >= 4 and min(copies.values()) >= 2
    tile = next(t for t in tiles(spec, plan.candidate, config) if not t.anchor.is_empty())
    prefix = early_loads(spec, plan, config, tile)
    loads = [n.index for n in spec.nodes if n.kind == "load"]
    counts = {i: sum(1 for n, _ in prefix if n == i) for i in loads}
    assert all(counts[i] <= copies[i] for i in loads)
    assert any(counts[i] == copies[i] for i in loads)  # it stopped at a reuse
    load = next(n for n in spec.nodes if n.kind == "load" and n.inputs[0].index == 1)
    nbytes = window_bytes(plan.slice_shapes[load.index], load.results[0], config)
    rate = min(config.lsu_bytes_per_cycle,
               config.ddr_bandwidth_bytes_per_s / config.clock_hz / max(1, plan.tiles))
    one = config.dma_setup_cycles + nbytes / rate
    assert ready_lead(spec, plan, config, frozenset({0})) == math.ceil(
        counts[load.index] * one)
    assert counts[load.index] >= 2


def test_a_load_waiting_for_stores_holds_the_lane_behind_it() -> None:
    # 60 idle cycles: a ready load (10), a waiting one stored 20 before the end (it
    # runs -20..-5: 15 hidden), then a ready one behind it (-5..: 5 hidden); the same
    # loads with the waiting one last hide 10 + 10 + 20
    assert chained([(100, 40, []), (90, 0, [(10, None), (15, 20), (10, None)])]) == [
        100, 60]
    assert chained([(100, 40, []), (90, 0, [(10, None), (10, None), (15, 20)])]) == [
        100, 55]


def test_a_multicast_constant_is_not_held_behind_a_waiting_load() -> None:
    """Lane order: each ready value's first load leads (the lowering's `_ready_first`),
    then step order - except a ready multicast value's loads, which only its source tile
    loads (the others receive it over the NoC): they all lead."""
    from tx8c.slicing.overlap import _ready_first

    spec, _ = _add_group()
    first, second = (n.index for n in spec.nodes if n.kind == "load")
    waits = next(n.inputs[0].index for n in spec.nodes if n.index == first)
    prefix = [(first, None), (second, None), (first, None), (second, None)]
    assert _ready_first(spec, prefix, frozenset({waits}), ()) == [
        (second, 0), (first, 0), (first, 1), (second, 1)]
    assert _ready_first(spec, prefix, frozenset({waits}), (second,)) == [
        (second, 0), (second, 1), (first, 0), (first, 1)]


def test_an_input_an_earlier_group_writes_loads_from_the_previous_groups_start() -> None:
    """On a compiled example: a sliced group's early load of an input written by a
    group before its previous sliced group (not a relabel of that group's result)
    waits for stores done before that group began (lag: its whole cycles); one of the
    previous group's output, its stores lag."""
    import json

    from tests.e2e.test_cmodel_v2 import compiled
    from tx8c.transforms.slice.group_cost import STATS_ATTR, groups_to_slice

    module = compiled("residual_cnn")[0]
    sliced = groups_to_slice(module)
    every = group_ops(main_body(module))
    waiting = dict(zip(every, waiting_operands(every), strict=True))
    rows = json.loads(module.attributes[STATS_ATTR].data)["groups"]
    checked = 0
    for prev, group, row, before in zip(sliced, sliced[1:], rows[1:], rows, strict=False):
        spec = group_spec(group)
        older = {k for k in waiting[group]
                 if all(getattr(v, "owner", None) is not prev
                        for v, _ in relabelled_sources(group.operands[k]))}
        loads = [n.index for n in spec.nodes if n.kind == "load"
                 and any(r.is_input and r.index in older for r in n.inputs)]
        if not older or not loads or before["cycles"] <= before["engines"].get("ld", 0):
            continue
        lags = [lag for _, lag in row["early_loads"] if lag is not None]
        assert before["cycles"] in lags
        checked += 1
    assert checked


def test_a_relabel_of_the_previous_groups_result_waits_for_its_stores() -> None:
    """On the examples: a sliced group's early load of a relabel (an `IN_DDR` group: a
    Reshape...) of its previous sliced group's result waits for that group's stores of
    the elements it reads (a lag shorter than that group), not from the group's start
    as an older group's output would (lag: its whole cycles; Swin's Transpose after the
    Reshape of a Gemm's result: est/sim 0.939 before)."""
    import json

    from xdsl.ir import OpResult

    from tests.e2e.test_cmodel_v2 import compiled
    from tx8c.transforms.slice.group_cost import STATS_ATTR, groups_to_slice

    checked = 0
    for example in ("residual_cnn", "transformer_encoder"):
        module = compiled(example)[0]
        sliced = groups_to_slice(module)
        every = group_ops(main_body(module))
        waiting = dict(zip(every, waiting_operands(every), strict=True))
        rows = json.loads(module.attributes[STATS_ATTR].data)["groups"]
        for prev, group, row, before in zip(sliced, sliced[1:], rows[1:], rows,
                                            strict=False):
            relabels = [k for k in waiting[group] if group.operands[k].owner is not prev
                        and any(isinstance(v, OpResult) and v.owner is prev
                                for v, _ in relabelled_sources(group.operands[k]))]
            if not relabels:
                continue
            lags = [lag for _, lag in row["early_loads"] if lag is not None]
            assert lags and max(lags) < before["cycles"]
            checked += 1
    assert checked >= 3


def test_relabelled_windows_hold_the_elements_they_read() -> None:
    """Every relabel group of two examples: a window of its result, followed back
    through the relabels' slicers (`relabelled_sources`), is a window of the source
    that holds every element the window reads (numbered sources run through the
    relabels' own compute)."""
    from itertools import product

    from tests.e2e.test_cmodel_v2 import compiled

    checked = tight = 0
    for example in ("transformer_encoder", "llama_decoder"):
        for g in group_ops(main_body(compiled(example)[0])):
            if g.attr("group_tag") != GroupOp.IN_DDR:
                continue
            (op,) = [o for o in g.block.ops if o is not g.yield_op]
            source_shape = g.operands[0].type.get_shape()
            shape = g.results[0].type.get_shape()
            numbered = op.compute(np.arange(math.prod(source_shape)).reshape(source_shape))[0]
            outer = next(d for d, n in enumerate(shape) if n > 1)
            for a, b in product(range(shape[outer]), repeat=2):
                if a >= b:
                    continue
                window = Window.whole(shape)
                window = Window.of([(a, b) if d == outer else p
                                    for d, p in enumerate(window.pairs())])
                ((value, (found,)),) = relabelled_sources(g.results[0], [window])
                assert value is g.operands[0]
                read = numbered[tuple(slice(*p) for p in window.pairs())].ravel()
                at = np.unravel_index(read, source_shape)
                for d, (lo, hi) in enumerate(found.pairs()):
                    assert (lo <= at[d]).all() and (at[d] < hi).all()
                tight += found.size == read.size
                checked += 1
    # whole rows read exactly their rows where the relabel's slicer cuts them (it
    # reads the whole source where it cannot: `map_windows`)
    assert checked > 20 and tight > checked // 2
