"""Minimum s-t cuts for the passes that choose one of two sides per op (layout-preset-to-
npu: original or NPU arrangement; layout-align-to-npu: compact or aligned).

A pass builds a `FlowNetwork`: nodes 0..num_vars-1 are its free variables, `SOURCE` and
`SINK` stand for the two fixed sides, `new_node()` adds auxiliary nodes, and `pay_once`
adds a value's cost so that it counts once however many readers sit across the cut.
`source_side()` solves with scipy's max flow and returns, per variable, whether it lies on
the source side of the minimum cut with the fewest nodes there.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.sparse import csr_array
from scipy.sparse.csgraph import breadth_first_order, maximum_flow

SOURCE = -1
SINK = -2
CAPACITY_LIMIT = 2**30
"""scipy's max flow takes int32 capacities (and silently returns 0 past them): finite
capacities are scaled to sum to at most this, leaving room for the infinite ones."""


def _scaled(caps: list[int | None]) -> tuple[np.ndarray, int]:
    """Capacities as int64 ready for int32: finite ones divided by their gcd (and, past
    CAPACITY_LIMIT in total, by a larger unit, rounded up, so the cut is then only
    near-optimal); infinite ones (None) one above any finite cut."""
    finite = [c for c in caps if c is not None]
    unit = math.gcd(*finite) if finite else 1
    total = sum(finite) // unit
    if total > CAPACITY_LIMIT:
        unit *= math.ceil(total / CAPACITY_LIMIT)
    scaled = [None if c is None else -(-c // unit) for c in caps]
    infinite = sum(c for c in scaled if c is not None) + 1
    return np.array([infinite if c is None else c for c in scaled], dtype=np.int64), infinite


def int32_capacities(caps: list[int | None]) -> np.ndarray:
    """The capacities as scipy's max flow takes them (see `_scaled`)."""
    return _scaled(caps)[0].astype(np.int32)


class FlowNetwork:
    """An s-t flow network under construction; nodes >= 0 are variables, then aux nodes."""

    def __init__(self, num_vars: int):
        self.num_vars = num_vars
        self.num_nodes = num_vars
        self.rows: list[int] = []
        self.cols: list[int] = []
        self.caps: list[int | None] = []  # None = infinite

    def new_node(self) -> int:
        self.num_nodes += 1
        return self.num_nodes - 1

    def edge(self, u: int, v: int, cap: int | None) -> None:
        self.rows.append(u)
        self.cols.append(v)
        self.caps.append(cap)

    def pay_once(self, cost: int, readers: list[int], producer: int, readers_on_source: bool):
        """Pay `cost` once when at least one node of `readers` lies on one side (the
        source side if `readers_on_source`, else the sink side) and `producer` on the
        other; `producer` may be SOURCE or SINK (then one such reader is enough).

        A value read by several readers is converted once however many need it: with
        one reader the cost edge joins it to the producer directly; with several they
        share an auxiliary hub joined to each by an infinite edge, so the hub is on a
        reader's side as soon as one reader is, and the cost edge is cut once:

            readers on the source side:  r1, r2, ... --inf--> [hub] --cost--> producer
            readers on the sink side:    producer --cost--> [hub] --inf--> r1, r2, ...
        """
        hub = readers[0] if len(readers) == 1 else self.new_node()
        if len(readers) > 1:
            for r in readers:
                if readers_on_source:
                    self.edge(r, hub, None)
                else:
                    self.edge(hub, r, None)
        if readers_on_source:
            self.edge(hub, producer, cost)
        else:
            self.edge(producer, hub, cost)

    def pay_on_side(self, cost: int, node: int, source_side: bool) -> None:
        """Pay `cost` when `node` lies on the given side (an edge to the other terminal)."""
        if not cost:
            return
        if source_side:
            self.edge(node, SINK, cost)
        else:
            self.edge(SOURCE, node, cost)

    def source_side(self) -> list[bool]:
        """Per variable: on the source side of the minimum cut with the fewest nodes
        there (the residual graph's reach from the source)."""
        if not self.caps:
            return [False] * self.num_vars
        s, t = self.num_nodes, self.num_nodes + 1
        n = self.num_nodes + 2
        rows = np.array([s if u == SOURCE else t if u == SINK else u for u in self.rows])
        cols = np.array([s if v == SOURCE else t if v == SINK else v for v in self.cols])
        caps, infinite = _scaled(self.caps)
        graph = csr_array((caps, (rows, cols)), shape=(n, n))  # duplicates are summed
        graph.data = np.minimum(graph.data, infinite).astype(np.int32)
        flow = maximum_flow(graph, s, t)
        residual = graph - flow.flow
        reachable = breadth_first_order(
            csr_array(residual > 0), s, directed=True, return_predecessors=False
        )
        side = np.zeros(n, dtype=bool)
        side[reachable] = True
        return side[: self.num_vars].tolist()
