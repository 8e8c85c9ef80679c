"""The per-group searches in worker processes (`tx8c.slicing.parallel`, group-cost's
`jobs`): the module, plans and statistics are those of one search after another; a
search replaced by a test is what the workers run; a search's error is raised as the
serial loop raises it; a worker that dies is a clear error, not a hang."""

from __future__ import annotations

import json
import os
import time
from dataclasses import replace

import pytest

import tx8c.transforms.slice.group_cost as group_cost
from tests.unit.slicing.test_templates import layered_model
from tx8c.errors import Tx8Error
from tx8c.frontend.onnx.importer import import_onnx
from tx8c.ir import print_module
from tx8c.pipeline import CompileOptions, run_pipeline
from tx8c.slicing.parallel import resolve_jobs, search_all, search_weight
from tx8c.slicing.search import NoPlan, search


def _compiled(jobs: int) -> str:
    module = import_onnx(layered_model()).module
    run_pipeline(module, CompileOptions(jobs=jobs))
    return print_module(module)


def test_two_workers_give_the_module_one_search_after_another_gives() -> None:
    assert _compiled(2) == _compiled(1)


def test_workers_run_the_search_a_test_put_in_place(monkeypatch) -> None:
    """The workers are forked: the replaced `search` is theirs too (it records which
    process ran it in the plan's candidate count)."""
    def tagged(spec, config, options, name=""):
        return replace(search(spec, config, options, name=name), candidates=os.getpid())

    monkeypatch.setattr(group_cost, "search", tagged)
    module = import_onnx(layered_model()).module
    run_pipeline(module, CompileOptions(jobs=2))
    rows = json.loads(module.attributes["tx8c.slicing"].data)["groups"]
    searched = {r["candidates"] for r in rows if r["template_id"] == -1}
    assert os.getpid() not in searched and len(searched) >= 1


def test_the_heaviest_searches_start_first_and_the_plans_come_in_group_order(tmp_path
                                                                            ) -> None:
    """Two workers take the two heaviest groups (`search_weight`) first; the plans come
    back in the groups' order whatever the order they were searched in."""
    from tx8c.slicing.group import group_spec
    from tx8c.slicing.search import SearchOptions
    from tx8c.target.config import DEFAULT_CONFIG
    from tx8c.transforms.slice.group_cost import groups_to_slice

    module = import_onnx(layered_model()).module
    run_pipeline(module, CompileOptions(jobs=1))
    specs = list({s.key: s for s in map(group_spec, groups_to_slice(module))}.values())
    assert len({search_weight(s) for s in specs}) >= 3
    log = tmp_path / "started"

    def logged(spec, config, options, name=""):
        with open(log, "a") as f:
            f.write(name + "\n")
        # Each worker waits until both have logged their first group: a worker done
        # with its first search must not log a third group before the other worker
        # has logged its first one (the log would then not say what was taken first).
        deadline = time.monotonic() + 60
        while len(log.read_text().split()) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        return search(spec, config, options, name=name)

    names = [f"g{i}" for i in range(len(specs))]
    plans = search_all(logged, specs, DEFAULT_CONFIG, SearchOptions(), names, jobs=2)
    heaviest = sorted(range(len(specs)), key=lambda i: -search_weight(specs[i]))[:2]
    assert set(log.read_text().split()[:2]) == {names[i] for i in heaviest}
    assert plans == [search(s, DEFAULT_CONFIG, SearchOptions()) for s in specs]


def test_the_first_failing_group_is_the_error(monkeypatch) -> None:
    def failing(spec, config, options, name=""):
        raise NoPlan(f"{name}: refused")

    monkeypatch.setattr(group_cost, "search", failing)
    module = import_onnx(layered_model()).module
    with pytest.raises(NoPlan, match=r"^group \d+: refused$") as first:
        run_pipeline(module, CompileOptions(jobs=2))
    module = import_onnx(layered_model()).module
    with pytest.raises(NoPlan) as serial:
        run_pipeline(module, CompileOptions(jobs=1))
    assert str(first.value) == str(serial.value)


def test_a_worker_that_dies_is_a_clear_error(monkeypatch) -> None:
    def dying(spec, config, options, name=""):
        os._exit(9)

    monkeypatch.setattr(group_cost, "search", dying)
    module = import_onnx(layered_model()).module
    with pytest.raises(Tx8Error, match="ended its worker process abruptly"):
        run_pipeline(module, CompileOptions(jobs=2))


def test_jobs_zero_is_the_cores_available_and_negative_is_refused() -> None:
    assert resolve_jobs(0) == len(os.sched_getaffinity(0))
    assert resolve_jobs(3) == 3
    with pytest.raises(Tx8Error, match="jobs"):
        CompileOptions(jobs=-1)
