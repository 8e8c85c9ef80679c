"""The cost model: an op's work (plain counts) -> cycles, with a `TX8Config` only.

Ops report what one slice does (`tx8c.interfaces.oplib.Work`: NE matrix products, CT
element passes, LSU transfers, FLOPs) and never a hardware number; this module is the one
place those counts meet the machine. Every formula is written next to its code; figures
marked "chosen default" in `tx8c.target.config` are not published and stay parameters.

- **NE** (seed 003 "Neural Engine": one 8x16x8 block per step). A product (batch x m x k
  x n) is padded to whole blocks, `batch * ceil(m/8) * ceil(k/16) * ceil(n/8)`. A tile
  runs `ne_blocks_per_cycle` blocks per cycle in BF16/FP16 (4: 16 tiles x 4 x 1024 MACs x
  2 x 1 GHz = 131 TFLOPS, the published 128 TFLOPS); other element types scale with the
  published chip peaks: TF32 x 128/128, FP32 x 21/128, INT8 x 256/128.
- **CT** (seed 003 "CGRA Tensor"): `ct_bytes_per_cycle` bytes per cycle, so
  `ct_bytes_per_cycle / itemsize` elements of a simple pass per cycle; a special pass
  (transcendental, division, root) costs `ct_special_cycles_per_pass` simple ones.
- **LSU** (seed 003 "LSU"): a transfer moves the stored bytes of its tensor (the
  `mem_layout` it is in: Cx padding included) at `lsu_bytes_per_cycle`; a transfer to or
  from DDR is also bounded by the chip's DDR bandwidth, shared by the tiles streaming at
  the same time: `ddr_bandwidth / clock / streaming_tiles` bytes per cycle per tile
  (200 GB/s at 1 GHz is 200 B/cycle for the chip, 12.5 B/cycle per tile when all 16
  stream). Each transfer pays `dma_setup_cycles`.
- **Kernel calls** pay `kernel_issue_cycles` each (the kernel core writing the engine's
  parameter registers).
- **NoC** (cross-tile reduction of partial sums): a binary tree over the tiles,
  ceil(log2(tiles)) rounds; a round sends the partial (`noc_bytes_per_cycle` per link,
  `noc_hop_cycles` per mesh hop) and adds it on the CT (`noc_transfer_cycles`).
- **NoC multicast** (a DDR window several tiles load at the same step, read once): the
  source tile's LSU reads the window from DDR and the NoC delivers the bytes as they
  arrive (cut-through) to every destination along a row-column tree (XY routes from
  the source; a router copies a packet onto each branch, so the source injects every
  byte once and the branches run side by side). A destination ready when the DMA
  starts holds its copy when the DMA's last bytes have crossed its hops, or - when the
  NoC link is slower than the DMA - after the NoC's own setup, hops and bytes at
  `noc_bytes_per_cycle` (`multicast_done`); one that is ready only later copies the
  window from the source's SPM from then on.
- **SPM-resident tensors** (`tx8c.analysis.spm_resident`): a value kept between groups in
  pages spread over every tile's SPM. A DMA of one of its windows moves the same bytes
  as through DDR, but over the NoC from (to) the tiles owning the pages: no DDR
  bandwidth. Its rate is the tile's NoC port, `min(lsu_bytes_per_cycle,
  noc_bytes_per_cycle)`, sustained even when all tiles stream at once: with XY routes
  and pages spread evenly, a quarter of every tile's traffic crosses each half of the
  mesh, which on a 4 x 4 mesh fills the 4 links of the bisection per direction exactly
  (16 x 64 / 4 = 4 x 64 bytes per cycle) and does not exceed them. The pages arrive
  cut-through, so the farthest page adds its hops once (`resident_dma_cycles`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tx8c.interfaces.oplib import Engine, Matmul, Work
from tx8c.target.config import TX8Config
from tx8c.target.mem_layout import byte_size, resolve_dtype

# -- peaks and rates -------------------------------------------------------------------------


def peak_flops(dtype: str, config: TX8Config) -> int:
    """The chip's published peak for arithmetic in `dtype` (IR name), per second."""
    if dtype in ("f16", "bf16"):
        return config.peak_bf16_flops_per_s
    if dtype == "tf32":
        return config.peak_tf32_flops_per_s
    if dtype in ("i8", "ui8"):
        return config.peak_int8_ops_per_s
    return config.peak_fp32_flops_per_s  # f32 and wider types run at the FP32 rate


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def ne_blocks(matmul: Matmul, config: TX8Config) -> int:
    """MAC blocks of one product after padding to the NE block (8 x 16 x 8)."""
    return (
        matmul.batch
        * _ceil_div(matmul.m, config.ne_block_m)
        * _ceil_div(matmul.k, config.ne_block_k)
        * _ceil_div(matmul.n, config.ne_block_n)
    )


