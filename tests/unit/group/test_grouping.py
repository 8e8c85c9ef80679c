"""The grouping stage on random DAGs and on the bundled examples: acyclic at group level,
every compute op in exactly one group, the group-ldst and group-dag invariants, and the
same results from the reference executor and the cmodel before and after grouping."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, BlockArgument

from examples.make_models import MODELS
from tests.helpers import main_block
from tests.random_graphs import build_dag, dag_steps, random_inputs
from tests.unit.group.common import grouping, laid_out, run
from tx8c.analysis.group_dag import missing_barriers
from tx8c.analysis.group_patterns import Automaton, PatternSpec
from tx8c.dialect.ops.backend import GroupOp, LoadVarOp, StoreVarOp
from tx8c.ir import parse_module, print_module
from tx8c.ir_utils import is_compute_op, is_constant_source
from tx8c.pipeline import layout_spec
from tx8c.sim.cmodel import run_cmodel
from tx8c.sim.reference import run_reference
from tx8c.transforms.group.group_pattern import group_matches

MODES = ("none", "cnn", "default")


def program_steps(block: Block) -> list[str]:
    """The compute ops of a block and of its groups, without the groups' DMA moves."""
    steps = []
    for op in block.ops:
        if isinstance(op, GroupOp):
            steps += program_steps(op.block)
        elif is_compute_op(op) and not isinstance(op, LoadVarOp | StoreVarOp):
            steps.append(op.name)
    return steps


def assert_grouped(before_steps: list[str], module: ModuleOp) -> None:
    """The invariants the grouping stage guarantees (docstrings of its passes)."""
    block = main_block(module)
    # every compute op in exactly one top-level group, nothing else at the top level
    assert sorted(program_steps(block)) == sorted(before_steps)
    for op in block.ops:
        assert isinstance(op, GroupOp) or is_constant_source(op) or op is block.last_op
    # the block is topologically ordered (so the graph of groups is acyclic)
    defined = set(block.args)
    for op in block.ops:
        assert all(v in defined for v in op.operands), op.name
        defined.update(op.results)
    groups = [op for op in block.ops if isinstance(op, GroupOp)]
    ids = [g.attr("group_id") for g in groups]
    assert sorted(ids) == list(range(len(groups)))
    for group in groups:
        assert_loads_and_stores(group)
        assert group.attr("dev_region") == (4, 4)
    assert missing_barriers(block) == []


def assert_loads_and_stores(group: GroupOp) -> None:
    body = group.block
    ops = list(body.ops)
    loads = [op for op in ops if isinstance(op, LoadVarOp)]
    stores = [op for op in ops if isinstance(op, StoreVarOp)]
    assert ops[:len(loads)] == loads  # LoadVars open the body, in argument order
    assert [load.operands[0].index for load in loads] == sorted(
        {load.operands[0].index for load in loads})
    assert all(isinstance(load.operands[0], BlockArgument) for load in loads)
    for arg in body.args:  # other readers of an input read it in DDR
        for use in arg.uses:
            reader = use.operation
            if reader.moves_no_bytes():  # a relabel runs where its operand lives
                continue
            if not isinstance(reader, LoadVarOp) and reader is not body.last_op:
                assert not reader.query_op_attr().loads(use.index)
    assert ops[len(ops) - 1 - len(stores):-1] == stores  # StoreVars close it
    for value in body.last_op.operands:
        owner = value.owner
        if not isinstance(value, BlockArgument) and not isinstance(owner, StoreVarOp) \
                and not owner.moves_no_bytes():  # a relabel of a value in DDR is in DDR
            assert not owner.query_op_attr().stores(value.index)
    assert group.attr("group_tag") == (0 if loads or stores else 2)


def assert_same_results(before: ModuleOp, after: ModuleOp, inputs) -> None:
    expected = run_reference(before, inputs)
    for executor in (run_reference, run_cmodel):
        for want, got in zip(expected, executor(after, inputs), strict=True):
            np.testing.assert_array_equal(got, want)


# --------------------------------------------------------------------------------------
# random DAGs
# --------------------------------------------------------------------------------------

KINDS = ("Conv", "Relu", "Add", "Mul", "Pool", "BatchNorm_Inference", "Concatenate",
         "Reshape", "Tanh", "Transpose", "Sigmoid", "Softmax", "Split", "Slice", "Pad",
         "LayerNorm", "ChannelNorm")

random_patterns = st.lists(
    st.tuples(st.lists(st.sampled_from(KINDS), min_size=1, max_size=4), st.integers(0, 3),
              st.booleans()),
    min_size=1, max_size=8,
).map(lambda ps: [PatternSpec(" ".join(k) + (" *" if star else ""), p) for k, p, star in ps])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dag_steps(max_size=30), st.sampled_from(MODES + ("random",)), random_patterns)
def test_random_dags(steps, mode, patterns) -> None:
    module = run(build_dag(steps, max_ops=40), layout_spec("optimal"))
    inputs = random_inputs(module, seed=len(steps))
    before = module.clone()
    before_steps = program_steps(main_block(module))
    if mode == "random":
        group_matches(main_block(module), Automaton(patterns))
        mode = "none"
    grouping(module, mode)
    assert_grouped(before_steps, module)
    assert_same_results(before, module, inputs)
    # the printed IR reads back and runs the same
    assert_same_results(before, parse_module(print_module(module)), inputs)


# --------------------------------------------------------------------------------------
# the bundled examples
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(MODELS))
def test_examples(name: str, mode: str) -> None:
    module = parse_module(laid_out(name))
    inputs = random_inputs(module)
    before = module.clone()
    before_steps = program_steps(main_block(module))
    grouping(module, mode)
    assert_grouped(before_steps, module)
    assert_same_results(before, module, inputs)
    groups = sum(isinstance(op, GroupOp) for op in main_block(module).ops)
    if mode == "none":
        assert groups == len(before_steps)
    elif mode == "default":
        assert groups < len(before_steps)  # the patterns group something in every example
    text = print_module(module)
    grouping(module, mode)  # the stage again on grouped IR changes nothing
    assert print_module(module) == text
