"""A computation run in a forked child process while the command goes on.

`tx8c compile` simulates the lowered Program (cmodel v2, about a second on BERT-base)
while it prints the IR and the Program's JSON: the simulation reads the Program and the
module, the printing reads them too, and neither changes them, so the child (a fork: it
sees both as they are, nothing is pickled on the way in) and the parent can run on two
cores. The child sends its result back pickled through a pipe.

Errors: an exception in the child is raised again by `result()` (a `Tx8Error` as it
was; any other as a `BackgroundError` holding the child's traceback); a child that dies
without an answer (killed, out of memory) is a `BackgroundError` naming the work and
the signal, never a hang. `cancel()` ends a child whose result is no longer wanted
(the command failed). Where fork is not available the work runs at `start`, in place.
"""

from __future__ import annotations

import os
import pickle
import signal
import traceback
from collections.abc import Callable
from typing import Any

from tx8c.errors import Tx8Error


class BackgroundError(Tx8Error):
    """Work in a child process failed or the child died."""


class Background:
    """`fn()` computed in a forked child; `result()` waits for it."""

    def __init__(self, what: str, fn: Callable[[], Any]):
        self.what = what
        self._pid: int | None = None
        self._read: int | None = None
        self._done: tuple[str, Any] | None = None
        if not hasattr(os, "fork"):
            self._done = _outcome(fn)
            return
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: compute, answer, leave without running the parent's exits
            os.close(read)
            try:
                with os.fdopen(write, "wb") as out:
                    out.write(_pickled(_outcome(fn)))
            finally:
                os._exit(0)
        os.close(write)
        self._pid, self._read = pid, read

    def result(self) -> Any:
        """The value of `fn()`, or its error raised again (see the module docstring)."""
        if self._done is None:
            with os.fdopen(self._read, "rb") as answer:
                data = answer.read()
            self._read = None
            status = self._reap()
            if not data:
                raise BackgroundError(
                    f"the {self.what} ran in a child process that ended without an answer "
                    f"({_status_text(status)}); it may have run out of memory"
                )
            self._done = pickle.loads(data)
        kind, value = self._done
        if kind == "error":
            raise value
        return value

    def cancel(self) -> None:
        """End the child (if it still runs) and reap it."""
        if self._pid is None:
            return
        try:
            os.kill(self._pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        if self._read is not None:
            os.close(self._read)
            self._read = None
        self._reap()

    def _reap(self) -> int:
        _, status = os.waitpid(self._pid, 0)
        self._pid = None
        return status


def _outcome(fn: Callable[[], Any]) -> tuple[str, Any]:
    try:
        return "value", fn()
    except Tx8Error as e:
        return "error", e
    except BaseException:  # a bug: its traceback, as text, in a picklable error
        return "error", BackgroundError(
            f"the work in the child process failed:\n{traceback.format_exc()}")


def _pickled(outcome: tuple[str, Any]) -> bytes:
    try:
        return pickle.dumps(outcome)
    except Exception:  # an error that does not pickle: its message
        kind, value = outcome
        return pickle.dumps(("error", BackgroundError(f"{kind}: {value}")))


def _status_text(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"signal {signal.Signals(os.WTERMSIG(status)).name}"
    return f"exit status {os.WEXITSTATUS(status)}"
