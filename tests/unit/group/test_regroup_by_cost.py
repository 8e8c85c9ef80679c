"""regroup-by-cost: the merged groups equal what the plain-data merge promised the search,
the grouping invariants hold after merging, values are unchanged (reference executor and
cmodel), the group graph stays acyclic, and the cost model decides: a merge that pays is
made, one that does not is left alone."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import main_block
from tests.random_graphs import build_dag, dag_steps, random_inputs
from tests.unit.group.common import run
from tests.unit.group.test_grouping import assert_grouped, assert_same_results, program_steps
from tx8c.dialect.base import to_attr
from tx8c.dialect.ops.backend import GroupOp
from tx8c.ir import parse_module, print_module
from tx8c.ir_utils import read_pass_stats
from tx8c.pipeline import layout_spec
from tx8c.slicing.group import group_spec
from tx8c.slicing.regroup import Costs, merge_specs, regroup
from tx8c.slicing.search import SearchOptions
from tx8c.target.config import DEFAULT_CONFIG
from tx8c.transforms.group.regroup_by_cost import (
    STATS_ATTR,
    merge_groups,
    read_units,
    regroup_block,
)


class FewestGroups:
    """A cost that makes every legal merge pay: the program merges as much as it can
    (exercises the rewrite on every shape of graph, whatever the real estimates say)."""

    searches = 0

    def __call__(self, spec) -> float:
        return 1.0

    def lower_bound(self, spec) -> float:
        return 0.0


def groups_of(module) -> list[GroupOp]:
    return [op for op in main_block(module).ops if isinstance(op, GroupOp)]


def grouped_dag(steps, mode: str = "none"):
    module = run(build_dag(steps, max_ops=30), layout_spec("optimal"))
    before = module.clone()
    before_steps = program_steps(main_block(module))
    run(module, ["group-pattern{mode=" + mode + "}"] if mode != "none" else [])
    run(module, ["group-optimization", "group-ldst"])
    return before, before_steps, module


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dag_steps(max_size=24), st.sampled_from(("none", "default")), st.integers(2, 5))
def test_random_dags_merged_as_promised(steps, mode, window) -> None:
    """Merging as much as legal: each merged group's spec is the one `merge_specs` gave
    the search, the grouping invariants hold (acyclic, loads first, stores last), and the
    reference executor and the cmodel give the values of the ungrouped module."""
    before, before_steps, module = grouped_dag(steps, mode)
    groups = groups_of(module)
    units = read_units(groups)
    result = regroup(units, FewestGroups(), window)
    promised = [merge_specs(units, first, last) for first, last in result.intervals]
    for first, last in result.intervals:
        if last - first > 1:
            merge_groups(groups[first:last])
    after = groups_of(module)
    assert len(after) == len(result.intervals)
    for group, spec in zip(after, promised, strict=True):
        assert group_spec(group).key == spec.key
    run(module, ["group-mapping", "group-dag"])
    assert_grouped(before_steps, module)
    inputs = random_inputs(module, seed=len(steps))
    assert_same_results(before, module, inputs)
    assert_same_results(before, parse_module(print_module(module)), inputs)
    # group-ldst has nothing left to do on the merged groups
    text = print_module(module)
    assert print_module(run(parse_module(text), ["group-ldst"])) == text


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dag_steps(max_size=12))
def test_random_dags_by_cost(steps) -> None:
    """With the real estimates: never worse than the pattern grouping, and the values
    are unchanged."""
    before, before_steps, module = grouped_dag(steps)
    run(module, ["regroup-by-cost{window=3}", "group-mapping", "group-dag"])
    stats = read_pass_stats(module, STATS_ATTR)["regroup-by-cost"]
    assert stats["cycles_after"] <= stats["cycles_before"]
    assert stats["groups_after"] == len(groups_of(module))
    assert_grouped(before_steps, module)
    assert_same_results(before, module, random_inputs(module, seed=1))


def chain_module(shape: tuple[int, ...], ops: list[str]):
    """A chain of element-wise ops on one input, one group per op (group-ldst's)."""
    text = "\n".join(
        f"    %v{i + 1} = tx8be.{op} %v{i} : ({t}) -> {t}"
        for i, op in enumerate(ops)
        for t in ["tensor<" + "x".join(map(str, shape)) + "xf32>"]
    )
    t = "tensor<" + "x".join(map(str, shape)) + "xf32>"
    module = parse_module(
        f"func.func @main(%v0: {t}) -> {t} {{\n{text}\n    func.return %v{len(ops)} : {t}\n}}")
    return run(module, ["group-optimization", "group-ldst"])


def test_merge_wins_on_a_memory_bound_chain() -> None:
    """Relu -> Sigmoid on 1x32x28x28: each group streams the tensor in and out of DDR;
    merged, the intermediate stays in SPM and the estimate drops."""
    module = chain_module((1, 32, 28, 28), ["Relu", "Sigmoid"])
    before = module.clone()
    costs = Costs(DEFAULT_CONFIG, SearchOptions())
    result = regroup_block(main_block(module), costs, 2)
    assert result.intervals == ((0, 2),)
    assert result.cycles < result.before_cycles
    assert len(groups_of(module)) == 1
    x = np.random.default_rng(0).standard_normal((1, 32, 28, 28)).astype(np.float32)
    assert_same_results(before, module, [x])


def test_merge_loses_on_independent_groups() -> None:
    """Two Relus on two inputs: merged, the group has two sinks and can only run whole
    on one tile (not sliceable), which the estimate prices above the two sharded groups:
    they stay apart."""
    t = "tensor<1x32x28x28xf32>"
    module = run(parse_module(
        f"func.func @main(%a: {t}, %b: {t}) -> ({t}, {t}) {{\n"
        f"  %x = tx8be.Relu %a : ({t}) -> {t}\n"
        f"  %y = tx8be.Relu %b : ({t}) -> {t}\n"
        f"  func.return %x, %y : {t}, {t}\n}}"), ["group-optimization", "group-ldst"])
    units = read_units(groups_of(module))
    merged = merge_specs(units, 0, 2)
    assert merged is not None and not merged.sliceable
    costs = Costs(DEFAULT_CONFIG, SearchOptions())
    result = regroup_block(main_block(module), costs, 2)
    assert result.intervals == ((0, 1), (1, 2))
    assert costs(merged) > result.cycles
    assert len(groups_of(module)) == 2


def test_ddr_groups_are_never_merged() -> None:
    """A group of group_tag 2 (runs in DDR) is a boundary for the program."""
    module = chain_module((1, 32, 28, 28), ["Relu", "Sigmoid"])
    groups_of(module)[1].attributes["group_tag"] = to_attr("int", 2)
    units = read_units(groups_of(module))
    assert merge_specs(units, 0, 2) is None
    result = regroup(units, FewestGroups(), 2)
    assert result.intervals == ((0, 1), (1, 2))


def test_pipeline_option() -> None:
    """`regroup` in CompileOptions puts the pass before group-mapping."""
    from tx8c.pipeline import CompileOptions, grouping_spec

    assert "regroup-by-cost{window=4}" in grouping_spec(CompileOptions(regroup=4))
    assert not any("regroup" in s for s in grouping_spec(CompileOptions(regroup=0)))
    spec = grouping_spec(CompileOptions(regroup=3))
    assert spec.index("regroup-by-cost{window=3}") < spec.index("group-mapping")


class NothingFits(FewestGroups):
    def __call__(self, spec) -> float:
        return float("inf")


def test_groups_without_a_plan_are_left_alone() -> None:
    """No group has a plan (NoPlan everywhere): the cut keeps every group as it is and
    leaves the error to group-cost."""
    module = chain_module((1, 32, 28, 28), ["Relu", "Sigmoid", "Tanh"])
    result = regroup(read_units(groups_of(module)), NothingFits(), 3)
    assert result.intervals == ((0, 1), (1, 2), (2, 3))
