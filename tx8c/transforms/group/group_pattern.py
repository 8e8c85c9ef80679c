"""group-pattern: group the ops that match configured op patterns (seed 003,
"Sharding Search and SPM Management", GroupPatternPass).

The patterns come from the built-in set `mode` (the seed's opt_group config:
`tx8c.analysis.group_patterns.BUILTIN_PATTERNS`, `none` groups nothing) or, when
`pattern-file` is given, from that JSON file (the seed: a path wins over the config).
They go into the seed's trie automaton (`Automaton`: OR alternatives, `OP *` wildcards,
priorities), which is searched from every op of each function body: a match is a path
op_0 -> op_1 -> ... through users (in block order), the longest one found from its start,
ties broken by priority.

Which users a match may follow is the seed's skip rule, per edge, with the OpAttr bit
masks of both ends (`need_store` bit of the result, `need_load` bit of the operand):

- the seed skips a user that needs its operand loaded after an op whose result is not
  stored (the result is in DDR; a group only loads at its inputs);
- this pass also skips the mirror case, a user that reads its operand without a load (in
  DDR, such as Gather's table) after an op whose result must be stored (it is in SPM),
  which the seed leaves to GroupLdSt, where it would leave the SPM value unstored.
  So inside a group every edge joins two ops that agree on where the value lives.

Overlapping matches are resolved by `choose_matches`: best first (longest, then highest
priority, then earliest start); a match that lost an op to a better one is searched
again from its start without the taken ops; a match is turned down when an edge between
two of its ops breaks the rule above (an edge that skips ahead along the path) or when
its group would close a cycle among the groups (`GroupedOrder`: a path from the group
back into it through other ops or groups). Then every match becomes a `tx8be.Group`
(the seed's createGroups) with the constant sources its ops read moved inside (cloned
when other ops read them too), as group-optimization's createSingleGroup does.

Requires: function bodies of tx8be ops in SSA order (any stage; in the pipeline after
the layout and constants stages). Ops already in groups are left alone; existing
top-level groups are ordinary nodes of the graph (never part of a match).

Guarantees:
- every match taken is one `tx8be.Group` whose body holds its ops and their constant
  sources in a topological order (the seed's sortTopologically), then the `Yield`;
  the body is isolated from above (group operands are the values it reads from
  outside, results the values read after it);
- groups are disjoint and the graph of groups and remaining ops is acyclic: the
  function body is reordered (only as far as needed) into a topological order in which
  every group is one op;
- every edge inside a group follows the memory rule above;
- only the program's structure changes, never a value.
- The groups' attributes keep their defaults (group-optimization numbers them).

Cost: linear in the ops and edges for the search; the cycle test and the reordering cost
the span of each match in the block (short: matched ops follow each other).

Departs from the seed: longest match first (the seed's searchOp compares priorities
only), memoised search, the mirror of the skip rule, the cycle test and the overlap
resolution (the seed's PatternManager::applyAll is not described).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass

from tx8c.analysis.group_patterns import (
    DEFAULT_MODE,
    Automaton,
    MatchGraph,
    automaton_for,
    choose_matches,
)
from tx8c.dialect.ops.backend import GroupOp
from tx8c.interfaces import OpAttr
from tx8c.ir_utils import (
    body_and_terminator,
    function_bodies,
    is_compute_op,
    move_to_end,
    pull_constant_sources,
)


@dataclass(frozen=True)
class GroupPatternPass(ModulePass):
    name = "group-pattern"

    mode: str = DEFAULT_MODE
    """The built-in pattern set: none, cnn, transformer or default (cnn + transformer)."""
    pattern_file: str = ""
    """A JSON pattern file; when given it replaces the built-in set."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        automaton = automaton_for(self.mode, self.pattern_file or None)
        if automaton.empty:
            return
        for block in function_bodies(op):
            group_matches(block, automaton)


def group_matches(block: Block, automaton: Automaton) -> list[GroupOp]:
    """Group the matches of `automaton` among the top-level ops of `block`."""
    nodes, _ = body_and_terminator(block)
    graph, successors = match_graph(nodes, automaton.kinds)
    choice = choose_matches(graph, successors, automaton)
    if choice.order != sorted(choice.order):  # a match had to move ahead of an op
        move_to_end(block, [nodes[i] for i in choice.order])
    place = {node: k for k, node in enumerate(choice.order)}
    return [
        GroupOp.wrap(pull_constant_sources([nodes[i] for i in sorted(m.ops, key=place.get)]))
        for m in choice.matches
    ]


def match_graph(
    nodes: list[Operation], named: frozenset[str]
) -> tuple[MatchGraph, list[list[int]]]:
    """The automaton's view of `nodes` (ops of one block, in order) and every node's
    readers. A node's kind is its op name for a compute op whose kind a pattern names
    (`named`), None for anything else (other ops, constant sources, groups); the users a
    match may continue to are those reached over an edge the memory rule allows (module
    docstring)."""
    index = {id(op): i for i, op in enumerate(nodes)}  # id: an op's hash is a Python call
    kinds = [_kind(op, named) for op in nodes]
    attrs = _OpAttrs(nodes)
    successors: list[list[int]] = []
    next_ops: list[list[int]] = []
    for i, (op, kind) in enumerate(zip(nodes, kinds, strict=True)):
        readers = _readers(op, index)
        successors.append(sorted(readers))
        if kind is None:
            next_ops.append([])
            continue
        next_ops.append([
            j for j in successors[-1]
            if kinds[j] is not None and all(
                attrs[i].stores(result) == attrs[j].loads(operand)
                for result, operand in readers[j]
            )
        ])
    return MatchGraph(kinds, next_ops), successors


class _OpAttrs:
    """The nodes' OpAttrs, each queried once, when first needed."""

    def __init__(self, nodes: list[Operation]):
        self._nodes = nodes
        self._attrs: list[OpAttr | None] = [None] * len(nodes)

    def __getitem__(self, i: int) -> OpAttr:
        attr = self._attrs[i]
        if attr is None:
            attr = self._attrs[i] = self._nodes[i].query_op_attr()
        return attr


def _kind(op: Operation, named: frozenset[str]) -> str | None:
    kind = op.name.removeprefix("tx8be.")
    return kind if kind in named and is_compute_op(op) else None


def _readers(op: Operation, index: dict[int, int]) -> dict[int, list[tuple[int, int]]]:
    """The nodes that read `op`'s results, each with its (result, operand) index pairs
    (`index`: node number by id of the op)."""
    readers: dict[int, list[tuple[int, int]]] = {}
    for result in op.results:
        for use in result.uses:
            reader = index.get(id(use.operation))
            if reader is not None:
                readers.setdefault(reader, []).append((result.index, use.index))
    return readers
