"""peephole: the seed's small local rewrites (seed 004, Peephole, PatternTransformer1-5).

Each pattern is an option of the pass (all on except `fc-to-conv`):

- `conv-add-mul` (PatternTransformer1): `Mul(Add(Conv(x, W, b), a), m)` with per-channel
  constants `a`, `m` becomes `Conv(x, W * m, (b + a) * m)`; without the Mul, the Add
  alone folds into the bias (m = 1), which is what a BatchNorm after a bias-free Conv
  leaves once simplify-inference and fold-scale-axis have folded its scale. The seed's
  version is unfinished (it drops the Mul, see its commented-out line); this folds both.
- `merge-const-adds` (PatternTransformer2, which the seed left unfinished):
  `Add(Add(x, c1), c2)` becomes `Add(x, c1 + c2)` when one constant's shape broadcasts to
  the other's (so the merged constant is no bigger than the larger one).
- `concat-to-pad` (PatternTransformer3): `Add(Concat(t0, .., tk), y)`, y not constant,
  becomes `Add(Pad(tk), .. Add(Pad(t0), y))`, each `t_i` zero-padded to the concat's shape
  at its offset, when the byte cost model below says it pays.
- `fc-to-conv` (PatternTransformer5, off by default): a fully connected layer, a Gemm
  with a constant 2-D `b`, no `trans_a` and at most `fc-max-inputs` (2048) inputs K,
  becomes a 1x1 Conv on `a` reshaped to [P, K, 1, 1] (P = all of a's rows), with alpha
  folded into the weight and beta into the bias, reshaped back to the Gemm's shape.

The concat-to-pad cost model counts the bytes each op moves (it reads every operand and
writes its result), with one assumption about how the backend runs the rewritten form:
an Add that its OpAttr marks `mem_inplace` (same-shape operands) and whose operand is a
zero Pad only changes the Pad's window, so it runs as an in-place accumulate of `t_i`
into that window of the running sum (read t_i, read and write the window: 3 |t_i|). With
S the bytes of the concat's result:

- before: Concat 2S (read the pieces, write S) + Add 3S (read both, write) = 5S;
- after: the accumulates, 3S in all, plus 2S to copy `y` first when it cannot be
  overwritten (a function argument, or a value that other ops still read).

So the rewrite pays (3S < 5S) when `y` is an intermediate that only this Add reads, and
not otherwise (5S is not less than 5S); a broadcasting Add is never rewritten.

Requires: tx8be ops with verified types. Guarantees: the same results up to float
rounding (constants are combined in fp32 and cast back to their element type); constants
no op uses any more are erased. The seed runs fold-scale-axis and fold-constant again
after this pass; that is the pipeline's business.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from tx8c.dialect.base import Tx8beOp
from tx8c.dialect.ops._util import broadcast_shape, upcast
from tx8c.dialect.ops.backend import ConstantOp
from tx8c.dialect.ops.conv_gemm import ConvOp, GemmOp
from tx8c.dialect.ops.elementwise import AddOp, MulOp
from tx8c.dialect.ops.movement import ConcatenateOp, PadOp, ReshapeOp
from tx8c.ir_utils import (
    channel_vector,
    constant_array,
    erase_dead_constants,
    is_constant,
    logical_bytes,
    rebuilt,
    shape_of,
    sole_user,
)


def in_dtype_of(result: np.ndarray, like: np.ndarray) -> np.ndarray:
    """`result` (computed in fp32 or wider) cast back to the element type of `like`."""
    return np.asarray(result).astype(like.dtype)


def producer_and_constant(op: Tx8beOp, producer: type[Tx8beOp]):
    """For a binary `op` with one constant operand, (the op of class `producer` that
    computes the other operand and has no other user, the constant); (None, None) when
    `op` does not look like that."""
    for index in (0, 1):
        constant = constant_array(op.operands[1 - index])
        source = op.operands[index].owner
        if constant is not None and isinstance(source, producer):
            if sole_user(op.operands[index]) is op:
                return source, constant
    return None, None


def _replace(rewriter: PatternRewriter, op: Operation, new_ops: Sequence[Operation],
             dead: Sequence[Operation]) -> None:
    """Replace `op` by `new_ops`, erase the ops in `dead` (users first) and the constants
    that fed them or `op` and have no user left."""
    inputs = [v for o in (op, *dead) for v in o.operands]
    rewriter.replace(op, list(new_ops))
    for gone in dead:
        rewriter.erase(gone)
    erase_dead_constants(inputs, rewriter.erase)


# --------------------------------------------------------------------------------------
# PatternTransformer1: Conv -> Add -> Mul
# --------------------------------------------------------------------------------------


class FoldConvAddMul(RewritePattern):
    """Mul(Add(Conv(x, W, b), a), m) -> Conv(x, W * m, (b + a) * m), a and m per channel;
    without the Mul, Add(Conv(x, W, b), a) -> Conv(x, W, b + a).

    It matches the Add, so that the Mul is folded with it whatever order the walker
    visits them in (folding the Add alone first would leave a Conv -> Mul behind)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, add: AddOp, rewriter: PatternRewriter) -> None:
        conv, shift = producer_and_constant(add, ConvOp)
        if conv is None or not is_constant(conv.operand_named("weight")):
            return
        bias = conv.operand_named("bias")
        if bias is not None and not is_constant(bias):
            return
        out_shape = shape_of(conv.results[0])
        axis = conv.output_channel_axis()
        a = channel_vector(shift, out_shape, axis)
        if a is None or shape_of(add.results[0]) != out_shape:
            return
        mul, m = _following_scale(add, out_shape, axis)
        weight, new_bias = _scaled_weight_and_bias(conv, m, a)
        constants = [ConstantOp.from_array(weight), ConstantOp.from_array(new_bias)]
        new_conv = rebuilt(conv, [conv.operands[0], *(c.results[0] for c in constants)])
        if mul is None:
            _replace(rewriter, add, [*constants, new_conv], [conv])
        else:
            _replace(rewriter, mul, [*constants, new_conv], [add, conv])


