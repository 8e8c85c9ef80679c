"""The ONNX importer: examples match onnxruntime, shape sub-graphs fold, Identity and
Dropout vanish, one Constant per initializer, opsets 7..26, and clear errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from examples.make_models import MODELS
from tx8c.dialect.base import Tx8beOp
from tx8c.frontend.onnx.importer import import_onnx
from tx8c.frontend.onnx.loader import OnnxImportError, load_model
from tx8c.frontend.onnx.runtime import random_inputs, run_onnxruntime
from tx8c.sim.numerics import compare_arrays
from tx8c.sim.reference import run_reference


def op_names(module) -> list[str]:
    return [op.name.removeprefix("tx8be.") for op in module.walk() if isinstance(op, Tx8beOp)]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_bundled_example_matches_onnxruntime(name: str) -> None:
    model = MODELS[name]()
    inputs = random_inputs(model, seed=1)
    expected = run_onnxruntime(model, inputs)
    result = import_onnx(model)
    got = run_reference(result.module, inputs)
    for e, g in zip(expected, got, strict=True):
        assert compare_arrays(e, g).cosine >= 0.99999


def test_shape_subgraphs_are_folded() -> None:
    result = import_onnx(MODELS["transformer_encoder"]())
    names = op_names(result.module)
    # the exporter's Shape -> Gather -> Unsqueeze -> Concat -> Reshape chains are gone:
    # only the word-embedding lookup gathers at run time, nothing concatenates
    assert names.count("Gather") == 1
    assert "Concatenate" not in names
    assert result.onnx_op_counts["Shape"] > 0


def _model(nodes, inputs, outputs, inits=(), opset=17) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def _f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def test_identity_and_dropout_disappear() -> None:
    model = _model(
        [helper.make_node("Identity", ["x"], ["a"]), helper.make_node("Dropout", ["a"], ["b"]),
         helper.make_node("Relu", ["b"], ["y"])],
        [_f32("x", [2, 3])], [_f32("y", [2, 3])],
    )
    assert op_names(import_onnx(model).module) == ["Relu"]


def test_one_constant_per_initializer_even_when_shared() -> None:
    w = numpy_helper.from_array(np.ones((2, 3), np.float32), "w")
    model = _model(
        [helper.make_node("Add", ["x", "w"], ["a"]), helper.make_node("Mul", ["a", "w"], ["y"])],
        [_f32("x", [2, 3])], [_f32("y", [2, 3])], [w],
    )
    assert sorted(op_names(import_onnx(model).module)) == ["Add", "Constant", "Mul"]


def _opset_model(opset: int) -> onnx.ModelProto:
    """Ops whose form changed across opsets 7..26 (Clip's bounds as attributes before
    opset 11, axes/split as attribute or input, Softmax's 2-D coercion before opset 13)."""
    inits = [numpy_helper.from_array(np.array(v, np.float32), n) for n, v in
             (("lo", -0.5), ("hi", 0.5))]
    as_input = opset >= 13
    if as_input:
        inits += [numpy_helper.from_array(np.array(v, np.int64), n) for n, v in
                  (("ax2", [2]), ("ax0", [0]), ("split", [1, 2]))]
    nodes = [
        helper.make_node("Softmax", ["x"], ["s"], axis=1),
        helper.make_node("Clip", ["s", "lo", "hi"], ["c"]) if opset >= 11 else
        helper.make_node("Clip", ["s"], ["c"], min=-0.5, max=0.5),
        helper.make_node("ReduceSum", ["c", "ax2"] if as_input else ["c"], ["r"],
                         **({} if as_input else {"axes": [2]})),
        helper.make_node("Squeeze", ["r", "ax2"] if as_input else ["r"], ["q"],
                         **({} if as_input else {"axes": [2]})),
        helper.make_node("Unsqueeze", ["q", "ax0"] if as_input else ["q"], ["u"],
                         **({} if as_input else {"axes": [0]})),
        helper.make_node("Split", ["u", "split"] if as_input else ["u"], ["y0", "y1"],
                         axis=2, **({} if as_input else {"split": [1, 2]})),
    ]
    return _model(nodes, [_f32("x", [2, 3, 4])], [_f32("y0", None), _f32("y1", None)],
                  inits, opset=opset)


@pytest.mark.parametrize("opset", [7, 9, 10, 11, 12, 13, 15, 17, 19, 21, 22, 23, 25, 26])
def test_opsets_7_to_26(opset: int) -> None:
    model = _opset_model(opset)
    inputs = random_inputs(model)
    expected = run_onnxruntime(model, inputs)
    got = run_reference(import_onnx(model).module, inputs)
    for e, g in zip(expected, got, strict=True):
        assert compare_arrays(e, g).cosine >= 0.99999


def test_unsupported_ops_are_listed_with_counts_and_names() -> None:
    nodes = [helper.make_node("Relu", ["x"], ["a"])]
    for i in range(5):
        nodes.append(helper.make_node("Bernoulli", ["a"], [f"c{i}"], name=f"bern{i}"))
    nodes.append(helper.make_node("RoiAlign", ["a", "r", "b"], ["h"], name="roi"))
    model = _model(nodes, [_f32("x", [2, 3])], [_f32("h", [2, 3])])
    with pytest.raises(OnnxImportError) as err:
        import_onnx(model)
    text = str(err.value)
    assert "2 op type(s)" in text
    assert "Bernoulli (5 nodes: 'bern0', 'bern1', 'bern2', and 2 more)" in text
    assert "RoiAlign (1 node: 'roi')" in text


def test_dynamic_dimension_needs_input_shapes() -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3])
    model = _model([helper.make_node("Relu", ["x"], ["y"])], [x], [_f32("y", None)])
    with pytest.raises(OnnxImportError, match="--input-shapes x:1x"):
        import_onnx(model)
    result = import_onnx(model, {"x": [4, 3]})
    assert list(result.module.ops.first.function_type.inputs.data[0].get_shape()) == [4, 3]


