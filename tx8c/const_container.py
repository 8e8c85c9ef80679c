"""The ConstContainer: every constant of a model, by id (seed 003, "Const Management").

`move-constant` registers each `tx8be.Constant` here and replaces its uses by
`tx8be.LoadConst {const_id}`; from then on the data lives in the container, not in the ops.
The later stages read it through this API:

- **Entries by id.** `ids()`, `entry(id)` (type, shape, dtype, `mem_layout`),
  `value(id, chip)` (the logical numpy array, read-only), `layout(id)` /
  `set_layout(id, layout)` (the layout the constant is stored in), `stored_bytes(id, chip,
  layout)` (its bytes in its stored layout or in any other, byte-exact through
  `tx8c.target.mem_layout`), `nbytes(id)` (stored size) and `logical_nbytes(id)`.
- **Placement per chip** (the seed's `ParamInfo`): an id has one or more placements, each
  a copy of the data and the set of chips holding it (`ALL_CHIPS` = -1: every chip holds
  the same data). Per-chip data (e.g. a tensor-parallel slice) is added with
  `add_placement`; all placements of an id have its type and layout. `label` is the
  seed's flag "is the data assigned to particular chips": 0 for an every-chip placement, 1
  otherwise (derived from `chips`, never stored apart).
- **Content hashing.** `add` stores identical data once: a constant with the same type,
  stored layout, chips and bytes as an existing one gets that one's id
  (`dedup_saved_bytes` counts what this saved). Candidates are found by a cheap sample of
  the bytes and confirmed by comparing all of them.
- **The DDR image.** `ddr_layout(opt_ddr)` places every id in the constants region of a
  chip's DDR: constants larger than `config.large_const_bytes` (one DDR bank per tile, the
  seed's thresholdSize) first, in id order, then the small ones. With opt_ddr (the
  default; seed 003 "opt_ddr") each large constant starts on a DDR bank boundary
  (`config.ddr_bank_bytes`, 4096); small ones, and all of them without opt_ddr, are packed
  tightly at the batch alignment (`config.batch_align_bytes`, 256: a Cx/NCx tensor's
  batches are aligned relative to its start, so its start must be aligned). Decision: the
  seed aligns "const" to banks without saying which; a bank for each constant smaller
  than a bank per tile would waste up to 4 KiB each for no faster read, so only large
  ones get one. An id's offset is the same on every chip (the program is the same on
  every chip).
  `write_image(f, opt_ddr)` writes `consts.bin` and returns its index `consts.json`
  (`image(opt_ddr)`: the same in memory): the file starts with
  the region as every chip sees it (each every-chip constant in its stored layout at its
  offset, padding zero); each chip-specific placement follows the region at its own
  `file_offset`, and a loader for chip c copies it to its id's offset.
- **Travelling with the IR.** `to_module` / `from_module`: in a module the container is the
  module attribute `tx8c.constants`, an array with one dictionary per placement
  (`{id, mem_layout, chips, value = dense<...>}`), so `tx8c-opt` can print a module after
  move-constant and read it back with its data. Decision: not an MLIR resource section
  (`dense_resource` + `{-# dialect_resources #-}`): xDSL 0.74 keeps resource blobs in one
  dictionary per process on the builtin dialect object, renames a key that a second parse
  in the same process meets again (c0 -> c0_0, breaking the reference), and stores the
  blobs as hex text anyway. `tx8c compile` writes the module without the data:
  `external(module, "consts.json")` replaces the attribute by the index's file name, and
  `load(path)` (or `from_module(module, base_dir)`) reads it back; `tx8c-opt` given such
  a model.mlir reads the constants beside it into the module (`inline`), so its passes
  see them and its output carries them.
- **Loading checks.** `from_image` refuses a `consts.bin` whose size differs from the index
  (naming the first constant that does not fit) and any constant whose sha256 differs
  (naming it): a damaged file is an error, never wrong numbers. The hashes are computed
  in worker threads (hashlib releases the GIL), so they overlap other work.
- **Executors.** `values(chip)` is the id -> array mapping the reference executor and
  cmodel take; the cmodel reads `stored_bytes` and `layout` instead, so it sees the bytes
  DDR holds.

Memory: values read from an image are views of it (zero copy) when the stored layout is
row-major (Tensor/NTensor, or an element type stored compact in every layout); only
channel-aligned constants are unpacked, once, into their logical array.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
from xdsl.dialects.builtin import (
    ArrayAttr,
    BytesAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    i64,
)

from tx8c.dialect.attrs import LayoutMode
from tx8c.dialect.layout import is_aligned, mem_layout_for
from tx8c.dialect.types import short_name, tensor, tensor_of, to_numpy_dtype
from tx8c.errors import Tx8Error
from tx8c.ir_utils import dense_array
from tx8c.target.config import DEFAULT_CONFIG, TX8Config
from tx8c.target.mem_layout import byte_size, pack_into, resolve_dtype, unpack

ALL_CHIPS = -1
MODULE_ATTR = "tx8c.constants"
CONST_STATS_ATTR = "tx8c.const_stats"
"""The module attribute where the constant passes record their statistics."""
INDEX_FORMAT = "tx8c-consts"
INDEX_VERSION = 1
_SAMPLE_POINTS = 64


class ConstDataError(Tx8Error):
    """Constants data that is missing, damaged or does not match its index."""


# --------------------------------------------------------------------------------------
# Entries
# --------------------------------------------------------------------------------------


def _chips(chips: int | Iterable[int]) -> tuple[int, ...]:
    chips = (chips,) if isinstance(chips, int) else tuple(sorted({int(c) for c in chips}))
    if not chips or (ALL_CHIPS in chips and len(chips) > 1) or min(chips) < ALL_CHIPS:
        raise ValueError(
            f"chips must be {ALL_CHIPS} (every chip) or a set of chip numbers >= 0, "
            f"got {list(chips)}"
        )
    return chips


def row_major(dtype: Any, layout: LayoutMode) -> bool:
    """Whether `layout` stores elements of `dtype` exactly as numpy's C order does."""
    return not is_aligned(layout) or not resolve_dtype(dtype).channel_aligned


