"""move-constant and const-norm (seed 003): meaning kept (reference executor bit for bit),
the cmodel (which reads the constants' stored bytes) equal to the reference, a constant
stored aligned but read compact caught, LoadConsts and the container agreeing on one
layout per id; on the bundled examples, on the BERT-like example after the whole
pipeline, and on random DAGs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import example as hypothesis_example
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp

from examples.make_models import MODELS
from tests.helpers import assert_same_values, main_block
from tests.unit.layout.test_layout_align_to_npu import (
    DRAWN_KINDS,
    align,
    build_dag,
    example,
    random_inputs,
)
from tx8c.const_container import CONST_STATS_ATTR, ConstContainer, ConstDataError
from tx8c.dialect import make_context
from tx8c.dialect.attrs import DevAttr, LayoutMode
from tx8c.dialect.base import Tx8beOp
from tx8c.dialect.layout import is_aligned
from tx8c.dialect.ops.backend import ChannelNormOp, ConstantOp, LoadConstOp
from tx8c.ir import parse_module
from tx8c.ir_utils import read_pass_stats
from tx8c.sim.cmodel import run_cmodel
from tx8c.sim.reference import run_reference
from tx8c.transforms.const.const_norm import ConstNormPass, load_layout
from tx8c.transforms.const.move_constant import MoveConstantPass, needs_load
from tx8c.transforms.layout.layout_align_opt import LayoutAlignOptPass


def move(module: ModuleOp) -> ModuleOp:
    MoveConstantPass().apply(make_context(), module)
    module.verify()
    return module


def norm(module: ModuleOp) -> ModuleOp:
    ConstNormPass().apply(make_context(), module)
    module.verify()
    return module


def loads(module: ModuleOp) -> list[LoadConstOp]:
    return [op for op in module.walk() if isinstance(op, LoadConstOp)]


def assert_constants_stage_invariants(module: ModuleOp) -> None:
    """No Constant left; one use per LoadConst; bypass_codegen exactly when its user does
    not need the load; the container's layout of each id is that of its LoadConsts."""
    container = ConstContainer.from_module(module)
    assert not any(isinstance(op, ConstantOp) for op in module.walk())
    for load in loads(module):
        use = load.results[0].get_unique_use()
        assert use is not None, "a LoadConst per use"
        assert load.emits_code() == needs_load(use.operation, use.index)
        assert container.layout(load.attr("const_id")) == load_layout(load)
        assert container.entry(load.attr("const_id")).type == load.results[0].type


def assert_cmodel_is_reference(module: ModuleOp, seed: int = 5) -> None:
    inputs = random_inputs(module, seed=seed)
    assert_same_values(run_reference(module, inputs), run_cmodel(module, inputs))


# --------------------------------------------------------------------------------------
# bundled examples
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(MODELS))
def test_examples_after_layout_keep_meaning(name: str) -> None:
    module = align(example(name))
    LayoutAlignOptPass().apply(make_context(), module)
    inputs = random_inputs(module, seed=1)
    before = run_reference(module, inputs)
    norm(move(module))
    assert_same_values(before, run_reference(module, inputs))
    assert_constants_stage_invariants(module)
    assert_cmodel_is_reference(module)


@pytest.mark.parametrize("name", list(MODELS))
def test_const_norm_folds_what_layout_align_to_npu_put_on_constants(name: str) -> None:
    """Without layout-align-opt, the ChannelNorms of constants reach the constants stage:
    const-norm folds every one whose LoadConst has no other reader, into stored bytes."""
    module = align(example(name))
    on_constants = cns_of_constants(module)
    inputs = random_inputs(module, seed=2)
    before = run_reference(module, inputs)
    norm(move(module))
    assert_same_values(before, run_reference(module, inputs))
    stats = read_pass_stats(module, CONST_STATS_ATTR)["const-norm"]
    assert stats["channel_norms_folded"] == on_constants
    assert cns_of_constants(module) == 0
    assert_constants_stage_invariants(module)
    assert_cmodel_is_reference(module)


# --------------------------------------------------------------------------------------
# const-norm: byte-level numerics
# --------------------------------------------------------------------------------------

T = "tensor<1x4x4x70xf32>"  # Cx: 64 channels in a block + 6 padded to 8, unlike compact


def cns_of_constants(module: ModuleOp) -> int:
    return sum(isinstance(op, ChannelNormOp) and isinstance(op.operands[0].owner,
               ConstantOp | LoadConstOp) for op in module.walk())


def _fold_module() -> ModuleOp:
    """A constant read by an aligned-only op (Transpose) and by a compact reader (Add),
    after layout-align-to-npu: stored Cx, read by the Add through a ChannelNorm(false)."""
    module = parse_module(f"""
    func.func @main(%x: {T}) -> ({T}, {T}) {{
      %c = tx8be.Constant {{value = dense<0.0> : {T}}} : () -> {T}
      %t = tx8be.Transpose %c {{perm = array<i64: 0, 1, 2, 3>}} : ({T}) -> {T}
      %a = tx8be.Add %x, %c : ({T}, {T}) -> {T}
      func.return %t, %a : {T}, {T}
    }}""")
    const = next(op for op in module.walk() if isinstance(op, ConstantOp))
    value = np.random.default_rng(0).standard_normal((1, 4, 4, 70)).astype(np.float32)
    new = ConstantOp.from_array(value)
    main_block(module).insert_op_before(new, const)
    const.results[0].replace_all_uses_with(new.results[0])
    main_block(module).erase_op(const)
    return align(module)  # a ChannelNorm(true) on the constant feeds the Transpose


