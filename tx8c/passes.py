"""The registry of tx8c passes, by kebab-case name.

Each pass is an xDSL `ModulePass` in its own file under `tx8c/transforms/` (the file named
after the pass: layout-align-to-npu -> layout/layout_align_to_npu.py). The registry finds
them by importing the modules of that package, so a pass exists exactly when its file
does; `tx8c-opt -p` and the pipeline take passes from here.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable
from functools import cache

from xdsl.passes import ModulePass


@cache
def _discover() -> dict[str, type[ModulePass]]:
    import tx8c.transforms as package

    found: dict[str, type[ModulePass]] = {}
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if (issubclass(cls, ModulePass) and cls is not ModulePass
                    and cls.__module__ == module.__name__):
                assert cls.name not in found, f"two passes named {cls.name}"
                found[cls.name] = cls
    return dict(sorted(found.items()))


def available_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Pass name -> a function returning the pass class."""
    return {name: (lambda cls=cls: cls) for name, cls in _discover().items()}


def pass_class(name: str) -> type[ModulePass]:
    return _discover()[name]
