"""The cmodel, v2: runs the lowered Program on a byte-level model of the chip, with an
event-driven timing of its engines (issue 12, DESIGN.md "Numerics: the executors").

**Memory.** DDR is one byte array of `Program.ddr_bytes`; the constants are written at
their `consts.bin` offsets, the inputs packed in their layouts at theirs. Every tile
has an SPM byte array of `spm_bytes_per_tile`. Nothing travels as a numpy array outside
memory: a DMA gathers its window's element bytes from the DDR tensor (its layout's
address map) and packs the window into the SPM buffer's layout at its address, or the
reverse for a store; a kernel unpacks each operand from SPM at its address and layout,
computes with the op's `compute_slice`, and packs each result at its address
(`accumulate`: combined with what is there); a NocReduce combines another tile's SPM
bytes into the owner's; a NocCopy (a destination of a multicast load) copies the
source tile's buffer into its own. The outputs are read back from DDR. A "resident"
tensor (a value between groups spm-resident keeps in SPM) has no DDR bytes: its pages
are bytes of the tiles' SPM (`tx8c.analysis.spm_resident.page_location`), which a DMA of
one of its windows gathers from (scatters to) the owning tiles.

**Checks** (each a `Tx8ComputeError` naming group, tile, step and instruction):
- out of bounds: an SPM range past `spm_bytes_per_tile`, a DDR window outside its
  tensor or a tensor outside DDR;
- uninitialised SPM: every SPM byte remembers the instruction that last wrote it in the
  current group (a tile's SPM holds nothing valid when it starts a group; a kernel's
  scratch holds nothing valid after the kernel). A read must find its whole range
  written by one instruction that wrote exactly that buffer (same address, shape,
  layout): a buffer partly overwritten by another, live at the same time, is an error;
- resident pages: every SPM byte of a resident tensor remembers the tensor (a tag no
  instruction id takes, kept from group to group); a load must find its tensor's tag on
  every byte it reads: a group buffer written over the pages while the value is live (a
  reserve too small, a wrong base or page) is an error naming what holds the byte;
- DDR: every byte of the variables region remembers the tensor last stored there; a
  load must find its tensor's bytes (a load that runs before the store of the tensor it
  reads - a missing barrier - or at the wrong offset is an error), outputs too;
- races: groups of one barrier epoch may run at once, so one of them reading or writing
  a tensor another writes is an error before anything runs (`check_epochs`), whatever
  order the timing happens to give them.

**Timing** (independent of the estimate; per-instruction durations from
`tx8c.target.cost`): every tile has lanes ld, st, ne, ct, tdma, noc, each running its
instructions in list order, one at a time. An instruction starts when its lane is free
and the instructions it depends on have finished: the earlier instructions of its tile
in the group whose SPM ranges overlap its own where one of them writes (RAW, WAR, WAW);
for a NocReduce or NocCopy the source tile's `after` instruction (and the source tile's
next writer of that range waits for it). A tile runs its groups one after another
(its SPM is reused), and a group with a barrier makes every tile wait until all tiles
finished it and everything before it - except the group's `early` instructions (the
loads leading its ld lane and their NocCopys, `tx8c.codegen.program` "Cross-group
overlap"): a tile's lanes get them when it enters the group before (or at the start,
for its first group), behind that group's instructions, and each starts once the
instructions of the tile's previous group that touch its SPM range - on the tile, or
reading it over the NoC - have finished (`_early_deps`) and, for a load of a value,
once the stores of earlier groups into the bytes it reads have (`_ddr_deps`: the
groups from the first of the previous group's barrier epoch on; window by window for
the same tensor, whole for another name of the same bytes), not waiting for the
barrier nor the group's end. A load that started before the store of its bytes would
find another tensor's tags in DDR (or nothing on a resident page): an error. While they run the tile
is in two groups at once: its SPM bytes remember their writer's id, and entering the
later group keeps what its early instructions wrote valid (ids grow group after group),
so a buffer of the earlier group overwritten by one of them is an error or a wrong
answer when read. A DMA pays `dma_setup_cycles`, then streams its
bytes at `lsu_bytes_per_cycle`, or less when the chip's DDR bandwidth is shared by more
streams at once (fluid sharing: each active stream gets bandwidth / streams); a kernel
that reads DDR itself (a Gather from its table) streams those bytes the same way. A DMA
of a resident tensor streams no DDR: it takes `resident_dma_cycles` (the NoC port rate,
the farthest tile's hops once; `tx8c.target.cost`). A NocReduce
sends its bytes over `noc_hop_cycles` per mesh hop at `noc_bytes_per_cycle` and adds on
the CT; a NocCopy ends at `multicast_done` (the NoC's tree delivers the bytes to the
destinations side by side as the source's Dma reads them; they count once in the DDR
traffic, in that Dma). Reads happen when an instruction starts, writes when it
finishes, so an order the dependencies do not enforce shows up in the answer.

Results: the outputs, and `Timing` (latency of the model, per group the longest time
one of its tiles spends in it - from entering it to its last finish there -, busy cycles
per engine lane, DDR bytes moved).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
from threadpoolctl import threadpool_limits

from tx8c.analysis.spm_resident import page_location
from tx8c.codegen.program import (
    DdrRef,
    Dma,
    Kernel,
    NocCopy,
    NocReduce,
    NocTransfer,
    Program,
    SpmRef,
    stored_size,
)
from tx8c.dialect.attrs import LayoutMode
from tx8c.dialect.layout import is_aligned, mem_layout_for
from tx8c.errors import Tx8ComputeError
from tx8c.interfaces.oplib import Engine
from tx8c.interfaces.sharding import Combine, Window
from tx8c.target.config import TX8Config
from tx8c.target.cost import (
    cycles,
    dma_cycles,
    mesh_hops,
    multicast_done,
    noc_multicast_cycles,
    noc_transfer_cycles,
    resident_dma_cycles,
)
from tx8c.target.mem_layout import (
    address_map,
    box_address_map,
    byte_size,
    pack_into,
    resolve_dtype,
    unpack,
)

WHOLE_MAP_ELEMENTS = 1 << 22
"""Tensors up to this many elements get their whole element map cached (sliced by every
DMA); a larger one (an embedding table) computes each window's addresses alone."""

SCRATCH = 0xA5
"""What a kernel leaves in its scratch (and what a DMA of nothing would read)."""


def _config(program: Program) -> TX8Config:
    return TX8Config(**{k: tuple(v) if isinstance(v, list) else v
                        for k, v in program.config.items()})


@lru_cache(maxsize=4096)
def _amap(shape: tuple[int, ...], dtype: str, layout: str, config: TX8Config) -> np.ndarray:
    return address_map(shape, dtype, layout, config)


@lru_cache(maxsize=4096)
def _element_map(shape: tuple[int, ...], dtype: str, layout: str,
                 config: TX8Config) -> np.ndarray | None:
    """Every element's position in its layout counted in elements (the byte offsets of
    `address_map` over the item size), or None when an offset is not a whole number of
    items (the byte-level gather handles those)."""
    amap = _amap(shape, dtype, layout, config)
    itemsize = resolve_dtype(dtype).itemsize
    if amap.size and (amap % itemsize).any():
        return None
    return amap // itemsize


