"""layout_str and mem_layout: the vocabulary the layout passes share (seeds 001-003).

`layout_str` (mid-end, seed 003 "Tensor Layout") tells how an op's data is arranged:

- CNN feature layouts "NCHW" and "NHWC" (rank 4), CNN weight layouts "OIHW" and "HWOI";
- Tensor-class layouts "Tensor" (dim 0 is 1, or rank < 2) and "NTensor" (dim 0 > 1);
- "UNKNOWN" until the layout passes run.

An op's `layout_str` is either one token, the layout of its result (its data operands
share it), or one token per operand followed by the result's, joined by "-": Conv is
"NCHW-OIHW-NCHW" (input, weight, result; a bias is 1-D and not listed), Gemm is
"Tensor-Tensor-Tensor" (a, b, result; a bias is not listed). The layout of a value is the
last token of its defining op's `layout_str`.

`mem_layout` (backend, in `dev_info`) tells how a value is laid out in memory: compact
("Tensor"/"NTensor") or channel-aligned ("Cx"/"NCx"); the "N" forms are the batched ones
(rank >= 2 and dim 0 > 1), matching `tx8c.target.mem_layout`'s rank mapping.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, StringAttr
from xdsl.ir import Block, OpResult, SSAValue

from tx8c.dialect.attrs import LayoutMode

UNKNOWN = "UNKNOWN"
CNN_FEATURE = ("NCHW", "NHWC")
CNN_WEIGHT = ("OIHW", "HWOI")
TENSOR_CLASS = ("Tensor", "NTensor")
ALL_LAYOUTS = CNN_FEATURE + CNN_WEIGHT + TENSOR_CLASS


def split_layout_str(layout_str: str) -> list[str]:
    """The tokens of a layout_str ("NCHW-OIHW-NCHW" -> ["NCHW", "OIHW", "NCHW"])."""
    return layout_str.split("-")


def join_layout_str(tokens: Sequence[str]) -> str:
    return "-".join(tokens)


def result_layout(layout_str: str) -> str:
    """The layout of the op's result: the last token."""
    return split_layout_str(layout_str)[-1]


def value_layout(value: SSAValue) -> str:
    """The layout of a value: its defining op's result layout; for a function argument,
    the layout layout-transmit recorded in its `tx8c.layout` attribute (else UNKNOWN)."""
    owner = value.owner
    if not isinstance(value, OpResult):  # an argument; see ir_utils.stored_layout
        return _argument_layout(owner, value)
    layout = owner.attributes.get("layout_str")  # every tx8be op has one
    if layout is None:
        return UNKNOWN
    return layout.data.rpartition("-")[2]  # result_layout, without two calls: the
    # grouping stage asks it of every value it loads or stores


def _argument_layout(block: Block, value: SSAValue) -> str:
    parent = block.parent_op()
    if isinstance(parent, func.FuncOp) and parent.arg_attrs is not None:
        entry = parent.arg_attrs.data[value.index].data.get(INPUT_LAYOUT_ATTR)
        if entry is not None:
            return entry.data
    return UNKNOWN


# --------------------------------------------------------------------------------------
# Graph-input layouts (function argument attributes)
# --------------------------------------------------------------------------------------

INPUT_LAYOUT_ATTR = "tx8c.layout"
"""The function argument attribute that holds a graph input's layout (block arguments
have no layout_str; layout-transmit records each input's layout here)."""


def _arg_dicts(function: func.FuncOp) -> list[dict]:
    n = len(function.body.block.args)
    if function.arg_attrs is None:
        return [{} for _ in range(n)]
    return [dict(d.data) for d in function.arg_attrs.data]


def input_layouts(function: func.FuncOp) -> list[str]:
    """The recorded layout of each function input, UNKNOWN where none is recorded."""
    return [
        d[INPUT_LAYOUT_ATTR].data if INPUT_LAYOUT_ATTR in d else UNKNOWN
        for d in _arg_dicts(function)
    ]


def set_input_layouts(function: func.FuncOp, layouts: Sequence[str | None]) -> None:
    """Record each input's layout; None removes the record."""
    dicts = _arg_dicts(function)
    for entry, layout in zip(dicts, layouts, strict=True):
        entry.pop(INPUT_LAYOUT_ATTR, None)
        if layout is not None:
            entry[INPUT_LAYOUT_ATTR] = StringAttr(layout)
    if function.arg_attrs is None and not any(dicts):
        return  # nothing to record: keep the signature free of empty dictionaries
    function.arg_attrs = ArrayAttr([DictionaryAttr(d) for d in dicts])


def is_cnn(layout: str) -> bool:
    return layout in CNN_FEATURE or layout in CNN_WEIGHT


def tensor_class_layout(shape: Sequence[int]) -> str:
    """"Tensor" when dim 0 is 1 (or rank < 2), else "NTensor" (seed 003)."""
    return "NTensor" if len(shape) >= 2 and shape[0] > 1 else "Tensor"


def mem_layout_for(shape: Sequence[int], aligned: bool) -> LayoutMode:
    """The mem_layout of a value of this shape: Cx/NCx when aligned, else Tensor/NTensor."""
    batched = len(shape) >= 2 and shape[0] > 1
    if aligned:
        return LayoutMode.NCx if batched else LayoutMode.Cx
    return LayoutMode.NTensor if batched else LayoutMode.Tensor


def is_aligned(mem_layout: LayoutMode) -> bool:
    return mem_layout in (LayoutMode.Cx, LayoutMode.NCx)
