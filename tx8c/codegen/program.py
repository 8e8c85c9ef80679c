"""The lowered Program: one plain-data form of a compiled module that both the cmodel and
the C emitter read, so what is simulated is what is emitted (DESIGN.md, "Backend data
model"; seed 003 "OpLibInterface": main.c load -> compute -> store, TSR / L_SHAPE /
G_SHAPE).

A Program is a list of groups in program order; a group is one instruction list per tile
(every tile that has work in it); an instruction is one of:

- `Dma`: a transfer between a window of a DDR tensor and an SPM buffer of one tile
  (`lane` "ld" = RDMA DDR -> SPM, "st" = WDMA SPM -> DDR). The DDR tensor is stored in
  its layout at its offset; the SPM buffer holds the window as a tensor of the window's
  shape in the same layout family (Cx stays Cx). A halo is simply a larger window.
- `Kernel`: one op computing one slice (`loops`: its window of the op's loop space, the
  seed's L_SHAPE: the whole shape, where the slice starts, its size). Each operand is read
  from SPM (`SpmRef`) or straight from a DDR tensor (`DdrRef`, an embedding table), with
  the window of the whole operand it holds; each result is written to SPM with its window.
  `accumulate`: combine the result with what its buffer holds (a partial sum of a
  reduction cut in time, combined with the op's `Combine`) instead of overwriting it.
- `NocReduce`: the owner tile of a reduction cut over tiles combines a partial sum held
  by another tile's SPM into its own.

`barrier` on a group: every tile finishes the group (and those before it) before any
tile starts a later one. The instructions of one tile run in list order on their lanes
(`ld`, `st`, `ne`, `ct`, `tdma`, `noc`); the cmodel's timing overlaps instructions of
different lanes as far as their SPM addresses allow, the functional run executes them in
list order.

Everything here is frozen plain data (JSON through `as_dict` / `program_from_dict`):
addresses are byte offsets, windows are `Window`s, layouts `LayoutMode` names, element
types IR names. `ops` holds each op that kernels run, once, as its IR text, so a reader
of a Program alone (the C emitter, a test) knows the op's kind and attributes.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from tx8c.interfaces.sharding import Window

LANES = ("ld", "st", "ne", "ct", "tdma", "noc")


@dataclass(frozen=True)
class DdrTensor:
    """A tensor in DDR: graph input/output, group boundary value or constant."""

    name: str
    offset: int
    shape: tuple[int, ...]
    dtype: str
    layout: str
    size: int
    kind: str
    """"input", "output", "value" (between groups) or "constant"."""


@dataclass(frozen=True)
class SpmRef:
    """A tensor of `shape` in one tile's SPM at `addr`, stored in `layout`."""

    addr: int
    shape: tuple[int, ...]
    dtype: str
    layout: str


@dataclass(frozen=True)
class DdrRef:
    """An operand a kernel reads straight from a DDR tensor (no SPM copy)."""

    tensor: str


@dataclass(frozen=True)
class Dma:
    lane: str
    tensor: str
    window: Window
    spm: SpmRef


@dataclass(frozen=True)
class Operand:
    """What a kernel reads: where, and which window of the whole operand it holds."""

    ref: SpmRef | DdrRef
    window: Window


@dataclass(frozen=True)
class Kernel:
    lane: str
    op: int
    """Index into `Program.ops`."""
    loops: Window
    operands: tuple[Operand, ...]
    results: tuple[Operand | None, ...]
    imm: SpmRef | None = None
    accumulate: bool = False


@dataclass(frozen=True)
class NocReduce:
    lane: str
    source_tile: int
    source: SpmRef
    target: SpmRef
    combine: str


Instruction = Dma | Kernel | NocReduce


@dataclass(frozen=True)
class TileProgram:
    tile: int
    instructions: tuple[Instruction, ...]


@dataclass(frozen=True)
class GroupProgram:
    group_id: int
    barrier: bool
    tiles: tuple[TileProgram, ...]
    estimate_cycles: int = 0


@dataclass(frozen=True)
class OpInfo:
    """An op kernels run: its name and IR text (attributes included)."""

    name: str
    text: str
    group_id: int
    node: int


@dataclass(frozen=True)
class Program:
    config: dict
    ddr_bytes: int
    tensors: tuple[DdrTensor, ...]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    ops: tuple[OpInfo, ...]
    groups: tuple[GroupProgram, ...]
    notes: tuple[str, ...] = field(default=())

    def tensor(self, name: str) -> DdrTensor:
        for t in self.tensors:
            if t.name == name:
                return t
        raise KeyError(name)

    def as_dict(self) -> dict:
        return asdict(self)

    def instruction_count(self) -> int:
        return sum(len(t.instructions) for g in self.groups for t in g.tiles)
