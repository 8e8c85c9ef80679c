"""ShapeInference interface (seed 003, ShapeInferenceOpInterface).

`infer_shapes()` derives the result types of an op from its operand types and attributes,
without changing the op. The op verifiers check that the declared result types equal the
inferred ones, and builders use it to create ops whose result types are not given.

`infer_layout()` (output `layout_str` from the operands' layouts) is implemented with the
layout-transmit pass; until then calling it raises `NotImplementedError`.
"""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType


class ShapeInference:
    def infer_shapes(self) -> list[TensorType]:
        """The result types this op must have, given its operands and attributes.

        Raises `Tx8VerifyError` when the operands and attributes are inconsistent.
        """
        raise NotImplementedError(f"{type(self).__name__} does not implement infer_shapes")

    def infer_layout(self) -> str:
        """The layout_str of this op's result, from its operands' layouts."""
        raise NotImplementedError(
            f"{type(self).__name__}.infer_layout is implemented with the layout passes"
        )
