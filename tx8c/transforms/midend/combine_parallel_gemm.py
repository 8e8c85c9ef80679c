"""combine-parallel-gemm: parallel Gemms on one input become one wider Gemm and a Split.

Seed 004, CombineParallelDense(min_num_branches): Gemms that read the same `a` with
constant weights of compatible shapes are computed as one Gemm whose `b` is their weights
concatenated along the output (N) axis; a `tx8be.Split` along the result's last axis
gives each branch its part. The Q/K/V projections of attention are the typical case.

Requires: tx8be ops with verified types. Gemms combine when they share `a` (their first
operand) and have: a constant `b` with equal shape apart from N (same K, same batch dims),
the same `trans_a`, `trans_b`, `alpha`, `beta` and element type, and either all no bias
or all a constant bias whose shape, extended to the result's, agrees apart from N. A
group combines only with at least `min-num-branches` (default 3, like the seed) Gemms.

Guarantees: the same results (each output element is the same dot product as before, up
to the order a matmul library sums in); the element-wise ops that follow every branch alike
(the bias Add the importer writes after MatMul, activations, ...) are combined too, and a
bias Add right after bias-free Gemms becomes the wide Gemm's bias (with beta = 1), see
`tx8c.analysis.parallel_combiner`. Weights that no op uses any more are erased.

Departures from the seed: the seed's dense has a 2-D weight and no transposes; here any
Gemm with a constant `b` qualifies (batched `b` included), because its output axis N is
always the last result axis. TVM can also stack equal-width branches into one batched
matmul (`to_batch`); this pass always widens N, which needs no new batch dim and gives
the NE engine one larger matmul.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tx8c.analysis.parallel_combiner import BranchKind, combine_parallel
from tx8c.dialect.ops.conv_gemm import GemmOp
from tx8c.dialect.types import short_name
from tx8c.ir_utils import (
    aligned_along,
    constant_array,
    is_constant,
    masked,
    shape_of,
    stack_along,
)


class GemmBranches(BranchKind):
    """Gemms stacked along N, the last result axis."""

    op_class = GemmOp

    def signature(self, op: GemmOp) -> Hashable | None:
        b, bias = op.operand_named("b"), op.operand_named("bias")
        if not is_constant(b) or (bias is not None and not is_constant(bias)):
            return None
        out_shape = shape_of(op.results[0])
        axis = op.output_channel_axis()
        bias_key = None
        if bias is not None:
            aligned = aligned_along(shape_of(bias), out_shape, axis)
            if aligned is None:
                return None
            bias_key = masked(aligned, axis)
        b_shape = shape_of(b)
        return (
            masked(b_shape, len(b_shape) + op.weight_output_axis()),
            op.attr("trans_a"), op.attr("trans_b"), op.attr("alpha"), op.attr("beta"),
            short_name(b.type.get_element_type()), bias is not None, bias_key,
        )

    def stacked_bias(self, group: Sequence[GemmOp]) -> np.ndarray:
        """The biases aligned to the results and concatenated along N (the signature
        checked that they agree elsewhere)."""
        return stack_along(
            [constant_array(op.operand_named("bias")) for op in group],
            [shape_of(op.results[0]) for op in group],
            group[0].output_channel_axis(),
        )


@dataclass(frozen=True)
class CombineParallelGemmPass(ModulePass):
    """Combine groups of at least `min_num_branches` parallel Gemms (module docstring)."""

    name = "combine-parallel-gemm"

    min_num_branches: int = 3

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        combine_parallel(op, GemmBranches(), self.min_num_branches)
