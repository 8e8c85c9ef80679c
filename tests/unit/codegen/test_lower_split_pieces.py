"""A Split that drives its group's slicing, cut over the tiles so that the steps the
search samples for buffer sizes (tile 0's, and a middle and the last place of the
anchor space) miss one of its pieces: that piece still gets a slice shape and an SPM
buffer, the lowering stores it, and cmodel v2 runs the group to the reference's
values (llama's q/k/v Split failed to lower: "StoreVar reads ValueRef(node=.., index=1),
which no earlier instruction of its tile put in SPM")."""

from __future__ import annotations

import numpy as np

from tests.unit.group.common import run
from tests.unit.slicing.helpers import single, the_group
from tx8c.codegen.lower import lower_module
from tx8c.const_container import module_container
from tx8c.dialect.ops.movement import SplitOp
from tx8c.pipeline import CompileOptions, ddr_spec, slicing_spec
from tx8c.sim.cmodel_v2 import run_program
from tx8c.sim.reference import run_reference
from tx8c.slicing.evaluate import evaluate
from tx8c.slicing.group import ValueRef, group_spec
from tx8c.slicing.plan import Candidate
from tx8c.target.config import DEFAULT_CONFIG

CUT_BY_SIX = Candidate((1, 6), (1, 1))
"""Six tiles of 4 columns: tiles 0-3 take piece 0, tile 4 piece 1 (unsampled), tile 5
piece 2."""


def split_module(x: np.ndarray):
    return single(SplitOp, [x], axis=1, split=(16, 4, 4))


def test_every_piece_of_the_anchor_split_gets_a_buffer():
    x = np.zeros((8, 24), np.float32)
    spec = group_spec(the_group(split_module(x)))
    split = next(n.index for n in spec.nodes if n.label.startswith("Split"))
    assert spec.anchor == split
    plan = evaluate(spec, CUT_BY_SIX, DEFAULT_CONFIG)
    buffered = {(b.node, b.result) for b in plan.buffers if b.kind == "value"}
    assert {(split, 0), (split, 1), (split, 2)} <= buffered
    assert all(shape is not None for shape in plan.slice_shapes)
    assert ValueRef(split, 1) in {n.inputs[0] for n in spec.nodes if n.kind == "store"}


def test_a_piece_only_one_tile_computes_is_stored(monkeypatch):
    x = np.random.default_rng(0).standard_normal((8, 24)).astype(np.float32)
    module = split_module(x)
    import tx8c.transforms.slice.group_cost as group_cost

    monkeypatch.setattr(group_cost, "search", lambda spec, config, options, name="":
                        evaluate(spec, CUT_BY_SIX, config))
    run(module, slicing_spec(CompileOptions()) + ddr_spec(CompileOptions()))
    container = module_container(module)
    program = lower_module(module, container)
    got, _ = run_program(program, module, [x], container)
    for want, value in zip(run_reference(module, [x]), got, strict=True):
        assert value.tobytes() == want.tobytes()
