"""canonicalize-concat-pos: move a channel-wise op that follows a Concat to before it.

Seed 004, CanonicalizeConcatPos: when a Concat's only user is a "channel-wise,
single-input" op, that op is applied to every Concat input instead, and the Concat joins
the results: `X(Concat(t_0, .., t_k))` becomes `Concat(X(t_0), .., X(t_k))`. This brings
the Concat next to the Conv or Gemm that reads it (the seed's reason: nothing between a
concatenate and the fc/conv layer after it).

An op X qualifies when its result at every position depends only on the Concat's value at
that position and on per-position parameters that can be cut along the concat axis:

- any element-wise unary op (a subclass of `UnaryOp`: Relu, Sigmoid, Clip, Cast, ...);
- any element-wise binary op (a subclass of `BinaryOp`) whose other operand is a
  constant that does not broadcast the Concat's shape: a constant that is 1 (or absent)
  along the concat axis is shared by all pieces, one that spans the axis is cut into a
  new constant per piece (a per-channel Mul or Add by a constant is the usual case);
- `BatchNorm_Inference`: along the concat axis its four constant parameters are cut per
  piece; along another axis each piece uses them whole.

Requires: tx8be ops with verified types. Guarantees: the same results, bit for bit (each
element goes through the same op with the same parameters); the Concat has no other user
(else it would have to be kept and the op computed twice). The rewrite repeats, so a chain
of such ops all move (Concat -> Mul -> Add -> Relu ends as one Concat after three ops per
piece). Constants no op uses any more are erased.

Departures from the seed: the seed recognises ops by a channel-wise test on call nodes and
moves unary ops only; here the binary and BatchNorm cases cut their parameters per piece.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from tx8c.dialect.base import Tx8beOp
from tx8c.dialect.ops.backend import ConstantOp
from tx8c.dialect.ops.elementwise import BinaryOp, UnaryOp
from tx8c.dialect.ops.movement import ConcatenateOp
from tx8c.dialect.ops.norm import BatchNormInferenceOp
from tx8c.ir_utils import (
    aligned_along,
    constant_array,
    erase_dead_constants,
    rebuilt,
    shape_of,
    sole_user,
)

PieceBuilder = Callable[[int, SSAValue], list[Operation]]
"""Given a piece's index and value, the ops computing the moved op on that piece (the
last op's result is the piece's new value)."""


@dataclass(frozen=True)
class Pieces:
    """The Concat's inputs: their values, and where each starts and ends on the axis."""

    values: list[SSAValue]
    axis: int
    bounds: list[tuple[int, int]]

    @staticmethod
    def of(concat: ConcatenateOp) -> Pieces:
        rank = len(shape_of(concat.results[0]))
        axis = concat.axis_in_range(concat.attr("axis"), rank)
        bounds, offset = [], 0
        for value in concat.operands:
            size = shape_of(value)[axis]
            bounds.append((offset, offset + size))
            offset += size
        return Pieces(list(concat.operands), axis, bounds)

    def cut(self, array: np.ndarray, axis: int) -> list[np.ndarray]:
        """`array` cut along its `axis` like the Concat's result along the concat axis."""
        return [np.take(array, range(lo, hi), axis=axis) for lo, hi in self.bounds]


def _on_piece(op: Tx8beOp, replacements: dict[int, SSAValue]) -> Operation:
    """`op` rebuilt with the operands at the indices of `replacements` replaced."""
    return rebuilt(op, [replacements.get(i, v) for i, v in enumerate(op.operands)])


def _constant_pieces(arrays: list[np.ndarray]) -> list[ConstantOp]:
    return [ConstantOp.from_array(np.ascontiguousarray(a)) for a in arrays]


def unary_builder(op: UnaryOp, pieces: Pieces) -> PieceBuilder:
    return lambda i, value: [_on_piece(op, {0: value})]


def binary_builder(op: BinaryOp, pieces: Pieces, concat: SSAValue) -> PieceBuilder | None:
    """Per piece: the same binary op with the constant operand shared or cut."""
    index = 0 if op.operands[0] is concat else 1
    other = op.operands[1 - index]
    constant = constant_array(other)
    out_shape = shape_of(concat)
    if constant is None:  # also when both operands are the Concat
        return None
    if aligned_along(constant.shape, out_shape, pieces.axis) is None:
        return None  # the constant broadcasts the Concat to a bigger shape
    const_axis = pieces.axis - (len(out_shape) - constant.ndim)
    if const_axis < 0 or constant.shape[const_axis] == 1:
        return lambda i, value: [_on_piece(op, {index: value})]
    consts = _constant_pieces(pieces.cut(constant, const_axis))
    return lambda i, value: [
        consts[i], _on_piece(op, {index: value, 1 - index: consts[i].results[0]})
    ]


def batch_norm_builder(op: BatchNormInferenceOp, pieces: Pieces) -> PieceBuilder | None:
    """Per piece: BatchNorm with its parameters cut when it normalises the concat axis."""
    rank = len(shape_of(op.results[0]))
    axis = op.attr("axis") % rank
    if axis != pieces.axis:
        return lambda i, value: [_on_piece(op, {0: value})]
    params = [constant_array(v) for v in op.operands[1:]]
    if any(p is None for p in params):
        return None
    cut = [_constant_pieces(pieces.cut(p, 0)) for p in params]
    return lambda i, value: [
        *(c[i] for c in cut),
        _on_piece(op, {0: value, **{j + 1: c[i].results[0] for j, c in enumerate(cut)}}),
    ]


def piece_builder(op: Tx8beOp, pieces: Pieces, concat: SSAValue) -> PieceBuilder | None:
    """How to apply `op`, the Concat's only user, to each piece; None when it may not."""
    if isinstance(op, UnaryOp):
        return unary_builder(op, pieces)
    if isinstance(op, BinaryOp):
        return binary_builder(op, pieces, concat)
    if isinstance(op, BatchNormInferenceOp) and op.operands[0] is concat:
        return batch_norm_builder(op, pieces)
    return None


class MoveBeforeConcat(RewritePattern):
    """X(Concat(t_0, .., t_k)) -> Concat(X(t_0), .., X(t_k)) for a channel-wise X."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, concat: ConcatenateOp, rewriter: PatternRewriter) -> None:
        user = sole_user(concat.results[0])
        if user is None:
            return
        pieces = Pieces.of(concat)
        build = piece_builder(user, pieces, concat.results[0])
        if build is None:
            return
        new_ops: list[Operation] = []
        for i, value in enumerate(pieces.values):
            new_ops += build(i, value)
        moved = [op.results[0] for op in new_ops if not isinstance(op, ConstantOp)]
        old_inputs = list(user.operands)
        rewriter.replace(user, [*new_ops, rebuilt(concat, moved)])
        rewriter.erase(concat)
        erase_dead_constants(old_inputs, rewriter.erase)


@dataclass(frozen=True)
class CanonicalizeConcatPosPass(ModulePass):
    """Move channel-wise ops from after a Concat to before it (module docstring)."""

    name = "canonicalize-concat-pos"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(MoveBeforeConcat()).rewrite_module(op)
