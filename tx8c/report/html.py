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
    return _asset("page.html").format(title=title, css=_asset("report.css"), js=_asset("report.js"),
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
