"""Running the original ONNX model with onnxruntime, and making inputs for it.

`random_inputs` makes inputs of the right dtype and a sensible range: floats are standard
normal; an integer input that indexes a Gather (token ids) is drawn below the gathered
dimension; other integer inputs named like a mask are ones, else small non-negative
ints; bools are random.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import onnx

from tx8c.errors import Tx8Error
from tx8c.frontend.onnx.loader import OnnxImportError, graph_inputs
from tx8c.frontend.onnx.types import numpy_dtype_of


def input_specs(model: onnx.ModelProto) -> dict[str, tuple[list[int], np.dtype]]:
    """Each input's static shape and numpy dtype (shapes must already be fixed)."""
    specs = {}
    for info in graph_inputs(model):
        tt = info.type.tensor_type
        specs[info.name] = ([d.dim_value for d in tt.shape.dim], numpy_dtype_of(tt.elem_type))
    return specs


def _gather_bounds(model: onnx.ModelProto) -> dict[str, int]:
    """Inputs used as Gather indices -> the size of the gathered dimension."""
    inits = {t.name: t for t in model.graph.initializer}
    bounds = {}
    for node in model.graph.node:
        if node.op_type == "Gather" and len(node.input) > 1 and node.input[0] in inits:
            axis = next((a.i for a in node.attribute if a.name == "axis"), 0)
            bounds[node.input[1]] = int(inits[node.input[0]].dims[axis])
    return bounds


def random_inputs(model: onnx.ModelProto, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    bounds = _gather_bounds(model)
    inputs = {}
    for name, (shape, dtype) in input_specs(model).items():
        if np.issubdtype(dtype, np.floating) or dtype.name == "bfloat16":
            value = rng.standard_normal(shape).astype(dtype)
        elif dtype == np.bool_:
            value = rng.random(shape) > 0.5
        elif name in bounds:
            value = rng.integers(0, bounds[name], shape).astype(dtype)
        elif "mask" in name.lower():
            value = np.ones(shape, dtype=dtype)
        else:
            value = rng.integers(0, 4, shape).astype(dtype)
        inputs[name] = value
    return inputs


def check_inputs(model: onnx.ModelProto, inputs: Mapping[str, np.ndarray]) -> None:
    """Names, shapes and dtypes of user inputs must match the model exactly."""
    specs = input_specs(model)
    missing = [n for n in specs if n not in inputs]
    extra = [n for n in inputs if n not in specs]
    if missing or extra:
        raise Tx8Error(
            "the inputs file does not match the model's inputs: "
            + (f"missing {missing}; " if missing else "")
            + (f"unknown {extra}; " if extra else "")
            + f"the model takes {list(specs)}."
        )
    for name, (shape, dtype) in specs.items():
        value = inputs[name]
        if list(value.shape) != shape:
            raise Tx8Error(
                f"input '{name}' has shape {list(value.shape)}, the model takes {shape}."
            )
        if value.dtype != dtype:
            raise Tx8Error(f"input '{name}' has dtype {value.dtype}, the model takes {dtype}.")


def run_onnxruntime(model: onnx.ModelProto, inputs: Mapping[str, np.ndarray],
                    optimize: bool = True) -> list[np.ndarray]:
    """The model's outputs under onnxruntime (CPU), in graph output order.

    `optimize=False` runs the graph node by node as written (no graph optimisation):
    onnxruntime's optimiser fuses a QDQ model's DequantizeLinear -> op -> QuantizeLinear
    into its own integer kernels, which may round or saturate otherwise than the ONNX
    definition of each node (on AVX2 without VNNI an s8 x u8 product pair saturates in
    int16), while the unoptimised run follows the definitions."""
    import onnxruntime as ort

    try:
        options = ort.SessionOptions()
        options.log_severity_level = 3
        if not optimize:
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        sess = ort.InferenceSession(
            model.SerializeToString(), options, providers=["CPUExecutionProvider"]
        )
        return sess.run(None, dict(inputs))
    except Exception as e:
        first_line = str(e).splitlines()[0]
        raise OnnxImportError(f"onnxruntime cannot run the model: {first_line}") from None
