"""The pattern automaton of group-pattern (seed 003 GroupPatternPass): pattern texts (OR,
WILDCARD), pattern files and their errors, the trie, the search against a brute-force
enumeration of paths, and the choice of disjoint, acyclic matches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import contracted_is_acyclic
from tx8c.analysis.group_patterns import (
    BUILTIN_PATTERNS,
    WILDCARD_REPEATS,
    Automaton,
    Match,
    MatchGraph,
    PatternError,
    PatternSpec,
    automaton_for,
    builtin_patterns,
    choose_matches,
    expand,
    read_pattern_file,
)

# --------------------------------------------------------------------------------------
# pattern texts
# --------------------------------------------------------------------------------------


def test_or_splits_a_pattern_into_alternatives() -> None:
    assert expand(PatternSpec("Conv Add OR Gemm Relu", 1)) == [("Conv", "Add"), ("Gemm", "Relu")]
    assert expand(PatternSpec("Relu OR Clip OR Sigmoid", 1)) == [("Relu",), ("Clip",),
                                                                  ("Sigmoid",)]


def test_wildcard_repeats_the_op_before_it_one_to_five_times() -> None:
    assert WILDCARD_REPEATS == 5
    assert expand(PatternSpec("Conv Relu *", 1)) == [
        ("Conv",) + ("Relu",) * n for n in range(1, 6)
    ]
    assert len(expand(PatternSpec("Add * Mul WILDCARD", 1))) == 25
    assert expand(PatternSpec("tx8be.Conv Relu * OR Gemm", 1))[-1] == ("Gemm",)


@pytest.mark.parametrize("text, message", [
    ("", "is empty"),
    ("   ", "is empty"),
    ("Conv OR", "empty alternative"),
    ("OR Conv", "empty alternative"),
    ("Conv OR OR Relu", "empty alternative"),
    ("* Conv", "'*' with no op before it"),
    ("Conv OR * Relu", "'*' with no op before it"),
    ("Conv * *", "'*' with no op before it"),
    ("Conv Reluu", "'Reluu', which is not a tx8be op (did you mean Relu"),
    ("Conv LoadConst", "no pattern can group"),
    ("Constant Add", "no pattern can group"),
    ("Group Add", "no pattern can group"),
    ("Add * Mul * Sub * Div * Max * Min *", "more than 4096"),
])
def test_bad_patterns_are_clear_errors(text: str, message: str) -> None:
    with pytest.raises(PatternError, match="pattern") as e:
        expand(PatternSpec(text, 1, "somewhere"))
    assert message in str(e.value) and str(e.value).startswith("somewhere: pattern")


def test_builtin_sets() -> None:
    assert set(BUILTIN_PATTERNS) == {"none", "cnn", "transformer", "default"}
    assert builtin_patterns("none") == []
    default = {s.text for s in builtin_patterns("default")}
    assert default == {s.text for s in builtin_patterns("cnn") + builtin_patterns("transformer")}
    for mode in BUILTIN_PATTERNS:
        for spec in builtin_patterns(mode):
            assert expand(spec)  # every built-in pattern is valid
    with pytest.raises(PatternError, match="unknown opt-group mode 'fast'"):
        builtin_patterns("fast")
    # the examples are in the sets
    cnn = Automaton(builtin_patterns("cnn"))
    transformer = Automaton(builtin_patterns("transformer"))
    for automaton, sequence in [(cnn, "Conv Add Relu"), (cnn, "Conv Clip"),
                                (cnn, "Conv Relu"), (transformer, "Gemm Add Gelu"),
                                (transformer, "Gemm Add Softmax"),
                                (transformer, "LayerNorm Gemm")]:
        assert _ends_pattern(automaton, sequence.split()), sequence


def _ends_pattern(automaton: Automaton, sequence: list[str]) -> bool:
    node = automaton.root
    for kind in sequence:
        node = node.children.get(kind)
        if node is None:
            return False
    return node.priority is not None


# --------------------------------------------------------------------------------------
# pattern files
# --------------------------------------------------------------------------------------


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "patterns.json"
    path.write_text(text)
    return path


def test_pattern_file_round_trip(tmp_path: Path) -> None:
    path = _write(tmp_path, json.dumps({
        "description": "two patterns",
        "patterns": [{"pattern": "Conv Relu OR Conv Clip", "priority": 2},
                     {"pattern": "Gemm Add *", "priority": 1}],
    }, indent=2))
    specs = read_pattern_file(path)
    assert [(s.text, s.priority) for s in specs] == [("Conv Relu OR Conv Clip", 2),
                                                     ("Gemm Add *", 1)]
    assert "line 5" in specs[0].origin and "line 9" in specs[1].origin
    automaton = automaton_for(pattern_file=path)
    assert _ends_pattern(automaton, ["Gemm", "Add", "Add", "Add"])


@pytest.mark.parametrize("text, message", [
    ('{"patterns": [', "line 1, column 15: not valid JSON"),
    ('[{"pattern": "Conv", "priority": 1}]', 'one object with a list "patterns"'),
    ('{"patterns": {}}', 'one object with a list "patterns"'),
    ('{"patterns": [], "extra": 1}', "unknown key(s) ['extra']"),
    ('{"patterns": [3]}', "pattern #1: each pattern is an object"),
    ('{"patterns": [{"pattern": 3, "priority": 1}]}', '"pattern" must be a string'),
    ('{"patterns": [{"pattern": "Conv", "priority": "high"}]}', 'integer "priority"'),
    ('{"patterns": [{"pattern": "Conv", "priority": true}]}', 'integer "priority"'),
    ('{"patterns": [{"pattern": "Conv", "priority": 1, "x": 0}]}', "unknown key(s) ['x']"),
    ('{"patterns": [\n  {"pattern": "Conv Relu", "priority": 1},\n'
     '  {"pattern": "Conv Rleu", "priority": 1}\n]}',
     "line 3: pattern 'Conv Rleu' names 'Rleu', which is not a tx8be op (did you mean Relu"),
])
def test_bad_pattern_files_name_the_line_and_pattern(tmp_path: Path, text: str,
                                                     message: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(PatternError) as e:
        read_pattern_file(path)
    assert f"pattern file '{path}'" in str(e.value)
    assert message in str(e.value), str(e.value)


def test_missing_or_unreadable_pattern_files(tmp_path: Path) -> None:
    with pytest.raises(PatternError, match="does not exist"):
        read_pattern_file(tmp_path / "nope.json")
    with pytest.raises(PatternError, match="is a directory"):
        read_pattern_file(tmp_path)
    (tmp_path / "bin.json").write_bytes(b"\xff\xfe{")
    with pytest.raises(PatternError, match="cannot read"):
        read_pattern_file(tmp_path / "bin.json")


# --------------------------------------------------------------------------------------
# the trie
# --------------------------------------------------------------------------------------


def test_trie_shares_prefixes_and_keeps_the_higher_priority() -> None:
    automaton = Automaton([PatternSpec("Conv Add Relu OR Conv Relu", 1),
                           PatternSpec("Conv Relu", 4), PatternSpec("Conv Relu", 2)])
    assert automaton.describe() == (
        "Conv\n  Add\n    Relu  [priority 1]\n  Relu  [priority 4]"
    )
    assert Automaton().empty and not automaton.empty


# --------------------------------------------------------------------------------------
# the search against brute force
# --------------------------------------------------------------------------------------

ALPHABET = ("Add", "Relu", "Mul", "Neg")


@st.composite
def graphs_and_patterns(draw):
    n = draw(st.integers(1, 9))
    kinds = [draw(st.sampled_from(ALPHABET + (None,))) for _ in range(n)]
    successors = [sorted(draw(st.sets(st.integers(i + 1, n - 1), max_size=3))) if i < n - 1
                  else [] for i in range(n)]
    next_ops = [[j for j in s if draw(st.booleans()) or draw(st.booleans())]
                for s in successors]
    texts = draw(st.lists(
        st.tuples(st.lists(st.sampled_from(ALPHABET), min_size=1, max_size=4),
                  st.integers(0, 3), st.booleans()),
        min_size=1, max_size=6,
    ))
    specs = [PatternSpec(" ".join(ops) + (" *" if star else ""), priority)
             for ops, priority, star in texts]
    return MatchGraph(kinds, next_ops), successors, specs


def brute_force_best(graph: MatchGraph, start: int, sequences: dict) -> Match | None:
    """Every path from `start` along next_ops, in DFS order (users in order, a path
    before its extensions); the first of the longest, highest-priority ones that spells a
    pattern."""
    best = None

    def visit(path: list[int]) -> None:
        nonlocal best
        spelled = tuple(graph.kinds[i] for i in path)
        if spelled in sequences:
            found = Match(tuple(path), spelled, sequences[spelled])
            if best is None or found.rank > best.rank:
                best = found
        if len(path) < max(map(len, sequences), default=0):
            for user in graph.next_ops[path[-1]]:
                if graph.kinds[user] is not None:
                    visit(path + [user])

    if graph.kinds[start] is not None:
        visit([start])
    return best


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs_and_patterns())
def test_search_finds_the_brute_force_best(case) -> None:
    graph, _, specs = case
    automaton = Automaton(specs)
    sequences: dict[tuple[str, ...], int] = {}
    for spec in specs:
        for sequence in expand(spec):
            sequences[sequence] = max(sequences.get(sequence, spec.priority), spec.priority)
    found = automaton.search(graph)
    for start in range(len(graph.kinds)):
        assert found.get(start) == brute_force_best(graph, start, sequences)


# --------------------------------------------------------------------------------------
# choosing matches
# --------------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs_and_patterns())
def test_chosen_matches_are_disjoint_paths_without_cycles(case) -> None:
    graph, successors, specs = case
    choice = choose_matches(graph, successors, Automaton(specs))
    taken = [i for m in choice.matches for i in m.ops]
    assert len(taken) == len(set(taken))
    for m in choice.matches:
        assert all(b in graph.next_ops[a] for a, b in zip(m.ops, m.ops[1:]))
        members = set(m.ops)
        for a in m.ops:  # every edge inside a group is one a match may follow
            assert all(b in graph.next_ops[a] for b in successors[a] if b in members)
    assert contracted_is_acyclic(successors, [m.ops for m in choice.matches])
    # the order is topological and every match is contiguous in it
    place = {node: k for k, node in enumerate(choice.order)}
    assert sorted(choice.order) == list(range(len(successors)))
    assert all(place[i] < place[j] for i, s in enumerate(successors) for j in s)
    for m in choice.matches:
        spots = sorted(place[i] for i in m.ops)
        assert spots == list(range(spots[0], spots[0] + len(spots)))


def test_every_start_gets_its_best_match_when_nothing_overlaps() -> None:
    # two independent chains Add -> Relu -> Relu: each becomes one match
    graph = MatchGraph(["Add", "Relu", "Relu", "Add", "Relu", "Relu"],
                       [[1], [2], [], [4], [5], []])
    successors = [list(s) for s in graph.next_ops]
    choice = choose_matches(graph, successors, Automaton([PatternSpec("Add Relu *", 1)]))
    assert [m.ops for m in choice.matches] == [(0, 1, 2), (3, 4, 5)]
    assert (choice.overlapping, choice.forbidden_edge, choice.cycle) == (0, 0, 0)


def test_a_match_that_loses_an_op_is_searched_again() -> None:
    # 0:Mul -> 1:Add -> 2:Relu and 3:Mul -> 1:Add; `Mul Add Relu` from 0 takes the Add,
    # 3's best match (Mul Add Relu) overlaps, its search again finds `Mul` alone
    graph = MatchGraph(["Mul", "Add", "Relu", "Mul"], [[1], [2], [], [1]])
    successors = [list(s) for s in graph.next_ops]
    automaton = Automaton([PatternSpec("Mul Add Relu", 2), PatternSpec("Mul", 1)])
    choice = choose_matches(graph, successors, automaton)
    assert [m.ops for m in choice.matches] == [(0, 1, 2), (3,)]
    assert choice.overlapping == 1


def test_an_edge_a_match_may_not_follow_turns_it_down() -> None:
    # 0 -> 1 -> 2 and 0 -> 2, where the edge 0 -> 2 is forbidden (the memory rule)
    graph = MatchGraph(["Mul", "Add", "Relu"], [[1], [2], []])
    successors = [[1, 2], [2], []]
    choice = choose_matches(graph, successors, Automaton([PatternSpec("Mul Add Relu", 1)]))
    assert choice.matches == [] and choice.forbidden_edge == 1