def _following_scale(add: AddOp, out_shape: tuple[int, ...], axis: int):
    """(the Mul by a per-channel constant that alone reads `add`, that constant as a
    [C] vector), or (None, ones) when there is none."""
    mul = sole_user(add.results[0])
    if isinstance(mul, MulOp) and shape_of(mul.results[0]) == out_shape:
        index = 0 if mul.operands[0] is add.results[0] else 1
        scale = constant_array(mul.operands[1 - index])
        m = None if scale is None else channel_vector(scale, out_shape, axis)
        if m is not None:
            return mul, m
    return None, np.ones(out_shape[axis], np.float32)


def _scaled_weight_and_bias(conv: ConvOp, m: np.ndarray, a: np.ndarray):
    """(W * m along the output channels, (b + a) * m), in the weight's element type."""
    weight = constant_array(conv.operand_named("weight"))
    bias = constant_array(conv.operand_named("bias"))
    m32, a32 = m.astype(np.float32), a.astype(np.float32)
    b32 = np.zeros_like(m32) if bias is None else bias.astype(np.float32)
    along = [1] * weight.ndim
    along[conv.weight_output_axis()] = -1
    new_weight = weight.astype(np.float32) * m32.reshape(along)
    return in_dtype_of(new_weight, weight), in_dtype_of((b32 + a32) * m32, weight)


# --------------------------------------------------------------------------------------
# PatternTransformer2: Add(Add(x, c1), c2)
# --------------------------------------------------------------------------------------


class MergeConstantAdds(RewritePattern):
    """Add(Add(x, c1), c2) -> Add(x, c1 + c2) when c1 + c2 is no bigger than c1 or c2."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, outer: AddOp, rewriter: PatternRewriter) -> None:
        inner, c2 = producer_and_constant(outer, AddOp)
        if inner is None:
            return
        index = next((i for i in (1, 0) if is_constant(inner.operands[i])), None)
        if index is None:
            return
        x, c1 = inner.operands[1 - index], constant_array(inner.operands[index])
        if broadcast_shape(c1.shape, c2.shape) not in (c1.shape, c2.shape):
            return
        merged = in_dtype_of(np.add(*upcast(c1, c2)), c1)  # fp32 for fp16/bf16
        const = ConstantOp.from_array(merged)
        _replace(rewriter, outer, [const, rebuilt(outer, [x, const.results[0]])], [inner])


# --------------------------------------------------------------------------------------
# PatternTransformer3: Add(Concat(...), y) -> Add(Pad(..), ...)
# --------------------------------------------------------------------------------------


def _can_overwrite(value: SSAValue) -> bool:
    """An intermediate that only one op reads: that op may write into its buffer."""
    return not isinstance(value, BlockArgument) and value.has_one_use()


def concat_add_bytes(concat: ConcatenateOp, other: SSAValue) -> tuple[int, int]:
    """(bytes before, bytes after) of rewriting a same-shape Add(Concat, other) into
    padded accumulates, by the cost model of the module docstring."""
    total = logical_bytes(concat.results[0])
    before = 2 * total + 3 * total
    after = 3 * total + (0 if _can_overwrite(other) else 2 * total)
    return before, after


class ConcatAddToPad(RewritePattern):
    """Add(Concat(t_0..t_k), y) -> Add(Pad(t_k), .. Add(Pad(t_0), y)) when it pays."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, add: AddOp, rewriter: PatternRewriter) -> None:
        if any(is_constant(v) for v in add.operands) or not add.query_op_attr().mem_inplace:
            return
        for index in (0, 1):
            concat = add.operands[index].owner
            if (isinstance(concat, ConcatenateOp) and len(concat.operands) > 1
                    and sole_user(concat.results[0]) is add):
                other = add.operands[1 - index]
                before, after = concat_add_bytes(concat, other)
                if after < before:
                    self._rewrite(add, concat, other, rewriter)
                return

    @staticmethod
    def _rewrite(add: AddOp, concat: ConcatenateOp, other: SSAValue,
                 rewriter: PatternRewriter) -> None:
        shape = shape_of(concat.results[0])
        axis = concat.axis_in_range(concat.attr("axis"), len(shape))
        new_ops: list[Operation] = []
        offset, acc = 0, other
        for piece in concat.operands:
            size = shape_of(piece)[axis]
            pads = [0] * (2 * len(shape))
            pads[axis], pads[len(shape) + axis] = offset, shape[axis] - offset - size
            pad = PadOp.make([piece], pads=pads)
            step = rebuilt(add, [pad.results[0], acc])
            new_ops += [pad, step]
            offset, acc = offset + size, step.results[0]
        _replace(rewriter, add, new_ops, [concat])