# --------------------------------------------------------------------------------------
# The instructions as the simulation sees them
# --------------------------------------------------------------------------------------


@dataclass
class _Op:
    gid: int
    group: int
    tile: int
    index: int
    ins: Dma | Kernel | NocReduce | NocCopy
    lane: str
    reads: list[tuple[int, int, int]]
    """(tile, lo, hi) SPM ranges read."""
    writes: list[tuple[int, int, int]]
    fixed: int = 0
    stream: int = 0
    deps: list[int] = field(default_factory=list)
    users: list[int] = field(default_factory=list)
    waiting: int = 0
    start: float = -1.0
    finish: float = -1.0
    commit: object = None
    source: int = -1
    """A NoC instruction's source instruction (the id of its `after`)."""
    early: bool = False
    """May start before its tile enters its group (`Dma.early`, `NocCopy.early`)."""
    registered: float = 0.0
    """When its lane got it (its tile entered the group, or the previous one if early)."""


@dataclass
class Timing:
    """What the timing simulation measured (cycles at `clock_hz`)."""

    cycles: int
    group_cycles: dict[int, int]
    group_estimates: dict[int, int]
    """Per group, its estimate alone on the chip (`GroupProgram.estimate_cycles`)."""
    busy: dict[str, int]
    """Busy cycles per engine lane, summed over the tiles."""
    ddr_bytes: int
    """Bytes the DMAs moved between DDR and SPM, and the kernels read from DDR."""
    instructions: int
    estimate: int = 0
    """The model's estimate: the groups' shares of the chained estimate
    (`GroupProgram.share_cycles`), summed."""


