"""fuse-channel-norm-dma end to end (issue 15, GPT-2's logits): a ChannelNorm group
folded into its producer's store or its readers' loads gives bit for bit the same
outputs on the reference, the cmodel v1 and the cmodel v2 as without the fusion, moves
fewer DDR bytes, and a store left in the wrong layout gives a wrong answer."""

from __future__ import annotations

from functools import cache

import numpy as np
import onnx
import pytest
from hypothesis import HealthCheck, given, settings
from onnx import TensorProto, helper, numpy_helper

from tests.random_graphs import build_dag, dag_steps
from tests.random_graphs import random_inputs as dag_inputs
from tests.unit.group.common import grouping, run
from tx8c.analysis.layout_problem import layout_traffic, read_layout_stats
from tx8c.codegen.lower import lower_module
from tx8c.const_container import module_container
from tx8c.dialect.attrs import DevAttr, LayoutMode
from tx8c.dialect.ops.backend import StoreVarOp
from tx8c.errors import Tx8ComputeError
from tx8c.frontend.onnx.importer import import_onnx
from tx8c.frontend.onnx.loader import prepare
from tx8c.frontend.onnx.runtime import random_inputs, run_onnxruntime
from tx8c.ir import parse_module, print_module
from tx8c.ir_utils import stored_layout
from tx8c.pipeline import CompileOptions, layout_spec, run_pipeline
from tx8c.sim.cmodel import run_cmodel
from tx8c.sim.cmodel_v2 import run_program
from tx8c.sim.reference import input_names, main_function, run_reference


