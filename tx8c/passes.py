"""The registry of tx8c passes, by kebab-case name.

Each pass is an xDSL `ModulePass` in its own file under `tx8c/transforms/`. A pass is
listed here only once it is implemented; `tx8c-opt -p` and the pipeline take passes from
this table.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass


def available_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Pass name -> a function returning the pass class (imported lazily)."""

    def infer_shapes():
        from tx8c.transforms.infer_shapes import InferShapesPass

        return InferShapesPass

    return {
        "infer-shapes": infer_shapes,
    }