def test_input_shapes_naming_a_missing_input() -> None:
    model = _model([helper.make_node("Relu", ["x"], ["y"])], [_f32("x", [2])], [_f32("y", [2])])
    with pytest.raises(OnnxImportError, match="'nope', which the model does not have"):
        import_onnx(model, {"nope": [1]})


@pytest.mark.parametrize("opset", [6, 27])
def test_opset_outside_the_supported_range(opset: int) -> None:
    model = _model([helper.make_node("Relu", ["x"], ["y"])], [_f32("x", [2])], [_f32("y", [2])],
                   opset=opset)
    with pytest.raises(OnnxImportError, match=f"opset {opset}; tx8c imports opsets 7 to 26"):
        import_onnx(model)


def test_the_callers_model_is_not_modified() -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3])
    model = _model([helper.make_node("Relu", ["x"], ["y"])], [x], [_f32("y", None)])
    before = model.SerializeToString()
    import_onnx(model, {"x": [1, 3]})
    assert model.SerializeToString() == before


def test_compile_time_input_required() -> None:
    shape = helper.make_tensor_value_info("shape", TensorProto.INT64, [2])
    model = _model([helper.make_node("Reshape", ["x", "shape"], ["y"], name="r")],
                   [_f32("x", [2, 3]), shape], [_f32("y", None)])
    expected = "node 'r' \\(Reshape\\): input #1 \\('shape'\\) must"
    with pytest.raises(OnnxImportError, match=expected):
        import_onnx(model)


def test_window_shape_arithmetic_folds() -> None:
    """The shape sub-graphs of shifted-window models (Shape -> Mod -> Sub -> Range ->
    Equal -> Where on constants) fold at import: only the run-time Pad and Add remain."""
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "two"], ["h"], axis=0),
        helper.make_node("Mod", ["h", "window"], ["rest"]),
        helper.make_node("Sub", ["window", "rest"], ["short"]),
        helper.make_node("Mod", ["short", "window"], ["pad"]),
        helper.make_node("Unsqueeze", ["pad", "axis0"], ["pad_1d"]),
        helper.make_node("Concat", ["zeros3", "pad_1d", "zeros3", "pad_1d"], ["pads"], axis=0),
        helper.make_node("Pad", ["x", "pads"], ["padded"]),
        helper.make_node("Range", ["zero", "h", "one"], ["rows"]),
        helper.make_node("Mod", ["rows", "window"], ["in_window"]),
        helper.make_node("Equal", ["in_window", "zero"], ["first"]),
        helper.make_node("Where", ["first", "one_f", "zero_f"], ["mask"]),
        helper.make_node("ReduceSum", ["mask"], ["count"], keepdims=0),
        helper.make_node("Add", ["padded", "count"], ["y"]),
    ]
    ints = {"two": 2, "window": 4, "zero": 0, "one": 1, "axis0": [0], "zeros3": [0, 0, 0]}
    inits = [numpy_helper.from_array(np.array(v, np.int64), n) for n, v in ints.items()]
    inits += [numpy_helper.from_array(np.array(v, np.float32), n)
              for n, v in (("one_f", 1.0), ("zero_f", 0.0))]
    model = _model(nodes, [_f32("x", [1, 2, 6, 6])], [_f32("y", None)], inits)
    inputs = random_inputs(model)
    expected = run_onnxruntime(model, inputs)
    result = import_onnx(model)
    assert sorted(set(op_names(result.module))) == ["Add", "Constant", "Pad"]
    np.testing.assert_allclose(run_reference(result.module, inputs)[0], expected[0], rtol=1e-6)


def test_model_file_is_parsed_from_a_map_of_the_file(tmp_path, monkeypatch) -> None:
    """load_model parses the file's pages in place: no `read_bytes` copy of the whole file
    first (BERT-base: 415 MB), and the same message as parsing the bytes; an empty file,
    which cannot be mapped, still reads as an empty model (the caller's clear error)."""
    model = MODELS["transformer_encoder"]()
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    empty = tmp_path / "empty.onnx"
    empty.write_bytes(b"")

    def no_copy(self):
        raise AssertionError(f"{self} was read whole into memory")

    monkeypatch.setattr(Path, "read_bytes", no_copy)
    assert load_model(path).SerializeToString() == model.SerializeToString()
    with pytest.raises(OnnxImportError, match="holds no ONNX graph"):
        load_model(empty)
