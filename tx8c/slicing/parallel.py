"""The per-group searches of a model run side by side in worker processes.

Each group's search (`tx8c.slicing.search.search`) is a pure function of its group's
plain data, the target and the options, so the distinct groups of a model (after
templates) can be searched in any order and in separate processes with the same
results. `search_all` forks `jobs` workers (the fork start method: they inherit the
groups, the search function and the search's cache as they are in this process, so
nothing but an index goes to a worker and a Plan comes back; a test that replaces the
search function sees its replacement in the workers too). Where fork is not available,
with one job or one group, the searches run here one after another.

The workers take the searches heaviest first (`search_weight`: the elements a group
moves between DDR and SPM, which ranks the searches' times as well as knowing them
would on ResNet-50, BERT-base, Swin and ConvNeXt): in group order a model's heaviest
searches come last - the widest convolutions of a CNN, BERT-base's attention Gemm
(5.7 of its 15 CPU seconds) - and one worker ran alone until they ended.

Errors: the searches' errors are raised as one search after another would raise them,
the first group's first; a worker that dies (killed, out of memory) is a `Tx8Error`
naming the group, never a hang.
"""

from __future__ import annotations

import math
import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from tx8c.errors import Tx8Error
from tx8c.slicing.group import GroupSpec
from tx8c.slicing.plan import Plan
from tx8c.slicing.search import SearchOptions
from tx8c.target.config import TX8Config

Search = Callable[..., Plan]
"""`search(spec, config, options, name=...)`, as `tx8c.slicing.search.search`."""

_WORK: tuple | None = None
"""(search, specs, config, options, names) while `search_all` runs: what the forked
workers read (by index) instead of receiving it pickled."""


def available_cores() -> int:
    """The cores this process may run on (its affinity; the CPU count elsewhere)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def resolve_jobs(jobs: int) -> int:
    """`jobs` processes, 0 meaning as many as `available_cores`."""
    if jobs < 0:
        raise Tx8Error(f"jobs must be >= 0 (0: as many as the cores available), got {jobs}")
    return jobs or available_cores()


def search_all(search: Search, specs: Sequence[GroupSpec], config: TX8Config,
               options: SearchOptions, names: Sequence[str], jobs: int = 0) -> list[Plan]:
    """`[search(spec, config, options, name=name) for spec, name in ...]`, computed by
    up to `jobs` worker processes (0: `available_cores`)."""
    workers = min(resolve_jobs(jobs), len(specs))
    if workers <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        return [search(s, config, options, name=n) for s, n in zip(specs, names, strict=True)]
    global _WORK
    _WORK = (search, list(specs), config, options, list(names))
    try:
        heaviest = sorted(range(len(specs)), key=lambda i: -search_weight(specs[i]))
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")
                                 ) as pool:
            futures = {i: pool.submit(_search_index, i) for i in heaviest}
            return _gathered((futures[i] for i in range(len(specs))), names)
    finally:
        _WORK = None


def search_weight(spec: GroupSpec) -> int:
    """What predicts how long `spec`'s search takes (to start the longest first): the
    elements its loads and stores move whole. Larger tensors give more splits that fit,
    more reduction cuts and longer schedules to estimate. Only the order of the
    searches depends on it, never a plan."""
    loaded = sum(math.prod(n.results[0].shape) for n in spec.nodes if n.kind == "load")
    return loaded + sum(math.prod(spec.value(n.inputs[0]).shape)
                        for n in spec.nodes if n.kind == "store")


def _gathered(futures, names: Sequence[str]) -> list[Plan]:
    """The plans in order (each future's result: its search's error raised in group
    order); a worker's death as a clear error."""
    plans: list[Plan] = []
    try:
        for future in futures:
            plans.append(future.result())
    except BrokenProcessPool:
        raise Tx8Error(
            f"the slicing search of {names[len(plans)]} (or of a group searched beside "
            "it) ended its worker process abruptly (out of memory or killed); compile "
            "again with --jobs 1 to search in the compiling process"
        ) from None
    return plans


def _search_index(i: int) -> Plan:
    """In a worker: the search of the `i`-th group of `_WORK`."""
    assert _WORK is not None, "a search worker runs only inside search_all"
    search, specs, config, options, names = _WORK
    return search(specs[i], config, options, name=names[i])
