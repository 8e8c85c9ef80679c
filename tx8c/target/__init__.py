"""The TX8 target: the machine description (`TX8Config`) and memory layouts.

Every hardware number lives in `tx8c.target.config`; `tx8c.target.mem_layout` turns a
shape, dtype and mem_layout into sizes, addresses and bytes.
"""

from tx8c.target.config import DEFAULT_CONFIG, TX8Config
from tx8c.target.mem_layout import (
    LayoutPlan,
    StorageType,
    UnsupportedDTypeError,
    address_map,
    batch_end,
    batch_start,
    byte_size,
    element_address,
    layout_plan,
    nhwc_view,
    pack,
    resolve_dtype,
    resolve_layout,
    stored_bytes,
    unpack,
)

__all__ = [
    "DEFAULT_CONFIG",
    "LayoutPlan",
    "StorageType",
    "TX8Config",
    "UnsupportedDTypeError",
    "address_map",
    "batch_end",
    "batch_start",
    "byte_size",
    "element_address",
    "layout_plan",
    "nhwc_view",
    "pack",
    "resolve_dtype",
    "resolve_layout",
    "stored_bytes",
    "unpack",
]
