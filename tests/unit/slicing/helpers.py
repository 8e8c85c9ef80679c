"""Groups for the slicing tests, made the way group-ldst makes them: a tx8be.Group whose
body loads every input (LoadVar), runs the ops and stores every output (StoreVar)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Region

from tx8c.dialect.ops.backend import GroupOp, LoadVarOp, StoreVarOp, YieldOp
from tx8c.dialect.types import tensor_of


def grouped(build: Callable[[list], list], inputs: Sequence[np.ndarray]) -> ModuleOp:
    """A module whose main function runs one group: `build(loaded values)` adds the ops
    (to the group body, through the returned list of ops' last results) and returns the
    values to store."""
    outer = Block(arg_types=[tensor_of(np.asarray(a)) for a in inputs])
    body = Block(arg_types=[a.type for a in outer.args])
    loads = [LoadVarOp.make([arg]) for arg in body.args]
    body.add_ops(loads)
    ops, outputs = build([ld.results[0] for ld in loads])
    body.add_ops(ops)
    stores = [StoreVarOp.make([v]) for v in outputs]
    body.add_ops(stores)
    body.add_op(YieldOp(*[s.results[0] for s in stores]))
    group = GroupOp.make(list(outer.args), body=body, group_id=0, group_tag=0)
    outer.add_op(group)
    outer.add_op(func.ReturnOp(*group.results))
    fn = func.FuncOp("main", ([a.type for a in outer.args], [r.type for r in group.results]),
                     Region(outer))
    module = ModuleOp([fn])
    module.verify()
    return module


def single(op_cls, inputs: Sequence[np.ndarray], **attrs) -> ModuleOp:
    """One op in a group."""
    def build(values):
        op = op_cls.make(values, **attrs)
        return [op], list(op.results)

    return grouped(build, inputs)


def the_group(module: ModuleOp) -> GroupOp:
    return next(op for op in module.walk() if isinstance(op, GroupOp))


def compiled_with(monkeypatch, module: ModuleOp, cand):
    """`module` (one group) compiled through the DDR stage with `cand` as its group's
    plan, and lowered: (module, program, container)."""
    from tests.unit.group.common import run
    from tx8c.codegen.lower import lower_module
    from tx8c.const_container import module_container
    from tx8c.pipeline import CompileOptions, ddr_spec, slicing_spec
    from tx8c.slicing.evaluate import evaluate
    from tx8c.transforms.slice import group_cost

    monkeypatch.setattr(group_cost, "search",
                        lambda spec, config, options, name="": evaluate(spec, cand, config))
    run(module, slicing_spec(CompileOptions()) + ddr_spec(CompileOptions()))
    container = module_container(module)
    return module, lower_module(module, container), container


def grouped_graph(graph) -> ModuleOp:
    """An ONNX graph (opset 17) imported and run through the mid-end, layout, constants
    and grouping stages: its groups as group-cost finds them."""
    from onnx import helper

    from tests.unit.group.common import run
    from tx8c.frontend.onnx.importer import import_onnx
    from tx8c.pipeline import (
        CompileOptions,
        constants_spec,
        grouping_spec,
        layout_spec,
        midend_spec,
    )

    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    module = import_onnx(model).module
    run(module, midend_spec() + layout_spec("optimal") + constants_spec()
        + grouping_spec(CompileOptions()))
    return module
