"""SPM-resident boundary tensors ("interleaved SPM buffers", issue 11): values between
groups kept in the tiles' SPM instead of DDR. Shared by the spm-resident pass (the
decision), group-spec reading (each group's reserve and resident loads and stores),
ddr-alloc (resident values get no DDR), the lowering and the executors.

**Layout of a resident value.** Its bytes, in its stored layout exactly as they would
be in DDR, are cut into pages of `page` bytes; page p lives on tile p mod T (T the
tiles of the chip) at SPM address `base + (p div T) * page`. `base` is the same on
every tile: the value holds `per_tile` = ceil(pages / T) * page bytes at the top of
each tile's SPM, in the *region* - the top `budget` bytes - at region offset `region`
(counted down from the top: the value occupies SPM addresses [spm - region - per_tile,
spm - region)). The idea is Tenstorrent's "L1-interleaved" buffers: every tile's NoC
port serves a share of every DMA of the value.

**Lifetimes and the reserve.** A value written in barrier epoch p and last read in
epoch r is live in [p, r + 1) (`tx8c.analysis.ddr_tensors`, the rule ddr-alloc uses);
two resident values whose lifetimes meet never share region bytes. The *reserve* of an
epoch is the highest region end of the values live in it: every group of that epoch
plans its own buffers in the SPM below it (`spm_bytes_per_tile - reserve`), so no
group buffer ever overlaps a live resident value. A group's reserve is its epoch's
rounded up to a multiple of `budget / RESERVE_LEVELS` (`group_reserve`): equal groups of
nearby epochs (a network's repeated blocks) then plan with the same SPM and share one
search (group-cost's templates). With exact reserves ResNet-50's search ran 3.7 times
longer (8.0 s -> 29.3 s) for plans that differ little.

**Which values.** Values between groups (not graph inputs or outputs, not constants)
that every reader loads with a DMA (no kernel reads them straight from DDR) and that
no relabel group aliases, and whose transfers are faster over the NoC than through DDR
(`transfer_cycles_saved`: a small value's window pays the NoC's hops and gains little
bandwidth, so it stays in DDR). They are taken greedily by cycles saved per reserved
byte-epoch - a store and one load per reading group, over `per_tile` times the epochs
held - and placed first-fit in the region (`interval_alloc.place_within`); a value that
does not fit stays in DDR.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from xdsl.dialects.builtin import ModuleOp, StringAttr

from tx8c.analysis.interval_alloc import Buffer, conflicts, place_within
from tx8c.errors import Tx8Error
from tx8c.target.config import TX8Config
from tx8c.target.cost import dma_cycles, resident_dma_cycles

RESIDENT_ATTR = "tx8c.resident"
"""Module attribute: the `Residency` as JSON."""
GROUP_ATTR = "tx8c.resident"
"""Group attribute: the group's `GroupResidency` as JSON (absent: nothing resident)."""


RESERVE_LEVELS = 4
"""The reserves groups plan with: multiples of budget / RESERVE_LEVELS."""

DEFAULT_SHARE = 3
"""The default budget is the tile's SPM / DEFAULT_SHARE (`default_budget`)."""
DEFAULT_PAGE = 4096
"""The default page size."""


class ResidencyError(Tx8Error):
    """A bad spm-resident option."""


@dataclass(frozen=True)
class ResidentValue:
    """A value kept in SPM (see the module docstring)."""

    name: str
    size: int
    """Stored bytes (what DDR would hold)."""
    per_tile: int
    region: int
    """Offset in the region, from the top of the SPM down."""
    live: tuple[int, int]

    def base(self, config: TX8Config) -> int:
        """The SPM address of the value's first page on every tile."""
        return config.spm_bytes_per_tile - self.region - self.per_tile


@dataclass(frozen=True)
class Residency:
    """The resident values of a module, the page size, the budget, and per barrier
    epoch the reserve at the top of every tile's SPM."""

    budget: int
    page: int
    values: tuple[ResidentValue, ...]
    reserve: tuple[int, ...]

    @property
    def names(self) -> frozenset[str]:
        return frozenset(v.name for v in self.values)

    @property
    def bytes_kept(self) -> int:
        """Stored bytes of the resident values (each would be stored to DDR once)."""
        return sum(v.size for v in self.values)

    def as_dict(self) -> dict:
        return asdict(self)

    @staticmethod
    def from_dict(data: dict) -> Residency:
        return Residency(
            data["budget"], data["page"],
            tuple(ResidentValue(v["name"], v["size"], v["per_tile"], v["region"],
                                tuple(v["live"])) for v in data["values"]),
            tuple(data["reserve"]))


@dataclass(frozen=True)
class GroupResidency:
    """What a group knows of residency: the SPM reserved above its buffers, and which of
    its operands and results are resident."""

    reserve: int = 0
    operands: tuple[int, ...] = ()
    results: tuple[int, ...] = ()


def default_budget(config: TX8Config) -> int:
    """The budget spm-resident uses unless told: a third of a tile's SPM in whole default
    pages (1 MiB of the default TX8Config's 3 MiB), chosen from the sweep in
    bench/README.md ("spm-resident on by default"). Scaling with the SPM leaves a small
    target's groups room to plan."""
    return config.spm_bytes_per_tile // DEFAULT_SHARE // DEFAULT_PAGE * DEFAULT_PAGE


