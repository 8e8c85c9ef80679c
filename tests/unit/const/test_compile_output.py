"""The compile output with constants as binary: model.mlir small and without data,
consts.bin the DDR image, consts.json its index; run reads them back bit-identically;
compiling twice gives the same bytes; damaged files are clear errors naming the constant;
report.json has the constants' statistics."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest

from examples.make_models import MODELS
from tests.helpers import assert_same_values
from tx8c.cli.main import main
from tx8c.frontend.onnx.importer import import_onnx
from tx8c.frontend.onnx.loader import prepare
from tx8c.frontend.onnx.runtime import random_inputs
from tx8c.pipeline import CompileOptions, run_pipeline
from tx8c.sim.reference import run_reference

MODEL = "transformer_encoder"  # has a Gather (bypassed LoadConst), Gemms, LayerNorms


@pytest.fixture(scope="module")
def compiled(tmp_path_factory) -> tuple[Path, Path, Path]:
    """(model.onnx, OUT/, inputs.npz) of one compile, shared by the read-only tests."""
    root = tmp_path_factory.mktemp("compiled")
    model = root / "model.onnx"
    onnx.save(MODELS[MODEL](), model)
    assert main(["compile", str(model), "-o", str(root / "out"), "--quiet"]) == 0
    inputs = random_inputs(prepare(model, {})[0], seed=0)
    np.savez(root / "inputs.npz", **inputs)
    return model, root / "out", root / "inputs.npz"


def _run(out: Path, inputs: Path, dest: Path) -> list[np.ndarray]:
    assert main(["run", str(out), "--inputs", str(inputs), "-o", str(dest), "--quiet"]) == 0
    with np.load(dest) as data:
        return [data[k] for k in data.files]


def test_model_mlir_names_its_constants_and_holds_no_data(compiled) -> None:
    _, out, _ = compiled
    text = (out / "model.mlir").read_text()
    assert 'tx8c.constants = "consts.json"' in text
    assert "dense<" not in text and "tx8be.Constant" not in text
    index = json.loads((out / "consts.json").read_text())
    assert index["file_bytes"] == (out / "consts.bin").stat().st_size
    assert {"id", "offset", "bytes", "dtype", "shape", "mem_layout", "sha256"} <= set(
        index["constants"][0])


def test_run_from_consts_bin_is_bit_identical_to_the_module_in_memory(compiled, tmp_path):
    model, out, inputs_path = compiled
    module = import_onnx(model).module
    run_pipeline(module, CompileOptions(verify_each_pass=True))
    with np.load(inputs_path) as data:
        inputs = {k: data[k] for k in data.files}
    assert_same_values(run_reference(module, inputs), _run(out, inputs_path, tmp_path / "o"))


def test_compiling_twice_gives_identical_files(compiled, tmp_path) -> None:
    model, out, _ = compiled
    assert main(["compile", str(model), "-o", str(tmp_path / "again"), "--quiet"]) == 0
    for name in ("model.mlir", "consts.bin", "consts.json"):
        assert (tmp_path / "again" / name).read_bytes() == (out / name).read_bytes(), name


def test_report_has_the_constants_statistics(compiled) -> None:
    _, out, _ = compiled
    stats = json.loads((out / "report.json").read_text())["constants"]
    index = json.loads((out / "consts.json").read_text())
    assert stats["constants"] == len(index["constants"])
    assert stats["stored_bytes"] == sum(r["bytes"] for r in index["constants"])
    assert stats["consts_bin_bytes"] == index["file_bytes"] and stats["opt_ddr"] is True
    assert stats["load_consts"]["bypassed"] == 1  # the embedding table
    assert stats["load_consts"]["real"] >= stats["constants"] - 1
    assert set(stats["channel_norms_folded"]) == {"layout-align-opt", "const-norm"}
    assert set(stats["dedup"]) == {"hits", "bytes_saved"}


def test_no_opt_ddr_packs_tightly(compiled, tmp_path) -> None:
    model, out, inputs_path = compiled
    tight = tmp_path / "tight"
    assert main(["compile", str(model), "-o", str(tight), "--quiet", "--no-opt-ddr"]) == 0
    rows = json.loads((tight / "consts.json").read_text())["constants"]
    assert all(r["offset"] % 256 == 0 for r in rows)
    assert (tight / "consts.bin").stat().st_size <= (out / "consts.bin").stat().st_size
    assert_same_values(_run(out, inputs_path, tmp_path / "a"),
                       _run(tight, inputs_path, tmp_path / "b"))


def _copy(out: Path, dest: Path) -> Path:
    dest.mkdir()
    for name in ("model.mlir", "consts.bin", "consts.json"):
        (dest / name).write_bytes((out / name).read_bytes())
    return dest


def _fails(capsys, out: Path, inputs: Path, dest: Path, *needles: str) -> None:
    code = main(["run", str(out), "--inputs", str(inputs), "-o", str(dest), "--quiet"])
    err = capsys.readouterr().err
    assert code == 1 and err.startswith("error: ") and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, err
    assert not dest.exists()


def test_a_damaged_consts_bin_names_the_constant(compiled, tmp_path, capsys) -> None:
    _, out, inputs = compiled
    copy = _copy(out, tmp_path / "copy")
    row = json.loads((out / "consts.json").read_text())["constants"][3]
    data = bytearray((copy / "consts.bin").read_bytes())
    data[row["file_offset"] + row["bytes"] // 2] ^= 1
    (copy / "consts.bin").write_bytes(data)
    _fails(capsys, copy, inputs, tmp_path / "o.npz", f"constant {row['id']} (", "damaged")


def test_a_truncated_consts_bin_names_the_constant_cut_off(compiled, tmp_path, capsys):
    _, out, inputs = compiled
    copy = _copy(out, tmp_path / "copy")
    rows = json.loads((out / "consts.json").read_text())["constants"]
    last = max(rows, key=lambda r: r["file_offset"] + r["bytes"])
    (copy / "consts.bin").write_bytes((out / "consts.bin").read_bytes()[:-1])
    _fails(capsys, copy, inputs, tmp_path / "o.npz", "truncated", f"constant {last['id']} (")


def test_missing_constants_files(compiled, tmp_path, capsys) -> None:
    _, out, inputs = compiled
    copy = _copy(out, tmp_path / "copy")
    (copy / "consts.bin").unlink()
    _fails(capsys, copy, inputs, tmp_path / "o.npz", "consts.bin", "does not exist")
    (copy / "consts.json").unlink()
    _fails(capsys, copy, inputs, tmp_path / "o.npz", "consts.json", "does not exist")


def test_run_reads_text_ir_with_inline_constants(compiled, tmp_path) -> None:
    """Hand-written or tx8c-opt IR: dense Constants in the ops, or the container in the
    module attribute (after move-constant), run as before."""
    model, out, inputs_path = compiled
    from tx8c.ir import print_module
    from tx8c.transforms.const.move_constant import MoveConstantPass

    module = import_onnx(model).module
    (tmp_path / "inline.mlir").write_text(print_module(module))
    MoveConstantPass().apply(None, module)
    (tmp_path / "container.mlir").write_text(print_module(module))
    expected = _run(out, inputs_path, tmp_path / "o0")
    for i, name in enumerate(("inline.mlir", "container.mlir")):
        got = _run(tmp_path / name, inputs_path, tmp_path / f"o{i + 1}")
        for g, e in zip(got, expected, strict=True):
            np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-4)  # before/after mid-end


def test_tx8c_opt_reads_the_constants_beside_a_compiled_model(compiled, tmp_path) -> None:
    from tx8c.cli.opt import main as opt_main

    _, out, inputs_path = compiled
    dest = tmp_path / "opt.mlir"
    assert opt_main([str(out / "model.mlir"), "-p", "const-norm", "-o", str(dest)]) == 0
    text = dest.read_text()
    assert "tx8c.constants = [{id = 0 : i64" in text and "dense<" in text
    assert_same_values(_run(out, inputs_path, tmp_path / "a"),
                       _run(dest, inputs_path, tmp_path / "b"))


def test_output_dir_writers_run_in_order_and_a_failing_one_leaves_nothing(tmp_path) -> None:
    from tx8c.cli.files import OutputDir

    seen = {}
    out = OutputDir(tmp_path / "out")
    out.add("a.bin", lambda f: seen.update(size=f.write(b"\0" * 10)))
    out.add("a.json", lambda f: f.write(json.dumps(seen).encode()))
    out.commit()
    assert json.loads((tmp_path / "out" / "a.json").read_text()) == {"size": 10}

    def broken(f) -> None:
        f.write(b"partial")
        raise OSError("disk full")

    fresh = OutputDir(tmp_path / "new")
    fresh.add("x.bin", broken)
    with pytest.raises(OSError, match="disk full"):
        fresh.commit()
    assert not (tmp_path / "new").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
