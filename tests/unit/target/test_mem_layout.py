"""Memory layouts (seed 003, "Tensor Layout"): sizes, addresses and byte-exact pack/unpack."""

from __future__ import annotations

import dataclasses
import math
import zlib

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import bf16, f16, f32, i1, i8, i32

from tx8c.dialect.attrs import LayoutMode
from tx8c.errors import Tx8Error
from tx8c.target import mem_layout as ml
from tx8c.target.config import DEFAULT_CONFIG, TX8Config
from tx8c.target.mem_layout import (
    UnsupportedDTypeError,
    address_map,
    byte_size,
    element_address,
    layout_plan,
    nhwc_view,
    pack,
    resolve_dtype,
    unpack,
)

LAYOUTS = ("Tensor", "NTensor", "Cx", "NCx")
FLOATS = ("f32", "tf32", "f16", "bf16")
ALL_DTYPES = ("f32", "tf32", "f16", "bf16", "i8", "ui8", "i1", "i16", "i32", "i64", "f64")
NP_BF16 = np.dtype(ml_dtypes.bfloat16)


def batch_start(n, *layout_args):
    return layout_plan(*layout_args).batch_start(n)


def batch_end(n, *layout_args):
    return layout_plan(*layout_args).batch_end(n)


def _random(shape, dtype, rng) -> np.ndarray:
    """Random values of a storage type (bool as 0/1, everything else arbitrary bytes)."""
    storage = resolve_dtype(dtype)
    if storage.dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    raw = rng.integers(0, 256, size=(*shape, storage.itemsize), dtype=np.uint8)
    return raw.view(storage.dtype).reshape(shape)


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(f"u{a.dtype.itemsize}")


# --------------------------------------------------------------------------------------
# Rank mapping
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "layout", "expected"),
    [
        ((), "Tensor", (1, 1, 1)),
        ((), "NCx", (1, 1, 1)),
        ((7,), "Tensor", (1, 1, 7)),
        ((7,), "NTensor", (1, 1, 7)),
        ((7,), "Cx", (1, 1, 7)),
        ((7,), "NCx", (1, 1, 7)),
        ((3, 7), "Tensor", (1, 3, 7)),
        ((3, 7), "Cx", (1, 3, 7)),
        ((3, 7), "NTensor", (3, 1, 7)),
        ((3, 7), "NCx", (3, 1, 7)),
        ((2, 3, 4, 5), "Tensor", (1, 24, 5)),
        ((2, 3, 4, 5), "Cx", (1, 24, 5)),
        ((2, 3, 4, 5), "NTensor", (2, 12, 5)),
        ((2, 3, 4, 5), "NCx", (2, 12, 5)),
        ((2, 3, 4, 5, 6), "NCx", (2, 60, 6)),
        ((2, 0, 5), "NCx", (2, 0, 5)),
        ((2, 3, 4, 5), LayoutMode.NCx, (2, 12, 5)),
    ],
)
def test_nhwc_view(shape, layout, expected):
    assert nhwc_view(shape, layout) == expected


def test_rank_mapping_drives_addresses():
    # Tensor/Cx: leading dims are HW (one batch); NTensor/NCx: the first dim is N.
    shape = (2, 3, 5)
    assert layout_plan(shape, "f32", "Cx").n == 1
    assert layout_plan(shape, "f32", "NCx").n == 2
    # Cx: HW = 6 rows of C = 5 padded to 8 floats, no batch gap.
    assert element_address((1, 0, 0), shape, "f32", "Cx") == 3 * 8 * 4
    # NCx: batch 1 starts at the next 256-byte boundary after 3 * 8 * 4 = 96 bytes.
    assert element_address((1, 0, 0), shape, "f32", "NCx") == 256
    assert element_address((1, 0, 0), shape, "f32", "Tensor") == 15 * 4
    assert element_address((1, 0, 0), shape, "f32", "NTensor") == 15 * 4


