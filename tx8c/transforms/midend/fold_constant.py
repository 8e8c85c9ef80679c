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
- ops without a compute (compute raises `Tx8ComputeError`) and ops with regions (Group);
- the backend's memory ops (the `MemoryOp` trait: LoadConst, ChannelNorm, LoadVar,
  StoreVar): their compute is the identity on logical values (or, for LoadConst, needs
  the constant container), but their real effect is on memory (a load, an alignment
  conversion, a DMA), which folding would silently drop.

The walk itself is `tx8c.analysis.constant_folder` (fold-scale-axis runs it too).

Departures from the seed: Relay folds through tuples and calls the interpreter on the
whole sub-expression; here each op is folded on its own, which gives the same result in
one forward walk. The size limit is not in the seed (issue 5 asks for it).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tx8c.analysis.constant_folder import DEFAULT_MAX_ELEMENTS, ConstantFolder
from tx8c.errors import Tx8Error
from tx8c.sim.reference import evaluate


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
        ConstantFolder(self.max_elements, evaluate).run(op)
