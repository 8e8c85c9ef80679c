"""Reading IR text never hangs, never overflows the stack and never tracebacks: every
truncation or corruption of a real module fails fast with a line:column error, and the
pre-scan is linear in the text's length."""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tx8c.ir import MAX_NESTING, IRTextError, check_ir_text, parse_module, print_module


@pytest.fixture(scope="module")
def module_text() -> str:
    from examples.make_models import MODELS
    from tx8c.frontend.onnx.importer import import_onnx

    return print_module(import_onnx(MODELS["residual_cnn"]()).module)


def _parse_fails_cleanly(text: str, limit: float = 5.0) -> None:
    start = time.perf_counter()
    try:
        parse_module(text, "m.mlir")
    except IRTextError as e:
        assert "m.mlir" in str(e)
    assert time.perf_counter() - start < limit


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.floats(0.0, 1.0))
def test_any_truncation_fails_fast_and_cleanly(module_text: str, cut: float) -> None:
    _parse_fails_cleanly(module_text[: int(len(module_text) * cut)])


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(at=st.floats(0.0, 1.0), junk=st.text(alphabet='"\\<>[]{}()\n0xAB-', max_size=8))
def test_any_splice_fails_fast_and_cleanly(module_text: str, at: float, junk: str) -> None:
    i = int(len(module_text) * at)
    _parse_fails_cleanly(module_text[:i] + junk + module_text[i:])


def test_a_cut_inside_a_hex_literal_is_reported_where_the_literal_starts(module_text) -> None:
    start = module_text.index('dense<"0x')
    with pytest.raises(IRTextError, match="not closed before the end of the file"):
        parse_module(module_text[: start + 40], "m.mlir")


def test_the_scan_is_linear() -> None:
    """Double the text, about double the time (a backtracking scan would explode)."""
    def seconds(n: int) -> float:
        text = 'builtin.module attributes {a = "' + "AB" * n
        start = time.perf_counter()
        with pytest.raises(IRTextError):
            check_ir_text(text)
        return time.perf_counter() - start

    small, large = seconds(2_000_000), seconds(4_000_000)
    assert large < 10 * max(small, 1e-3)


def test_nesting_is_capped() -> None:
    deep = "builtin.module attributes {a = " + "[" * (MAX_NESTING + 1) + "]" * (
        MAX_NESTING + 1) + "} {}"
    with pytest.raises(IRTextError, match="nested more than"):
        parse_module(deep)
    ok = "builtin.module attributes {a = " + "[" * 20 + "]" * 20 + "} {}"
    parse_module(ok)


def test_non_ascii_names_round_trip() -> None:
    text = 'builtin.module attributes {tx8c.name = "größe_入力"} {}'
    module = parse_module(text)
    assert module.attributes["tx8c.name"].data == "größe_入力"
    assert parse_module(print_module(module)).attributes["tx8c.name"].data == "größe_入力"


def test_compiled_module_reads_as_xdsls_own_parser_reads_it(monkeypatch) -> None:
    """tx8c's reader (each tensor type's text parsed once, struct attributes matched at
    once) gives what xDSL's parser gives token by token, on a compiled module."""
    from xdsl.parser import Parser

    from examples.make_models import MODELS
    from tx8c.dialect import attrs, make_context
    from tx8c.frontend.onnx.importer import import_onnx
    from tx8c.pipeline import CompileOptions, run_pipeline

    module = import_onnx(MODELS["residual_cnn"]()).module
    run_pipeline(module, CompileOptions())
    text = print_module(module)
    assert "#tx8be.dev<" in text and "tx8c.plan" in text
    ours = parse_module(text)
    monkeypatch.setattr(attrs, "_parse_printed", lambda cls, parser: None)
    theirs = Parser(make_context(), text).parse_module()
    assert ours.is_structurally_equivalent(theirs)
    assert print_module(ours) == text


def test_a_tensor_type_with_an_encoding_is_read_the_usual_way() -> None:
    text = ("func.func @main(%a: tensor<2xf32, \"enc\">) -> tensor<2xf32, \"enc\"> {\n"
            "  func.return %a : tensor<2xf32, \"enc\">\n}\n")
    assert print_module(parse_module(text)).count('tensor<2xf32, "enc">') == 3