# --------------------------------------------------------------------------------------
# The seed's worked example
# --------------------------------------------------------------------------------------

SEED_SHAPE = (2, 1, 2, 131)


def test_seed_example_fp16_2x1x2x131_ncx():
    plan = layout_plan(SEED_SHAPE, "f16", "NCx")
    assert (plan.n, plan.hw, plan.c) == (2, 2, 131)
    assert (plan.block, plan.cx, plan.c0, plan.c0_padded) == (64, 2, 3, 4)
    assert plan.batch_elems == 2 * 2 * 64 + 2 * 4 == 264
    # Seed addresses are in bits: batch 0 ends at 0x1080, batch 1 starts at 0x1800.
    assert batch_start(0, SEED_SHAPE, "f16", "NCx") == 0
    assert batch_end(0, SEED_SHAPE, "f16", "NCx") == 528
    assert batch_end(0, SEED_SHAPE, "f16", "NCx") * 8 == 0x1080 == 4224
    assert batch_start(1, SEED_SHAPE, "f16", "NCx") == 768
    assert batch_start(1, SEED_SHAPE, "f16", "NCx") * 8 == 0x1800 == 6144 == 2048 * 3
    assert batch_end(1, SEED_SHAPE, "f16", "NCx") == 768 + 528
    assert byte_size(SEED_SHAPE, "f16", "NCx") == 1296
    assert byte_size(SEED_SHAPE, "f16", "NTensor") == 2 * 2 * 131 * 2
    assert batch_start(1, SEED_SHAPE, "f16", "NTensor") == 2 * 131 * 2


def test_seed_example_bytes():
    x = (np.arange(math.prod(SEED_SHAPE)) % 2000 + 1).astype(np.float16).reshape(SEED_SHAPE)
    data = pack(x, "NCx")
    assert len(data) == 1296

    def at(offset: int) -> np.float16:
        return np.frombuffer(data, np.float16, count=1, offset=offset)[0]

    # block 0: hw 0 channels 0..63 then hw 1 channels 0..63
    assert at(0) == x[0, 0, 0, 0] and at(63 * 2) == x[0, 0, 0, 63]
    assert at(64 * 2) == x[0, 0, 1, 0]
    # block 1 (channels 64..127) after 2 * 64 elements
    assert at(128 * 2) == x[0, 0, 0, 64] and at((128 + 64) * 2) == x[0, 0, 1, 64]
    # the remainder: hw rows of C0 = 3 channels padded to 4
    assert at(256 * 2) == x[0, 0, 0, 128] and at(258 * 2) == x[0, 0, 0, 130]
    assert at(260 * 2) == x[0, 0, 1, 128] and at(262 * 2) == x[0, 0, 1, 130]
    assert data[259 * 2 : 260 * 2] == b"\0\0" and data[263 * 2 : 264 * 2] == b"\0\0"
    # gap up to the 2048-bit boundary, then batch 1
    assert data[528:768] == bytes(240)
    assert at(768) == x[1, 0, 0, 0] and at(768 + 262 * 2) == x[1, 0, 1, 130]
    np.testing.assert_array_equal(unpack(data, SEED_SHAPE, "f16", "NCx"), x)


# --------------------------------------------------------------------------------------
# Sizes for each threshold case
# --------------------------------------------------------------------------------------

# C -> (Cx, C0, C0pad, channels stored per HW position), worked out by hand from the table.
FLOAT_CASES = {
    1: (0, 1, 4, 4),
    4: (0, 4, 4, 4),
    5: (0, 5, 8, 8),
    32: (0, 32, 32, 32),
    33: (0, 33, 64, 64),  # C > 32 but under one block: padded to a full 64 block
    64: (1, 0, 0, 64),
    65: (1, 1, 4, 68),
    131: (2, 3, 4, 132),
    200: (3, 8, 8, 200),
}
INT8_CASES = {
    1: (0, 1, 4, 4),
    33: (0, 33, 64, 64),
    64: (0, 64, 64, 64),
    65: (0, 65, 128, 128),  # C > 64 but under one block: a full 128 block
    128: (1, 0, 0, 128),
    129: (1, 1, 4, 132),
    300: (2, 44, 64, 320),
}


