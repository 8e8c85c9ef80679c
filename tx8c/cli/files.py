"""Safe output files, shared by every tx8c command.

The promise of the command line: nothing is written unless the whole command succeeds, a
user's file is never overwritten by accident, and the output is exactly where the user
said. This module is the one place that keeps it:

- **Atomic writes.** A file is written to a temporary file in its target directory and
  renamed over the target only when complete: a failure leaves nothing new behind and the
  old file unchanged. `OutputDir` does the same for a directory of outputs (`tx8c
  compile -o OUT/`): everything is staged first and moved into place at `commit()`.
- **Inputs are never outputs.** Every writer takes the command's input files and refuses
  a target that is one of them (the same file by any path or link).
- **Exact paths.** `write_npz` writes the path it is given (numpy's `savez` would append
  `.npz`), with any array names (numpy's would clash with `file` or `allow_pickle`).
- **Sub-directories are replaced whole.** A staged sub-directory (compile's `stages/`)
  replaces the old one, so stage dumps of an earlier run are never mixed with new ones;
  an old sub-directory holding files tx8c would not have written is left alone and the
  command fails before writing anything.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import threading
import zipfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import BinaryIO

import numpy as np

from tx8c.errors import Tx8Error

TEMP_PREFIX = ".tx8c-tmp-"


class OutputError(Tx8Error):
    """An output path tx8c must not or cannot write."""


# --------------------------------------------------------------------------------------
# Checks
# --------------------------------------------------------------------------------------


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def refuse_inputs(target: Path, inputs: Iterable[str | Path], what: str = "output") -> None:
    """Fail when `target` is one of the command's input files."""
    for source in inputs:
        if _same_file(Path(target), Path(source)):
            raise OutputError(
                f"the {what} '{target}' is the input '{source}'; tx8c never overwrites its "
                "inputs. Give another path with -o."
            )


def check_output_file(target: Path, inputs: Iterable[str | Path]) -> None:
    """A file path that may be written: not a directory, not an input."""
    if target.is_dir():
        raise OutputError(f"the output '{target}' is a directory; give a file name with -o.")
    refuse_inputs(target, inputs)


# --------------------------------------------------------------------------------------
# Single files
# --------------------------------------------------------------------------------------


