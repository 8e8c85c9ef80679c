"""`tx8c compare` through the grouping stage on every bundled example: every stage and the
cmodel pass against onnxruntime, and the cmodel equals the reference bit for bit."""

from __future__ import annotations

import json
from pathlib import Path

import onnx
import pytest

from examples.make_models import MODELS
from tx8c.cli.main import main

GROUP_PASSES = ["group-pattern", "group-optimization", "group-ldst", "group-mapping",
                "group-dag"]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_compare_through_grouping(name: str, tmp_path: Path, capsys) -> None:
    path = tmp_path / f"{name}.onnx"
    onnx.save(MODELS[name](), path)
    assert main(["compare", str(path), "--json", "--quiet"]) == 0
    rows = json.loads(capsys.readouterr().out)["stages"]
    stages = [r["stage"] for r in rows]
    assert stages[-7:-2] == GROUP_PASSES and stages[-2] == "group-cost"
    assert all(r["verdict"] == "PASS" for r in rows)
    assert rows[-1]["stage"] == "cmodel" and rows[-1]["equals_reference"]
