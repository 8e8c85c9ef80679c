"""Building and running the emitted C program (`tx8c run --backend c`).

`run_c(program, inputs, constants, work_dir)` emits the C sources of `program` into
`work_dir` (`emit_c`), builds them with the system C compiler (`cc`, `gcc` or `clang`,
the first on PATH; `$CC` overrides), writes `consts.bin` and each input packed in its DDR
tensor's layout, runs the executable and unpacks the outputs from their DDR bytes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from tx8c.codegen.emit_c import EXECUTABLE, CSources, constant_parts, emit_c
from tx8c.codegen.program import Program
from tx8c.errors import Tx8Error
from tx8c.target.config import TX8Config
from tx8c.target.mem_layout import pack, unpack


class CBackendError(Tx8Error):
    """No C compiler, or the emitted program did not build or run."""


def find_compiler() -> str | None:
    """The C compiler to use: `$CC`, else the first of cc, gcc, clang on PATH."""
    env = os.environ.get("CC")
    if env and shutil.which(env):
        return shutil.which(env)
    for name in ("cc", "gcc", "clang"):
        found = shutil.which(name)
        if found:
            return found
    return None


def build(sources: CSources, compiler: str | None = None) -> Path:
    """Compile the sources in their directory; returns the executable."""
    compiler = compiler or find_compiler()
    if compiler is None:
        raise CBackendError(
            "no C compiler found (looked for $CC, cc, gcc, clang on PATH); install one or "
            "run with --backend reference or cmodel")
    done = subprocess.run(sources.compile_command(compiler), cwd=sources.directory,
                          capture_output=True, text=True)
    if done.returncode:
        raise CBackendError(f"the generated C program in {sources.directory} did not build "
                            f"(a tx8c bug):\n{done.stderr.strip()[:4000]}")
    return sources.directory / EXECUTABLE


def _config(program: Program) -> TX8Config:
    return TX8Config(**{k: tuple(v) if isinstance(v, list) else v
                        for k, v in program.config.items()
                        if k in TX8Config.__dataclass_fields__})


def constants_image(program: Program, container) -> bytes:
    """constants.bin: the stored bytes of the program's constants one after another
    (`emit_c.constant_parts`)."""
    parts = constant_parts(program)
    if parts and container is None:
        raise CBackendError("the program reads constants; give its ConstContainer")
    chunks = []
    for name, _, _, size in parts:
        data = bytes(container.stored_bytes(int(name[1:])))
        if len(data) != size:
            raise CBackendError(f"constant {name}: {len(data)} bytes for a slot of {size}")
        chunks.append(data)
    return b"".join(chunks)


def run_c(program: Program, inputs: Sequence[np.ndarray], container, work_dir: str | Path,
          ops: Sequence | None = None) -> list[np.ndarray]:
    """The program's outputs computed by its emitted C program (module docstring).
    `container`: the ConstContainer of the program's constants (None: it has none)."""
    work = Path(work_dir)
    executable = build(emit_c(program, work, ops))
    return execute(program, executable, inputs, container)


def execute(program: Program, executable: Path, inputs: Sequence[np.ndarray],
            container) -> list[np.ndarray]:
    """Run the built C program of `program` in its directory: write constants.bin and
    the inputs packed in their DDR layouts, run, unpack the outputs."""
    work = executable.parent
    config = _config(program)
    (work / "constants.bin").write_bytes(constants_image(program, container))
    if len(inputs) != len(program.inputs):
        raise CBackendError(f"the program takes {len(program.inputs)} inputs, got "
                            f"{len(inputs)}")
    for i, (name, array) in enumerate(zip(program.inputs, inputs, strict=True)):
        tensor = program.tensor(name)
        data = pack(np.asarray(array).reshape(tensor.shape), tensor.layout, config,
                    dtype=tensor.dtype)
        (work / f"input_{i}.bin").write_bytes(data)
    done = subprocess.run([str(executable), str(work)], capture_output=True, text=True)
    if done.returncode:
        raise CBackendError(f"the C program failed (exit {done.returncode}): "
                            f"{done.stderr.strip()[:4000]}")
    outputs = []
    for i, name in enumerate(program.outputs):
        tensor = program.tensor(name)
        data = (work / f"output_{i}.bin").read_bytes()
        outputs.append(unpack(data, tensor.shape, tensor.dtype, tensor.layout, config))
    return outputs
