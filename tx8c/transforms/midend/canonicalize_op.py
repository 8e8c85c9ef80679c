"""canonicalize-op: a bias becomes an explicit broadcast Add; constants go on the right.

Seed 004, CanonicalizeOp, which in Relay is `BiasAddSimplifier`: `nn.bias_add(x, b,
axis)` becomes `add(x, expand_dims(b))`, the bias reshaped so that it broadcasts along
`axis` (`ExpandBiasToMatchAxis`).

tx8be has no BiasAdd op. Its bias-adds are the optional `bias` operands of Conv and Gemm
(from ONNX Conv's B and Gemm's C, and where simplify-inference or fold-scale-axis fold a
shift into a Conv or Gemm), and Adds of a per-channel constant (the exporter's Linear is
MatMul then `Add(bias, x)`). The seed's later passes want the bias-add as its own op:
peephole's PatternTransformer1 matches conv -> add -> mul and PatternTransformer2 merges
consecutive constant adds, and both read the constant as the Add's *second* operand
(`isBiasAdd`). So the canonical form here is:

- `bias-mode=split` (default, the seed's direction): a Conv or Gemm with a bias becomes
  the op without it followed by `tx8be.Add(result, addend)`. The addend is the bias
  expanded to broadcast along the channel axis: [C] -> [C, 1, 1] for NCHW Conv, [C] for
  NHWC Conv (the channel is the last dim), and the bias as it is for Gemm (it already
  broadcasts to the result), multiplied by `beta` when beta != 1. A constant bias gives
  a new Constant (computed in numpy as Gemm's compute does: float32(beta) * bias); any
  other bias gets a Reshape / a Mul by the scalar beta.
- Add and Mul (commutative) whose first operand is a Constant and second is not get their
  operands swapped, so every constant add/mul reads `op(x, constant)`.
- `bias-mode=fuse` is the reverse, for the backend (whose NE engine adds a bias for free):
  `Add(y, c)` or `Add(c, y)`, where y is the only use of a bias-free Conv or Gemm and c a
  Constant that only varies along the channel (Conv) or broadcasts to y (Gemm), becomes
  the op with bias c. The operand swap is not done in this mode.

Requires: a verified module of tx8be ops. Guarantees: the same values as before, bit for
bit in f32 (Conv and Gemm add their bias in f32 after the product, exactly as the split
Add does; Add and Mul commute exactly). In f16/bf16 the split product is rounded to the
low-precision type before the Add, where the fused op rounds once: at most one extra
rounding (tested against the documented f16 tolerance). One walk in block order: O(n).

Departure from the seed: the fuse direction is not in the seed; it is an option so the
backend end of the pipeline can undo the split once peephole has run.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import Commutative

from tx8c.dialect.base import Tx8beOp
from tx8c.dialect.ops._util import upcast
from tx8c.dialect.ops.backend import ConstantOp
from tx8c.dialect.ops.conv_gemm import ProductOp
from tx8c.dialect.ops.elementwise import AddOp, MulOp
from tx8c.dialect.ops.movement import ReshapeOp
from tx8c.dialect.types import to_numpy_dtype
from tx8c.errors import Tx8Error
from tx8c.ir_utils import defining_constant, erase_dead_constants, rebuilt, shape_of

BIAS_MODES = ("split", "fuse")


# --------------------------------------------------------------------------------------
# split: Conv/Gemm with bias -> op without bias + Add
# --------------------------------------------------------------------------------------


def _insert(ops: list[Operation], before: Operation) -> None:
    Rewriter.insert_op(ops, InsertPoint.before(before))


def _constant_addend(op: ProductOp, bias: ConstantOp) -> ConstantOp:
    """The addend of a constant bias: reshaped, times beta as Gemm's compute does it."""
    value = bias.attr("value")
    beta = op.bias_scale()
    if beta != 1.0:
        (scaled,) = upcast(value)
        value = (np.float32(beta) * scaled).astype(value.dtype)
    shape = op.bias_addend_shape(value.shape)
    return ConstantOp.from_array(value.reshape(shape))


