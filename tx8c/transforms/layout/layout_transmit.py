"""layout-transmit: propagate layout_str from the ops that know it to the whole graph.

Implements seed 001 (LayoutTransmit) and seed 003's layoutTransmitPass. The graph is a
DAG whose ops have one layout each (their result's); some ops know it from the start
(Conv, Gemm: layout-init wrote it), and the problem is to colour every other op:

1. Backward, in reverse topological order: an op whose layout is known (from the start,
   or demanded by a consumer visited earlier in this walk) asks its operands for layouts
   with `infer_operand_layouts(result_layout)`; an op that cannot infer backward (None:
   Reshape, BroadCast) is skipped. The seed does not say what happens when consumers
   disagree; here a value takes the first layout demanded of it, which in this walk is
   its consumer latest in program order, and is never recoloured. An op with several
   results (Split) has one layout_str: the demand on its first demanded result wins.
2. Graph inputs still without a layout get the default, the Tensor class of their shape
   (seed 003: "the others are initialised to Tensor"). Constants are ops with no
   operands: the forward pass gives an undemanded one the Tensor class of its shape.
3. Forward, in topological order: every op still UNKNOWN takes
   `infer_layout(operand layouts)`; all its operands are coloured by then, so a chain
   carries its predecessor's layout down. This is the seed's chosen strategy for the
   uncertain ops, "the forward pass looks behind": a Reshape or BroadCast whose consumer
   needs a layout got it in step 1 (Conv(NHWC) -> Reshape -> Gemm: the Reshape becomes
   Tensor-class, converting between the two); one whose consumers needed nothing
   inherits its input's layout (fitted to its result) here. An op that still cannot
   tell (UNKNOWN) gets the Tensor class of its result.

The per-op rules are the op classes' (`tx8c.interfaces.shape_inference`); this pass only
walks. Each op is visited once per walk and looks only at its own operands and results:
O(n + edges), no recursion, no search for the nearest known op (the seed rejects that as
too slow on big models).

Graph-input layouts: block arguments have no layout_str, so the pass records each
input's layout in its function argument attribute `tx8c.layout` (`input_layouts` and
`set_input_layouts` of `tx8c.dialect.layout` read and write it). A recorded layout counts
as known on the next run.

Requires: functions whose body is one block of tx8be ops in SSA order (the layout stage
runs before grouping: Group bodies are not entered, a Group is one op).
Guarantees: every tx8be op of a function body has a concrete layout_str (no UNKNOWN),
every input has `tx8c.layout`; ops whose layout_str was already set keep it, so running
the pass twice changes nothing. Only attributes change: the program computes the same.

Departs from the seed: seed 003's sketch propagates recursively from Conv/Gemm in both
directions; seed 001's design (two linear walks, forward looks behind) is what is built.
Ops whose attributes fix their layout (`initial_layout_str()`) are treated as known even
if layout-init did not run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass

from tx8c.dialect.base import Tx8beOp
from tx8c.dialect.layout import (
    UNKNOWN,
    input_layouts,
    result_layout,
    set_input_layouts,
    tensor_class_layout,
)
from tx8c.interfaces.shape_inference import result_shape, shape_of

# --------------------------------------------------------------------------------------
# The three steps
# --------------------------------------------------------------------------------------


def _set_layout(op: Tx8beOp, layout: str) -> None:
    op.attributes["layout_str"] = StringAttr(layout)


def _fix_attribute_layouts(ops: Sequence[Tx8beOp]) -> None:
    """Ops whose attributes fix their layout are known (what layout-init does)."""
    for op in ops:
        if op.layout == UNKNOWN:
            fixed = op.initial_layout_str()
            if fixed is not None:
                _set_layout(op, fixed)


def _backward(ops: Sequence[Tx8beOp]) -> dict[SSAValue, str]:
    """Step 1. Returns the layouts demanded of values (graph inputs among them)."""
    demands: dict[SSAValue, str] = {}
    for op in reversed(ops):
        if op.layout == UNKNOWN:
            demanded = next((demands[r] for r in op.results if r in demands), None)
            if demanded is None:
                continue  # nothing known below it: the forward pass decides
            _set_layout(op, demanded)
        operand_layouts = op.infer_operand_layouts(result_layout(op.layout))
        if operand_layouts is None:
            continue  # Reshape, BroadCast: cannot infer backward
        for value, layout in zip(op.operands, operand_layouts, strict=True):
            if layout != UNKNOWN:
                demands.setdefault(value, layout)
    return demands


def _decide_input_layouts(
    function: func.FuncOp, demands: Mapping[SSAValue, str]
) -> dict[SSAValue, str]:
    """Step 2: recorded, else demanded, else the default (Tensor class) per input."""
    layouts = {}
    args = function.body.block.args
    for arg, recorded in zip(args, input_layouts(function), strict=True):
        if recorded == UNKNOWN:
            recorded = demands.get(arg, tensor_class_layout(shape_of(arg)))
        layouts[arg] = recorded
    return layouts


def _forward(ops: Sequence[Tx8beOp], inputs: Mapping[SSAValue, str]) -> None:
    """Step 3: every op still unknown infers its layout from its operands'."""

    def layout_of(value: SSAValue) -> str:
        owner = value.owner
        if isinstance(owner, Tx8beOp):
            return result_layout(owner.layout)
        return inputs.get(value, UNKNOWN)

    for op in ops:
        if op.layout != UNKNOWN:
            continue
        layout = op.infer_layout([layout_of(v) for v in op.operands])
        if layout == UNKNOWN:
            layout = tensor_class_layout(result_shape(op))
        _set_layout(op, layout)


def transmit_function(function: func.FuncOp) -> None:
    """Give every op of `function` and every input a concrete layout (seed 001)."""
    if not function.body.blocks:
        return
    block = function.body.block
    ops = [op for op in block.ops if isinstance(op, Tx8beOp)]
    _fix_attribute_layouts(ops)
    demands = _backward(ops)
    inputs = _decide_input_layouts(function, demands)
    _forward(ops, inputs)
    set_input_layouts(function, [inputs[arg] for arg in block.args])


@dataclass(frozen=True)
class LayoutTransmitPass(ModulePass):
    name = "layout-transmit"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in op.ops:
            if isinstance(function, func.FuncOp):
                transmit_function(function)
