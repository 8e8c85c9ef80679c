"""What the layout passes share: their statistics in the module, and which ops are
known at compile time (their conversions are free)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from tx8c.dialect.base import Tx8beOp
from tx8c.errors import Tx8Error
from tx8c.interfaces import Engine
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


def record_layout_stats(module: ModuleOp, pass_name: str, stats: Mapping[str, int | str]):
    """Store `stats` under `pass_name` in the module attribute `tx8c.layout_stats` (it
    survives printing and parsing, so `tx8c-opt` pipelines keep it; a pass that runs
    again overwrites its own entry and keeps the others')."""
    record_pass_stats(module, STATS_ATTR, pass_name, stats)


def read_layout_stats(module: ModuleOp) -> dict[str, dict[str, int | str]]:
    """The layout statistics recorded in `module`, as plain Python values ({} if none)."""
    return read_pass_stats(module, STATS_ATTR)


def is_compile_time(op: Operation) -> bool:
    """A value known when the program is built (tx8be.Constant): no operands, no engine."""
    return (
        isinstance(op, Tx8beOp) and not op.operands
        and op.query_op_attr().engine == Engine.NONE
    )
