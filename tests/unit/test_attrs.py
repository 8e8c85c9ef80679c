"""tx8be struct and enum attributes: building, reading, verification, text round trip."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.utils.exceptions import VerifyException

from tx8c.dialect.attrs import DevAttr, LayoutMode, ParallelAttr, ParallelMode
from tx8c.ir import parse_module, print_module


def test_dev_attr_defaults_and_fields() -> None:
    dev = DevAttr.make(mem_layout=LayoutMode.NCx, mem_addr=[0, 4096], multi_buf_en=True)
    assert dev.get("mem_layout") == LayoutMode.NCx
    assert dev.get("mem_addr") == (0, 4096)
    assert dev.get("multi_buf_en") is True
    assert dev.get("multi_buf_num") == 1
    assert dev.replace(imm_size=64).get("imm_size") == 64


def test_unknown_field_is_rejected() -> None:
    with pytest.raises(ValueError, match="no field"):
        DevAttr.make(nonsense=1)


def test_out_of_range_field_fails_verification() -> None:
    with pytest.raises(VerifyException, match="multi_buf_num"):
        DevAttr.make(multi_buf_num=2**40)


def test_parallel_attr_round_trips_through_text() -> None:
    par = ParallelAttr.make(parallel=ParallelMode.DP_TP, dp_dim_x=2, tp_dim_y=4,
                            shape_spatial_sharding=[1, 4, 1, 1])
    text = (
        "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
        f"  %0 = tx8be.Relu %a {{tile_parallel = {_attr_text(par)}}} "
        ": (tensor<2xf32>) -> tensor<2xf32>\n"
        "  func.return %0 : tensor<2xf32>\n}\n"
    )
    once = print_module(parse_module(text))
    assert print_module(parse_module(once)) == once
    assert "parallel = DP_TP" in once and "shape_spatial_sharding = [1, 4, 1, 1]" in once


def _attr_text(attr) -> str:
    from io import StringIO

    from xdsl.printer import Printer

    out = StringIO()
    Printer(out).print_attribute(attr)
    return out.getvalue()


# -- reading the printed form at once (attrs._parse_printed) --------------------------


def _relu_with(attr_text: str) -> str:
    return ("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
            f"  %0 = tx8be.Relu %a {{dev_info = {attr_text}}} "
            ": (tensor<2xf32>) -> tensor<2xf32>\n"
            "  func.return %0 : tensor<2xf32>\n}\n")


def _dev_of(text: str):
    return next(op for op in parse_module(text).walk()
                if op.name == "tx8be.Relu").attributes["dev_info"]


def _token_by_token(monkeypatch) -> None:
    from tx8c.dialect import attrs

    monkeypatch.setattr(attrs, "_parse_printed", lambda cls, parser: None)


@settings(max_examples=60, deadline=None)
@given(imm=st.integers(0, 2**40), layout=st.sampled_from(list(LayoutMode)),
       flag=st.booleans(), addr=st.lists(st.integers(-2**31, 2**31), max_size=4))
def test_printed_form_reads_as_token_by_token(imm, layout, flag, addr) -> None:
    """The one-match reading gives the attribute xDSL's token-by-token reading gives."""
    dev = DevAttr.make(imm_size=imm, mem_layout=layout, multi_buf_en=flag, mem_addr=addr)
    text = _relu_with(_attr_text(dev))
    assert _dev_of(text) == dev
    with pytest.MonkeyPatch.context() as patch:
        _token_by_token(patch)
        assert _dev_of(text) == dev


@pytest.mark.parametrize("edit", [
    ("imm_size = 0", "imm_size = 0x10"),  # hex: not the printed form, read the slow way
    ("mem_addr = []", "mem_addr = [ 16 ,32 ]"),  # other spacing is the printed form too
    ("mem_layout = Tensor", 'mem_layout = "Tensor"'),  # a quoted enum name
])
def test_other_spellings_read_the_same_either_way(edit, monkeypatch) -> None:
    text = _relu_with(_attr_text(DevAttr.make())).replace(*edit)
    fast = _dev_of(text)
    _token_by_token(monkeypatch)
    assert _dev_of(text) == fast


@pytest.mark.parametrize("edit, message", [
    (("mem_layout = Tensor", "mem_layout = Tensr"), "Tensr"),
    (("imm_size = 0, mem_layout", "mem_layout"), "imm_size"),  # a field left out
])
def test_wrong_printed_form_gives_the_parsers_error(edit, message) -> None:
    from tx8c.ir import IRTextError

    text = _relu_with(_attr_text(DevAttr.make())).replace(*edit)
    with pytest.raises(IRTextError, match=message):
        parse_module(text)