def ne_cycles(matmuls, dtype: str, config: TX8Config) -> int:
    """Cycles of one tile's NE for `matmuls` in `dtype`: blocks / (blocks per cycle), the
    rate scaled from BF16's by the published peaks."""
    blocks = sum(ne_blocks(m, config) for m in matmuls)
    if not blocks:
        return 0
    # blocks / (ne_blocks_per_cycle * peak(dtype) / peak_bf16), in integers
    return _ceil_div(
        blocks * config.peak_bf16_flops_per_s,
        config.ne_blocks_per_cycle * peak_flops(dtype, config),
    )


def ct_elements_per_cycle(dtype: str, config: TX8Config) -> int:
    return max(1, config.ct_bytes_per_cycle // resolve_dtype(dtype).itemsize)


def ct_cycles(work: Work, config: TX8Config) -> int:
    """Cycles of the CT for `work`'s element passes."""
    per_cycle = ct_elements_per_cycle(work.dtype, config)
    special = work.ct_special * config.ct_special_cycles_per_pass
    return _ceil_div(work.ct_arith + special, per_cycle)


def transfer_bytes(work: Work, config: TX8Config) -> int:
    """Stored bytes `work`'s transfers move (in their mem layouts)."""
    return sum(byte_size(t.shape, t.dtype, t.layout, config) for t in work.transfers)


def ddr_bytes_per_cycle(config: TX8Config) -> float:
    """The chip's DDR bandwidth in bytes per tile-clock cycle."""
    return config.ddr_bandwidth_bytes_per_s / config.clock_hz


def dma_cycles(nbytes: int, config: TX8Config, streaming_tiles: int = 1,
               ddr: bool = True) -> int:
    """Cycles of one DMA of `nbytes` on one tile: the LSU width, and for DDR the share
    of the chip's DDR bandwidth of `streaming_tiles` tiles streaming at once."""
    if nbytes <= 0:
        return 0
    rate = float(config.lsu_bytes_per_cycle)
    if ddr:
        rate = min(rate, ddr_bytes_per_cycle(config) / max(1, streaming_tiles))
    return config.dma_setup_cycles + math.ceil(nbytes / rate)


def noc_transfer_cycles(nbytes: int, dtype: str, hops: int, config: TX8Config) -> int:
    """One round of a NoC reduction between two tiles `hops` mesh hops apart: the partial
    of `nbytes` in `dtype` crosses the links and the receiver adds it on its CT."""
    elements = nbytes // resolve_dtype(dtype).itemsize
    return (hops * config.noc_hop_cycles + _ceil_div(nbytes, config.noc_bytes_per_cycle)
            + _ceil_div(elements, ct_elements_per_cycle(dtype, config))
            + config.kernel_issue_cycles)


def noc_reduce_cycles(nbytes: int, dtype: str, tiles: int, config: TX8Config) -> int:
    """A tree reduction of `nbytes` of partials in `dtype` over `tiles` tiles on the NoC:
    ceil(log2(tiles)) rounds of a hop, the transfer and a CT add (tiles placed where a
    round's partners are neighbours; `tx8c.slicing.evaluate` counts the real hops)."""
    if tiles <= 1 or nbytes <= 0:
        return 0
    rounds = math.ceil(math.log2(tiles))
    return rounds * noc_transfer_cycles(nbytes, dtype, 1, config)


def noc_multicast_cycles(nbytes: int, hops: int, config: TX8Config) -> int:
    """Cycles of the NoC alone moving `nbytes` to a destination `hops` mesh hops away: a
    descriptor's setup, the hops, the bytes at `noc_bytes_per_cycle` (no CT work: the
    bytes are copied, not combined)."""
    if nbytes <= 0:
        return 0
    return (config.dma_setup_cycles + hops * config.noc_hop_cycles
            + _ceil_div(nbytes, config.noc_bytes_per_cycle))


def multicast_tail(hops: int, config: TX8Config) -> int:
    """Cycles after a multicast's DDR read ends until its last bytes reach a destination
    `hops` mesh hops away (`multicast_done`)."""
    return hops * config.noc_hop_cycles


def multicast_done(dma_start: float, dma_end: float, ready: float, nbytes: int, hops: int,
                   config: TX8Config) -> float:
    """When a destination `hops` away, ready to receive at `ready`, holds its copy of a
    multicast whose DDR read ran from `dma_start` to `dma_end` (module docstring): the
    last bytes cross the hops after the read, and the NoC streams from when both the
    read and the destination have started."""
    streaming_from = max(dma_start, ready)
    return max(dma_end + multicast_tail(hops, config),
               streaming_from + noc_multicast_cycles(nbytes, hops, config))


def resident_dma_cycles(nbytes: int, config: TX8Config) -> int:
    """Cycles of one DMA of `nbytes` between a tile's SPM and an SPM-resident tensor's
    pages (module docstring): the descriptor's setup, the hops to the farthest tile of
    the mesh once, the bytes at the tile's NoC port rate."""
    if nbytes <= 0:
        return 0
    farthest = (config.mesh_x - 1) + (config.mesh_y - 1)
    rate = min(config.lsu_bytes_per_cycle, config.noc_bytes_per_cycle)
    return (config.dma_setup_cycles + farthest * config.noc_hop_cycles
            + _ceil_div(nbytes, rate))


def mesh_hops(a: int, b: int, config: TX8Config) -> int:
    """Mesh hops between tiles `a` and `b` (tile i sits at column i % mesh_x, row
    i // mesh_x)."""
    return (abs(a % config.mesh_x - b % config.mesh_x)
            + abs(a // config.mesh_x - b // config.mesh_x))


# -- one slice ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cycles:
    """Cycles of one slice on its engine (`engine`), and the bytes it moved."""

    engine: Engine
    cycles: int
    bytes: int = 0


def cycles(work: Work, config: TX8Config, streaming_tiles: int = 1) -> Cycles:
    """The cycles of one slice's `work` on its engine.

    LSU work moves its transfers (a DDR one shares the DDR bandwidth with
    `streaming_tiles` tiles; a TDMA one stays inside SPM); CT and NE work pays the kernel
    call and its passes or blocks.
    """
    if work.engine == Engine.LSU:
        total = nbytes = 0
        for t in work.transfers:
            size = byte_size(t.shape, t.dtype, t.layout, config)
            nbytes += size
            total += dma_cycles(size, config, streaming_tiles, t.ddr)
        return Cycles(Engine.LSU, total, nbytes)
    if work.engine == Engine.NE:
        return Cycles(
            Engine.NE, config.kernel_issue_cycles + ne_cycles(work.matmuls, work.dtype, config)
        )
    if work.engine == Engine.CT:
        return Cycles(Engine.CT, config.kernel_issue_cycles + ct_cycles(work, config))
    return Cycles(work.engine, 0)


def seconds(cycle_count: int, config: TX8Config) -> float:
    return cycle_count / config.clock_hz
