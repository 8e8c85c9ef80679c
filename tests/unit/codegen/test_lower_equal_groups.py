"""Equal groups (same key and plan) share what their lowering derives from windows alone
(`lower._Derived`: the frame schedule, each tile's steps, each kernel's windows and
lane): the Program must be the one each group's own lowering gives."""

from __future__ import annotations

from examples.make_models import MODELS
from tests.unit.group.common import run
from tx8c.codegen import lower
from tx8c.const_container import module_container
from tx8c.dialect.ops.backend import GroupOp
from tx8c.frontend.onnx.importer import import_onnx
from tx8c.ir_utils import group_ops
from tx8c.pipeline import (
    CompileOptions,
    constants_spec,
    ddr_spec,
    grouping_spec,
    layout_spec,
    midend_spec,
    slicing_spec,
)
from tx8c.slicing.group import group_spec


def test_equal_groups_lower_as_each_group_alone(monkeypatch):
    options = CompileOptions()
    module = import_onnx(MODELS["llama_decoder"]()).module
    run(module, midend_spec() + layout_spec("optimal") + constants_spec()
        + grouping_spec(options) + slicing_spec(options) + ddr_spec(options))
    sliced = [g for g in group_ops(lower.main_body(module))
              if g.attr("group_tag") != GroupOp.IN_DDR]
    keys = {(group_spec(g).key, lower.group_plan(g).candidate) for g in sliced}
    assert len(keys) < len(sliced)  # the model has equal groups: they share
    container = module_container(module)
    shared = lower.lower_module(module, container)

    alone = lower.lower_group
    monkeypatch.setattr(lower, "lower_group", lambda group, inputs, outputs, ops, config,
                        walks, *placing, **how: alone(group, inputs, outputs, ops, config,
                                                      None, *placing, **how))
    assert lower.lower_module(module, container) == shared
