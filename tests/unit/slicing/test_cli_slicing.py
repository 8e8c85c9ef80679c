"""`tx8c compile` prints the estimated latency beside the roofline bound, and report.json
has the slicing section: a plan per sliced group, totals equal to the sums of the rows,
estimates never below the bounds."""

from __future__ import annotations

import json
from pathlib import Path

import onnx

from examples.make_models import MODELS
from tx8c.cli.main import main


def test_compile_reports_the_estimate_and_its_bounds(tmp_path: Path, capsys) -> None:
    model = tmp_path / "cnn.onnx"
    onnx.save(MODELS["residual_cnn"](), model)
    assert main(["compile", str(model), "-o", str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    slicing = report["slicing"]
    rows = slicing["groups"]
    assert len(rows) == report["groups"]["count"] - sum(
        1 for g in report["groups"]["groups"] if g["tag"] == 2)
    # the model's estimate chains the groups (each one's constant prefix during the
    # previous one's tail); each row keeps its cycles alone and its share of the chain
    assert slicing["overlap"] and slicing["cycles"] == sum(r["chain_cycles"] for r in rows)
    assert slicing["alone_cycles"] == sum(r["cycles"] for r in rows)
    assert all(0 <= r["chain_cycles"] <= r["cycles"] for r in rows)
    assert all(r["cycles"] >= r["bound_cycles"] > 0 for r in rows)
    assert all(r["spm_peak"] >= r["spm_lower_bound"] for r in rows)
    roofline = slicing["roofline"]["seconds"]
    assert slicing["alone_seconds"] >= slicing["groups_bound_seconds"] >= roofline > 0
    assert slicing["alone_seconds"] >= slicing["estimated_seconds"] >= roofline
    assert slicing["estimate_over_roofline"] >= 1
    line = next(ln for ln in printed.splitlines() if ln.startswith("estimated latency"))
    assert f"{slicing['estimated_seconds'] * 1e6:.1f} us" in line
    assert f"roofline bound {roofline * 1e6:.1f} us" in line
