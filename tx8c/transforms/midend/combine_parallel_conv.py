"""combine-parallel-conv: parallel Convs on one input become one wider Conv and a Split.

Seed 004, CombineParallelConv2D(min_num_branches): convolutions that read the same input
with compatible kernels are computed as one convolution whose weights are theirs
concatenated along the output-channel axis (O); a `tx8be.Split` along the result's channel
axis gives each branch its channels.

Requires: tx8be ops with verified types. Convs combine when they share their input and
have: a constant weight with the same kernel size (kh, kw) (the same input channels
follow from the shared input), `groups` = 1, the same `strides`, `pads`, `dilations`,
`data_format`, `weight_format` and element type, and either all a constant bias or all
none. A group combines only with at least `min-num-branches` (default 3) such Convs.

Guarantees: the same results (each output channel is the same sum as before); the
element-wise ops that follow every branch alike are combined too (a per-channel Add right
after bias-free Convs becomes the wide Conv's bias), see `tx8c.analysis.parallel_combiner`.
Weights that no op uses any more are erased.

Departures from the seed: none in what combines (TVM's combiner also requires equal
arguments except the number of output channels, and groups = 1); the element-wise ops
after the branches are absorbed as in TVM, and a per-channel Add right after them becomes
the wide Conv's bias.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tx8c.analysis.parallel_combiner import BranchKind, combine_parallel
from tx8c.dialect.ops.conv_gemm import ConvOp
from tx8c.dialect.types import short_name
from tx8c.ir_utils import constant_array, is_constant


class ConvBranches(BranchKind):
    """Convs stacked along the output-channel axis."""

    op_class = ConvOp

    def signature(self, op: ConvOp) -> Hashable | None:
        weight, bias = op.operand_named("weight"), op.operand_named("bias")
        if not is_constant(weight) or (bias is not None and not is_constant(bias)):
            return None
        if op.attr("groups") != 1:
            return None
        return (
            op.attr("strides"), op.attr("pads"), op.attr("dilations"),
            op.attr("data_format"), op.attr("weight_format"), op.kernel_size(),
            short_name(weight.type.get_element_type()), bias is not None,
        )

    def stacked_bias(self, group: Sequence[ConvOp]) -> np.ndarray:
        """[C_out] vectors, one after the other."""
        return np.concatenate([constant_array(op.operand_named("bias")) for op in group])


@dataclass(frozen=True)
class CombineParallelConvPass(ModulePass):
    """Combine groups of at least `min_num_branches` parallel Convs (module docstring)."""

    name = "combine-parallel-conv"

    min_num_branches: int = 3

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        combine_parallel(op, ConvBranches(), self.min_num_branches)