def _check_sizes(c, expected, dtype, itemsize):
    cx, c0, c0p, per_hw = expected
    shape = (2, 3, c)  # NCx: N = 2, HW = 3
    plan = layout_plan(shape, dtype, "NCx")
    assert (plan.cx, plan.c0, plan.c0_padded) == (cx, c0, c0p)
    batch = 3 * per_hw * itemsize
    stride = -(-batch // 256) * 256
    assert batch_end(0, shape, dtype, "NCx") == batch
    assert batch_start(1, shape, dtype, "NCx") == stride
    assert byte_size(shape, dtype, "NCx") == stride + batch
    # Cx: one batch of HW = 6
    assert byte_size(shape, dtype, "Cx") == 6 * per_hw * itemsize
    # the compact layouts never pad
    assert byte_size(shape, dtype, "Tensor") == 6 * c * itemsize
    assert byte_size(shape, dtype, "NTensor") == 6 * c * itemsize
    assert batch_start(1, shape, dtype, "NTensor") == 3 * c * itemsize


@pytest.mark.parametrize("c", sorted(FLOAT_CASES))
@pytest.mark.parametrize(("dtype", "itemsize"), [("f32", 4), ("tf32", 4), ("f16", 2),
                                                 ("bf16", 2)])
def test_sizes_float(c, dtype, itemsize):
    _check_sizes(c, FLOAT_CASES[c], dtype, itemsize)


@pytest.mark.parametrize("c", sorted(INT8_CASES))
@pytest.mark.parametrize("dtype", ["i8", "ui8"])
def test_sizes_int8(c, dtype):
    _check_sizes(c, INT8_CASES[c], dtype, 1)


def test_sizes_hand_numbers():
    assert byte_size((1, 56, 56, 256), "f32", "NCx") == 56 * 56 * 256 * 4
    assert byte_size((1, 56, 56, 3), "f32", "NCx") == 56 * 56 * 4 * 4
    assert byte_size((4, 7, 7, 3), "f16", "NCx") == 3 * 512 + 49 * 4 * 2  # 392 -> 512
    assert byte_size((2, 1, 1), "f32", "NCx") == 256 + 16
    assert byte_size((2, 1, 1), "f32", "NTensor") == 8
    assert byte_size((), "f32", "Tensor") == 4
    assert byte_size((), "f32", "NCx") == 16  # one channel padded to 4


@pytest.mark.parametrize("dtype", ["i1", "i16", "i32", "i64", "f64"])
def test_types_outside_the_table_are_compact_in_every_layout(dtype):
    shape = (2, 3, 5)
    rng = np.random.default_rng(0)
    x = _random(shape, dtype, rng)
    isz = resolve_dtype(dtype).itemsize
    for layout in LAYOUTS:
        assert byte_size(shape, dtype, layout) == 30 * isz
        assert pack(x, layout) == np.ascontiguousarray(x).tobytes()
    assert batch_start(1, shape, dtype, "NCx") == 15 * isz
    assert not layout_plan(shape, dtype, "NCx").aligned


def test_zero_size_tensors():
    for shape in [(0, 3, 5), (2, 0, 5), (2, 3, 0), (0,)]:
        for layout in LAYOUTS:
            assert byte_size(shape, "f32", layout) == 0
            x = np.zeros(shape, np.float32)
            assert pack(x, layout) == b""
            assert unpack(b"", shape, "f32", layout).shape == shape
    with pytest.raises(IndexError):
        batch_start(0, (0, 3, 5), "f32", "NCx")


# --------------------------------------------------------------------------------------
# Byte-exact pack on small hand examples
# --------------------------------------------------------------------------------------


def test_pack_f32_ncx_small_c():
    x = np.array([[[1, 2, 3]], [[4, 5, 6]]], np.float32)  # N=2, HW=1, C=3 -> 4
    data = pack(x, "NCx")
    assert len(data) == 256 + 16
    expected = np.zeros(68, np.float32)
    expected[[0, 1, 2]] = [1, 2, 3]
    expected[[64, 65, 66]] = [4, 5, 6]
    assert data == expected.tobytes()


def test_pack_f32_cx_small_c():
    x = np.array([[1, 2, 3, 4, 5], [6, 7, 8, 9, 10]], np.float32)  # HW=2, C=5 -> 8
    expected = np.array([1, 2, 3, 4, 5, 0, 0, 0, 6, 7, 8, 9, 10, 0, 0, 0], np.float32)
    assert pack(x, "Cx") == expected.tobytes()
    assert pack(x, "Tensor") == x.tobytes()
    assert pack(x, "NTensor") == x.tobytes()
    # NCx: N = 2 rows of one HW position each, batch 1 at 256 bytes
    data = pack(x, "NCx")
    assert data[:32] == expected[:8].tobytes()
    assert data[32:256] == bytes(224)
    assert data[256:] == expected[8:].tobytes()


def test_pack_f16_cx_blocked():
    # HW = 2, C = 70: one block of 64, then C0 = 6 padded to 8.
    x = (np.arange(140) + 1).astype(np.float16).reshape(2, 70)
    out = np.frombuffer(pack(x, "Cx"), np.float16)
    assert out.size == 2 * 64 + 2 * 8
    np.testing.assert_array_equal(out[0:64], x[0, 0:64])  # block 0, hw 0
    np.testing.assert_array_equal(out[64:128], x[1, 0:64])  # block 0, hw 1
    np.testing.assert_array_equal(out[128:134], x[0, 64:70])  # tail, hw 0
    np.testing.assert_array_equal(out[134:136], [0, 0])
    np.testing.assert_array_equal(out[136:142], x[1, 64:70])  # tail, hw 1
    np.testing.assert_array_equal(out[142:144], [0, 0])


def test_pack_f32_c33_pads_to_a_block():
    x = (np.arange(66) + 1).astype(np.float32).reshape(1, 2, 33)  # NCx: N=1, HW=2
    out = np.frombuffer(pack(x, "NCx"), np.float32)
    assert out.size == 128
    np.testing.assert_array_equal(out[0:33], x[0, 0])
    np.testing.assert_array_equal(out[33:64], np.zeros(31))
    np.testing.assert_array_equal(out[64:97], x[0, 1])
    np.testing.assert_array_equal(out[97:128], np.zeros(31))


def test_pack_int8_ncx_blocked():
    # N = 2, HW = 2, C = 130: one block of 128, C0 = 2 padded to 4; 264 bytes per batch.
    x = (np.arange(2 * 2 * 130) % 127 + 1).astype(np.int8).reshape(2, 2, 130)
    out = np.frombuffer(pack(x, "NCx"), np.int8)
    assert out.size == 512 + 264
    for n in range(2):
        base = 512 * n
        np.testing.assert_array_equal(out[base : base + 128], x[n, 0, :128])
        np.testing.assert_array_equal(out[base + 128 : base + 256], x[n, 1, :128])
        np.testing.assert_array_equal(out[base + 256 : base + 264], [*x[n, 0, 128:], 0, 0,
                                                                      *x[n, 1, 128:], 0, 0])
    np.testing.assert_array_equal(out[264:512], np.zeros(248))


def test_pack_int8_c64_is_plain_nhwc():
    x = (np.arange(128) % 100 + 1).astype(np.int8).reshape(2, 64)
    assert pack(x, "Cx") == x.tobytes()
    assert layout_plan(x.shape, "i8", "Cx").c0_padded == 64


def test_pack_rank0_and_rank1():
    assert pack(np.float32(3.5), "NCx") == np.array([3.5, 0, 0, 0], np.float32).tobytes()
    assert pack(np.float32(3.5), "Tensor") == np.float32(3.5).tobytes()
    v = np.arange(1, 6, dtype=np.float32)
    assert pack(v, "NCx") == np.array([1, 2, 3, 4, 5, 0, 0, 0], np.float32).tobytes()
    assert unpack(pack(np.float32(3.5), "NCx"), (), "f32", "NCx") == np.float32(3.5)


def test_pack_bf16_bytes():
    x = np.array([[1.0, -2.0, 0.5]], NP_BF16)
    assert pack(x, "Cx") == np.array([1.0, -2.0, 0.5, 0.0], NP_BF16).tobytes()
    assert pack(x, "Cx")[:2] == bytes([0x80, 0x3F])  # 1.0 in bf16, little-endian


def test_pack_is_little_endian_even_for_big_endian_arrays():
    x = np.array([[1, 2]], dtype=">i4")
    assert pack(x, "Tensor") == bytes([1, 0, 0, 0, 2, 0, 0, 0])
    y = np.array([[1.0, 2.0]], dtype=">f4")
    assert pack(y, "NCx") == np.array([1, 2, 0, 0], "<f4").tobytes()


def test_pack_named_dtype():
    x = np.ones((1, 3), np.float32)
    assert pack(x, "NCx", dtype="tf32") == pack(x, "NCx")
    with pytest.raises(ValueError, match="cast it first"):
        pack(x, "NCx", dtype="f16")


# --------------------------------------------------------------------------------------
# Padding, addresses and pack agree
# --------------------------------------------------------------------------------------

ADDRESS_SHAPES = [(3,), (2, 5), (2, 3, 33), (2, 1, 2, 131), (1, 2, 3, 70), (3, 2, 2, 2, 200),
                  (2, 2, 130), ()]


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16", "i8", "i32", "i1"])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_element_address_agrees_with_pack(dtype, layout):
    rng = np.random.default_rng(zlib.crc32(f"{dtype}{layout}".encode()))
    for shape in ADDRESS_SHAPES:
        x = _random(shape, dtype, rng)
        data = pack(x, layout)
        isz = x.dtype.itemsize
        amap = address_map(shape, dtype, layout)
        assert amap.shape == shape
        for index in list(np.ndindex(*shape))[:: max(1, x.size // 97)]:
            a = element_address(index, shape, dtype, layout)
            assert a == amap[index]
            assert data[a : a + isz] == x[index].tobytes()
        # every element has its own slot, inside the tensor
        flat = amap.reshape(-1)
        assert len(np.unique(flat)) == flat.size
        assert flat.size == 0 or flat.max() + isz <= len(data)


@pytest.mark.parametrize("dtype", ["f32", "bf16", "i8"])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_box_address_map_is_the_whole_maps_box(dtype, layout):
    rng = np.random.default_rng(zlib.crc32(f"box{dtype}{layout}".encode()))
    for shape in ADDRESS_SHAPES:
        whole = address_map(shape, dtype, layout)
        for _ in range(4):
            start = [int(rng.integers(0, d)) if d else 0 for d in shape]
            stop = [int(rng.integers(a + 1, d + 1)) if d else 0
                    for a, d in zip(start, shape, strict=True)]
            box = tuple(slice(a, b) for a, b in zip(start, stop, strict=True))
            got = ml.box_address_map(shape, dtype, layout, start, stop)
            assert got.shape == whole[box].shape
            assert (got == whole[box]).all()


@pytest.mark.parametrize("dtype", ["f32", "f16", "i8"])
@pytest.mark.parametrize("layout", ["Cx", "NCx"])
def test_padding_is_zero_and_ignored(dtype, layout):
    shape = (3, 2, 2, 71)
    x = _random(shape, dtype, np.random.default_rng(1))
    x_bits = _bits(x)
    x_bits[...] = np.iinfo(x_bits.dtype).max  # every data byte 0xff
    data = np.frombuffer(pack(x, layout), np.uint8)
    isz = x.dtype.itemsize
    is_data = np.zeros(data.size, bool)
    for k in range(isz):
        is_data[address_map(shape, dtype, layout).reshape(-1) + k] = True
    assert (data[is_data] == 0xFF).all()
    assert (data[~is_data] == 0).all()
    assert (~is_data).any()
    # garbage in the padding is ignored
    y = _random(shape, dtype, np.random.default_rng(2))
    dirty = np.frombuffer(pack(y, layout), np.uint8).copy()
    dirty[~is_data] = 0xA5
    np.testing.assert_array_equal(_bits(unpack(dirty.tobytes(), shape, dtype, layout)), _bits(y))


def test_unpack_accepts_longer_buffers_and_arrays():
    x = np.arange(12, dtype=np.float32).reshape(2, 2, 3)
    data = pack(x, "NCx")
    longer = data + bytes(300)
    np.testing.assert_array_equal(unpack(longer, x.shape, "f32", "NCx"), x)
    np.testing.assert_array_equal(unpack(bytearray(data), x.shape, np.float32, "NCx"), x)
    np.testing.assert_array_equal(unpack(np.frombuffer(data, np.uint8), x.shape, f32, "NCx"), x)
    with pytest.raises(ValueError, match=f"needs {len(data)} bytes"):
        unpack(data[:-1], x.shape, "f32", "NCx")


def test_config_drives_the_layout():
    cfg = TX8Config(batch_align_bytes=512)
    assert batch_start(1, SEED_SHAPE, "f16", "NCx", cfg) == 1024
    cfg = dataclasses.replace(DEFAULT_CONFIG, channel_block_float=32,
                              channel_pad_steps_float=(4, 8, 16))
    plan = layout_plan((1, 2, 40), "f32", "NCx", cfg)
    assert (plan.cx, plan.c0, plan.c0_padded) == (1, 8, 8)
    plan = layout_plan((1, 2, 20), "f32", "NCx", cfg)  # 20 > 16 -> one full block of 32
    assert (plan.cx, plan.c0, plan.c0_padded) == (0, 20, 32)
    x = np.random.default_rng(3).random((3, 2, 45)).astype(np.float32)
    np.testing.assert_array_equal(unpack(pack(x, "NCx", cfg), x.shape, "f32", "NCx", cfg), x)


# --------------------------------------------------------------------------------------
# Round trip (property)
# --------------------------------------------------------------------------------------

_LAST_DIMS = st.one_of(st.sampled_from([1, 3, 4, 5, 32, 33, 63, 64, 65, 127, 128, 129, 131]),
                       st.integers(1, 300))


@st.composite
def _cases(draw):
    rank = draw(st.integers(1, 5))
    lead = draw(st.lists(st.integers(1, 4), min_size=rank - 1, max_size=rank - 1))
    shape = (*lead, draw(_LAST_DIMS))
    return (shape, draw(st.sampled_from(ALL_DTYPES)), draw(st.sampled_from(LAYOUTS)),
            draw(st.integers(0, 2**32 - 1)))


@settings(max_examples=300, deadline=None)
@given(_cases())
def test_unpack_pack_round_trip(case):
    shape, dtype, layout, seed = case
    x = _random(shape, dtype, np.random.default_rng(seed))
    data = pack(x, layout)
    assert len(data) == byte_size(shape, dtype, layout)
    y = unpack(data, shape, dtype, layout)
    assert y.shape == x.shape and y.dtype == x.dtype
    np.testing.assert_array_equal(_bits(y), _bits(x))


# --------------------------------------------------------------------------------------
# dtypes, layouts and errors
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "name", "np_dtype", "rule"),
    [
        ("f32", "f32", np.float32, ml.FLOAT),
        ("tf32", "tf32", np.float32, ml.FLOAT),
        ("i8", "i8", np.int8, ml.INT8),  # an IR name, not numpy's int64
        ("int8", "i8", np.int8, ml.INT8),
        ("bool", "i1", np.bool_, ml.COMPACT),
        (np.float16, "f16", np.float16, ml.FLOAT),
        (np.dtype(">f4"), "f32", np.float32, ml.FLOAT),
        (NP_BF16, "bf16", NP_BF16, ml.FLOAT),
        (np.uint8, "ui8", np.uint8, ml.INT8),
        (np.int64, "i64", np.int64, ml.COMPACT),
        (f32, "f32", np.float32, ml.FLOAT),
        (f16, "f16", np.float16, ml.FLOAT),
        (bf16, "bf16", NP_BF16, ml.FLOAT),
        (i8, "i8", np.int8, ml.INT8),
        (i1, "i1", np.bool_, ml.COMPACT),
        (i32, "i32", np.int32, ml.COMPACT),
    ],
)
def test_resolve_dtype(given, name, np_dtype, rule):
    storage = resolve_dtype(given)
    assert (storage.name, storage.dtype, storage.rule) == (name, np.dtype(np_dtype), rule)


@pytest.mark.parametrize(
    "bad",
    [np.complex64, np.float128 if hasattr(np, "float128") else np.complex128, "f8", "float8",
     ml_dtypes.float8_e4m3fn, np.uint32, object, "U", 3.0],
)
def test_unsupported_dtypes(bad):
    with pytest.raises(UnsupportedDTypeError, match="TX8 mem layouts support") as info:
        byte_size((2, 3), bad, "NCx")
    assert isinstance(info.value, ValueError) and isinstance(info.value, Tx8Error)
    if not isinstance(bad, str | float) and bad is not object:
        with pytest.raises(UnsupportedDTypeError):
            pack(np.zeros((2, 3), bad), "NCx")


@pytest.mark.parametrize("bad", [(-1, 3), (2.5, 3), (True, 3), "abc", None, [[2], [3]]])
def test_bad_shapes(bad):
    with pytest.raises(ValueError, match="shape"):
        byte_size(bad, "f32", "NCx")


def test_bad_layout():
    with pytest.raises(ValueError, match="unknown mem layout 'NHWC'"):
        byte_size((2, 3), "f32", "NHWC")
    assert byte_size((2, 3), "f32", LayoutMode.NCx) == byte_size((2, 3), "f32", "NCx")


def test_bad_indices():
    shape = (2, 3, 5)
    with pytest.raises(IndexError, match="out of range"):
        element_address((2, 0, 0), shape, "f32", "NCx")
    with pytest.raises(IndexError, match="out of range"):
        element_address((0, -1, 0), shape, "f32", "NCx")
    with pytest.raises(IndexError, match="entries"):
        element_address((0, 0), shape, "f32", "NCx")
    with pytest.raises(IndexError, match="ints"):
        element_address((0, 0, 1.0), shape, "f32", "NCx")
    with pytest.raises(IndexError, match="batch 2 out of range"):
        batch_start(2, shape, "f32", "NCx")
    with pytest.raises(IndexError, match="batch 1 out of range"):
        batch_end(1, shape, "f32", "Cx")  # Cx has one batch
    assert element_address(4, (5,), "f32", "NCx") == 16


@pytest.mark.parametrize("layout", ["Tensor", "NTensor", "Cx", "NCx"])
@pytest.mark.parametrize("shape", [(3, 2, 70), (2, 131), (1, 5), (4,)])
def test_pack_into_a_dirty_buffer_writes_exactly_pack(layout, shape) -> None:
    from tx8c.target.mem_layout import pack_into

    a = np.random.default_rng(0).standard_normal(shape).astype(np.float16)
    expected = pack(a, layout)
    out = bytearray(b"\xff" * (len(expected) + 16))
    assert pack_into(memoryview(out)[3:], a, layout) == len(expected)
    assert bytes(out[3:3 + len(expected)]) == expected
    assert out[:3] == b"\xff" * 3 and out[3 + len(expected):] == b"\xff" * 13
