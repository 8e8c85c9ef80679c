"""Plans as data: a candidate of the search and the plan kept for a group.

A `Candidate` is a point of the search space: how the anchor's loop dims are sharded over
tiles and split in time, which node (if any) has its reduction cut and how, and the
pipeline depth. The search turns a candidate into a `Plan` (or rejects it): the windows
every tile computes at every step follow from it (`tx8c.slicing.steps`), and the plan adds
what the search worked out - per node its largest slice and pipeline stage, per buffer
its size, copies and SPM offset, the estimate and the bounds. Plans serialise to JSON
(`as_dict` / `from_dict`), which is how group-cost writes them into the IR.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class ReduceCut:
    """Node `node`'s reduction dims cut over `sharding` tiles (partials summed over the
    NoC) and in `split` steps (partials accumulated in SPM, the seed's psum)."""

    node: int
    sharding: tuple[int, ...]
    split: tuple[int, ...]
    granule: tuple[int, ...] = ()
    """Per reduction dim, the multiples its cuts (over tiles and in time) fall on: the
    channel block of an operand whose channels it follows (`steps.reduce_granules`).
    Empty: the dims' own granules over tiles, anywhere in time."""


@dataclass(frozen=True)
class Candidate:
    """A point of the search space (seed 003: SecsInfo's sharding, split, reduceSplit)."""

    sharding: tuple[int, ...]
    split: tuple[int, ...]
    reduce: ReduceCut | None = None
    pipelined: bool = True
    """Loads, computes and stores of consecutive steps overlap (multi-buffered); else
    each step runs alone."""
    deep: bool = False
    """Pipelined with a stage per engine change along a step's compute chain (the seed's
    per-op stages after retract), so NE and CT work of consecutive steps overlap too;
    else one compute stage between the loads and the stores. Costs buffer copies."""
    interchange: bool = False
    """The loop order under a reduction cut in time: False (seed 003's psum), the
    reduction's pieces innermost - each anchor step accumulates its partial sum over
    consecutive steps, and what follows the reduction and the stores run after its last
    piece, all of them after the whole slice's last piece at the end of the tile (the
    drain); True, the anchor's steps innermost under the reduction's pieces (for k in
    reduction pieces: for a in anchor steps: psum[a] += ...): the operand the reduction
    streams is loaded once per piece for all anchor steps, each anchor step keeps its own
    partial sum live over the whole reduction (one buffer copy each), and at the last
    piece what follows the reduction and the stores of anchor step a run while step a +
    1's last piece computes (`steps.steps`; bench/README.md, branch interchange)."""

    @property
    def tiles(self) -> int:
        count = 1
        for s in self.sharding:
            count *= s
        if self.reduce is not None:
            for s in self.reduce.sharding:
                count *= s
        return count


@dataclass(frozen=True)
class BufferPlan:
    """One SPM buffer: a value (or a node's scratch) with `copies` rotating copies of
    `size` stored bytes each, at `offsets` (one per copy)."""

    name: str
    size: int
    copies: int
    offsets: tuple[int, ...]
    node: int
    kind: str
    """"value" (a node's result), "imm" (a node's scratch) or "psum"."""
    result: int = 0


@dataclass(frozen=True)
class EngineTime:
    """Busy cycles of one tile's engine lane over the whole group ("ddr": the DDR
    channel's share of this tile's loads and stores, which the ld and st lanes and the
    other tiles streaming at once share)."""

    lane: str
    cycles: int


@dataclass(frozen=True)
class Plan:
    """The plan of one group (see the module docstring)."""

    candidate: Candidate
    tiles: int
    steps: int
    stages: tuple[int, ...]
    """Per node, its pipeline stage (0 = loads)."""
    slice_shapes: tuple[tuple[int, ...], ...]
    """Per node, its largest loop slice (seed 003: temporal_mem_slice)."""
    buffers: tuple[BufferPlan, ...]
    spm_peak: int
    spm_lower_bound: int
    cycles: int
    bound_cycles: int
    engines: tuple[EngineTime, ...]
    ddr_bytes: int
    candidates: int = 0
    """How many candidates the search evaluated for this plan."""
    notes: tuple[str, ...] = field(default=())
    multicast: tuple[int, ...] = ()
    """The load nodes whose windows shared by several tiles are read from DDR once and
    multicast over the NoC (`tx8c.slicing.evaluate.multicast_loads`; the lowering
    follows it)."""

    def as_dict(self) -> dict:
        """The plan as JSON-ready data; a candidate in the default loop order has no
        `interchange` key (the plans written before it are unchanged byte for byte)."""
        out = asdict(self)
        if not self.candidate.interchange:
            del out["candidate"]["interchange"]
        return out

    @staticmethod
    def from_dict(data: dict) -> Plan:
        cand = dict(data["candidate"])
        reduce = cand.get("reduce")
        candidate = Candidate(
            tuple(cand["sharding"]), tuple(cand["split"]),
            None if reduce is None else ReduceCut(
                reduce["node"], tuple(reduce["sharding"]), tuple(reduce["split"]),
                tuple(reduce.get("granule", ()))),
            cand["pipelined"], cand.get("deep", False), cand.get("interchange", False),
        )
        return Plan(
            candidate=candidate,
            tiles=data["tiles"], steps=data["steps"], stages=tuple(data["stages"]),
            slice_shapes=tuple(tuple(s) for s in data["slice_shapes"]),
            buffers=tuple(
                BufferPlan(b["name"], b["size"], b["copies"], tuple(b["offsets"]), b["node"],
                           b["kind"], b.get("result", 0))
                for b in data["buffers"]
            ),
            spm_peak=data["spm_peak"], spm_lower_bound=data["spm_lower_bound"],
            cycles=data["cycles"], bound_cycles=data["bound_cycles"],
            engines=tuple(EngineTime(e["lane"], e["cycles"]) for e in data["engines"]),
            ddr_bytes=data["ddr_bytes"], candidates=data.get("candidates", 0),
            notes=tuple(data.get("notes", ())),
            multicast=tuple(data.get("multicast", ())),
        )
