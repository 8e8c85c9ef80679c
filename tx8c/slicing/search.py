"""The search for a group's plan (seed 003, GroupCostPass's loop).

The seed walks its space level by level - shardings ranked by the tiles they use
(`space.ranked_shardings`), for each the smallest split that fits the SPM found by
splitting one dim at a time (DS_TileSplit) - runs data split, time step, SPM allocation
and estimate on each candidate, keeps the cheapest, and stops when the space is exhausted
or a budget is reached. This search does the same, and goes past the first split that
fits: a few more steps can pay (more overlap in the pipeline), so every split up to
`extra_splits` steps beyond the first feasible one is estimated too, pipelined and not,
and a node's reduction is cut (in time, and over the tiles a small output leaves idle)
when it helps; last, around the best plans that cut a reduction in time, the anchor's
steps inside the reduction's pieces (`Candidate.interchange`, `_interchanged`).

`mode="exhaustive"` enumerates the whole space instead (every sharding of every level,
every split of every dim, the three pipeline modes, every reduction cut, and under a
reduction cut in time with anchor steps both loop orders), each plan once
(shardings that cut the anchor alike, a deep pipeline that stages nothing otherwise),
up to `max_candidates`: it certifies the default search on small groups.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache

from tx8c.errors import Tx8Error
from tx8c.interfaces.sharding import LoopDim, piece_bounds
from tx8c.slicing.evaluate import Evaluator, Pending, Rejected, deep_stages_differ
from tx8c.slicing.group import GroupSpec
from tx8c.slicing.plan import Candidate, Plan, ReduceCut
from tx8c.slicing.space import (
    halved_split,
    next_split,
    products,
    ranked_shardings,
    split_order,
    split_values,
)
from tx8c.slicing.steps import anchor_granules, cuts_inside_blocks, reduce_granules
from tx8c.target.config import TX8Config

MODES = ("default", "exhaustive")
REDUCE_STEPS = 16
"""The most pieces a reduction is cut into in time (each a step with a partial sum)."""


@dataclass(frozen=True)
class SearchOptions:
    """Options of the search (group-cost's pass options).

    - `mode`: "default" (the seed's walk, extended) or "exhaustive";
    - `max_sharding`: at most this many tiles per group (default: all of the chip's);
    - `n_first`: enumerate shardings and split dims from dim 0 (else from the last);
    - `levels`: how many factor levels of shardings the default search visits (the
      seed's opt_search; None = all of them: on small groups a level that uses fewer
      tiles often wins, because every tile pays for its own loads);
    - `extra_splits`: how many doublings of the split beyond the first that fits are
      estimated per sharding in the first phase;
    - `refine`: how many of the best shardings get every split of every dim;
    - `max_candidates`: the exhaustive search's limit (it reports when it stops there);
    - `constants_first`: the lowering puts each tile's first load of every ready value
      (a constant, or an input in `GroupSpec.ready_inputs`) first (cross-group overlap
      on: `Schedule.constants_first`).
    """

    mode: str = "default"
    max_sharding: int | None = None
    n_first: bool = True
    levels: int | None = None
    extra_splits: int = 3
    refine: int = 3
    max_candidates: int = 20000
    constants_first: bool = True

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise Tx8Error(f"search mode must be one of {', '.join(MODES)}, got '{self.mode}'")
        bad_levels = self.levels is not None and self.levels < 1
        if bad_levels or self.extra_splits < 0 or self.max_candidates < 1:
            raise Tx8Error("search levels must be >= 1, extra-splits >= 0, "
                           "max-candidates >= 1")
        if self.max_sharding is not None and self.max_sharding < 1:
            raise Tx8Error(f"max-sharding must be >= 1, got {self.max_sharding}")


class NoPlan(Tx8Error):
    """No candidate of a group fits the target."""


@dataclass
class _Best:
    """The candidates offered so far and the best plan among them (`plan`): the first
    offered of the least (cycles, tiles, SPM peak) - a cheaper plan of equal speed -, as
    comparing each offered candidate with the best before it would keep."""

    evaluator: Evaluator | None
    evaluated: int = 0
    found: list[Pending] = field(default_factory=list)
    smallest_spm: int | None = None
    first_reason: str = ""
    _best: tuple | None = None
    """(cycles, tiles, SPM peak, position in `found`, Plan) of the best estimated."""
    _open: list[int] = field(default_factory=list)
    """Positions in `found` of the candidates `plan` has not compared yet."""

    @property
    def plan(self) -> Plan | None:
        """The best plan offered so far (`settle`)."""
        return self.settle()

    def settle(self) -> Plan | None:
        """The best plan offered so far, estimating only the candidates that could be it
        (branch and bound, in the order of their lower bounds: once one's bound is above
        the best cycles estimated, so are the rest, and their cycles). The phases read it
        a few times, so the candidates offered in between are compared together, the
        likeliest first, and fewer are estimated than when each offer is compared with
        the best before it; the plan is the same (the least (cycles, tiles, SPM peak), the
        first offered of equal ones: the position breaks ties)."""
        waiting = sorted(self._open, key=lambda i: (self.found[i].lower_bound, i))
        self._open = []
        for i in waiting:
            pending = self.found[i]
            if self._best is not None and pending.lower_bound > self._best[0]:
                break
            plan = pending.plan
            mine = (plan.cycles, plan.tiles, plan.spm_peak, i)
            if self._best is None or mine < self._best[:4]:
                self._best = (*mine, plan)
        return None if self._best is None else self._best[4]

    def offer(self, spec: GroupSpec, cand: Candidate, config: TX8Config) -> Pending | None:
        """Evaluates `cand` (None when rejected) up to its estimate, which runs when `plan`
        needs it (it could be the best), or when a phase of the search asks for its
        cycles."""
        self.evaluated += 1
        try:
            plan = self.evaluator.pending(cand)
        except Rejected as e:
            self.first_reason = self.first_reason or str(e)
            need = e.spm_needed
            if need is not None:
                self.smallest_spm = need if self.smallest_spm is None else min(
                    self.smallest_spm, need)
            return None
        self._open.append(len(self.found))
        self.found.append(plan)
        return plan


def by_cycles(entries: Sequence[Pending]) -> Iterator[Pending]:
    """`entries` in the order of `sorted(entries, key=cycles)` (stable: ties keep their
    order), running their estimates only as far as the order needs: an entry is given
    once every entry not estimated yet has a lower bound above its cycles."""
    waiting = sorted(range(len(entries)), key=lambda i: (entries[i].lower_bound, i))
    known: list[tuple[int, int]] = []  # (cycles, position)
    w = 0
    while known or w < len(waiting):
        if w < len(waiting) and (not known
                                 or entries[waiting[w]].lower_bound <= known[0][0]):
            i = waiting[w]
            w += 1
            heapq.heappush(known, (entries[i].cycles, i))
            continue
        yield entries[heapq.heappop(known)[1]]


def _fastest(entries: Sequence[Pending]) -> Pending:
    """`min(entries, key=cycles)` (the first of equal ones), estimating only as needed."""
    return next(by_cycles(entries))


def search(spec: GroupSpec, config: TX8Config, options: SearchOptions = SearchOptions(),
           name: str = "group") -> Plan:
    """The best plan found for `spec`; `NoPlan` (naming the group and the smallest SPM
    any candidate needed) when none fits.

    The search is a pure function of the group's key, the target and the options, and
    its result is remembered for the process (`_searched`): regroup-by-cost searches
    the groups group-cost later plans, and equal groups of other models or runs reuse
    it as templates do within a model."""
    best = _searched(_Keyed(spec), config, options)
    if best.plan is not None:
        return replace(best.plan, candidates=best.evaluated)
    if best.smallest_spm is None:
        raise NoPlan(f"{name}: no sharding/split of its {len(spec.nodes)} ops can run: "
                     f"{best.first_reason}")
    need = f" (the smallest candidate needs {best.smallest_spm} bytes per tile)"
    room, fix = f"{config.spm_bytes_per_tile} bytes of SPM per tile", ""
    if spec.spm_reserve:
        room = (f"the {config.spm_bytes_per_tile - spec.spm_reserve} bytes of SPM per tile "
                f"below the {spec.spm_reserve} kept for values between groups")
        fix = ", a smaller --spm-resident"
    raise NoPlan(
        f"{name}: no sharding/split of its {len(spec.nodes)} ops fits in {room}{need}; "
        f"give the target more SPM (--target-config){fix} or split the group "
        "(opt-group=none)"
    )


class _Keyed:
    """A spec compared by its key (its labels do not change its plan)."""

    def __init__(self, spec: GroupSpec):
        self.spec = spec
        self.key = spec.key
        self._hash = hash(self.key)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other) -> bool:
        return isinstance(other, _Keyed) and self.key == other.key


@lru_cache(maxsize=4096)
def _searched(keyed: _Keyed, config: TX8Config, options: SearchOptions) -> _Best:
    spec = keyed.spec
    best = _Best(Evaluator(spec, config, options.constants_first))
    loops = spec.anchor_loops
    if not spec.sliceable:
        best.offer(spec, Candidate((1,) * len(loops), (1,) * len(loops), None, False),
                   config)
    elif options.mode == "exhaustive":
        for cand in exhaustive_candidates(spec, config, options):
            if best.evaluated >= options.max_candidates:
                break
            best.offer(spec, cand, config)
    else:
        _default_search(spec, config, options, best)
    best.settle()  # compares the candidates offered last, before the tables are dropped
    best.evaluator = None  # what is remembered: the outcome, not the evaluator's tables
    best.found = []
    return best


# -- the default walk -----------------------------------------------------------------------


def _default_search(spec, config, options, best: _Best) -> None:
    """The phases, in order: every sharding of the first `levels` levels (all by
    default) at the smallest split that fits (and, pipelined, at a few more steps along
    its first splittable dim); for the `refine` best shardings, every split along each dim and
    pairs of dims; the reduction cut in time and over idle tiles (`_reduce_bases`: the
    best plan, the best shardings unsplit, the best sharding per count of busy tiles);
    deep pipelines for the best plans; a polish around the best; per cut over idle
    tiles, its cut in time traded for a deep pipeline's steps (`_steps_for_time_cuts`);
    the reduction cut moved on the runner-up shardings' plans (`_reduce_moves`:
    doubled in time, and over tiles taken from the anchor's sharding); last, the
    interchanged loop order of the best plans (`_interchanged`)."""
    loops = spec.anchor_loops
    granules, visited, order = _first_phase(spec, config, options)
    fitting: list[_Sharded] = []
    for sharding in visited:
        share = _share(loops, sharding)
        fitted = _smallest_split(spec, sharding, share, granules, order, config, best)
        if fitted is None:
            continue
        plans = list(fitted)
        base = fitted[0].candidate
        open_dims = [d for d in order if next_split(share[d], base.split[d], granules[d])]
        for cand in _deeper(base, share, granules, open_dims[:1], options):
            plan = best.offer(spec, cand, config)
            if plan is not None:
                plans.append(plan)
        fitting.append(_Sharded(sharding, base.split, plans,
                                _used_tiles(spec, sharding, granules)))
    scored = _scored(fitting, options.refine, config.tiles_per_chip)
    for _, sharding, split in scored[: options.refine]:
        share = _share(loops, sharding)
        base = Candidate(sharding, split)
        for cand in _deeper(base, share, granules, order, options):
            best.offer(spec, cand, config)
        for cand in _pairs(base, share, granules, order):
            best.offer(spec, cand, config)
    for cand in _reduce_phase(spec, config, options, best, scored, visited, granules):
        best.offer(spec, cand, config)
    if _deepen(spec, config, options, best, granules, order):
        _polish(spec, config, best, granules, order)
        # last, so that it can only add plans: before the polish, a plan it found
        # moved the polish away from a better one (Swin's qkv Gemm 16 342 -> 19 725)
        _steps_for_time_cuts(spec, config, best, granules, order)
    # last too: before the deep pipelines, its plans moved the polish away from
    # better ones (ResNet-50's 3x3 Conv of group 5: 6 734 -> 6 887)
    _reduce_moves(spec, config, options, best, granules)
    # the interchanged order of the best plans so far (those moves' included): it only
    # adds plans
    _interchanged(spec, config, best, granules, order)


@dataclass
class _Sharded:
    """A sharding of the first phase that fits: its smallest split that fits, the plans
    offered on it (that split, pipelined and not, and a few more steps), and the tiles it
    keeps busy (`_used_tiles`, as `_reduce_bases` counts them)."""

    sharding: tuple[int, ...]
    split: tuple[int, ...]
    plans: list[Pending]
    used: int

    def least(self) -> tuple:
        """A floor on its place in `_scored`'s order: its plans' least lower bound."""
        return (min(p.lower_bound for p in self.plans), self.sharding, self.split)


def _scored(fitting: list[_Sharded], refine: int, tiles: int
            ) -> list[tuple[int, tuple[int, ...], tuple[int, ...]]]:
    """(cycles of its fastest plan, sharding, split) of the first phase's shardings, sorted:
    of those the later phases read - the `refine` first, and per count of busy tiles below
    `tiles` the first (`_reduce_bases`) -, and only as many others as finding them
    needed: a sharding is timed (its fastest plan's estimate) unless `refine` timed ones,
    and for fewer than `tiles` busy tiles one of its own count, come before its floor
    (`_Sharded.least`: its place is at or after it), which no sharding timed later
    changes. The shardings left untimed are none of those read, so the later phases,
    and the plan, are the same as with every sharding timed (and each estimate it saves
    is a simulation of a whole candidate)."""
    timed: list[tuple[int, tuple[int, ...], tuple[int, ...]]] = []
    first: dict[int, tuple] = {}  # busy tiles -> the first timed sharding of that count
    for entry in sorted(fitting, key=_Sharded.least):
        least = entry.least()
        ahead = sum(1 for t in timed if t < least)
        if ahead >= refine and (entry.used >= tiles or first.get(entry.used, least) < least):
            continue
        found = (_fastest(entry.plans).cycles, entry.sharding, entry.split)
        timed.append(found)
        if entry.used not in first or found < first[entry.used]:
            first[entry.used] = found
    return sorted(timed)


def _first_phase(spec, config, options) -> tuple[list[int], list[tuple[int, ...]], list[int]]:
    """(the anchor's granules, the shardings the first phase visits - the first `levels`
    levels, then no sharding, each cut of the anchor once (`distinct_shardings`: two
    shardings that cut it alike give equal candidates at every split, so the second
    only repeated the first's estimates and took a refine slot of `_scored`) -, the
    splittable dims in `split_order`)."""
    loops = spec.anchor_loops
    granules = anchor_granules(spec, config)
    levels = ranked_shardings(loops, config.tiles_per_chip, granules[-1] if granules else 1,
                              options.max_sharding, options.n_first)
    visited = [s for level in levels[: options.levels] for s in level]
    none = (1,) * len(loops)
    if none not in visited:
        visited.append(none)
    order = [d for d in split_order(len(loops), options.n_first) if loops[d].split]
    return granules, distinct_shardings(loops, visited, granules), order


def plan_exists(spec: GroupSpec, config: TX8Config,
                options: SearchOptions = SearchOptions()) -> bool:
    """Whether the default search finds a plan for `spec`, decided cheaply: it finds one
    exactly when a candidate of its first phase (each sharding at the smallest split
    that fits, DS_TileSplit) or, none fitting, of its reduction cut phase fits; this
    offers those candidates in the same order and stops at the first that fits. Used by
    spm-resident to keep a group's reserve below what the group needs."""
    best = _Best(Evaluator(spec, config, options.constants_first))
    if not spec.sliceable:
        loops = len(spec.anchor_loops)
        return best.offer(spec, Candidate((1,) * loops, (1,) * loops, None, False),
                          config) is not None
    granules, visited, order = _first_phase(spec, config, options)
    for sharding in visited:
        share = _share(spec.anchor_loops, sharding)
        if _smallest_split(spec, sharding, share, granules, order, config, best,
                           both=False) is not None:
            return True
    return any(best.offer(spec, cand, config) is not None
               for cand in _reduce_phase(spec, config, options, best, [], visited, granules))


def _share(loops, sharding) -> list[int]:
    """Each anchor dim's extent on one tile under `sharding`."""
    return [math.ceil(d.size / s) for d, s in zip(loops, sharding, strict=True)]


def _deepen(spec, config, options, best: _Best, granules, order) -> bool:
    """The `refine` best pipelined plans with a stage per engine change (`deep`), and
    the best of those with more steps along each dim (deeper pipelines pay off over
    more steps). Whether any deep plan fits."""
    shallow = [p for p in best.found if p.candidate.pipelined and not p.candidate.deep]
    seen = set()
    for plan in by_cycles(shallow):
        if len(seen) >= options.refine:
            break
        cand = replace(plan.candidate, deep=True)
        if cand not in seen:
            seen.add(cand)
            best.offer(spec, cand, config)
    deep = [p for p in best.found if p.candidate.deep]
    if not deep:
        return False
    base = _fastest(deep).candidate
    share = _share(spec.anchor_loops, base.sharding)
    for cand in _deeper(base, share, granules, order, options):
        best.offer(spec, replace(cand, reduce=base.reduce, deep=True), config)
    return True


def _steps_for_time_cuts(spec, config, best: _Best, granules, order) -> None:
    """Per cut of the reduction over (idle) tiles, the fastest pipelined plan offered
    that also cuts it in time, with the cut in time traded for a deep pipeline's steps:
    undone (`_untimed`), deep, and the split along its first dim that can be split
    further (as the first phase's extra steps) doubled while that pays (it stops at the
    first doubling not faster than the one before: a few candidates per cut, whose
    estimates run; every dim cost ResNet-50 3 % more estimates for no better plan).
    A cut in time streams the weights piece by piece; a deep pipeline's steps overlap
    one step's loads with the previous step's compute instead, and on a cut over tiles
    each tile's weights are already a fraction (BERT-base's Gemm + Add + LayerNorm over
    128 rows: 4 row shares, K over the 4 tiles each leaves idle, 4 steps of rows, deep:
    23 096 cycles; the search took K over 2 tiles and in 8 pieces, 24 856, and tried
    the cut over 4 tiles only without row steps, 26 824 at best)."""
    per_tiles: dict[tuple[int, ...], list[Pending]] = {}
    for plan in best.found:
        cand = plan.candidate
        if cand.pipelined and _cut_in_time(cand.reduce) and max(cand.reduce.sharding) > 1:
            per_tiles.setdefault(cand.reduce.sharding, []).append(plan)
    for plans in per_tiles.values():
        base = replace(_untimed(_fastest(plans).candidate), deep=True)
        share = _share(spec.anchor_loops, base.sharding)
        d = next((d for d in order if next_split(share[d], base.split[d], granules[d])),
                 None)
        if d is None:
            continue
        split, last = list(base.split), None
        while (nxt := halved_split(share[d], split[d], granules[d])) is not None:
            split[d] = nxt
            plan = best.offer(spec, replace(base, split=tuple(split)), config)
            if plan is not None and last is not None and not _faster(plan, last):
                break
            last = plan or last


def _faster(plan: Pending, than: Pending) -> bool:
    """Whether `plan` is faster than `than`, without its estimate when its lower bound
    already says no."""
    return plan.lower_bound < than.cycles and plan.cycles < than.cycles


def _polish(spec, config, best: _Best, granules, order) -> None:
    """Around the best plan: every split of each dim alone, with the reduction cut in
    time kept or undone, both pipeline depths (a reduction cut found on top of a
    coarse split often wants another one); then its steps moved from one dim to
    another (`_traded_steps`, in the best plan's own form: a few candidates)."""
    base = best.plan.candidate
    share = _share(spec.anchor_loops, base.sharding)
    reduces = [base.reduce]
    if _cut_in_time(base.reduce):
        reduces.append(_untimed(base).reduce)
    for d in sorted(order):
        for value in split_values(share[d], granules[d]):
            split = base.split[:d] + (value,) + base.split[d + 1:]
            for reduce in reduces:
                for deep in (False, True):
                    best.offer(spec, Candidate(base.sharding, split, reduce, True, deep),
                               config)
    for split in _traded_steps(base.split, share, granules, order):
        best.offer(spec, replace(base, split=split), config)


INTERCHANGED_DOUBLINGS = 1
"""Doublings of an anchor dim's split the search offers under the interchanged order
(`_interchanged`): twice the steps (`evaluate.INTERCHANGED_STEPS`: 2 anchor steps at
most inside the reduction's pieces)."""


def _interchanged(spec, config, best: _Best, granules, order) -> None:
    """The interchanged loop order (`Candidate.interchange`) where it can pay: on the
    best plan and the fastest pipelined plan that cut a reduction in time, each as it
    is (when it has anchor steps) and with the split along each anchor dim that can be
    split further doubled (the anchor steps that run inside the reduction's pieces: the
    last piece's chain - its compute, what follows the reduction, the stores - in 2
    pieces that pipeline). A handful of candidates per group, offered last so that they
    can only add plans."""
    bases = [best.plan.candidate] if best.plan is not None else []
    timed = [p for p in best.found if p.candidate.pipelined and _cut_in_time(
        p.candidate.reduce) and not p.candidate.interchange]
    if timed:
        bases.append(_fastest(timed).candidate)
    offered = set()
    for base in dict.fromkeys(b for b in bases if _cut_in_time(b.reduce)):
        share = _share(spec.anchor_loops, base.sharding)
        cands = [replace(base, interchange=True)] if math.prod(base.split) > 1 else []
        for d in order:
            cands += [replace(base, split=split, interchange=True) for split in
                      _doubled(base.split, share, granules, d, INTERCHANGED_DOUBLINGS)]
        for cand in cands:
            if cand not in offered:
                offered.add(cand)
                best.offer(spec, cand, config)


def _traded_steps(split, share, granules, order) -> Iterator[tuple[int, ...]]:
    """Splits that move steps from a stepped dim to another: per dim `d` split in more
    than one piece and per other dim `e` that can be split further, `e`'s split doubled
    (`halved_split`) and `d`'s each of its splits from about half its value up to below
    it (`split_values`: 3, 5, 6 too, which the doublings never give). The polish moves
    one dim at a time and the refine phase doubles, so a plan whose steps are better
    spread over two dims was out of reach: ResNet-50's 1x1 Conv 64 -> 256 (group 3)
    took 7 row steps of all its 128 channels, 6 541 cycles, where 5 row steps of 2
    channel halves take 6 426 (the exhaustive best 6 288: 1.040 -> 1.022)."""
    for d in order:
        if split[d] == 1:
            continue
        for e in order:
            doubled = e != d and halved_split(share[e], split[e], granules[e])
            if not doubled:
                continue
            for value in split_values(share[d], granules[d]):
                if split[d] <= 2 * value and value < split[d]:
                    yield tuple(doubled if i == e else value if i == d else s
                                for i, s in enumerate(split))


def _cut_in_time(cut: ReduceCut | None) -> bool:
    """Whether `cut` cuts the reduction in time (steps with a partial sum)."""
    return cut is not None and math.prod(cut.split) > 1


def _untimed(cand: Candidate) -> Candidate:
    """`cand` with its reduction's cut in time undone (its cut over tiles kept; no cut
    left: None)."""
    if not _cut_in_time(cand.reduce):
        return cand
    undone = replace(cand.reduce, split=(1,) * len(cand.reduce.split))
    return replace(cand, reduce=undone if math.prod(undone.sharding) > 1 else None)


def _smallest_split(spec, sharding, share, granules, order, config, best: _Best,
                    both: bool = True) -> list[Pending] | None:
    """The seed's DS_TileSplit: split one dim at a time (in `split_order`) until the
    candidate fits: its plan, and its unpipelined form's when that fits too (with
    `both`; the first phase times the faster only when it needs it, `_scored`)."""
    split = [1] * len(share)
    while True:
        cand = Candidate(tuple(sharding), tuple(split))
        plan = best.offer(spec, cand, config)
        if plan is not None and not both:
            return [plan]
        if plan is not None:
            other = best.offer(spec, replace(cand, pipelined=False), config)
            return [plan] if other is None else [plan, other]
        grown = _grow(split, share, granules, order)
        if grown is None:
            return None
        split = grown


def _deeper(base: Candidate, share, granules, dims, options) -> Iterator[Candidate]:
    """More steps along each of `dims`: doubling the split until one granule per piece
    (`extra_splits` doublings in the first phase, all of them when refining)."""
    limit = options.extra_splits if len(dims) == 1 else 64
    for d in dims:
        for split in _doubled(base.split, share, granules, d, limit):
            yield Candidate(base.sharding, split, None, True)


def _doubled(split: tuple[int, ...], share, granules, d: int, limit: int
             ) -> Iterator[tuple[int, ...]]:
    """`split` with dim `d`'s pieces doubled (`halved_split`) once, twice, ... up to
    `limit` times or one granule per piece."""
    out = list(split)
    for _ in range(limit):
        nxt = halved_split(share[d], out[d], granules[d])
        if nxt is None:
            return
        out[d] = nxt
        yield tuple(out)


def _pairs(base: Candidate, share, granules, dims) -> Iterator[Candidate]:
    """Doubling the splits of two dims together (a square-ish slice)."""
    for i, a in enumerate(dims):
        for b in dims[i + 1:]:
            split = list(base.split)
            while True:
                na = halved_split(share[a], split[a], granules[a])
                nb = halved_split(share[b], split[b], granules[b])
                if na is None or nb is None:
                    break
                split[a], split[b] = na, nb
                yield Candidate(base.sharding, tuple(split), None, True)


def _grow(split, share, granules, order) -> list[int] | None:
    for d in order:
        nxt = next_split(share[d], split[d], granules[d])
        if nxt is not None:
            grown = list(split)
            grown[d] = nxt
            return grown
    return None


def _reduce_phase(spec, config, options, best: _Best, scored, visited, granules
                  ) -> Iterator[Candidate]:
    """The reduction cut phase's candidates: every cut (`_reduce_candidates`) on every
    base (`_reduce_bases`, chosen before the first is offered)."""
    for base in _reduce_bases(spec, best, scored, visited, granules, options,
                              config.tiles_per_chip):
        used = _used_tiles(spec, base.sharding, granules)
        yield from _reduce_candidates(spec, base, used, config)


def _runner_ups(best: _Best, count: int) -> list[Pending]:
    """Per sharding offered, its plan of the least floor - its cycles when its estimate
    has run (branch and bound ran those that could win), else its lower bound -, on the
    `count` shardings of the least floors, in that order; a sharding whose floor ties an
    earlier one's is skipped (on a small anchor several shardings cut the work into
    shares of one size: MobileNetV2's 1x1 Conv over 14 x 14 x 64, group 29, has four at
    1 321 cycles). Runs no estimate: ranking every plan offered by its cycles ran 14 -
    23 % more of them; the floor keeps a sharding none of whose plans was estimated
    (group 29's (1,4,4,1), 1 333 cycles, its bounds above the best's 1 321)."""
    least: dict[tuple[int, ...], tuple[int, int]] = {}  # sharding -> (floor, position)
    for i, plan in enumerate(best.found):
        floor = plan.cycles if plan.estimated else plan.lower_bound
        sharding = plan.candidate.sharding
        if sharding not in least or (floor, i) < least[sharding]:
            least[sharding] = (floor, i)
    out: list[Pending] = []
    floors = set()
    for floor, i in sorted(least.values()):
        if floor not in floors:
            out.append(best.found[i])
        floors.add(floor)
    return out[:count]


def _reduce_moves(spec, config, options, best: _Best, granules) -> None:
    """The reduction cut moved on the `refine` runner-up shardings' fastest plans
    (`_runner_ups`; groups with a cuttable reduction only):
    - in time: its cut in time doubled (the reduction phase cuts the first phase's
      shardings unsplit or the best plan only: MobileNetV2's group 29 took (1,2,8,1)
      uncut, 1 321 cycles, where the runner-up (1,4,4,1) cut in 2 in time takes 1 256;
      doubling again while that paid ran 2 % more estimates on ResNet-50 for no plan
      better in the end);
    - over tiles taken from the anchor's sharding: per sharded dim, its factor halved
      and the reduction's tiles doubled (the tiles busy kept), the cut in time kept and
      doubled (each tile's reduction is half as long, its weights half as wide). The
      reduction phase only gives the reduction the tiles a sharding leaves idle: GPT-2's
      Gemm 256 -> 128 (group 28) took (1,1,4,4) with K cut in 4 in time, 9 010 cycles,
      where (1,1,4,2) with K over 2 tiles and in 8 takes 8 205).
    A few candidates per group (ResNet-50: +1.1 %, estimates +2.1 %)."""
    cuts = {(math.prod(c.sharding), math.prod(c.split)): c
            for c in reversed(reduce_cuts(spec, config.tiles_per_chip, config))}
    if not cuts:
        return
    node = _reducing_node(spec)
    best.settle()  # the reduction phase's plans that could win estimated
    for plan in _runner_ups(best, options.refine):
        cand = plan.candidate
        tiles = math.prod(cand.reduce.sharding) if cand.reduce else 1
        steps = math.prod(cand.reduce.split) if cand.reduce else 1
        if cand.reduce is not None and cand.reduce.node != node:
            continue
        cut = cuts.get((tiles, 2 * steps))
        if cut is not None:
            best.offer(spec, replace(cand, reduce=cut), config)
        for sharding in _halved_shardings(spec, cand.sharding, granules):
            if _used_tiles(spec, sharding, granules) * 2 * tiles > config.tiles_per_chip:
                continue
            for time in (steps, 2 * steps):
                cut = cuts.get((2 * tiles, time))
                if cut is not None:
                    best.offer(spec, replace(cand, sharding=sharding, reduce=cut), config)


def _halved_shardings(spec, sharding: tuple[int, ...], granules) -> Iterator[tuple[int, ...]]:
    """`sharding` with the pieces of one dim halved, in the exhaustive space's form: per
    dim `d` whose even factor halved gives fewer busy tiles, that factor halved and
    another dim's doubled where that cuts nothing more (a dim of one piece: GPT-2 g28's
    (1,1,4,4) -> (2,1,4,2), 8 busy tiles), so that the factors keep their product (the
    exhaustive search lists shardings of every tile, `ranked_shardings`); none when no
    dim can take the factor."""
    used = _used_tiles(spec, sharding, granules)
    for d, factor in enumerate(sharding):
        if factor % 2:
            continue
        halved = sharding[:d] + (factor // 2,) + sharding[d + 1:]
        fewer = _used_tiles(spec, halved, granules)
        if fewer == used:
            continue
        for e, other in enumerate(halved):
            moved = halved[:e] + (2 * other,) + halved[e + 1:]
            if e != d and spec.anchor_loops[e].shard and _used_tiles(
                    spec, moved, granules) == fewer:
                yield moved
                break


def _reduce_bases(spec, best: _Best, scored, visited, granules, options, tiles: int
                  ) -> list[Candidate]:
    """The plans a reduction cut is tried on: the best plan so far; the `refine` best
    shardings with their output unsplit (a group whose output is small but whose weights
    are large wants the reduction streamed in time instead: each step loads a piece of
    the weights); and for each count of tiles a sharding keeps busy, its best sharding
    (the first visited when none fits uncut), unsplit and at its smallest split (idle
    tiles can share the reduction: fewer rows per tile, the weights cut between tiles)."""
    bases = [best.plan.candidate] if best.plan is not None else []
    ones = (1,) * len(granules)
    bases += [Candidate(sharding, ones) for _, sharding, _ in scored[: options.refine]]
    per_used: dict[int, list[Candidate]] = {}
    ranked = [(sharding, split) for _, sharding, split in scored]  # best first
    for sharding, split in ranked + [(sharding, ones) for sharding in visited]:
        used = _used_tiles(spec, sharding, granules)
        if used not in per_used:
            per_used[used] = [Candidate(sharding, ones), Candidate(sharding, split)]
    for used, at_count in sorted(per_used.items()):
        if used < tiles or not scored:
            bases += at_count
    return list(dict.fromkeys(bases))


def _reduce_candidates(spec, base: Candidate, used: int, config) -> Iterator[Candidate]:
    """Cutting the reduction of the group's NE node (or its only reducing node) on top of
    `base`, which keeps `used` tiles busy: in time (psum; up to `REDUCE_STEPS` pieces)
    and over the tiles the sharding leaves idle; pipelined and not, but a cut inside
    the channel blocks pipelined only (it pays by shortening the pipeline's fill)."""
    spare = max(1, config.tiles_per_chip // max(1, used))
    for cut in reduce_cuts(spec, spare, config):
        for pipelined in (True,) if cuts_inside_blocks(spec, cut, config) else (True, False):
            yield Candidate(base.sharding, base.split, cut, pipelined)


def reduce_cuts(spec, tiles: int, config) -> list[ReduceCut]:
    """The cuts of the reduction of the group's NE node (or its only reducing node): over
    up to `tiles` tiles and in up to `REDUCE_STEPS` pieces in time, powers of two on
    its first cuttable reduction dim, on the dims' granules (`reduce_granules`: an
    operand's channel blocks). A cut that gives the same pieces as a smaller one (too
    few granules to cut further) is left out, and so is one that cuts nothing. Where
    the channel blocks are too few for a cut in time, the cut in equal pieces that each
    lie inside one block (on `reduce_granules(fine=True)`; in time only: the first
    step's weight piece, the pipeline's fill, shrinks with it) is added."""
    node = _reducing_node(spec)
    if node is None:
        return []
    reduction = [d for d in spec.nodes[node].slicer.loops if d.is_reduction]
    if not any(d.cut for d in reduction):
        return []
    first = next(i for i, d in enumerate(reduction) if d.cut)
    size = reduction[first].size
    out, seen = [], set()

    def add(split, shard, granule):
        share = piece_bounds(size, shard[first], granule[first])
        pieces = (len(share), len(piece_bounds(share[0][1], split[first], granule[first])))
        if pieces != (1, 1) and pieces not in seen:
            seen.add(pieces)
            out.append(ReduceCut(node, shard, split, granule))

    granule = reduce_granules(spec, node, config)
    for split in _reduce_values(reduction, REDUCE_STEPS):
        for shard in _reduce_values(reduction, tiles):
            add(split, shard, granule)
    fine = reduce_granules(spec, node, config, fine=True)
    if fine != granule:
        unsharded = (1,) * len(reduction)
        for split in _reduce_values(reduction, REDUCE_STEPS):
            piece, rest = divmod(size, split[first])
            if not rest and not piece % fine[first] and not granule[first] % piece:
                add(split, unsharded, fine)  # equal pieces, each inside one block
    return out


def _used_tiles(spec, sharding: tuple[int, ...], granules) -> int:
    """The tiles a sharding really keeps busy (small dims give fewer pieces than their
    factor)."""
    return math.prod(len(piece_bounds(d.size, s, g))
                     for d, s, g in zip(spec.anchor_loops, sharding, granules, strict=True))


def _reduce_values(dims: list[LoopDim], limit: int) -> list[tuple[int, ...]]:
    """Cuts of the reduction dims: powers of two up to `limit` on the first cuttable."""
    first = next(i for i, d in enumerate(dims) if d.cut)
    out = []
    f = 1
    while f <= limit and f <= dims[first].size:
        cut = [1] * len(dims)
        cut[first] = f
        out.append(tuple(cut))
        f *= 2
    return out


def _reducing_node(spec: GroupSpec) -> int | None:
    nodes = [n for n in spec.nodes if n.kind == "compute"
             and any(d.is_reduction for d in n.slicer.loops)]
    ne = [n for n in nodes if n.engine == "NE"]
    chosen = ne or nodes
    return chosen[-1].index if len(chosen) >= 1 else None


# -- the exhaustive enumeration ---------------------------------------------------------------


def exhaustive_candidates(spec: GroupSpec, config: TX8Config, options: SearchOptions
                          ) -> Iterator[Candidate]:
    """Every plan of the space (see the module docstring), each once: shardings that cut
    the anchor alike (`distinct_shardings`) and a deep pipeline that stages nothing
    otherwise (`deep_stages_differ`) are listed once."""
    loops = spec.anchor_loops
    granules = anchor_granules(spec, config)
    levels = ranked_shardings(loops, config.tiles_per_chip, granules[-1] if granules else 1,
                              options.max_sharding, options.n_first)
    shardings = [s for level in levels for s in level]
    if (1,) * len(loops) not in shardings:
        shardings.append((1,) * len(loops))
    reductions: list[ReduceCut | None] = [None, *reduce_cuts(spec, config.tiles_per_chip,
                                                             config)]
    pipelines = [(True, False), (True, True), (False, False)]
    if not deep_stages_differ(spec):
        pipelines.remove((True, True))  # the deep form is the shallow one's plan
    for sharding in distinct_shardings(loops, shardings, granules):
        share = _share(loops, sharding)
        used = _used_tiles(spec, sharding, granules)
        choices = [split_values(n, g) if d.split else [1]
                   for n, g, d in zip(share, granules, loops, strict=True)]
        for split in products(choices):
            for red in reductions:
                if red is not None and math.prod(red.sharding) * used > config.tiles_per_chip:
                    continue
                for pipelined, deep in pipelines:
                    yield Candidate(sharding, split, red, pipelined, deep)
                    if pipelined and _cut_in_time(red) and math.prod(split) > 1:
                        yield Candidate(sharding, split, red, pipelined, deep, True)


def distinct_shardings(loops: Sequence[LoopDim], shardings: list[tuple[int, ...]],
                       granules) -> list[tuple[int, ...]]:
    """`shardings` (in order) without those that cut the anchor into the same tile shares
    as an earlier one: a factor above the pieces a dim gives leaves tiles idle, so on
    ResNet-50's stem (N of 1, C of one channel block) (1, 1, 8, 2), (2, 1, 8, 1) and
    (2, 1, 8, 1)'s other forms are one plan (`steps.tiles` cuts each dim into
    `piece_bounds`). Two of them give equal candidates for every split, reduction cut
    and pipeline, so the exhaustive space counts each once (ResNet-50's stem: 11 931
    candidates, 3 855 distinct)."""
    seen, out = set(), []
    for sharding in shardings:
        shares = tuple(tuple(piece_bounds(d.size, s, g))
                       for d, s, g in zip(loops, sharding, granules, strict=True))
        if shares not in seen:
            seen.add(shares)
            out.append(sharding)
    return out
