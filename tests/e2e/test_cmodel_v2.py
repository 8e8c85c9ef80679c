"""cmodel v2 (issue 12) on the bundled examples and random graphs: the lowered Program run
on DDR and 16 SPMs as bytes equals the reference executor (bit for bit unless a
reduction was split over tiles or time: cosine >= 0.999999), and the Program round-trips
through JSON."""

from __future__ import annotations

import gzip
import json
from dataclasses import asdict, replace
from functools import cache

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from examples.make_models import MODELS
from tests.random_graphs import build_dag, dag_steps, random_inputs
from tests.unit.group.common import run
from tx8c.codegen.lower import lower_module
from tx8c.codegen.program import Kernel, NocReduce, program_from_dict, program_from_file_bytes
from tx8c.const_container import module_container
from tx8c.frontend.onnx.importer import import_onnx
from tx8c.frontend.onnx.loader import prepare
from tx8c.frontend.onnx.runtime import random_inputs as onnx_inputs
from tx8c.pipeline import (
    CompileOptions,
    constants_spec,
    ddr_spec,
    grouping_spec,
    layout_spec,
    run_pipeline,
    slicing_spec,
)
from tx8c.sim.cmodel_v2 import run_program, simulate
from tx8c.sim.reference import input_names, main_function, run_reference


@cache
def compiled(name: str, spm_resident: int | None = None, overlap: bool = True):
    """(module, program, container, inputs) of a bundled example, compiled once (with
    `spm_resident`'s budget: values between groups kept in SPM, issue 11; None, the
    compiler's default; `overlap`: cross-group overlap, the compiler's default on)."""
    model, _ = prepare(MODELS[name](), None)
    inputs = onnx_inputs(model, seed=0)
    module = import_onnx(model).module
    run_pipeline(module, CompileOptions(verify_each_pass=True, spm_resident=spm_resident,
                                        overlap=overlap))
    container = module_container(module)
    program = lower_module(module, container)
    ordered = [inputs[n] for n in input_names(main_function(module))]
    return module, program, container, ordered


def split_reduction(program) -> bool:
    """The program combines partial sums (arithmetic in another order)."""
    return any(isinstance(i, NocReduce) or (isinstance(i, Kernel) and i.accumulate)
               for g in program.groups for t in g.tiles for i in t.instructions)


def assert_matches(expected, got, exact: bool) -> None:
    for e, g in zip(expected, got, strict=True):
        assert e.shape == g.shape and e.dtype == g.dtype
        if exact:
            assert e.tobytes() == g.tobytes()
        else:
            a, b = e.astype(np.float64).ravel(), g.astype(np.float64).ravel()
            cosine = a @ b / (np.linalg.norm(a) * np.linalg.norm(b) or 1.0)
            assert cosine >= 0.999999


@pytest.mark.parametrize("name", sorted(MODELS))
def test_examples_equal_the_reference(name: str) -> None:
    module, program, container, inputs = compiled(name)
    got, timing = run_program(program, module, inputs, container)
    assert_matches(run_reference(module, inputs), got, not split_reduction(program))
    assert timing.cycles > 0 and timing.instructions == program.instruction_count()
    assert set(timing.group_cycles) <= {g.group_id for g in program.groups}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_program_json_round_trip(name: str) -> None:
    _, program, _, _ = compiled(name)
    assert program_from_dict(json.loads(json.dumps(program.as_dict()))) == program


@pytest.mark.parametrize("name", sorted(MODELS))
def test_program_file_round_trip(name: str) -> None:
    """program.json.gz: gzip of the JSON text, the same bytes every time (no timestamp),
    read back to the same Program; the plain JSON of an older tx8c is read too."""
    _, program, _, _ = compiled(name)
    data = program.to_file_bytes()
    assert data == program.to_file_bytes()
    assert gzip.decompress(data).decode() == program.to_json() + "\n"
    assert program_from_file_bytes(data) == program
    assert program_from_file_bytes(program.to_json().encode()) == program


@pytest.mark.parametrize("name", sorted(MODELS))
def test_program_json_is_the_dataclass_dump(name: str) -> None:
    """as_dict / to_json (written without dataclasses.asdict, for speed) give exactly what
    asdict gives, so program.json's bytes do not depend on which one wrote it."""
    _, program, _, _ = compiled(name)
    assert program.as_dict() == asdict(program)
    assert program.to_json() == json.dumps(asdict(program), separators=(",", ":"))


def test_the_estimate_sums_the_groups_shares_a_share_of_zero_too() -> None:
    """A group whose early loads the previous group's tail hides whole has a share of 0
    in the chained estimate: the simulation's estimate counts it as 0, not as the
    group's cycles alone (which stand in only where no share was recorded)."""
    module, program, _, _ = compiled("residual_cnn")
    hidden = program.groups[-1].group_id
    groups = tuple(replace(g, chain_cycles=0) if g.group_id == hidden
                   else replace(g, chain_cycles=None) if g is program.groups[0] else g
                   for g in program.groups)
    changed = replace(program, groups=groups)
    assert program_from_dict(json.loads(changed.to_json())) == changed
    expected = sum(0 if g.group_id == hidden else g.estimate_cycles if g is groups[0]
                   else g.chain_cycles for g in groups)
    assert groups[-1].estimate_cycles > 0
    assert simulate(changed, module).estimate == expected


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dag_steps(max_size=12))
def test_random_graphs_equal_the_reference(steps) -> None:
    assert_compiled_equals_reference(steps, CompileOptions())


def assert_compiled_equals_reference(steps, options: CompileOptions) -> None:
    """A random graph compiled with `options` runs on cmodel v2 as the reference says."""
    module = run(build_dag(steps, max_ops=16), layout_spec("optimal") + constants_spec()
                 + grouping_spec(options) + slicing_spec(options) + ddr_spec(options))
    inputs = random_inputs(module, seed=len(steps))
    container = module_container(module)
    program = lower_module(module, container)
    got, _ = run_program(program, module, inputs, container)
    assert_matches(run_reference(module, inputs), got, not split_reduction(program))


def test_cli_compiles_and_runs_on_cmodel_v2(tmp_path) -> None:
    from tx8c.cli.main import main

    model = tmp_path / "m.onnx"
    import onnx

    onnx.save(MODELS["residual_cnn"](), model)
    assert main(["compile", str(model), "-o", str(tmp_path / "out"), "--quiet"]) == 0
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["simulation"]["simulated_cycles"] > 0
    assert report["ddr"]["variables_peak"] >= report["ddr"]["variables_lower_bound"] > 0
    loaded = onnx.load(model)
    np.savez(tmp_path / "in.npz", **onnx_inputs(loaded, seed=1))
    outs = {}
    for backend in ("reference", "cmodelv2"):
        target = tmp_path / f"{backend}.npz"
        assert main(["run", str(tmp_path / "out"), "--inputs", str(tmp_path / "in.npz"),
                     "-o", str(target), "--backend", backend, "--quiet"]) == 0
        with np.load(target) as data:
            outs[backend] = {k: data[k] for k in data.files}
    for name, value in outs["reference"].items():
        assert value.tobytes() == outs["cmodelv2"][name].tobytes()
