"""The pipeline's verification policy (`run_pipeline`): after every pass with
`verify_each_pass`, else once after the last pass; broken IR never leaves the pipeline."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import VerifyException

import tx8c.pipeline as pipeline
from tx8c.ir import parse_module
from tx8c.pipeline import CompileOptions, run_pipeline

SOURCE = """
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  func.return %x : tensor<2x3xf32>
}
"""


@dataclass(frozen=True)
class BreakFunction(ModulePass):
    """Gives the function an integer name: the module no longer verifies."""

    name = "break-function"

    def apply(self, ctx, op: ModuleOp) -> None:
        function = next(iter(op.body.block.ops))
        function.properties["sym_name"] = IntegerAttr(1, i64)


@dataclass(frozen=True)
class DoNothing(ModulePass):
    name = "do-nothing"

    def apply(self, ctx, op: ModuleOp) -> None:
        pass


@pytest.fixture
def two_passes(monkeypatch):
    """The pipeline replaced by BreakFunction then DoNothing."""
    monkeypatch.setattr(pipeline, "build_pipeline", lambda options: [BreakFunction(),
                                                                     DoNothing()])
    monkeypatch.setattr(pipeline, "pipeline_stages",
                        lambda options: [("test", ["break-function", "do-nothing"])])


@pytest.mark.parametrize("each, passes_seen", [(True, []), (False, ["break-function"])])
def test_broken_ir_is_caught(two_passes, each: bool, passes_seen: list[str]) -> None:
    """Verifying each pass stops right after the pass that broke the IR; the default
    runs on and stops after the last one, before anything reads the module."""
    seen = []
    module = parse_module(SOURCE)
    with pytest.raises(VerifyException):
        run_pipeline(module, CompileOptions(verify_each_pass=each),
                     lambda name, m: seen.append(name))
    assert seen == passes_seen


@pytest.mark.parametrize("each, calls", [(True, 2), (False, 1)])
def test_verification_count(two_passes, monkeypatch, each: bool, calls: int) -> None:
    monkeypatch.setattr(pipeline, "build_pipeline", lambda options: [DoNothing(),
                                                                     DoNothing()])
    counted = []
    verify = ModuleOp.verify
    monkeypatch.setattr(ModuleOp, "verify", lambda self: counted.append(1) or verify(self))
    run_pipeline(parse_module(SOURCE), CompileOptions(verify_each_pass=each))
    assert len(counted) == calls
