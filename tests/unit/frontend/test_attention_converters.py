"""Attention (opset 23) and RotaryEmbedding against onnxruntime (and ONNX's reference
evaluator where onnxruntime lacks a feature)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from tests.unit.frontend.onnx_check import check_model, check_node, graph_model

RNG = np.random.default_rng(0)


def _qkv(b=2, hq=4, hkv=4, sq=3, skv=5, d=8, three_d=False):
    q = RNG.standard_normal((b, hq, sq, d)).astype(np.float32)
    k = RNG.standard_normal((b, hkv, skv, d)).astype(np.float32)
    v = RNG.standard_normal((b, hkv, skv, d)).astype(np.float32)
    if three_d:
        q, k, v = (x.transpose(0, 2, 1, 3).reshape(x.shape[0], x.shape[2], -1)
                   for x in (q, k, v))
    return {"Q": q, "K": k, "V": v}


@pytest.mark.parametrize("attrs", [
    {}, {"is_causal": 1}, {"scale": 0.3}, {"softcap": 2.0}, {"is_causal": 1, "softcap": 1.0},
])
def test_attention_4d(attrs) -> None:
    check_node("Attention", _qkv(), opset=23, rtol=1e-5, atol=1e-5, **attrs)


def test_attention_3d_grouped_query() -> None:
    inputs = _qkv(hq=4, hkv=2, three_d=True)
    check_node("Attention", inputs, opset=23, q_num_heads=4, kv_num_heads=2, rtol=1e-5,
               atol=1e-5)


@pytest.mark.parametrize("mask_dtype", [np.bool_, np.float32])
def test_attention_masks(mask_dtype) -> None:
    inputs = _qkv()
    mask = RNG.random((3, 5)) > 0.3
    mask[:, 0] = True
    mask = mask.astype(mask_dtype) if mask_dtype is np.bool_ else np.where(mask, 0, -3.0)
    inputs["mask"] = mask.astype(mask_dtype)
    check_node("Attention", inputs, opset=23, rtol=1e-5, atol=1e-5)


def test_attention_with_past_and_present() -> None:
    inputs = _qkv(skv=2)
    past_k = RNG.standard_normal((2, 4, 3, 8)).astype(np.float32)
    past_v = RNG.standard_normal((2, 4, 3, 8)).astype(np.float32)
    outputs = ["y", "pk", "pv"]
    node = helper.make_node("Attention", ["Q", "K", "V", "", "pk_in", "pv_in"], outputs,
                            is_causal=1)
    feeds = {**inputs, "pk_in": past_k, "pv_in": past_v}
    check_model(graph_model([node], feeds, outputs, opset=23), feeds, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", [0, 1, 2, 3])
def test_attention_qk_output_modes(mode) -> None:
    inputs = _qkv()
    inputs["mask"] = (RNG.random((3, 5)) > 0.5).astype(np.float32) * -2
    node = helper.make_node("Attention", ["Q", "K", "V", "mask"], ["y", "", "", "qk"],
                            qk_matmul_output_mode=mode)
    check_model(graph_model([node], inputs, ["y", "qk"], opset=23), inputs, rtol=1e-5,
                atol=1e-5)


def test_attention_fully_masked_rows_are_zero() -> None:
    from onnx.reference import ReferenceEvaluator

    from tx8c.frontend.onnx.importer import import_onnx
    from tx8c.sim.reference import run_reference

    inputs = _qkv()
    mask = np.ones((3, 5), bool)
    mask[1] = False
    inputs["mask"] = mask
    model = graph_model([helper.make_node("Attention", ["Q", "K", "V", "mask"], ["y"])],
                        inputs, ["y"], opset=23)
    (expected,) = ReferenceEvaluator(model).run(None, inputs)
    (got,) = run_reference(import_onnx(model).module, inputs)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    assert not np.any(got[:, :, 1])


def test_attention_through_the_pipeline() -> None:
    check_node("Attention", _qkv(b=1), opset=23, is_causal=1, rtol=1e-5, atol=1e-5,
               pipeline=True)


@pytest.mark.parametrize("interleaved", [0, 1])
@pytest.mark.parametrize("rotary_dim", [0, 4])
def test_rotary_embedding_with_positions(interleaved, rotary_dim) -> None:
    x = RNG.standard_normal((2, 3, 5, 8)).astype(np.float32)
    half = (rotary_dim or 8) // 2
    angles = RNG.uniform(0, 3, (10, half))
    inputs = {"x": x, "pos": RNG.integers(0, 10, (2, 5)).astype(np.int64)}
    node = helper.make_node("RotaryEmbedding", ["x", "cos", "sin", "pos"], ["y"],
                            interleaved=interleaved, rotary_embedding_dim=rotary_dim)
    inits = {"cos": np.cos(angles).astype(np.float32), "sin": np.sin(angles).astype(np.float32)}
    check_model(graph_model([node], inputs, ["y"], inits, opset=23), inputs, rtol=1e-5,
                atol=1e-6)


def test_rotary_embedding_3d_without_positions() -> None:
    x = RNG.standard_normal((2, 5, 12)).astype(np.float32)
    angles = RNG.uniform(0, 3, (2, 5, 3))
    inputs = {"x": x, "cos": np.cos(angles).astype(np.float32),
              "sin": np.sin(angles).astype(np.float32)}
    check_node("RotaryEmbedding", inputs, opset=23, num_heads=2, rtol=1e-5, atol=1e-6)
