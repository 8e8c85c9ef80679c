"""Small helpers shared by the op families."""

from __future__ import annotations

import ml_dtypes
import numpy as np

_LOW_PRECISION = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))


def upcast(*arrays: np.ndarray) -> list[np.ndarray]:
    """fp16/bf16 arrays as float32 (compute happens in fp32, results are cast back)."""
    return [a.astype(np.float32) if a.dtype in _LOW_PRECISION else a for a in arrays]


def element_bits(value: float, element_type) -> int:
    """The bits of `value` stored as one element of `element_type` (cast as numpy's
    astype does), as a signed integer of the element's width: a fill value for the C
    runtime, which copies element bits."""
    from tx8c.dialect.types import to_numpy_dtype

    element = np.asarray(value).astype(to_numpy_dtype(element_type)).reshape(1)
    return int(element.view(f"i{element.dtype.itemsize}")[0])


def broadcast_shape(*shapes: tuple[int, ...]) -> tuple[int, ...] | None:
    """numpy broadcasting of shapes, None when they do not broadcast."""
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        return None


def normalize_axis(axis: int, rank: int) -> int | None:
    """A possibly negative axis as 0..rank-1, None when out of range."""
    if -rank <= axis < rank:
        return axis % rank
    return None
