"""What `tx8c compile` does beside its main line: consts.bin written ahead by a thread
(`OutputDir.write_ahead`, removed by `discard` when the command fails) and the cmodel
v2 simulation in a forked child (`tx8c.cli.background.Background`)."""

from __future__ import annotations

import os
from pathlib import Path

import onnx
import pytest

import tx8c.cli.main as cli
from examples.make_models import MODELS
from tx8c.cli.background import Background, BackgroundError
from tx8c.cli.files import TEMP_PREFIX, OutputDir
from tx8c.errors import Tx8Error


def test_the_child_returns_its_value() -> None:
    assert Background("sum", lambda: {"total": sum(range(10))}).result() == {"total": 45}


def test_a_user_error_in_the_child_is_raised_as_it_was() -> None:
    def fails():
        raise Tx8Error("bad model: node n0")

    with pytest.raises(Tx8Error, match="^bad model: node n0$"):
        Background("check", fails).result()


def test_a_bug_in_the_child_is_an_error_with_its_traceback() -> None:
    with pytest.raises(BackgroundError, match="ZeroDivisionError"):
        Background("divide", lambda: 1 // 0).result()


def test_a_child_that_dies_is_an_error_naming_the_work_not_a_hang() -> None:
    with pytest.raises(BackgroundError, match="cmodel v2 simulation.*SIGKILL"):
        Background("cmodel v2 simulation", lambda: os.kill(os.getpid(), 9)).result()


def test_a_cancelled_child_is_reaped() -> None:
    work = Background("sleep", lambda: __import__("time").sleep(60))
    pid = work._pid
    work.cancel()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def _leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name.startswith(TEMP_PREFIX))


def test_files_written_ahead_are_committed_with_the_rest(tmp_path: Path) -> None:
    out = OutputDir(tmp_path / "new" / "out")
    out.add("big.bin", lambda f: f.write(b"x" * 100_000))
    out.add("index.json", "{}")
    out.write_ahead()
    out.add("model.mlir", "module {}")
    out.commit()
    assert (tmp_path / "new" / "out" / "big.bin").read_bytes() == b"x" * 100_000
    assert (tmp_path / "new" / "out" / "model.mlir").read_text() == "module {}"
    assert _leftovers(tmp_path / "new") == []


def test_a_discarded_write_ahead_leaves_nothing(tmp_path: Path) -> None:
    out = OutputDir(tmp_path / "a" / "b" / "out")
    out.add("big.bin", b"y" * 1000)
    out.write_ahead()
    out.discard()
    assert list(tmp_path.iterdir()) == []  # no staging, no parents made for it

    old = tmp_path / "old"
    old.mkdir()
    (old / "model.mlir").write_text("before")
    out = OutputDir(old)
    out.add("model.mlir", "after")
    out.write_ahead()
    out.discard()
    assert sorted(p.name for p in old.iterdir()) == ["model.mlir"]
    assert (old / "model.mlir").read_text() == "before"


def test_an_error_of_the_write_ahead_is_raised_at_commit(tmp_path: Path) -> None:
    def broken(f):
        raise OSError("disk full")

    out = OutputDir(tmp_path / "out")
    out.add("consts.bin", broken)
    out.write_ahead()
    with pytest.raises(OSError, match="disk full"):
        out.commit()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("where", ["lowering", "ddr stage"])
def test_a_compile_failing_after_the_write_ahead_leaves_nothing(tmp_path: Path, monkeypatch,
                                                               where: str) -> None:
    """The write ahead of the constants starts at the end of the constants stage: a
    failure in a later pass or in the lowering removes what it wrote."""
    from tx8c.transforms.ddr.ddr_alloc import DdrAllocPass

    model = tmp_path / "cnn.onnx"
    onnx.save(MODELS["residual_cnn"](), model)

    def fails(*_):
        raise Tx8Error(f"the {where} failed on purpose")

    if where == "lowering":
        monkeypatch.setattr(cli, "_lower", fails)
    else:
        monkeypatch.setattr(DdrAllocPass, "apply", fails)
    assert cli.main(["compile", str(model), "-o", str(tmp_path / "out" / "o"),
                     "--quiet"]) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cnn.onnx"]


def test_consts_bin_is_written_ahead_from_the_end_of_the_constants_stage(
        tmp_path: Path, monkeypatch) -> None:
    """The write ahead of consts.bin starts once the constants stage has run (its
    container is final there), before the DDR stage: it hashes and writes beside the
    grouping and slicing stages. The files are the same."""
    from tx8c.transforms.ddr.ddr_alloc import DdrAllocPass

    model = tmp_path / "cnn.onnx"
    onnx.save(MODELS["residual_cnn"](), model)
    events: list[str] = []
    write_ahead, ddr_alloc = OutputDir.write_ahead, DdrAllocPass.apply
    monkeypatch.setattr(OutputDir, "write_ahead",
                        lambda self: (events.append("write ahead"), write_ahead(self))[1])
    monkeypatch.setattr(DdrAllocPass, "apply", lambda self, ctx, op: (
        events.append("ddr-alloc"), ddr_alloc(self, ctx, op))[1])
    assert cli.main(["compile", str(model), "-o", str(tmp_path / "o"), "--quiet"]) == 0
    assert events == ["write ahead", "ddr-alloc"]
    index = (tmp_path / "o" / "consts.json").read_text()
    assert '"sha256"' in index and (tmp_path / "o" / "consts.bin").stat().st_size > 0
    assert 'tx8c.constants = "consts.json"' in (tmp_path / "o" / "model.mlir").read_text()



def test_a_pass_changing_constants_after_the_write_ahead_is_an_internal_error(
        tmp_path: Path, monkeypatch, capsys) -> None:
    """consts.bin is written from the constants stage's end on the promise that no later
    pass changes the constants; a pass breaking it must fail the compile (exit 2, a tx8c
    bug), never leave a consts.bin that disagrees with the module."""
    from tx8c.const_container import MODULE_ATTR
    from tx8c.transforms.ddr.ddr_alloc import DdrAllocPass

    model = tmp_path / "cnn.onnx"
    onnx.save(MODELS["residual_cnn"](), model)
    ddr_alloc = DdrAllocPass.apply

    def changes_constants(self, ctx, op):
        attr = op.attributes[MODULE_ATTR]
        op.attributes[MODULE_ATTR] = type(attr)(list(attr.data))  # equal, but replaced
        return ddr_alloc(self, ctx, op)

    monkeypatch.setattr(DdrAllocPass, "apply", changes_constants)
    assert cli.main(["compile", str(model), "-o", str(tmp_path / "o"), "--quiet"]) == 2
    assert "changed the module's constants" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cnn.onnx"]
