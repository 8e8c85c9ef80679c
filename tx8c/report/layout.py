"""The graph's layout by Graphviz `dot` (a layered, top-to-bottom drawing of a DAG).

Why dot, run when the report is written: it is the reference implementation of layered
graph drawing, kept by the Graphviz project and packaged by every Linux distribution
(Debian: `graphviz`), and running it here puts finished coordinates into the page, so
the page opens in the time its browser needs to draw, whatever the graph's size (a
JavaScript layout library would run at every opening). The page draws the nodes and the
spline edges dot returns (`-Tplain`: positions in inches, y upwards).
"""

from __future__ import annotations

import shutil
import subprocess

from tx8c.errors import Tx8Error

DPI = 72.0
NODE_HEIGHT = 0.42
CHAR_WIDTH = 0.085


class GraphvizMissing(Tx8Error):
    """`dot` is not installed."""


def dot_binary() -> str:
    found = shutil.which("dot")
    if found is None:
        raise GraphvizMissing(
            "Graphviz's `dot` is not on PATH; `tx8c report` lays the graph out with it. "
            "Install Graphviz (Debian/Ubuntu: apt-get install graphviz; macOS: brew "
            "install graphviz) and run the command again."
        )
    return found


def node_width(label: str) -> float:
    return max(0.9, 0.25 + CHAR_WIDTH * len(label))


def layout(labels: list[str], edges: list[tuple[int, int]], timeout: float = 600.0) -> dict:
    """Positions (points, y downwards) of each node's centre and size, and each edge's
    spline control points, for `labels[i]` (node i) and `edges` (from, to)."""
    # mclimit and nslimit bound dot's crossing-minimisation and positioning iterations:
    # BERT-base's graph (515 ops, a mask read by every layer) takes 4.8 s without them,
    # 0.7 s with them, and looks alike
    lines = ["digraph G {", "graph [rankdir=TB, nodesep=0.15, ranksep=0.3, mclimit=0.1, "
             "nslimit=1, nslimit1=1];",
             'node [shape=box, fixedsize=true, label=""];']
    lines += [f"n{i} [width={node_width(t):.3f}, height={NODE_HEIGHT}];"
              for i, t in enumerate(labels)]
    lines += [f"n{a} -> n{b};" for a, b in edges]
    lines.append("}")
    try:
        done = subprocess.run([dot_binary(), "-Tplain"], input="\n".join(lines), text=True,
                              capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise Tx8Error(f"Graphviz's dot did not lay out the graph of {len(labels)} ops in "
                       f"{timeout:.0f} s; report a smaller model or part of it.") from None
    if done.returncode != 0:
        raise Tx8Error(f"Graphviz's dot failed: {done.stderr.strip()[:500]}")
    return parse_plain(done.stdout, len(labels))


def parse_plain(text: str, count: int) -> dict:
    """dot's -Tplain output as {width, height, nodes: [[x, y, w, h]], edges: [[pts]]}."""
    height = 0.0
    width = 0.0
    nodes: list[list[float]] = [[0.0, 0.0, 0.0, 0.0] for _ in range(count)]
    edges: list[list[float]] = []
    for line in text.splitlines():
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "graph":
            width, height = float(parts[2]) * DPI, float(parts[3]) * DPI
        elif parts[0] == "node":
            i = int(parts[1][1:])
            nodes[i] = [round(float(parts[2]) * DPI, 1), round(height - float(parts[3]) * DPI, 1),
                        round(float(parts[4]) * DPI, 1), round(float(parts[5]) * DPI, 1)]
        elif parts[0] == "edge":
            n = int(parts[3])
            points = []
            for k in range(n):
                x, y = float(parts[4 + 2 * k]), float(parts[5 + 2 * k])
                points += [round(x * DPI, 1), round(height - y * DPI, 1)]
            edges.append(points)
    return {"width": round(width, 1), "height": round(height, 1), "nodes": nodes,
            "edges": edges}
