"""infer-shapes: recompute every tx8be op's result types with its ShapeInference.

Requires: a module whose ops have valid operands and attributes (result types may be
stale, for example after an input shape or an attribute was edited by hand or by a tool).
Guarantees: every tx8be op's result types equal `infer_shapes()`, the function signature
matches what it returns, and the module verifies. Ops are visited in block order, so a
change flows forward through the whole graph in one walk (O(n) in ops).

Not a seed pass: it is the tool seed 003 uses inside `updateIR` after layout and slicing
changes, exposed on its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.ir import Block
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from tx8c.dialect.base import Tx8beOp
from tx8c.ir_utils import rebuilt


def _retype_block(block: Block) -> None:
    for op in list(block.ops):
        for region in op.regions:
            for inner in region.blocks:
                _retype_block(inner)
        if not isinstance(op, Tx8beOp):
            continue
        wanted = op.infer_shapes()
        if list(op.result_types) == wanted:
            continue
        Rewriter.replace_op(op, rebuilt(op, result_types=wanted))


@dataclass(frozen=True)
class InferShapesPass(ModulePass):
    name = "infer-shapes"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in op.ops:
            if not isinstance(function, func.FuncOp):
                continue
            _retype_block(function.body.block)
            ret = function.body.block.last_op
            if isinstance(ret, func.ReturnOp):
                inputs = [a.type for a in function.body.block.args]
                function.function_type = FunctionType.from_lists(
                    inputs, [o.type for o in ret.operands]
                )