def _raw(array: np.ndarray) -> np.ndarray:
    """The bytes of a C-contiguous array, as a flat uint8 view (no copy)."""
    return np.ascontiguousarray(array).reshape(-1).view(np.uint8)


@dataclass
class Placement:
    """One copy of a constant's data and the chips holding it (the seed's ParamInfo).

    Holds the logical value, the stored bytes (an image in memory), or a slice of a
    `consts.bin` file (read on each use, never kept). A value derived from bytes in memory
    is kept. `attr` is the IR attribute the value came from, reused when the container is
    written back into a module.
    """

    chips: tuple[int, ...]
    value_: np.ndarray | None = None
    stored_: memoryview | None = None
    source: FileSlice | None = None
    attr: DenseIntOrFPElementsAttr | None = None
    sha256: str | None = None

    def stored(self) -> memoryview | bytes | None:
        """The stored bytes held or read from the file (None when only the value is)."""
        if self.stored_ is not None:
            return self.stored_
        return self.source.read() if self.source is not None else None

    @property
    def label(self) -> int:
        """The seed's label: 0 when every chip holds this data, 1 when it is assigned to
        the chips listed."""
        return 0 if self.chips == (ALL_CHIPS,) else 1

    def holds(self, chip: int) -> bool:
        return self.chips == (ALL_CHIPS,) or chip in self.chips


@dataclass
class ConstEntry:
    """Everything the container knows of one id."""

    id: int
    type: TensorType
    mem_layout: LayoutMode
    placements: list[Placement] = field(default_factory=list)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.type.get_shape())

    @property
    def dtype(self) -> str:
        """The element type's IR name (f32, i64, ...)."""
        return short_name(self.type.get_element_type())

    @property
    def numpy_dtype(self) -> np.dtype:
        return to_numpy_dtype(self.type.get_element_type())

    def describe(self) -> str:
        dims = "x".join(str(d) for d in self.shape) or "scalar"
        return f"constant {self.id} ({dims} {self.dtype}, stored {self.mem_layout.value})"


# --------------------------------------------------------------------------------------
# DDR placement
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Slot:
    """Where one id sits in the constants region of every chip's DDR."""

    id: int
    offset: int
    nbytes: int


@dataclass(frozen=True)
class DdrLayout:
    """The constants region of a chip's DDR: one slot per id, in placement order."""

    opt_ddr: bool
    slots: tuple[Slot, ...]
    region_bytes: int

    def slot(self, const_id: int) -> Slot:
        for s in self.slots:
            if s.id == const_id:
                return s
        raise KeyError(const_id)


