"""examples/make_models.py:transformer_stack and bench/bench_import.py (no timing asserts).

A 2-layer stack is valid ONNX, runs in onnxruntime, imports with tx8c, and the reference
executor on the imported module matches onnxruntime (fp32: cosine >= 0.99999).
"""

from __future__ import annotations

import importlib.util
import sys
from functools import cache
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from tx8c.frontend.onnx.importer import import_onnx
from tx8c.sim.numerics import COSINE_THRESHOLD, compare_arrays
from tx8c.sim.reference import run_reference

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str, path: Path):
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


mm = _load("tx8c_bench_make_models", ROOT / "examples" / "make_models.py")
bench = _load("tx8c_bench_import", ROOT / "bench" / "bench_import.py")


@cache
def _stack(layers: int) -> onnx.ModelProto:
    return mm.transformer_stack(layers)


def _feeds(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    mask = np.ones([1, 16], dtype=np.int64)
    mask[..., -4:] = 0
    return {"input_ids": rng.integers(0, 100, [1, 16], dtype=np.int64), "attention_mask": mask}


def test_stack_is_valid_with_unique_names_per_layer() -> None:
    model = _stack(2)
    onnx.checker.check_model(model, full_check=True)
    assert {o.domain: o.version for o in model.opset_import} == {"": 17}
    nodes = [n.name for n in model.graph.node]
    inits = [t.name for t in model.graph.initializer]
    assert all(nodes) and len(set(nodes)) == len(nodes)
    assert len(set(inits)) == len(inits)
    for i in range(2):
        assert f"encoder.layer.{i}.attention.self.query.weight" in inits
        assert f"encoder.layer.{i}.output.LayerNorm.bias" in inits
        # every layer keeps the exporter's Shape -> Gather -> Unsqueeze -> Concat sub-graphs
        scope = f"/encoder/layer.{i}/attention/self/"
        ops = [n.op_type for n in model.graph.node if n.name.startswith(scope)]
        assert ops.count("Shape") == 8 and ops.count("Concat") == 4
    assert [i.name for i in model.graph.input] == ["input_ids", "attention_mask"]
    assert [o.name for o in model.graph.output] == ["hidden_states"]
    # each extra layer adds the same nodes and its own weights
    one, two = _stack(1), model
    per_layer = len(two.graph.node) - len(one.graph.node)
    assert len(_stack(3).graph.node) - len(two.graph.node) == per_layer
    assert len(two.graph.initializer) - len(one.graph.initializer) == 16


def test_one_layer_stack_is_transformer_encoder() -> None:
    a, b = mm.transformer_stack(1), mm.transformer_encoder()
    a.doc_string = b.doc_string = ""
    assert a.SerializeToString() == b.SerializeToString()
    assert mm.transformer_stack(2).SerializeToString() == _stack(2).SerializeToString()


def test_stack_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="num_layers"):
        mm.transformer_stack(0)
    with pytest.raises(ValueError, match="divisible"):
        mm.transformer_stack(1, hidden=66, heads=4)


def test_stack_imports_and_reference_matches_onnxruntime() -> None:
    model = _stack(2)
    feeds = _feeds()
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (expected,) = sess.run(None, feeds)
    assert expected.shape == (1, 16, 64) and np.isfinite(expected).all()
    assert 0.05 < float(expected.std()) < 10.0

    result = import_onnx(model)
    assert result.onnx_nodes == len(model.graph.node)
    assert result.input_names == ["input_ids", "attention_mask"]
    assert result.output_names == ["hidden_states"]
    (got,) = run_reference(result.module, feeds)
    cmp = compare_arrays(expected, np.asarray(got))
    assert cmp.cosine >= COSINE_THRESHOLD["f32"] == 0.99999, cmp


def test_bench_helpers_smoke(capsys: pytest.CaptureFixture[str]) -> None:
    rows = [bench.measure(n, repeats=1) for n in (1, 2, 3)]
    assert [r.onnx_nodes for r in rows] == [len(_stack(n).graph.node) for n in (1, 2, 3)]
    assert all(r.tx8be_ops > 0 and r.seconds > 0 for r in rows)
    table = bench.format_table(rows)
    assert "ONNX nodes" in table and "tx8be ops" in table
    assert any("time(3x)/time(1x)" in line for line in bench.scaling_lines(rows))
    per_layer, fixed = bench.nodes_per_layer(rows)
    assert per_layer == rows[1].onnx_nodes - rows[0].onnx_nodes
    assert fixed + per_layer == rows[0].onnx_nodes
    assert any("nodes per layer" in line for line in bench.target_lines(rows, per_layer, fixed))
