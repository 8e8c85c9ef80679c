"""Element types of tx8be tensors and their numpy counterparts.

The dialect works on builtin ranked tensors. This module is the single table that maps
their element types to numpy dtypes (bfloat16 through ml_dtypes) and back, and names the
dtype classes the verifiers speak of.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    Signedness,
    TensorType,
    bf16,
    f16,
    f32,
    f64,
    i1,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute

ui8 = IntegerType(8, Signedness.UNSIGNED)

_NUMPY_OF: list[tuple[Attribute, np.dtype]] = [
    (f32, np.dtype(np.float32)),
    (f16, np.dtype(np.float16)),
    (bf16, np.dtype(ml_dtypes.bfloat16)),
    (f64, np.dtype(np.float64)),
    (i1, np.dtype(np.bool_)),
    (i8, np.dtype(np.int8)),
    (ui8, np.dtype(np.uint8)),
    (i16, np.dtype(np.int16)),
    (i32, np.dtype(np.int32)),
    (i64, np.dtype(np.int64)),
]
_TYPE_OF = {np_dtype: t for t, np_dtype in _NUMPY_OF}


def to_numpy_dtype(element_type: Attribute) -> np.dtype:
    """The numpy dtype of a tx8be element type; ValueError if it has none."""
    for t, np_dtype in _NUMPY_OF:
        if t == element_type:
            return np_dtype
    raise ValueError(f"element type {element_type} has no numpy counterpart")


def from_numpy_dtype(dtype: np.dtype | type) -> Attribute:
    """The tx8be element type of a numpy dtype; ValueError if it has none."""
    try:
        return _TYPE_OF[np.dtype(dtype)]
    except KeyError:
        raise ValueError(f"numpy dtype {np.dtype(dtype)} has no tx8be element type") from None


def is_float(element_type: Attribute) -> bool:
    return isinstance(element_type, Float16Type | Float32Type | Float64Type | BFloat16Type)


def is_bool(element_type: Attribute) -> bool:
    return element_type == i1


def is_int(element_type: Attribute) -> bool:
    """Integers, not counting bool."""
    return isinstance(element_type, IntegerType) and element_type != i1


def tensor(shape: Sequence[int], element_type: Attribute) -> TensorType:
    return TensorType(element_type, [int(d) for d in shape])


def tensor_of(array: np.ndarray) -> TensorType:
    return tensor(array.shape, from_numpy_dtype(array.dtype))


def dense_attr(array: np.ndarray) -> DenseIntOrFPElementsAttr:
    """A dense elements attribute holding `array` (bytes copied, C order)."""
    array = np.asarray(array, order="C")  # ascontiguousarray would make 0-d arrays 1-d
    return DenseIntOrFPElementsAttr(tensor_of(array), BytesAttr(array.tobytes()))


def dense_to_numpy(attr: DenseIntOrFPElementsAttr) -> np.ndarray:
    dtype = to_numpy_dtype(attr.get_element_type())
    shape = attr.get_shape()
    data = np.frombuffer(attr.data.data, dtype=dtype)
    if data.size == 1 and int(np.prod(shape)) != 1:  # splat
        return np.full(shape, data[0], dtype=dtype)
    return data.reshape(shape).copy()


@cache
def short_name(element_type: Attribute) -> str:
    """How an element type is written in IR (f32, bf16, i8, ...)."""
    from io import StringIO

    from xdsl.printer import Printer

    out = StringIO()
    Printer(out).print_attribute(element_type)
    return out.getvalue()
