"""ONNX element types <-> tx8be element types and numpy dtypes."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
from xdsl.ir import Attribute

from tx8c.dialect.types import from_numpy_dtype

_NUMPY = {
    onnx.TensorProto.FLOAT: np.float32,
    onnx.TensorProto.FLOAT16: np.float16,
    onnx.TensorProto.BFLOAT16: ml_dtypes.bfloat16,
    onnx.TensorProto.INT8: np.int8,
    onnx.TensorProto.UINT8: np.uint8,
    onnx.TensorProto.INT16: np.int16,
    onnx.TensorProto.INT32: np.int32,
    onnx.TensorProto.INT64: np.int64,
    onnx.TensorProto.BOOL: np.bool_,
    onnx.TensorProto.DOUBLE: np.float64,
}
# run-time tensors tx8be supports (f64 / int16 / uint8 only as compile-time constants)
RUNTIME = {
    onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16,
    onnx.TensorProto.INT8, onnx.TensorProto.INT32, onnx.TensorProto.INT64,
    onnx.TensorProto.BOOL,
}


def numpy_dtype_of(elem_type: int) -> np.dtype:
    if elem_type not in _NUMPY:
        name = onnx.TensorProto.DataType.Name(elem_type)
        raise ValueError(f"ONNX type {name} has no numpy dtype")
    return np.dtype(_NUMPY[elem_type])


def element_type_of(elem_type: int) -> Attribute:
    """The tx8be element type of a run-time ONNX tensor type; ValueError if none."""
    if elem_type not in RUNTIME:
        raise ValueError(
            "supported run-time types are float, float16, bfloat16, int8, int32, int64, bool"
        )
    return from_numpy_dtype(numpy_dtype_of(elem_type))


def cast_target_name(elem_type: int) -> str:
    """The `to` attribute of tx8be.Cast for an ONNX `to` type."""
    names = {
        onnx.TensorProto.FLOAT: "f32", onnx.TensorProto.FLOAT16: "f16",
        onnx.TensorProto.BFLOAT16: "bf16", onnx.TensorProto.INT8: "i8",
        onnx.TensorProto.INT32: "i32", onnx.TensorProto.INT64: "i64",
        onnx.TensorProto.BOOL: "i1",
    }
    if elem_type not in names:
        raise ValueError(onnx.TensorProto.DataType.Name(elem_type))
    return names[elem_type]