class CModelV2:
    """Runs a Program (see the module docstring). `ops`: the op objects of
    `program.ops` (`resolve_ops`), for their `compute_slice`, `work` and `combine`;
    `constants`: the ConstContainer the program's constant tensors come from."""

    def __init__(self, program: Program, ops: Sequence, constants=None,
                 functional: bool = True):
        self.program = program
        self.functional = functional
        self.config = _config(program)
        self.ops = list(ops)
        self.slicers = [op.slicer() for op in self.ops]
        self.container = constants
        self.ddr = np.zeros(program.ddr_bytes if functional else 0, np.uint8)
        variables = [t for t in program.tensors
                     if t.kind not in ("constant", "alias", "resident")]
        self.var_base = min((t.offset for t in variables), default=program.ddr_bytes)
        self.tags = np.full(max(0, program.ddr_bytes - self.var_base) if functional else 0,
                            -1, np.int32)
        self.tag_of = {t.name: i for i, t in enumerate(program.tensors)}
        for t in program.tensors:
            if t.kind == "alias":
                self.tag_of[t.name] = self.tag_of[t.alias_of]
        self.spm: dict[int, np.ndarray] = {}
        self.owner: dict[int, np.ndarray] = {}
        self.valid_from: dict[int, int] = {}
        """Per tile, the first instruction id of the group it runs: an SPM byte whose
        writer is older holds nothing valid (ids grow group after group, so this stands
        for clearing the tile's SPM owners when it enters a group)."""
        self.written: dict[int, dict[int, tuple]] = {}
        self.ddr_moved = 0

    # -- memory --------------------------------------------------------------------------
    def _tile(self, tile: int) -> tuple[np.ndarray, np.ndarray]:
        if tile not in self.spm:
            self.spm[tile] = np.zeros(self.config.spm_bytes_per_tile, np.uint8)
            self.owner[tile] = np.full(self.config.spm_bytes_per_tile, -1, np.int32)
        return self.spm[tile], self.owner[tile]

    def _range(self, ref: SpmRef, where: str) -> tuple[int, int]:
        lo, hi = ref.byte_range(self.config)
        if lo < 0 or hi > self.config.spm_bytes_per_tile:
            raise Tx8ComputeError(f"{where}: SPM range [{lo}, {hi}) is outside the "
                                  f"{self.config.spm_bytes_per_tile} bytes of a tile's SPM")
        return lo, hi

    def read_spm(self, tile: int, ref: SpmRef, where: str) -> np.ndarray:
        lo, hi = self._range(ref, where)
        spm, owner = self._tile(tile)
        valid = self.valid_from.get(tile, 0)
        writer = int(owner[lo]) if hi > lo else 0
        if hi > lo and (writer < valid or not (owner[lo:hi] == writer).all()):
            bad = np.flatnonzero(owner[lo:hi] != writer) + lo if writer >= valid else [lo]
            held = int(owner[bad[0]])
            raise Tx8ComputeError(
                f"{where}: reads SPM [{lo}, {hi}) of tile {tile}, but byte {int(bad[0])} "
                + (f"holds resident tensor {self.program.tensors[-2 - held].name} (a "
                   "group's buffer over the resident region, stored over while live)"
                   if held < -1 else
                   "holds nothing valid (never written in this group, or a kernel's "
                   "scratch)" if writer < valid or held < valid else
                   f"was last written by instruction {int(owner[bad[0]])}, not by the one "
                   f"that wrote the buffer (overlapping live buffers)"))
        made = self.written.get(tile, {}).get((writer, ref.addr))
        if hi > lo and made != (ref.addr, ref.shape, ref.dtype, ref.layout):
            raise Tx8ComputeError(f"{where}: reads {ref.shape} {ref.layout} at {ref.addr} of "
                                  f"tile {tile}, but the bytes were written as {made}")
        return unpack(spm[lo:hi], ref.shape, ref.dtype, ref.layout, self.config)

    def write_spm(self, tile: int, ref: SpmRef, array: np.ndarray, writer: int,
                  where: str) -> None:
        lo, hi = self._range(ref, where)
        spm, owner = self._tile(tile)
        data = np.asarray(array).astype(resolve_dtype(ref.dtype).dtype, copy=False)
        pack_into(spm[lo:hi], data, ref.layout, self.config, dtype=ref.dtype)
        owner[lo:hi] = writer
        self.written.setdefault(tile, {})[(writer, ref.addr)] = (ref.addr, ref.shape,
                                                                 ref.dtype, ref.layout)

    def write_spm_part(self, tile: int, ref: SpmRef, held: Window, window: Window,
                       piece: np.ndarray, writer: int, where: str) -> None:
        """Write the elements of `window` of a buffer holding `held` (the bytes of the
        rest of the buffer keep what they held)."""
        lo, _ = self._range(ref, where)
        spm, owner = self._tile(tile)
        itemsize = resolve_dtype(ref.dtype).itemsize
        starts = lo + _amap(ref.shape, ref.dtype, ref.layout, self.config)[
            window.shifted(held.start).slices()]
        index = (starts[..., None] + np.arange(itemsize)).ravel()
        data = np.ascontiguousarray(piece, resolve_dtype(ref.dtype).dtype)
        spm[index] = data.view(np.uint8).ravel()
        owner[index] = writer
        self.written.setdefault(tile, {})[(writer, ref.addr)] = (ref.addr, ref.shape,
                                                                 ref.dtype, ref.layout)

    def scratch(self, tile: int, ref: SpmRef, where: str) -> None:
        lo, hi = self._range(ref, where)
        spm, owner = self._tile(tile)
        spm[lo:hi] = SCRATCH
        owner[lo:hi] = -1

    def _ddr_elements(self, name: str, window: Window, where: str) -> tuple[np.ndarray, int]:
        self._check_ddr_window(name, window, where)
        t = self.program.tensor(name)
        starts = t.offset + _amap(t.shape, t.dtype, t.layout, self.config)[window.slices()]
        itemsize = resolve_dtype(t.dtype).itemsize
        return starts, itemsize

    def _ddr_items(self, name: str, window: Window, where: str):
        """The window's element positions in the tensor's DDR bytes seen as items, the
        items, and the tensor's per-byte tags as (item, byte) rows (None for a constant);
        None when the layout has an offset that is no whole number of items."""
        self._check_ddr_window(name, window, where)
        t = self.program.tensor(name)
        itemsize = resolve_dtype(t.dtype).itemsize
        if math.prod(t.shape) <= WHOLE_MAP_ELEMENTS:
            emap = _element_map(t.shape, t.dtype, t.layout, self.config)
            if emap is None:
                return None
            positions = emap[window.slices()]
        else:  # an embedding table: the window's addresses alone
            addresses = box_address_map(t.shape, t.dtype, t.layout, window.start,
                                        window.stop, self.config)
            if addresses.size and (addresses % itemsize).any():
                return None
            positions = addresses // itemsize
        size = stored_size(t.shape, t.dtype, t.layout, self.config)
        at = t.offset - self.var_base
        if size % itemsize or t.offset + size > self.ddr.size or (
                t.kind != "constant" and (at < 0 or at + size > self.tags.size)):
            return None
        items = self.ddr[t.offset:t.offset + size].view(f"<u{itemsize}")
        tags = self.tags[at:at + size].reshape(-1, itemsize) if t.kind != "constant" else None
        return np.asarray(positions), items, tags

    def _check_ddr_window(self, name: str, window: Window, where: str) -> None:
        t = self.program.tensor(name)
        if any(a < 0 or b > d or a > b for (a, b), d in zip(window.pairs(), t.shape,
                                                           strict=True)):
            raise Tx8ComputeError(f"{where}: window {window} is outside tensor {name} "
                                  f"{list(t.shape)}")
        if t.kind != "resident" and (t.offset < 0
                                     or t.offset + t.size > self.program.ddr_bytes):
            raise Tx8ComputeError(f"{where}: tensor {name} [{t.offset}, {t.offset + t.size}) "
                                  f"is outside DDR ({self.program.ddr_bytes} bytes)")

    def read_ddr(self, name: str, window: Window, where: str) -> np.ndarray:
        if self.program.tensor(name).kind == "resident":
            return self._read_resident(name, window, where)
        found = self._ddr_items(name, window, where)
        if found is None:
            return self._read_ddr_bytes(name, window, where)
        at, items, tags = found
        t = self.program.tensor(name)
        if tags is not None and at.size:
            self._check_tags(name, window, tags[at, 0], where)
        self.ddr_moved += at.size * items.itemsize
        return items[at].view(resolve_dtype(t.dtype).dtype)

    def _check_tags(self, name: str, window: Window, tags: np.ndarray, where: str) -> None:
        """A load finds `name`'s bytes where it reads (`tags`: the first byte's of each
        element)."""
        if not (tags == self.tag_of[name]).all():
            other = int(tags[tags != self.tag_of[name]][0])
            held = "nothing" if other < 0 else self.program.tensors[other].name
            raise Tx8ComputeError(
                f"{where}: reads {window} of {name}, but DDR there holds {held} (read "
                "before it was stored - a missing barrier? - or at a wrong offset)")

    def _read_ddr_bytes(self, name: str, window: Window, where: str) -> np.ndarray:
        starts, itemsize = self._ddr_elements(name, window, where)
        t = self.program.tensor(name)
        if t.kind != "constant" and starts.size:
            self._check_tags(name, window, self.tags[starts.ravel() - self.var_base], where)
        index = (starts[..., None] + np.arange(itemsize)).ravel()
        self.ddr_moved += index.size
        raw = self.ddr[index]
        return raw.view(resolve_dtype(t.dtype).dtype).reshape(window.shape)

    def write_ddr(self, name: str, window: Window, array: np.ndarray, where: str) -> None:
        t = self.program.tensor(name)
        if t.kind == "constant":
            self._check_ddr_window(name, window, where)
            raise Tx8ComputeError(f"{where}: stores into constant {name}")
        data = np.ascontiguousarray(array, resolve_dtype(t.dtype).dtype)
        if t.kind == "resident":
            self._write_resident(name, window, data, where)
            return
        found = self._ddr_items(name, window, where)
        if found is not None:
            at, items, tags = found
            items[at] = data.view(items.dtype).reshape(at.shape)
            tags[at] = self.tag_of[name]
            self.ddr_moved += at.size * items.itemsize
            return
        starts, itemsize = self._ddr_elements(name, window, where)
        index = (starts[..., None] + np.arange(itemsize)).ravel()
        self.ddr[index] = data.view(np.uint8).ravel()
        self.tags[index - self.var_base] = self.tag_of[name]
        self.ddr_moved += index.size

    # -- resident tensors: pages in the tiles' SPM ----------------------------------------
    def _resident_bytes(self, name: str, window: Window, where: str
                        ) -> list[tuple[int, np.ndarray, np.ndarray]]:
        """Per tile holding some of them, (tile, SPM addresses, positions in the window's
        bytes) of the bytes of `window`'s elements of the resident tensor `name`."""
        self._check_ddr_window(name, window, where)
        t = self.program.tensor(name)
        itemsize = resolve_dtype(t.dtype).itemsize
        starts = _amap(t.shape, t.dtype, t.layout, self.config)[window.slices()]
        index = (starts[..., None] + np.arange(itemsize)).ravel()
        tiles, offsets = page_location(index, t.page, self.config.tiles_per_chip)
        addresses = t.offset + offsets
        if addresses.size and (t.offset < 0
                               or addresses.max() >= self.config.spm_bytes_per_tile):
            raise Tx8ComputeError(f"{where}: resident tensor {name}'s pages at {t.offset} "
                                  f"reach past the {self.config.spm_bytes_per_tile} bytes "
                                  "of a tile's SPM")
        out = []
        for tile in np.unique(tiles).tolist():
            at = np.flatnonzero(tiles == tile)
            out.append((tile, addresses[at], at))
        return out

    def _resident_tag(self, name: str) -> int:
        """What an SPM byte's owner holds when it is a byte of resident tensor `name`
        (negative, below -1 "nothing": no instruction of any group has that id)."""
        return -2 - self.tag_of[name]

    def _read_resident(self, name: str, window: Window, where: str) -> np.ndarray:
        t = self.program.tensor(name)
        tag = self._resident_tag(name)
        pieces = self._resident_bytes(name, window, where)
        raw = np.empty(sum(a.size for _, a, _ in pieces), np.uint8)
        for tile, addresses, at in pieces:
            spm, owner = self._tile(tile)
            held = owner[addresses]
            if (held != tag).any():
                bad = int(addresses[np.flatnonzero(held != tag)[0]])
                other = int(owner[bad])
                what = ("nothing (never stored)" if other == -1 else
                        f"instruction {other}'s buffer (a group's buffer over the resident "
                        "region)" if other >= 0 else
                        f"tensor {self.program.tensors[-2 - other].name}")
                raise Tx8ComputeError(f"{where}: reads {window} of resident tensor {name}, "
                                      f"but byte {bad} of tile {tile}'s SPM holds {what}")
            raw[at] = spm[addresses]
        return raw.view(resolve_dtype(t.dtype).dtype).reshape(window.shape)

    def _write_resident(self, name: str, window: Window, data: np.ndarray,
                        where: str) -> None:
        raw = data.view(np.uint8).ravel()
        tag = self._resident_tag(name)
        for tile, addresses, at in self._resident_bytes(name, window, where):
            spm, owner = self._tile(tile)
            spm[addresses] = raw[at]
            owner[addresses] = tag

    # -- setup and results ---------------------------------------------------------------
    def load_inputs(self, inputs: Sequence[np.ndarray] | Mapping[str, np.ndarray],
                    names: Sequence[str] | None = None) -> None:
        arrays = list(inputs.values()) if isinstance(inputs, Mapping) else list(inputs)
        if len(arrays) != len(self.program.inputs):
            raise Tx8ComputeError(f"the program takes {len(self.program.inputs)} inputs, "
                                  f"got {len(arrays)}")
        for name, array in zip(self.program.inputs, arrays, strict=True):
            t = self.program.tensor(name)
            a = np.asarray(array)
            if tuple(a.shape) != t.shape:
                raise Tx8ComputeError(f"input {name}: shape {list(a.shape)}, the program "
                                      f"takes {list(t.shape)}")
            self.write_ddr(name, Window.whole(t.shape), a, f"input {name}")
        for t in self.program.tensors:
            if t.kind == "constant":
                if self.container is None:
                    raise Tx8ComputeError("the program reads constants; give the "
                                          "ConstContainer (consts.json)")
                data = np.frombuffer(self.container.stored_bytes(int(t.name[1:])), np.uint8)
                if data.size != t.size or t.offset + t.size > self.program.ddr_bytes:
                    raise Tx8ComputeError(f"constant {t.name}: {data.size} bytes do not fit "
                                          f"its slot of {t.size} at {t.offset}")
                self.ddr[t.offset:t.offset + t.size] = data

    def outputs(self) -> list[np.ndarray]:
        out = []
        for name in self.program.outputs:
            t = self.program.tensor(name)
            out.append(self.read_ddr(name, Window.whole(t.shape), f"output {name}").copy())
        return out

    # -- running -------------------------------------------------------------------------
    def check_epochs(self) -> None:
        """Groups of one barrier epoch may run at once: none may read a DDR tensor another
        of them writes, or write one another reads or writes (a missing barrier)."""
        root = {t.name: t.alias_of or t.name for t in self.program.tensors}
        epoch, writers, readers = 0, {}, {}
        for group in self.program.groups:
            loads = {root[i.tensor] for t in group.tiles for i in t.instructions
                     if isinstance(i, Dma) and i.lane == "ld"}
            loads |= {root[o.ref.tensor] for t in group.tiles for i in t.instructions
                      if isinstance(i, Kernel) for o in i.operands
                      if isinstance(o.ref, DdrRef)}
            stores = {root[i.tensor] for t in group.tiles for i in t.instructions
                      if isinstance(i, Dma) and i.lane == "st"}
            for name in sorted(loads | stores):
                other = writers.get(name) if name in loads else (
                    writers.get(name) or readers.get(name))
                if other is not None and other != group.group_id:
                    raise Tx8ComputeError(
                        f"group {group.group_id} {'reads' if name in loads else 'writes'} "
                        f"{name}, which group {other} "
                        f"{'writes' if name in writers else 'reads'} in the same barrier "
                        "epoch: they may run at the same time (a barrier is missing)")
            for name in stores:
                writers[name] = group.group_id
            for name in loads:
                readers.setdefault(name, group.group_id)
            if group.barrier:
                epoch, writers, readers = epoch + 1, {}, {}

    def run(self, inputs) -> tuple[list[np.ndarray], Timing]:
        self.check_epochs()
        self.load_inputs(inputs)
        # One BLAS thread: the kernels' products are slices (tens of rows), too small to
        # gain from threads, and on a loaded machine OpenBLAS's spinning threads made
        # ResNet-50's run 3 to 7 times slower (bench/README.md). Results do not depend on it.
        with threadpool_limits(limits=1, user_api="blas"):
            timing = _Simulation(self).run()
        return self.outputs(), timing

    def timing(self) -> Timing:
        """The timing alone (no bytes move; durations do not depend on the data)."""
        return _Simulation(self).run()

    # -- the effect of one instruction (reads now, writes at `commit`) ------------------------
    def start(self, op: _Op, where: str):
        ins = op.ins
        if isinstance(ins, Dma):
            return self._dma(op, ins, where)
        if isinstance(ins, Kernel):
            return self._kernel(op, ins, where)
        if isinstance(ins, NocCopy):
            return self._multicast(op, ins, where)
        return self._noc(op, ins, where)

    def _dma(self, op: _Op, ins: Dma, where: str):
        held = ins.spm_window
        if not held.contains(ins.window):
            raise Tx8ComputeError(f"{where}: moves {ins.window}, but the buffer holds {held}")
        if ins.lane == "ld":
            piece = self.read_ddr(ins.tensor, ins.window, where)
            if held != ins.window:  # part of the buffer: only its elements' bytes
                return lambda: self.write_spm_part(op.tile, ins.spm, held, ins.window, piece,
                                                   op.gid, where)
            return lambda: self.write_spm(op.tile, ins.spm, piece, op.gid, where)
        whole = self.read_spm(op.tile, ins.spm, where)
        piece = whole[ins.window.shifted(held.start).slices()]
        return lambda: self.write_ddr(ins.tensor, ins.window, piece, where)

    def _kernel(self, op: _Op, ins: Kernel, where: str):
        slicer = self.slicers[ins.op]
        arrays = []
        for operand, need in zip(ins.operands, slicer.back_window(ins.loops), strict=True):
            if isinstance(operand.ref, DdrRef):
                whole = self.read_ddr(operand.ref.tensor, operand.window, where)
            else:
                whole = self.read_spm(op.tile, operand.ref, where)
            if not operand.window.contains(need):
                raise Tx8ComputeError(f"{where}: needs {need} of an operand whose buffer "
                                      f"holds {operand.window}")
            arrays.append(np.ascontiguousarray(whole[need.shifted(operand.window.start)
                                                     .slices()]))
        results = self.ops[ins.op].compute_slice(ins.loops, arrays)
        pieces = []
        for result, piece in zip(ins.results, results, strict=True):
            if result is None:
                continue
            piece = np.asarray(piece)
            if ins.accumulate:
                old = self.read_spm(op.tile, result.ref, where)
                piece = Combine(slicer.combine).apply(old.astype(piece.dtype), piece)
            pieces.append((result.ref, piece))

        def commit():
            if ins.imm is not None:
                self.scratch(op.tile, ins.imm, where)
            for ref, piece in pieces:
                self.write_spm(op.tile, ref, piece, op.gid, where)
        return commit

    def _noc(self, op: _Op, ins: NocReduce, where: str):
        theirs = self.read_spm(ins.source_tile, ins.source, where)
        mine = self.read_spm(op.tile, ins.target, where)
        total = Combine(ins.combine).apply(mine, theirs)
        return lambda: self.write_spm(op.tile, ins.target, total, op.gid, where)

    def _multicast(self, op: _Op, ins: NocCopy, where: str):
        theirs = self.read_spm(ins.source_tile, ins.source, where)
        if theirs.shape != tuple(ins.target.shape):
            raise Tx8ComputeError(f"{where}: copies {ins.source.shape} of tile "
                                  f"{ins.source_tile} into a buffer of {ins.target.shape}")
        return lambda: self.write_spm(op.tile, ins.target, theirs, op.gid, where)


