"""Mutation test of cmodel v2 (issue 12): random single mutations of the lowered Program
of the bundled examples - a buffer shifted into a live neighbour, a halo row dropped, a
barrier dropped between dependent groups, a DMA dropped, two tiles' windows swapped, a
multicast's destination dropped or given a wrong address - must give a wrong answer or
a clear error (`Tx8ComputeError`) in >= 95 % of the mutations that change the program's
meaning.

A mutation that provably changes nothing is not generated (a shift onto the same
address, a swap of equal windows, a barrier whose removal leaves every producer and
reader in different epochs, a DMA that reloads bytes its buffer still holds unchanged).
Every other mutation counts as meaning-changing; the misses are printed (pytest -s).
"""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from examples.make_models import MODELS
from tests.e2e.test_cmodel_v2 import compiled
from tx8c.codegen.program import (
    Dma,
    GroupProgram,
    Kernel,
    NocCopy,
    NocTransfer,
    Program,
    SpmRef,
    TileProgram,
)
from tx8c.errors import Tx8ComputeError
from tx8c.interfaces.sharding import Window
from tx8c.sim.cmodel_v2 import run_program

MUTATIONS_PER_EXAMPLE = 50
MULTICAST_MUTATIONS = 5


def _replace_tile(program: Program, g: int, t: int, instructions) -> Program:
    group = program.groups[g]
    tiles = list(group.tiles)
    tiles[t] = TileProgram(tiles[t].tile, tuple(instructions))
    groups = list(program.groups)
    groups[g] = replace(group, tiles=tuple(tiles))
    return replace(program, groups=tuple(groups))


def _spm_refs(ins):
    if isinstance(ins, Dma):
        return [ins.spm]
    if isinstance(ins, Kernel):
        return [o.ref for o in ins.operands if isinstance(o.ref, SpmRef)] + [
            r.ref for r in ins.results if r is not None]
    return [ins.target]


def _move_ref(ins, old: int, new: int):
    def moved(ref):
        return replace(ref, addr=new) if isinstance(ref, SpmRef) and ref.addr == old else ref

    if isinstance(ins, Dma):
        return replace(ins, spm=moved(ins.spm))
    if isinstance(ins, Kernel):
        return replace(ins, operands=tuple(replace(o, ref=moved(o.ref)) for o in ins.operands),
                       results=tuple(None if r is None else replace(r, ref=moved(r.ref))
                                     for r in ins.results))
    return replace(ins, target=moved(ins.target))


def shift_offset(program: Program, rng: random.Random):
    """Every reference to one buffer address of a tile moved onto a buffer of the same
    tile and group whose value is live at the same time (an allocator bug)."""
    g, t, tile = _pick_tile(program, rng)
    live = _live_values(tile.instructions)
    pairs = [(a, b) for a in live for b in live if a != b and any(
        wa < rb and wb < ra for wa, ra in live[a] for wb, rb in live[b])]
    if not pairs:
        return None
    old, new = rng.choice(pairs)
    out = [_move_ref(ins, old, new) for ins in tile.instructions]
    return _replace_tile(program, g, t, out), f"group {program.groups[g].group_id} tile " \
        f"{tile.tile}: buffer at {old} moved to {new}"


def _live_values(instructions) -> dict[int, list[tuple[int, int]]]:
    """Per buffer address, the (write, last read) instruction pairs of the values it
    holds one after another."""
    live: dict[int, list[tuple[int, int]]] = {}
    for i, ins in enumerate(instructions):
        for ref in _read(ins):
            if ref.addr in live and live[ref.addr]:
                w, _ = live[ref.addr][-1]
                live[ref.addr][-1] = (w, i)
        for ref in _written(ins):
            live.setdefault(ref.addr, []).append((i, i))
    return live


