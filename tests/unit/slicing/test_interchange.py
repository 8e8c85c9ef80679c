"""The interchanged loop order (`Candidate.interchange`, issue 11's pipeline point).

Under a reduction cut in time the default order runs the reduction's pieces innermost:
after the last piece of the tile's last anchor step, that step's last compute, what
follows the reduction and its stores run alone (the drain). Interchanged, the anchor's
steps run inside each reduction piece: the weight piece is loaded once for all of them,
each anchor step keeps its own partial-sum copy, and at the last piece what follows the
reduction and the stores of one anchor step run while the next step's last piece
computes. The group: y = Relu(x @ w + b + r) over 128 rows of 512, the Gemm's K in 4
pieces of 128 in time and over 2 tiles, the rows over 4 tiles and in 2 (or 4) steps.
Integer-valued data: every partial sum is exact in fp32, in any order."""

from __future__ import annotations

import json

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.unit.group.common import run
from tests.unit.slicing.helpers import grouped_graph
from tx8c.codegen.lower import group_plan, lower_module
from tx8c.codegen.program import Dma, Kernel, NocCopy
from tx8c.const_container import module_container
from tx8c.pipeline import CompileOptions, ddr_spec, slicing_spec
from tx8c.sim.cmodel_v2 import run_program, simulate_events
from tx8c.sim.plan_run import run_by_plans
from tx8c.sim.reference import run_reference
from tx8c.slicing.evaluate import Evaluator, Rejected, evaluate, longest, simulate_tile
from tx8c.slicing.group import group_spec
from tx8c.slicing.plan import Candidate, Plan, ReduceCut
from tx8c.slicing.steps import steps, tiles
from tx8c.target.config import DEFAULT_CONFIG
from tx8c.transforms.slice import group_cost
from tx8c.transforms.slice.group_cost import groups_to_slice

ROWS, WIDTH = 128, 512


def gemm_add_relu():
    """The module of y = Relu(x @ w + b + r), x, r: [1, 128, 512]."""
    rng = np.random.default_rng(0)
    consts = {"w": rng.integers(-1, 2, (WIDTH, WIDTH)).astype(np.float32),
              "b": rng.integers(-1, 2, WIDTH).astype(np.float32)}
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]),
             helper.make_node("Add", ["m", "b"], ["a"]),
             helper.make_node("Add", ["a", "r"], ["s"]),
             helper.make_node("Relu", ["s"], ["y"])]
    rows = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, ROWS, WIDTH])
            for n in ("x", "r", "y")]
    graph = helper.make_graph(nodes, "gemm_add_relu", rows[:2], rows[2:],
                              [numpy_helper.from_array(v, k) for k, v in consts.items()])
    return grouped_graph(graph)


def the_gemm(module):
    """(group, spec, the Gemm's node index) of the Gemm's group."""
    for group in groups_to_slice(module):
        spec = group_spec(group)
        for n in spec.nodes:
            if n.label.startswith("Gemm"):
                return group, spec, n.index
    raise AssertionError("no Gemm group")


def cut(gemm: int, row_steps: int = 2, interchange: bool = True) -> Candidate:
    return Candidate((1, 1, 4, 1), (1, 1, row_steps, 1), ReduceCut(gemm, (2,), (4,), (64,)),
                     True, False, interchange)


def inputs():
    rng = np.random.default_rng(1)
    return [rng.integers(-2, 3, (1, ROWS, WIDTH)).astype(np.float32) for _ in range(2)]


def test_the_anchor_steps_run_inside_the_reduction_pieces():
    """Step k * 2 + a is piece k of row step a: the weight piece is loaded once per
    piece (not per row step), the rows' activation at every step; the residual, what
    follows the Gemm and the store run at the last piece only, once per row step; the
    partial sum of each row step starts at the first piece and is complete at the
    last, in its own copy (`inner`)."""
    _, spec, gemm = the_gemm(gemm_add_relu())
    tile = tiles(spec, cut(gemm), DEFAULT_CONFIG)[0]
    walk = steps(spec, cut(gemm), tile, DEFAULT_CONFIG)
    assert len(walk) == 8
    weight = next(n.index for n in spec.nodes
                  if n.kind == "load" and n.results[0].shape == (WIDTH, WIDTH))
    activation, residual = (n.index for n in spec.nodes if n.label.startswith("LoadVar"))
    store = next(n.index for n in spec.nodes if n.kind == "store")
    rows = [s.windows.loops[gemm].start[2] for s in walk]
    assert rows == [0, 16, 0, 16, 0, 16, 0, 16]
    assert [s.runs[weight] for s in walk] == [True, False] * 4
    assert [s.runs[gemm] for s in walk] == [True] * 8
    assert [s.runs[activation] for s in walk] == [True] * 8
    assert [s.runs[residual] for s in walk] == [False] * 6 + [True, True]
    assert [s.runs[store] for s in walk] == [False] * 6 + [True, True]
    assert [s.first_piece for s in walk] == [True] * 2 + [False] * 6
    assert [s.last_piece for s in walk] == [False] * 6 + [True] * 2
    assert [s.inner for s in walk] == [0, 1] * 4
    # the next piece's weight is issued a step early, while this piece's rows compute
    assert [s.ahead for s in walk] == [(), (), (weight,), (), (weight,), (), (weight,), ()]
    default = steps(spec, cut(gemm, interchange=False), tile, DEFAULT_CONFIG)
    assert [s.runs[store] for s in default] == [False, False, False, True] * 2
    assert [s.runs[residual] for s in default] == [True, False, False, False] * 2
    assert [s.last_piece for s in default] == [s.runs[store] for s in default]


