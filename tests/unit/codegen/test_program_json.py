"""program.json's text (`Program.to_json`) is `json.dumps(dataclasses.asdict(program))`
whatever the objects cache beside their fields: `_json_default` hands the encoder an
object's own `__dict__` only when it holds exactly the fields."""

from __future__ import annotations

import json
from dataclasses import asdict

import pytest

from tx8c.codegen.program import (
    DdrTensor,
    Dma,
    GroupProgram,
    Kernel,
    NocReduce,
    Operand,
    Program,
    SpmRef,
    TileProgram,
)
from tx8c.interfaces.sharding import Window


def _program(cached: bool) -> Program:
    window = Window((0, 4), (2, 8))
    if cached:
        assert window.shape == (2, 4)  # cached in the Window's __dict__ beside its fields
        assert len(window.__dict__) > 2
    spm = SpmRef(128, (2, 4), "f32", "Tensor")
    instructions = (
        Dma("ld", "x", window, spm, None, 0),
        Kernel("ne", 0, window, (Operand(spm, window),), (None, Operand(spm, window)),
               None, False, 1),
        NocReduce("noc", 1, spm, spm, 0, 1, combine="add"),
    )
    program = Program(
        config={"tiles": 16, "ratio": 0.5}, ddr_bytes=64,
        tensors=(DdrTensor("x", 0, (2, 8), "f32", "Tensor", 64, "input"),),
        inputs=("x",), outputs=("x",), ops=(),
        groups=(GroupProgram(0, True, (TileProgram(0, instructions),), 10),))
    if cached:
        assert program.tensor("x").offset == 0  # caches an index in the Program's __dict__
    return program


def test_the_json_is_the_dataclass_dump_with_and_without_cached_fields() -> None:
    for cached in (False, True):
        program = _program(cached)
        assert program.to_json() == json.dumps(asdict(program), separators=(",", ":"))


def test_a_non_dataclass_in_a_program_is_an_error() -> None:
    program = _program(False)
    bad = Program(program.config, program.ddr_bytes, program.tensors, program.inputs,
                  program.outputs, program.ops, program.groups, notes=(object(),))
    with pytest.raises(TypeError, match="object in a Program is not JSON data"):
        bad.to_json()