# --------------------------------------------------------------------------------------
# The event-driven simulation
# --------------------------------------------------------------------------------------


def _kernel_durations(work, config: TX8Config) -> tuple[int, int]:
    """(fixed cycles, DDR bytes streamed) of a kernel. A kernel that reads DDR itself
    (a Gather from its table) streams those bytes like a DMA, sharing the chip's DDR
    bandwidth with the other streams of the moment, after the setup of each transfer;
    everything else is fixed cycles (`tx8c.target.cost.cycles`)."""
    if work.engine != Engine.LSU or not any(t.ddr for t in work.transfers):
        return cycles(work, config).cycles, 0
    fixed = stream = 0
    for t in work.transfers:
        nbytes = byte_size(t.shape, t.dtype, t.layout, config)
        if t.ddr and nbytes > 0:
            fixed += config.dma_setup_cycles
            stream += nbytes
        else:
            fixed += dma_cycles(nbytes, config, ddr=False)
    return fixed, stream


class _RangeIndex:
    """(id, lo, hi) byte ranges of one tile's SPM: which ids touch a range."""

    def __init__(self, ranges: list[tuple[int, int, int]]):
        table = np.array(ranges, np.int64).reshape(-1, 3)
        self.ids, self.lo, self.hi = table[:, 0], table[:, 1], table[:, 2]
        self.found: dict[tuple[int, int], list[int]] = {}

    def overlapping(self, lo: int, hi: int) -> list[int]:
        key = (lo, hi)
        if key not in self.found:
            self.found[key] = self.ids[(self.lo < hi) & (lo < self.hi)].tolist()
        return self.found[key]