def reserve_step(budget: int) -> int:
    """The unit of the reserves groups plan with (module docstring)."""
    return max(1, budget // RESERVE_LEVELS)


def group_reserve(reserve: int, budget: int) -> int:
    """The SPM a group of an epoch with `reserve` plans without (module docstring)."""
    step = reserve_step(budget)
    return min(budget, -(-reserve // step) * step)


def lowered_cap(reserve: int, budget: int) -> int:
    """The cap of an epoch whose groups cannot all be planned below `group_reserve(
    reserve)` (> 0): the level below it (0 at the lowest: nothing resident in the
    epoch)."""
    step = reserve_step(budget)
    return (group_reserve(reserve, budget) - 1) // step * step


def per_tile_bytes(size: int, page: int, tiles: int) -> int:
    """Bytes a value of `size` stored bytes holds on every tile (whole pages)."""
    pages = -(-size // page)
    return -(-pages // tiles) * page


def page_location(byte: int, page: int, tiles: int) -> tuple[int, int]:
    """(tile, offset from the value's base) of byte `byte` of a resident value."""
    p, within = divmod(byte, page)
    return p % tiles, (p // tiles) * page + within


def check_options(budget: int, page: int, config: TX8Config) -> None:
    """A budget in [0, spm_bytes_per_tile) and a page that is a positive multiple of
    `batch_align_bytes` (so the groups' buffers below the region stay aligned)."""
    if not 0 <= budget < config.spm_bytes_per_tile:
        raise ResidencyError(
            f"spm-resident budget must be between 0 (off) and the SPM of a tile "
            f"({config.spm_bytes_per_tile} bytes), got {budget}")
    if page <= 0 or page % config.batch_align_bytes:
        raise ResidencyError(
            f"spm-resident page must be a positive multiple of {config.batch_align_bytes} "
            f"bytes (batch_align_bytes), got {page}")


@dataclass(frozen=True)
class Candidate:
    """A value that may become resident: its name, stored bytes, lifetime in epochs and
    the number of group loads that read it."""

    name: str
    size: int
    live: tuple[int, int]
    loads: int


def transfer_cycles_saved(size: int, config: TX8Config) -> int:
    """Cycles one transfer (a group's store or load) of a value of `size` stored bytes
    saves when the value is resident: the group is taken to spread the value over every
    tile of the chip, all streaming at once (the plans of the groups between two large
    ones), so each tile's window of size / tiles bytes crosses DDR at its share of the
    chip's bandwidth (`cost.dma_cycles`) or the NoC from the pages
    (`cost.resident_dma_cycles`: the hops to the farthest tile, then the port's rate).
    Negative for small values, whose windows are mostly the hops (on the default target
    a window below ~370 bytes)."""
    tiles = config.tiles_per_chip
    window = -(-size // tiles)
    return (dma_cycles(window, config, streaming_tiles=tiles)
            - resident_dma_cycles(window, config))


def choose(candidates: list[Candidate], epochs: int, budget: int, page: int,
           config: TX8Config, caps: Sequence[int] | None = None) -> Residency:
    """The resident values and their region offsets (module docstring, "Which values");
    with `caps`, the reserve of epoch e never exceeds `caps[e]` (a value live in e ends
    in the region at or below it)."""
    buffers = [Buffer(c.name, per_tile_bytes(c.size, page, config.tiles_per_chip),
                      (c.live,)) for c in candidates]
    limits = [min([budget] + [caps[e] for e in range(*c.live)]) if caps else budget
              for c in candidates]
    saved = [transfer_cycles_saved(c.size, config) * (1 + c.loads) for c in candidates]

    def worth(i: int) -> tuple:
        c, b = candidates[i], buffers[i]
        return (-saved[i] / (b.size * (c.live[1] - c.live[0])), c.name)

    order = sorted((i for i in range(len(candidates)) if saved[i] > 0), key=worth)
    offsets = place_within(buffers, order, conflicts(buffers), page, limits)
    values = tuple(ResidentValue(c.name, c.size, b.size, o, c.live)
                   for c, b, o in zip(candidates, buffers, offsets, strict=True) if o >= 0)
    reserve = [0] * epochs
    for v in values:
        for e in range(v.live[0], v.live[1]):
            reserve[e] = max(reserve[e], v.region + v.per_tile)
    return Residency(budget, page, values, tuple(reserve))


def write_residency(module: ModuleOp, residency: Residency) -> None:
    module.attributes[RESIDENT_ATTR] = StringAttr(
        json.dumps(residency.as_dict(), sort_keys=True, separators=(",", ":")))


def read_residency(module: ModuleOp) -> Residency | None:
    attr = module.attributes.get(RESIDENT_ATTR)
    return None if attr is None else Residency.from_dict(json.loads(attr.data))


def resident_names(module: ModuleOp) -> frozenset[str]:
    """The names of the module's resident values (none without spm-resident)."""
    found = read_residency(module)
    return found.names if found is not None else frozenset()


def write_group_residency(group, found: GroupResidency) -> None:
    group.attributes[GROUP_ATTR] = StringAttr(json.dumps(asdict(found), sort_keys=True,
                                                         separators=(",", ":")))


def read_group_residency(group) -> GroupResidency:
    attr = group.attributes.get(GROUP_ATTR)
    if attr is None:
        return GroupResidency()
    data = json.loads(attr.data)
    return GroupResidency(data["reserve"], tuple(data["operands"]), tuple(data["results"]))