def _align(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment


@dataclass
class ConstImage:
    """`consts.bin` (`data`) and its index (`index`, the content of `consts.json`)."""

    data: memoryview
    index: dict[str, Any]

    def index_json(self) -> str:
        return index_json(self.index)


def index_json(index: Mapping[str, Any]) -> str:
    """An index as JSON text: one line per field, one line per constant."""
    head = {k: v for k, v in index.items() if k != "constants"}
    lines = [f" {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()]
    rows = [f"  {json.dumps(row, separators=(', ', ': '))}" for row in index["constants"]]
    return "{\n" + "\n".join(lines) + '\n "constants": [\n' + ",\n".join(rows) + "\n ]\n}\n"


# --------------------------------------------------------------------------------------
# The container
# --------------------------------------------------------------------------------------


class ConstContainer:
    """Every constant of a module by id (see the module docstring for the API)."""

    def __init__(self, config: TX8Config = DEFAULT_CONFIG):
        self.config = config
        self._entries: dict[int, ConstEntry] = {}
        self._by_sample: dict[tuple, list[int]] = {}  # dedup candidates by a cheap key
        self._keys: dict[int, tuple] = {}
        self.dedup_hits = 0
        self.dedup_saved_bytes = 0

    # -- reading ---------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, const_id: object) -> bool:
        return const_id in self._entries

    def ids(self) -> list[int]:
        return sorted(self._entries)

    def entries(self) -> Iterator[ConstEntry]:
        for const_id in self.ids():
            yield self._entries[const_id]

    def entry(self, const_id: int) -> ConstEntry:
        try:
            return self._entries[const_id]
        except KeyError:
            raise ConstDataError(
                f"constant {const_id} is not in the constant container (it holds "
                f"{len(self)} constant(s){_id_range(self.ids())}); the module and its "
                "constants do not belong together"
            ) from None

    def layout(self, const_id: int) -> LayoutMode:
        return self.entry(const_id).mem_layout

    def placement(self, const_id: int, chip: int = 0) -> Placement:
        entry = self.entry(const_id)
        for p in entry.placements:
            if p.holds(chip):
                return p
        raise ConstDataError(f"{entry.describe()} has no data for chip {chip}")

    def value(self, const_id: int, chip: int = 0) -> np.ndarray:
        """The logical value (read-only) chip `chip` holds."""
        entry = self.entry(const_id)
        p = self.placement(const_id, chip)
        if p.value_ is not None:
            return p.value_
        value = self._unpack(entry, p.stored())
        if p.source is None:  # bytes in memory: keep the value; a file is read again
            p.value_ = value
        return value

    def stored_bytes(self, const_id: int, chip: int = 0,
                     layout: LayoutMode | None = None) -> memoryview:
        """The bytes of the constant in `layout` (default: its stored layout)."""
        entry = self.entry(const_id)
        layout = entry.mem_layout if layout is None else layout
        p = self.placement(const_id, chip)
        stored = p.stored() if layout == entry.mem_layout else None
        if stored is not None:
            return memoryview(stored)
        value = self.value(const_id, chip)
        if row_major(entry.numpy_dtype, layout):
            return memoryview(_raw(value))
        out = bytearray(self.nbytes(const_id, layout))
        pack_into(out, value, layout, self.config, dtype=entry.dtype)
        return memoryview(out)

    def nbytes(self, const_id: int, layout: LayoutMode | None = None) -> int:
        """Stored bytes of the constant in `layout` (default: its stored layout)."""
        entry = self.entry(const_id)
        layout = entry.mem_layout if layout is None else layout
        return byte_size(entry.shape, entry.type.get_element_type(), layout, self.config)

    def logical_nbytes(self, const_id: int) -> int:
        entry = self.entry(const_id)
        return int(np.prod(entry.shape, dtype=np.int64)) * entry.numpy_dtype.itemsize

    def values(self, chip: int = 0) -> ConstValues:
        """The id -> logical value mapping of chip `chip` (what the executors take)."""
        return ConstValues(self, chip)

    def _unpack(self, entry: ConstEntry, stored: memoryview) -> np.ndarray:
        if row_major(entry.numpy_dtype, entry.mem_layout):  # a view of the bytes
            count = int(np.prod(entry.shape, dtype=np.int64))
            value = np.frombuffer(stored, dtype=entry.numpy_dtype, count=count)
            value = value.reshape(entry.shape)
        else:
            value = unpack(stored, entry.shape, entry.dtype, entry.mem_layout, self.config)
        value.flags.writeable = False
        return value

    # -- building --------------------------------------------------------------------------
    def add(self, value: np.ndarray | DenseIntOrFPElementsAttr,
            mem_layout: LayoutMode | None = None, chips: int | Iterable[int] = ALL_CHIPS) -> int:
        """Register a constant; its id (an existing one when identical data is stored in
        the same layout for the same chips). `value` may be the IR attribute holding it
        (kept, so writing the container back into a module copies nothing)."""
        attr = value if isinstance(value, DenseIntOrFPElementsAttr) else None
        array = dense_array(attr) if attr is not None else _read_only(np.asarray(value))
        ttype = attr.type if attr is not None else tensor_of(array)
        layout = mem_layout or mem_layout_for(array.shape, aligned=False)
        chips = _chips(chips)
        key = (ttype, layout, chips, _sample(array))
        for candidate in self._by_sample.get(key, ()):
            if np.array_equal(_raw(self.value(candidate, _any_chip(chips))), _raw(array)):
                self.dedup_hits += 1
                self.dedup_saved_bytes += self.nbytes(candidate)
                return candidate
        const_id = max(self._entries, default=-1) + 1
        entry = ConstEntry(const_id, ttype, layout)
        entry.placements.append(Placement(chips, value_=array, attr=attr))
        self._entries[const_id] = entry
        self._index(const_id)
        return const_id

    def add_placement(self, const_id: int, value: np.ndarray, chips: Iterable[int]) -> None:
        """Give chips `chips` their own data for `const_id` (same type as the entry)."""
        entry = self.entry(const_id)
        chips = _chips(chips)
        array = _read_only(np.asarray(value))
        if tensor_of(array) != entry.type:
            raise ValueError(
                f"{entry.describe()}: a placement must have the entry's type, got "
                f"{list(array.shape)} {array.dtype}"
            )
        taken = {c for p in entry.placements for c in p.chips}
        if ALL_CHIPS in taken or ALL_CHIPS in chips or taken & set(chips):
            raise ValueError(
                f"{entry.describe()}: chips {list(chips)} overlap its placements on "
                f"{sorted(taken)}; each chip holds one copy"
            )
        self._unindex(const_id)  # per-chip data is never shared by content
        entry.placements.append(Placement(chips, value_=array))

    def set_layout(self, const_id: int, layout: LayoutMode) -> None:
        """Store the constant in `layout` from now on (its bytes follow at image time)."""
        entry = self.entry(const_id)
        if layout == entry.mem_layout:
            return
        for p in entry.placements:
            if p.value_ is None:
                p.value_ = self._unpack(entry, p.stored())
            p.stored_, p.source, p.sha256 = None, None, None
        self._unindex(const_id)
        entry.mem_layout = layout
        self._index(const_id)

    def copy(self, const_id: int, layout: LayoutMode) -> int:
        """The id of the constant's data stored in `layout`: an existing one if identical
        data is already stored so, else a new entry (a second stored copy)."""
        entry = self.entry(const_id)
        first = entry.placements[0]
        if len(entry.placements) == 1:
            return self.add(first.attr if first.attr is not None else self.value(const_id),
                            layout, first.chips)
        new_id = max(self._entries) + 1
        self._entries[new_id] = ConstEntry(new_id, entry.type, layout, [
            Placement(p.chips, value_=self.value(const_id, _any_chip(p.chips)), attr=p.attr)
            for p in entry.placements
        ])
        return new_id

    def renumber(self, order: Sequence[int]) -> dict[int, int]:
        """Give the ids in `order` the numbers 0, 1, ...; returns old id -> new id."""
        if sorted(order) != self.ids():
            raise ValueError("renumber needs every id exactly once")
        mapping = {old: new for new, old in enumerate(order)}
        entries = {}
        for old, new in mapping.items():
            entry = self._entries[old]
            entry.id = new
            entries[new] = entry
        self._entries = entries
        self._by_sample, self._keys = {}, {}
        for const_id in self._entries:
            self._index(const_id)
        return mapping

    def retain(self, used: Iterable[int]) -> int:
        """Drop every id not in `used`; the number dropped."""
        keep = set(used)
        dropped = [i for i in self._entries if i not in keep]
        for i in dropped:
            self._unindex(i)
            del self._entries[i]
        return len(dropped)

    def _index(self, const_id: int) -> None:
        """Make `const_id` a dedup candidate (entries with one placement only)."""
        entry = self._entries[const_id]
        if len(entry.placements) != 1:
            return
        p = entry.placements[0]
        key = (entry.type, entry.mem_layout, p.chips,
               _sample(self.value(const_id, _any_chip(p.chips))))
        self._keys[const_id] = key
        self._by_sample.setdefault(key, []).append(const_id)

    def _unindex(self, const_id: int) -> None:
        key = self._keys.pop(const_id, None)
        if key is not None:
            self._by_sample[key].remove(const_id)

    # -- the DDR image -----------------------------------------------------------------------
    def is_large(self, const_id: int) -> bool:
        return self.nbytes(const_id) > self.config.large_const_bytes

    def ddr_layout(self, opt_ddr: bool = True) -> DdrLayout:
        """Offsets of every id in a chip's constants region (module docstring)."""
        order = sorted(self.ids(), key=lambda i: (not self.is_large(i), i))
        slots, cursor = [], 0
        for const_id in order:
            cursor = _align(cursor, self._alignment(const_id, opt_ddr))
            slots.append(Slot(const_id, cursor, self.nbytes(const_id)))
            cursor += slots[-1].nbytes
        return DdrLayout(opt_ddr, tuple(slots), cursor)

    def _alignment(self, const_id: int, opt_ddr: bool) -> int:
        if opt_ddr and self.is_large(const_id):
            return self.config.ddr_bank_bytes
        return self.config.batch_align_bytes

    def image_index(self, opt_ddr: bool = True, file_name: str = "consts.bin"
                    ) -> dict[str, Any]:
        """The index of the image `write_image` writes, without the sha256 of each
        constant (known once its bytes are written)."""
        return self._image_plan(opt_ddr, file_name)[0]

    def _image_plan(self, opt_ddr: bool, file_name: str
                    ) -> tuple[dict[str, Any], list[tuple[int, Placement]]]:
        """The index and, row by row, (id, placement) of the image."""
        layout = self.ddr_layout(opt_ddr)
        rows: list[dict[str, Any]] = []
        places: list[tuple[int, Placement]] = []
        cursor = layout.region_bytes
        for slot in layout.slots:
            entry = self._entries[slot.id]
            for p in entry.placements:
                if p.chips == (ALL_CHIPS,):
                    file_offset = slot.offset
                else:
                    file_offset = cursor = _align(cursor, self._alignment(slot.id, opt_ddr))
                    cursor += slot.nbytes
                places.append((slot.id, p))
                rows.append(self._row(entry, slot, p, file_offset))
        index = {
            "format": INDEX_FORMAT,
            "version": INDEX_VERSION,
            "file": file_name,
            "file_bytes": cursor,
            "region_bytes": layout.region_bytes,
            "opt_ddr": opt_ddr,
            "ddr_bank_bytes": self.config.ddr_bank_bytes,
            "batch_align_bytes": self.config.batch_align_bytes,
            "large_const_bytes": self.config.large_const_bytes,
            "constants": rows,
        }
        return index, places

    def write_image(self, f: BinaryIO, opt_ddr: bool = True,
                    file_name: str = "consts.bin") -> dict[str, Any]:
        """Write `consts.bin` to the binary file `f`, constant by constant (no image in
        memory: row-major constants are written from their values' own bytes, the others
        packed one at a time); return its index, the content of `consts.json`. Each
        constant's sha256 is computed in a worker thread while the next one is written."""
        index, places = self._image_plan(opt_ddr, file_name)
        rows = index["constants"]
        written = 0
        with _hasher() as hasher:
            digests = {}
            for i in sorted(range(len(rows)), key=lambda i: rows[i]["file_offset"]):
                const_id, p = places[i]
                f.write(bytes(rows[i]["file_offset"] - written))  # zero padding before it
                piece = self.stored_bytes(const_id, _any_chip(p.chips))
                digests[i] = hasher.submit(_sha256, piece)
                f.write(piece)
                written = rows[i]["file_offset"] + len(piece)
            f.write(bytes(index["file_bytes"] - written))
            for i, row in enumerate(rows):
                row["sha256"] = digests[i].result()
        return index

    def image(self, opt_ddr: bool = True, file_name: str = "consts.bin") -> ConstImage:
        """`consts.bin` in memory and its index (`write_image` into a buffer)."""
        buffer = io.BytesIO()
        index = self.write_image(buffer, opt_ddr, file_name)
        return ConstImage(buffer.getbuffer(), index)

    @staticmethod
    def _row(entry: ConstEntry, slot: Slot, p: Placement, file_offset: int) -> dict[str, Any]:
        return {
            "id": entry.id,
            "offset": slot.offset,
            "bytes": slot.nbytes,
            "dtype": entry.dtype,
            "shape": list(entry.shape),
            "mem_layout": entry.mem_layout.value,
            "chips": list(p.chips),
            "label": p.label,
            "file_offset": file_offset,
            "sha256": "",
        }

    # -- reading an image ----------------------------------------------------------------
    @classmethod
    def from_image(cls, index: Mapping[str, Any], data: bytes | bytearray | memoryview,
                   source: str = "consts.bin", config: TX8Config = DEFAULT_CONFIG,
                   ) -> ConstContainer:
        """The container an image in memory holds, after checking sizes and every
        sha256."""
        view = memoryview(data)
        rows = _checked_rows(index, len(view), source)
        pieces = [view[r["file_offset"]:r["file_offset"] + r["bytes"]] for r in rows]
        container = cls._from_rows(rows, [Placement(_chips(r["chips"]), stored_=piece,
                                                    sha256=r["sha256"])
                                          for r, piece in zip(rows, pieces, strict=True)],
                                   source, config)
        _check_digests(container, rows, _sha256_all(pieces), source)
        return container

    @classmethod
    def load(cls, index_path: str | Path, config: TX8Config = DEFAULT_CONFIG) -> ConstContainer:
        """Read `consts.json` and check the `consts.bin` it names (beside it): its size
        and every constant's sha256, streamed through worker threads. The data stays in
        the file: each use reads its constant's bytes (nothing is kept, so a run holds only
        the constants its live values need)."""
        index_path = Path(index_path)
        index = _read_index(index_path)
        bin_path = index_path.parent / index["file"]
        if not bin_path.is_file():
            raise ConstDataError(
                f"'{bin_path}' (the constants '{index_path}' indexes) does not exist; copy it "
                "with the rest of the output directory or compile the model again."
            )
        data = open(bin_path, "rb")  # noqa: SIM115 - kept open by the slices that read it
        rows = _checked_rows(index, os.fstat(data.fileno()).st_size, str(bin_path))
        slices = [FileSlice(data, r["file_offset"], r["bytes"]) for r in rows]
        container = cls._from_rows(rows, [Placement(_chips(r["chips"]), source=piece,
                                                    sha256=r["sha256"])
                                          for r, piece in zip(rows, slices, strict=True)],
                                   str(bin_path), config)
        _check_digests(container, rows, _sha256_all(slices), str(bin_path))
        return container

    @classmethod
    def _from_rows(cls, rows: list[dict[str, Any]], placements: list[Placement], source: str,
                   config: TX8Config) -> ConstContainer:
        container = cls(config)
        for row, placement in zip(rows, placements, strict=True):
            entry = container._entries.get(row["id"])
            if entry is None:
                entry = ConstEntry(row["id"], tensor(row["shape"], _element_type(row, source)),
                                   LayoutMode(row["mem_layout"]))
                container._entries[row["id"]] = entry
            expected = container.nbytes(entry.id)
            if row["bytes"] != expected:
                raise ConstDataError(
                    f"{source}: {entry.describe()} takes {expected} bytes in its layout but "
                    f"the index gives it {row['bytes']}; the index is damaged. Compile the "
                    "model again."
                )
            entry.placements.append(placement)
        return container

    # -- the module attribute ------------------------------------------------------------
    @classmethod
    def from_module(cls, module: ModuleOp, base_dir: str | Path | None = None,
                    config: TX8Config = DEFAULT_CONFIG) -> ConstContainer:
        """The container a module carries (empty if none). A module written by `tx8c
        compile` names its index file instead: it is read from `base_dir`."""
        attr = module.attributes.get(MODULE_ATTR)
        if attr is None:
            return cls(config)
        if isinstance(attr, StringAttr):
            if base_dir is None:
                raise ConstDataError(
                    f"the module's constants are in '{attr.data}' beside its .mlir file "
                    "(written by tx8c compile), and the module was not read from a file; "
                    "give the model.mlir of the compile output directory as a file."
                )
            return cls.load(Path(base_dir) / attr.data, config)
        container = cls(config)
        for item in _placement_attrs(attr):
            container._read_placement_attr(item)
        for const_id in container._entries:
            container._index(const_id)
        return container

    def _read_placement_attr(self, item: DictionaryAttr) -> None:
        fields = item.data
        const_id = fields["id"].value.data
        value = fields["value"]
        chips = _chips(fields["chips"].get_values())
        entry = self._entries.get(const_id)
        if entry is None:
            entry = ConstEntry(const_id, value.type, LayoutMode(fields["mem_layout"].data))
            self._entries[const_id] = entry
        entry.placements.append(Placement(chips, value_=dense_array(value), attr=value))

    def to_module(self, module: ModuleOp) -> None:
        """Write the container into the module (replacing the one it carries)."""
        items = []
        for entry in self.entries():
            for p in entry.placements:
                if p.attr is None:
                    p.attr = _dense(self.value(entry.id, _any_chip(p.chips)))
                items.append(DictionaryAttr({
                    "id": IntegerAttr(entry.id, i64),
                    "mem_layout": StringAttr(entry.mem_layout.value),
                    "chips": DenseArrayBase.from_list(i64, list(p.chips)),
                    "value": p.attr,
                }))
        module.attributes[MODULE_ATTR] = ArrayAttr(items)

    @classmethod
    def inline(cls, module: ModuleOp, base_dir: str | Path | None) -> None:
        """Make a module that names its index file (`tx8c compile`'s model.mlir) carry its
        constants itself, read from `base_dir` (tx8c-opt, so passes can use them and the
        printed module travels with its data). Other modules are left as they are."""
        attr = module.attributes.get(MODULE_ATTR)
        if isinstance(attr, StringAttr) and base_dir is not None:
            cls.from_module(module, base_dir).to_module(module)

    @staticmethod
    def external(module: ModuleOp, index_name: str = "consts.json") -> None:
        """Make the module name its constants' index file instead of carrying them."""
        module.attributes[MODULE_ATTR] = StringAttr(index_name)


class ConstValues(Mapping[int, np.ndarray]):
    """The logical values one chip sees, by id (read lazily, kept once read)."""

    def __init__(self, container: ConstContainer, chip: int):
        self.container = container
        self.chip = chip

    def __getitem__(self, const_id: int) -> np.ndarray:
        if const_id not in self.container:
            raise KeyError(const_id)
        return self.container.value(const_id, self.chip)

    def __iter__(self) -> Iterator[int]:
        return iter(self.container.ids())

    def __len__(self) -> int:
        return len(self.container)


def module_container(module: ModuleOp) -> ConstContainer | None:
    """The container a module carries in itself, None when it carries none."""
    if MODULE_ATTR not in module.attributes:
        return None
    return ConstContainer.from_module(module)


# --------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------


def _read_only(array: np.ndarray) -> np.ndarray:
    array = np.ascontiguousarray(array)
    if array.flags.writeable:
        array = array.copy()
        array.flags.writeable = False
    return array


def _any_chip(chips: tuple[int, ...]) -> int:
    return 0 if chips == (ALL_CHIPS,) else chips[0]


def _sample(array: np.ndarray) -> bytes:
    """A few bytes spread over the array: equal arrays have equal samples."""
    raw = _raw(array)
    if raw.size <= 4 * _SAMPLE_POINTS:
        return raw.tobytes()
    step = raw.size // _SAMPLE_POINTS
    return raw[::step].tobytes() + raw[-8:].tobytes()


def _dense(array: np.ndarray) -> DenseIntOrFPElementsAttr:
    return DenseIntOrFPElementsAttr(tensor_of(array), BytesAttr(_raw(array).tobytes()))


@dataclass(frozen=True)
class FileSlice:
    """`nbytes` bytes at `offset` of an open file, read on demand."""

    file: Any
    offset: int
    nbytes: int

    def read(self) -> bytes:
        data = os.pread(self.file.fileno(), self.nbytes, self.offset)
        if len(data) != self.nbytes:  # the file changed since its size was checked
            raise ConstDataError(
                f"'{self.file.name}' ended while reading {self.nbytes} bytes at offset "
                f"{self.offset}; it changed after it was checked. Run again."
            )
        return data

    def chunks(self, size: int = 8 << 20) -> Iterator[bytes]:
        fd = self.file.fileno()
        for start in range(self.offset, self.offset + self.nbytes, size):
            yield os.pread(fd, min(size, self.offset + self.nbytes - start), start)


def _sha256(piece: memoryview | FileSlice) -> str:
    if isinstance(piece, FileSlice):
        h = hashlib.sha256()
        for chunk in piece.chunks():
            h.update(chunk)
        return h.hexdigest()
    return hashlib.sha256(piece).hexdigest()


def _hasher() -> ThreadPoolExecutor:
    """Worker threads for sha256 (hashlib releases the GIL on large data)."""
    return ThreadPoolExecutor(max(1, os.cpu_count() or 1))


def _sha256_all(pieces: Iterable[memoryview | FileSlice]) -> list[str]:
    """The sha256 of each piece, computed in worker threads."""
    with _hasher() as pool:
        return list(pool.map(_sha256, pieces))


def _id_range(ids: list[int]) -> str:
    return f", ids {ids[0]}..{ids[-1]}" if ids else ""


def _placement_attrs(attr) -> list[DictionaryAttr]:
    items = attr.data if isinstance(attr, ArrayAttr) else None
    if items is None or not all(_is_placement_attr(i) for i in items):
        raise ConstDataError(
            f"the module attribute '{MODULE_ATTR}' must be an array of dictionaries "
            "{id, mem_layout, chips, value = dense<...>} (as move-constant writes it) or the "
            "name of a consts.json file"
        )
    return list(items)


def _is_placement_attr(item) -> bool:
    if not isinstance(item, DictionaryAttr):
        return False
    f = item.data
    return (isinstance(f.get("id"), IntegerAttr) and isinstance(f.get("value"),
            DenseIntOrFPElementsAttr) and isinstance(f.get("chips"), DenseArrayBase)
            and isinstance(f.get("mem_layout"), StringAttr)
            and f["mem_layout"].data in LayoutMode.__members__)


# -- the index file ---------------------------------------------------------------------

_ROW_FIELDS = {"id": int, "offset": int, "bytes": int, "dtype": str, "shape": list,
               "mem_layout": str, "chips": list, "label": int, "file_offset": int,
               "sha256": str}


def _read_index(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise ConstDataError(
            f"'{path}' does not exist; the compiled model's constants are indexed there. "
            "Give the whole output directory of tx8c compile, or compile the model again."
        )
    try:
        index = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ConstDataError(
            f"'{path}' is not a readable constants index ({e}); compile the model again."
        ) from None
    _index_rows(index, str(path))
    return index


def _index_rows(index: Any, source: str) -> list[dict[str, Any]]:
    """The rows of an index, checked field by field."""
    def bad(what: str) -> ConstDataError:
        return ConstDataError(
            f"{source}: the constants index is not valid ({what}); compile the model again."
        )

    if not isinstance(index, dict) or index.get("format") != INDEX_FORMAT:
        raise bad(f"it is not a '{INDEX_FORMAT}' file")
    if index.get("version") != INDEX_VERSION:
        raise bad(f"version {index.get('version')!r}, tx8c reads version {INDEX_VERSION}")
    if not isinstance(index.get("file"), str) or not isinstance(index.get("file_bytes"), int):
        raise bad("'file' and 'file_bytes' are missing")
    rows = index.get("constants")
    if not isinstance(rows, list):
        raise bad("'constants' is not a list")
    for row in rows:
        if not isinstance(row, dict) or any(
            not isinstance(row.get(k), t) or isinstance(row.get(k), bool) and t is int
            for k, t in _ROW_FIELDS.items()
        ):
            raise bad(f"a row lacks one of {', '.join(_ROW_FIELDS)}: {str(row)[:120]}")
        if row["mem_layout"] not in LayoutMode.__members__ or row["file_offset"] < 0:
            raise bad(f"constant {row['id']} has mem_layout {row['mem_layout']!r} or a "
                      "negative offset")
        try:
            _chips(row["chips"])
        except (ValueError, TypeError):
            raise bad(f"constant {row['id']} has chips {row['chips']!r}") from None
    return rows


def _element_type(row: dict[str, Any], source: str):
    from tx8c.dialect.types import from_numpy_dtype

    try:
        return from_numpy_dtype(resolve_dtype(row["dtype"]).dtype)
    except (ValueError, Tx8Error):
        raise ConstDataError(
            f"{source}: constant {row['id']} has element type {row['dtype']!r}, which tx8c "
            "does not know; compile the model again."
        ) from None


def _checked_rows(index: Mapping[str, Any], size: int, source: str) -> list[dict[str, Any]]:
    """The index's rows, after checking that the data has the size the index says."""
    rows = _index_rows(index, source)
    if size != index["file_bytes"]:
        _raise_size_mismatch(rows, size, index["file_bytes"], source)
    for r in rows:
        if r["file_offset"] + r["bytes"] > size:
            _raise_size_mismatch(rows, size, r["file_offset"] + r["bytes"], source)
    return rows


def _check_digests(container: ConstContainer, rows: list[dict[str, Any]],
                   digests: list[str], source: str) -> None:
    for row, digest in zip(rows, digests, strict=True):
        if digest != row["sha256"]:
            entry = container.entry(row["id"])
            raise ConstDataError(
                f"{source}: {entry.describe()} at offset {row['file_offset']} "
                f"({row['bytes']} bytes) is damaged: its sha256 is {digest[:16]}... but the "
                f"index says {row['sha256'][:16]}.... Compile the model again (tx8c compile "
                "MODEL.onnx -o OUT/) to rewrite the constants."
            )


def _raise_size_mismatch(rows: list[dict[str, Any]], size: int, expected: int,
                         source: str) -> None:
    cut = [r for r in rows if r["file_offset"] + r["bytes"] > size]
    victim = (f"; constant {cut[0]['id']} ({'x'.join(map(str, cut[0]['shape']))} "
              f"{cut[0]['dtype']} at offset {cut[0]['file_offset']}) is cut off") if cut else ""
    what = "truncated" if size < expected else "longer than its index says"
    raise ConstDataError(
        f"{source} is {what}: it has {size} bytes, the index says {expected}{victim}. "
        "Copy the output directory again or compile the model again."
    )
