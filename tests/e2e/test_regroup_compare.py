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
from tests.e2e.test_cmodel_v2 import assert_compiled_equals_reference
from tests.random_graphs import dag_steps
from tx8c.cli.main import main
from tx8c.pipeline import CompileOptions


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
    assert_compiled_equals_reference(steps, CompileOptions(regroup=3))


def test_compile_reports_the_regrouping(tmp_path: Path) -> None:
    path = tmp_path / "m.onnx"
    onnx.save(MODELS["mobilenet_block"](), path)
    out = tmp_path / "out"
    assert main(["compile", str(path), "-o", str(out), "--regroup", "3", "--quiet"]) == 0
    report = json.loads((out / "report.json").read_text())
    regroup = report["regroup"]
    assert report["options"]["regroup"] == 3
    assert regroup["groups_after"] < regroup["groups_before"]
    assert regroup["cycles_after"] < regroup["cycles_before"]
    assert report["slicing"]["cycles"] == regroup["cycles_after"]
