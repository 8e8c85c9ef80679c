"""fold-constant: evaluate at compile time every op whose operands are all constants.

Seed 004, FoldConstant (TVM Relay `ConstantFolder` with its memoising `ConstantChecker`).

Requires: a verified module of tx8be ops (any stage before move-constant; after it the
constants are LoadConsts, which are never folded).
Guarantees:
- every foldable tx8be op whose operands are all `tx8be.Constant` results is replaced by
  one Constant per result, holding exactly what the op's `compute()` gives (through
  `tx8c.sim.reference.evaluate`, which casts to the result types), so the program's
  values are bit-identical to running it with the reference executor;
- chains fold in one pass: ops are visited once, in block order (a topological order), so
  an op whose operands were just folded is itself folded; each op is evaluated at most
  once and each Constant decoded at most once (memoised), so the pass is O(n) in ops plus
  the cost of the computes themselves;
- Constants that folding left without users are erased (and only those: dead code
  elsewhere is not this pass's business).

Not folded:
- ops whose operands or results hold more than `max-elements` elements in total (option,
  default 1 << 22 = 4 Mi elements, 16 MiB of f32). A BroadCast of a scalar to a huge
  tensor stays an op instead of becoming a huge constant; `max-elements=0` disables
  folding. The operands count too: folding decodes them to numpy arrays and runs the
  compute over them, however small the result (a Slice of a huge tensor);
- ops without a compute (LoadConst needs the constant container; compute raises
  `Tx8ComputeError`) and ops with regions (Group);
- the backend's data-movement ops ChannelNorm, LoadVar and StoreVar: their compute is the
  identity on logical values, but their real effect is on memory (an alignment
  conversion, a DMA), which folding would silently drop.

Departures from the seed: Relay folds through tuples and calls the interpreter on the
whole sub-expression; here each op is folded on its own, which gives the same result in
one forward walk. The size limit is not in the seed (issue 5 asks for it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import ConstantLike

from tx8c.dialect.base import Tx8beOp
from tx8c.dialect.ops.backend import ConstantOp
from tx8c.errors import Tx8ComputeError, Tx8Error
from tx8c.interfaces.traits import MemoryOp
from tx8c.ir_utils import defining_constant, erase_dead_constants, num_elements
from tx8c.sim.reference import evaluate

DEFAULT_MAX_ELEMENTS = 1 << 22


class ConstantFolder:
    """One forward walk that folds constant ops; `values` memoises decoded constants."""

    def __init__(self, max_elements: int) -> None:
        self.max_elements = max_elements
        self.values: dict[SSAValue, np.ndarray] = {}
        self.inputs_of_folded: dict[SSAValue, None] = {}  # ordered set
        self.folded = 0

    def run(self, module: ModuleOp) -> None:
        # walk() is pre-order, hence block order inside each block: operands are folded
        # before their users. The list is a snapshot; folded ops are skipped by `parent`.
        for op in list(module.walk()):
            if op.parent is not None and self.can_fold(op):
                self.fold(op)
        erase_dead_constants(list(self.inputs_of_folded))

    def can_fold(self, op: Operation) -> bool:
        if not isinstance(op, Tx8beOp) or op.has_trait(ConstantLike) or op.has_trait(MemoryOp):
            return False
        if op.regions or not op.operands or not op.results:
            return False
        if not all(defining_constant(v) is not None for v in op.operands):
            return False
        return self.small_enough(op)

    def small_enough(self, op: Operation) -> bool:
        """Operands and results within `max_elements` (both would be materialised)."""
        in_size = sum(num_elements(v) for v in op.operands)
        out_size = sum(num_elements(r) for r in op.results)
        return max(in_size, out_size) <= self.max_elements

    def value_of(self, value: SSAValue) -> np.ndarray:
        array = self.values.get(value)
        if array is None:
            constant = defining_constant(value)
            assert constant is not None
            array = self.values[value] = constant.attr("value")
        return array

    def fold(self, op: Tx8beOp) -> None:
        results = self.evaluate(op)
        if results is None:
            return
        constants = [ConstantOp.from_array(array) for array in results]
        Rewriter.insert_op(constants, InsertPoint.before(op))
        for old, constant, array in zip(op.results, constants, results, strict=True):
            constant.results[0].name_hint = old.name_hint
            self.values[constant.results[0]] = array
        for operand in op.operands:
            self.inputs_of_folded.setdefault(operand, None)
        Rewriter.replace_op(op, [], [c.results[0] for c in constants])
        self.folded += 1

    def evaluate(self, op: Tx8beOp) -> list[np.ndarray] | None:
        """The op's results, or None when it has no compute (it stays an op)."""
        arrays = [self.value_of(v) for v in op.operands]
        try:
            with np.errstate(all="ignore"):  # inf/nan are values, as at run time
                return evaluate(op, arrays)
        except Tx8ComputeError:
            return None
        except Exception as e:  # a crashing compute is a bug; name the op, like the executor
            raise Tx8ComputeError(
                f"fold-constant: op '{op.name}' failed in compute: {e}"
            ) from e


@dataclass(frozen=True)
class FoldConstantPass(ModulePass):
    """Evaluate constant ops at compile time (see the module docstring)."""

    name = "fold-constant"

    max_elements: int = DEFAULT_MAX_ELEMENTS
    """Largest total element count of an op's operands or results that is folded."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.max_elements < 0:
            raise Tx8Error(
                f"fold-constant: max-elements must be >= 0, got {self.max_elements} "
                "(0 disables folding)"
            )
        ConstantFolder(self.max_elements).run(op)