# --------------------------------------------------------------------------------------
# PatternTransformer5: fully connected -> 1x1 Conv
# --------------------------------------------------------------------------------------


@dataclass
class FcToConv(RewritePattern):
    """Gemm(a [.., M, K], constant b) with K <= max_inputs -> Reshape, 1x1 Conv, Reshape."""

    max_inputs: int = 2048

    @op_type_rewrite_pattern
    def match_and_rewrite(self, gemm: GemmOp, rewriter: PatternRewriter) -> None:
        a, b = gemm.operand_named("a"), gemm.operand_named("b")
        if gemm.attr("trans_a") or not is_constant(b) or len(shape_of(b)) != 2:
            return
        if shape_of(a)[-1] > self.max_inputs:
            return
        out_shape = shape_of(gemm.results[0])
        bias = gemm.operand_named("bias")
        vector = None
        if bias is not None:
            vector = channel_vector(constant_array(bias), out_shape, gemm.output_channel_axis()) \
                if is_constant(bias) else None
            if vector is None:
                return
        rewriter.replace(gemm, _as_conv(gemm, vector))
        erase_dead_constants([b, *([bias] if bias is not None else [])], rewriter.erase)


def _as_conv(gemm: GemmOp, bias: np.ndarray | None) -> list[Operation]:
    """The ops computing `gemm` as Reshape -> 1x1 Conv (NCHW, OIHW) -> Reshape."""
    a = gemm.operand_named("a")
    b = constant_array(gemm.operand_named("b"))
    out_shape = shape_of(gemm.results[0])
    k, n = shape_of(a)[-1], out_shape[-1]
    rows = int(np.prod(out_shape[:-1], dtype=np.int64))
    (b32,) = upcast(b)
    matrix = b32.T if not gemm.attr("trans_b") else b32  # [N, K]
    weight = in_dtype_of(matrix * np.float32(gemm.attr("alpha")), b).reshape(n, k, 1, 1)
    constants = [ConstantOp.from_array(weight)]
    if bias is not None:
        scaled = upcast(bias)[0] * np.float32(gemm.attr("beta"))
        constants.append(ConstantOp.from_array(in_dtype_of(scaled, b)))
    to_nchw = ReshapeOp.make([a], shape=[rows, k, 1, 1])
    conv = ConvOp.make([to_nchw.results[0], *(c.results[0] for c in constants)])
    back = ReshapeOp.make([conv.results[0]], shape=list(out_shape))
    return [*constants, to_nchw, conv, back]


# --------------------------------------------------------------------------------------
# The pass
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PeepholePass(ModulePass):
    """The seed's peephole patterns, each an option (module docstring)."""

    name = "peephole"

    conv_add_mul: bool = True
    merge_const_adds: bool = True
    concat_to_pad: bool = True
    fc_to_conv: bool = False
    fc_max_inputs: int = 2048

    def patterns(self) -> list[RewritePattern]:
        chosen: list[RewritePattern] = []
        if self.conv_add_mul:
            chosen.append(FoldConvAddMul())
        if self.merge_const_adds:
            chosen.append(MergeConstantAdds())
        if self.concat_to_pad:
            chosen.append(ConcatAddToPad())
        if self.fc_to_conv:
            chosen.append(FcToConv(self.fc_max_inputs))
        return chosen

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = self.patterns()
        if patterns:
            PatternRewriteWalker(GreedyRewritePatternApplier(patterns)).rewrite_module(op)
