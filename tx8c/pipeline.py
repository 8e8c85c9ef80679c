"""The tx8c pipeline: the passes that follow ONNX import, in order.

DESIGN.md lists the stages (mid-end, layout, constants, grouping, slicing, DDR,
codegen). A stage appears here only once its passes are implemented; today the pipeline
is the import alone. `run_pipeline` runs the passes one by one, timing each and handing
the module after each pass to a callback (used for `--dump-ir-after-all` and for
`tx8c compare`'s stage-by-stage numerics).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tx8c.dialect import make_context


@dataclass(frozen=True)
class CompileOptions:
    """Options of `tx8c compile` that shape the pipeline."""

    input_shapes: dict[str, list[int]] = field(default_factory=dict)


def build_pipeline(options: CompileOptions) -> list[ModulePass]:
    """The passes after import, in order. Stages join this list as they land."""
    del options  # no stage after import takes options yet
    return []


@dataclass
class StageRecord:
    name: str
    seconds: float


def run_pipeline(
    module: ModuleOp,
    options: CompileOptions,
    after_each: Callable[[str, ModuleOp], None] | None = None,
) -> list[StageRecord]:
    """Run the pipeline on `module` in place; return the per-pass wall times."""
    ctx = make_context()
    records = []
    for p in build_pipeline(options):
        start = time.perf_counter()
        p.apply(ctx, module)
        module.verify()
        records.append(StageRecord(p.name, time.perf_counter() - start))
        if after_each is not None:
            after_each(p.name, module)
    return records
