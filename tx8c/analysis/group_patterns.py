"""Op patterns for grouping: the seed's pattern automaton (seed 003, GroupPatternPass:
Automation, insertPatterns, insertPattern, searchOp, search), on a plain graph.

Patterns
--------
A pattern is a sequence of op kinds (op names without the `tx8be.` prefix) with a
priority, higher wins. It is written as text, kinds separated by blanks, with the seed's
two special tokens:

- `OR` splits the text into alternatives: `A B OR C D` is the two patterns `A B` and
  `C D` (the seed's processPattern);
- `*` (or `WILDCARD`) repeats the kind before it 1 to `WILDCARD_REPEATS` (5) times:
  `A B *` is `A B`, `A B B`, ..., `A B B B B B`. Several `*` in one alternative expand
  independently (the seed expands them recursively).

`BUILTIN_PATTERNS` holds the sets `opt-group=<mode>` selects (the seed's
patternConfigMap); `read_pattern_file` reads a JSON file of patterns (the seed's
getPatternsFromFile):

    {"description": "optional text",
     "patterns": [{"pattern": "Conv Add Relu OR Conv Relu", "priority": 2}, ...]}

Every problem in a file is a `PatternError` naming the file, the line and the pattern.

The automaton
-------------
`Automaton` inserts the expanded sequences into a trie (`TrieNode`: children by kind; a
node where a pattern ends carries its priority and the sequence, the seed's `output` and
`pattern`). `search` tries every op of a `MatchGraph` as the start of a match: from the
trie's root it follows the op's kind, then the op's users in a stable order, depth first
(the seed's searchOp), and keeps the best terminal node reached: the longest match, ties
broken by the higher priority, then by the first found (the seed's code compares
priorities only, so a longer match of lower priority would lose). A match is therefore
a path op_0 -> op_1 -> ... in the graph, each op a user of the one before.

Which users the walk may take is the graph's business (`MatchGraph.next_ops`): the
grouping pass leaves out users reached over an edge the seed's skip rule forbids.

The best match from (trie node, op) does not depend on how the walk got there, so it is
memoised: the search costs O(trie nodes x graph edges) at most, linear in the graph, where
the seed's walk is exponential in the pattern length on graphs with wide fan-out.

Choosing matches
----------------
Matches from different starts overlap. `choose_matches` (the seed's
PatternManager::applyAll, which the seed does not describe) takes them best first and
keeps the graph of groups acyclic with `tx8c.analysis.acyclic_groups.GroupedOrder`.
"""

from __future__ import annotations

import difflib
import itertools
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from tx8c.analysis.acyclic_groups import GroupedOrder
from tx8c.errors import Tx8Error

WILDCARD_REPEATS = 5
"""`OP *` stands for 1 to this many repetitions of OP (seed: `for (i = 0; i < 5; i++)`)."""
OR = "OR"
WILDCARDS = ("*", "WILDCARD")
MAX_EXPANSIONS = 4096
"""More concrete sequences than this from one pattern text is an error (five wildcards
already give 3125)."""


class PatternError(Tx8Error):
    """A pattern (built in, given in a file or on the command line) that cannot be used."""


@dataclass(frozen=True)
class PatternSpec:
    """One pattern as written: its text, its priority and where it comes from (for
    messages: "pattern file f.json, line 3")."""

    text: str
    priority: int
    origin: str = "pattern"


# --------------------------------------------------------------------------------------
# The built-in sets (the seed's patternConfigMap, selected by opt-group=<mode>)
# --------------------------------------------------------------------------------------

