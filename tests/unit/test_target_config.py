"""--target-config FILE (TOML or JSON) on compile, compare and report: overrides reach
the passes (module attribute tx8c.target) and report.json; bad files are clear errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import onnx
import pytest

from examples.make_models import MODELS
from tx8c.errors import TargetConfigError
from tx8c.target.config import DEFAULT_CONFIG
from tx8c.target.config_file import overrides, read_target_config


def _write(tmp_path: Path, text: str, name: str = "t.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_toml_and_json_override_fields(tmp_path: Path) -> None:
    toml = read_target_config(_write(tmp_path, "spm_bytes_per_tile = 8388608\n"
                                     "channel_pad_steps_float = [8, 16, 32]\n"))
    assert toml.spm_bytes_per_tile == 8 * 2**20
    assert toml.channel_pad_steps_float == (8, 16, 32)
    assert toml.clock_hz == DEFAULT_CONFIG.clock_hz
    js = read_target_config(_write(tmp_path, '{"clock_hz": 1500000000}', "t.json"))
    assert overrides(js) == {"clock_hz": 1_500_000_000}


@pytest.mark.parametrize("text, needles", [
    ("spm_bytes = 1\n", ["unknown field 'spm_bytes'", "did you mean 'spm_bytes_per_tile'"]),
    ('clock_hz = "fast"\n', ["'clock_hz' must be an integer", '"fast"']),
    ("clock_hz = 1.5e9\n", ["'clock_hz' must be an integer"]),
    ("mesh_x = true\n", ["'mesh_x' must be an integer"]),
    ("spm_bytes_per_tile = -1\n", ["spm_bytes_per_tile must be positive, got -1"]),
    ("batch_align_bytes = 100\n", ["power of two"]),
    ("channel_pad_steps_float = 4\n", ["must be a list of integers"]),
    ("clock_hz = \n", ["not valid TOML"]),
])
def test_bad_files_are_clear_errors(tmp_path: Path, text: str, needles: list[str]) -> None:
    with pytest.raises(TargetConfigError) as err:
        read_target_config(_write(tmp_path, text))
    for needle in needles:
        assert needle in str(err.value)
    assert str(tmp_path / "t.toml") in str(err.value)


def test_missing_file_and_non_object(tmp_path: Path) -> None:
    with pytest.raises(TargetConfigError, match="does not exist"):
        read_target_config(tmp_path / "none.toml")
    with pytest.raises(TargetConfigError, match="JSON list"):
        read_target_config(_write(tmp_path, "[1, 2]", "t.json"))


def _tx8c(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tx8c.cli.main", *args], capture_output=True,
                          text=True)


@pytest.fixture(scope="module")
def cnn(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("m") / "cnn.onnx"
    onnx.save(MODELS["residual_cnn"](), path)
    return path


@pytest.mark.parametrize("command", ["compile", "compare", "report"])
def test_cli_rejects_a_bad_file_with_exit_1(tmp_path: Path, cnn: Path, command: str) -> None:
    bad = _write(tmp_path, "spm_bytes_per_tile = -5\n")
    target = str(tmp_path) if command == "report" else str(cnn)
    extra = {"compile": ["-o", str(tmp_path / "out")], "compare": [],
             "report": ["-o", str(tmp_path / "r.html")]}[command]
    if command == "report":  # report needs a compiled directory first
        (tmp_path / "model.mlir").write_text("builtin.module {}\n")
        (tmp_path / "report.json").write_text("{}")
    r = _tx8c(command, target, *extra, "--target-config", str(bad), "--quiet")
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr
    assert "spm_bytes_per_tile must be positive, got -5" in r.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "r.html").exists()


def test_compile_records_the_target_and_the_plans_see_it(tmp_path: Path, cnn: Path) -> None:
    small = _write(tmp_path, "spm_bytes_per_tile = 65536\nclock_hz = 2000000000\n")
    assert _tx8c("compile", str(cnn), "-o", str(tmp_path / "a"), "--quiet").returncode == 0
    r = _tx8c("compile", str(cnn), "-o", str(tmp_path / "b"), "--quiet", "--target-config",
              str(small))
    assert r.returncode == 0, r.stderr
    a = json.loads((tmp_path / "a" / "report.json").read_text())
    b = json.loads((tmp_path / "b" / "report.json").read_text())
    assert a["target"] == {} and b["target"] == {"clock_hz": 2_000_000_000,
                                                 "spm_bytes_per_tile": 65536}
    assert "tx8c.target" in (tmp_path / "b" / "model.mlir").read_text()
    assert max(g["spm_peak"] for g in b["slicing"]["groups"]) <= 65536
    roof_a, roof_b = a["slicing"]["roofline"], b["slicing"]["roofline"]
    assert roof_a["compute_seconds"] == roof_b["compute_seconds"]
