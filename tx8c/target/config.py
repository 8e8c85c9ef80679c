"""The TX8 machine description (seed 003, "TX8 Hardware Overview" and "Tensor Layout").

`TX8Config` is the one place that holds hardware numbers. Every other module (layouts,
slicing, SPM/DDR allocation, cost model, cmodel) reads them from a config, normally
`DEFAULT_CONFIG`, so an experiment with another machine is `dataclasses.replace(...)`.

Units: sizes in bytes, rates in units per second, clocks in Hz, all plain ints (so configs
compare and hash exactly and outputs stay deterministic). Capacities ("64 GB") are read as
binary (GiB); bandwidths and throughputs ("200 GB/s", "128 TFLOPS") as decimal (10**9,
10**12), as data sheets do.

Published figures (seed 003, per chip): 4x4 = 16 tiles on a mesh, 64 GB DDR at 200 GB/s,
INT8 256 TOPS, BF16 and TF32 128 TFLOPS, FP32 21 TFLOPS, PCIe 64 GB/s, TsingMicro-Link
1600 Gbps; NE computes one 8x16x8 matmul block per step; Cx/NCx layouts pad channels to
4/8/16/32 (float types) or 4/8/16/32/64 (int8), cut channels into blocks of 64 (float) or
128 (int8) and start every batch on a 2048-bit boundary; DDR banks are 4096 bytes (opt_ddr).

Chosen defaults (NOT published figures; keep them parameters and revisit when the real
numbers are known):

- `spm_bytes_per_tile` = 3 MiB: a scratch-pad size typical of tiles of comparable spatial
  NPUs (roughly 1.5-4 MiB per tile).
- `clock_hz` = 1 GHz.
- `ne_blocks_per_cycle` = 4: with 16 tiles at 1 GHz this gives
  16 * 4 * (8*16*8 MACs) * 2 FLOP = 131 TFLOPS, the nearest whole number of blocks to the
  published 128 TFLOPS BF16 peak.
- `ct_bytes_per_cycle` = 256: one 2048-bit SPM line per cycle, the same width as the batch
  alignment.
- `lsu_bytes_per_cycle` = 128 per tile. DDR transfers are further bounded by the chip's
  shared DDR bandwidth (`ddr_bandwidth_bytes_per_s`, 12.5 GB/s per tile when all 16 tiles
  stream at once); a cost model should take the smaller of the two.
- `ct_special_cycles_per_pass` = 4: a transcendental, division or root pass of the CT
  (CGRA) costs four simple passes (a polynomial or iteration of a few steps).
- `dma_setup_cycles` = 64: fixed cost of one DMA descriptor (issue and first beat).
- `dma_loop_dims` = 4: the nested loops of one DMA descriptor (each a count and a byte
  stride on each side) that place its runs of contiguous bytes; a transfer between two
  layouts is one descriptor per run length (`tx8c.target.dma`). Four loops address a
  window of any rank-4 tensor run by run, batch, rows and channel blocks included.
- `kernel_issue_cycles` = 32: fixed cost of one CT/NE kernel call (the kernel core
  writes its parameter registers, seed 003's TsmExecute).
- `noc_bytes_per_cycle` = 64 per link and `noc_hop_cycles` = 4: the on-chip mesh NoC
  (a 512-bit link per direction between neighbouring tiles).
- `noc_multicast` = True: a DDR window that several tiles of a group load at the same
  step is read once and multicast to the others over the NoC (`tx8c.target.cost`
  `noc_multicast_cycles`); False, every tile loads its windows from DDR itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB
GIGA = 10**9
TERA = 10**12

# The int fields that must be positive; the tuple fields are checked separately.
_POSITIVE_INT_FIELDS = (
    "mesh_x",
    "mesh_y",
    "spm_bytes_per_tile",
    "ddr_bytes",
    "ddr_bandwidth_bytes_per_s",
    "clock_hz",
    "ne_block_m",
    "ne_block_k",
    "ne_block_n",
    "ne_blocks_per_cycle",
    "ct_bytes_per_cycle",
    "lsu_bytes_per_cycle",
    "ct_special_cycles_per_pass",
    "dma_setup_cycles",
    "dma_loop_dims",
    "kernel_issue_cycles",
    "noc_bytes_per_cycle",
    "noc_hop_cycles",
    "batch_align_bytes",
    "ddr_bank_bytes",
    "channel_block_float",
    "channel_block_int8",
    "peak_int8_ops_per_s",
    "peak_bf16_flops_per_s",
    "peak_tf32_flops_per_s",
    "peak_fp32_flops_per_s",
    "pcie_bytes_per_s",
    "chip_link_bits_per_s",
)


@dataclass(frozen=True)
class TX8Config:
    """Hardware parameters of one TX8 chip and its tiles.

    Fields (published unless marked "chosen default", see the module docstring):

    - `mesh_x`, `mesh_y`: the tile mesh of a chip (4 x 4 = 16 tiles).
    - `spm_bytes_per_tile`: scratch-pad memory per tile (chosen default, 3 MiB).
    - `ddr_bytes`: DDR per chip (64 GiB); `ddr_bandwidth_bytes_per_s`: 200 GB/s.
    - `clock_hz`: tile clock (chosen default, 1 GHz).
    - `ne_block_m`, `ne_block_k`, `ne_block_n`: the NE matmul block, an (M x K) @ (K x N)
      product of 8 x 16 x 8 per step; `ne_blocks_per_cycle` (chosen default, 4).
    - `ct_bytes_per_cycle`: CT vector width (chosen default, 256 bytes per cycle).
    - `lsu_bytes_per_cycle`: LSU (DMA) width (chosen default, 128 bytes per cycle).
    - `ct_special_cycles_per_pass`, `dma_setup_cycles`, `dma_loop_dims`, `kernel_issue_cycles`,
      `noc_bytes_per_cycle`, `noc_hop_cycles`: chosen defaults of the cost model (module
      docstring).
    - `noc_multicast`: whether shared input windows are multicast over the NoC (module
      docstring).
    - `batch_align_bytes`: every batch of a Cx/NCx tensor starts on this boundary
      (2048 bits = 256 bytes). Must be a power of two.
    - `ddr_bank_bytes`: a DDR bank (seed 003, opt_ddr / DDR_BANK_SIZE: 4096 bytes). With
      opt_ddr, large constants start on a bank boundary; a constant is large when it
      exceeds one bank per tile (`large_const_bytes`, the seed's thresholdSize). Must be a
      power of two.
    - `channel_block_float` / `channel_block_int8`: Cx/NCx channel block (64 / 128).
    - `channel_pad_steps_float` / `channel_pad_steps_int8`: the sizes a short channel count
      (C itself when it is at most the largest step, else the remainder C0) is padded up to:
      (4, 8, 16, 32) / (4, 8, 16, 32, 64). The largest step is also the threshold between
      the plain NHWC form and the blocked form. Strictly increasing, all below the block.
    - published chip peaks: `peak_int8_ops_per_s` (256 TOPS), `peak_bf16_flops_per_s` and
      `peak_tf32_flops_per_s` (128 TFLOPS), `peak_fp32_flops_per_s` (21 TFLOPS),
      `pcie_bytes_per_s` (64 GB/s), `chip_link_bits_per_s` (1600 Gbps).

    Invalid values raise `ValueError` naming the field.
    """

    mesh_x: int = 4
    mesh_y: int = 4
    spm_bytes_per_tile: int = 3 * MiB
    ddr_bytes: int = 64 * GiB
    ddr_bandwidth_bytes_per_s: int = 200 * GIGA
    clock_hz: int = 1 * GIGA
    ne_block_m: int = 8
    ne_block_k: int = 16
    ne_block_n: int = 8
    ne_blocks_per_cycle: int = 4
    ct_bytes_per_cycle: int = 256
    lsu_bytes_per_cycle: int = 128
    ct_special_cycles_per_pass: int = 4
    dma_setup_cycles: int = 64
    dma_loop_dims: int = 4
    kernel_issue_cycles: int = 32
    noc_bytes_per_cycle: int = 64
    noc_hop_cycles: int = 4
    noc_multicast: bool = True
    batch_align_bytes: int = 256
    ddr_bank_bytes: int = 4096
    channel_block_float: int = 64
    channel_block_int8: int = 128
    channel_pad_steps_float: tuple[int, ...] = (4, 8, 16, 32)
    channel_pad_steps_int8: tuple[int, ...] = (4, 8, 16, 32, 64)
    peak_int8_ops_per_s: int = 256 * TERA
    peak_bf16_flops_per_s: int = 128 * TERA
    peak_tf32_flops_per_s: int = 128 * TERA
    peak_fp32_flops_per_s: int = 21 * TERA
    pcie_bytes_per_s: int = 64 * GIGA
    chip_link_bits_per_s: int = 1600 * GIGA

    def __post_init__(self) -> None:
        if not isinstance(self.noc_multicast, bool):
            raise ValueError(f"TX8Config.noc_multicast must be a bool, got "
                             f"{self.noc_multicast!r}")
        for name in _POSITIVE_INT_FIELDS:
            _check_positive_int(name, getattr(self, name))
        for name in ("batch_align_bytes", "ddr_bank_bytes"):
            value = getattr(self, name)
            if value & (value - 1):
                raise ValueError(f"TX8Config.{name} must be a power of two, got {value}")
        for steps_name, block_name in (
            ("channel_pad_steps_float", "channel_block_float"),
            ("channel_pad_steps_int8", "channel_block_int8"),
        ):
            steps = _check_steps(steps_name, getattr(self, steps_name))
            object.__setattr__(self, steps_name, steps)
            block = getattr(self, block_name)
            if steps[-1] >= block:
                raise ValueError(
                    f"TX8Config.{steps_name} must all be below {block_name} ({block}), "
                    f"got {steps}"
                )

    # -- derived figures -------------------------------------------------------------------
    @property
    def tiles_per_chip(self) -> int:
        return self.mesh_x * self.mesh_y

    @property
    def spm_bytes_per_chip(self) -> int:
        return self.spm_bytes_per_tile * self.tiles_per_chip

    @property
    def large_const_bytes(self) -> int:
        """Constants above this size come first in DDR and start on a bank boundary
        (seed 003, MoveConstantPass: thresholdSize = DDR_BANK_SIZE * tile_num)."""
        return self.ddr_bank_bytes * self.tiles_per_chip

    @property
    def batch_align_bits(self) -> int:
        return self.batch_align_bytes * 8

    @property
    def ne_macs_per_block(self) -> int:
        return self.ne_block_m * self.ne_block_k * self.ne_block_n

    @property
    def ne_macs_per_cycle(self) -> int:
        """MACs per cycle of one tile's NE."""
        return self.ne_macs_per_block * self.ne_blocks_per_cycle

    @property
    def chip_link_bytes_per_s(self) -> int:
        return self.chip_link_bits_per_s // 8

    def channel_threshold(self, int8: bool) -> int:
        """Largest C stored as plain NHWC in Cx/NCx (32 for float types, 64 for int8)."""
        return self.channel_pad_steps(int8)[-1]

    def channel_block(self, int8: bool) -> int:
        return self.channel_block_int8 if int8 else self.channel_block_float

    def channel_pad_steps(self, int8: bool) -> tuple[int, ...]:
        return self.channel_pad_steps_int8 if int8 else self.channel_pad_steps_float

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def _check_positive_int(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(
            f"TX8Config.{name} must be an int, got {value!r} ({type(value).__name__})"
        )
    if value <= 0:
        raise ValueError(f"TX8Config.{name} must be positive, got {value}")


def _check_steps(name: str, value: Any) -> tuple[int, ...]:
    if isinstance(value, str | bytes) or not isinstance(value, Sequence) or not value:
        raise ValueError(f"TX8Config.{name} must be a non-empty sequence of ints, got {value!r}")
    steps = tuple(value)
    for s in steps:
        if isinstance(s, bool) or not isinstance(s, int) or s <= 0:
            raise ValueError(f"TX8Config.{name} must hold positive ints, got {value!r}")
    if any(a >= b for a, b in zip(steps, steps[1:])):
        raise ValueError(f"TX8Config.{name} must be strictly increasing, got {value!r}")
    return steps


DEFAULT_CONFIG = TX8Config()


def target_config(module) -> TX8Config:
    """The TX8Config a module was compiled for (module attribute `tx8c.target`, JSON of
    the fields that differ from the default), else the default."""
    import json
    from dataclasses import replace

    attr = module.attributes.get("tx8c.target")
    if attr is None:
        return DEFAULT_CONFIG
    return replace(DEFAULT_CONFIG, **json.loads(attr.data))