_CNN = (
    # a residual block's tail: the last Conv, the shortcut Add, the activation
    ("Conv Add Relu OR Conv Add Clip OR Conv Add LeakyRelu", 4),
    # the stem: (layout conversions of the input) Conv -> activation -> max pool
    ("ChannelNorm Transpose Conv Relu Pool OR Transpose Conv Relu Pool OR Conv Relu Pool "
     "OR Conv Clip Pool", 4),
    # Conv with its activation (Clip is ReLU6; Sigmoid Mul is SiLU after legalize)
    ("Conv Relu OR Conv Clip OR Conv LeakyRelu OR Conv HardSigmoid OR Conv Sigmoid Mul", 3),
    ("Conv Add OR Conv Pool", 2),
    # the classifier: global pool, flatten, fully connected (and the output conversion)
    ("Pool Reshape * Gemm ChannelNorm OR Pool Reshape * Gemm", 3),
)

_TRANSFORMER = (
    # attention: scale, Q K^T, mask, softmax with its all-masked guard (a Where fed by
    # Equal/Not of the softmax), the product with V
    ("Mul Gemm Add Softmax Equal Not Where Gemm OR Gemm Add Softmax Equal Not Where Gemm "
     "OR Mul Gemm Add Softmax Gemm OR Gemm Add Softmax Gemm OR Gemm Softmax Gemm", 5),
    ("Mul Gemm Add Softmax OR Gemm Add Softmax OR Gemm Softmax", 4),
    # projections with what follows them up to the next Gemm's input: the residual Add
    # and LayerNorm, the FFN activation (GELU as one op or as Mul Erf Add Mul), the QKV
    # split; the ChannelNorms the layout stage put between them stay inside
    ("Gemm ChannelNorm Add LayerNorm ChannelNorm OR Gemm ChannelNorm Add LayerNorm "
     "OR Gemm Add LayerNorm OR Gemm Add Add LayerNorm", 4),
    ("Gemm ChannelNorm Mul Erf Add Mul ChannelNorm OR Gemm ChannelNorm Mul Erf Add Mul "
     "OR Gemm Mul Erf Add Mul OR Gemm Add Gelu OR Gemm Gelu OR Gemm ChannelNorm Gelu", 4),
    ("ChannelNorm Gemm ChannelNorm Split OR Gemm ChannelNorm Split OR Gemm Split", 3),
    # embeddings: the lookup, the position/type embeddings added, the LayerNorm
    ("Gather Add Add LayerNorm ChannelNorm OR Gather Add LayerNorm ChannelNorm "
     "OR Gather Add Add LayerNorm OR Gather Add LayerNorm", 3),
    # LayerNorm / RMSNorm feeding the next Gemm
    ("LayerNorm ChannelNorm Gemm OR LayerNorm Gemm OR RMSNorm Gemm OR RMSNorm ChannelNorm Gemm",
     3),
    # gated FFN (LLaMA): Gemm -> SiLU (Sigmoid Mul) -> gate Mul
    ("Gemm Sigmoid Mul Mul OR Gemm ChannelNorm Sigmoid Mul Mul", 3),
    # RMSNorm as exported: x^2, mean, + eps, sqrt, reciprocal (or divide), scale
    ("Pow ChannelNorm Reduce ChannelNorm Add Sqrt Div Mul ChannelNorm "
     "OR Pow ChannelNorm Reduce ChannelNorm Add Sqrt Div Mul OR Pow Reduce Add Sqrt Div Mul "
     "OR Pow Reduce Add Sqrt Reciprocal Mul OR Pow Reduce Add Rsqrt Mul", 3),
    # rotary embedding: rotate half (Slice, Neg, Concatenate), times sin, plus x cos
    ("Slice Neg Concatenate Mul Add", 2),
    # grouped-query attention: K/V heads repeated (Reshape, BroadCast, Reshape)
    ("Reshape BroadCast Reshape ChannelNorm Transpose OR Reshape BroadCast Reshape "
     "ChannelNorm OR Reshape BroadCast Reshape", 2),
    # heads split and merged: the reshapes and transposes with their conversions (and
    # the scaling Mul of Q or K)
    ("Reshape ChannelNorm Transpose Mul OR Reshape ChannelNorm Transpose OR Reshape Transpose "
     "Mul OR Reshape Transpose", 2),
    ("Transpose ChannelNorm Reshape ChannelNorm OR Transpose ChannelNorm Reshape "
     "OR Transpose Reshape", 2),
    ("Gemm ChannelNorm Add OR Gemm Add", 2),
)

