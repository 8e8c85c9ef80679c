"""tx8be struct and enum attributes: building, reading, verification, text round trip."""

from __future__ import annotations

import pytest
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
