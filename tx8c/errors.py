"""User-facing errors.

Every error a user can cause (bad model, bad IR, bad option) is a `Tx8Error`. The CLI
catches these and prints their message as one paragraph with a non-zero exit code,
never a Python traceback. Messages name the node or op concerned and say what to do.
"""


class Tx8Error(Exception):
    """Base class of every error caused by user input."""

    exit_code = 1


class Tx8VerifyError(Tx8Error):
    """IR that breaks an op's rules (operand counts, ranks, attribute ranges, dtypes)."""


class Tx8ComputeError(Tx8Error):
    """An op cannot be evaluated (no compute, unsupported dtype, bad inputs)."""


class Tx8UnsupportedError(Tx8Error):
    """Input the compiler understands but does not support yet."""


class TargetConfigError(Tx8Error):
    """A `--target-config` file that cannot be read or names a field wrongly."""


def require_file(path, error: type[Tx8Error], what: str, give: str) -> None:
    """Raise `error` unless `path` is an existing regular file: `what` names the file in
    the message ("inputs file", "IR file"), `give` says what to pass instead ("an .npz
    file"). The one check behind every file a user names on the command line."""
    from pathlib import Path

    path = Path(path)
    if path.is_dir():
        raise error(f"{what} '{path}' is a directory; give {give}.")
    if not path.is_file():
        raise error(f"cannot open {what} '{path}': it does not exist; give {give}.")
