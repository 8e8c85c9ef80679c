"""The ConstContainer (seed 003, Const Management): ids, content hashing, per-chip
placement, stored bytes in any layout, the DDR image and its checks, the module attribute."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tx8c.const_container import (
    ALL_CHIPS,
    ConstContainer,
    ConstDataError,
)
from tx8c.dialect.attrs import LayoutMode
from tx8c.ir import parse_module, print_module
from tx8c.target.config import DEFAULT_CONFIG, TX8Config
from tx8c.target.mem_layout import pack, unpack

CX, TENSOR, NCX, NTENSOR = LayoutMode.Cx, LayoutMode.Tensor, LayoutMode.NCx, LayoutMode.NTensor


def rand(shape, dtype=np.float32, seed=0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# -- ids, hashing, layouts --------------------------------------------------------------


def test_identical_data_in_one_layout_is_stored_once() -> None:
    c = ConstContainer()
    a = rand((3, 70))
    first = c.add(a)
    assert c.add(a.copy()) == first
    assert c.dedup_hits == 1 and c.dedup_saved_bytes == c.nbytes(first)
    assert c.add(a, CX) != first  # same data, other layout: its own bytes
    b = a.copy()
    b[1, 33] += 1  # one element differs (not one the sample happens to read)
    assert c.add(b) not in (first,)
    assert c.add(a.reshape(70, 3)) != first  # other shape
    assert len(c) == 4


def test_values_are_read_only_and_exact() -> None:
    c = ConstContainer()
    a = rand((2, 5))
    const_id = c.add(a)
    v = c.value(const_id)
    np.testing.assert_array_equal(v, a)
    assert not v.flags.writeable


@pytest.mark.parametrize("layout", list(LayoutMode))
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8, np.int64, np.bool_])
def test_stored_bytes_are_mem_layout_pack(layout, dtype) -> None:
    c = ConstContainer()
    a = (rand((3, 2, 70), seed=1) * 10).astype(dtype)
    const_id = c.add(a, layout)
    assert bytes(c.stored_bytes(const_id)) == pack(a, layout)
    assert c.nbytes(const_id) == len(pack(a, layout))
    for other in LayoutMode:  # any other layout on demand
        assert bytes(c.stored_bytes(const_id, layout=other)) == pack(a, other)


def test_set_layout_changes_the_stored_bytes_only() -> None:
    c = ConstContainer()
    a = rand((1, 4, 4, 5))
    const_id = c.add(a, TENSOR)
    c.set_layout(const_id, CX)
    assert c.layout(const_id) == CX
    assert bytes(c.stored_bytes(const_id)) == pack(a, CX)
    np.testing.assert_array_equal(c.value(const_id), a)


def test_copy_in_another_layout_reuses_an_identical_entry() -> None:
    c = ConstContainer()
    a = rand((1, 8))
    aligned = c.add(a, CX)
    compact = c.copy(aligned, TENSOR)
    assert compact != aligned and c.layout(compact) == TENSOR
    assert c.copy(aligned, TENSOR) == compact


def test_renumber_and_retain() -> None:
    c = ConstContainer()
    ids = [c.add(rand((2,), seed=s)) for s in range(3)]
    mapping = c.renumber([ids[2], ids[0], ids[1]])
    assert mapping == {ids[2]: 0, ids[0]: 1, ids[1]: 2}
    np.testing.assert_array_equal(c.value(0), rand((2,), seed=2))
    assert c.retain([0, 2]) == 1 and c.ids() == [0, 2]
    with pytest.raises(ConstDataError, match="constant 1 is not in the constant container"):
        c.value(1)


# -- per-chip placement -------------------------------------------------------------------


def test_per_chip_placements() -> None:
    c = ConstContainer()
    const_id = c.add(rand((4,), seed=0), chips=[0, 1])
    c.add_placement(const_id, rand((4,), seed=1), chips=[2])
    np.testing.assert_array_equal(c.value(const_id, chip=1), rand((4,), seed=0))
    np.testing.assert_array_equal(c.value(const_id, chip=2), rand((4,), seed=1))
    assert [p.label for p in c.entry(const_id).placements] == [1, 1]
    with pytest.raises(ConstDataError, match="no data for chip 3"):
        c.value(const_id, chip=3)
    with pytest.raises(ValueError, match="overlap"):
        c.add_placement(const_id, rand((4,)), chips=[1])
    every = c.add(rand((4,), seed=5))
    assert c.entry(every).placements[0].chips == (ALL_CHIPS,)
    assert c.entry(every).placements[0].label == 0


def test_image_of_per_chip_data_puts_each_copy_after_the_region() -> None:
    c = ConstContainer()
    shared = c.add(rand((300,), seed=0))
    split = c.add(rand((100,), seed=1), chips=[0])
    c.add_placement(split, rand((100,), seed=2), chips=[1])
    image = c.image(opt_ddr=False)
    rows = image.index["constants"]
    region = image.index["region_bytes"]
    per_chip = [r for r in rows if r["id"] == split]
    assert [r["chips"] for r in per_chip] == [[0], [1]]
    assert all(r["file_offset"] >= region and r["file_offset"] % 256 == 0 for r in per_chip)
    assert len({r["offset"] for r in per_chip}) == 1  # one DDR address on every chip
    back = ConstContainer.from_image(image.index, image.data)
    for chip, seed in ((0, 1), (1, 2)):
        np.testing.assert_array_equal(back.value(split, chip), rand((100,), seed=seed))
    np.testing.assert_array_equal(back.value(shared, 1), rand((300,), seed=0))


# -- the DDR image ------------------------------------------------------------------------


def test_ddr_layout_large_first_bank_aligned_then_small_packed() -> None:
    config = DEFAULT_CONFIG
    c = ConstContainer(config)
    small = c.add(rand((10,)))
    large = c.add(rand((64, 300)))  # 76800 bytes > 4096 x 16
    large2 = c.add(rand((20000,), seed=3))
    small2 = c.add(rand((3,), seed=4))
    layout = c.ddr_layout(opt_ddr=True)
    assert [s.id for s in layout.slots] == [large, large2, small, small2]
    offsets = {s.id: s.offset for s in layout.slots}
    assert offsets[large] == 0 and offsets[large2] % config.ddr_bank_bytes == 0
    assert offsets[large2] == 77824  # 76800 rounded up to the next 4096-byte bank
    assert offsets[small] == 157952  # 77824 + 80000 rounded up to 256: packed tightly
    assert offsets[small2] % config.batch_align_bytes == 0
    tight = c.ddr_layout(opt_ddr=False)
    assert [s.offset for s in tight.slots][:3] == [0, 76800, 156928]
    assert tight.region_bytes < layout.region_bytes


def test_image_holds_every_constant_in_its_layout_at_its_offset() -> None:
    c = ConstContainer()
    values = {c.add(rand((1, 4, 4, 70), seed=1), CX): CX,
              c.add(rand((3, 5), seed=2), NCX): NCX,
              c.add(rand((2, 2), seed=3).astype(np.int64), NTENSOR): NTENSOR}
    image = c.image()
    for row in image.index["constants"]:
        data = image.data[row["offset"]:row["offset"] + row["bytes"]]
        assert bytes(data) == bytes(c.stored_bytes(row["id"]))
        assert row["mem_layout"] == values[row["id"]].value
        value = unpack(data, row["shape"], row["dtype"], row["mem_layout"])
        np.testing.assert_array_equal(value, c.value(row["id"]))
    assert json.loads(image.index_json()) == image.index


@settings(max_examples=40, deadline=None)
@given(
    shapes=st.lists(st.lists(st.integers(1, 70), min_size=1, max_size=4), min_size=1,
                    max_size=6),
    layouts=st.lists(st.sampled_from(list(LayoutMode)), min_size=6, max_size=6),
    opt_ddr=st.booleans(),
)
def test_image_round_trip_and_no_overlap(shapes, layouts, opt_ddr) -> None:
    c = ConstContainer()
    arrays = {}
    for i, shape in enumerate(shapes):
        a = rand(tuple(shape), seed=i)
        arrays[c.add(a, layouts[i])] = a
    image = c.image(opt_ddr)
    slots = sorted(c.ddr_layout(opt_ddr).slots, key=lambda s: s.offset)
    for before, after in zip(slots, slots[1:]):
        assert before.offset + before.nbytes <= after.offset
    back = ConstContainer.from_image(image.index, image.data)
    for const_id, a in arrays.items():
        np.testing.assert_array_equal(back.value(const_id), a)
        assert back.layout(const_id) == c.layout(const_id)


def test_config_changes_alignment() -> None:
    c = ConstContainer(TX8Config(ddr_bank_bytes=1024, mesh_x=1, mesh_y=1))
    c.add(rand((2000,)))
    second = c.add(rand((300,), seed=2))
    assert c.ddr_layout().slot(second).offset == 8192  # 8000 bytes rounded to 1024


# -- loading checks -----------------------------------------------------------------------


def _written(tmp_path, c: ConstContainer):
    image = c.image()
    (tmp_path / "consts.bin").write_bytes(image.data)
    (tmp_path / "consts.json").write_text(image.index_json())
    return image


def test_load_reads_back_from_files(tmp_path) -> None:
    c = ConstContainer()
    a, b = rand((1, 4, 4, 70)), rand((6,), seed=9)
    ia, ib = c.add(a, CX), c.add(b)
    _written(tmp_path, c)
    back = ConstContainer.load(tmp_path / "consts.json")
    np.testing.assert_array_equal(back.value(ia), a)
    np.testing.assert_array_equal(back.value(ib), b)
    assert bytes(back.stored_bytes(ia)) == pack(a, CX)


def test_a_damaged_constant_is_named(tmp_path) -> None:
    c = ConstContainer()
    c.add(rand((100,)))
    victim = c.add(rand((50,), seed=1))
    image = _written(tmp_path, c)
    row = next(r for r in image.index["constants"] if r["id"] == victim)
    data = bytearray(image.data)
    data[row["file_offset"] + 7] ^= 0x40
    (tmp_path / "consts.bin").write_bytes(data)
    with pytest.raises(ConstDataError, match=rf"constant {victim} \(50 f32.*is damaged"):
        ConstContainer.load(tmp_path / "consts.json")


def test_a_truncated_file_names_the_constant_cut_off(tmp_path) -> None:
    c = ConstContainer()
    c.add(rand((100,)))
    last = c.add(rand((50,), seed=1))
    image = _written(tmp_path, c)
    (tmp_path / "consts.bin").write_bytes(image.data[:-10])
    with pytest.raises(ConstDataError, match=rf"truncated.*constant {last} \(50 f32"):
        ConstContainer.load(tmp_path / "consts.json")


@pytest.mark.parametrize("damage, needle", [
    (lambda i: i.update(format="x"), "not a 'tx8c-consts' file"),
    (lambda i: i.update(version=99), "version 99"),
    (lambda i: i["constants"][0].pop("sha256"), "lacks one of"),
    (lambda i: i["constants"][0].update(bytes=4), "the index is damaged"),
    (lambda i: i["constants"][0].update(mem_layout="Zx"), "mem_layout 'Zx'"),
    (lambda i: i["constants"][0].update(dtype="complex"), "element type 'complex'"),
    (lambda i: i["constants"][0].update(chips=[-1, 3]), "has chips"),
])
def test_a_bad_index_is_a_clear_error(tmp_path, damage, needle) -> None:
    c = ConstContainer()
    c.add(rand((8,)))
    image = _written(tmp_path, c)
    index = json.loads(image.index_json())
    damage(index)
    (tmp_path / "consts.json").write_text(json.dumps(index))
    with pytest.raises(ConstDataError, match=needle):
        ConstContainer.load(tmp_path / "consts.json")


def test_missing_or_unreadable_files(tmp_path) -> None:
    with pytest.raises(ConstDataError, match="does not exist"):
        ConstContainer.load(tmp_path / "consts.json")
    (tmp_path / "consts.json").write_text("{not json")
    with pytest.raises(ConstDataError, match="not a readable constants index"):
        ConstContainer.load(tmp_path / "consts.json")
    c = ConstContainer()
    c.add(rand((8,)))
    _written(tmp_path, c)
    (tmp_path / "consts.bin").unlink()
    with pytest.raises(ConstDataError, match="consts.bin.*does not exist"):
        ConstContainer.load(tmp_path / "consts.json")


# -- the module attribute -----------------------------------------------------------------


def test_module_attribute_round_trips_through_text() -> None:
    module = parse_module("func.func @main() { func.return }")
    c = ConstContainer()
    a = rand((2, 3))
    i = c.add(a, CX)
    j = c.add(rand((4,), seed=1), chips=[0])
    c.add_placement(j, rand((4,), seed=2), chips=[1])
    c.to_module(module)
    back = ConstContainer.from_module(parse_module(print_module(module)))
    np.testing.assert_array_equal(back.value(i), a)
    assert back.layout(i) == CX
    np.testing.assert_array_equal(back.value(j, chip=1), rand((4,), seed=2))
    assert [p.chips for p in back.entry(j).placements] == [(0,), (1,)]


def test_a_module_that_names_its_index_needs_a_directory(tmp_path) -> None:
    module = parse_module("func.func @main() { func.return }")
    c = ConstContainer()
    i = c.add(rand((5,)))
    _written(tmp_path, c)
    ConstContainer.external(module, "consts.json")
    with pytest.raises(ConstDataError, match="beside its .mlir file"):
        ConstContainer.from_module(module)
    back = ConstContainer.from_module(module, base_dir=tmp_path)
    np.testing.assert_array_equal(back.value(i), rand((5,)))


def test_a_malformed_module_attribute_is_a_clear_error() -> None:
    module = parse_module(
        'builtin.module attributes {tx8c.constants = [{id = 0 : i64}]} {}')
    with pytest.raises(ConstDataError, match="must be an array of dictionaries"):
        ConstContainer.from_module(module)
