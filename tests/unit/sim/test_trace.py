"""`tx8c trace`: the cmodel v2's timeline as a Chrome trace (tx8c.sim.trace)."""

from __future__ import annotations

import gzip
import json
from collections import defaultdict
from pathlib import Path

import onnx
import pytest

from examples.make_models import MODELS
from tests.unit.test_cli import assert_clean_error, tx8c
from tx8c.cli.main import _read_program
from tx8c.ir import parse_module
from tx8c.sim.cmodel_v2 import simulate, simulate_events
from tx8c.sim.trace import LANES, chrome_trace


@pytest.fixture(scope="module")
def compiled(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("trace")
    onnx.save(MODELS["residual_cnn"](), root / "cnn.onnx")
    r = tx8c("compile", str(root / "cnn.onnx"), "-o", str(root / "out"), "--quiet")
    assert r.returncode == 0, r.stderr
    return root / "out"


@pytest.fixture(scope="module")
def simulated(compiled: Path):
    program = _read_program(compiled, "")
    module = parse_module((compiled / "model.mlir").read_text())
    return program, module, simulate_events(program, module)


def test_every_instruction_is_one_slice_on_its_lane(simulated) -> None:
    program, _, (timing, events, entered) = simulated
    trace = chrome_trace(program, events, entered, 1e9)
    slices = [e for e in trace["traceEvents"] if e["ph"] == "X" and e["tid"] > 0]
    assert len(slices) == timing.instructions == sum(
        len(t.instructions) for g in program.groups for t in g.tiles)
    assert max(e.finish for e in events) == pytest.approx(timing.cycles, abs=1)
    # a lane runs one instruction at a time: its slices never overlap
    lanes = defaultdict(list)
    for e in slices:
        lanes[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"]))
    for spans in lanes.values():
        spans.sort()
        assert all(a[1] <= b[0] + 1e-6 for a, b in zip(spans, spans[1:], strict=False))
    names = {e["args"]["name"] for e in trace["traceEvents"] if e["name"] == "thread_name"}
    assert names == {"groups", *LANES}


def test_the_events_are_the_timing_simulate_reports(simulated) -> None:
    program, module, (timing, events, _) = simulated
    assert simulate(program, module) == timing
    busy = defaultdict(float)
    for e in events:
        busy[e.lane] += e.finish - e.start
    assert {lane: round(v) for lane, v in busy.items()} == pytest.approx(timing.busy, abs=1)


def test_a_group_slice_spans_its_instructions_on_the_tile(simulated) -> None:
    program, _, (_, events, entered) = simulated
    trace = chrome_trace(program, events, entered, 1e9)
    spans = {(e["args"]["group"], e["pid"]): (e["ts"], e["ts"] + e["dur"])
             for e in trace["traceEvents"] if e["ph"] == "X" and e["tid"] == 0}
    for e in trace["traceEvents"]:
        if e["ph"] == "X" and e["tid"] > 0 and not e["args"].get("early"):
            lo, hi = spans[(e["args"]["group"], e["pid"])]
            assert lo - 1e-6 <= e["ts"] and e["ts"] + e["dur"] <= hi + 1e-6


def test_the_command_writes_the_groups_asked_for(compiled: Path, tmp_path: Path) -> None:
    out = tmp_path / "t.json.gz"
    r = tx8c("trace", str(compiled), "-o", str(out), "--groups", "1,3-4", "--quiet")
    assert r.returncode == 0, r.stderr
    trace = json.loads(gzip.decompress(out.read_bytes()))
    assert trace["otherData"]["groups"] == [1, 3, 4]
    assert {e["args"]["group"] for e in trace["traceEvents"] if e["ph"] == "X"} == {1, 3, 4}


@pytest.mark.parametrize("groups, needle", [("1,999", "no group 999"),
                                            ("x", "'x' is not a group id")])
def test_a_bad_group_list_is_a_clear_error_and_writes_nothing(
        compiled: Path, tmp_path: Path, groups: str, needle: str) -> None:
    out = tmp_path / "t.json"
    assert_clean_error(tx8c("trace", str(compiled), "-o", str(out), "--groups", groups),
                       needle)
    assert not out.exists()


def test_a_directory_without_a_program_is_a_clear_error(compiled: Path, tmp_path: Path
                                                        ) -> None:
    (tmp_path / "model.mlir").write_text((compiled / "model.mlir").read_text())
    assert_clean_error(tx8c("trace", str(tmp_path), "-o", str(tmp_path / "t.json")),
                       "program.json.gz", "not found")
