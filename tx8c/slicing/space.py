"""The search space of a group (seed 003: DS_SpaceInit, getShardings, getFactor,
DS_TileSplit with getNextSplit / sliceShapeMin).

**Sharding** (space): how the anchor's output dims are spread over the tiles. The seed
enumerates every vector of per-dim factors whose product is exactly the tile count
(`shardings`), adds "no sharding", and ranks them by a factor: the tiles really used once
each dim's factor is capped by how many pieces the dim can give (its size; the last dim
counted in units of its alignment base, seed 003 `GetAlignBase`). The worked example of
the seed (store [3, 4, 128, 4096]: [1,1,1,16] and [1,1,4,4] use 16 tiles, [1,8,1,2] 8,
[1,16,1,1] 4, [16,1,1,1] 2) ranks by 2^floor(log2(tiles used)): [16,1,1,1] uses 3 tiles
and is listed as 2; the seed's code says ceil(log2(...)), which would put 3 tiles beside
4 and contradict its own example. Here `factor` is floor(log2(tiles used)) (the example
holds), and ties keep the enumeration order (`n_first`: dim 0 varies slowest).

**Split** (time): how many pieces each tile's share is cut into along each dim. A dim is
split by the next factor that makes its piece smaller (`next_split`), down to its minimum
slice (one granule); `split_order` says which dims are split first (the last first, or the
first with `n_first`, seed 003 DS_TileSplit).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

from tx8c.interfaces.sharding import LoopDim


def shardings(rank: int, tiles: int) -> list[tuple[int, ...]]:
    """Every vector of `rank` positive factors whose product is `tiles`, dim 0 varying
    slowest (seed 003 getShardings), then "no sharding" (all ones)."""
    found: list[tuple[int, ...]] = []

    def extend(prefix: list[int], remaining: int) -> None:
        if len(prefix) == rank:
            if remaining == 1:
                found.append(tuple(prefix))
            return
        for f in range(1, remaining + 1):
            if remaining % f == 0:
                extend(prefix + [f], remaining // f)

    if rank:
        extend([], tiles)
    none = (1,) * rank
    if none not in found:
        found.append(none)
    return found


def tiles_used(loops: Sequence[LoopDim], sharding: Sequence[int], last_base: int = 1) -> int:
    """Tiles that get work: per dim the factor capped by the pieces the dim can give (its
    size in granules; the last dim in units of `last_base`)."""
    used = 1
    for d, (dim, s) in enumerate(zip(loops, sharding, strict=True)):
        unit = max(dim.granule, last_base if d == len(loops) - 1 else 1)
        used *= min(s, math.ceil(dim.size / unit))
    return used


def factor(loops: Sequence[LoopDim], sharding: Sequence[int], last_base: int = 1) -> int:
    """The seed's ranking factor: floor(log2(tiles used))."""
    return int(math.floor(math.log2(max(1, tiles_used(loops, sharding, last_base)))))


def ranked_shardings(loops: Sequence[LoopDim], tiles: int, last_base: int = 1,
                     max_sharding: int | None = None, n_first: bool = True
                     ) -> list[list[tuple[int, ...]]]:
    """The shardings of `loops` over `tiles` (or `max_sharding`) tiles grouped in levels
    of equal factor, best level first; a sharding that cuts a dim the anchor cannot shard
    is left out."""
    count = min(tiles, max_sharding or tiles)
    options = shardings(len(loops), count)
    if not n_first:
        options = sorted(options, key=lambda s: tuple(reversed(s)))
    valid = [s for s in options
             if all(f == 1 or dim.shard for f, dim in zip(s, loops, strict=True))]
    levels: dict[int, list[tuple[int, ...]]] = {}
    for s in valid:
        levels.setdefault(factor(loops, s, last_base), []).append(s)
    return [levels[k] for k in sorted(levels, reverse=True)]


def next_split(size: int, current: int, granule: int = 1) -> int | None:
    """The smallest split above `current` that makes the pieces of a dim of `size` (in
    granules) smaller (seed 003 getNextSplit); None when one granule per piece is
    reached (sliceShapeMin)."""
    units = math.ceil(size / granule)
    piece = math.ceil(units / current)
    if piece <= 1:
        return None
    for s in range(current + 1, units + 1):
        if math.ceil(units / s) < piece:
            return s
    return None


def halved_split(size: int, current: int, granule: int = 1) -> int | None:
    """The smallest split whose pieces of a dim of `size` are at most half (rounded up,
    in granules) of those `current` gives: the search's "double the split". None when
    one granule per piece is reached. A dim of 28 goes 1, 2, 4, 7, 14, 28 (pieces of
    28, 14, 7, 4, 2, 1); `next_split(size, 2 * current - 1)` skipped 7 and 14 (4 gives
    pieces of 7, and 7 pieces of 4 are not smaller than those of 2 * 4 - 1 = 7)."""
    units = math.ceil(size / granule)
    piece = math.ceil(units / current)
    if piece <= 1:
        return None
    half = math.ceil(piece / 2)
    return math.ceil(units / half)


def split_order(rank: int, n_first: bool) -> list[int]:
    """The order in which dims are split: the last dim first (seed 003's default), or the
    first with `n_first`."""
    return list(range(rank)) if n_first else list(reversed(range(rank)))


def split_values(size: int, granule: int = 1) -> list[int]:
    """Every split of a dim that gives distinct piece sizes (1, then `next_split` until
    one granule per piece): the exhaustive search's choices per dim."""
    values, current = [1], 1
    while True:
        nxt = next_split(size, current, granule)
        if nxt is None:
            return values
        values.append(nxt)
        current = nxt


def products(choices: Sequence[Sequence[int]]) -> Iterator[tuple[int, ...]]:
    """Every combination of one value per dim."""
    if not choices:
        yield ()
        return
    for first in choices[0]:
        for rest in products(choices[1:]):
            yield (first, *rest)
