"""The TX8 target: the machine description (`TX8Config`) and memory layouts.

Every hardware number lives in `tx8c.target.config`; `tx8c.target.mem_layout` turns a
shape, dtype and mem_layout into sizes, addresses and bytes.
"""

from tx8c.target import mem_layout
from tx8c.target.config import DEFAULT_CONFIG, TX8Config
from tx8c.target.mem_layout import *  # noqa: F403 (the layout functions, re-exported)

__all__ = ["DEFAULT_CONFIG", "TX8Config", *mem_layout.__all__]
