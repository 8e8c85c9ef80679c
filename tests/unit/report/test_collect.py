"""The report's data: one graph node per compute op with edges traced through the
groups, per-group views that agree with the plans (every buffer copy inside the SPM peak
and at its planned offset, tasks on the plan's lanes), and dot's layout parsed."""

from __future__ import annotations

import io
import shutil

import pytest

from examples.make_models import MODELS
from tx8c.cli.progress import Progress
from tx8c.frontend.onnx.importer import import_onnx
from tx8c.pipeline import CompileOptions, run_pipeline
from tx8c.report.collect import graph_data, group_views
from tx8c.report.layout import layout, parse_plain
from tx8c.target.config import DEFAULT_CONFIG


@pytest.fixture(scope="module")
def compiled():
    result = import_onnx(MODELS["transformer_encoder"]())
    run_pipeline(result.module, CompileOptions(verify_each_pass=True))
    return result.module


def test_graph_has_one_node_per_compute_op(compiled) -> None:
    from tx8c.analysis.group_stats import group_report

    graph = graph_data(compiled)
    report = group_report(compiled)
    assert len(graph["nodes"]) == report["ops"]
    assert [n["op"] for n in graph["nodes"]] == [op for g in report["groups"] for op in g["ops"]]
    assert {e["layout"] for e in graph["edges"]} <= {"Tensor", "NTensor", "Cx", "NCx"}
    assert all(e["from"] < e["to"] for e in graph["edges"])  # program order is topological
    assert any(n["conversion"] for n in graph["nodes"])


def test_views_follow_the_plans(compiled) -> None:
    import json

    from tx8c.dialect.ops.backend import GroupOp

    views = group_views(compiled, DEFAULT_CONFIG)
    plans = {str(g.attr("group_id")): json.loads(g.attributes["tx8c.plan"].data)
             for g in compiled.walk() if isinstance(g, GroupOp) and "tx8c.plan" in g.attributes}
    assert set(views) == set(plans)
    for gid, view in views.items():
        plan = plans[gid]
        assert view["spm_peak"] == plan["spm_peak"]
        planned = {o for b in plan["buffers"] for o in b["offsets"]}
        for _, offset, size, begin, end in view["buffers"]:
            assert offset in planned and offset + size <= plan["spm_peak"] and begin < end
        lanes = {e["lane"] for e in plan["engines"]}
        assert {b[0] for b in view["bars"]} <= lanes | {"noc"}


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot not installed")
def test_dot_layout_places_every_node_top_down() -> None:
    placed = layout(["a", "b", "c"], [(0, 1), (1, 2), (0, 2)])
    ys = [n[1] for n in placed["nodes"]]
    assert ys[0] < ys[1] < ys[2]  # top to bottom in page coordinates
    assert len(placed["edges"]) == 3 and all(len(p) >= 4 for p in placed["edges"])


def test_parse_plain() -> None:
    text = ("graph 1 2 3\nnode n0 1 2.5 0.9 0.42 \"\" solid box black lightgrey\n"
            "edge n0 n0 4 1 2 1 1.5 1 1 1 0.5 solid black\nstop\n")
    placed = parse_plain(text, 1)
    assert placed["nodes"] == [[72.0, 36.0, 64.8, 30.2]]
    assert placed["edges"][0][:2] == [72.0, 72.0]


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_modes() -> None:
    plain = io.StringIO()
    p = Progress(False, plain)
    with p.task("compiling", 2) as advance:
        advance("a")
        advance("b")
    assert "compiling 1/2: a" in plain.getvalue() and "compiling 2/2: b" in plain.getvalue()
    quiet = io.StringIO()
    q = Progress(True, quiet)
    q("x")
    with q.task("t", 1) as advance:
        advance()
    assert quiet.getvalue() == ""
    tty = _Tty()
    t = Progress(False, tty)
    assert t.interactive
    with t.task("compiling", 2) as advance:
        advance("a")
        advance("b")
    assert "compiling: 2/2 done" in tty.getvalue()
    assert "compiling 1/2" not in tty.getvalue()  # a bar, not lines


def test_plain_progress_of_many_steps_prints_about_ten_lines() -> None:
    plain = io.StringIO()
    with Progress(False, plain).task("importing", 1000) as advance:
        for i in range(1000):
            advance(f"node{i}")
    lines = plain.getvalue().splitlines()
    assert len(lines) == 10 and lines[-1].endswith("importing 1000/1000: node999")
