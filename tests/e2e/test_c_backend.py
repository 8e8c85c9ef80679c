"""The C backend (issue 12, part 4) on the bundled examples: the lowered Program emitted
as C, built with the system compiler and run, equals the cmodel v2 - bit for bit unless
a reduction was split over tiles or time, or a kernel calls a transcendental function
(libm's expf and numpy's differ by an ulp now and then): cosine >= 0.999999 then."""

from __future__ import annotations

import pytest

from examples.make_models import MODELS
from tests.e2e.test_cmodel_v2 import assert_matches, compiled, split_reduction
from tx8c.codegen.c_backend import find_compiler, run_c
from tx8c.sim.cmodel_v2 import resolve_ops, run_program

needs_cc = pytest.mark.skipif(find_compiler() is None, reason="no C compiler found")

TRANSCENDENTAL = {"tx8be.Exp", "tx8be.Log", "tx8be.Sigmoid", "tx8be.Tanh", "tx8be.Softmax",
                  "tx8be.Sin", "tx8be.Cos", "tx8be.Atan", "tx8be.Pow", "tx8be.Erf"}


@needs_cc
@pytest.mark.parametrize("name", sorted(MODELS))
def test_c_program_equals_cmodel_v2(name: str, tmp_path) -> None:
    module, program, container, inputs = compiled(name)
    ops = resolve_ops(program, module)
    got = run_c(program, inputs, container, tmp_path, ops)
    expected, _ = run_program(program, module, inputs, container)
    exact = not split_reduction(program) and not any(
        info.name in TRANSCENDENTAL for info in program.ops)
    assert_matches(expected, got, exact)
    files = {p.name for p in tmp_path.iterdir()}
    assert {"host.c", "Makefile", "tx8c_rt.c", "tx8c_kernels.c"} <= files
    assert any(f.startswith("tile_") for f in files)


def test_compare_skips_the_c_row_without_a_compiler(monkeypatch, tmp_path, capsys) -> None:
    """No C compiler: `tx8c compare`'s C row is SKIPPED with a one-line note and the exit
    code stays 0."""
    import onnx

    import tx8c.codegen.c_backend as c_backend
    from tx8c.cli.main import main

    monkeypatch.setattr(c_backend, "find_compiler", lambda: None)
    path = tmp_path / "m.onnx"
    onnx.save(MODELS["residual_cnn"](), path)
    assert main(["compare", str(path), "--quiet"]) == 0
    table = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(table) if line.startswith("C "))
    assert table[at].split()[-1] == "SKIPPED"
    assert table[at + 1].startswith("  skipped: no C compiler found")


@needs_cc
def test_ops_parse_back_from_the_program_text() -> None:
    """A Program alone is enough to emit C: each op's IR text parses back to an op with
    the same C call as the module's."""
    from tx8c.codegen.emit_c import ops_from_program
    from tx8c.codegen.program import Kernel

    module, program, _, _ = compiled("llama_decoder")
    parsed, ops = ops_from_program(program), resolve_ops(program, module)
    for group in program.groups:
        for tile in group.tiles:
            for ins in tile.instructions:
                if isinstance(ins, Kernel):
                    assert parsed[ins.op].gen_op_code(ins.loops) == \
                        ops[ins.op].gen_op_code(ins.loops)