def _model(nodes, inputs, output, weights) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes, "m", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, output)],
        [numpy_helper.from_array(w, n) for n, w in weights.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def logits_head() -> onnx.ModelProto:
    """LayerNorm -> MatMul + bias into a compact output of 50 channels (padded to 64 in
    Cx): the LM head's shape in small. The ChannelNorm becomes the Gemm's store."""
    rng = np.random.default_rng(0)
    weights = {"W": (rng.standard_normal((64, 50)) * 0.1).astype(np.float32),
               "b": (rng.standard_normal(50) * 0.1).astype(np.float32),
               "g": np.ones(64, np.float32), "z": np.zeros(64, np.float32)}
    nodes = [helper.make_node("LayerNormalization", ["x", "g", "z"], ["n"], axis=-1),
             helper.make_node("MatMul", ["n", "W"], ["m"]),
             helper.make_node("Add", ["m", "b"], ["y"])]
    return _model(nodes, [("x", [1, 16, 64])], [1, 16, 50], weights)


def input_to_gemm() -> onnx.ModelProto:
    """A compact graph input of 50 channels read by a Gemm (ALIGN-only): the conversion
    becomes the Gemm group's load; its 40-channel result's becomes its store."""
    rng = np.random.default_rng(1)
    weights = {"W": (rng.standard_normal((50, 40)) * 0.1).astype(np.float32)}
    nodes = [helper.make_node("MatMul", ["x", "W"], ["m"]),
             helper.make_node("Relu", ["m"], ["y"])]
    return _model(nodes, [("x", [1, 16, 50])], [1, 16, 40], weights)


MODELS = {"logits_head": logits_head, "input_to_gemm": input_to_gemm}
FUSED = {"logits_head": (1, 0), "input_to_gemm": (1, 1)}
"""(converting stores, converting loads) each model gets."""


@cache
def compiled(name: str, fuse: bool):
    model, _ = prepare(MODELS[name](), None)
    inputs = random_inputs(model, seed=0)
    module = import_onnx(model).module
    # spm_resident=0: the conversions fused into DMAs between DDR and SPM are what is
    # measured; values kept in SPM (on by default) would not move through DDR at all.
    run_pipeline(module, CompileOptions(dma_conversions=fuse, spm_resident=0))
    ordered = [inputs[n] for n in input_names(main_function(module))]
    return model, module, inputs, ordered


def _program(module):
    container = module_container(module)
    return lower_module(module, container), container


@pytest.mark.parametrize("name", sorted(MODELS))
def test_fused_equals_unfused_bit_for_bit(name: str) -> None:
    model, module, named, inputs = compiled(name, True)
    _, plain, _, _ = compiled(name, False)
    stats = read_layout_stats(module)["fuse-channel-norm-dma"]
    assert (stats["fused_stores"], stats["fused_loads"]) == FUSED[name]
    assert not any(op.name == "tx8be.ChannelNorm" for op in module.walk())
    assert any(op.name == "tx8be.ChannelNorm" for op in plain.walk())
    traffic = layout_traffic(read_layout_stats(module))
    assert traffic["channel_norms"] == 0 and traffic["channel_norm_bytes"] == 0
    assert traffic["channel_norm_bytes_fused"] == stats["fused_bytes"] > 0
    expected = run_reference(plain, inputs)
    program, container = _program(module)
    got_v2, _ = run_program(program, module, inputs, container)
    for e, ref, v1, v2 in zip(expected, run_reference(module, inputs),
                              run_cmodel(module, inputs), got_v2, strict=True):
        assert e.tobytes() == ref.tobytes() == v1.tobytes() == v2.tobytes()
    for e, o in zip(expected, run_onnxruntime(model, named), strict=True):
        np.testing.assert_allclose(e, o, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_fusion_moves_fewer_bytes_and_cycles(name: str) -> None:
    """One group fewer per fused conversion; the DMAs move fewer DDR bytes (each byte
    once instead of a store, a load and a store) and the model takes fewer cycles, in
    the estimate and in the cmodel v2."""
    _, module, _, inputs = compiled(name, True)
    _, plain, _, plain_inputs = compiled(name, False)
    fused_program, c1 = _program(module)
    plain_program, c2 = _program(plain)
    assert len(plain_program.groups) - len(fused_program.groups) == sum(FUSED[name])
    _, fused_t = run_program(fused_program, module, inputs, c1)
    _, plain_t = run_program(plain_program, plain, plain_inputs, c2)
    assert fused_t.ddr_bytes < plain_t.ddr_bytes
    assert fused_t.cycles < plain_t.cycles
    assert sum(fused_t.group_estimates.values()) < sum(plain_t.group_estimates.values())


def _converting_store(module) -> StoreVarOp:
    return next(op for op in module.walk() if isinstance(op, StoreVarOp)
                and stored_layout(op.results[0]) != stored_layout(op.operands[0]))


def test_a_store_left_aligned_gives_a_wrong_answer() -> None:
    """Negative: the ChannelNorm group erased but the store not converting (its layout
    put back to its operand's, Cx) returns aligned bytes where the output is compact:
    the cmodel v1 reads a wrong answer."""
    _, module, _, inputs = compiled("logits_head", True)
    module = module.clone()
    store = _converting_store(module)
    store.attributes["dev_info"] = DevAttr.make(mem_layout=LayoutMode.Cx)
    (expected,) = run_reference(module, inputs)
    (got,) = run_cmodel(module, inputs)
    assert not np.allclose(got, expected, atol=1e-3)


def test_cmodel_v2_reads_the_spm_side_in_the_producers_layout() -> None:
    """Negative: the converting store's DMA claiming its SPM buffer compact (as if the
    producer had written compact) reads bytes written as Cx: the cmodel v2 refuses."""
    from dataclasses import replace

    from tx8c.codegen.program import Dma

    _, module, _, inputs = compiled("logits_head", True)
    program, container = _program(module)
    groups = []
    for g in program.groups:
        tiles = tuple(replace(t, instructions=tuple(
            replace(i, spm=replace(i.spm, layout="Tensor"))
            if isinstance(i, Dma) and i.lane == "st" and i.spm.layout == "Cx" else i
            for i in t.instructions)) for t in g.tiles)
        groups.append(replace(g, tiles=tiles))
    with pytest.raises(Tx8ComputeError, match="written as"):
        run_program(replace(program, groups=tuple(groups)), module, inputs, container)


def test_pipeline_position() -> None:
    """After group-ldst (it needs the loads and stores) and regroup-by-cost, before
    group-mapping and group-dag (the barriers are laid between the groups that remain);
    off with dma_conversions=False."""
    from tx8c.pipeline import grouping_spec

    spec = grouping_spec(CompileOptions(regroup=2))
    assert spec.index("group-ldst") < spec.index("regroup-by-cost{window=2}") < spec.index(
        "fuse-channel-norm-dma") < spec.index("group-mapping") < spec.index("group-dag")
    assert "fuse-channel-norm-dma" not in grouping_spec(CompileOptions(dma_conversions=False))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dag_steps(max_size=24))
def test_random_dags_keep_their_values(steps) -> None:
    """Random graphs (ChannelNorms among their ops, aligned and compact producers):
    grouped with the fusion they give, on the reference and the cmodel v1, bit for bit
    what they gave before grouping; every fused conversion is a load or store whose
    layout differs from its operand's, and the printed IR reads back the same."""
    module = run(build_dag(steps, max_ops=30), layout_spec("optimal"))
    inputs = dag_inputs(module, seed=len(steps))
    before = module.clone()
    norms = sum(op.name == "tx8be.ChannelNorm" for op in module.walk())
    grouping(module, "none", dma_conversions=True)
    stats = read_layout_stats(module)["fuse-channel-norm-dma"]
    fused = stats["fused_stores"] + stats["fused_loads"]
    assert sum(op.name == "tx8be.ChannelNorm" for op in module.walk()) == norms - fused
    converting = [op for op in module.walk() if op.name in ("tx8be.LoadVar", "tx8be.StoreVar")
                  and stored_layout(op.results[0]) != stored_layout(op.operands[0])]
    assert len(converting) >= fused
    expected = run_reference(before, inputs)
    for again in (module, parse_module(print_module(module))):
        for executor in (run_reference, run_cmodel):
            for want, got in zip(expected, executor(again, inputs), strict=True):
                assert want.tobytes() == got.tobytes()
