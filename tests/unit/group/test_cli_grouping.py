"""The grouping options of `tx8c compile` / `compare` and the group statistics in
report.json."""

from __future__ import annotations

import json
from pathlib import Path

import onnx
import pytest

from examples.make_models import MODELS
from tx8c.cli.main import main


@pytest.fixture(scope="module")
def cnn(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("models") / "cnn.onnx"
    onnx.save(MODELS["residual_cnn"](), path)
    return path


def compile_report(model: Path, out: Path, *options: str) -> dict:
    assert main(["compile", str(model), "-o", str(out), "--quiet", *options]) == 0
    return json.loads((out / "report.json").read_text())


def test_report_lists_the_groups(cnn: Path, tmp_path: Path) -> None:
    report = compile_report(cnn, tmp_path / "default")
    groups = report["groups"]
    assert report["options"]["opt_group"] == "default" and report["options"]["opt_barrier"]
    pipeline = report["pipeline"]
    assert "group-pattern" in pipeline and "group-dag" in pipeline
    assert pipeline.endswith("group-cost,ddr-alloc,ddr-reorder")
    assert groups["count"] == len(groups["groups"]) > 0
    assert groups["boundary_bytes"] < groups["singles_boundary_bytes"]
    assert groups["barriers"] < groups["count"]
    first = groups["groups"][0]
    assert set(first) == {"id", "ops", "tag", "barrier", "loads", "stores", "inputs",
                          "outputs", "boundary_bytes"}
    assert first["inputs"][0] == {"shape": [1, 3, 32, 32], "dtype": "f32", "bytes": 12288}
    assert any(g["ops"][:3] == ["Conv", "Add", "Relu"] for g in groups["groups"])
    mlir = (tmp_path / "default" / "model.mlir").read_text()
    assert mlir.count("tx8be.Group(") == groups["count"]


def test_opt_group_none_and_no_barrier_optimisation(cnn: Path, tmp_path: Path) -> None:
    # --no-dma-conversions: a ChannelNorm fused into its producer's store leaves that
    # group in the converted layout, fewer bytes than the producer alone would store
    report = compile_report(cnn, tmp_path / "none", "--opt-group", "none", "--no-opt-barrier",
                            "--no-dma-conversions")
    groups = report["groups"]
    assert "fuse-channel-norm-dma" not in report["pipeline"]
    assert "group-pattern" not in report["pipeline"] and "group-dag" not in report["pipeline"]
    assert groups["boundary_bytes"] == groups["singles_boundary_bytes"]
    assert groups["count"] == groups["ops"] and groups["barriers"] == groups["count"]


def test_pattern_file(cnn: Path, tmp_path: Path, capsys) -> None:
    patterns = tmp_path / "p.json"
    patterns.write_text('{"patterns": [{"pattern": "Conv Relu *", "priority": 1}]}')
    report = compile_report(cnn, tmp_path / "file", "--group-patterns", str(patterns))
    assert report["options"]["group_patterns"] == str(patterns)
    assert f'pattern-file="{patterns}"' in report["pipeline"]
    assert {tuple(g["ops"]) for g in report["groups"]["groups"]} >= {("Conv", "Relu")}
    patterns.write_text('{"patterns": [\n {"pattern": "Conv Relu", "priority": 1},\n'
                        ' {"pattern": "Conv Rleu", "priority": 1}\n]}')
    out = tmp_path / "bad"
    assert main(["compile", str(cnn), "-o", str(out), "--quiet", "--group-patterns",
                 str(patterns)]) == 1
    err = capsys.readouterr().err
    assert "line 3" in err and "'Rleu'" in err and "Traceback" not in err
    assert not out.exists()  # nothing written


def test_unknown_opt_group_is_a_usage_error(cnn: Path, tmp_path: Path, capsys) -> None:
    code = main(["compile", str(cnn), "-o", str(tmp_path / "x"), "--opt-group", "fast"])
    assert code == 1 and "invalid choice: 'fast'" in capsys.readouterr().err
