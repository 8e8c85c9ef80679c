"""tx8c compile / run / compare, and every bad input the import issue lists: a clear
one-paragraph error, exit code 1, no traceback, nothing written or overwritten."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from examples.make_models import MODELS


def tx8c(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tx8c.cli.main", *args], capture_output=True, text=True
    )


def assert_clean_error(r: subprocess.CompletedProcess, *needles: str) -> None:
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr
    assert r.stderr.startswith("error: ") or "\nerror: " in r.stderr
    for needle in needles:
        assert needle in r.stderr, r.stderr


@pytest.fixture(scope="module")
def cnn(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("models") / "cnn.onnx"
    onnx.save(MODELS["residual_cnn"](), path)
    return path


def _save(tmp_path: Path, model: onnx.ModelProto, name: str = "m.onnx") -> Path:
    path = tmp_path / name
    onnx.save(model, path)
    return path


def _relu_model(x_shape, opset=17, op="Relu") -> onnx.ModelProto:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    graph = helper.make_graph([helper.make_node(op, ["x"], ["y"], name="n0")], "g", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


# -- the happy path --------------------------------------------------------------------


def test_compile_writes_model_stages_and_report(cnn: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = tx8c("compile", str(cnn), "-o", str(out), "--dump-ir-after-all", "--quiet")
    assert r.returncode == 0, r.stderr
    assert (out / "model.mlir").read_text().count("tx8be.Conv") == 6
    assert "tx8be.BatchNorm_Inference" not in (out / "model.mlir").read_text()
    assert (out / "stages" / "00-import.mlir").is_file()
    report = json.loads((out / "report.json").read_text())
    assert report["op_counts"]["Conv"] == 6
    assert report["pass_seconds"][0]["pass"] == "import"
    phases = report["phase_seconds"]  # the whole compile, phase by phase, in order
    # consts.bin is started before the lowering (written by a thread), the simulation
    # runs in a child beside report, write-ir and write-program: "simulate" is the wait
    assert list(phases) == ["import", "midend", "layout", "constants", "grouping", "slicing",
                            "ddr", "write-constants", "lower", "report", "write-ir",
                            "write-program", "simulate"]
    assert all(s >= 0 for s in phases.values())
    assert phases["slicing"] == pytest.approx(sum(
        p["seconds"] for p in report["pass_seconds"]
        if p["pass"] in ("spm-resident", "group-cost")), abs=1e-5)
    stages = sorted(p.name for p in (out / "stages").iterdir())
    assert len(stages) == len(report["pass_seconds"]) and stages[1] == "01-legalize.mlir"
    assert report["onnx_op_counts"]["BatchNormalization"] == 6
    traffic = report["layout_traffic"]  # what the layout stage left that moves bytes
    assert {"channel_norms", "channel_norm_bytes", "transposes", "transpose_bytes",
            "relabels"} <= set(traffic)
    fused = report["layout"]["fuse-channel-norm-dma"]  # ChannelNorm groups become DMAs
    assert traffic["channel_norms_fused"] == fused["fused_stores"] + fused["fused_loads"]
    assert traffic["channel_norms"] + traffic["channel_norms_fused"] == \
        report["layout"]["layout-align-opt"]["channel_norms"]


def test_run_then_compare_agree_with_onnxruntime(cnn: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert tx8c("compile", str(cnn), "-o", str(out), "--quiet").returncode == 0
    x = np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype(np.float32)
    np.savez(tmp_path / "in.npz", image=x)
    r = tx8c("run", str(out), "--inputs", str(tmp_path / "in.npz"), "-o",
             str(tmp_path / "y.npz"), "--quiet")
    assert r.returncode == 0, r.stderr
    assert np.load(tmp_path / "y.npz")["logits"].shape == (1, 10)
    r = tx8c("compare", str(cnn), "--inputs", str(tmp_path / "in.npz"), "--json")
    assert r.returncode == 0, r.stderr
    stages = json.loads(r.stdout)["stages"]
    assert stages[0]["stage"] == "import" and stages[0]["cosine"] >= 0.99999
    assert stages[0]["verdict"] == "PASS"


def test_run_cmodelv2_reads_the_program_and_refuses_a_damaged_one(cnn: Path,
                                                                  tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert tx8c("compile", str(cnn), "-o", str(out), "--quiet").returncode == 0
    np.savez(tmp_path / "in.npz", image=np.ones((1, 3, 32, 32), np.float32))
    run = ("run", str(out), "--inputs", str(tmp_path / "in.npz"), "-o",
           str(tmp_path / "y.npz"), "--backend", "cmodelv2", "--quiet")
    assert tx8c(*run).returncode == 0
    (tmp_path / "y.npz").unlink()
    program = out / "program.json.gz"
    program.write_bytes(program.read_bytes()[:-100])  # truncated
    assert_clean_error(tx8c(*run), "program.json.gz", "is not a Program tx8c wrote")
    program.unlink()
    assert_clean_error(tx8c(*run), "program.json.gz", "not found")
    assert not (tmp_path / "y.npz").exists()


def test_compare_prints_a_table(cnn: Path) -> None:
    r = tx8c("compare", str(cnn), "--quiet")
    assert r.returncode == 0, r.stderr
    assert "cosine" in r.stdout and "SQNR (dB)" in r.stdout and "PASS" in r.stdout


@pytest.mark.parametrize("flags, optimize", [((), False), (("--ort-optimize",), True)])
def test_compare_runs_onnxruntime_node_by_node_unless_asked(tmp_path, monkeypatch, capsys,
                                                            flags, optimize) -> None:
    """The reference follows the ONNX definitions (no graph optimiser, whose fused QDQ
    kernels round otherwise) for the outputs and for --all-tensors' intermediates."""
    from tx8c.cli.main import main
    from tx8c.frontend.onnx import runtime

    asked = []
    real = runtime.run_onnxruntime

    def recording(model, inputs, optimize=True):
        asked.append(optimize)
        return real(model, inputs, optimize=optimize)

    monkeypatch.setattr(runtime, "run_onnxruntime", recording)
    model = _save(tmp_path, _relu_model([1, 8, 4, 4]))
    assert main(["compare", str(model), "--quiet", "--summary", "--all-tensors", *flags]) == 0
    assert "PASS" in capsys.readouterr().out
    assert asked == [optimize, optimize]


