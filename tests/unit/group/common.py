"""What the grouping tests share: running pass lists, the grouping stage, and the
bundled examples as the grouping stage gets them."""

from __future__ import annotations

from functools import cache

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import PassPipeline

from examples.make_models import MODELS
from tx8c.dialect import make_context
from tx8c.frontend.onnx.importer import import_onnx
from tx8c.ir import print_module
from tx8c.passes import available_passes
from tx8c.pipeline import (
    CompileOptions,
    constants_spec,
    grouping_spec,
    layout_spec,
    midend_spec,
)


def run(module: ModuleOp, spec: list[str]) -> ModuleOp:
    pipeline = PassPipeline.parse_spec(available_passes(), ",".join(spec))
    for p in pipeline.passes:
        p.apply(make_context(), module)
        module.verify()
    return module


def grouping(module: ModuleOp, mode: str = "default", dma_conversions: bool = False
             ) -> ModuleOp:
    """The grouping stage. Without fuse-channel-norm-dma by default: the invariants
    tested here (every compute op in one group, dense group ids, boundary bytes of the
    singles grouping) are the patterns' and group-ldst's; the fusion, which erases
    ChannelNorm groups, is tested on its own (tests/e2e/test_dma_conversions.py)."""
    options = CompileOptions(opt_group=mode, dma_conversions=dma_conversions)
    return run(module, grouping_spec(options))


@cache
def laid_out(name: str) -> str:
    """The example `name` after the mid-end, the layout and the constants stage (what the
    grouping stage gets in the pipeline: a LoadConst per use of a weight), as text."""
    module = import_onnx(MODELS[name]()).module
    return print_module(run(module, midend_spec() + layout_spec("optimal") + constants_spec()))