def _range_deps(ranges: tuple) -> list[tuple[int, ...]]:
    """Per instruction of a tile's list (`ranges`: per instruction, the (lo, hi) SPM
    ranges of its own tile it reads and those it writes), the positions of the earlier
    instructions it depends on: RAW, WAR and WAW (`_Simulation._address_deps`)."""
    regions: list[list] = []  # [lo, hi, last writer, readers since]
    out = []
    for k, (reads, writes) in enumerate(ranges):
        deps: list[int] = []
        for lo, hi in reads:
            for reg in regions:
                if reg[0] < hi and lo < reg[1]:
                    deps.append(reg[2])
                    reg[3].append(k)
        for lo, hi in writes:
            keep = []
            for reg in regions:
                if reg[0] < hi and lo < reg[1]:
                    if reg[2] != k:
                        deps.append(reg[2])
                    deps.extend(r for r in reg[3] if r != k)
                    if lo <= reg[0] and reg[1] <= hi:
                        continue
                keep.append(reg)
            regions = keep + [[lo, hi, k, []]]
        out.append(tuple(deps))
    return out


class _StoreIndex:
    """The store instructions of a Program by the DDR tensor they write: which stores of
    groups [since, before) write bytes a window of a tensor holds (`writing`)."""

    def __init__(self, program: Program, stores: list[_Op]):
        self.root = {t.name: t.alias_of or t.name for t in program.tensors}
        self.constant = {t.name for t in program.tensors if t.kind == "constant"}
        by_name: dict[str, list[_Op]] = {}
        for op in stores:
            by_name.setdefault(op.ins.tensor, []).append(op)
        self.names: dict[str, list[str]] = {}
        self.table: dict[str, tuple[np.ndarray, ...]] = {}
        for name, ops in by_name.items():
            self.names.setdefault(self.root[name], []).append(name)
            rank = ops[0].ins.window.rank
            self.table[name] = (
                np.array([op.group for op in ops], np.int64),
                np.array([op.gid for op in ops], np.int64),
                np.array([op.ins.window.start for op in ops], np.int64).reshape(-1, rank),
                np.array([op.ins.window.stop for op in ops], np.int64).reshape(-1, rank))
        self.found: dict[tuple, list[int]] = {}

    def writing(self, tensor: str, window: Window, since: int, before: int) -> list[int]:
        key = (tensor, window, since, before)
        if key in self.found:
            return self.found[key]
        out: list[int] = []
        if tensor not in self.constant:
            for name in self.names.get(self.root[tensor], ()):
                group, gid, start, stop = self.table[name]
                # the stores come in gid order, so in group order: [since, before) is
                # one run of them
                lo, hi = np.searchsorted(group, (since, before))
                if lo == hi:
                    continue
                gid, start, stop = gid[lo:hi], start[lo:hi], stop[lo:hi]
                if name == tensor:
                    hit = ((start < np.array(window.stop)) & (np.array(window.start) < stop)
                           ).all(axis=1)
                    gid = gid[hit]
                out += gid.tolist()
        self.found[key] = out
        return out


