"""The report of every bundled example, opened in headless Chromium: its script runs
without errors, the graph has one node per compute op, the groups table one row per
group; a screenshot of each lands in build/screenshots/ for a person to look at."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import onnx
import pytest

from examples.make_models import MODELS
from tests.browser import MISSING, body_facts, chromium, screenshot

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "build" / "screenshots"

pytestmark = [
    pytest.mark.skipif(chromium() is None, reason=MISSING),
    pytest.mark.skipif(shutil.which("dot") is None,
                       reason="Graphviz's dot not found; `make report-deps` installs it"),
]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_report_opens_in_chromium(name: str, tmp_path: Path) -> None:
    model = tmp_path / f"{name}.onnx"
    onnx.save(MODELS[name](), model)
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "tx8c.cli.main", "compile", str(model), "-o",
                           str(out), "--report", "--quiet"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    report = json.loads((out / "report.json").read_text())
    page = out / "report.html"
    facts = body_facts(page)
    assert facts.get("ready") == "1", facts
    assert "errors" not in facts, facts
    assert int(facts["nodes"]) == report["groups"]["ops"]
    assert int(facts["group-rows"]) == report["groups"]["count"]
    # compile time: a header and a row per phase, then a header and a row per pass
    assert int(facts["time-rows"]) == 2 + len(report["phase_seconds"]) + len(
        report["pass_seconds"]), facts
    screenshot(page, SCREENSHOTS / f"{name}.png")
    assert (SCREENSHOTS / f"{name}.png").stat().st_size > 10_000


def test_page_is_self_contained(tmp_path: Path) -> None:
    """No script, style, image or font is fetched: nothing in the page names a URL
    scheme a browser would load from (the SVG namespace is an identifier, not a load)."""
    model = tmp_path / "m.onnx"
    onnx.save(MODELS["residual_cnn"](), model)
    out = tmp_path / "out"
    subprocess.run([sys.executable, "-m", "tx8c.cli.main", "compile", str(model), "-o",
                    str(out), "--report", "--quiet"], check=True)
    text = (out / "report.html").read_text().replace('xmlns="http://www.w3.org/2000/svg"', "")
    for needle in ("http://", "https://", "src=", "<link", "@import", "url("):
        assert needle not in text, needle