def _file_mode() -> int:
    """The mode a new file gets under the process umask (temporary files are 0600)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _dir_mode() -> int:
    """The mode a new directory gets under the process umask (mkdtemp makes 0700)."""
    return (_file_mode() & 0o666) | ((_file_mode() & 0o444) >> 2)


def _make_parents(directory: Path) -> list[Path]:
    """Create `directory` and missing parents; the ones created, outermost first."""
    created = []
    for parent in reversed([directory, *directory.parents]):
        if not parent.exists():
            parent.mkdir()
            created.append(parent)
    return created


def _remove_created(created: list[Path]) -> None:
    for directory in reversed(created):
        try:
            directory.rmdir()
        except OSError:
            pass


def _atomic_write(target: Path, write) -> None:
    """Run `write(file)` on a temporary file next to `target`, then rename it over
    `target`; on any failure remove what was created."""
    created = _make_parents(target.parent)
    fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.chmod(tmp, _file_mode())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        _remove_created(created)
        raise


def write_file(target: str | Path, data: str | bytes, inputs: Iterable[str | Path] = ()) -> None:
    """Write `data` (text is UTF-8) to exactly `target`, atomically."""
    target = Path(target)
    check_output_file(target, inputs)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    _atomic_write(target, lambda f: f.write(payload))


def write_npz_to(f, arrays: Mapping[str, np.ndarray]) -> None:
    """An .npz archive (what np.load reads) of `arrays` into the binary file `f`; any
    names, no pickles."""
    with zipfile.ZipFile(f, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True) as z:
        for name, array in arrays.items():
            with z.open(f"{name}.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asanyarray(array), allow_pickle=False)


def write_npz(target: str | Path, arrays: Mapping[str, np.ndarray],
              inputs: Iterable[str | Path] = ()) -> None:
    """Write `arrays` as an .npz archive to exactly `target` (no `.npz` appended),
    atomically."""
    target = Path(target)
    check_output_file(target, inputs)
    _atomic_write(target, lambda f: write_npz_to(f, arrays))


# --------------------------------------------------------------------------------------
# A directory of outputs
# --------------------------------------------------------------------------------------


class OutputDir:
    """Outputs staged in memory and written into a directory together on `commit()`.

    `planned` names the top-level files the command will write, so `check()` can refuse
    an input among them before the work starts. `subdirs` maps each sub-directory the
    command owns (e.g. "stages") to the pattern of the file names it writes there; such a
    sub-directory is replaced whole at commit (and removed when this run writes nothing
    into it), but only if every file in the old one matches the pattern.

    `write_ahead()` writes the files added so far into the staging directory in a
    background thread while the command goes on; `discard()` (the command failed) waits
    for it and removes everything staged.
    """

    def __init__(self, path: str | Path, inputs: Iterable[str | Path] = (),
                 subdirs: Mapping[str, str] | None = None, planned: Iterable[str] = ()):
        self.path = Path(path)
        self.planned = list(planned)
        self.inputs = [Path(p) for p in inputs]
        self.subdirs = {name: re.compile(pattern) for name, pattern in (subdirs or {}).items()}
        self.files: dict[str, str | bytes | Callable[[BinaryIO], None]] = {}
        self._staging: Path | None = None
        self._new = False  # the output directory did not exist when staging began
        self._created: list[Path] = []  # parent directories made for the staging
        self._written = 0  # files staged so far (in the order they were added)
        self._ahead: threading.Thread | None = None
        self._ahead_error: BaseException | None = None

    def add(self, relative: str, data: str | bytes | Callable[[BinaryIO], None]) -> None:
        """Stage a file: text (UTF-8), bytes, or a writer called with the open binary
        file (for large outputs made piece by piece). Files are written in the order they
        were added, so a writer may use what an earlier one computed."""
        self.files[relative] = data

    # -- checks ----------------------------------------------------------------------
    def check(self) -> None:
        """Everything that can be checked before the work is done: call it early (the
        files named in `planned` at construction are checked against the inputs too)."""
        if self.path.exists() and not self.path.is_dir():
            raise OutputError(
                f"the output '{self.path}' exists and is not a directory; give a directory "
                "with -o."
            )
        for relative in [*self.planned, *self.files]:
            refuse_inputs(self.path / relative, self.inputs)
        for source in self.inputs:
            for name in self.subdirs:
                if source.exists() and _inside(source, self.path / name):
                    raise OutputError(
                        f"the input '{source}' is inside '{self.path / name}', which tx8c "
                        "replaces on every run; move it or give another directory with -o."
                    )
        for name, pattern in self.subdirs.items():
            self._check_subdir(name, pattern)

    def _check_subdir(self, name: str, pattern: re.Pattern) -> None:
        old = self.path / name
        if not old.exists():
            return
        if not old.is_dir():
            raise OutputError(
                f"'{old}' exists and is not a directory; tx8c writes its {name} there. "
                "Move it or give another output directory with -o."
            )
        foreign = sorted(p.name for p in old.iterdir() if not pattern.fullmatch(p.name))
        if foreign:
            shown = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
            raise OutputError(
                f"'{old}' holds files tx8c did not write ({shown}); tx8c replaces that "
                "directory on every run. Move them or give another output directory with -o."
            )

    # -- write ahead -----------------------------------------------------------------
    def write_ahead(self) -> None:
        """Start writing the files added so far into the staging directory, in a
        background thread, while the command goes on (tx8c compile: consts.bin, hundreds
        of megabytes, while it lowers and simulates); `commit` waits for it, `discard`
        removes what it wrote. Files added later are written at `commit`."""
        self._join_ahead()
        self._staging_dir()
        files = self._unwritten()  # taken here: the main thread goes on adding files
        self._ahead = threading.Thread(target=self._write_ahead, args=(files,), daemon=True,
                                       name="tx8c-write-ahead")
        self._ahead.start()

    def _write_ahead(self, files) -> None:
        try:
            self._stage(files)
        except BaseException as e:  # raised again by the main thread, at commit
            self._ahead_error = e

    def _wait_ahead(self) -> BaseException | None:
        """Wait for a write ahead; what it raised, if anything (taken: asked once)."""
        if self._ahead is not None:
            self._ahead.join()
            self._ahead = None
        error, self._ahead_error = self._ahead_error, None
        return error

    def _join_ahead(self) -> None:
        error = self._wait_ahead()
        if error is not None:
            raise error

    def discard(self) -> None:
        """The command failed: wait for a write ahead, then remove the staging directory
        and the parents made for it (the output directory is left as it was)."""
        self._wait_ahead()  # the command's own error is the one to report
        if self._staging is not None:
            shutil.rmtree(self._staging, ignore_errors=True)
            _remove_created(self._created)
            self._staging, self._created, self._written = None, [], 0

    # -- commit ----------------------------------------------------------------------
    def commit(self) -> None:
        """Write every staged file; on failure nothing new is left and nothing old is
        changed (up to the final renames, each of which is atomic)."""
        try:
            self._join_ahead()
            self.check()
            self._staging_dir()
            self._stage(self._unwritten())
            if self._new:
                os.chmod(self._staging, _dir_mode())
                self._staging.rename(self.path)
                self._staging = None
            else:
                self._move_into_place(self._staging)
            self._created = []  # they hold the output now
        finally:
            self.discard()

    def _staging_dir(self) -> Path:
        """The staging directory (made on first use): beside a new output directory,
        renamed into its place at commit; inside an existing one, its files moved."""
        if self._staging is None:
            self._new = not self.path.exists()
            parent = self.path.parent if self._new else self.path
            self._created = _make_parents(parent)
            self._staging = Path(tempfile.mkdtemp(prefix=TEMP_PREFIX, dir=parent))
        return self._staging

    def _unwritten(self) -> list[tuple[str, str | bytes | Callable[[BinaryIO], None]]]:
        return list(self.files.items())[self._written:]

    def _stage(self, files) -> None:
        """Write `files` (the next ones not written yet) into the staging directory."""
        mode = _file_mode()
        for relative, data in files:
            target = self._staging / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            if callable(data):
                with open(target, "wb") as f:
                    data(f)
            elif isinstance(data, str):
                target.write_text(data, encoding="utf-8")
            else:
                target.write_bytes(data)
            os.chmod(target, mode)
            self._written += 1

    def _move_into_place(self, staging: Path) -> None:
        for name in self.subdirs:  # replace owned sub-directories whole
            old = self.path / name
            if old.exists():
                old.rename(staging / f"{TEMP_PREFIX}old-{name}")
            if (staging / name).exists():
                (staging / name).rename(old)
        for relative in self.files:
            if Path(relative).parts[0] not in self.subdirs:
                os.replace(staging / relative, self.path / relative)


def _inside(path: Path, directory: Path) -> bool:
    try:
        path.resolve().relative_to(directory.resolve())
        return True
    except ValueError:
        return False
