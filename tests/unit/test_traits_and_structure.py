"""Op facts are traits of the op classes, and passes do not import other passes."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from xdsl.traits import Commutative, ConstantLike, IsTerminator

from tx8c.dialect import all_ops
from tx8c.interfaces.traits import (
    ByteMove,
    ExecutesRegion,
    MemoryOp,
    ReadsConstContainer,
)

TRANSFORMS = Path(__file__).parents[2] / "tx8c" / "transforms"

EXPECTED = {
    Commutative: {"Add", "Mul", "Max", "Min", "Equal", "And", "Or"},
    ConstantLike: {"Constant"},
    MemoryOp: {"LoadConst", "ChannelNorm", "LoadVar", "StoreVar"},
    ByteMove: {"LoadVar", "StoreVar"},
    ExecutesRegion: {"Group"},
    ReadsConstContainer: {"LoadConst"},
    IsTerminator: {"Yield"},
}


@pytest.mark.parametrize("trait", list(EXPECTED), ids=lambda t: t.__name__)
def test_exactly_these_ops_have_the_trait(trait) -> None:
    having = {op.name.removeprefix("tx8be.") for op in all_ops() if op.has_trait(trait)}
    assert having == EXPECTED[trait]


def test_ops_with_an_executor_trait_have_its_method() -> None:
    for op in all_ops():
        if op.has_trait(ExecutesRegion):
            assert callable(getattr(op, "run_region", None)), op.name
        if op.has_trait(ReadsConstContainer):
            assert callable(getattr(op, "load_const", None)), op.name


def _pass_files() -> list[Path]:
    return sorted(p for p in TRANSFORMS.rglob("*.py") if p.name != "__init__.py")


def _imported_modules(path: Path) -> set[str]:
    modules = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            modules.add(node.module)
        elif isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
    return modules


@pytest.mark.parametrize("path", _pass_files(), ids=lambda p: p.stem)
def test_no_pass_file_imports_another_pass_file(path: Path) -> None:
    passes = {f"tx8c.transforms.{'.'.join(p.relative_to(TRANSFORMS).with_suffix('').parts)}"
              for p in _pass_files()}
    imported = _imported_modules(path) & passes
    assert not imported, f"{path.name} imports pass file(s) {sorted(imported)}"


def test_only_relabel_says_it_moves_no_bytes() -> None:
    """`moves_no_bytes()` (OpLib) is the backend's one question for a relabel: only
    tx8be.Relabel answers yes (a Reshape that moves no bytes becomes one in the layout
    stage)."""
    from tx8c.interfaces.oplib import OpLib

    saying = {op.name.removeprefix("tx8be.") for op in all_ops()
              if getattr(op, "moves_no_bytes", OpLib.moves_no_bytes) is not OpLib.moves_no_bytes}
    assert saying == {"Relabel"}
