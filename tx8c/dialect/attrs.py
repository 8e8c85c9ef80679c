"""Attributes of the tx8be dialect (seed 003, "Attribute").

- enums: `LayoutMode` (mem_layout: Tensor, NTensor, Cx, NCx), `MemScopeMode` (DDR, SPM,
  3DDRAM), `AlignMode` (ALIGN, NALIGN, BOTH, UNKNOWN, seed 000) and `ParallelMode`;
- struct attributes: `ParallelAttr` (`#tx8be.parallel<...>`) and `DevAttr`
  (`#tx8be.dev<...>`) with exactly the fields of seed 003.

Struct attributes print every field as `name = value` in declaration order, so printing,
parsing and printing again gives identical text. Their Python values are read with
`attr.get("field")` or `attr.as_dict()` and built with `Cls.make(**fields)`; missing
fields take the defaults listed in `FIELDS`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, ClassVar

from xdsl.dialects.builtin import ArrayAttr, IntAttr
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, ParametrizedAttribute, SpacedOpaqueSyntaxAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum


class LayoutMode(StrEnum):
    """mem_layout: how a tensor is laid out in memory (seed 003, Tensor Layout)."""

    Tensor = "Tensor"
    NTensor = "NTensor"
    Cx = "Cx"
    NCx = "NCx"


class MemScopeMode(StrEnum):
    """Where a tensor lives (seed 003, MemScopeMode)."""

    DDR = "DDR"
    SPM = "SPM"
    DDRAM3D = "3DDRAM"


class AlignMode(StrEnum):
    """What alignment an op needs of its data (seed 000)."""

    ALIGN = "ALIGN"
    NALIGN = "NALIGN"
    BOTH = "BOTH"
    UNKNOWN = "UNKNOWN"


class ParallelMode(StrEnum):
    """How a tensor is parallelised: none, data parallel, tensor parallel, or both."""

    NONE = "NONE"
    DP = "DP"
    TP = "TP"
    DP_TP = "DP_TP"


@irdl_attr_definition
class LayoutModeAttr(EnumAttribute[LayoutMode], SpacedOpaqueSyntaxAttribute):
    name = "tx8be.layout"


@irdl_attr_definition
class MemScopeModeAttr(EnumAttribute[MemScopeMode], SpacedOpaqueSyntaxAttribute):
    name = "tx8be.mem_scope"


@irdl_attr_definition
class AlignModeAttr(EnumAttribute[AlignMode], SpacedOpaqueSyntaxAttribute):
    name = "tx8be.align"


@irdl_attr_definition
class ParallelModeAttr(EnumAttribute[ParallelMode], SpacedOpaqueSyntaxAttribute):
    name = "tx8be.parallel_mode"


# --------------------------------------------------------------------------------------
# Struct attributes
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Field:
    """One field of a struct attribute: its name, kind and default Python value.

    Kinds: "int" (with an inclusive [lo, hi] range), "bool", "ints" (a list of ints) or an
    enum class.
    """

    name: str
    kind: Any
    default: Any
    lo: int | None = None
    hi: int | None = None


I32 = (-(2**31), 2**31 - 1)
I64 = (-(2**63), 2**63 - 1)
U64 = (0, 2**64 - 1)


def _int_field(name: str, bounds: tuple[int, int], default: int = 0) -> Field:
    return Field(name, "int", default, bounds[0], bounds[1])


class StructAttr(ParametrizedAttribute):
    """Mixin: a parametrized attribute whose parameters are named, typed fields."""

    FIELDS: ClassVar[tuple[Field, ...]]

    # -- building and reading ----------------------------------------------------------
    @classmethod
    def make(cls, **values: Any) -> StructAttr:
        unknown = set(values) - {f.name for f in cls.FIELDS}
        if unknown:
            raise ValueError(f"{cls.name} has no field(s) {sorted(unknown)}")
        params = [
            _to_attr(f, values.get(f.name, f.default)) for f in cls.FIELDS
        ]
        return cls(*params)

    def get(self, field_name: str) -> Any:
        for f, p in zip(self.FIELDS, self.parameters, strict=True):
            if f.name == field_name:
                return _from_attr(f, p)
        raise KeyError(field_name)

    def as_dict(self) -> dict[str, Any]:
        return {
            f.name: _from_attr(f, p)
            for f, p in zip(self.FIELDS, self.parameters, strict=True)
        }

    def replace(self, **values: Any) -> StructAttr:
        merged = self.as_dict()
        merged.update(values)
        return type(self).make(**merged)

    # -- verification --------------------------------------------------------------------
    def verify(self) -> None:
        for f, p in zip(self.FIELDS, self.parameters, strict=True):
            value = _from_attr(f, p)
            if f.kind == "int" and not (f.lo <= value <= f.hi):
                raise VerifyException(
                    f"{self.name}: field '{f.name}' = {value} is out of range "
                    f"[{f.lo}, {f.hi}]"
                )
            if f.kind == "bool" and value not in (True, False):
                raise VerifyException(f"{self.name}: field '{f.name}' must be a bool")

    # -- syntax: <name = value, ...> -----------------------------------------------------
    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        fast = _parse_printed(cls, parser)
        if fast is not None:
            return fast
        values: dict[str, Any] = {}
        with parser.in_angle_brackets():
            for i, f in enumerate(cls.FIELDS):
                if i:
                    parser.parse_punctuation(",")
                parser.parse_keyword(f.name, f" in {cls.name} (fields in this order)")
                parser.parse_punctuation("=")
                values[f.name] = _parse_value(parser, f)
        return [_to_attr(f, values[f.name]) for f in cls.FIELDS]

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            for i, (f, p) in enumerate(zip(self.FIELDS, self.parameters, strict=True)):
                if i:
                    printer.print_string(", ")
                printer.print_string(f"{f.name} = ")
                _print_value(printer, f, _from_attr(f, p))


# -- reading the printed form in one regular-expression match ------------------------
# xDSL's lexer takes ~30 us per token, and these attributes (dev_info, tile_parallel on
# every op) are most of the tokens of a compiled model.mlir: reading BERT-base's took
# 1.8 s of CPU, and `tx8c run` should load a model in under 2 s (issue 9). The exact text
# `print_parameters` writes (fields in order, decimal ints, true/false, bare or simply
# quoted enum names) is matched at once; anything else (other spacing is fine, but hex,
# escapes, a wrong field) goes the token-by-token way, which also gives the errors.

_PRINTED_VALUE = {
    "int": r"(-?\d+)",
    "bool": r"(true|false)",
    "ints": r"\[\s*((?:-?\d+(?:\s*,\s*-?\d+)*)?)\s*\]",
}
_PRINTED_ENUM = r'([A-Za-z_][\w$.]*|"[^"\\\n]*")'


@cache
def _printed_pattern(cls: type[StructAttr]) -> re.Pattern[str]:
    fields = r"\s*,\s*".join(rf"{f.name}\s*=\s*{_PRINTED_VALUE.get(f.kind, _PRINTED_ENUM)}"
                              for f in cls.FIELDS)
    return re.compile(rf"<\s*{fields}\s*>")


def _printed_value(f: Field, text: str) -> Any:
    if f.kind == "int":
        return int(text)
    if f.kind == "bool":
        return text == "true"
    if f.kind == "ints":
        return [int(v) for v in text.split(",")] if text.strip() else []
    return f.kind(text.strip('"'))  # ValueError for a name the enum does not have


def _parse_printed(cls: type[StructAttr], parser: AttrParser) -> list[Attribute] | None:
    """The parameters read in one match of the printed form at the parser's position
    (the `<`), the parser moved past the `>`; None (nothing consumed) if the text is
    not exactly that form or a value is not valid."""
    start = parser.pos
    match = _printed_pattern(cls).match(parser.lexer.input.content, start)
    if match is None:
        return None
    try:
        params = [_to_attr(f, _printed_value(f, text))
                  for f, text in zip(cls.FIELDS, match.groups(), strict=True)]
    except ValueError:
        return None
    parser._resume_from(match.end())  # xDSL (pinned) moves its lexer to a position
    return params


def _to_attr(f: Field, value: Any) -> Attribute:
    if f.kind == "int":
        return IntAttr(int(value))
    if f.kind == "bool":
        return IntAttr(1 if value else 0)
    if f.kind == "ints":
        return ArrayAttr([IntAttr(int(v)) for v in value])
    return _ENUM_ATTRS[f.kind](f.kind(value))


def _from_attr(f: Field, attr: Attribute) -> Any:
    if f.kind == "int":
        return attr.data
    if f.kind == "bool":
        return bool(attr.data)
    if f.kind == "ints":
        return tuple(a.data for a in attr.data)
    return attr.data


def _parse_value(parser: AttrParser, f: Field) -> Any:
    if f.kind == "int":
        return parser.parse_integer(allow_boolean=False)
    if f.kind == "bool":
        return parser.parse_boolean(f" for field '{f.name}'")
    if f.kind == "ints":
        return parser.parse_comma_separated_list(
            parser.Delimiter.SQUARE, lambda: parser.parse_integer(allow_boolean=False)
        )
    return parser.parse_str_enum(f.kind)


def _print_value(printer: Printer, f: Field, value: Any) -> None:
    if f.kind == "int":
        printer.print_string(str(value))
    elif f.kind == "bool":
        printer.print_string("true" if value else "false")
    elif f.kind == "ints":
        printer.print_string("[" + ", ".join(str(v) for v in value) + "]")
    else:
        printer.print_identifier_or_string_literal(value.value)


_ENUM_ATTRS: dict[type, type[EnumAttribute]] = {
    LayoutMode: LayoutModeAttr,
    MemScopeMode: MemScopeModeAttr,
    AlignMode: AlignModeAttr,
    ParallelMode: ParallelModeAttr,
}


@irdl_attr_definition
class ParallelAttr(StructAttr):
    """Per-dimension data/tensor parallel split of a tensor (seed 003, parallel_attr)."""

    name = "tx8be.parallel"

    parallel: ParallelModeAttr
    is_dp_inner: IntAttr
    dp_dim_x: IntAttr
    dp_dim_y: IntAttr
    dp_dim_z: IntAttr
    tp_dim_x: IntAttr
    tp_dim_y: IntAttr
    tp_dim_z: IntAttr
    sharding_is_given: IntAttr
    shape_spatial_sharding: ArrayAttr[IntAttr]

    FIELDS = (
        Field("parallel", ParallelMode, ParallelMode.NONE),
        Field("is_dp_inner", "bool", False),
        _int_field("dp_dim_x", I32, 1),
        _int_field("dp_dim_y", I32, 1),
        _int_field("dp_dim_z", I32, 1),
        _int_field("tp_dim_x", I32, 1),
        _int_field("tp_dim_y", I32, 1),
        _int_field("tp_dim_z", I32, 1),
        Field("sharding_is_given", "bool", False),
        Field("shape_spatial_sharding", "ints", ()),
    )


@irdl_attr_definition
class DevAttr(StructAttr):
    """Device-side parameters of an op's result (seed 003, dev_attr)."""

    name = "tx8be.dev"

    imm_size: IntAttr
    mem_layout: LayoutModeAttr
    multi_buf_en: IntAttr
    multi_buf_num: IntAttr
    out_shape_buf_idx: ArrayAttr[IntAttr]
    temporal_mem_slice: ArrayAttr[IntAttr]
    source_type: IntAttr
    imm_addr: IntAttr
    mem_addr: ArrayAttr[IntAttr]

    FIELDS = (
        _int_field("imm_size", U64),
        Field("mem_layout", LayoutMode, LayoutMode.Tensor),
        Field("multi_buf_en", "bool", False),
        _int_field("multi_buf_num", I32, 1),
        Field("out_shape_buf_idx", "ints", ()),
        Field("temporal_mem_slice", "ints", ()),
        _int_field("source_type", I32),
        _int_field("imm_addr", I64),
        Field("mem_addr", "ints", ()),
    )


ATTRIBUTES = [
    LayoutModeAttr,
    MemScopeModeAttr,
    AlignModeAttr,
    ParallelModeAttr,
    ParallelAttr,
    DevAttr,
]