def test_cmodel_after_const_norm_equals_the_reference() -> None:
    module = _fold_module()
    assert cns_of_constants(module) == 1
    inputs = random_inputs(module, seed=3)
    before = run_reference(module, inputs)
    norm(move(module))
    assert cns_of_constants(module) == 0
    assert_same_values(before, run_reference(module, inputs))
    container = ConstContainer.from_module(module)
    assert sorted(container.layout(i).value for i in container.ids()) == ["Cx", "Tensor"]
    stats = read_pass_stats(module, CONST_STATS_ATTR)["const-norm"]
    assert stats["copies"] == 1 and stats["multi_layout_ids"] == 1
    assert_constants_stage_invariants(module)
    assert_same_values(before, run_cmodel(module, inputs))


def test_a_constant_stored_aligned_but_read_compact_is_wrong() -> None:
    """The negative test: the cmodel really reads the stored bytes. After the fold the
    constant is stored Cx; a reader that takes it as compact gets other numbers."""
    module = norm(move(_fold_module()))
    inputs = random_inputs(module, seed=3)
    expected = run_reference(module, inputs)
    transpose = next(op for op in module.walk() if op.name == "tx8be.Transpose")
    aligned_load = transpose.operands[0].owner
    assert ConstContainer.from_module(module).layout(aligned_load.attr("const_id")) == \
        LayoutMode.Cx
    transpose.attributes["dev_info"] = DevAttr.make(mem_layout=LayoutMode.Tensor)
    got = run_cmodel(module, inputs)
    assert not np.array_equal(got[0], expected[0])
    np.testing.assert_array_equal(got[1], expected[1])  # the compact copy is still right


def test_a_container_that_lost_the_fold_is_wrong_too() -> None:
    """The other direction: the reader reads aligned, the container stores compact."""
    module = norm(move(_fold_module()))
    inputs = random_inputs(module, seed=3)
    expected = run_reference(module, inputs)
    container = ConstContainer.from_module(module)
    for i in container.ids():
        container.set_layout(i, LayoutMode.Tensor)
    got = run_cmodel(module, inputs, container)
    assert not np.array_equal(got[0], expected[0])


def test_image_bytes_give_the_same_cmodel_results() -> None:
    module = norm(move(_fold_module()))
    inputs = random_inputs(module, seed=4)
    image = ConstContainer.from_module(module).image()
    from_bytes = ConstContainer.from_image(image.index, image.data)
    assert_same_values(run_cmodel(module, inputs), run_cmodel(module, inputs, from_bytes))


# --------------------------------------------------------------------------------------
# move-constant details
# --------------------------------------------------------------------------------------


def test_move_constant_twice_changes_nothing() -> None:
    module = norm(move(align(example("transformer_encoder"))))
    text_ids = [op.attr("const_id") for op in loads(module)]
    move(module)
    assert [op.attr("const_id") for op in loads(module)] == text_ids
    assert read_pass_stats(module, CONST_STATS_ATTR)["move-constant"]["constants"] == 0


def test_large_constants_get_the_first_ids() -> None:
    module = move(align(example("transformer_encoder")))
    c = ConstContainer.from_module(module)
    large = [c.is_large(i) for i in c.ids()]
    assert large == sorted(large, reverse=True)


def test_a_loadconst_of_an_unknown_id_is_a_clear_error() -> None:
    module = parse_module("""
    func.func @main() -> tensor<2xf32> {
      %c = tx8be.LoadConst {const_id = 3 : i64} : () -> tensor<2xf32>
      func.return %c : tensor<2xf32>
    }""")
    with pytest.raises(ConstDataError, match="constant 3 is not in the constant container"):
        move(module)
    with pytest.raises(ConstDataError, match="constant 3"):
        run_cmodel(module, [], ConstContainer())


def test_every_loadconst_of_the_bert_example_agrees_with_its_user() -> None:
    module = norm(move(align(example("transformer_encoder"))))
    users = {load.results[0].get_unique_use().operation.name for load in loads(module)
             if not load.emits_code()}
    assert users == {"tx8be.Gather"}  # the embedding table is read by the gather itself


# --------------------------------------------------------------------------------------
# random DAGs
# --------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n_args=st.integers(1, 2),
    steps=st.lists(
        st.tuples(st.sampled_from(DRAWN_KINDS), st.integers(0, 50), st.integers(0, 50)),
        min_size=1, max_size=12,
    ),
    extra=st.lists(st.booleans(), max_size=12),
    align_opt=st.booleans(),
)
# a ChannelNorm of a constant read by two ops: const-norm gives each reader its LoadConst
@hypothesis_example(n_args=2, steps=[("const_S", 0, 0), ("transpose", 50, 0), ("unary_S", 2, 0),
                                     ("unary_S", 2, 0)], extra=[], align_opt=False)
def test_random_dags(n_args, steps, extra, align_opt) -> None:
    module = align(build_dag(n_args, steps, extra).module)
    if align_opt:
        LayoutAlignOptPass().apply(make_context(), module)
    inputs = random_inputs(module, seed=7)
    before = run_reference(module, inputs)
    norm(move(module))
    assert_same_values(before, run_reference(module, inputs))
    assert_constants_stage_invariants(module)
    assert_same_values(before, run_cmodel(module, inputs))
    for op in module.walk():  # every reader sees its constants in its own family
        if isinstance(op, Tx8beOp) and not isinstance(op, ChannelNormOp) and op.dev_info:
            for operand in op.operands:
                if isinstance(operand.owner, LoadConstOp):
                    assert is_aligned(load_layout(operand.owner)) == is_aligned(
                        op.dev_info.get("mem_layout"))
