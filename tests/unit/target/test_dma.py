"""tx8c.target.dma: the LSU descriptors of a transfer between two layouts, found from the
address maps, address exactly the elements the two maps give (property test on random
shapes, dtypes and windows), and a transfer no loop nest describes is refused."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tx8c.target.config import DEFAULT_CONFIG, TX8Config
from tx8c.target.dma import Descriptor, _loop_nest, addressable, descriptors
from tx8c.target.mem_layout import box_address_map, resolve_dtype


def addresses(d: Descriptor, side: int) -> np.ndarray:
    """The start address of every run of `d` on one side (0 source, 1 destination)."""
    strides = d.src_strides if side == 0 else d.dst_strides
    out = np.array([d.src_base if side == 0 else d.dst_base], np.int64)
    for count, stride in zip(d.counts, strides, strict=True):  # innermost first
        out = (np.arange(count, dtype=np.int64)[:, None] * stride + out[None, :]).ravel()
    return out


def covered(descs, itemsize: int, side: int) -> np.ndarray:
    """Every element byte address the descriptors touch on one side, sorted."""
    parts = []
    for d in descs:
        starts = addresses(d, side)
        parts.append((starts[:, None] + np.arange(0, d.run_bytes, itemsize)).ravel())
    return np.sort(np.concatenate(parts)) if parts else np.zeros(0, np.int64)


def test_gpt2_logits_store_is_two_descriptors() -> None:
    """The LM head's [1,1,128,50257] fp32 result, Cx in SPM, stored compact: 785 whole
    64-channel blocks per row (256-byte runs) and the 17-channel remainder (68 bytes,
    padded to 32 channels in Cx) per row. Checked on a 4-row probe (the whole tensor
    takes seconds); the loops along the rows repeat with the same strides."""
    descs = descriptors((1, 1, 128, 50257), "f32", "Cx", "Tensor",
                        ((0, 1), (0, 1), (0, 4), (0, 50257)))
    assert descs is not None
    by_run = {d.run_bytes: d for d in descs}
    assert set(by_run) == {68, 256}
    assert by_run[256].counts == (785, 4) and by_run[256].dst_strides == (256, 201028)
    assert by_run[68].counts == (4,) and by_run[68].src_strides == (128,)
    assert addressable((1, 1, 128, 50257), "f32", "Cx", "Tensor")


def test_same_layout_is_one_run() -> None:
    """Both sides in one layout, batches back to back (3072 bytes each, a multiple of
    the 256-byte batch alignment): the whole tensor is one run."""
    assert descriptors((2, 3, 4, 64), "f32", "NCx", "NCx") == (
        Descriptor(2 * 3072, 0, 0, (), (), ()),)


def test_a_scrambled_order_is_no_loop_nest() -> None:
    """Run starts that no nest of loops produces (a permutation) are refused."""
    starts = np.array([[0, 0], [8, 8], [4, 16], [20, 24]], np.int64)
    assert _loop_nest(starts) is None
    regular = np.array([[0, 0], [8, 16], [100, 3], [108, 19]], np.int64)
    assert [c for c, _ in _loop_nest(regular)] == [2, 2]


def test_too_few_loops_refuse_a_transfer() -> None:
    """A descriptor with one loop cannot place the blocks of a multi-row Cx tensor."""
    one_loop = TX8Config(dma_loop_dims=1)
    assert descriptors((1, 1, 8, 200), "f32", "Cx", "Tensor", config=one_loop) is None
    assert descriptors((1, 1, 8, 200), "f32", "Cx", "Tensor") is not None



def test_runs_of_one_length_from_two_places_in_a_row() -> None:
    """A window of channels 61..130 of 131 (f32, Cx): the partial first block (61-63)
    and the padded remainder (128-130) are both 12-byte runs but at different strides;
    they take a descriptor each (found by the property test below)."""
    window = ((0, 2), (61, 131))
    descs = descriptors((2, 131), "f32", "Cx", "Tensor", window)
    assert descs is not None
    assert sorted(d.run_bytes for d in descs) == [12, 12, 256]
    for side, layout in ((0, "Cx"), (1, "Tensor")):
        expected = np.sort(box_address_map((2, 131), "f32", layout, [0, 61], [2, 131]).ravel())
        np.testing.assert_array_equal(covered(descs, 4, side), expected)

LAYOUT_PAIRS = [("Cx", "Tensor"), ("Tensor", "Cx"), ("NCx", "NTensor"), ("NTensor", "NCx")]


@st.composite
def transfers(draw):
    rank = draw(st.integers(2, 4))
    shape = [draw(st.integers(1, 4)) for _ in range(rank - 1)]
    shape.append(draw(st.sampled_from([1, 3, 17, 32, 33, 64, 65, 131, 200])))
    dtype = draw(st.sampled_from(["f32", "f16", "bf16", "i8"]))
    src, dst = draw(st.sampled_from(LAYOUT_PAIRS))
    window = []
    for d in shape:
        a = draw(st.integers(0, d - 1))
        window.append((a, draw(st.integers(a + 1, d))))
    return tuple(shape), dtype, src, dst, tuple(window)


@settings(max_examples=150, deadline=None)
@given(transfers())
def test_descriptors_address_exactly_the_window(case) -> None:
    """For any window of any shape between the two families, the descriptors exist
    within the default loop budget and touch exactly the window's bytes on each side
    (the source's and the destination's address maps), each once."""
    shape, dtype, src, dst, window = case
    descs = descriptors(shape, dtype, src, dst, window)
    assert descs is not None and len(descs) <= 4
    assert all(len(d.counts) <= DEFAULT_CONFIG.dma_loop_dims for d in descs)
    itemsize = resolve_dtype(dtype).itemsize
    start, stop = [a for a, _ in window], [b for _, b in window]
    for side, layout in ((0, src), (1, dst)):
        expected = np.sort(box_address_map(shape, dtype, layout, start, stop).ravel())
        np.testing.assert_array_equal(covered(descs, itemsize, side), expected)


@pytest.mark.parametrize("shape", [(1, 224, 224, 3), (1, 1, 16, 50), (2, 3, 5, 131)])
def test_probe_agrees_with_the_whole_tensor(shape) -> None:
    src, dst = ("NCx", "NTensor") if shape[0] > 1 else ("Cx", "Tensor")
    whole = descriptors(shape, "f32", src, dst)
    assert (whole is not None) == addressable(shape, "f32", src, dst)
