"""tx8c-opt: parsing, passes, and clear errors on bad input (no tracebacks)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

GOOD = """func.func @main(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = tx8be.Add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
"""


def _opt(tmp_path: Path, text: str, *args: str) -> subprocess.CompletedProcess:
    path = tmp_path / "in.mlir"
    path.write_text(text)
    return subprocess.run(
        [sys.executable, "-m", "tx8c.cli.opt", str(path), *args],
        capture_output=True,
        text=True,
    )


def test_prints_the_module(tmp_path: Path) -> None:
    r = _opt(tmp_path, GOOD)
    assert r.returncode == 0, r.stderr
    assert "tx8be.Add %a, %b" in r.stdout


def test_malformed_input_reports_line_and_column(tmp_path: Path) -> None:
    r = _opt(tmp_path, GOOD.replace("-> tensor<2x3xf32>\n  func", "->\n  func"))
    assert r.returncode == 1
    assert "in.mlir:3:3" in r.stderr
    assert "Traceback" not in r.stderr


def test_unknown_pass_lists_available_passes(tmp_path: Path) -> None:
    r = _opt(tmp_path, GOOD, "-p", "no-such-pass")
    assert r.returncode == 1
    assert "no-such-pass" in r.stderr and "Available passes: " in r.stderr
    assert "infer-shapes" in r.stderr
    assert "Traceback" not in r.stderr


def test_verification_failure_names_op_and_rule(tmp_path: Path) -> None:
    r = _opt(tmp_path, GOOD.replace("tensor<3xf32>)", "tensor<4xf32>)").replace(
        "%b: tensor<3xf32>", "%b: tensor<4xf32>"))
    assert r.returncode == 1
    assert "'tx8be.Add' op operand shapes [2, 3] and [4] do not broadcast" in r.stderr
    assert "Traceback" not in r.stderr


def test_missing_file(tmp_path: Path) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "tx8c.cli.opt", str(tmp_path / "nope.mlir")],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 1
    assert "cannot open input file" in r.stderr and "Traceback" not in r.stderr


def test_runs_a_pass_with_split_input_file(tmp_path: Path) -> None:
    r = _opt(tmp_path, GOOD + "// -----\n" + GOOD, "--split-input-file", "-p", "infer-shapes")
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("tx8be.Add") == 2 and "// -----" in r.stdout
