"""The roofline bound of a whole model: the yardstick every latency estimate is reported
against (DESIGN.md, "Cost model").

No schedule of the model on the chip can take less than

    max( sum over ops of FLOPs(op) / peak(dtype of op),  compulsory DDR bytes / DDR bandwidth )

- FLOPs: each op's useful arithmetic on its whole loop space (`work(loop_shape).flops`:
  two per multiply-add, one per other element operation; no padding), divided by the
  chip's published peak for the element type it computes in (FP32 21 TFLOPS,
  BF16/FP16/TF32 128, INT8 256 TOPS);
- compulsory DDR bytes: what must cross the DDR interface at least once: every weight
  (Constant / LoadConst value) once, every graph input once and every graph output once,
  in logical (compact) bytes. Padding of channel-aligned layouts, re-reads and
  intermediate spills are costs of a plan, not of the model, so the bound leaves them
  out and stays a true lower bound. A table only Gathers read (an embedding) counts the
  rows they pick - their results' bytes, at most the table -, not the whole table: a
  Gather reads its rows straight from DDR (seed 003), and BERT-base's 94 MB word
  embedding would otherwise make the bound larger than the bytes the chip moves. The
  indices are runtime data; they are taken distinct, as the estimate takes them.

The bound is attained only by a perfect machine; an estimate's ratio to it says how far a
plan is from the hardware's limit.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from tx8c.dialect.base import Tx8beOp
from tx8c.target.config import TX8Config
from tx8c.target.cost import peak_flops

# Ops that only hold or load constants (their bytes are counted as weights) or contain
# other ops (whose work is counted); every other op reports its work.
_NO_WORK = ("tx8be.Constant", "tx8be.LoadConst", "tx8be.Group")


@dataclass(frozen=True)
class Roofline:
    """The bound's parts: FLOPs per element type, compulsory bytes, and both times."""

    flops: tuple[tuple[str, int], ...]
    weight_bytes: int
    io_bytes: int
    compute_seconds: float
    memory_seconds: float

    @property
    def ddr_bytes(self) -> int:
        return self.weight_bytes + self.io_bytes

    @property
    def seconds(self) -> float:
        return max(self.compute_seconds, self.memory_seconds)

    @property
    def bound_by(self) -> str:
        return "compute" if self.compute_seconds >= self.memory_seconds else "memory"

    def as_dict(self) -> dict:
        return {
            "flops": dict(self.flops),
            "weight_bytes": self.weight_bytes,
            "io_bytes": self.io_bytes,
            "compute_seconds": self.compute_seconds,
            "memory_seconds": self.memory_seconds,
            "seconds": self.seconds,
            "bound_by": self.bound_by,
        }


def _logical_bytes(t) -> int:
    from tx8c.dialect.types import to_numpy_dtype

    count = 1
    for d in t.get_shape():
        count *= d
    return count * to_numpy_dtype(t.get_element_type()).itemsize


def _gathered_bytes(op) -> int | None:
    """The bytes of the rows the Gathers reading `op`'s value as their table pick (their
    results), or None when anything else reads it (the whole value is compulsory)."""
    uses = list(op.results[0].uses)
    if not uses or any(u.operation.name != "tx8be.Gather" or u.index != 0 for u in uses):
        return None
    return sum(_logical_bytes(u.operation.results[0].type) for u in uses)


def model_roofline(module: ModuleOp, config: TX8Config) -> Roofline:
    """The roofline bound of `module` (its functions, groups entered)."""
    flops: dict[str, int] = defaultdict(int)
    weights: dict[object, int] = {}
    gathered: dict[object, int | None] = {}  # per weight: rows Gathers pick; None: all read
    io = 0
    for op in module.walk():
        if isinstance(op, func.FuncOp):
            io += sum(_logical_bytes(t) for t in op.function_type.inputs.data)
            io += sum(_logical_bytes(t) for t in op.function_type.outputs.data)
        elif isinstance(op, Tx8beOp) and op.name in ("tx8be.Constant", "tx8be.LoadConst"):
            # one weight, once: LoadConsts of one constant share its id
            key = ("id", op.attr("const_id")) if op.name == "tx8be.LoadConst" else op
            weights[key] = _logical_bytes(op.results[0].type)
            rows, seen = _gathered_bytes(op), gathered.get(key, 0)
            gathered[key] = None if rows is None or seen is None else seen + rows
        elif isinstance(op, Tx8beOp) and op.name not in _NO_WORK:
            work = op.work(op.loop_shape())
            flops[work.dtype] += work.flops
    compute = sum(n / peak_flops(dtype, config) for dtype, n in flops.items())
    weight_bytes = sum(whole if gathered[key] is None else min(whole, gathered[key])
                       for key, whole in weights.items())
    memory = (weight_bytes + io) / config.ddr_bandwidth_bytes_per_s
    return Roofline(
        tuple(sorted(flops.items())), weight_bytes, io, compute, memory
    )