def test_the_loop_order_is_plain_data_and_absent_by_default():
    """`Plan.as_dict` keeps `interchange` only when set: every plan of the default
    order is written as before, byte for byte."""
    _, spec, gemm = the_gemm(gemm_add_relu())
    for interchange in (False, True):
        plan = evaluate(spec, cut(gemm, interchange=interchange), DEFAULT_CONFIG)
        data = plan.as_dict()
        assert ("interchange" in data["candidate"]) == interchange
        assert Plan.from_dict(json.loads(json.dumps(data))) == plan


def test_the_interchanged_order_needs_a_cut_in_time_and_anchor_steps():
    _, spec, gemm = the_gemm(gemm_add_relu())
    for cand in (Candidate((1, 1, 4, 1), (1, 1, 2, 1), None, True, False, True),
                 Candidate((1, 1, 4, 1), (1, 1, 2, 1), ReduceCut(gemm, (2,), (1,), (64,)),
                           True, False, True),
                 cut(gemm, row_steps=1)):
        with pytest.raises(Rejected, match="interchanged order needs"):
            evaluate(spec, cand, DEFAULT_CONFIG)
    with pytest.raises(Rejected, match="at most 2 anchor steps"):  # not yet estimated well
        evaluate(spec, cut(gemm, row_steps=4), DEFAULT_CONFIG)


def test_the_plan_runs_slice_by_slice_to_the_unsliced_result(monkeypatch):
    """The reference run of the plan slice by slice (`run_by_plans`: every window,
    partial sum and store as the plan's steps say) gives the unsliced result bit for
    bit."""
    module, _, container, _ = _compiled(cut, monkeypatch, lower=False)
    group, _, _ = the_gemm(module)
    assert group_plan(group).candidate.interchange
    x, r = inputs()
    got = run_by_plans(module, [x, r], container)
    want = run_reference(module, [x, r], container)
    assert all(a.tobytes() == b.tobytes() for a, b in zip(got, want, strict=True))


def _compiled(cand_of, monkeypatch, lower: bool = True):
    """The module compiled with the Gemm's group forced to `cand_of(gemm)`, lowered
    (`lower`): (module, program or None, constants, the group's spec)."""
    from tx8c.slicing.search import search

    module = gemm_add_relu()
    _, spec, gemm = the_gemm(module)
    cand = cand_of(gemm)

    def plan(s, config, options, name=""):
        return evaluate(s, cand, config) if s.key == spec.key else \
            search(s, config, options, name)

    monkeypatch.setattr(group_cost, "search", plan)
    options = CompileOptions(jobs=1, spm_resident=0)
    run(module, slicing_spec(options) + ddr_spec(options))
    container = module_container(module)
    return module, lower_module(module, container) if lower else None, container, spec


def _estimated_drain(spec, plan: Plan) -> float:
    """The estimate's cycles after the last Gemm (ne) instruction ends."""
    from tx8c.slicing.evaluate import Traced

    shared = Evaluator(spec, DEFAULT_CONFIG)
    evaluate(spec, plan.candidate, DEFAULT_CONFIG, shared=shared)
    (ts, schedule), = shared.estimates
    trace: list[Traced] = []
    total, _ = simulate_tile(spec, list(ts), schedule, DEFAULT_CONFIG, longest(schedule),
                             trace)
    return total - max(t.ended for t in trace if t.lane == "ne")


def test_cmodel_v2_runs_it_bit_exact_as_estimated_with_a_shorter_drain(monkeypatch):
    """cmodel v2 runs the interchanged plan (rows in 2 steps inside the Gemm's 4
    pieces) to the reference's result bit for bit, and the estimate is within 5 % of
    its simulated cycles. The time after the last Gemm (the drain: the NoC reduction of
    the last rows, their Add, Relu and store) is shorter than the default order's with
    the rows whole (the plan the default order would keep: its 2 row steps outside the
    pieces multicast every weight piece twice, and take longer), in the estimate and in
    cmodel v2."""
    runs = {}
    for name, row_steps, interchange in (("interchanged", 2, True), ("whole", 1, False),
                                         ("outside", 2, False)):
        module, program, container, spec = _compiled(
            lambda gemm, n=row_steps, i=interchange: cut(gemm, n, i), monkeypatch)
        group = next(g for g in groups_to_slice(module) if group_spec(g).key == spec.key)
        plan = group_plan(group)
        assert plan.candidate.interchange == interchange
        x, r = inputs()
        got, _ = run_program(program, module, [x, r], container)
        want = run_reference(module, [x, r])
        assert all(a.tobytes() == b.tobytes() for a, b in zip(got, want, strict=True))
        timing, events, _ = simulate_events(program, module)
        gid = group.attr("group_id")
        mine = [e for e in events if e.group_id == gid]
        simulated = timing.group_cycles[gid]
        assert abs(plan.cycles / simulated - 1) <= 0.05, (name, plan.cycles, simulated)
        end = max(e.finish for e in mine)
        if interchange:  # piece 1's weight (128 x 512) before row step 1's Gemm
            listed = program.groups[[g.group_id for g in program.groups].index(
                gid)].tiles[0].instructions
            weight = next(i for i, ins in enumerate(listed) if ins.step == 2 and (
                isinstance(ins, Dma) and ins.window.shape == (128, WIDTH)
                or isinstance(ins, NocCopy)))
            gemm = next(i for i, ins in enumerate(listed)
                        if isinstance(ins, Kernel) and ins.step == 1)
            assert weight < gemm
        runs[name] = (plan.cycles, _estimated_drain(spec, plan),
                      end - max(e.finish for e in mine if e.lane == "ne"))
    assert runs["interchanged"][1] < runs["whole"][1], runs
    assert runs["interchanged"][2] < runs["whole"][2], runs
    assert runs["interchanged"][0] < min(runs["whole"][0], runs["outside"][0]), runs
