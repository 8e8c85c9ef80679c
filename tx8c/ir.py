"""Reading and writing tx8be IR text."""

from __future__ import annotations

from io import StringIO

from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.printer import Printer

from tx8c.dialect import make_context


def parse_module(text: str, name: str = "<string>") -> ModuleOp:
    """Parse IR text into a module (xDSL ParseError on malformed text)."""
    return Parser(make_context(), text, name).parse_module()


def print_module(module: ModuleOp) -> str:
    out = StringIO()
    Printer(out).print_op(module)
    out.write("\n")
    return out.getvalue()
