"""Reading and writing tx8be IR text.

`parse_module` never hangs and never overflows the Python stack, whatever the text: before
xDSL sees it, `check_ir_text` scans it once, in time linear in its length, and rejects
what would make xDSL's parser misbehave:

- an unterminated string literal (or one with a newline or an invalid escape in it):
  xDSL's lexer matches string literals with a regular expression whose nested repetition
  backtracks exponentially when no closing quote follows, so a file cut inside a
  `dense<"0x...` literal took minutes for 40 characters;
- brackets nested deeper than `MAX_NESTING` (xDSL's recursive-descent parser and printer
  would overflow the Python stack).

Every problem is an `IRTextError` (a `Tx8Error`) with the file name, line and column.
Literals that pass the scan match xDSL's regular expression on its first, greedy try.

String attributes holding non-ASCII text are printed with byte escapes and read back by
xDSL as bytes attributes; `parse_module` turns those that are UTF-8 back into text, so
names like `tx8c.name = "größe"` round-trip.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from io import StringIO
from pathlib import Path

from xdsl.dialects.builtin import ArrayAttr, BytesAttr, DictionaryAttr, ModuleOp, StringAttr
from xdsl.ir import Attribute
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException, ParseError

from tx8c.dialect import make_context
from tx8c.errors import Tx8Error, require_file

MAX_NESTING = 64
"""Deepest bracket nesting ((), [], {}, <>) accepted. Real modules stay below 16; xDSL
overflows the Python stack at about 140 nested attribute brackets."""

_OPENERS = "([{<"
_CLOSERS = {")": "(", "]": "[", "}": "{", ">": "<"}
# What the scan stops at: a comment, a string, a bracket, or an arrow (`->`, whose `>`
# closes nothing).
_SCAN_STOP = re.compile(r'//|"|->|[()\[\]{}<>]')
# The body of a string literal up to the next quote, backslash or forbidden character
# (xDSL's lexer refuses \n, \v and \f inside a string literal).
_STRING_RUN = re.compile(r'[^"\\\n\v\f]*')
_VALID_ESCAPE = re.compile(r'\\(?:["nt\\]|[0-9A-Fa-f]{2})')


class IRTextError(Tx8Error):
    """IR text that cannot be parsed: the message gives file, line and column."""


def _position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, column


def _error(text: str, name: str, offset: int, message: str) -> IRTextError:
    line, column = _position(text, offset)
    return IRTextError(f"{name}:{line}:{column}: {message}")


def _scan_string(text: str, name: str, start: int) -> int:
    """The offset just past the string literal that opens at `start` (a quote)."""
    pos = start + 1
    while True:
        pos = _STRING_RUN.match(text, pos).end()
        if pos == len(text):
            raise _error(
                text, name, start,
                "this string literal is not closed before the end of the file; the file "
                "may be truncated",
            )
        char = text[pos]
        if char == '"':
            return pos + 1
        if char == "\\":
            escape = _VALID_ESCAPE.match(text, pos)
            if escape is None:
                raise _error(
                    text, name, pos,
                    "invalid escape in a string literal (valid: \\n, \\t, \\\\, \\\" and "
                    "two hex digits)",
                )
            pos = escape.end()
            continue
        raise _error(
            text, name, start,
            "this string literal is not closed on its line (a string literal cannot hold "
            "a line break); the file may be truncated",
        )


def check_ir_text(text: str, name: str = "<string>") -> None:
    """Reject, in linear time, text on which xDSL's parser would hang or overflow the
    stack (module docstring). Other syntax errors are left to the parser."""
    stack: list[int] = []
    deepest = 0
    pos = 0
    while (found := _SCAN_STOP.search(text, pos)) is not None:
        token, at = found.group(), found.start()
        if token == "//":
            end = text.find("\n", at)
            pos = len(text) if end < 0 else end + 1
            continue
        if token == '"':
            pos = _scan_string(text, name, at)
            continue
        pos = found.end()
        if token == "->":
            continue
        if token in _OPENERS:
            stack.append(at)
            deepest = max(deepest, len(stack))
            if deepest > MAX_NESTING:
                raise _error(
                    text, name, at,
                    f"brackets are nested more than {MAX_NESTING} deep; tx8c does not read "
                    "IR nested this deeply",
                )
        elif stack and text[stack[-1]] == _CLOSERS[token]:
            stack.pop()
        # an unbalanced closer is left to the parser, which reports it in context


def read_ir_file(path: str | Path) -> str:
    """The text of an IR file; a clear error for a missing file, a directory, or bytes
    that are not UTF-8."""
    path = Path(path)
    require_file(path, IRTextError, "input file", "a .mlir file")
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        text = data[: e.start].decode("utf-8")
        line, column = _position(text, len(text))
        raise IRTextError(
            f"{path}:{line}:{column}: the file is not UTF-8 text (byte 0x{data[e.start]:02X}); "
            "tx8c reads IR as printed by tx8c or tx8c-opt. Is it a binary file?"
        ) from None


_TENSOR_TYPE_TEXT = re.compile(r"tensor<[^<>(){}\[\]\"]*>")
"""The whole text of a tensor type without nested brackets (`tensor<1x128x768xf32>`)."""


class _Parser(Parser):
    """xDSL's parser, reading each distinct tensor type's text once.

    A compiled module writes the same few dozen tensor types thousands of times, and
    xDSL lexes a shape such as `1x128x768xf32` character by character (~20 % of reading
    BERT-base's model.mlir). The first occurrence of a type's text is parsed as usual;
    later occurrences of the same text get the same (immutable) type object and the
    parser moves past it."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._types: dict[str, Attribute] = {}

    def parse_optional_type(self):
        start = self.pos
        found = _TENSOR_TYPE_TEXT.match(self.lexer.input.content, start)
        if found is None:
            return super().parse_optional_type()
        known = self._types.get(found.group())
        if known is not None:
            self._resume_from(found.end())
            return known
        parsed = super().parse_optional_type()
        if parsed is not None and not self.lexer.input.content[found.end():self.pos].strip():
            self._types[found.group()] = parsed
        return parsed


def parse_module(text: str, name: str = "<string>") -> ModuleOp:
    """Parse IR text into a module.

    Every failure is an `IRTextError` naming file, line and column: text the linear
    pre-scan rejects, text too deeply nested for the parser, and xDSL's parse errors
    (with the offending line marked).
    """
    check_ir_text(text, name)
    try:
        return parse_guarded(_Parser(make_context(), text, name).parse_module, name)
    except ParseError as e:
        raise IRTextError(parse_error_text(e)) from None


def parse_guarded(parse: Callable[[], ModuleOp], name: str) -> ModuleOp:
    """`parse()` with Python's recursion limit turned into a clear error, and the string
    attributes decoded (the one way every reader of IR text parses)."""
    try:
        module = parse()
    except RecursionError:
        raise IRTextError(
            f"{name}: the IR is nested too deeply to parse (more regions or attributes "
            "inside one another than tx8c reads)."
        ) from None
    decode_string_attributes(module)
    return module


def verify_module(module: ModuleOp, name: str = "<string>") -> None:
    """Verify every op (and that every tensor shape is static: tx8c compiles static
    graphs); an `IRTextError` naming the op otherwise."""
    check_static_shapes(module, name)
    try:
        module.verify()
    except DiagnosticException as e:  # xDSL's VerifyException and tx8be's OpRuleError
        raise IRTextError(f"{name}: the IR does not verify: {e}") from None


def check_static_shapes(module: ModuleOp, name: str = "<string>") -> None:
    """Every tensor in the module has a static shape (the passes and executors need it)."""
    from xdsl.dialects.builtin import TensorType

    for op in module.walk():
        values = [*op.results, *(a for r in op.regions for b in r.blocks for a in b.args)]
        for value in values:
            t = value.type
            if isinstance(t, TensorType) and any(d < 0 for d in t.get_shape()):
                raise IRTextError(
                    f"{name}: '{op.name}' has a value of type {attribute_text(t)} with a "
                    "dynamic dimension "
                    "(?); tx8c works on static shapes only. Give every dimension a size."
                )


def parse_error_text(e: ParseError) -> str:
    """xDSL's parse error as one block: 'file:line:col', the marked source line, and
    what was expected."""
    return str(e).strip("\n")


def decode_string_attributes(module: ModuleOp) -> None:
    """Turn the string literals xDSL parsed as bytes (non-ASCII text) back into text, in the
    attributes and properties of every op (dictionaries and arrays included)."""
    for op in module.walk():
        for table in (op.attributes, op.properties):
            for key, attr in list(table.items()):
                decoded = _decoded(attr)
                if decoded is not attr:
                    table[key] = decoded


def _decoded(attr: Attribute) -> Attribute:
    """`attr` with every UTF-8 BytesAttr inside it a StringAttr; `attr` itself when
    nothing changes."""
    if isinstance(attr, BytesAttr):  # a string literal with non-ASCII characters
        try:
            return StringAttr(attr.data.decode("utf-8"))
        except UnicodeDecodeError:
            return attr
    if isinstance(attr, ArrayAttr):
        items = [_decoded(a) for a in attr.data]
        changed = any(new is not old for new, old in zip(items, attr.data, strict=True))
        return ArrayAttr(items) if changed else attr
    if isinstance(attr, DictionaryAttr):
        entries = {k: _decoded(v) for k, v in attr.data.items()}
        changed = any(entries[k] is not v for k, v in attr.data.items())
        return DictionaryAttr(entries) if changed else attr
    return attr


def attribute_text(attr: Attribute) -> str:
    """An attribute or type as IR text (`tensor<?x3xf32>`)."""
    out = StringIO()
    Printer(out).print_attribute(attr)
    return out.getvalue()


def print_module(module: ModuleOp) -> str:
    out = StringIO()
    Printer(out).print_op(module)
    out.write("\n")
    return out.getvalue()