class _Simulation:
    def __init__(self, model: CModelV2):
        self.model = model
        self.program = model.program
        self.config = model.config
        self.ops: list[_Op] = []
        self.tile_groups: dict[int, list[tuple[int, list[int]]]] = {}
        self.entered: dict[tuple[int, int], float] = {}
        """(group position, tile) -> when the tile entered the group (`run`)."""
        self.durations: dict[tuple[int, tuple[int, ...]], tuple[int, int]] = {}
        """(op, loop shape) -> a kernel's `_kernel_durations` (the same slices recur at
        every step of every tile)."""
        self.streamed: dict[tuple[str, tuple[int, ...]], int] = {}
        """(DDR tensor, window shape) -> `_dma_ddr_bytes`."""
        self.range_deps: dict[tuple, list[tuple[int, ...]]] = {}
        """A tile list's SPM ranges -> its `_range_deps` (`_address_deps`)."""
        self._build()

    # -- the instructions, their durations and dependencies --------------------------------
    def _build(self) -> None:
        for g, group in enumerate(self.program.groups):
            first_of_tile: dict[int, int] = {}
            self.lengths = {tp.tile: len(tp.instructions) for tp in group.tiles}
            for tp in group.tiles:
                first_of_tile[tp.tile] = len(self.ops)
                ids = []
                for i, ins in enumerate(tp.instructions):
                    op = self._op(len(self.ops), g, tp.tile, i, ins)
                    self.ops.append(op)
                    ids.append(op.gid)
                self.tile_groups.setdefault(tp.tile, []).append((g, ids))
                self._address_deps(ids)
                self._check_early_prefix(ids)
            for tp in group.tiles:
                for i, ins in enumerate(tp.instructions):
                    if isinstance(ins, NocTransfer):
                        self._noc_deps(self.ops[first_of_tile[tp.tile] + i], ins,
                                       first_of_tile)
        self._early_deps()
        self._ddr_deps()
        for op in self.ops:
            op.deps = sorted(set(op.deps))
            op.waiting = len(op.deps)
            for d in op.deps:
                self.ops[d].users.append(op.gid)

    def _dma_ddr_bytes(self, ins: Dma) -> int:
        """What a DMA streams: its window in the DDR tensor's layout family (as the
        estimate counts it), which differs from the SPM side's bytes when the DMA
        converts (fuse-channel-norm-dma)."""
        key = (ins.tensor, ins.window.shape)
        found = self.streamed.get(key)
        if found is None:
            found = self.streamed[key] = self._window_ddr_bytes(ins)
        return found

    def _window_ddr_bytes(self, ins: Dma) -> int:
        t = self.program.tensor(ins.tensor)
        layout = mem_layout_for(ins.window.shape, is_aligned(LayoutMode[t.layout]))
        return stored_size(ins.window.shape, t.dtype, layout.name, self.config)

    def _op(self, gid: int, g: int, tile: int, index: int, ins) -> _Op:
        config = self.config
        if isinstance(ins, Dma):
            rng = (tile, *ins.spm.byte_range(config))
            nbytes = self._dma_ddr_bytes(ins)
            reads, writes = ([], [rng]) if ins.lane == "ld" else ([rng], [])
            if self.program.tensor(ins.tensor).kind == "resident":  # over the NoC
                return _Op(gid, g, tile, index, ins, ins.lane, reads, writes,
                           fixed=resident_dma_cycles(nbytes, config), early=ins.early)
            return _Op(gid, g, tile, index, ins, ins.lane, reads, writes,
                       fixed=config.dma_setup_cycles, stream=nbytes, early=ins.early)
        if isinstance(ins, Kernel):
            reads = [(tile, *o.ref.byte_range(config)) for o in ins.operands
                     if isinstance(o.ref, SpmRef)]
            writes = [(tile, *r.ref.byte_range(config)) for r in ins.results if r is not None]
            if ins.accumulate:
                reads += writes
            if ins.imm is not None:
                writes.append((tile, *ins.imm.byte_range(config)))
            key = (ins.op, ins.loops.shape)
            found = self.durations.get(key)
            if found is None:
                work = self.model.slicers[ins.op].work(ins.loops.shape)
                found = self.durations[key] = _kernel_durations(work, config)
            fixed, stream = found
            return _Op(gid, g, tile, index, ins, ins.lane, reads, writes, fixed=fixed,
                       stream=stream)
        source = (ins.source_tile, *ins.source.byte_range(config))
        target = (tile, *ins.target.byte_range(config))
        hops = mesh_hops(ins.source_tile, tile, config)
        if isinstance(ins, NocCopy):
            took = noc_multicast_cycles(target[2] - target[1], hops, config)
            return _Op(gid, g, tile, index, ins, "noc", [source], [target], fixed=took,
                       early=ins.early)
        took = noc_transfer_cycles(target[2] - target[1], ins.target.dtype,
                                   hops, config)
        return _Op(gid, g, tile, index, ins, "noc", [source, target], [target], fixed=took)

    def _address_deps(self, ids: list[int]) -> None:
        """RAW, WAR and WAW between one tile's instructions of one group (`ids`: their
        ids, in list order). They depend on the instructions' SPM ranges alone, so they
        are computed once per sequence of ranges (`_range_deps`, remembered: the tiles
        of a group and the equal groups of a model repeat them - BERT-base's 1 350 tile
        lists have 42 distinct ones) as positions in the list, mapped back to ids."""
        ops = self.ops
        tile = ops[ids[0]].tile if ids else 0
        key = tuple((tuple((lo, hi) for t, lo, hi in op.reads if t == tile),
                     tuple((lo, hi) for _, lo, hi in op.writes))
                    for op in (ops[gid] for gid in ids))
        found = self.range_deps.get(key)
        if found is None:
            found = self.range_deps[key] = _range_deps(key)
        for gid, positions in zip(ids, found, strict=True):
            if positions:
                ops[gid].deps.extend(ids[k] for k in positions)

    def _check_early_prefix(self, ids: list[int]) -> None:
        """Early instructions are a prefix of their lane in their tile's list (a lane
        runs in list order: an early one behind a late one could not start early)."""
        late: set[str] = set()
        for gid in ids:
            op = self.ops[gid]
            if not op.early:
                late.add(op.lane)
            elif op.lane in late or op.ins.lane not in ("ld", "noc"):
                raise Tx8ComputeError(
                    f"group {self.program.groups[op.group].group_id}, tile {op.tile}, "
                    f"instruction {op.index} ({op.ins.kind} {op.lane}) is early but "
                    "follows a late instruction of its lane (early instructions are a "
                    "prefix of the ld and noc lanes)")

    def _early_deps(self) -> None:
        """An early instruction of a group waits for every instruction of its tile's
        previous group that reads or writes its SPM range on that tile, and for the
        previous group's NoC instructions of other tiles reading that range."""
        readers: dict[tuple[int, int], list[_Op]] = {}  # (group, tile read) -> NoC ops
        for op in self.ops:
            if isinstance(op.ins, NocTransfer):
                readers.setdefault((op.group, op.ins.source_tile), []).append(op)
        for tile, groups in self.tile_groups.items():
            for (prev, before), (_, ids) in zip(groups, groups[1:]):
                early = [self.ops[i] for i in ids if self.ops[i].early]
                if not early:
                    continue
                touching = [self.ops[i] for i in before]
                touching += [o for o in readers.get((prev, tile), ()) if o.tile != tile]
                ranges = _RangeIndex([(o.gid, a, b) for o in touching
                                      for t, a, b in (*o.reads, *o.writes) if t == tile])
                for op in early:
                    for _, lo, hi in op.writes:
                        op.deps.extend(ranges.overlapping(lo, hi))

    def _ddr_deps(self) -> None:
        """An early load of a variable (a DDR value, a graph input, a resident value)
        waits for every store of the groups its tile may still be running beside it that
        writes the window it reads: the groups from the first of its tile's previous
        group's barrier epoch up to its own (a tile enters a group once every earlier
        epoch finished, and gets the next group's early instructions then). A store of
        the same tensor counts where its window meets the load's; a store of another
        name over the same bytes (an alias) counts whole. Constants are never stored."""
        epochs, first_of_epoch, count = [], {}, 0
        for g, group in enumerate(self.program.groups):
            epochs.append(count)
            first_of_epoch.setdefault(count, g)
            count += bool(group.barrier)
        stores = _StoreIndex(self.program, [op for op in self.ops if op.lane == "st"
                                            and isinstance(op.ins, Dma)])
        for groups in self.tile_groups.values():
            for k, (g, ids) in enumerate(groups):
                since = first_of_epoch[epochs[groups[k - 1][0]]] if k else 0
                for i in ids:
                    op = self.ops[i]
                    if op.early and isinstance(op.ins, Dma):
                        op.deps.extend(stores.writing(op.ins.tensor, op.ins.window,
                                                      since, g))

    def _noc_deps(self, op: _Op, ins: NocReduce | NocCopy, first_of_tile: dict[int, int]
                  ) -> None:
        """The NocReduce (NocCopy) waits for the source's partial (loaded window); the
        source's next writer of that range waits for it."""
        start = first_of_tile.get(ins.source_tile)
        if start is None or not 0 <= ins.after < self.lengths[ins.source_tile]:
            raise Tx8ComputeError(
                f"group {self.program.groups[op.group].group_id}, tile {op.tile}, step "
                f"{ins.step}, instruction {op.index} ({ins.kind}): waits for instruction "
                f"{ins.after} of tile {ins.source_tile}, which has no such instruction "
                "in this group")
        after = start + ins.after
        op.deps.append(after)
        op.source = after
        _, lo, hi = op.reads[0]
        ops = self.ops
        for j in range(after + 1, len(ops)):
            other = ops[j]
            if other.group != op.group or other.tile != ins.source_tile:
                break
            if any(a < hi and lo < b for _, a, b in other.writes):
                other.deps.append(op.gid)
                break

    # -- the event loop ------------------------------------------------------------------
    def run(self) -> Timing:
        ops, config = self.ops, self.config
        epochs, count = [], 0
        for group in self.program.groups:
            epochs.append(count)
            count += bool(group.barrier)
        left_in_epoch = [0] * (count + 1)
        for op in ops:
            left_in_epoch[epochs[op.group]] += 1
        # per tile: the queue of its groups; the group it runs; per (group, tile) the
        # ops not finished; the group whose early ops its lanes got ahead of entering it
        queue = {t: list(gs) for t, gs in self.tile_groups.items()}
        current: dict[int, tuple[int, list[int]] | None] = {t: None for t in queue}
        unfinished: dict[tuple[int, int], int] = {}
        for op in ops:
            unfinished[(op.group, op.tile)] = unfinished.get((op.group, op.tile), 0) + 1
        ahead: dict[int, int] = {}
        lanes: dict[tuple[int, str], list[int]] = {}
        lane_pos: dict[tuple[int, str], int] = {}
        lane_busy: dict[tuple[int, str], bool] = {}
        lane_free: dict[tuple[int, str], float] = {}
        # per (group, tile): the NoC instructions still to read the tile's SPM in that group
        noc_readers: dict[tuple[int, int], int] = {}
        for op in ops:
            if isinstance(op.ins, NocTransfer):
                key = (op.group, op.ins.source_tile)
                noc_readers[key] = noc_readers.get(key, 0) + 1
        last_group: dict[int, int] = {}
        done_epochs = 0
        while done_epochs < len(left_in_epoch) and left_in_epoch[done_epochs] == 0:
            done_epochs += 1
        now = 0.0
        fixed: list[tuple[float, int]] = []
        setup_done: list[tuple[float, int]] = []
        streaming: dict[int, float] = {}
        busy: dict[str, float] = {}
        finished = 0
        ddr_rate = config.ddr_bandwidth_bytes_per_s / config.clock_hz

        # the lanes whose next instruction may have become startable since `try_start`
        # last looked (given instructions, freed, their head's last dependency done; a
        # lane not given any yet waits for its first): the others cannot start, so it
        # looks at these alone, in the lanes' order
        changed: set[tuple[int, str]] = set()
        rank: dict[tuple[int, str], int] = {}  # a lane's place in `lanes`

        def give_lanes(t: int, ids) -> None:
            for gid in ids:
                key = (t, ops[gid].lane)
                ops[gid].registered = now
                lanes.setdefault(key, []).append(gid)
                lane_pos.setdefault(key, 0)
                lane_busy.setdefault(key, False)
                rank.setdefault(key, len(rank))
                changed.add(key)

        def enter(t: int) -> None:
            g, ids = queue[t].pop(0)
            current[t] = (g, ids)
            last_group[t] = g
            self.entered[(g, t)] = now
            first = ids[0] if ids else len(ops)
            # what the early instructions wrote stays valid; the rest of the SPM does not
            self.model.written[t] = {k: v for k, v in self.model.written.get(t, {}).items()
                                     if k[0] >= first}
            self.model.valid_from[t] = first
            give_lanes(t, [gid for gid in ids if not (ahead.get(t) == g and ops[gid].early)])
            if unfinished.get((g, t), 0) == 0:  # all of it ran early
                current[t] = None

        def enter_groups() -> None:
            for t in queue:
                while current[t] is None and queue[t]:
                    if noc_readers.get((last_group.get(t, -1), t), 0):
                        break
                    if epochs[queue[t][0][0]] > done_epochs:
                        break
                    enter(t)
                if queue[t] and ahead.get(t) != queue[t][0][0]:
                    g, ids = queue[t][0]  # the next group's early instructions
                    ahead[t] = g
                    give_lanes(t, [gid for gid in ids if ops[gid].early])

        def try_start() -> None:
            looked = sorted((k for k in changed if k in rank), key=rank.__getitem__)
            changed.clear()
            for key in looked:
                items = lanes[key]
                if lane_busy[key] or lane_pos[key] >= len(items):
                    continue
                op = ops[items[lane_pos[key]]]
                if op.waiting:
                    continue
                lane_busy[key] = True
                lane_pos[key] += 1
                op.start = now
                if self.model.functional:
                    where = (f"group {self.program.groups[op.group].group_id}, tile "
                             f"{op.tile}, step {op.ins.step}, instruction {op.index} "
                             f"({op.ins.kind} {op.lane})")
                    op.commit = self.model.start(op, where)
                if op.stream:
                    heapq.heappush(setup_done, (now + op.fixed, op.gid))
                elif isinstance(op.ins, NocCopy):
                    ready = max(lane_free.get(key, 0.0), op.registered)
                    heapq.heappush(fixed, (self._received(op, now, ready), op.gid))
                else:
                    heapq.heappush(fixed, (now + op.fixed, op.gid))

        def finish(gid: int) -> None:
            nonlocal finished, done_epochs
            op = ops[gid]
            op.finish = now
            if op.commit is not None:
                op.commit()
                op.commit = None
            busy[op.lane] = busy.get(op.lane, 0.0) + (now - op.start)
            lane_busy[(op.tile, op.lane)] = False
            lane_free[(op.tile, op.lane)] = now
            changed.add((op.tile, op.lane))
            for u in op.users:
                user = ops[u]
                user.waiting -= 1
                if not user.waiting:
                    changed.add((user.tile, user.lane))
            unfinished[(op.group, op.tile)] -= 1
            if (unfinished[(op.group, op.tile)] == 0 and current[op.tile] is not None
                    and current[op.tile][0] == op.group):
                current[op.tile] = None
            if isinstance(op.ins, NocTransfer):
                noc_readers[(op.group, op.ins.source_tile)] -= 1
            left_in_epoch[epochs[op.group]] -= 1
            while done_epochs < len(left_in_epoch) and left_in_epoch[done_epochs] == 0:
                done_epochs += 1
            finished += 1

        enter_groups()
        try_start()
        while finished < len(ops):
            rate = min(float(config.lsu_bytes_per_cycle),
                       ddr_rate / max(1, len(streaming))) if streaming else 0.0
            candidates = []
            if fixed:
                candidates.append(fixed[0][0])
            if setup_done:
                candidates.append(setup_done[0][0])
            if streaming:
                candidates.append(now + min(streaming.values()) / rate)
            if not candidates:
                stuck = [op for op in ops if op.finish < 0][:3]
                raise Tx8ComputeError(
                    "the program deadlocks: no instruction can start ("
                    + "; ".join(f"group {self.program.groups[o.group].group_id} tile "
                                f"{o.tile} instruction {o.index} waits for {o.waiting}"
                                for o in stuck) + ")")
            then = min(candidates)
            for gid in streaming:
                streaming[gid] -= rate * (then - now)
            now = then
            for gid in [g for g, left in streaming.items() if left <= 1e-6]:
                del streaming[gid]
                finish(gid)
            while fixed and fixed[0][0] <= now:
                finish(heapq.heappop(fixed)[1])
            while setup_done and setup_done[0][0] <= now:
                gid = heapq.heappop(setup_done)[1]
                streaming[gid] = float(ops[gid].stream)
            enter_groups()
            try_start()
        return self._timing(busy)

    def _received(self, op: _Op, now: float, ready: float) -> float:
        """When the NocCopy `op` (started at `now`) holds its copy: `multicast_done` of
        its source's Dma, the destination ready when its tile had entered the group, its
        lane was free (`ready`) and its own tile's dependencies had finished."""
        source = self.ops[op.source]
        ready = max([ready] + [self.ops[d].finish for d in op.deps if d != source.gid])
        _, lo, hi = op.writes[0]
        return max(now, multicast_done(source.start, source.finish, ready, hi - lo,
                                       mesh_hops(op.ins.source_tile, op.tile, self.config),
                                       self.config))

    def _timing(self, busy: dict[str, float]) -> Timing:
        """A group's latency: the longest time one of its tiles spends in it (from when
        the tile entered it to its last finish there), which excludes the time a tile
        waits for other groups of its epoch sharing it, and includes the time its first
        instruction waits for another tile of the group (a multicast's receiver waits
        for its source's read: from the receiver's first start, the read was left
        out)."""
        spans: dict[tuple[int, int], list[float]] = {}
        for op in self.ops:
            gid = self.program.groups[op.group].group_id
            begin = self.entered[(op.group, op.tile)]
            span = spans.setdefault((gid, op.tile), [begin, op.finish])
            span[1] = max(span[1], op.finish)
        group_cycles: dict[int, int] = {}
        for (gid, _), (a, b) in spans.items():
            group_cycles[gid] = max(group_cycles.get(gid, 0), int(np.ceil(b - a)))
        total = max((op.finish for op in self.ops), default=0.0)
        return Timing(
            cycles=int(np.ceil(total)),
            group_cycles=group_cycles,
            group_estimates={g.group_id: g.estimate_cycles for g in self.program.groups},
            busy={lane: int(np.ceil(v)) for lane, v in sorted(busy.items())},
            ddr_bytes=sum(op.stream for op in self.ops),
            instructions=len(self.ops),
            estimate=sum(g.share_cycles for g in self.program.groups),
        )


