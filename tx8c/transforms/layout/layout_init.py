"""layout-init: the layouts known before transmission (seed 003, layoutInitPass).

Seed 003: "layoutInitPass initialises the layout_str of GemmOp and ConvOp; every other
op's layout_str is set to UNKNOWN". Which layout an op's attributes fix is the op's own
knowledge, `initial_layout_str()` (ShapeInference): Conv gives
"{data_format}-{weight_format}-{data_format}" (input, weight, result: "NCHW-OIHW-NCHW"),
Gemm the Tensor class of a, b and its result ("Tensor-Tensor-Tensor", "NTensor-..."),
every other op None.

Requires: nothing (any module of tx8be ops).
Guarantees: every tx8be op, nested ones included, has layout_str = initial_layout_str(),
or UNKNOWN where that is None, whatever it had before; the graph-input layouts that
layout-transmit records (argument attribute `tx8c.layout`) are removed, so a following
layout-transmit starts from the seed's starting point. Only attributes change, so the
program computes the same. O(n) in ops.

Departs from the seed: the reset of recorded graph-input layouts is an addition (the
seed's inputs have no recorded layout).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass

from tx8c.dialect.base import Tx8beOp
from tx8c.dialect.layout import UNKNOWN, set_input_layouts


@dataclass(frozen=True)
class LayoutInitPass(ModulePass):
    name = "layout-init"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for inner in op.walk():
            if isinstance(inner, Tx8beOp):
                layout = inner.initial_layout_str()
                inner.attributes["layout_str"] = StringAttr(UNKNOWN if layout is None else layout)
            elif isinstance(inner, func.FuncOp) and inner.body.blocks:
                set_input_layouts(inner, [None] * len(inner.body.block.args))
