"""What the layout passes share: the shape of a layout choice, its statistics, and which
ops are known at compile time.

Two passes of the layout stage choose one of two sides for every free op of a function:
`layout-preset-to-npu` (seed 002: the original arrangement or the NPU's NHWC/HWOI) and
`layout-align-to-npu` (seed 000: compact or channel-aligned). Both are written as a
`LayoutChoicePass`, the skeleton they share, given a `LayoutChoice` of four steps:

1. `build_problem(function)`: one walk over the function's block gives the free
   variables, the fixed sides and, per value, who makes it and who reads it;
2. `solve_greedy(problem)` (the seed's walk) or `solve_optimal(problem)` (an s-t minimum
   cut, `tx8c.analysis.min_cut`), chosen by the pass option `strategy`; both return one
   choice per free variable;
3. `apply_choice(problem, choice)` rewrites the block and returns the pass's statistics.

Costs follow one rule in both passes: a value's conversion to an arrangement (or family)
is paid once, however many readers need it (`FlowNetwork.pay_once` models that in the
cut). Statistics follow one convention: a `LayoutStats` dataclass of int counters, summed
over the module's functions and recorded with the pass's `strategy` under the pass's name
in the module attribute `tx8c.layout_stats` (`record_layout_stats`), which survives
printing and parsing and which `tx8c compile` copies into report.json.

This module is a library, not a pass: `tx8c/transforms/` holds the passes only, and no
pass imports another pass.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, ClassVar

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.traits import ConstantLike

from tx8c.errors import Tx8Error
from tx8c.ir_utils import read_pass_stats, record_pass_stats

STATS_ATTR = "tx8c.layout_stats"
STRATEGIES = ("greedy", "optimal")
"""How the preset and align passes place conversions: the seeds' walks or a min cut."""


def check_strategy(pass_name: str, strategy: str) -> None:
    if strategy not in STRATEGIES:
        raise Tx8Error(
            f"{pass_name}: unknown strategy '{strategy}'; use one of "
            f"{', '.join(STRATEGIES)} (e.g. {pass_name}{{strategy=greedy}})"
        )


def functions_of(module: ModuleOp) -> Iterator[func.FuncOp]:
    """The functions of `module` that have a body."""
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.body.blocks:
            yield op


def is_compile_time(op: Operation) -> bool:
    """A value known when the program is built: a constant (the `ConstantLike` trait,
    tx8be.Constant), whose conversions are folded into its stored bytes."""
    return op.has_trait(ConstantLike)


# --------------------------------------------------------------------------------------
# Statistics
# --------------------------------------------------------------------------------------


@dataclass
class LayoutStats:
    """A layout pass's counters over a module; subclasses declare int fields."""

    def add(self, other: LayoutStats) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def as_dict(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def record_layout_stats(module: ModuleOp, pass_name: str, stats: Mapping[str, int | str]):
    """Store `stats` under `pass_name` in the module attribute `tx8c.layout_stats` (it
    survives printing and parsing, so `tx8c-opt` pipelines keep it; a pass that runs
    again overwrites its own entry and keeps the others')."""
    record_pass_stats(module, STATS_ATTR, pass_name, stats)


def read_layout_stats(module: ModuleOp) -> dict[str, dict[str, int | str]]:
    """The layout statistics recorded in `module`, as plain Python values ({} if none)."""
    return read_pass_stats(module, STATS_ATTR)


def layout_traffic(stats: Mapping[str, Mapping[str, int | str]]) -> dict[str, int]:
    """What still moves bytes after the layout stage, from its passes' statistics: the
    ChannelNorms left (layout-align-opt, else layout-align-to-npu) less the ones
    fuse-channel-norm-dma folded into a DMA (those move no extra byte: the store or load
    they became moves each byte once; counted apart as `channel_norms_fused` and
    `channel_norm_bytes_fused`, the bytes they would have written), the Transposes and
    Reshapes left with the bytes they write in their family (0 for one that moves
    nothing) and the relabels (layout-relabel), and the Transposes layout-preset-to-npu
    inserted. Missing passes count 0."""
    align = stats.get("layout-align-opt", stats.get("layout-align-to-npu", {}))
    left = stats.get("layout-relabel", {})
    preset = stats.get("layout-preset-to-npu", {})
    pick = (
        (align, "channel_norms"), (align, "channel_norm_bytes"),
        (left, "transposes"), (left, "transpose_bytes"),
        (left, "reshapes"), (left, "reshape_bytes"), (left, "relabels"),
    )
    traffic = {key: int(source.get(key, 0)) for source, key in pick}
    traffic["transposes_inserted"] = int(preset.get("transposes", 0))
    fused = stats.get("fuse-channel-norm-dma", {})
    traffic["channel_norms_fused"] = int(fused.get("fused_stores", 0)) + int(
        fused.get("fused_loads", 0))
    traffic["channel_norm_bytes_fused"] = int(fused.get("fused_bytes", 0))
    traffic["channel_norms"] -= traffic["channel_norms_fused"]
    traffic["channel_norm_bytes"] -= traffic["channel_norm_bytes_fused"]
    return traffic


# --------------------------------------------------------------------------------------
# The skeleton of a layout choice
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LayoutChoice:
    """The four steps of one layout choice (see the module docstring) and its statistics."""

    stats: type[LayoutStats]
    """The pass's statistics (a dataclass of int counters)."""
    build_problem: Callable[[func.FuncOp], Any]
    """The choice of one function (requires a body)."""
    solve_greedy: Callable[[Any], Sequence[Any]]
    """The seed's walk: one choice per free variable."""
    solve_optimal: Callable[[Any], Sequence[Any]]
    """The choice with the fewest bytes converted at run time (a minimum cut)."""
    apply_choice: Callable[[Any, Sequence[Any]], LayoutStats]
    """Rewrite the problem's function for a choice; the problem is used up."""


@dataclass(frozen=True)
class LayoutChoicePass(ModulePass):
    """A pass that chooses a side for every free op of each function (see the module
    docstring): subclasses name their `LayoutChoice` (how to build, solve and apply one
    function's problem)."""

    strategy: str = "optimal"

    CHOICE: ClassVar[LayoutChoice]

    def solve(self, problem: Any) -> Sequence[Any]:
        if self.strategy == "greedy":
            return self.CHOICE.solve_greedy(problem)
        return self.CHOICE.solve_optimal(problem)

    def apply_function(self, function: func.FuncOp) -> LayoutStats:
        """Build, solve and apply the problem of one function (with a body)."""
        problem = self.CHOICE.build_problem(function)
        return self.CHOICE.apply_choice(problem, self.solve(problem))

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_strategy(self.name, self.strategy)
        stats = self.CHOICE.stats()
        for function in functions_of(op):
            stats.add(self.apply_function(function))
        record_layout_stats(op, self.name, {"strategy": self.strategy, **stats.as_dict()})
