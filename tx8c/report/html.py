"""The report page: one HTML file with its styles, script and data inline (it opens
offline and reads nothing at view time). The data is `collect.collect()`'s, plus the
graph layout `layout.layout()` computed with Graphviz's dot."""

from __future__ import annotations

import html
import json
import math
from importlib import resources

from tx8c.report.collect import collect
from tx8c.report.layout import layout
from tx8c.target.config import TX8Config

PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>tx8c report: {title}</title>
<style>{css}</style></head>
<body>
<header><h1>tx8c report: {title}</h1><nav><a href="#summary">Summary</a><a href="#graph">Graph</a>
<a href="#groups">Groups</a><a href="#groupview">Group view</a><a href="#numerics-sec">Numerics</a></nav></header>
<section id="summary"><h2>Summary</h2><div class="cards" id="cards"></div>
<div class="row"><div><h3>Engine utilisation (busy cycles / estimated cycles, one tile)</h3><div id="util"></div>
<h3>Options</h3><div id="options"></div></div><div><h3>Compile time per stage</h3><div id="passes"></div></div></div></section>
<section id="graph"><h2>Graph</h2><div class="toolbar"><input id="search" placeholder="search ops (e.g. Gemm, 1x128, g12)" size="32">
<span id="hits" class="muted"></span><span id="legend" class="legend"></span></div>
<div id="graph-box"><div id="graph-view"><svg xmlns="http://www.w3.org/2000/svg"><g id="graph-layer"></g></svg></div>
<div id="details" class="muted">Click an op for its attributes, layout_str, dev_info and its group's plan. Drag to pan, wheel to zoom.</div></div></section>
<section id="groups"><h2>Groups</h2><p class="muted">Click a header to sort, a row to see the group below. Cycles are one tile's.</p>
<div id="groups-wrap"><table><thead id="groups-head"></thead><tbody id="groups-body"></tbody></table></div></section>
<section id="groupview"><h2>Group view</h2><select id="group-select"></select> <b id="group-title"></b>
<p id="group-note" class="muted"></p><div id="gantt-box"><h3>Pipeline per engine (one tile)</h3><svg id="gantt" class="chart" width="100%"></svg>
<h3>SPM occupancy (address × time)</h3><svg id="spm" class="chart" width="100%"></svg></div></section>
<section id="numerics-sec"><h2>Numerics</h2><div id="numerics"></div></section>
<script type="application/json" id="report-data">{data}</script>
<script>{js}</script>
</body></html>
"""


def _asset(name: str) -> str:
    return resources.files("tx8c.report").joinpath("assets", name).read_text("utf-8")


def _script_safe(text: str) -> str:
    """JSON that cannot end its <script> element early."""
    return text.replace("</", "<\\/").replace("<!--", "<\\!--")


def build_report(module, report: dict, config: TX8Config, compare: dict | None = None,
                 progress=None) -> str:
    data = collect(module, report, config, compare)
    nodes = data["graph"]["nodes"]
    if progress is not None:
        progress(f"laying out the graph ({len(nodes)} ops) with Graphviz dot")
    data["layout"] = layout([f"{n['op']} {n['shape']}" for n in nodes],
                            [(e["from"], e["to"]) for e in data["graph"]["edges"]])
    title = html.escape(str(report.get("model", "model")).rsplit("/", 1)[-1])
    payload = _script_safe(json.dumps(_finite(data), separators=(",", ":"), allow_nan=False,
                                      default=str))
    return PAGE.format(title=title, css=_asset("report.css"), js=_asset("report.js"),
                       data=payload)


def _finite(value):
    """`value` with infinities and NaNs as strings ("inf"): JSON has no such numbers
    (an exact stage's SQNR is infinite)."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value
