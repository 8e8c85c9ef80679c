"""layout-align-opt (seed 003 LayoutAlignOptPass): each rewrite, meaning kept, no conflict
introduced, statistics; after layout-align-to-npu on the examples and on random DAGs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp

from examples.make_models import MODELS
from tests.unit.layout.test_layout_align_to_npu import (
    DRAWN_KINDS,
    STRATEGIES,
    T4,
    align,
    assert_aligned,
    block_of,
    build_dag,
    channel_norms,
    example,
    parse,
    random_inputs,
)
from tx8c.analysis.layout_problem import read_layout_stats
from tx8c.dialect import make_context
from tx8c.dialect.ops.backend import ChannelNormOp, ConstantOp
from tx8c.sim.reference import run_reference
from tx8c.transforms.layout.layout_align_opt import LayoutAlignOptPass


def optimise(module: ModuleOp) -> dict[str, int]:
    LayoutAlignOptPass().apply(make_context(), module)
    module.verify()
    return read_layout_stats(module)["layout-align-opt"]


def cns(module: ModuleOp) -> list[ChannelNormOp]:
    return [op for op in block_of(module).ops if isinstance(op, ChannelNormOp)]


def assert_nothing_left_to_fold(module: ModuleOp) -> None:
    seen = set()
    for cn in cns(module):
        source = cn.operands[0]
        assert not isinstance(source.owner, ConstantOp), "a CN of a constant is left"
        inner = source.owner
        if isinstance(inner, ChannelNormOp):
            assert inner.attr("direction") == cn.attr("direction"), "an inverse pair is left"
        key = (source, cn.attr("direction"))
        assert key not in seen, "two CNs of one value and direction are left"
        seen.add(key)


def same_results(module: ModuleOp, transform) -> ModuleOp:
    inputs = random_inputs(module, seed=3)
    before = run_reference(module, inputs)
    transform(module)
    for b, a in zip(before, run_reference(module, inputs), strict=True):
        np.testing.assert_array_equal(a, b)
    return module


# --------------------------------------------------------------------------------------
# the rewrites
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", ["5", "1x4x4x5"])
def test_constant_read_only_through_a_cn_is_stored_in_its_layout(shape: str) -> None:
    t = f"tensor<{shape}xf32>"
    module = parse(f"""
    func.func @main(%x: {T4}) -> {T4} {{
      %c = tx8be.Constant {{value = dense<1.5> : {t}}} : () -> {t}
      %n = tx8be.ChannelNorm %c {{direction = true}} : ({t}) -> {t}
      %a = tx8be.Add %x, %n : ({T4}, {t}) -> {T4}
      func.return %a : {T4}
    }}""")
    same_results(module, optimise)
    assert not cns(module)
    const = next(op for op in block_of(module).ops if isinstance(op, ConstantOp))
    assert str(const.dev_info.get("mem_layout")) == "Cx"
    assert read_layout_stats(module)["layout-align-opt"]["const_folded"] == 1


def test_shared_constant_gets_a_copy_in_the_cn_layout() -> None:
    module = parse(f"""
    func.func @main(%x: {T4}) -> ({T4}, {T4}) {{
      %c = tx8be.Constant {{value = dense<2.0> : {T4}}} : () -> {T4}
      %n = tx8be.ChannelNorm %c {{direction = true}} : ({T4}) -> {T4}
      %t = tx8be.Transpose %n {{perm = array<i64: 0, 1, 2, 3>}} : ({T4}) -> {T4}
      %a = tx8be.Add %x, %c : ({T4}, {T4}) -> {T4}
      func.return %t, %a : {T4}, {T4}
    }}""")
    same_results(module, optimise)
    consts = [op for op in block_of(module).ops if isinstance(op, ConstantOp)]
    assert len(consts) == 2 and not cns(module)
    assert [str(c.dev_info.get("mem_layout")) if c.dev_info else None for c in consts] == [
        None, "Cx"
    ]


def test_redundant_cns_merge_per_direction() -> None:
    module = parse(f"""
    func.func @main(%x: {T4}) -> ({T4}, {T4}, {T4}) {{
      %a = tx8be.ChannelNorm %x {{direction = true}} : ({T4}) -> {T4}
      %b = tx8be.ChannelNorm %x {{direction = true}} : ({T4}) -> {T4}
      %c = tx8be.ChannelNorm %x {{direction = false}} : ({T4}) -> {T4}
      func.return %a, %b, %c : {T4}, {T4}, {T4}
    }}""")
    stats = optimise(same_results(module, lambda m: None))
    assert stats["redundant_erased"] == 1 and stats["channel_norms"] == 2
    ret = block_of(module).last_op
    assert ret.operands[0] is ret.operands[1] and ret.operands[0] is not ret.operands[2]


def test_alternating_chain_cancels_completely() -> None:
    n = 200
    lines, prev = [], "%x"
    for i in range(n):
        lines.append(
            f"%c{i} = tx8be.ChannelNorm {prev} {{direction = {'true' if i % 2 == 0 else 'false'}}}"
            f" : ({T4}) -> {T4}"
        )
        prev = f"%c{i}"
    module = parse(
        f"func.func @main(%x: {T4}) -> {T4} {{\n" + "\n".join(lines)
        + f"\nfunc.return {prev} : {T4}\n}}"
    )
    same_results(module, optimise)
    assert read_layout_stats(module)["layout-align-opt"]["inverse_erased"] == n
    assert not cns(module)
    assert block_of(module).last_op.operands[0] is block_of(module).args[0]


def test_inverse_pair_keeps_an_inner_cn_with_other_readers() -> None:
    module = parse(f"""
    func.func @main(%x: {T4}) -> ({T4}, {T4}) {{
      %i = tx8be.ChannelNorm %x {{direction = true}} : ({T4}) -> {T4}
      %t = tx8be.Transpose %i {{perm = array<i64: 0, 1, 2, 3>}} : ({T4}) -> {T4}
      %o = tx8be.ChannelNorm %i {{direction = false}} : ({T4}) -> {T4}
      func.return %t, %o : {T4}, {T4}
    }}""")
    stats = optimise(same_results(module, lambda m: None))
    assert stats["inverse_erased"] == 1 and [c.attr("direction") for c in cns(module)] == [True]
    assert block_of(module).last_op.operands[1] is block_of(module).args[0]


# --------------------------------------------------------------------------------------
# after layout-align-to-npu
# --------------------------------------------------------------------------------------


def test_folds_the_constant_cns_align_to_npu_inserts() -> None:
    module = parse(f"""
    func.func @main(%x: {T4}) -> ({T4}, {T4}) {{
      %c = tx8be.Constant {{value = dense<2.0> : {T4}}} : () -> {T4}
      %t = tx8be.Transpose %c {{perm = array<i64: 0, 1, 2, 3>}} : ({T4}) -> {T4}
      %a = tx8be.Add %x, %c : ({T4}, {T4}) -> {T4}
      func.return %t, %a : {T4}, {T4}
    }}""")
    align(module)
    before = read_layout_stats(module)["layout-align-to-npu"]
    assert before["const_channel_norms"] == 1
    stats = optimise(module)
    assert stats["const_folded"] == 1
    assert stats["channel_norm_bytes"] == before["channel_norm_bytes"]
    assert_aligned(module)
    assert_nothing_left_to_fold(module)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("name", list(MODELS))
def test_examples_after_both_passes(name: str, strategy: str) -> None:
    module = example(name)
    same_results(module, lambda m: optimise(align(m, strategy)))
    assert_aligned(module)
    assert_nothing_left_to_fold(module)
    stats = read_layout_stats(module)
    count, runtime, _ = channel_norms(module)
    assert (stats["layout-align-opt"]["channel_norms"], stats["layout-align-opt"][
        "channel_norm_bytes"]) == (count, runtime)
    assert runtime == stats["layout-align-to-npu"]["channel_norm_bytes"]
    cmodel = pytest.importorskip("tx8c.sim.cmodel")
    inputs = random_inputs(module, seed=5)
    for g, e in zip(cmodel.run_cmodel(module, inputs), run_reference(module, inputs),
                    strict=True):
        np.testing.assert_array_equal(g, e)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n_args=st.integers(1, 2),
    steps=st.lists(
        st.tuples(st.sampled_from(DRAWN_KINDS), st.integers(0, 50), st.integers(0, 50)),
        min_size=1, max_size=14,
    ),
    extra=st.lists(st.booleans(), max_size=14),
    strategy=st.sampled_from(STRATEGIES),
)
def test_random_dags_after_both_passes(n_args, steps, extra, strategy) -> None:
    module = build_dag(n_args, steps, extra).module
    same_results(module, lambda m: optimise(align(m, strategy)))
    assert_aligned(module)
    assert_nothing_left_to_fold(module)
    stats = read_layout_stats(module)
    assert channel_norms(module)[1] == stats["layout-align-to-npu"]["channel_norm_bytes"]
    cmodel = pytest.importorskip("tx8c.sim.cmodel")
    inputs = random_inputs(module, seed=7)
    for g, e in zip(cmodel.run_cmodel(module, inputs), run_reference(module, inputs),
                    strict=True):
        np.testing.assert_array_equal(g, e)
