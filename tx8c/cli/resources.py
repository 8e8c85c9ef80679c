"""Memory the commands that execute a model need, checked before they allocate it.

Running a module needs at most the sum of the bytes of its inputs and of every op result
(the reference executor frees each value after its last reader, so this is an upper
bound).
`tx8c run` and `tx8c compare` check that sum against the memory the machine has free
before they make inputs or run anything: a model too large for the machine is a clear
error that says how much it needs and what to do, never a MemoryError or the
out-of-memory killer.
"""

from __future__ import annotations

import os

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType

from tx8c.dialect.types import to_numpy_dtype
from tx8c.errors import Tx8Error

GIB = 1024**3


class TooLargeError(Tx8Error):
    """A command would need more memory than the machine has."""


def available_bytes() -> int:
    """Free memory: MemAvailable on Linux, else the physical memory."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 1 << 62


def tensor_bytes(t: TensorType) -> int:
    count = 1
    for d in t.get_shape():
        count *= max(int(d), 0)
    return count * np.dtype(to_numpy_dtype(t.get_element_type())).itemsize


def largest_values(module: ModuleOp) -> tuple[int, list[tuple[int, str]]]:
    """The bytes of every function argument and op result together, and the three
    largest ones (bytes, description)."""
    sizes: list[tuple[int, str]] = []
    for op in module.walk():
        for region in op.regions:
            for block in region.blocks:
                for i, arg in enumerate(block.args):
                    if isinstance(arg.type, TensorType):
                        sizes.append((tensor_bytes(arg.type), f"input #{i} {_type_text(arg.type)}"))
        for result in op.results:
            if isinstance(result.type, TensorType):
                sizes.append((tensor_bytes(result.type), f"{op.name} {_type_text(result.type)}"))
    sizes.sort(key=lambda s: -s[0])
    return sum(s for s, _ in sizes), sizes[:3]


def _type_text(t: TensorType) -> str:
    from tx8c.dialect.types import short_name

    dims = "x".join(str(d) for d in t.get_shape())
    return f"{dims or 'scalar'} {short_name(t.get_element_type())}"


def check_fits(module: ModuleOp, what: str, copies: int = 1) -> None:
    """Fail when running `module` (`copies` times side by side: compare holds the
    onnxruntime results too) needs more memory than is free."""
    total, largest = largest_values(module)
    need = total * copies
    free = available_bytes()
    if need <= free:
        return
    shown = "; ".join(f"{desc}: {size / GIB:.2f} GiB" for size, desc in largest)
    raise TooLargeError(
        f"{what} would need about {need / GIB:.1f} GiB (the model's tensors: {shown}), "
        f"but only {free / GIB:.1f} GiB of memory is free. Give smaller --input-shapes "
        "(a smaller batch or image), or run it on a machine with more memory."
    )