def drop_halo_row(program: Program, rng: random.Random):
    """A load moves one row fewer (first or last) of its window than its buffer holds."""
    g, t, tile = _pick_tile(program, rng)
    loads = [i for i, ins in enumerate(tile.instructions) if isinstance(ins, Dma)
             and ins.lane == "ld" and any(s > 1 for s in ins.window.shape)]
    if not loads:
        return None
    i = rng.choice(loads)
    ins = tile.instructions[i]
    d = rng.choice([d for d, s in enumerate(ins.window.shape) if s > 1])
    lo, hi = ins.window.dim(d)
    window = ins.window.replace(d, lo + 1, hi) if rng.random() < 0.5 else \
        ins.window.replace(d, lo, hi - 1)
    out = list(tile.instructions)
    out[i] = replace(ins, window=window, held=ins.window)
    return _replace_tile(program, g, t, out), f"group {program.groups[g].group_id} tile " \
        f"{tile.tile} instruction {i}: load {window} instead of {ins.window}"


def drop_barrier(program: Program, rng: random.Random):
    """The barrier after a group whose results a later group reads is removed."""
    candidates = [g for g, group in enumerate(program.groups[:-1]) if group.barrier
                  and _feeds_next_epoch(program, g)]
    if not candidates:
        return None
    g = rng.choice(candidates)
    groups = list(program.groups)
    groups[g] = replace(groups[g], barrier=False)
    return replace(program, groups=tuple(groups)), \
        f"barrier after group {program.groups[g].group_id} dropped"


def _epochs(program: Program) -> list[int]:
    out, count = [], 0
    for group in program.groups:
        out.append(count)
        count += bool(group.barrier)
    return out


def _writes(group: GroupProgram) -> set[str]:
    return {i.tensor for t in group.tiles for i in t.instructions
            if isinstance(i, Dma) and i.lane == "st"}


def _reads(group: GroupProgram) -> set[str]:
    return {i.tensor for t in group.tiles for i in t.instructions
            if isinstance(i, Dma) and i.lane == "ld"}


def _feeds_next_epoch(program: Program, g: int) -> bool:
    """Dropping the barrier after group g puts a producer and its reader in one epoch."""
    epochs = _epochs(program)
    after = [i for i, e in enumerate(epochs) if e == epochs[g] + 1]
    written = set().union(*(_writes(program.groups[i]) for i in range(len(program.groups))
                            if epochs[i] == epochs[g]))
    return any(_reads(program.groups[i]) & written for i in after)


def drop_dma(program: Program, rng: random.Random):
    """One DMA (load or store) removed, unless it reloads what its buffer still holds."""
    g, t, tile = _pick_tile(program, rng)
    dmas = [i for i, ins in enumerate(tile.instructions) if isinstance(ins, Dma)
            and not _redundant(tile.instructions, i)]
    if not dmas:
        return None
    i = rng.choice(dmas)
    return _drop_instruction(program, g, t, i), f"group {program.groups[g].group_id} tile " \
        f"{tile.tile} instruction {i} ({tile.instructions[i].lane} " \
        f"{tile.instructions[i].tensor} {tile.instructions[i].window}) dropped"


def _drop_instruction(program: Program, g: int, t: int, i: int) -> Program:
    """Instruction i of the t-th tile of group g removed; the other tiles' NoC
    instructions that wait for a later instruction of that tile still wait for the same
    one (their `after` moves down by one)."""
    group = program.groups[g]
    tile = group.tiles[t].tile
    out = list(group.tiles[t].instructions)
    del out[i]
    program = _replace_tile(program, g, t, out)
    for k, other in enumerate(group.tiles):
        if k == t:
            continue
        moved = [replace(ins, after=ins.after - 1) if isinstance(ins, NocTransfer)
                 and ins.source_tile == tile and ins.after > i else ins
                 for ins in other.instructions]
        if moved != list(other.instructions):
            program = _replace_tile(program, g, k, moved)
    return program


def _multicast_copies(program: Program, rng: random.Random):
    """A random tile with NoC copies (destinations of multicast loads) that its tile
    reads: (g, t, tile, indices of those copies), or None. A copy nothing reads changes
    nothing (a value loaded on every tile of a reduction cut over tiles that only the
    owner's late nodes read)."""
    found = [(g, t) for g, group in enumerate(program.groups)
             for t, tile in enumerate(group.tiles) if _read_copies(tile.instructions)]
    if not found:
        return None
    g, t = rng.choice(found)
    tile = program.groups[g].tiles[t]
    return g, t, tile, _read_copies(tile.instructions)


