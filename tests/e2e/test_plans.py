"""The slicing stage on every bundled example (issue 11): each group run slice by slice
from its plan - tile by tile, step by step, with the windows the plan gives - computes
what the unsliced reference computes, every plan's estimate is at least its bound, and its
DDR channel is busy no longer than the estimate."""

from __future__ import annotations

import json

import numpy as np
import pytest

from examples.make_models import MODELS
from tx8c.frontend.onnx.importer import import_onnx
from tx8c.frontend.onnx.loader import prepare
from tx8c.frontend.onnx.runtime import random_inputs
from tx8c.pipeline import CompileOptions, run_pipeline
from tx8c.sim.plan_run import run_by_plans
from tx8c.sim.reference import run_reference


@pytest.mark.parametrize("name", sorted(MODELS))
def test_examples_run_slice_by_slice(name: str) -> None:
    model, _ = prepare(MODELS[name](), None)
    inputs = random_inputs(model, seed=0)
    module = import_onnx(model).module
    run_pipeline(module, CompileOptions(verify_each_pass=True))
    stats = json.loads(module.attributes["tx8c.slicing"].data)
    assert stats["groups"] and all(g["cycles"] >= g["bound_cycles"] for g in stats["groups"])
    # the DDR channel moves at most its bandwidth: busy no longer than the group runs
    assert all(g["engines"].get("ddr", 0) <= g["cycles"] for g in stats["groups"])
    expected = run_reference(module, inputs)
    got = run_by_plans(module, inputs)
    for e, g in zip(expected, got, strict=True):
        assert e.shape == g.shape and e.dtype == g.dtype
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)
