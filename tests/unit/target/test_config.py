"""TX8Config: published figures, chosen defaults, derived figures and validation."""

from __future__ import annotations

import dataclasses

import pytest

from tx8c.target.config import DEFAULT_CONFIG, GIGA, TERA, GiB, TX8Config


def test_published_figures():
    c = DEFAULT_CONFIG
    assert (c.mesh_x, c.mesh_y, c.tiles_per_chip) == (4, 4, 16)
    assert c.ddr_bytes == 64 * 2**30
    assert c.ddr_bandwidth_bytes_per_s == 200 * 10**9
    assert (c.ne_block_m, c.ne_block_k, c.ne_block_n) == (8, 16, 8)
    assert c.ne_macs_per_block == 1024
    assert c.batch_align_bytes == 256 and c.batch_align_bits == 2048
    assert c.channel_block_float == 64 and c.channel_block_int8 == 128
    assert c.channel_pad_steps_float == (4, 8, 16, 32)
    assert c.channel_pad_steps_int8 == (4, 8, 16, 32, 64)
    assert c.peak_int8_ops_per_s == 256 * TERA
    assert c.peak_bf16_flops_per_s == c.peak_tf32_flops_per_s == 128 * TERA
    assert c.peak_fp32_flops_per_s == 21 * TERA
    assert c.pcie_bytes_per_s == 64 * GIGA
    assert c.chip_link_bits_per_s == 1600 * GIGA
    assert c.chip_link_bytes_per_s == 200 * GIGA


def test_chosen_defaults_are_documented_and_consistent():
    c = DEFAULT_CONFIG
    doc = TX8Config.__doc__ + __import__("tx8c.target.config", fromlist=["x"]).__doc__
    for name in ("spm_bytes_per_tile", "clock_hz", "ct_bytes_per_cycle", "lsu_bytes_per_cycle",
                 "ne_blocks_per_cycle"):
        assert name in doc
    assert "chosen default" in doc and "NOT published" in doc
    assert c.spm_bytes_per_tile == 3 * 2**20
    assert c.spm_bytes_per_chip == 16 * 3 * 2**20
    assert c.clock_hz == 10**9
    # The NE default reproduces the published BF16 peak within 3 %.
    derived = c.tiles_per_chip * c.ne_macs_per_cycle * 2 * c.clock_hz
    assert abs(derived - c.peak_bf16_flops_per_s) / c.peak_bf16_flops_per_s < 0.03


def test_channel_accessors():
    c = DEFAULT_CONFIG
    assert (c.channel_threshold(False), c.channel_block(False)) == (32, 64)
    assert (c.channel_threshold(True), c.channel_block(True)) == (64, 128)
    assert c.channel_pad_steps(True) == (4, 8, 16, 32, 64)


def test_frozen_hashable_replace():
    with pytest.raises(dataclasses.FrozenInstanceError):
        DEFAULT_CONFIG.mesh_x = 8  # type: ignore[misc]
    assert hash(DEFAULT_CONFIG) == hash(TX8Config())
    assert DEFAULT_CONFIG == TX8Config()
    big = dataclasses.replace(DEFAULT_CONFIG, mesh_x=8, ddr_bytes=128 * GiB)
    assert big.tiles_per_chip == 32 and big.ddr_bytes == 128 * GiB
    assert big.as_dict()["mesh_x"] == 8


def test_steps_given_as_list_become_tuple():
    c = TX8Config(channel_pad_steps_float=[2, 4, 8])
    assert c.channel_pad_steps_float == (2, 4, 8)
    hash(c)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("mesh_x", 0, "positive"),
        ("mesh_y", -4, "positive"),
        ("spm_bytes_per_tile", 0, "positive"),
        ("clock_hz", 1.5e9, "must be an int"),
        ("ddr_bytes", True, "must be an int"),
        ("lsu_bytes_per_cycle", "128", "must be an int"),
        ("batch_align_bytes", 96, "power of two"),
        ("channel_block_int8", 0, "positive"),
        ("channel_pad_steps_float", (), "non-empty"),
        ("channel_pad_steps_float", (8, 4), "strictly increasing"),
        ("channel_pad_steps_float", (4, 4, 8), "strictly increasing"),
        ("channel_pad_steps_float", (0, 4), "positive ints"),
        ("channel_pad_steps_float", "4816", "non-empty sequence"),
        ("channel_pad_steps_int8", (4, 8, 16, 32, 64, 128), "below channel_block_int8"),
        ("channel_block_float", 32, "below channel_block_float"),
        ("peak_fp32_flops_per_s", -1, "positive"),
    ],
)
def test_validation_names_the_field(field, value, message):
    with pytest.raises(ValueError, match=message) as info:
        TX8Config(**{field: value})
    assert field in str(info.value)
