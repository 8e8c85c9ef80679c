"""The lowered Program: one plain-data form of a compiled module that both the cmodel and
the C emitter read, so what is simulated is what is emitted (DESIGN.md, "Backend data
model"; seed 003 "OpLibInterface": main.c load -> compute -> store, TSR / L_SHAPE /
G_SHAPE).

A Program is a list of groups in program order; a group is one instruction list per tile
(every tile that has work in it); an instruction is one of:

- `Dma`: a transfer between a window of a DDR tensor and an SPM buffer of one tile
  (`lane` "ld" = RDMA DDR -> SPM, "st" = WDMA SPM -> DDR). The DDR tensor is stored in
  its layout at its offset; the SPM buffer holds the window `held` (the moved `window`
  unless given; a store may write back part of a buffer that also holds a halo) as a
  tensor of `held`'s shape in the same layout family (Cx stays Cx). A halo is simply a
  larger window.
- `Kernel`: one op computing one slice (`loops`: its window of the op's loop space, the
  seed's L_SHAPE: the whole shape, where the slice starts, its size). Each operand is read
  from SPM (`SpmRef`) or straight from a DDR tensor (`DdrRef`, an embedding table), with
  the window of the whole operand it holds; each result is written to SPM with its window.
  `accumulate`: combine the result with what its buffer holds (a partial sum of a
  reduction cut in time, combined with the op's `Combine`) instead of overwriting it.
- `NocReduce`: the owner tile of a reduction cut over tiles combines a partial sum held
  by another tile's SPM into its own. It waits until the source tile has run its
  instruction `after` (the last one writing that partial sum), and the source tile
  does not overwrite `source` before the owner has read it (a semaphore pair in C; the
  cmodel orders the two the same way).
- `NocCopy`: one destination of a multicast load. Several tiles of a group load the
  same window of the same DDR tensor at the same step; the source tile (the highest
  index among them) runs the `Dma`, and every other tile gets a `NocCopy` of the
  source's SPM buffer into its own buffer (the one its `Dma` would have filled), after
  the source's instruction `after` (that `Dma`); the source does not overwrite the
  buffer before every copy has read it (the NocReduce's semaphore pair). The bytes are
  read from DDR once (`tx8c.target.cost` "NoC multicast" says what the NoC does).

Every instruction carries `step`, the time step of its tile it belongs to (for
messages and for reading the Program as loops).

A `Dma` of a "resident" tensor moves the same window between the tile's buffer and the
tensor's pages in the tiles' SPM, over the NoC (no DDR).

A group with `group_tag` 2 (relabels only, `kind` "ddr") has no instructions: each of
its results is an `alias` DdrTensor at the offset of the tensor it relabels (same
bytes, another shape), so it costs nothing; it still carries its barrier.

**Cross-group overlap.** An instruction marked `early` (a `Dma` load, a `NocCopy` of
such a load) may start before its tile's previous group ends - before that group's
barrier too - once the instructions before it on its lane have started, every
instruction of that previous group touching its SPM range (on its tile, or reading it
over the NoC) has finished, and - for a load of a value, not a constant - every store of
an earlier group into the bytes it reads has finished: the stores of the groups the tile
may still be running beside it (from the first group of its previous group's barrier
epoch on), those of the same tensor whose windows meet its window, and any into the
same bytes under another name (an alias) whole. A constant is read-only DDR and waits
for no store; a graph input is written before the run. Early instructions are a prefix
of their lane in their tile's list, and write only bytes below the `spm_limit` of every
group the tile may run beside them (above it an epoch's resident values may live). The
lowering (`lower_module(overlap=True)`) marks them, puts the first loads of values no
group it may run beside writes first, and mirrors every other group's buffers from the
top of its region (`mirrored`), so that consecutive groups' buffers tend to be disjoint.

A sequential reader (the C emitter today) runs them in list order as any other, which
honours every dependency above (the barrier orders more). To start them early, the
emitted C must replace the barrier before an early instruction by waits on exactly
those dependencies: per tile, a counter of finished instructions of its previous group
(the SPM ranges: the early load may issue once that count covers the last instruction
touching its buffer, and the NoC readers of other tiles have signalled theirs), and per
producing tile a counter of finished stores (the load of a value waits until each tile
whose stores write its window has passed the last such store: the semaphore pair the
NocReduce uses, one per store stream). cmodel v2 times and checks them so: a load that
starts before the store of its bytes reads another tensor's bytes (an error naming the
load), one that overwrites a live buffer gives a wrong answer or an error.

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

import gzip
import json
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field, fields, is_dataclass
from functools import lru_cache
from operator import attrgetter

from tx8c.interfaces.sharding import Window
from tx8c.target.config import TX8Config
from tx8c.target.mem_layout import byte_size

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
    """"input", "output", "value" (between groups), "constant", "alias" (a relabel
    group's result: the bytes of `alias_of` under another shape) or "resident" (a value
    between groups kept in the tiles' SPM: `offset` is the SPM address of its first page
    on every tile, `page` its page size; page p of its stored bytes lives on tile
    p mod tiles at `offset + (p div tiles) * page`, `tx8c.analysis.spm_resident`)."""
    alias_of: str | None = None
    page: int = 0
    """Bytes of a page of a "resident" tensor (0 for the others)."""


@lru_cache(maxsize=65536)
def stored_size(shape: tuple[int, ...], dtype: str, layout: str, config: TX8Config) -> int:
    """Bytes of a `shape` tensor of `dtype` stored in `layout` (`mem_layout.byte_size`),
    remembered: the same shapes recur at every step of every tile."""
    return byte_size(shape, dtype, layout, config)


@dataclass(frozen=True)
class SpmRef:
    """A tensor of `shape` in one tile's SPM at `addr`, stored in `layout`."""

    addr: int
    shape: tuple[int, ...]
    dtype: str
    layout: str

    def byte_range(self, config: TX8Config) -> tuple[int, int]:
        """The bytes [start, end) of the tile's SPM the tensor occupies (its stored size
        remembered per shape, dtype and layout: `_STORED`)."""
        key = (self.shape, self.dtype, self.layout)
        found = _STORED.get(key)
        if found is None or found[0] is not config:
            found = _STORED[key] = (config, stored_size(self.shape, self.dtype, self.layout,
                                                        config))
        return self.addr, self.addr + found[1]