# --------------------------------------------------------------------------------------
# Entry points
# --------------------------------------------------------------------------------------


def resolve_ops(program: Program, module) -> list:
    """The op objects of `program.ops`, found in `module` by group id and node."""
    from tx8c.analysis.ddr_tensors import main_body
    from tx8c.dialect.ops.backend import GroupOp

    bodies = {}
    for g in main_body(module).ops:
        if isinstance(g, GroupOp):
            bodies[g.attr("group_id")] = [op for op in g.block.ops if op is not g.yield_op]
    out = []
    for info in program.ops:
        op = bodies[info.group_id][info.node]
        if op.name != info.name:
            raise Tx8ComputeError(f"program op {info.name} (group {info.group_id}, node "
                                  f"{info.node}) is {op.name} in the module")
        out.append(op)
    return out


def run_program(program: Program, module, inputs, constants=None
                ) -> tuple[list[np.ndarray], Timing]:
    """Run `program` (lowered from `module`) on `inputs`: outputs and timing."""
    model = CModelV2(program, resolve_ops(program, module), constants)
    return model.run(inputs)


def simulate(program: Program, module) -> Timing:
    """The timing of `program` alone (no data)."""
    return CModelV2(program, resolve_ops(program, module), functional=False).timing()


@dataclass(frozen=True)
class Event:
    """One instruction as the timing ran it, in cycles from the program's start."""

    group_id: int
    tile: int
    index: int
    """Its position in the tile's instruction list of the group."""
    ins: Dma | Kernel | NocReduce | NocCopy
    lane: str
    start: float
    finish: float
    ddr_bytes: int
    """The DDR bytes it streamed (a DMA, a kernel reading DDR)."""


