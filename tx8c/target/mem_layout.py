"""Byte-exact memory layouts of tensors on TX8 (seed 003, "Tensor Layout").

A tensor's `mem_layout` (`LayoutMode`: Tensor, NTensor, Cx, NCx) fixes where each element
sits in DDR or SPM. This module computes sizes and byte offsets and converts between numpy
arrays and the bytes the chip holds. Every hardware number (batch alignment, channel blocks,
padding steps) comes from a `TX8Config`.

Rank mapping: a tensor is seen as (N, HW, C).

- The last dimension is C.
- NTensor and NCx (the batched layouts), rank >= 2: N = shape[0] and HW is the product of
  the dimensions between the first and the last (1 for rank 2).
- Tensor and Cx (the seed's "first dimension is 1" layouts), rank >= 2: N = 1 and HW is the
  product of every dimension but the last.
- Rank 1 (any layout): N = 1, HW = 1, C = shape[0]. Rank 0: one element, N = HW = C = 1.

`nhwc_view(shape, layout)` returns this (N, HW, C). Elements keep their row-major order
inside the N and HW parts.

Layouts (addresses are byte offsets from the tensor's start, which the allocator places on
a `batch_align_bytes` boundary):

- Tensor / NTensor: compact, row-major, no padding, no batch alignment.
- Cx / NCx for channel-aligned types, per batch n (the seed's table): the channels are cut
  into Cx = C // B full blocks of B channels followed by the remainder C0 = C - Cx*B, with
  B = `config.channel_block(int8)` (64 for float types, 128 for int8). The batch holds
  first the blocks, block-major (for each block: all HW positions x B channels), then the
  remainder as HW x C0pad, where C0pad is the smallest padding step >= C0 (4/8/16/32 for
  float types, 4/8/16/32/64 for int8; `config.channel_pad_steps(int8)`). Decision: when C0
  is larger than the largest step (33..63 for floats, 65..127 for int8) it is padded to a
  full block of B. When C is at most the largest step, Cx = 0 and this is exactly the
  seed's "NHWC with C padded to 4/8/16/32" case, so one formula covers both rows of the
  table. C0 = 0 gives no remainder part. Batches start on multiples of
  `config.batch_align_bytes` (2048 bits = 256 bytes): batch n starts at n * stride with
  stride = batch bytes rounded up to that alignment.
- Padding bytes (channel padding and the gap before the next batch) are zero when packing
  and ignored when unpacking.

Sizes: `stored_bytes` is the end of the last batch's data (`LayoutPlan.batch_end(N - 1)`):
there is no trailing alignment padding after the last batch. `batch_end(n)` is exclusive (one past
the last byte of batch n's data, padding channels included). It is the size a tensor
occupies in DDR or SPM, channel padding and batch alignment included, and the only size
memory allocation may use; the compact size of a value's elements (its "logical bytes")
is `tx8c.ir_utils.logical_bytes`. `byte_size` is the former name of `stored_bytes`, kept
for the callers that still use it.

Units: the API speaks bytes. The seed's worked example (fp16 2x1x2x131 in NCx: 131 =
2*64 + 3, C0 = 3 padded to 4; batch 0 holds 2*2*64 + 2*4 = 264 elements = 528 bytes)
quotes bit addresses: "batch0 ends at 0x1080 (4224)" is 528 bytes * 8, and "batch1 starts
at 2048*3 = 6144 (0x1800)" is 768 bytes * 8.

Element types: a dtype may be given as a numpy dtype (or scalar type), an xDSL element type
or an IR name (f32, tf32, f16, bf16, f64, i1/bool, i8, ui8, i16, i32, i64; numpy's own
names such as "float32" or "int8" are accepted too, but numpy codes such as "i8" are read
as IR names: i8 is int8). How each is stored:

- f32, tf32 (stored as f32: 4 bytes, TF32 only narrows the arithmetic), f16, bf16: the
  float rows of the seed's table.
- i8: the int8 row. ui8 follows the int8 row too (an 8-bit integer; decision, the seed
  names only int8).
- bool (i1, one byte 0/1), i16, i32, i64, f64: not in the seed's table, so they are stored
  compact in every layout: Cx/NCx give the same bytes as Tensor/NTensor (no channel
  padding, no batch alignment), with N and HW from the rank mapping above.
- Anything else (complex, float8, strings, ...) raises `UnsupportedDTypeError`.

Bytes are little-endian (the element's native little-endian encoding).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import ml_dtypes
import numpy as np
from xdsl.ir import Attribute

from tx8c.dialect.attrs import LayoutMode
from tx8c.errors import Tx8UnsupportedError
from tx8c.target.config import DEFAULT_CONFIG, TX8Config

__all__ = [
    "CHANNEL_ALIGNED",
    "COMPACT",
    "FLOAT",
    "INT8",
    "LayoutPlan",
    "StorageType",
    "UnsupportedDTypeError",
    "address_map",
    "byte_size",
    "element_address",
    "layout_plan",
    "nhwc_view",
    "pack",
    "pack_into",
    "resolve_dtype",
    "resolve_layout",
    "same_bytes",
    "stored_bytes",
    "unpack",
]


class UnsupportedDTypeError(Tx8UnsupportedError, ValueError):
    """A dtype with no TX8 memory layout (also a ValueError)."""


# --------------------------------------------------------------------------------------
# Element types
# --------------------------------------------------------------------------------------

FLOAT = "float"  # the seed's bf16/fp16/fp32/tf32 row
INT8 = "int8"  # the seed's int8 row
COMPACT = "compact"  # not in the seed's table: compact in every layout
CHANNEL_ALIGNED = (FLOAT, INT8)


@dataclass(frozen=True)
class StorageType:
    """How one element type is stored: IR name, numpy storage dtype, table row."""

    name: str
    dtype: np.dtype
    rule: str  # FLOAT, INT8 or COMPACT

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def channel_aligned(self) -> bool:
        return self.rule in CHANNEL_ALIGNED


_STORAGE: dict[str, StorageType] = {
    st.name: st
    for st in (
        StorageType("f32", np.dtype(np.float32), FLOAT),
        StorageType("tf32", np.dtype(np.float32), FLOAT),
        StorageType("f16", np.dtype(np.float16), FLOAT),
        StorageType("bf16", np.dtype(ml_dtypes.bfloat16), FLOAT),
        StorageType("i8", np.dtype(np.int8), INT8),
        StorageType("ui8", np.dtype(np.uint8), INT8),
        StorageType("i1", np.dtype(np.bool_), COMPACT),
        StorageType("i16", np.dtype(np.int16), COMPACT),
        StorageType("i32", np.dtype(np.int32), COMPACT),
        StorageType("i64", np.dtype(np.int64), COMPACT),
        StorageType("f64", np.dtype(np.float64), COMPACT),
    )
}
_ALIASES = {
    "bool": "i1",
    "float32": "f32",
    "float16": "f16",
    "bfloat16": "bf16",
    "float64": "f64",
    "int8": "i8",
    "uint8": "ui8",
    "int16": "i16",
    "int32": "i32",
    "int64": "i64",
}
# numpy (kind, itemsize) -> IR name; bfloat16 is matched by equality first.
_BY_KIND = {
    ("f", 4): "f32",
    ("f", 2): "f16",
    ("f", 8): "f64",
    ("b", 1): "i1",
    ("i", 1): "i8",
    ("u", 1): "ui8",
    ("i", 2): "i16",
    ("i", 4): "i32",
    ("i", 8): "i64",
}
_SUPPORTED = ", ".join(_STORAGE)


def resolve_dtype(dtype: Any) -> StorageType:
    """The `StorageType` of a numpy dtype, xDSL element type, IR name or `StorageType`."""
    if isinstance(dtype, StorageType):
        return dtype
    if isinstance(dtype, str):
        name = _ALIASES.get(dtype, dtype)
        if name in _STORAGE:
            return _STORAGE[name]
        raise UnsupportedDTypeError(
            f"unsupported dtype name {dtype!r}; TX8 mem layouts support {_SUPPORTED}"
        )
    if isinstance(dtype, Attribute):
        from tx8c.dialect.types import to_numpy_dtype

        try:
            dtype = to_numpy_dtype(dtype)
        except ValueError:
            raise UnsupportedDTypeError(
                f"unsupported element type {dtype}; TX8 mem layouts support {_SUPPORTED}"
            ) from None
    try:
        np_dtype = np.dtype(dtype)
    except TypeError:
        raise UnsupportedDTypeError(
            f"{dtype!r} is not a dtype; TX8 mem layouts support {_SUPPORTED}"
        ) from None
    if np_dtype == np.dtype(ml_dtypes.bfloat16):
        return _STORAGE["bf16"]
    name = _BY_KIND.get((np_dtype.kind, np_dtype.itemsize))
    if name is None:
        raise UnsupportedDTypeError(
            f"unsupported dtype {np_dtype}; TX8 mem layouts support {_SUPPORTED}"
        )
    return _STORAGE[name]


def resolve_layout(layout: Any) -> LayoutMode:
    """A `LayoutMode` from itself or its name ("Tensor", "NTensor", "Cx", "NCx")."""
    if isinstance(layout, LayoutMode):
        return layout
    try:
        return LayoutMode(layout)
    except ValueError:
        names = ", ".join(m.value for m in LayoutMode)
        raise ValueError(f"unknown mem layout {layout!r}; expected one of {names}") from None


# --------------------------------------------------------------------------------------
# Shapes and the plan of a layout
# --------------------------------------------------------------------------------------

_BATCHED = (LayoutMode.NTensor, LayoutMode.NCx)
_ALIGNED_LAYOUTS = (LayoutMode.Cx, LayoutMode.NCx)


def _check_shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, int | np.integer) and not isinstance(shape, bool | np.bool_):
        shape = (shape,)
    try:
        dims = tuple(shape)
    except TypeError:
        raise ValueError(f"shape must be a sequence of ints, got {shape!r}") from None
    out = []
    for d in dims:
        if isinstance(d, bool | np.bool_) or not isinstance(d, int | np.integer):
            raise ValueError(f"shape must be a sequence of ints, got {shape!r}")
        if d < 0:
            raise ValueError(f"shape dimensions must be non-negative, got {shape!r}")
        out.append(int(d))
    return tuple(out)


def nhwc_view(shape: Sequence[int], layout: LayoutMode | str) -> tuple[int, int, int]:
    """(N, HW, C) of a shape under a layout's rank mapping (see the module docstring)."""
    dims = _check_shape(shape)
    layout = resolve_layout(layout)
    if not dims:
        return 1, 1, 1
    if len(dims) == 1:
        return 1, 1, dims[0]
    if layout in _BATCHED:
        return dims[0], math.prod(dims[1:-1]), dims[-1]
    return 1, math.prod(dims[:-1]), dims[-1]