_STORED: dict[tuple, tuple[TX8Config, int]] = {}
"""(shape, dtype, layout) -> (the config last asked, `stored_size`) for
`SpmRef.byte_range`: a Program's SpmRefs have a few dozen shapes and cmodel v2 asks for
100 000 ranges on BERT-base (2 us each to compute). Another config computes again."""


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
    held: Window | None = None
    """The window of the tensor the SPM buffer holds (None: `window`)."""
    step: int = 0
    kind: str = "dma"
    early: bool = False
    """May start before the tile's previous group ends (see "Cross-group overlap")."""

    @property
    def spm_window(self) -> Window:
        return self.window if self.held is None else self.held


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
    step: int = 0
    kind: str = "kernel"


@dataclass(frozen=True)
class NocTransfer:
    """An instruction that reads another tile's SPM over the NoC, once that tile's
    instruction `after` is done."""

    lane: str
    source_tile: int
    source: SpmRef
    target: SpmRef
    after: int = -1
    """Index of the source tile's instruction after which `source` is complete."""
    step: int = 0
    kind: str = "noc"


@dataclass(frozen=True)
class NocReduce(NocTransfer):
    """Combine the source tile's partial result into `target` (a reduction over tiles)."""

    combine: str = field(kw_only=True)


@dataclass(frozen=True)
class NocCopy(NocTransfer):
    """Copy the source tile's window (its `Dma` filled it) into `target` (multicast)."""

    kind: str = "copy"
    early: bool = False
    """May start before the tile's previous group ends (see "Cross-group overlap")."""


