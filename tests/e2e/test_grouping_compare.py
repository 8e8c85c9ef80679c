"""`tx8c compare` through the grouping stage on every bundled example: every stage, the
cmodels and the C program pass against onnxruntime, the cmodel equals the reference bit
for bit, and the C program the cmodel v2 (bit for bit, or cosine >= 0.999999 where
libm's transcendental functions or a split reduction differ in the last bits)."""

from __future__ import annotations

import json
from pathlib import Path

import onnx
import pytest

from examples.make_models import MODELS
from tx8c.cli.main import main
from tx8c.codegen.c_backend import find_compiler

GROUP_PASSES = ["group-pattern", "group-optimization", "group-ldst", "fuse-channel-norm-dma",
                "group-mapping", "group-dag"]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_compare_through_grouping(name: str, tmp_path: Path, capsys) -> None:
    path = tmp_path / f"{name}.onnx"
    onnx.save(MODELS[name](), path)
    assert main(["compare", str(path), "--json", "--quiet"]) == 0
    rows = json.loads(capsys.readouterr().out)["stages"]
    stages = [r["stage"] for r in rows]
    assert stages[-13:-7] == GROUP_PASSES
    assert stages[-7:] == ["spm-resident", "group-cost", "ddr-alloc", "ddr-reorder", "cmodel",
                           "cmodel v2", "C"]
    c_row = rows.pop()
    assert all(r["verdict"] == "PASS" for r in rows)
    assert rows[-2]["equals_reference"]  # cmodel v1; v2 may sum partials in another order
    assert rows[-1]["simulated_cycles"] > 0
    if find_compiler() is None:
        assert c_row["verdict"] == "SKIPPED" and "no C compiler" in c_row["reason"]
        return
    assert c_row["verdict"] == "PASS"
    assert c_row["equals_cmodel_v2"] or c_row["cmodel_v2_cosine"] >= 0.999999
