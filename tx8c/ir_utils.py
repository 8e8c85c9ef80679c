"""What passes share about the IR: constant values, sizes of values, pass statistics.

Passes never import other passes; what two of them need lives here, once.

- `dense_array(attr)`: the value of a dense elements attribute as a read-only numpy view of
  its bytes (no copy; a splat is expanded).
- `shape_of(value)`, `logical_bytes(type)` (elements x item size) and
  `stored_bytes(type, mem_layout)` (the bytes of that memory layout, padding included,
  `tx8c.target.mem_layout.byte_size`).
- `record_pass_stats` / `read_pass_stats`: a pass's statistics in a module attribute (a
  dictionary of dictionaries of ints and strings), so they survive printing and parsing.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import SSAValue

from tx8c.dialect.attrs import LayoutMode
from tx8c.dialect.types import to_numpy_dtype
from tx8c.target.config import DEFAULT_CONFIG, TX8Config
from tx8c.target.mem_layout import byte_size


def dense_array(attr: DenseIntOrFPElementsAttr) -> np.ndarray:
    """The attribute's value, a read-only view of its bytes (a splat is expanded)."""
    dtype = to_numpy_dtype(attr.get_element_type())
    shape = tuple(attr.get_shape())
    data = np.frombuffer(attr.data.data, dtype=dtype)
    if data.size == 1 and int(np.prod(shape)) != 1:  # splat: one element for all
        data = np.full(shape, data[0], dtype=dtype)
        data.flags.writeable = False
        return data
    return data.reshape(shape)


def shape_of(value: SSAValue) -> tuple[int, ...]:
    return tuple(value.type.get_shape())


def logical_bytes(t: TensorType) -> int:
    """Elements x item size: the bytes of the value without any layout padding."""
    count = 1
    for d in t.get_shape():
        count *= int(d)
    return count * to_numpy_dtype(t.get_element_type()).itemsize


def stored_bytes(t: TensorType, mem_layout: LayoutMode,
                 config: TX8Config = DEFAULT_CONFIG) -> int:
    """The bytes a value of type `t` takes in memory in `mem_layout`."""
    return byte_size(tuple(t.get_shape()), t.get_element_type(), mem_layout, config)


def record_pass_stats(module: ModuleOp, attr_name: str, pass_name: str,
                      stats: Mapping[str, int | str]) -> None:
    """Store `stats` under `pass_name` in the module attribute `attr_name`; a pass that
    runs again overwrites its own entry and keeps the others'."""
    current = module.attributes.get(attr_name)
    entries = dict(current.data) if isinstance(current, DictionaryAttr) else {}
    entries[pass_name] = DictionaryAttr(
        {
            key: StringAttr(value) if isinstance(value, str) else IntegerAttr(int(value), i64)
            for key, value in stats.items()
        }
    )
    module.attributes[attr_name] = DictionaryAttr(entries)


def read_pass_stats(module: ModuleOp, attr_name: str) -> dict[str, dict[str, int | str]]:
    """The statistics recorded under `attr_name`, as plain Python values ({} if none)."""
    current = module.attributes.get(attr_name)
    if not isinstance(current, DictionaryAttr):
        return {}
    return {
        name: {
            key: value.data if isinstance(value, StringAttr) else value.value.data
            for key, value in entry.data.items()
        }
        for name, entry in current.data.items()
    }
