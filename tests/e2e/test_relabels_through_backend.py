"""Relabels (issue 15) through the whole pipeline: grouping, slicing, the cmodel.

A `tx8be.Relabel` moves no bytes (`moves_no_bytes()`): group-ldst loads nothing for it, a
group of relabels alone runs in DDR (group_tag 2, no plan), a relabel inside a sliced
group is sliced by its `RelabelSlicer`; the cmodel passes its operand's bytes through.
Checked on the bundled transformer examples with the built-in patterns (relabels in
groups of their own) and with a pattern file that puts them inside sliced groups."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from examples.make_models import MODELS
from tx8c.analysis.layout_problem import layout_traffic, read_layout_stats
from tx8c.dialect.ops.backend import GroupOp
from tx8c.dialect.ops.movement import RelabelOp
from tx8c.frontend.onnx.importer import import_onnx
from tx8c.frontend.onnx.loader import prepare
from tx8c.frontend.onnx.runtime import random_inputs
from tx8c.pipeline import CompileOptions, run_pipeline
from tx8c.sim.cmodel import run_cmodel
from tx8c.sim.plan_run import run_by_plans
from tx8c.sim.reference import run_reference
from tx8c.transforms.slice.group_cost import PLAN_ATTR

RELABELS_INSIDE = {"patterns": [
    {"pattern": "Transpose Relabel Gemm", "priority": 3},
    {"pattern": "LayerNorm Relabel OR Relabel Gemm OR Gemm Relabel", "priority": 2},
]}


def _compiled(name: str, patterns: Path | None):
    model, _ = prepare(MODELS[name](), None)
    module = import_onnx(model).module
    run_pipeline(module, CompileOptions(group_patterns=str(patterns) if patterns else None,
                                        verify_each_pass=True))
    return module, random_inputs(model, seed=0)


def _groups_with_relabels(module) -> list[GroupOp]:
    return [g for g in module.walk() if isinstance(g, GroupOp)
            and any(isinstance(op, RelabelOp) for op in g.block.ops)]


@pytest.mark.parametrize("inside", [False, True], ids=["own-groups", "inside-groups"])
@pytest.mark.parametrize("name", ["transformer_encoder", "llama_decoder"])
def test_relabels_through_grouping_slicing_and_cmodel(name, inside, tmp_path) -> None:
    patterns = None
    if inside:
        patterns = tmp_path / "patterns.json"
        patterns.write_text(json.dumps(RELABELS_INSIDE))
    module, inputs = _compiled(name, patterns)
    groups = _groups_with_relabels(module)
    assert groups
    sliced_with_relabel = 0
    for g in groups:
        body = [op.name for op in g.block.ops if op is not g.yield_op]
        if set(body) == {"tx8be.Relabel"}:  # nothing to load or store: runs in DDR
            assert g.attr("group_tag") == 2 and PLAN_ATTR not in g.attributes
        else:
            assert g.attr("group_tag") == 0 and PLAN_ATTR in g.attributes
            sliced_with_relabel += 1
    assert (sliced_with_relabel > 0) == inside
    expected = run_reference(module, inputs)
    for e, got in zip(expected, run_by_plans(module, inputs), strict=True):
        np.testing.assert_allclose(got, e, rtol=1e-5, atol=1e-5)
    for e, got in zip(expected, run_cmodel(module, inputs), strict=True):
        np.testing.assert_array_equal(got, e)  # a relabel is the same bytes: bit-exact


def test_report_counts_what_the_layout_stage_left() -> None:
    """report.json's layout_traffic (from the passes' statistics) agrees with the IR."""
    module, _ = _compiled("transformer_encoder", None)
    traffic = layout_traffic(read_layout_stats(module))
    ops = [op.name for op in module.walk()]
    assert traffic["relabels"] == ops.count("tx8be.Relabel") > 0
    assert traffic["transposes"] == ops.count("tx8be.Transpose")
    assert traffic["channel_norms"] == ops.count("tx8be.ChannelNorm")
    assert traffic["transpose_bytes"] > 0 and traffic["channel_norm_bytes"] >= 0