def _read_copies(instructions) -> list[int]:
    """The NocCopies whose buffer a later instruction reads before anything rewrites
    it."""
    out = []
    for i, ins in enumerate(instructions):
        if not isinstance(ins, NocCopy):
            continue
        for later in instructions[i + 1:]:
            if any(r.addr == ins.target.addr for r in _read(later)):
                out.append(i)
                break
            if any(r.addr == ins.target.addr for r in _written(later)):
                break
    return out


def drop_destination(program: Program, rng: random.Random):
    """One destination of a multicast load loses its copy (its NocCopy removed)."""
    found = _multicast_copies(program, rng)
    if found is None:
        return None
    g, t, tile, copies = found
    i = rng.choice(copies)
    return _drop_instruction(program, g, t, i), f"group {program.groups[g].group_id} " \
        f"tile {tile.tile}: multicast destination instruction {i} dropped"


def wrong_destination(program: Program, rng: random.Random):
    """One destination of a multicast load receives its copy at another of its tile's
    buffer addresses."""
    found = _multicast_copies(program, rng)
    if found is None:
        return None
    g, t, tile, copies = found
    i = rng.choice(copies)
    ins = tile.instructions[i]
    others = sorted(set(_live_values(tile.instructions)) - {ins.target.addr})
    if not others:
        return None
    addr = rng.choice(others)
    out = list(tile.instructions)
    out[i] = replace(ins, target=replace(ins.target, addr=addr))
    return _replace_tile(program, g, t, out), f"group {program.groups[g].group_id} tile " \
        f"{tile.tile}: multicast destination instruction {i} writes at {addr} instead of " \
        f"{ins.target.addr}"


def _redundant(instructions, i: int) -> bool:
    """A load of the same window into the same bytes as an earlier one, with nothing
    writing those bytes in between."""
    ins = instructions[i]
    if ins.lane != "ld":
        return False
    for j in range(i - 1, -1, -1):
        other = instructions[j]
        if isinstance(other, Dma) and other.lane == "ld" and other.spm == ins.spm:
            return other.tensor == ins.tensor and other.window == ins.window
        if any(r.addr == ins.spm.addr for r in _written(other)):
            return False
    return False


def _read(ins):
    if isinstance(ins, Dma):
        return [ins.spm] if ins.lane == "st" else []
    if isinstance(ins, NocCopy):
        return []  # it reads the source tile's SPM
    if isinstance(ins, Kernel):
        return [o.ref for o in ins.operands if isinstance(o.ref, SpmRef)] + (
            [r.ref for r in ins.results if r is not None] if ins.accumulate else [])
    return [ins.target]


def _written(ins):
    if isinstance(ins, Dma):
        return [ins.spm] if ins.lane == "ld" else []
    if isinstance(ins, Kernel):
        return [r.ref for r in ins.results if r is not None] + ([ins.imm] if ins.imm else [])
    return [ins.target]


def swap_windows(program: Program, rng: random.Random):
    """Two tiles of a group exchange the windows of their k-th DMA of one tensor."""
    groups = [g for g, group in enumerate(program.groups) if len(group.tiles) >= 2]
    if not groups:
        return None
    g = rng.choice(groups)
    a, b = rng.sample(range(len(program.groups[g].tiles)), 2)
    ta, tb = program.groups[g].tiles[a], program.groups[g].tiles[b]
    pairs = []
    for i, x in enumerate(ta.instructions):
        for j, y in enumerate(tb.instructions):
            if isinstance(x, Dma) and isinstance(y, Dma) and x.lane == y.lane and \
                    x.tensor == y.tensor and x.window != y.window and \
                    x.window.shape == y.window.shape and x.held is None and y.held is None:
                pairs.append((i, j))
                break
    if not pairs:
        return None
    i, j = rng.choice(pairs)
    out_a, out_b = list(ta.instructions), list(tb.instructions)
    out_a[i] = replace(ta.instructions[i], window=tb.instructions[j].window)
    out_b[j] = replace(tb.instructions[j], window=ta.instructions[i].window)
    mutated = _replace_tile(_replace_tile(program, g, a, out_a), g, b, out_b)
    return mutated, f"group {program.groups[g].group_id}: tiles {ta.tile} and {tb.tile} " \
        f"swap {ta.instructions[i].lane} windows {ta.instructions[i].window} / " \
        f"{tb.instructions[j].window}"


