"""Equal groups (same key and plan) share what their lowering derives from windows alone
(`lower._Derived`: the frame schedule, each tile's steps, each kernel's windows and
lane): the Program must be the one each group's own lowering gives. The groups can be
lowered in parts, in forked processes (`ModuleLowering`, `tx8c compile`'s `_lower`):
the Program is the same, and equal groups share a part."""

from __future__ import annotations

import tx8c.cli.main as cli
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


def _compiled(name: str):
    options = CompileOptions()
    module = import_onnx(MODELS[name]()).module
    run(module, midend_spec() + layout_spec("optimal") + constants_spec()
        + grouping_spec(options) + slicing_spec(options) + ddr_spec(options))
    return module


def test_equal_groups_lower_as_each_group_alone(monkeypatch):
    module = _compiled("llama_decoder")
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


def test_groups_lowered_in_parts_and_processes_give_the_same_program():
    module = _compiled("llama_decoder")
    container = module_container(module)
    whole = lower.lower_module(module, container)
    lowering = lower.ModuleLowering(module, container)
    keys = [(group_spec(g).key, lower.group_plan(g).candidate)
            if g.attr("group_tag") != GroupOp.IN_DDR else i
            for i, g in enumerate(lowering.groups)]
    for count in (2, 3):
        parts = lowering.parts(count)
        assert sorted(i for part in parts for i in part) == list(range(len(keys)))
        assert all(part for part in parts)  # the model has enough kinds of group
        part_of = {i: p for p, part in enumerate(parts) for i in part}
        assert all(part_of[i] == part_of[j] for i in part_of for j in part_of
                   if keys[i] == keys[j])
        lowered = {}
        for part in reversed(parts):  # any order, each part from a fresh lowering
            lowered.update(lower.ModuleLowering(module, container).lower(part))
        assert lowering.program(lowered) == whole
    assert cli._lower(module, container, lambda *_: None, jobs=2) == whole
