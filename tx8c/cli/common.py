"""What the two command-line tools share: argument parsing whose usage errors are user
errors, and one place that turns exceptions into exit codes.

Exit codes (both tools): 0 success; 1 a user error (bad input, bad option, bad usage),
reported as one paragraph on stderr; 2 an internal error, a tx8c bug, reported as one
paragraph that says so (TX8C_DEBUG=1 shows the traceback); `tx8c compare` adds 3 for a
stage below its numeric threshold.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

from tx8c.errors import Tx8Error

EXIT_ERROR = 1
EXIT_INTERNAL = 2


class UsageError(Tx8Error):
    """A malformed command line (argparse's message, then the usage line)."""


class ArgumentParser(argparse.ArgumentParser):
    """argparse whose usage errors are raised as `UsageError` (exit code 1 like every user
    mistake; argparse would exit with 2, which tx8c keeps for its own bugs)."""

    def error(self, message: str):
        raise UsageError(f"{message}\n{self.format_usage().rstrip()}")

    def exit(self, status: int = 0, message: str | None = None):
        if status:
            raise UsageError((message or "").strip())
        super().exit(status, message)


def run_reporting_errors(command: Callable[[], int]) -> int:
    """Run `command`, turning every exception into a one-paragraph message and an exit
    code (module docstring)."""
    try:
        return command()
    except Tx8Error as e:
        print(f"error: {e}", file=sys.stderr)
        return e.exit_code
    except OSError as e:
        where = f": {e.filename}" if e.filename else ""
        print(f"error: {e.strerror or e}{where}", file=sys.stderr)
        return EXIT_ERROR
    except MemoryError:
        print(
            "error: out of memory. The model or its inputs are too large for this machine; "
            "give smaller --input-shapes or use a machine with more memory.",
            file=sys.stderr,
        )
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # a bug in tx8c: say so in one paragraph, keep the details
        if os.environ.get("TX8C_DEBUG"):
            raise
        print(
            f"internal error: {type(e).__name__}: {e}. This is a tx8c bug; please report it "
            "with the input and the command. Set TX8C_DEBUG=1 to see the traceback.",
            file=sys.stderr,
        )
        return EXIT_INTERNAL
