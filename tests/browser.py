"""Headless Chromium for the report tests: open a page, read the facts its script left
on <body> (data-ready, data-errors, data-nodes, data-group-rows, data-render-ms), take a
screenshot. Debian's `chromium` package (the test set-up installs it with Graphviz,
`make report-deps`); tests skip with a message saying so where it is missing."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         "--no-first-run", "--disable-extensions")
MISSING = ("headless Chromium not found (looked for chromium, chromium-browser, "
           "google-chrome); install Debian's chromium package (`make report-deps` does, as "
           "root) to run the report's browser tests")


def chromium() -> str | None:
    return next((p for p in map(shutil.which, CHROMIUM_NAMES) if p), None)


def body_facts(page: Path, timeout: float = 120.0) -> dict[str, str]:
    """The data-* attributes of the page's <body> after its scripts ran."""
    done = subprocess.run([chromium(), *FLAGS, "--dump-dom", page.resolve().as_uri()],
                          capture_output=True, text=True, timeout=timeout, check=True)
    body = re.search(r"<body([^>]*)>", done.stdout)
    assert body, done.stdout[:500]
    return dict(re.findall(r'data-([a-z-]+)="([^"]*)"', body.group(1)))


def screenshot(page: Path, png: Path, size: str = "1400,2600", timeout: float = 120.0) -> None:
    png.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([chromium(), *FLAGS, f"--window-size={size}", f"--screenshot={png}",
                    page.resolve().as_uri()], capture_output=True, timeout=timeout,
                   check=True)