def simulate_events(program: Program, module) -> tuple[Timing, list[Event],
                                                       dict[tuple[int, int], float]]:
    """`simulate`, with every instruction's start and finish (`Event`s in instruction
    order), and when each tile entered each group: {(group id, tile): cycle}."""
    model = CModelV2(program, resolve_ops(program, module), functional=False)
    run = _Simulation(model)
    timing = run.run()
    gid = [g.group_id for g in program.groups]
    events = [Event(gid[op.group], op.tile, op.index, op.ins, op.lane, op.start,
                    op.finish, op.stream) for op in run.ops]
    return timing, events, {(gid[g], t): c for (g, t), c in run.entered.items()}


def timing_report(timing: Timing, config: TX8Config | None = None) -> dict:
    """The simulated latency beside the estimate, per model (the chained estimate) and
    per group (alone)."""
    estimate = timing.estimate
    groups = []
    for gid, simulated in sorted(timing.group_cycles.items()):
        est = timing.group_estimates.get(gid, 0)
        groups.append({"group": gid, "estimate_cycles": est, "simulated_cycles": simulated,
                       "ratio": round(est / simulated, 4) if simulated else None})
    out = {
        "simulated_cycles": timing.cycles, "estimate_cycles": estimate,
        "estimate_over_simulated": round(estimate / timing.cycles, 4) if timing.cycles
        else None,
        "engine_busy_cycles": timing.busy, "ddr_bytes": timing.ddr_bytes,
        "instructions": timing.instructions, "groups": groups,
    }
    if config is not None:
        out["simulated_seconds"] = timing.cycles / config.clock_hz
    return out


def run_cmodel_v2(module, inputs, constants=None) -> tuple[list[np.ndarray], Timing]:
    """Lower `module` (compiled through the DDR stage) and run its Program."""
    from tx8c.codegen.lower import lower_module
    from tx8c.const_container import module_container

    container = constants if constants is not None else module_container(module)
    program = lower_module(module, container)
    return run_program(program, module, inputs, container)
