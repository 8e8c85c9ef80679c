"""The converter table: ONNX op type -> one small function that converts a node.

A converter takes a `NodeContext` and returns one `Value` per ONNX output (a single
Value for single-output nodes). Converters live in `converters/<family>.py` and register
themselves with `@converter("OpType", ...)`.
"""

from __future__ import annotations

from collections.abc import Callable

from tx8c.frontend.onnx.context import NodeContext, Value

Converter = Callable[[NodeContext], "Value | list[Value]"]

CONVERTERS: dict[str, Converter] = {}


def converter(*op_types: str) -> Callable[[Converter], Converter]:
    def register(fn: Converter) -> Converter:
        for op_type in op_types:
            assert op_type not in CONVERTERS, f"two converters for {op_type}"
            CONVERTERS[op_type] = fn
        return fn

    return register


def load_converters() -> dict[str, Converter]:
    """The full table (importing the converter modules registers them)."""
    from tx8c.frontend.onnx import converters  # noqa: F401

    return CONVERTERS