BUILTIN_PATTERNS: dict[str, tuple[tuple[str, int], ...]] = {
    "none": (),
    "cnn": _CNN,
    "transformer": _TRANSFORMER,
    "default": _CNN + _TRANSFORMER,
}
"""opt-group mode -> (pattern text, priority) pairs. `default` is `cnn` and
`transformer` together; `none` groups nothing (every op becomes a single group)."""

DEFAULT_MODE = "default"


def builtin_patterns(mode: str) -> list[PatternSpec]:
    """The built-in set `mode` (one of `BUILTIN_PATTERNS`)."""
    if mode not in BUILTIN_PATTERNS:
        raise PatternError(
            f"unknown opt-group mode '{mode}'; use one of {', '.join(BUILTIN_PATTERNS)}, "
            "or give a JSON pattern file"
        )
    return [PatternSpec(text, priority, f"built-in set '{mode}'")
            for text, priority in BUILTIN_PATTERNS[mode]]


# --------------------------------------------------------------------------------------
# Expanding a pattern text (the seed's processPattern)
# --------------------------------------------------------------------------------------


@cache
def groupable_kinds() -> frozenset[str]:
    """The op kinds a pattern may name: every tx8be op with operands and no region.

    Ops without operands (Constant, LoadConst) are constant sources: they join the group
    of their users as dependencies, never through a pattern; a Group has a region.
    """
    from tx8c.dialect import all_ops

    return frozenset(
        cls.name.removeprefix("tx8be.") for cls in all_ops()
        if getattr(cls, "OPERANDS", ()) and not cls.get_irdl_definition().regions
    )


def expand(spec: PatternSpec) -> list[tuple[str, ...]]:
    """The concrete op sequences of a pattern: OR alternatives, wildcards expanded."""
    tokens = spec.text.split()
    if not tokens:
        raise _error(spec, "is empty; write op names separated by blanks, e.g. 'Conv Relu'")
    sequences: list[tuple[str, ...]] = []
    for alternative in _alternatives(spec, tokens):
        sequences.extend(_expand_wildcards(spec, alternative))
        if len(sequences) > MAX_EXPANSIONS:
            raise _error(
                spec,
                f"expands to more than {MAX_EXPANSIONS} op sequences; use fewer wildcards",
            )
    return sequences


def _alternatives(spec: PatternSpec, tokens: list[str]) -> list[list[str]]:
    alternatives: list[list[str]] = [[]]
    for token in tokens:
        if token == OR:
            alternatives.append([])
        else:
            alternatives[-1].append(token)
    if any(not alt for alt in alternatives):
        raise _error(spec, "has an empty alternative: 'OR' must stand between two op sequences")
    return alternatives


def _expand_wildcards(spec: PatternSpec, tokens: list[str]) -> list[tuple[str, ...]]:
    """Every sequence the wildcards of one alternative stand for."""
    choices: list[list[tuple[str, ...]]] = []
    for token in tokens:
        if token in WILDCARDS:
            if not choices or len(choices[-1]) != 1:
                raise _error(
                    spec, f"has '{token}' with no op before it; write 'OP *' to repeat OP"
                )
            (kind,) = choices[-1][0]
            choices[-1] = [(kind,) * n for n in range(1, WILDCARD_REPEATS + 1)]
        else:
            choices.append([(_kind(spec, token),)])
    return [sum(parts, ()) for parts in itertools.product(*choices)]


