"""Progress of long steps on stderr: a `rich` progress bar on a terminal, plain
timestamped lines otherwise (a log file, CI), nothing with --quiet.

Commands announce single events with `progress("message")` and counted work with
`progress.task("running passes", total)`, whose `advance(label)` moves the bar one step
(or prints one line when stderr is not a terminal).
"""

from __future__ import annotations

import math
import sys
import time
from contextlib import contextmanager

PLAIN_EVERY_STEP = 50
"""Counted steps up to which a plain log gets one line per step."""


class Progress:
    """Progress reporting for one command (module docstring)."""

    def __init__(self, quiet: bool, stream=None):
        self.quiet = quiet
        self.stream = stream or sys.stderr
        self.start = time.perf_counter()
        self.live = None  # the rich Progress while a task is shown
        self.interactive = not quiet and _is_terminal(self.stream)

    def __call__(self, message: str) -> None:
        if self.quiet:
            return
        if self.live is not None:
            self.live.console.print(f"[dim]{self._stamp()}[/dim] {message}", markup=True,
                                    highlight=False)
        else:
            print(f"{self._stamp()} {message}", file=self.stream, flush=True)

    def _stamp(self) -> str:
        return f"[{time.perf_counter() - self.start:6.2f}s]"

    @contextmanager
    def task(self, description: str, total: int, first: str = ""):
        """A counted step; yields `advance(label)`. On a terminal the bar shows the label
        of the last call (`first` before it), e.g. what runs next."""
        if not self.interactive:
            yield self._plain_advance(description, total)
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TextColumn,
            TimeElapsedColumn,
        )
        from rich.progress import Progress as RichProgress

        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), TextColumn("[dim]{task.fields[label]}"))
        bar = RichProgress(*columns, console=Console(file=self.stream), transient=True)
        handle = bar.add_task(description, total=total, label=first)
        self.live = bar
        with bar:
            try:
                yield lambda label="": bar.update(handle, advance=1, label=label)
            finally:
                self.live = None
        self(f"{description}: {bar.tasks[0].completed:.0f}/{total} done")

    def _plain_advance(self, description: str, total: int):
        """One line per step for a few steps (passes), about one per tenth for many (the
        nodes of a big model), so a log stays readable."""
        done = 0
        every = 1 if total <= PLAIN_EVERY_STEP else math.ceil(total / 10)

        def advance(label: str = "") -> None:
            nonlocal done
            done += 1
            if done % every == 0 or done == total:
                self(f"{description} {done}/{total}{': ' + label if label else ''}")

        return advance


def _is_terminal(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
