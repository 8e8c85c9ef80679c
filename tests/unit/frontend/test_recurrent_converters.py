"""LSTM, GRU and RNN, unrolled, against onnxruntime: directions, layouts, sequence
lengths (compile-time and run-time), initial states, peepholes, clip, input_forget,
linear_before_reset and custom activations."""

from __future__ import annotations

import numpy as np
import pytest

from tests.unit.frontend.onnx_check import check_node

RNG = np.random.default_rng(0)
T, B, IN, H = 5, 3, 4, 6
GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}


def _weights(op: str, directions: int, bias: bool = True) -> dict:
    g = GATES[op]
    weights = {
        "W": RNG.standard_normal((directions, g * H, IN)).astype(np.float32) * 0.5,
        "R": RNG.standard_normal((directions, g * H, H)).astype(np.float32) * 0.5,
    }
    if bias:
        weights["B"] = RNG.standard_normal((directions, 2 * g * H)).astype(np.float32) * 0.5
    return weights


def _outputs(op: str) -> int:
    return 3 if op == "LSTM" else 2


@pytest.mark.parametrize("op", sorted(GATES))
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_directions(op: str, direction: str) -> None:
    d = 2 if direction == "bidirectional" else 1
    x = RNG.standard_normal((T, B, IN)).astype(np.float32)
    check_node(op, {"X": x}, n_outputs=_outputs(op), initializers=_weights(op, d),
               direction=direction, hidden_size=H, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("op", sorted(GATES))
def test_sequence_lengths_and_initial_state(op: str) -> None:
    x = RNG.standard_normal((T, B, IN)).astype(np.float32)
    inits = _weights(op, 2)
    inits["lens"] = np.array([5, 2, 3], np.int32)
    inits["h0"] = RNG.standard_normal((2, B, H)).astype(np.float32)
    names = {"X": x}
    extra = {}
    if op == "LSTM":
        inits["c0"] = RNG.standard_normal((2, B, H)).astype(np.float32)
    check_node(op, names, n_outputs=_outputs(op), initializers=inits,
               direction="bidirectional", hidden_size=H, rtol=1e-4, atol=1e-5, **extra)


@pytest.mark.parametrize("op", ["LSTM", "GRU"])
@pytest.mark.parametrize("layout", [0, 1])
def test_run_time_sequence_lengths_and_layouts(op: str, layout: int) -> None:
    """onnxruntime has no batch-first (layout 1) recurrence (and ONNX's reference
    evaluator ignores sequence_lens): layout 1 is checked against onnxruntime on the
    time-first model, its inputs and outputs transposed."""
    from onnx import helper

    from tests.unit.frontend.onnx_check import graph_model
    from tx8c.frontend.onnx.importer import import_onnx
    from tx8c.frontend.onnx.runtime import run_onnxruntime
    from tx8c.sim.reference import run_reference

    x = RNG.standard_normal((T, B, IN)).astype(np.float32)
    lens = np.array([1, 5, 4], np.int32)
    outputs = [f"out{i}" for i in range(_outputs(op))]
    weights = _weights(op, 2)

    def model(lay: int, data):
        node = helper.make_node(op, ["X", "W", "R", "B", "lens"], outputs, hidden_size=H,
                                layout=lay, direction="bidirectional")
        return graph_model([node], {"X": data, "lens": lens}, outputs, weights, opset=14)

    expected = run_onnxruntime(model(0, x), {"X": x, "lens": lens})
    data = x.transpose(1, 0, 2) if layout else x
    got = run_reference(import_onnx(model(layout, data)).module, {"X": data, "lens": lens})
    if layout:
        got = [got[0].transpose(1, 2, 0, 3)] + [g.transpose(1, 0, 2) for g in got[1:]]
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)


def test_lstm_peepholes_clip_and_input_forget() -> None:
    x = RNG.standard_normal((T, B, IN)).astype(np.float32) * 3
    inits = _weights("LSTM", 1)
    inits.update({"lens": np.full(B, T, np.int32), "h0": np.zeros((1, B, H), np.float32),
                  "c0": np.zeros((1, B, H), np.float32),
                  "P": RNG.standard_normal((1, 3 * H)).astype(np.float32)})
    check_node("LSTM", {"X": x}, n_outputs=3, initializers=inits, hidden_size=H, clip=1.5,
               input_forget=1, rtol=1e-4, atol=1e-5)


def test_gru_linear_before_reset() -> None:
    x = RNG.standard_normal((T, B, IN)).astype(np.float32)
    check_node("GRU", {"X": x}, n_outputs=2, initializers=_weights("GRU", 1), hidden_size=H,
               linear_before_reset=1, rtol=1e-4, atol=1e-5)


def test_custom_activations() -> None:
    x = RNG.standard_normal((T, B, IN)).astype(np.float32)
    check_node("RNN", {"X": x}, n_outputs=2, initializers=_weights("RNN", 2), hidden_size=H,
               direction="bidirectional", activations=["Relu", "HardSigmoid"],
               activation_alpha=[0.3], activation_beta=[0.4], rtol=1e-4, atol=1e-5)
    check_node("LSTM", {"X": x}, n_outputs=3, initializers=_weights("LSTM", 1), hidden_size=H,
               activations=["HardSigmoid", "Tanh", "Softsign"], activation_alpha=[0.25],
               activation_beta=[0.45], rtol=1e-4, atol=1e-5)


def test_without_bias_only_the_final_state() -> None:
    x = RNG.standard_normal((T, B, IN)).astype(np.float32)
    from onnx import helper

    from tests.unit.frontend.onnx_check import check_model, graph_model

    w = _weights("GRU", 1, bias=False)
    node = helper.make_node("GRU", ["X", "W", "R"], ["", "out0"], hidden_size=H)
    model = graph_model([node], {"X": x}, ["out0"], w)
    check_model(model, {"X": x}, rtol=1e-4, atol=1e-5)


def test_lstm_through_the_pipeline() -> None:
    x = RNG.standard_normal((3, 1, IN)).astype(np.float32)
    check_node("LSTM", {"X": x}, n_outputs=3, initializers=_weights("LSTM", 2),
               direction="bidirectional", hidden_size=H, rtol=1e-4, atol=1e-5, pipeline=True)
