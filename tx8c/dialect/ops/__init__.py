"""The tx8be ops, one module per family; each module lists its ops in `OPS`."""

from __future__ import annotations

import importlib
from types import ModuleType

FAMILIES = (
    "elementwise",
    "conv_gemm",
    "norm",
    "reduce_pool",
    "resize",
    "movement",
    "indexing",
    "sort",
    "quant",
    "backend",
)


def families() -> list[ModuleType]:
    return [importlib.import_module(f"tx8c.dialect.ops.{name}") for name in FAMILIES]