@dataclass(frozen=True)
class LayoutPlan:
    """Where the elements of one tensor go: every size and offset in one place.

    Per batch: `cx` blocks of `block` channels (each `hw * block` elements), then the
    remainder, `hw` rows of `c0_padded` elements of which the first `c0` are data. Compact
    storage is the same with `cx = 0` and `c0 = c0_padded = c`.
    """

    shape: tuple[int, ...]
    storage: StorageType
    layout: LayoutMode
    n: int
    hw: int
    c: int
    aligned: bool  # channel padding and batch alignment apply
    block: int  # channel block B (0 when not aligned)
    cx: int  # full channel blocks
    c0: int  # remainder channels
    c0_padded: int
    itemsize: int
    batch_elems: int  # elements of one batch, padding channels included
    batch_bytes: int
    batch_stride: int  # bytes from one batch start to the next
    total_bytes: int

    @property
    def blocks_elems(self) -> int:
        """Elements of the block part of one batch."""
        return self.cx * self.hw * self.block

    def batch_start(self, n: int) -> int:
        if isinstance(n, bool) or not isinstance(n, int | np.integer) or not 0 <= n < self.n:
            raise IndexError(f"batch {n!r} out of range for {self.n} batch(es) of {self.shape}")
        return int(n) * self.batch_stride

    def batch_end(self, n: int) -> int:
        return self.batch_start(n) + self.batch_bytes

    def address(self, n: int, hw: int, c: int) -> int:
        """Byte offset of the element at (n, hw, c) of the (N, HW, C) view."""
        bc = self.cx * self.block
        if c < bc:
            off = (c // self.block) * self.hw * self.block + hw * self.block + c % self.block
        else:
            off = self.blocks_elems + hw * self.c0_padded + (c - bc)
        return n * self.batch_stride + off * self.itemsize


def _pad_channels(c0: int, steps: tuple[int, ...], block: int) -> int:
    if c0 == 0:
        return 0
    for s in steps:
        if s >= c0:
            return s
    return block


def layout_plan(
    shape: Sequence[int],
    dtype: Any,
    layout: LayoutMode | str,
    config: TX8Config = DEFAULT_CONFIG,
) -> LayoutPlan:
    """The `LayoutPlan` of a tensor of `shape` and `dtype` in `layout`.

    Memoised for the plain keys executors pass by the ten thousand (a tuple of ints, a
    dtype name, a layout name): pack/unpack of every SPM buffer asks for its plan, and
    checking the arguments cost more than the copy. Only exact ints and names take the
    cache, so `True` for 1 or a bad name still reach the checks (errors are not cached).
    """
    if (type(shape) is tuple and all(type(d) is int for d in shape)
            and isinstance(dtype, str | StorageType) and isinstance(layout, str | LayoutMode)):
        return _cached_plan(shape, dtype, layout, config)
    return _build_plan(shape, dtype, layout, config)


@lru_cache(maxsize=16384)
def _cached_plan(shape: tuple[int, ...], dtype: Any, layout: Any,
                 config: TX8Config) -> LayoutPlan:
    return _build_plan(shape, dtype, layout, config)


def _build_plan(shape: Sequence[int], dtype: Any, layout: Any,
                config: TX8Config) -> LayoutPlan:
    dims = _check_shape(shape)
    storage = resolve_dtype(dtype)
    layout = resolve_layout(layout)
    n, hw, c = nhwc_view(dims, layout)
    isz = storage.itemsize
    aligned = layout in _ALIGNED_LAYOUTS and storage.channel_aligned
    if aligned:
        int8 = storage.rule == INT8
        block = config.channel_block(int8)
        cx, c0 = divmod(c, block)
        c0p = _pad_channels(c0, config.channel_pad_steps(int8), block)
    else:
        block, cx, c0, c0p = 0, 0, c, c
    batch_elems = cx * hw * block + hw * c0p
    batch_bytes = batch_elems * isz
    if aligned:
        align = config.batch_align_bytes
        stride = -(-batch_bytes // align) * align
    else:
        stride = batch_bytes
    total = (n - 1) * stride + batch_bytes if n > 0 else 0
    return LayoutPlan(
        shape=dims,
        storage=storage,
        layout=layout,
        n=n,
        hw=hw,
        c=c,
        aligned=aligned,
        block=block,
        cx=cx,
        c0=c0,
        c0_padded=c0p,
        itemsize=isz,
        batch_elems=batch_elems,
        batch_bytes=batch_bytes,
        batch_stride=stride,
        total_bytes=total,
    )


# --------------------------------------------------------------------------------------
# Sizes and addresses
# --------------------------------------------------------------------------------------


def stored_bytes(
    shape: Sequence[int],
    dtype: Any,
    layout: LayoutMode | str,
    config: TX8Config = DEFAULT_CONFIG,
) -> int:
    """Bytes a tensor occupies in `layout`: up to the end of its last batch's data, channel
    padding and batch alignment included (0 if empty). SPM and DDR allocation use this
    size, never the compact one."""
    return layout_plan(shape, dtype, layout, config).total_bytes


byte_size = stored_bytes
"""The former name of `stored_bytes` (the tests and the layout passes still use it)."""


def _split_index(index: Any, plan: LayoutPlan) -> tuple[int, int, int]:
    dims = plan.shape
    if isinstance(index, int | np.integer) and not isinstance(index, bool | np.bool_):
        index = (index,)
    idx = tuple(index)
    if len(idx) != len(dims):
        raise IndexError(f"index {idx} has {len(idx)} entries, shape {dims} has {len(dims)}")
    for i, d in zip(idx, dims):
        if isinstance(i, bool | np.bool_) or not isinstance(i, int | np.integer):
            raise IndexError(f"index {idx} must hold ints")
        if not 0 <= i < d:
            raise IndexError(f"index {idx} out of range for shape {dims}")
    idx = tuple(int(i) for i in idx)
    if len(dims) == 0:
        return 0, 0, 0
    if len(dims) == 1:
        return 0, 0, idx[0]
    if plan.layout in _BATCHED:
        mid, mid_dims, n = idx[1:-1], dims[1:-1], idx[0]
    else:
        mid, mid_dims, n = idx[:-1], dims[:-1], 0
    hw = 0
    for i, d in zip(mid, mid_dims):
        hw = hw * d + i
    return n, hw, idx[-1]


def element_address(
    index: Sequence[int],
    shape: Sequence[int],
    dtype: Any,
    layout: LayoutMode | str,
    config: TX8Config = DEFAULT_CONFIG,
) -> int:
    """Byte offset of the element at `index` (one int per dimension, non-negative)."""
    plan = layout_plan(shape, dtype, layout, config)
    return plan.address(*_split_index(index, plan))


def address_map(
    shape: Sequence[int],
    dtype: Any,
    layout: LayoutMode | str,
    config: TX8Config = DEFAULT_CONFIG,
) -> np.ndarray:
    """An int64 array of `shape` holding every element's byte offset (vectorised)."""
    plan = layout_plan(shape, dtype, layout, config)
    flat = np.arange(plan.n * plan.hw * plan.c, dtype=np.int64)
    return _flat_addresses(plan, flat).reshape(plan.shape)


def box_address_map(
    shape: Sequence[int],
    dtype: Any,
    layout: LayoutMode | str,
    start: Sequence[int],
    stop: Sequence[int],
    config: TX8Config = DEFAULT_CONFIG,
) -> np.ndarray:
    """`address_map(shape, ...)[start:stop]` (one [start, stop) per dimension) without
    building the whole map: what a DMA of a window of a large tensor needs."""
    plan = layout_plan(shape, dtype, layout, config)
    flat = np.zeros([b - a for a, b in zip(start, stop, strict=True)], np.int64)
    row = 1
    for axis in reversed(range(len(plan.shape))):
        index = np.arange(start[axis], stop[axis], dtype=np.int64) * row
        flat += index.reshape([-1] + [1] * (len(plan.shape) - 1 - axis))
        row *= plan.shape[axis]
    return _flat_addresses(plan, flat)


def _flat_addresses(plan: LayoutPlan, flat: np.ndarray) -> np.ndarray:
    """Byte offsets of the elements at row-major positions `flat` (the (N, HW, C) view
    flattened is the shape flattened)."""
    per_batch = plan.hw * plan.c
    n, rest = np.divmod(flat, max(1, per_batch))
    hw, c = np.divmod(rest, max(1, plan.c))
    bc = plan.cx * plan.block
    if plan.block:
        in_blocks = (c // plan.block) * plan.hw * plan.block + hw * plan.block + c % plan.block
    else:
        in_blocks = np.zeros_like(c)
    in_tail = plan.blocks_elems + hw * plan.c0_padded + (c - bc)
    off = np.where(c < bc, in_blocks, in_tail)
    return n * plan.batch_stride + off * plan.itemsize


def _same_view_addresses(a: LayoutPlan, b: LayoutPlan) -> bool:
    """Whether two plans of one (N, HW, C) view put every element at the same byte, in
    O(C): `_flat_addresses` is n * batch_stride + f(hw, c) with f affine in hw for each c
    (a block row or a tail row per hw), so the two agree everywhere when they agree at
    hw = 0 and hw = 1 for every c, and at one element of batch 1."""
    c = np.arange(a.c, dtype=np.int64)
    probes = [c] + ([a.c + c] if a.hw > 1 else []) + ([np.array([a.hw * a.c])] if a.n > 1 else [])
    flat = np.concatenate(probes)
    return bool(np.array_equal(_flat_addresses(a, flat), _flat_addresses(b, flat)))


_CHUNK = 1 << 20
"""Elements compared at a time when a reshape is checked (memory stays bounded)."""


def same_bytes(
    source_shape: Sequence[int],
    source_layout: LayoutMode | str,
    result_shape: Sequence[int],
    result_layout: LayoutMode | str,
    dtype: Any,
    reorder: Callable[[np.ndarray], np.ndarray] | None = None,
    config: TX8Config = DEFAULT_CONFIG,
) -> bool:
    """Whether a tensor of `source_shape` stored in `source_layout` is, byte for byte, its
    reordering `reorder(tensor)` (of `result_shape`) stored in `result_layout`.

    `reorder` is the logical map from the source to the result (a transpose, a chain of
    reshapes and transposes, ...; default: a row-major reshape). It holds when both take
    the same number of bytes and every element of the result sits at the byte offset its
    source element sits at (the source's `address_map` carried through `reorder` equals
    the result's): the padding then sits at the same offsets too, so `pack` gives the
    same bytes and reading the source's bytes in the result's layout gives the result.
    This is how the layout stage decides that a Reshape/Transpose is a relabel, and that
    a value needs no conversion between two layouts: from the address functions, for any
    shape. O(elements).
    """
    source = layout_plan(source_shape, dtype, source_layout, config)
    result = layout_plan(result_shape, dtype, result_layout, config)
    if source.total_bytes != result.total_bytes:
        return False
    if math.prod(source.shape) != math.prod(result.shape):
        return False
    if reorder is None and (source.n, source.hw, source.c) == (result.n, result.hw, result.c):
        return _same_view_addresses(source, result)
    total = math.prod(source.shape)
    if reorder is None:  # a row-major reshape: result position r holds source element r
        def origin(flat: np.ndarray) -> np.ndarray:
            return flat
    else:  # each result position's source position (8 bytes an element, not a map's 80)
        moved = reorder(np.arange(total, dtype=np.int64).reshape(source.shape))
        if moved.shape != result.shape:
            return False
        positions = moved.ravel()

        def origin(flat: np.ndarray) -> np.ndarray:
            return positions[flat]
    # compare position by position, in chunks: memory stays bounded
    return all(np.array_equal(_flat_addresses(source, origin(flat)),
                              _flat_addresses(result, flat))
               for start in range(0, total, _CHUNK)
               for flat in [np.arange(start, min(total, start + _CHUNK), dtype=np.int64)])


# --------------------------------------------------------------------------------------
# pack / unpack
# --------------------------------------------------------------------------------------


def _raw_dtype(itemsize: int) -> np.dtype:
    return np.dtype(f"<u{itemsize}")


def _batches(buf: np.ndarray, plan: LayoutPlan) -> tuple[np.ndarray, np.ndarray]:
    """Views of a (N, stride) element buffer: blocks as (N, Cx, HW, B) and the remainder
    as (N, HW, C0pad). Views, never copies (reshape(copy=False) raises otherwise)."""
    n, hw, be = plan.n, plan.hw, plan.blocks_elems
    blocks = np.reshape(buf[:, :be], (n, plan.cx, hw, plan.block), copy=False)
    tail = np.reshape(buf[:, be : be + hw * plan.c0_padded], (n, hw, plan.c0_padded), copy=False)
    return blocks, tail


def pack(
    array: Any,
    layout: LayoutMode | str,
    config: TX8Config = DEFAULT_CONFIG,
    dtype: Any = None,
) -> bytes:
    """The bytes of `array` laid out in `layout` (`stored_bytes` of them; padding is zero).

    The element type is the array's; pass `dtype` to name it explicitly (for example
    "tf32" for a float32 array): it must have the array's storage dtype.
    """
    a = np.asarray(array)
    out = bytearray(byte_size(a.shape, a.dtype if dtype is None else dtype, layout, config))
    pack_into(out, a, layout, config, dtype)
    return bytes(out)


def pack_into(
    out: bytearray | memoryview | np.ndarray,
    array: Any,
    layout: LayoutMode | str,
    config: TX8Config = DEFAULT_CONFIG,
    dtype: Any = None,
) -> int:
    """Write what `pack` returns into the writable buffer `out` (its first `byte_size`
    bytes, padding included; later bytes are untouched) without an intermediate copy;
    returns the bytes written. For building an image of many tensors (consts.bin)."""
    a = np.asarray(array)
    storage = resolve_dtype(a.dtype if dtype is None else dtype)
    if dtype is not None and resolve_dtype(a.dtype).dtype != storage.dtype:
        raise ValueError(
            f"array of dtype {a.dtype} cannot be packed as {storage.name} "
            f"(stored as {storage.dtype}); cast it first"
        )
    plan = layout_plan(a.shape, storage, layout, config)
    target = np.frombuffer(out, dtype=np.uint8) if not isinstance(out, np.ndarray) else out
    target = target.reshape(-1)
    if target.size < plan.total_bytes:
        raise ValueError(f"pack_into needs {plan.total_bytes} bytes, the buffer has "
                         f"{target.size}")
    if plan.total_bytes == 0:
        return 0
    raw_t = _raw_dtype(plan.itemsize)
    if a.dtype.byteorder == ">":
        a = a.astype(a.dtype.newbyteorder("<"))
    raw = np.ascontiguousarray(a).view(raw_t).reshape(plan.n, plan.hw, plan.c)
    flat = target[: plan.total_bytes].view(raw_t)
    # (N, stride) rows over the tensor's bytes; the last row's alignment gap lies past
    # the end and is never touched (only the blocks and the remainder are written)
    stride_elems = plan.batch_stride // plan.itemsize
    buf = np.lib.stride_tricks.as_strided(
        flat, shape=(plan.n, stride_elems), strides=(plan.batch_stride, plan.itemsize),
        writeable=True,
    )
    blocks, tail = _batches(buf, plan)
    bc = plan.cx * plan.block
    if plan.cx:
        src = raw[:, :, :bc].reshape(plan.n, plan.hw, plan.cx, plan.block)
        blocks[...] = src.transpose(0, 2, 1, 3)
    if plan.c0:
        tail[:, :, : plan.c0] = raw[:, :, bc:]
        tail[:, :, plan.c0:] = 0
    data_end = plan.blocks_elems + plan.hw * plan.c0_padded
    if plan.n > 1 and data_end < stride_elems:  # the gaps between batches
        buf[:-1, data_end:] = 0
    return plan.total_bytes


def unpack(
    data: bytes | bytearray | memoryview | np.ndarray,
    shape: Sequence[int],
    dtype: Any,
    layout: LayoutMode | str,
    config: TX8Config = DEFAULT_CONFIG,
) -> np.ndarray:
    """The array stored in `data` (at least `stored_bytes` bytes; later bytes are ignored).

    Returns a new array of `shape` with the storage dtype of `dtype` (float32 for tf32).
    """
    plan = layout_plan(shape, dtype, layout, config)
    if isinstance(data, np.ndarray):
        raw_bytes = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
    else:
        raw_bytes = np.frombuffer(data, dtype=np.uint8)
    if raw_bytes.size < plan.total_bytes:
        raise ValueError(
            f"unpack needs {plan.total_bytes} bytes for {plan.shape} {plan.storage.name} "
            f"in {plan.layout.value}, got {raw_bytes.size}"
        )
    out_dtype = plan.storage.dtype
    if plan.n * plan.hw * plan.c == 0:
        return np.zeros(plan.shape, dtype=out_dtype)
    raw_t = _raw_dtype(plan.itemsize)
    full_len = plan.n * plan.batch_stride
    if raw_bytes.size >= full_len:
        flat = raw_bytes[:full_len]
    else:  # the last batch's alignment gap is absent: pad it
        flat = np.zeros(full_len, dtype=np.uint8)
        flat[: plan.total_bytes] = raw_bytes[: plan.total_bytes]
    buf = flat.view(raw_t).reshape(plan.n, plan.batch_stride // plan.itemsize)
    blocks, tail = _batches(buf, plan)
    result = np.empty((plan.n, plan.hw, plan.c), dtype=raw_t)
    bc = plan.cx * plan.block
    if plan.cx:
        result[:, :, :bc] = blocks.transpose(0, 2, 1, 3).reshape(plan.n, plan.hw, bc)
    if plan.c0:
        result[:, :, bc:] = tail[:, :, : plan.c0]
    return result.view(out_dtype).reshape(plan.shape)
