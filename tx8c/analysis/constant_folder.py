"""Constant folding as a library: the walk of the `fold-constant` pass.

Not a pass (`tx8c/transforms/` holds passes only). `fold-constant` runs it, and so does
`fold-scale-axis` as its closing step (seed 004: FoldScaleAxis = Sequential(Backward,
Forward, FoldConstant)). What it folds, what it leaves and why are in the pass's
docstring (`tx8c/transforms/midend/fold_constant.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import ConstantLike

from tx8c.dialect.base import Tx8beOp
from tx8c.dialect.ops.backend import ConstantOp
from tx8c.errors import Tx8ComputeError
from tx8c.interfaces.traits import MemoryOp
from tx8c.ir_utils import defining_constant, erase_dead_constants, num_elements
from tx8c.sim.reference import evaluate

Evaluator = Callable[[Operation, Sequence[np.ndarray]], list[np.ndarray]]

DEFAULT_MAX_ELEMENTS = 1 << 22
"""Largest total element count of an op's operands or results folded by default (4 Mi
elements, 16 MiB of f32)."""


class ConstantFolder:
    """One forward walk that folds constant ops; `values` memoises decoded constants.

    `evaluate(op, arrays)` computes an op's results in its result types: the reference
    executor's by default, so folded values are bit-identical to running the program.
    """

    def __init__(self, max_elements: int, evaluate: Evaluator = evaluate) -> None:
        self.max_elements = max_elements
        self.evaluate_op = evaluate
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
        results = self.results_of(op)
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

    def results_of(self, op: Tx8beOp) -> list[np.ndarray] | None:
        """The op's results, or None when it has no compute (it stays an op)."""
        arrays = [self.value_of(v) for v in op.operands]
        try:
            with np.errstate(all="ignore"):  # inf/nan are values, as at run time
                return self.evaluate_op(op, arrays)
        except Tx8ComputeError:
            return None
        except Exception as e:  # a crashing compute is a bug; name the op, like the executor
            raise Tx8ComputeError(
                f"fold-constant: op '{op.name}' failed in compute: {e}"
            ) from e
