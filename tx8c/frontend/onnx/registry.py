"""The converter table: ONNX op type -> one small function that converts a node.

A converter takes a `NodeContext` and returns one `Value` per ONNX output (a single
Value for single-output nodes). Converters live in `converters/<family>.py` and register
themselves with `@converter("OpType", ...)`.
"""

from __future__ import annotations

from collections.abc import Callable

import onnx

from tx8c.frontend.onnx.context import NodeContext, Value
from tx8c.frontend.onnx.loader import OnnxImportError

Converter = Callable[[NodeContext], "Value | list[Value]"]

CONVERTERS: dict[str, Converter] = {}
MAX_NAMES_LISTED = 3


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


def check_supported(graph: onnx.GraphProto) -> None:
    """One error listing every unsupported op type with counts and node names."""
    converters = load_converters()
    unsupported: dict[str, list[str]] = {}
    for index, node in enumerate(graph.node):
        key = node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}.{node.op_type}"
        if node.domain not in ("", "ai.onnx") or node.op_type not in converters:
            unsupported.setdefault(key, []).append(node.name or f"{node.op_type}_{index}")
    if not unsupported:
        return
    parts = []
    for op_type, names in sorted(unsupported.items()):
        shown = ", ".join(f"'{n}'" for n in names[:MAX_NAMES_LISTED])
        extra = len(names) - MAX_NAMES_LISTED
        more = f", and {extra} more" if extra > 0 else ""
        plural = "s" if len(names) > 1 else ""
        parts.append(f"{op_type} ({len(names)} node{plural}: {shown}{more})")
    raise OnnxImportError(
        f"the model uses {len(unsupported)} op type(s) tx8c does not support: "
        f"{'; '.join(parts)}. Replace them in the exporter (or decompose them into supported "
        "ops), or open an issue asking for them."
    )