# -- bad input -------------------------------------------------------------------------


def test_truncated_onnx(cnn: Path, tmp_path: Path) -> None:
    bad = tmp_path / "trunc.onnx"
    bad.write_bytes(cnn.read_bytes()[:2000])
    r = tx8c("compile", str(bad), "-o", str(tmp_path / "out"))
    assert_clean_error(r, "not a readable ONNX model", "truncated")
    assert not (tmp_path / "out").exists()


def test_not_an_onnx_file(tmp_path: Path) -> None:
    bad = tmp_path / "notes.onnx"
    bad.write_text("these are my notes, not a model\n")
    r = tx8c("compile", str(bad), "-o", str(tmp_path / "out"))
    assert_clean_error(r, "not a readable ONNX model")
    assert bad.read_text() == "these are my notes, not a model\n"


def test_unsupported_op_writes_nothing(tmp_path: Path) -> None:
    path = _save(tmp_path, _relu_model([2, 3], op="Bernoulli"))
    r = tx8c("compile", str(path), "-o", str(tmp_path / "out"))
    assert_clean_error(r, "Bernoulli (1 node: 'n0')")
    assert not (tmp_path / "out").exists()


def test_dynamic_dimension_without_input_shapes(tmp_path: Path) -> None:
    path = _save(tmp_path, _relu_model(["batch", 3]))
    r = tx8c("compile", str(path), "-o", str(tmp_path / "out"))
    assert_clean_error(r, "dynamic input dimensions", "--input-shapes")
    ok = tx8c("compile", str(path), "-o", str(tmp_path / "out"), "--input-shapes", "x:2x3",
              "--quiet")
    assert ok.returncode == 0, ok.stderr


def test_input_shapes_naming_a_missing_input(tmp_path: Path) -> None:
    path = _save(tmp_path, _relu_model(["batch", 3]))
    r = tx8c("compile", str(path), "-o", str(tmp_path / "out"), "--input-shapes", "img:1x3")
    assert_clean_error(r, "'img', which the model does not have", "'x'")


def test_malformed_input_shapes(tmp_path: Path) -> None:
    path = _save(tmp_path, _relu_model(["batch", 3]))
    r = tx8c("compile", str(path), "-o", str(tmp_path / "out"), "--input-shapes", "x=1,3")
    assert_clean_error(r, "NAME:DIMxDIM")


@pytest.mark.parametrize(
    "arrays, needle",
    [
        ({"wrong": np.zeros((1, 3, 32, 32), np.float32)}, "missing ['image']"),
        ({"image": np.zeros((1, 3, 16, 16), np.float32)}, "has shape [1, 3, 16, 16]"),
        ({"image": np.zeros((1, 3, 32, 32), np.float64)}, "has dtype float64"),
    ],
)
def test_inputs_npz_with_wrong_names_shapes_or_dtypes(cnn, tmp_path, arrays, needle) -> None:
    np.savez(tmp_path / "in.npz", **arrays)
    r = tx8c("compare", str(cnn), "--inputs", str(tmp_path / "in.npz"))
    assert_clean_error(r, needle)
    out = tmp_path / "out"
    assert tx8c("compile", str(cnn), "-o", str(out), "--quiet").returncode == 0
    r = tx8c("run", str(out), "--inputs", str(tmp_path / "in.npz"), "-o", str(tmp_path / "o.npz"))
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert not (tmp_path / "o.npz").exists()


def test_inputs_file_that_is_not_npz(cnn: Path, tmp_path: Path) -> None:
    bad = tmp_path / "in.npz"
    bad.write_text("nope")
    assert_clean_error(tx8c("compare", str(cnn), "--inputs", str(bad)), "not a readable .npz")


def test_output_path_that_is_an_existing_file(cnn: Path, tmp_path: Path) -> None:
    target = tmp_path / "precious.txt"
    target.write_text("keep me")
    r = tx8c("compile", str(cnn), "-o", str(target))
    assert_clean_error(r, "exists and is not a directory")
    assert target.read_text() == "keep me"


@pytest.mark.parametrize("opset", [6, 27])
def test_opset_outside_the_supported_range(tmp_path: Path, opset: int) -> None:
    path = _save(tmp_path, _relu_model([2, 3], opset=opset))
    r = tx8c("compile", str(path), "-o", str(tmp_path / "out"))
    assert_clean_error(r, f"opset {opset}", "7 to 26", "version_converter")


def test_missing_model_file(tmp_path: Path) -> None:
    r = tx8c("compile", str(tmp_path / "absent.onnx"), "-o", str(tmp_path / "out"))
    assert_clean_error(r, "does not exist")