Instruction = Dma | Kernel | NocReduce | NocCopy


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
    kind: str = "sliced"
    """"sliced" (group_tag 0: runs in SPM from its plan) or "ddr" (relabels only)."""
    spm_limit: int = 0
    """The top of the SPM region the group's buffers lie in (`spm_bytes_per_tile` less
    the spm-resident reserve of its epoch; 0: not recorded)."""
    mirrored: bool = False
    """Its buffers were mirrored from the top of that region (cross-group overlap)."""
    chain_cycles: int | None = None
    """Its share of the model's chained estimate (`tx8c.slicing.overlap`: its cycles
    less what of its early loads the previous group's tail hides; 0 when they hide it
    all); None: not recorded (`estimate_cycles` is its share)."""

    @property
    def share_cycles(self) -> int:
        """Its share of the model's estimate: `chain_cycles`, else `estimate_cycles`."""
        return self.estimate_cycles if self.chain_cycles is None else self.chain_cycles


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
        found = self._by_name().get(name)
        if found is None:
            raise KeyError(name)
        return found

    def _by_name(self) -> dict[str, DdrTensor]:
        cached = self.__dict__.get("_tensor_index")
        if cached is None:
            cached = {t.name: t for t in self.tensors}
            object.__setattr__(self, "_tensor_index", cached)
        return cached

    def as_dict(self) -> dict:
        """The Program as plain data (what `dataclasses.asdict` gives, built without its
        per-leaf deepcopy: the leaves are immutable ints and strings)."""
        return _plain(self)

    def to_json(self) -> str:
        """`json.dumps(self.as_dict(), separators=(",", ":"))`, the same text, written
        straight from the objects (the encoder asks `_json_default` for each dataclass's
        fields): on ResNet-50 1.5 s instead of 4.5 s, and no 15 MB dict tree held. A
        Program is a tree of frozen dataclasses and tuples (no cycles), so the encoder's
        check for circular references is off (a tenth of its time on BERT-base)."""
        return json.dumps(self, separators=(",", ":"), default=_json_default,
                          check_circular=False)

    def to_file_bytes(self) -> bytes:
        """The bytes of `program.json.gz`: `to_json()` (and a newline) gzip-compressed.
        A Program's JSON is mostly repeated keys and small numbers (ResNet-50: 15.4 MB of
        text, 0.57 MB compressed), and the output directory should be about the size of
        the weights (issue 9). No timestamp in the gzip header, so compiling twice gives
        the same bytes; `zcat program.json.gz | jq` reads it."""
        return gzip.compress((self.to_json() + "\n").encode(), compresslevel=6, mtime=0)

    def instruction_count(self) -> int:
        return sum(len(t.instructions) for g in self.groups for t in g.tiles)


# --------------------------------------------------------------------------------------
# JSON
# --------------------------------------------------------------------------------------


_FIELDS: dict[type, tuple[tuple[str, ...], Callable]] = {}
_ATOMS = frozenset((int, str, float, bool, type(None)))


def _fields_of(value) -> dict:
    """A dataclass instance's fields as a dict in field order (not recursive): the field
    names and a getter of all of them (`operator.attrgetter`) built once per class."""
    found = _FIELDS.get(type(value))
    if found is None:
        found = _FIELDS[type(value)] = _field_getter(value)
    names, get_all = found
    return dict(zip(names, get_all(value)))


def _field_getter(value) -> tuple[tuple[str, ...], Callable]:
    names = tuple(f.name for f in fields(value))
    get = attrgetter(*names)
    return names, (get if len(names) > 1 else lambda v: (get(v),))


def _plain(value):
    """`value` with every dataclass turned into a dict of its fields (in field order),
    tuples and lists rebuilt with plain members, dicts copied; other leaves as they are.

    `dataclasses.asdict` does the same but deep-copies every leaf, looks up the fields
    per object and rebuilds every tuple of ints (ResNet-50's Program has 300k objects and
    two million leaves); a tuple of atoms is returned as it is here.
    """
    kind = type(value)
    if is_dataclass(kind):
        return {name: _plain(v) for name, v in _fields_of(value).items()}
    if kind is tuple:
        if _ATOMS.issuperset(map(type, value)):
            return value  # a shape or window bound: already plain and immutable
        return tuple(_plain(v) for v in value)
    if kind is list:
        return [_plain(v) for v in value]
    if kind is dict:
        return {_plain(k): _plain(v) for k, v in value.items()}
    return value


_AS_JSON: dict[type, Callable] = {}
"""Per dataclass of a Program, its `_json_default` (`_as_json_of`), made once."""


def _json_default(value):
    """What the JSON encoder writes for a dataclass of a Program: its fields as a dict
    in field order (the encoder calls it 200k times on ResNet-50)."""
    found = _AS_JSON.get(type(value))
    if found is None:
        if not is_dataclass(type(value)):
            raise TypeError(f"{type(value).__name__} in a Program is not JSON data")
        found = _AS_JSON[type(value)] = _as_json_of(type(value))
    return found(value)


