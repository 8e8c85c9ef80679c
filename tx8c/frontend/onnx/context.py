"""What a converter sees: the values of the graph and the node it converts.

A `Value` is an ONNX tensor during import. It is known at compile time (`const`, a numpy
array: initializers, Constant nodes, and everything computed only from them and from
static shapes) or at run time (`ssa`, an SSA value of the module being built), or both
once a constant has been materialised as a `tx8be.Constant`.

`GraphBuilder.emit` folds an op whose operands are all compile-time values by running its
`compute()` on the spot, which is how shape sub-graphs (Shape -> Gather -> Concat ->
Reshape, ConstantOfShape, Range, ...) disappear at import: only tensor compute remains.
A compile-time value becomes one `tx8be.Constant` the first time a run-time op uses it,
so each initializer gives exactly one Constant however many ops share it.

Folding never blows up: an op on constants whose results would hold more than
`MAX_FOLD_ELEMENTS` elements, and more than its operands together, stays a run-time op
(the limit is fold-constant's default); converters that compute values themselves
(Range, ConstantOfShape, ...) check `check_fold_size` before they allocate.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
from onnx import helper
from xdsl.ir import Block, SSAValue
from xdsl.utils.exceptions import VerifyException

from tx8c.dialect.base import Tx8beOp
from tx8c.dialect.types import from_numpy_dtype, tensor_of, to_numpy_dtype
from tx8c.errors import Tx8Error
from tx8c.frontend.onnx.loader import OnnxImportError
from tx8c.sim.reference import evaluate

MAX_FOLD_ELEMENTS = 1 << 22
"""Elements a value folded at import may have when it is larger than its operands (4 Mi,
16 MiB of f32, fold-constant's default); a larger growth stays a run-time op."""
MAX_CONSTANT_ELEMENTS = 1 << 28
"""Elements any compile-time value may have (1 GiB of f32): beyond, import stops."""


def element_count(shape) -> int:
    count = 1
    for d in shape:
        count *= int(d)
    return count


class NeedsConstantError(OnnxImportError):
    """A value the compiler needs at compile time depends on run-time data."""

    def __init__(self, value_name: str, message: str):
        super().__init__(message)
        self.value_name = value_name


@dataclass(eq=False)
class Value:
    """An ONNX tensor: its static shape and dtype, and its constant data or SSA value."""

    shape: tuple[int, ...]
    dtype: np.dtype
    ssa: SSAValue | None = None
    const: np.ndarray | None = None

    @property
    def is_const(self) -> bool:
        return self.const is not None

    @property
    def rank(self) -> int:
        return len(self.shape)

    @staticmethod
    def of_const(array: np.ndarray) -> Value:
        array = np.asarray(array)
        return Value(tuple(array.shape), array.dtype, const=array)

    @staticmethod
    def of_ssa(ssa: SSAValue) -> Value:
        t = ssa.type
        return Value(
            tuple(t.get_shape()), to_numpy_dtype(t.get_element_type()), ssa=ssa
        )


class GraphBuilder:
    """Appends ops to the function being built; folds ops on compile-time values."""

    def __init__(self, block: Block):
        self.block = block
        self.constants_made = 0

    def ssa(self, value: Value) -> SSAValue:
        """The value as an SSA value, materialising a constant once."""
        if value.ssa is None:
            from tx8c.dialect.ops.backend import ConstantOp

            assert value.const is not None
            op = ConstantOp.from_array(_storable(value.const))
            self.block.add_op(op)
            value.ssa = op.results[0]
            self.constants_made += 1
        return value.ssa

    def emit(self, op_cls: type[Tx8beOp], inputs: Sequence[Value], **attrs: Any) -> list[Value]:
        """Create `op_cls` on `inputs`, or fold it when every input is a constant (and the
        result is not too large, module docstring)."""
        if all(v.is_const for v in inputs) and inputs:
            folded = self._fold(op_cls, inputs, attrs)
            if folded is not None:
                return folded
        op = op_cls.make([self.ssa(v) for v in inputs], **attrs)
        op.verify()
        self.block.add_op(op)
        return [Value.of_ssa(r) for r in op.results]

    def _fold(self, op_cls, inputs: Sequence[Value], attrs: dict) -> list[Value] | None:
        """The op's results computed now; None when they would be too large to fold."""
        arrays = [_storable(v.const) for v in inputs]
        scratch = Block(arg_types=[tensor_of(a) for a in arrays])
        op = op_cls.make(list(scratch.args), **attrs)
        try:
            op.verify()
            produced = sum(element_count(r.type.get_shape()) for r in op.results)
            consumed = sum(a.size for a in arrays)
            if produced > MAX_FOLD_ELEMENTS and produced > consumed:
                return None
            outs = evaluate(op, arrays)
        finally:
            op.drop_all_references()
        return [Value.of_const(o) for o in outs]


def _storable(array: np.ndarray) -> np.ndarray:
    """Constants as tx8be can hold them: float64 -> float32, uint/int16 -> int32."""
    array = np.asarray(array)
    try:
        from_numpy_dtype(array.dtype)
        if array.dtype != np.float64:
            return array
    except ValueError:
        pass
    if array.dtype == np.float64:
        return array.astype(np.float32)
    if np.issubdtype(array.dtype, np.integer):
        return array.astype(np.int64)
    raise OnnxImportError(f"constants of dtype {array.dtype} are not supported")


class NodeContext:
    """One ONNX node being converted: its attributes, inputs, and how to emit ops."""

    def __init__(self, node: onnx.NodeProto, name: str, opset: int,
                 inputs: list[Value | None], builder: GraphBuilder,
                 convert_subgraph: Callable[[onnx.GraphProto], list[Value]] | None = None):
        self.node = node
        self.name = name
        self.opset = opset
        self.inputs = inputs
        self.builder = builder
        self._convert_subgraph = convert_subgraph
        self._attrs = {a.name: a for a in node.attribute}

    # -- description -------------------------------------------------------------------
    @property
    def op_type(self) -> str:
        return self.node.op_type

    @property
    def num_outputs(self) -> int:
        return len(self.node.output)

    def error(self, message: str) -> OnnxImportError:
        """An import error naming this node: `raise ctx.error("...")`."""
        return OnnxImportError(self._error_text(message))

    def _error_text(self, message: str) -> str:
        return f"node '{self.name}' ({self.op_type}): {message}"

    # -- attributes ----------------------------------------------------------------------
    def attr(self, name: str, default: Any = None) -> Any:
        a = self._attrs.get(name)
        if a is None:
            return default
        value = helper.get_attribute_value(a)
        if isinstance(value, bytes):
            return value.decode()
        if isinstance(value, list) and value and isinstance(value[0], bytes):
            return [v.decode() for v in value]
        return value

    def has_attr(self, name: str) -> bool:
        return name in self._attrs

    # -- inputs --------------------------------------------------------------------------
    def has_input(self, i: int) -> bool:
        return i < len(self.inputs) and self.inputs[i] is not None

    def input(self, i: int) -> Value:
        if not self.has_input(i):
            raise self.error(f"input #{i} is required but missing")
        return self.inputs[i]

    def const(self, i: int) -> np.ndarray:
        """Input `i` as a compile-time array; an error if it is only known at run time."""
        v = self.input(i)
        if not v.is_const:
            raise NeedsConstantError(self.node.input[i], self._error_text(
                f"input #{i} ('{self.node.input[i]}') must be computable at compile time "
                "(a constant or a function of static shapes), but it depends on run-time "
                "data; tx8c compiles static graphs."
            ))
        return v.const

    def optional_const(self, i: int, default: Any = None) -> Any:
        return self.const(i) if self.has_input(i) else default

    # -- emitting --------------------------------------------------------------------------
    def emit(self, op_cls: type[Tx8beOp], inputs: Sequence[Value], **attrs: Any) -> Value:
        """Emit a single-result op (or fold it)."""
        (out,) = self.emit_multi(op_cls, inputs, **attrs)
        return out

    def emit_multi(self, op_cls, inputs: Sequence[Value], **attrs: Any) -> list[Value]:
        try:
            return self.builder.emit(op_cls, inputs, **attrs)
        except (Tx8Error, VerifyException) as e:
            raise self.error(str(e)) from None

    def convert_subgraph(self, graph: onnx.GraphProto) -> list[Value]:
        """Convert a subgraph of this node (If's branch) in the enclosing scope; its
        output values."""
        if self._convert_subgraph is None:
            raise self.error("subgraphs cannot be converted here")
        return self._convert_subgraph(graph)

    def constant(self, array: np.ndarray | Any) -> Value:
        return Value.of_const(np.asarray(array))

    def axis(self, axis: int, rank: int, what: str = "axis") -> int:
        """An ONNX axis (negative counts from the end) as 0..rank-1, or an error naming
        the node."""
        axis = int(axis)
        if not -rank <= axis < rank:
            raise self.error(
                f"{what} {axis} is out of range for a tensor of rank {rank} "
                f"(valid: {-rank}..{rank - 1})"
            )
        return axis % rank

    def check_indices(self, i: int, dims, what: str = "index") -> None:
        """When input `i` is known at compile time, every entry must lie in
        [-dim, dim - 1] (`dims` broadcasts against it: one size, or one per entry)."""
        if not self.has_input(i) or not self.input(i).is_const:
            return
        indices = np.asarray(self.input(i).const).astype(np.int64)
        dims = np.broadcast_to(np.asarray(dims, dtype=np.int64), indices.shape)
        bad = (indices < -dims) | (indices >= dims)
        if bad.any():
            at = tuple(int(p) for p in np.argwhere(bad)[0])
            raise self.error(
                f"{what} {int(indices[at])} (input #{i} '{self.node.input[i]}', at {list(at)}) "
                f"is out of range for a dimension of size {int(dims[at])} "
                f"(valid: {-int(dims[at])}..{int(dims[at]) - 1})"
            )

    def check_fold_size(self, shape: Sequence[int], what: str = "its result") -> None:
        """Fail before a converter allocates a compile-time value of `shape` larger than
        MAX_CONSTANT_ELEMENTS (or with a negative dim)."""
        if any(int(d) < 0 for d in shape):
            raise self.error(f"{what} would have a negative dimension: {list(shape)}")
        count = element_count(shape)
        if count > MAX_CONSTANT_ELEMENTS:
            raise self.error(
                f"{what} would be a compile-time tensor of {count:,} elements "
                f"(shape {list(shape)}); tx8c computes constants of up to "
                f"{MAX_CONSTANT_ELEMENTS:,} elements. Such a size usually comes from a wrong "
                "shape or --input-shapes; check them."
            )
