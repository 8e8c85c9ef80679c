"""The cost model against hand calculations (issue 8, part 3), for every engine and dtype.

Default TX8Config: NE 4 blocks of 8x16x8 per cycle in BF16 (FP32 at 21/128 of that, INT8
at 256/128), CT 256 bytes per cycle (special passes x4), LSU 128 B/cycle, DDR 200 GB/s at
1 GHz = 200 B/cycle shared, 32 cycles per kernel call, 64 per DMA.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.helpers import single_op_module
from tx8c.analysis.roofline import model_roofline
from tx8c.dialect.ops.conv_gemm import ConvOp, GemmOp
from tx8c.dialect.ops.norm import LayerNormOp
from tx8c.interfaces import Engine, Matmul, Work
from tx8c.interfaces.oplib import Transfer
from tx8c.target.config import DEFAULT_CONFIG as C
from tx8c.target.cost import (
    cycles,
    dma_cycles,
    ne_blocks,
    ne_cycles,
    noc_reduce_cycles,
    peak_flops,
)


def op_of(cls, inputs, **attrs):
    module = single_op_module(cls, inputs, **attrs)
    return next(o for o in module.walk() if isinstance(o, cls))


def test_gemm_64_cubed_fp32_and_bf16():
    """64x64x64: 8 * 4 * 8 = 256 blocks. bf16: 256 / 4 = 64 cycles; fp32: the rate is
    4 * 21/128 blocks per cycle, 256 * 128 / 84 = 390.1 -> 391 cycles; + 32 issue."""
    a = np.zeros((64, 64), np.float32)
    gemm = op_of(GemmOp, [a, a])
    work = gemm.work(gemm.loop_shape())
    assert work.matmuls == (Matmul(1, 64, 64, 64),)
    assert work.flops == 2 * 64**3
    assert ne_blocks(work.matmuls[0], C) == 256
    assert cycles(work, C).cycles == 32 + 391
    bf16 = Work(Engine.NE, "bf16", matmuls=work.matmuls)
    assert cycles(bf16, C).cycles == 32 + 64
    i8 = Work(Engine.NE, "i8", matmuls=work.matmuls)
    assert ne_cycles(i8.matmuls, "i8", C) == 32  # twice BF16's rate


def test_padding_to_blocks():
    """A 1x1x1 product still costs one whole 8x16x8 block; 9x17x9 costs 2*2*2."""
    assert ne_blocks(Matmul(1, 1, 1, 1), C) == 1
    assert ne_blocks(Matmul(3, 9, 17, 9), C) == 3 * 8


def test_depthwise_conv_3x3():
    """Depthwise 3x3 on 1x32x16x16 (pads 1): 32 groups of (256 pixels x 9 taps x 1 out
    channel) = 32 * ceil(256/8) * ceil(9/16) * ceil(1/8) = 1024 blocks, fp32:
    ceil(1024 * 128 / 84) = 1561 cycles + 32."""
    x = np.zeros((1, 32, 16, 16), np.float32)
    w = np.zeros((32, 1, 3, 3), np.float32)
    conv = op_of(ConvOp, [x, w], groups=32, pads=[1, 1, 1, 1])
    work = conv.work(conv.loop_shape())
    assert work.matmuls == (Matmul(32, 256, 9, 1),)
    assert cycles(work, C).cycles == 32 + math.ceil(1024 * 128 / 84)


def test_layernorm_row_of_768():
    """LayerNorm over 768 of [1, 128, 768] fp32: 7 simple passes over 98304 elements and
    one rsqrt (special, x4) per row: (7 * 98304 + 4 * 128) / 64 elements per cycle
    = 10760 cycles + 32."""
    x = np.zeros((1, 128, 768), np.float32)
    ln = op_of(LayerNormOp, [x])
    work = ln.work(ln.loop_shape())
    assert (work.ct_arith, work.ct_special) == (7 * 98304, 128)
    assert cycles(work, C).cycles == 32 + (7 * 98304 + 4 * 128) // 64


def test_ct_width_by_dtype():
    """bf16 elements are 2 bytes: 128 per cycle; bool 256 per cycle."""
    assert cycles(Work(Engine.CT, "bf16", ct_arith=1280), C).cycles == 32 + 10
    assert cycles(Work(Engine.CT, "i1", ct_arith=1280), C).cycles == 32 + 5


def test_ddr_load_shared_by_16_tiles():
    """1 MiB to each of 16 tiles at once: 200 B/cycle / 16 = 12.5 B/cycle per tile, under
    the LSU's 128: 1048576 / 12.5 = 83886.08 -> 83887 cycles + 64 setup; alone, the LSU
    width binds: 1048576 / 128 = 8192 + 64."""
    assert dma_cycles(2**20, C, streaming_tiles=16) == 64 + 83887
    assert dma_cycles(2**20, C, streaming_tiles=1) == 64 + 8192
    assert dma_cycles(2**20, C, ddr=False) == 64 + 8192


def test_transfer_sizes_in_stored_bytes():
    """A [1, 10, 3] f32 tensor moved in Cx is stored with C padded to 4: 160 bytes."""
    work = Work(Engine.LSU, "f32", transfers=(Transfer((1, 10, 3), "f32", "Cx"),))
    result = cycles(work, C)
    assert result.bytes == 10 * 4 * 4
    assert result.cycles == 64 + math.ceil(160 / 128)


def test_noc_tree_reduction():
    """16 tiles: 4 rounds of (4 hop + 4096/64 send + 1024/64 add + 32 issue)."""
    assert noc_reduce_cycles(4096, "f32", 16, C) == 4 * (4 + 64 + 16 + 32)
    assert noc_reduce_cycles(4096, "f32", 1, C) == 0


def test_peaks():
    assert peak_flops("f32", C) == 21 * 10**12
    assert peak_flops("bf16", C) == peak_flops("f16", C) == 128 * 10**12
    assert peak_flops("i8", C) == 256 * 10**12


def test_roofline_of_one_gemm():
    """[128, 768] @ [768, 3072] fp32 with the weight a constant: 2*128*768*3072 FLOPs at
    21 TFLOPS = 28.76 us; bytes: weight 9437184 + input 393216 + output 1572864 at
    200 GB/s = 57.02 us: memory bound."""
    from xdsl.dialects import func
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.ir import Block, Region

    from tx8c.dialect.ops.backend import ConstantOp
    from tx8c.dialect.types import tensor_of

    a = np.zeros((128, 768), np.float32)
    block = Block(arg_types=[tensor_of(a)])
    weight = ConstantOp.from_array(np.ones((768, 3072), np.float32))
    gemm = GemmOp.make([block.args[0], weight.results[0]])
    block.add_ops([weight, gemm, func.ReturnOp(gemm.results[0])])
    fn = func.FuncOp("main", ([block.args[0].type], [gemm.results[0].type]), Region(block))
    roof = model_roofline(ModuleOp([fn]), C)
    flops = 2 * 128 * 768 * 3072
    assert roof.flops == (("f32", flops),)
    assert roof.compute_seconds == pytest.approx(flops / 21e12)
    assert roof.weight_bytes == 768 * 3072 * 4
    assert roof.io_bytes == 128 * 768 * 4 + 128 * 3072 * 4
    assert roof.memory_seconds == pytest.approx(roof.ddr_bytes / 200e9)
    assert roof.bound_by == "memory" and roof.seconds == roof.memory_seconds


def _embedding_module(also_matmul: bool):
    """An embedding table [1000, 64] f32 gathered by 8 runtime indices; with
    `also_matmul` the table is also multiplied by the gathered rows (read whole)."""
    from xdsl.dialects import func
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.ir import Block, Region

    from tx8c.dialect.ops.backend import ConstantOp
    from tx8c.dialect.ops.indexing import GatherOp
    from tx8c.dialect.types import tensor_of

    block = Block(arg_types=[tensor_of(np.zeros(8, np.int64))])
    table = ConstantOp.from_array(np.ones((1000, 64), np.float32))
    gather = GatherOp.make([table.results[0], block.args[0]])
    ops = [table, gather]
    if also_matmul:
        ops.append(GemmOp.make([gather.results[0], table.results[0]], trans_b=1))
    block.add_ops([*ops, func.ReturnOp(ops[-1].results[0])])
    fn = func.FuncOp("main", ([block.args[0].type], [ops[-1].results[0].type]),
                     Region(block))
    return ModuleOp([fn])


def test_roofline_counts_the_rows_a_gather_picks_from_its_table():
    """An embedding's Gather reads its 8 rows straight from DDR: 8 * 64 * 4 bytes are
    compulsory, not the 256 000 of the table; a table something else reads is whole."""
    assert model_roofline(_embedding_module(False), C).weight_bytes == 8 * 64 * 4
    assert model_roofline(_embedding_module(True), C).weight_bytes == 1000 * 64 * 4