def _kind(spec: PatternSpec, token: str) -> str:
    kind = token.removeprefix("tx8be.")
    kinds = groupable_kinds()
    if kind in kinds:
        return kind
    from tx8c.dialect import op_by_name

    try:
        op_by_name(kind)
    except KeyError:
        close = difflib.get_close_matches(kind, sorted(kinds), n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise _error(spec, f"names '{token}', which is not a tx8be op{hint}") from None
    raise _error(
        spec,
        f"names '{token}', which no pattern can group: ops without operands (constants) "
        "join the group of their users by themselves, and a Group cannot be nested",
    )


def _error(spec: PatternSpec, message: str) -> PatternError:
    return PatternError(f"{spec.origin}: pattern '{spec.text}' {message}.")


# --------------------------------------------------------------------------------------
# Pattern files
# --------------------------------------------------------------------------------------


class _LocatedStr(str):
    """A JSON string that remembers the offset it was read at."""

    offset: int = 0


def _located_loads(text: str):
    """json.loads, except every string value is a `_LocatedStr` with its offset."""
    from json import decoder, scanner

    class Decoder(json.JSONDecoder):
        def __init__(self):
            super().__init__()

            def parse_string(s, end, strict):
                value, after = decoder.scanstring(s, end, strict)
                located = _LocatedStr(value)
                located.offset = end - 1
                return located, after

            self.parse_string = parse_string
            self.scan_once = scanner.py_make_scanner(self)

    return Decoder().decode(text)


def read_pattern_file(path: str | Path) -> list[PatternSpec]:
    """The patterns of a JSON pattern file (module docstring), every one checked.

    Errors name the file, the line and the pattern: a file that cannot be read, is not
    JSON, or does not have the documented shape; an unknown op; a misplaced OR or `*`.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PatternError(f"pattern file '{path}' does not exist.") from None
    except IsADirectoryError:
        raise PatternError(f"pattern file '{path}' is a directory; give a .json file.") from None
    except (OSError, UnicodeDecodeError) as e:
        raise PatternError(f"cannot read pattern file '{path}': {e}.") from None
    try:
        data = _located_loads(text)
    except json.JSONDecodeError as e:
        raise PatternError(
            f"pattern file '{path}', line {e.lineno}, column {e.colno}: not valid JSON "
            f"({e.msg})."
        ) from None
    specs = _specs_of(path, text, data)
    for spec in specs:
        expand(spec)  # report every problem now, not when the pass runs
    return specs


def _specs_of(path: Path, text: str, data) -> list[PatternSpec]:
    shape = ('{"patterns": [{"pattern": "Conv Relu OR Conv Clip", "priority": 1}, ...]}')
    if not isinstance(data, dict) or not isinstance(data.get("patterns"), list):
        raise PatternError(
            f"pattern file '{path}': the file must hold one object with a list "
            f"\"patterns\", like {shape}."
        )
    unknown = sorted(set(data) - {"patterns", "description"})
    if unknown:
        raise PatternError(
            f"pattern file '{path}': unknown key(s) {unknown} at the top level; only "
            "\"patterns\" and \"description\" are read."
        )
    specs = []
    for number, entry in enumerate(data["patterns"], 1):
        specs.append(_spec_of(path, text, number, entry, shape))
    return specs


def _spec_of(path: Path, text: str, number: int, entry, shape: str) -> PatternSpec:
    where = f"pattern file '{path}', pattern #{number}"
    if not isinstance(entry, dict):
        raise PatternError(f"{where}: each pattern is an object like {shape}.")
    pattern = entry.get("pattern")
    if isinstance(pattern, str):
        where = f"pattern file '{path}', line {_line_of(text, pattern)}"
    unknown = sorted(set(entry) - {"pattern", "priority"})
    if unknown:
        raise PatternError(
            f"{where}: unknown key(s) {unknown}; a pattern has \"pattern\" and \"priority\"."
        )
    if not isinstance(pattern, str):
        raise PatternError(
            f"{where}: \"pattern\" must be a string of op names such as \"Conv Add Relu\"."
        )
    priority = entry.get("priority")
    if isinstance(priority, bool) or not isinstance(priority, int):
        raise PatternError(
            f"{where}: pattern '{pattern}' needs an integer \"priority\" (higher wins), "
            f"got {json.dumps(priority)}."
        )
    return PatternSpec(str(pattern), priority, where)


def _line_of(text: str, value: str) -> int:
    offset = getattr(value, "offset", 0)
    return text.count("\n", 0, offset) + 1


# --------------------------------------------------------------------------------------
# The trie (the seed's TrieNode, insertPattern, insertPatterns)
# --------------------------------------------------------------------------------------


@dataclass(eq=False)
class TrieNode:
    """A node of the pattern trie: `kind` is the op kind that leads to it from its parent
    (None at the root), `depth` the length of the sequence it ends. A node where a pattern
    ends has `priority` (the seed's output.front()) and `pattern` set."""

    kind: str | None
    depth: int
    children: dict[str, TrieNode] = field(default_factory=dict)
    priority: int | None = None
    pattern: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Match:
    """A match: the graph's nodes op_0 -> op_1 -> ... (each a user of the one before), the
    pattern sequence it matched and that pattern's priority."""

    ops: tuple[int, ...]
    pattern: tuple[str, ...]
    priority: int

    @property
    def rank(self) -> tuple[int, int]:
        """Better matches rank higher: longer, then higher priority."""
        return len(self.ops), self.priority


@dataclass(frozen=True)
class MatchGraph:
    """What the automaton sees of a graph: for node i, `kinds[i]` (None: never part of a
    match) and `next_ops[i]`, the users a match may continue to, in a stable order."""

    kinds: Sequence[str | None]
    next_ops: Sequence[Sequence[int]]


class Automaton:
    """The seed's Automation: patterns in a trie, searched from every op."""

    def __init__(self, patterns: Iterable[PatternSpec] = ()):
        self.root = TrieNode(None, 0)
        self.insert_patterns(patterns)

    # -- building ------------------------------------------------------------------------
    def insert_patterns(self, patterns: Iterable[PatternSpec]) -> None:
        """Expand each pattern (OR, WILDCARD) and insert every sequence."""
        for spec in patterns:
            for sequence in expand(spec):
                self.insert_pattern(sequence, spec.priority)

    def insert_pattern(self, sequence: Sequence[str], priority: int) -> None:
        """Insert one concrete sequence. When a sequence comes twice, the higher priority
        stays (the seed keeps both in `output` and reads the first inserted)."""
        node = self.root
        for kind in sequence:
            child = node.children.get(kind)
            if child is None:
                child = node.children[kind] = TrieNode(kind, node.depth + 1)
            node = child
        if node.priority is None or priority > node.priority:
            node.priority = priority
            node.pattern = tuple(sequence)

    @property
    def empty(self) -> bool:
        return not self.root.children

    @property
    def kinds(self) -> frozenset[str]:
        """Every op kind some pattern names: an op of another kind never matches."""
        found: set[str] = set()
        stack = [self.root]
        while stack:
            node = stack.pop()
            found.update(node.children)
            stack.extend(node.children.values())
        return frozenset(found)

    def describe(self) -> str:
        """The trie as indented text, one node a line (the seed's printTree)."""
        lines: list[str] = []

        def visit(node: TrieNode, indent: int) -> None:
            for kind in sorted(node.children):
                child = node.children[kind]
                end = f"  [priority {child.priority}]" if child.priority is not None else ""
                lines.append(f"{'  ' * indent}{kind}{end}")
                visit(child, indent + 1)

        visit(self.root, 0)
        return "\n".join(lines)

    # -- searching -----------------------------------------------------------------------
    def search(self, graph: MatchGraph) -> dict[int, Match]:
        """The best match starting at each node that starts one (the seed's search)."""
        memo: dict[tuple[int, int], Match | None] = {}
        found = {}
        for start in range(len(graph.kinds)):
            match = self._best(self.root, start, graph, memo, frozenset())
            if match is not None:
                found[start] = match
        return found

    def search_from(
        self, graph: MatchGraph, start: int, blocked: frozenset[int] | set[int]
    ) -> Match | None:
        """The best match starting at `start` that uses none of the `blocked` nodes."""
        return self._best(self.root, start, graph, {}, blocked)

    def _best(
        self,
        parent: TrieNode,
        op: int,
        graph: MatchGraph,
        memo: dict[tuple[int, int], Match | None],
        blocked,
    ) -> Match | None:
        """The best match of a pattern continuing `parent`'s sequence with `op` (the
        seed's searchOp): None when `op` does not continue it."""
        kind = graph.kinds[op]
        node = parent.children.get(kind) if kind is not None else None
        if node is None or op in blocked:
            return None
        key = (id(node), op)
        if key in memo:
            return memo[key]
        best = None
        if node.priority is not None:
            best = Match((op,), node.pattern, node.priority)
        if node.children:
            for user in graph.next_ops[op]:
                tail = self._best(node, user, graph, memo, blocked)
                if tail is None:
                    continue
                found = Match((op, *tail.ops), tail.pattern, tail.priority)
                if best is None or found.rank > best.rank:
                    best = found
        memo[key] = best
        return best


def automaton_for(mode: str = DEFAULT_MODE, pattern_file: str | Path | None = None) -> Automaton:
    """The automaton of a pattern file when one is given (the seed: a file path wins over
    the configured set), else of the built-in set `mode`."""
    return Automaton(read_pattern_file(pattern_file) if pattern_file else builtin_patterns(mode))


# --------------------------------------------------------------------------------------
# Choosing disjoint matches (the seed's PatternManager::applyAll)
# --------------------------------------------------------------------------------------

MAX_RESEARCHES = 4
"""How often a start whose best match lost an op to a better match is searched again
(without the taken ops) before it is given up."""


@dataclass
class Choice:
    """The matches taken, a topological order of the graph's nodes in which each of them
    is contiguous, and how many candidates were turned down and why."""

    matches: list[Match]
    order: list[int]
    overlapping: int = 0
    forbidden_edge: int = 0
    cycle: int = 0


def choose_matches(
    graph: MatchGraph, successors: Sequence[Sequence[int]], automaton: Automaton
) -> Choice:
    """Disjoint matches whose groups keep the graph of groups acyclic.

    Overlaps are resolved greedily, best match first: candidates (the best match of every
    start, `Automaton.search`) are taken longest first, then by priority, then by the
    start's position. A candidate that shares an op with a match already taken is
    searched again from its start without the taken ops (up to `MAX_RESEARCHES` times)
    and competes with what it finds. A candidate is turned down when two of its ops are
    joined by an edge a match may not follow (not in `graph.next_ops`: the memory rule
    of the grouping pass) or when its group would close a cycle among the groups
    (`GroupedOrder`).

    `successors[i]` are all the nodes that read node i (the edges `next_ops` leaves out
    included): the cycle test needs every dependency.
    """
    import heapq

    heap = [(-m.rank[0], -m.rank[1], start, 0, m)
            for start, m in automaton.search(graph).items()]
    heapq.heapify(heap)
    order = GroupedOrder(successors)
    taken: set[int] = set()
    choice = Choice([], [])
    while heap:
        _, _, start, tries, match = heapq.heappop(heap)
        if start in taken:
            continue
        if not taken.isdisjoint(match.ops):
            choice.overlapping += 1
            again = automaton.search_from(graph, start, taken) if tries < MAX_RESEARCHES else None
            if again is not None:
                heapq.heappush(heap, (-again.rank[0], -again.rank[1], start, tries + 1, again))
            continue
        if not _inner_edges_allowed(match.ops, graph, successors):
            choice.forbidden_edge += 1
            continue
        if not order.add(match.ops):
            choice.cycle += 1
            continue
        taken.update(match.ops)
        choice.matches.append(match)
    choice.order = order.order
    return choice


def _inner_edges_allowed(ops: Sequence[int], graph: MatchGraph, successors) -> bool:
    """Every edge between two of `ops` is one a match may follow (the path's own edges
    are; an edge that skips ahead along the path need not be)."""
    members = set(ops)
    for op in ops:
        inner = [s for s in successors[op] if s in members]
        if inner and not set(inner) <= set(graph.next_ops[op]):
            return False
    return True