def _computed_addend(op: ProductOp, bias: SSAValue) -> list[Operation]:
    """Ops that turn a non-constant bias into the addend (the last one's result)."""
    ops: list[Operation] = []
    beta = op.bias_scale()
    if beta != 1.0:
        dtype = to_numpy_dtype(bias.type.get_element_type())
        scale = ConstantOp.from_array(np.asarray(beta).astype(dtype))
        ops += [scale, MulOp.make([bias, scale.results[0]])]
        bias = ops[-1].results[0]
    bias_shape = shape_of(bias)
    shape = op.bias_addend_shape(bias_shape)
    if shape != bias_shape:
        ops.append(ReshapeOp.make([bias], shape=shape))
    return ops


def _addend_ops(op: ProductOp, bias: SSAValue) -> list[Operation]:
    """Ops whose last result is the addend; none when the bias already is the addend."""
    bias_shape = shape_of(bias)
    if op.bias_scale() == 1.0 and op.bias_addend_shape(bias_shape) == bias_shape:
        return []
    constant = defining_constant(bias)
    if constant is not None:
        return [_constant_addend(op, constant)]
    return _computed_addend(op, bias)


def split_bias(op: ProductOp) -> None:
    """Rewrite `op(a, b, bias)` as `Add(op(a, b), addend)`."""
    bias = op.operand_named("bias")
    addend_ops = _addend_ops(op, bias)
    addend = addend_ops[-1].results[0] if addend_ops else bias
    product = rebuilt(op, op.operands[:2], **op.unscaled_bias_attrs())
    add = AddOp.make([product.results[0], addend])
    _insert([*addend_ops, product], op)
    Rewriter.replace_op(op, add)
    erase_dead_constants([bias])


def constant_second(op: Tx8beOp) -> None:
    """`op(constant, x)` -> `op(x, constant)` for a commutative op."""
    lhs, rhs = op.operands
    if defining_constant(lhs) is not None and defining_constant(rhs) is None:
        op.operands = [rhs, lhs]


# --------------------------------------------------------------------------------------
# fuse: Add(op(a, b), c) -> op(a, b, bias)
# --------------------------------------------------------------------------------------


def _fusable_product(add: AddOp) -> tuple[ProductOp, ConstantOp] | None:
    """The bias-free Conv/Gemm and the Constant of `add`, when it is a bias-add of it."""
    for product_value, other in (add.operands, reversed(add.operands)):
        product, constant = product_value.owner, defining_constant(other)
        if (
            isinstance(product, ProductOp)
            and constant is not None
            and product.operand_named("bias") is None
            and product_value.has_one_use()
            and product_value.type == add.results[0].type
        ):
            return product, constant
    return None


def fuse_bias(add: AddOp) -> None:
    """Fold the constant of a bias-add into the bias of the Conv/Gemm it follows."""
    found = _fusable_product(add)
    if found is None:
        return
    product, constant = found
    value = constant.attr("value")
    bias = product.bias_from_addend(value, shape_of(product.results[0]))
    if bias is None:
        return
    # the constant dominates the Add, where the fused op goes: reuse it when it fits
    new_constants = [] if bias.shape == value.shape else [ConstantOp.from_array(bias)]
    bias_value = (new_constants or [constant])[0].results[0]
    fused = rebuilt(product, [*product.operands, bias_value], **product.unscaled_bias_attrs())
    _insert(new_constants, add)
    Rewriter.replace_op(add, fused)
    Rewriter.erase_op(product)
    erase_dead_constants([constant.results[0]])


# --------------------------------------------------------------------------------------
# the pass
# --------------------------------------------------------------------------------------


def canonicalize_ops(module: ModuleOp, bias_mode: str = "split") -> None:
    """Apply the rewrites of `bias_mode` to `module`, one walk in block order."""
    for op in list(module.walk()):
        if op.parent is None:  # erased by an earlier rewrite
            continue
        if bias_mode == "split":
            if isinstance(op, ProductOp) and op.operand_named("bias") is not None:
                split_bias(op)
            elif op.has_trait(Commutative):  # put the constant second
                constant_second(op)
        elif isinstance(op, AddOp):
            fuse_bias(op)


@dataclass(frozen=True)
class CanonicalizeOpPass(ModulePass):
    """Bias-adds as broadcast Adds, constants second (see the module docstring)."""

    name = "canonicalize-op"

    bias_mode: str = "split"
    """"split": Conv/Gemm bias -> broadcast Add (the seed); "fuse": the reverse."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.bias_mode not in BIAS_MODES:
            raise Tx8Error(
                f"canonicalize-op: bias-mode must be one of {', '.join(BIAS_MODES)}, "
                f"got '{self.bias_mode}'"
            )
        canonicalize_ops(op, self.bias_mode)
