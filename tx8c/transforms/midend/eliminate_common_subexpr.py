"""eliminate-common-subexpr: ops that compute the same value are computed once.

Seed 004, EliminateCommonSubexpr (TVM Relay: same op, same attributes, same arguments in
the same order -> reuse the first call; `IsEqualScalar` also treats equal scalar
constants as the same argument).

Requires: a verified module of tx8be ops.
Guarantees:
- two tx8be ops of one block with the same name, the same attributes, the same operands
  in the same order and the same result types compute the same values; the later one is
  erased and its uses take the first one's results;
- two `tx8be.Constant`s of one block with the same type and the same elements, bit for bit
  (so 0.0 and -0.0, or two NaN payloads, stay apart), are merged the same way: the
  importer makes one Constant per use of a scalar (every `1.0`, `2.0`, `1e-6` of an
  exported graph), and merging them is exactly the seed's IsEqualScalar, for any size.
  A splat (`dense<1.0>`) and the same value written element by element are one constant;
- one walk in block order with a hash table per block: O(n) in ops (plus one pass over
  each constant's bytes). Merging flows forward, so duplicated chains merge in one pass.

What is compared: every attribute, including `layout_str` and `dev_info` (xDSL fills in
default values when an op is created, so `{trans_a = false}` and a plain `tx8be.Gemm` have
the same attributes).

Not merged:
- ops in different blocks: each block gets its own table. Group bodies are isolated from
  above, so nothing inside a group can reuse a value outside it, and no op is moved in or
  out of a group; ops inside one group body are merged with each other;
- ops with regions (Group) and the backend's memory moves (the `MemoryOp` trait:
  LoadConst, LoadVar, StoreVar, ChannelNorm): two DMAs of the same data are two planned
  transfers, not one value;
- ops that are not tx8be ops (func.return, tx8be.Yield).

Why not xDSL's `cse` (`xdsl.transforms.common_subexpression_elimination`): it only merges
ops it can prove side-effect free through a `MemoryEffect` trait (`Pure`,
`NoMemoryEffect`), and tx8be ops declare none, so it leaves every tx8be op alone
(tests/unit/midend/test_eliminate_common_subexpr.py checks this). Declaring
`NoMemoryEffect` on the Tx8beOp base would make the DMA ops above "pure" too, and xDSL's
key would still compare a splat constant and its full spelling as different. A
~100-line hashing CSE keyed on what tx8be ops mean is simpler than changing the base.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp
from xdsl.ir import Attribute, Block, Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from tx8c.dialect.base import Tx8beOp
from tx8c.dialect.types import to_numpy_dtype
from tx8c.interfaces.traits import MemoryOp


def dense_key(attr: DenseIntOrFPElementsAttr) -> Hashable:
    """Type and elements, bit for bit; a splat and its full spelling give one key."""
    data = attr.data.data
    try:
        itemsize = to_numpy_dtype(attr.get_element_type()).itemsize
    except ValueError:  # no numpy dtype: compare the spelling
        return attr
    count = len(data) // itemsize if itemsize else 0
    if count > 1 and data[:itemsize] == data[-itemsize:]:  # cheap test first: weights
        rows = np.frombuffer(data, dtype=np.uint8).reshape(count, itemsize)  # rarely pass
        if (rows == rows[0]).all():
            data = data[:itemsize]
    return attr.type, data


def _attr_key(value: Attribute) -> Hashable:
    return dense_key(value) if isinstance(value, DenseIntOrFPElementsAttr) else value


def op_key(op: Operation) -> Hashable | None:
    """What makes two ops compute the same value; None for ops never merged."""
    if not isinstance(op, Tx8beOp) or op.has_trait(MemoryOp):
        return None
    if op.regions or not op.results:
        return None
    attrs = tuple((name, _attr_key(value)) for name, value in sorted(op.attributes.items()))
    props = tuple(sorted(op.properties.items()))
    return op.name, tuple(op.operands), tuple(op.result_types), attrs, props


def _eliminate_in_block(block: Block) -> int:
    """Merge the duplicates of one block (and, separately, of its nested blocks)."""
    seen: dict[Hashable, Operation] = {}
    merged = 0
    for op in list(block.ops):
        for region in op.regions:
            for inner in region.blocks:
                merged += _eliminate_in_block(inner)
        key = op_key(op)
        if key is None:
            continue
        first = seen.setdefault(key, op)
        if first is not op:
            Rewriter.replace_op(op, [], list(first.results))
            merged += 1
    return merged


def eliminate_common_subexpr(module: ModuleOp) -> int:
    """Run the elimination on every block of `module`; return how many ops were erased."""
    return _eliminate_in_block(module.body.block)


@dataclass(frozen=True)
class EliminateCommonSubexprPass(ModulePass):
    """Reuse the first of ops that compute the same value (see the module docstring)."""

    name = "eliminate-common-subexpr"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        eliminate_common_subexpr(op)