def _pick_tile(program: Program, rng: random.Random):
    g = rng.choice([g for g, group in enumerate(program.groups) if group.tiles])
    t = rng.randrange(len(program.groups[g].tiles))
    return g, t, program.groups[g].tiles[t]


MUTATORS = (shift_offset, drop_halo_row, drop_barrier, drop_dma, swap_windows,
            drop_destination, wrong_destination)


def mutate(program: Program, rng: random.Random):
    for _ in range(50):
        found = rng.choice(MUTATORS)(program, rng)
        if found is not None:
            return found
    raise AssertionError("no mutation applies")


def detected(module, program, container, inputs, clean) -> bool | str:
    try:
        got, _ = run_program(program, module, inputs, container)
    except Tx8ComputeError as e:
        return f"error: {str(e)[:80]}"
    return any(a.tobytes() != b.tobytes() for a, b in zip(got, clean, strict=True))


@pytest.mark.parametrize("name", sorted(MODELS))
def test_mutations_are_detected(name: str) -> None:
    module, program, container, inputs = compiled(name)
    clean, _ = run_program(program, module, inputs, container)
    rng = random.Random(f"mutations-{name}")
    misses, kinds = [], {}
    for _ in range(MUTATIONS_PER_EXAMPLE):
        mutated, what = mutate(program, rng)
        found = detected(module, mutated, container, inputs, clean)
        kind = what.split(":")[0] if "dropped" not in what else "dropped"
        kinds[kind] = kinds.get(kind, 0) + 1
        if not found:
            misses.append(what)
    rate = 1 - len(misses) / MUTATIONS_PER_EXAMPLE
    print(f"\n{name}: {MUTATIONS_PER_EXAMPLE - len(misses)}/{MUTATIONS_PER_EXAMPLE} "
          f"detected ({rate:.1%}); misses: {misses}")
    assert rate >= 0.95, misses


def test_a_wrong_window_is_an_error_naming_where() -> None:
    module, program, container, inputs = compiled(sorted(MODELS)[0])
    g = next(g for g, group in enumerate(program.groups) if group.tiles)
    tile = program.groups[g].tiles[0]
    # a Dma with a dimension to enlarge (a group's first may load a scalar constant)
    i = next(i for i, ins in enumerate(tile.instructions)
             if isinstance(ins, Dma) and ins.window.shape)
    ins = tile.instructions[i]
    big = Window(ins.window.start, tuple(b + 1000 for b in ins.window.stop))
    out = list(tile.instructions)
    out[i] = replace(ins, window=big, held=big)
    with pytest.raises(Tx8ComputeError, match=rf"group \d+, tile {tile.tile}, step \d+, "
                       rf"instruction {i} .*outside tensor"):
        run_program(_replace_tile(program, g, 0, out), module, inputs, container)


@pytest.mark.parametrize("mutator", [drop_destination, wrong_destination])
def test_multicast_mutations_are_detected(mutator) -> None:
    """Every example whose Program multicasts: a dropped destination or a destination
    written at a wrong address is always detected."""
    rng = random.Random(f"multicast-{mutator.__name__}")
    tried, misses = 0, []
    for name in sorted(MODELS):
        module, program, container, inputs = compiled(name)
        clean, _ = run_program(program, module, inputs, container)
        for _ in range(MULTICAST_MUTATIONS):
            found = mutator(program, rng)
            if found is None:
                break
            tried += 1
            if not detected(module, found[0], container, inputs, clean):
                misses.append(found[1])
    print(f"\n{mutator.__name__}: {tried - len(misses)}/{tried} detected; misses: {misses}")
    assert tried >= MULTICAST_MUTATIONS and not misses, misses
