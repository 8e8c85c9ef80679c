"""examples/make_models.py: valid, small, deterministic models that run in onnxruntime."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from functools import cache
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import numpy_helper
from scipy.special import erf

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "make_models.py"
NAMES = ["residual_cnn", "mobilenet_block", "transformer_encoder", "llama_decoder"]


def _load_module():
    spec = importlib.util.spec_from_file_location("tx8c_examples_make_models", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


mm = _load_module()


@cache
def _model(name: str) -> onnx.ModelProto:
    return mm.MODELS[name]()


def _session(model: onnx.ModelProto) -> ort.InferenceSession:
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def _feeds(model: onnx.ModelProto, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    feeds = {}
    for vi in model.graph.input:
        shape = [d.dim_value for d in vi.type.tensor_type.shape.dim]
        if vi.name == "input_ids":
            feeds[vi.name] = rng.integers(0, 100, shape, dtype=np.int64)
        elif vi.name == "position_ids":
            feeds[vi.name] = np.broadcast_to(np.arange(shape[-1], dtype=np.int64), shape).copy()
        elif vi.name == "attention_mask":
            mask = np.ones(shape, dtype=np.int64)
            mask[..., -4:] = 0
            feeds[vi.name] = mask
        else:
            assert vi.type.tensor_type.elem_type == onnx.TensorProto.FLOAT
            feeds[vi.name] = rng.standard_normal(shape).astype(np.float32)
    return feeds


def _weights(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    return {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}


def test_registry_lists_the_four_models() -> None:
    assert list(mm.MODELS) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_model_is_valid_small_and_deterministic(name: str) -> None:
    model = _model(name)
    onnx.checker.check_model(model, full_check=True)
    assert {o.domain: o.version for o in model.opset_import} == {"": 17}
    data = model.SerializeToString()
    assert len(data) < 5 * 1024 * 1024
    assert mm.MODELS[name]().SerializeToString() == data
    names = [n.name for n in model.graph.node]
    assert all(names) and len(set(names)) == len(names)


@pytest.mark.parametrize("name", NAMES)
def test_model_runs_in_onnxruntime(name: str) -> None:
    model = _model(name)
    feeds = _feeds(model)
    outputs = _session(model).run(None, feeds)
    expected = {
        o.name: [d.dim_value for d in o.type.tensor_type.shape.dim] for o in model.graph.output
    }
    assert len(outputs) == len(expected) == 1
    (out_name, shape), (out,) = next(iter(expected.items())), outputs
    assert list(out.shape) == shape, out_name
    assert out.dtype == np.float32
    assert np.isfinite(out).all()
    assert 0.05 < float(out.std()) < 10.0  # activations stay O(1)


def test_expected_shapes() -> None:
    shapes = {
        name: (
            {i.name: [d.dim_value for d in i.type.tensor_type.shape.dim] for i in m.graph.input},
            {o.name: [d.dim_value for d in o.type.tensor_type.shape.dim] for o in m.graph.output},
        )
        for name, m in ((n, _model(n)) for n in NAMES)
    }
    assert shapes == {
        "residual_cnn": ({"image": [1, 3, 32, 32]}, {"logits": [1, 10]}),
        "mobilenet_block": ({"image": [1, 3, 32, 32]}, {"logits": [1, 10]}),
        "transformer_encoder": (
            {"input_ids": [1, 16], "attention_mask": [1, 16]},
            {"hidden_states": [1, 16, 64]},
        ),
        "llama_decoder": (
            {"hidden_states": [1, 16, 64], "position_ids": [1, 16]},
            {"output": [1, 16, 64]},
        ),
    }


# -- numpy references for the two transformer layers -----------------------------------


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float = 1e-12) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def test_transformer_encoder_matches_numpy_bert_layer() -> None:
    model = _model("transformer_encoder")
    w = _weights(model)
    feeds = _feeds(model, seed=1)
    p = "encoder.layer.0."
    lin = lambda x, n: x @ w[n + ".weight"] + w[n + ".bias"]
    ids, mask = feeds["input_ids"], feeds["attention_mask"]
    x = (
        w["embeddings.word_embeddings.weight"][ids]
        + w["embeddings.position_embeddings.weight"][np.arange(16)]
    )
    h = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
    heads = lambda t: t.reshape(1, 16, 4, 16).transpose(0, 2, 1, 3)
    q, k, v = (heads(lin(h, p + "attention.self." + n)) for n in ("query", "key", "value"))
    scores = q @ k.transpose(0, 1, 3, 2) / 4.0 + (1.0 - mask[:, None, None, :]) * -10000.0
    ctx = (_softmax(scores) @ v).transpose(0, 2, 1, 3).reshape(1, 16, 64)
    a = lin(ctx, p + "attention.output.dense") + h
    h = _layer_norm(
        a, w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"]
    )
    f = lin(h, p + "intermediate.dense")
    f = f * 0.5 * (1.0 + erf(f / np.sqrt(2.0)))
    f = lin(f, p + "output.dense") + h
    ref = _layer_norm(f, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
    (out,) = _session(model).run(None, feeds)
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)


def test_llama_decoder_matches_numpy_reference() -> None:
    model = _model("llama_decoder")
    w = _weights(model)
    feeds = _feeds(model, seed=2)
    x, pos = feeds["hidden_states"].astype(np.float64), feeds["position_ids"]

    def rms(t: np.ndarray, name: str) -> np.ndarray:
        return w[name + ".weight"] * (t / np.sqrt((t**2).mean(-1, keepdims=True) + 1e-6))

    def rope(t: np.ndarray) -> np.ndarray:
        cos = w["self_attn.rotary_emb.cos_cached"][pos][:, None]
        sin = w["self_attn.rotary_emb.sin_cached"][pos][:, None]
        rotated = np.concatenate([-t[..., 8:], t[..., :8]], axis=-1)
        return t * cos + rotated * sin

    h = rms(x, "input_layernorm")
    heads = lambda t, n: t.reshape(1, 16, n, 16).transpose(0, 2, 1, 3)
    q = rope(heads(h @ w["self_attn.q_proj.weight"], 4))
    k = rope(heads(h @ w["self_attn.k_proj.weight"], 2))
    v = heads(h @ w["self_attn.v_proj.weight"], 2)
    k, v = np.repeat(k, 2, axis=1), np.repeat(v, 2, axis=1)  # GQA: head i uses kv head i // 2
    scores = q @ k.transpose(0, 1, 3, 2) / 4.0
    scores = np.where(np.triu(np.ones((16, 16), bool), 1), -np.inf, scores)
    ctx = (_softmax(scores) @ v).transpose(0, 2, 1, 3).reshape(1, 16, 64)
    x = x + ctx @ w["self_attn.o_proj.weight"]
    h = rms(x, "post_attention_layernorm")
    gate = h @ w["mlp.gate_proj.weight"]
    mlp = (gate / (1.0 + np.exp(-gate)) * (h @ w["mlp.up_proj.weight"])) @ w["mlp.down_proj.weight"]
    ref = x + mlp
    (out,) = _session(model).run(None, feeds)
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)


# -- CLI ---------------------------------------------------------------------------------


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60
    )


def test_cli_writes_all_models(tmp_path: Path) -> None:
    outdir = tmp_path / "new" / "models"
    r = _cli(str(outdir))
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in outdir.iterdir()) == sorted(f"{n}.onnx" for n in NAMES)
    for name in NAMES:
        loaded = onnx.load(outdir / f"{name}.onnx")
        assert loaded.SerializeToString() == _model(name).SerializeToString()


def test_cli_selected_names_and_errors(tmp_path: Path) -> None:
    assert mm.main([str(tmp_path / "a"), "mobilenet_block"]) == 0
    assert [p.name for p in (tmp_path / "a").iterdir()] == ["mobilenet_block.onnx"]

    target = tmp_path / "file.txt"
    target.write_text("not a directory")
    r = _cli(str(target))
    assert r.returncode == 1
    assert "not a directory" in r.stderr and "Traceback" not in r.stderr
    assert target.read_text() == "not a directory"

    r = _cli(str(tmp_path / "b"), "no_such_model")
    assert r.returncode == 1
    assert "no_such_model" in r.stderr and "residual_cnn" in r.stderr
    assert not (tmp_path / "b").exists()