def _as_json_of(cls: type) -> Callable:
    """`_fields_of` for instances of `cls`, or faster, the instance's own `__dict__`
    when it holds exactly the fields: a dataclass whose fields are all set by its
    `__init__` (in field order: the dict's order) and that has a `__dict__`. An instance
    with more in its `__dict__` (a cached property: Window's shape, a third of BERT-base's
    Windows) gets its fields picked from it."""
    names = tuple(f.name for f in fields(cls))
    if "__dict__" not in dir(cls) or not all(f.init for f in fields(cls)):
        return _fields_of
    count = len(names)

    def as_json(value) -> dict:
        own = value.__dict__
        return own if len(own) == count else {name: own[name] for name in names}

    return as_json


def _window(data) -> Window:
    return Window(tuple(data["start"]), tuple(data["stop"]))


def _maybe_window(data) -> Window | None:
    return None if data is None else _window(data)


def _spm(data) -> SpmRef:
    return SpmRef(data["addr"], tuple(data["shape"]), data["dtype"], data["layout"])


def _operand(data) -> Operand | None:
    if data is None:
        return None
    ref = data["ref"]
    return Operand(DdrRef(ref["tensor"]) if "tensor" in ref else _spm(ref),
                   _window(data["window"]))


def _instruction(data) -> Instruction:
    kind = data["kind"]
    if kind == "dma":
        return Dma(data["lane"], data["tensor"], _window(data["window"]), _spm(data["spm"]),
                   _maybe_window(data.get("held")), data.get("step", 0),
                   early=data.get("early", False))
    if kind == "kernel":
        return Kernel(data["lane"], data["op"], _window(data["loops"]),
                      tuple(_operand(o) for o in data["operands"]),
                      tuple(_operand(r) for r in data["results"]),
                      None if data.get("imm") is None else _spm(data["imm"]),
                      data.get("accumulate", False), data.get("step", 0))
    if kind == "noc":
        return NocReduce(data["lane"], data["source_tile"], _spm(data["source"]),
                         _spm(data["target"]), data.get("after", -1), data.get("step", 0),
                         combine=data["combine"])
    if kind == "copy":
        return NocCopy(data["lane"], data["source_tile"], _spm(data["source"]),
                       _spm(data["target"]), data.get("after", -1), data.get("step", 0),
                       early=data.get("early", False))
    raise ValueError(f"unknown instruction kind '{kind}'")


def program_from_file_bytes(data: bytes) -> Program:
    """The Program `Program.to_file_bytes()` wrote (gzip-compressed JSON; plain JSON text,
    as tx8c wrote before compressing, is read too). Data that is neither (a damaged or
    truncated file) is a ValueError, as a wrong JSON text is."""
    if data[:2] == b"\x1f\x8b":  # the gzip magic number
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as e:  # what gzip raises for damaged data
            raise ValueError(f"damaged gzip data: {e}") from None
    return program_from_dict(json.loads(data))


def program_from_dict(data: dict) -> Program:
    """The Program `Program.as_dict()` (or its JSON) describes."""
    return Program(
        config=dict(data["config"]),
        ddr_bytes=data["ddr_bytes"],
        tensors=tuple(DdrTensor(t["name"], t["offset"], tuple(t["shape"]), t["dtype"],
                                t["layout"], t["size"], t["kind"], t.get("alias_of"),
                                t.get("page", 0))
                      for t in data["tensors"]),
        inputs=tuple(data["inputs"]),
        outputs=tuple(data["outputs"]),
        ops=tuple(OpInfo(o["name"], o["text"], o["group_id"], o["node"]) for o in data["ops"]),
        groups=tuple(
            GroupProgram(g["group_id"], g["barrier"],
                         tuple(TileProgram(t["tile"], tuple(_instruction(i)
                                                            for i in t["instructions"]))
                               for t in g["tiles"]),
                         g.get("estimate_cycles", 0), g.get("kind", "sliced"),
                         g.get("spm_limit", 0), g.get("mirrored", False),
                         g.get("chain_cycles"))
            for g in data["groups"]),
        notes=tuple(data.get("notes", ())),
    )
