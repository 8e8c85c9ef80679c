"""regroup-by-cost through the whole compiler: `tx8c compare --regroup` on every bundled
example (every stage and both cmodels pass against onnxruntime), and random graphs
compiled with it run on cmodel v2 equal to the reference executor."""

from __future__ import annotations

import json
from pathlib import Path

import onnx
import pytest
from hypothesis import HealthCheck, given, settings

from examples.make_models import MODELS
from tests.e2e.test_cmodel_v2 import assert_matches, split_reduction
from tests.random_graphs import build_dag, dag_steps, random_inputs
from tests.unit.group.common import run
from tx8c.cli.main import main
from tx8c.codegen.lower import lower_module
from tx8c.const_container import module_container
from tx8c.pipeline import (
    CompileOptions,
    constants_spec,
    ddr_spec,
    grouping_spec,
    layout_spec,
    slicing_spec,
)
from tx8c.sim.cmodel_v2 import run_program
from tx8c.sim.reference import run_reference


@pytest.mark.parametrize("name", sorted(MODELS))
def test_compare_with_regroup(name: str, tmp_path: Path, capsys) -> None:
    path = tmp_path / f"{name}.onnx"
    onnx.save(MODELS[name](), path)
    assert main(["compare", str(path), "--regroup", "3", "--json", "--quiet"]) == 0
    rows = json.loads(capsys.readouterr().out)["stages"]
    stages = [r["stage"] for r in rows]
    assert "regroup-by-cost{window=3}" in stages
    assert stages[-2:] == ["cmodel", "cmodel v2"]
    assert all(r["verdict"] == "PASS" for r in rows)
    assert rows[-2]["equals_reference"]


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dag_steps(max_size=12))
def test_random_graphs_equal_the_reference(steps) -> None:
    options = CompileOptions(regroup=3)
    module = run(build_dag(steps, max_ops=16), layout_spec("optimal") + constants_spec()
                 + grouping_spec(options) + slicing_spec(options) + ddr_spec(options))
    inputs = random_inputs(module, seed=len(steps))
    container = module_container(module)
    program = lower_module(module, container)
    got, _ = run_program(program, module, inputs, container)
    assert_matches(run_reference(module, inputs), got, not split_reduction(program))
