"""The seed's sharding rules, op by op (seed 003, ShardingInterface), and the derived
methods: tile_sharding_split factors, halos of back_window, temporal_slice_shape."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers import single_op_module
from tx8c.dialect.ops.conv_gemm import ConvOp, GemmOp
from tx8c.dialect.ops.movement import ReshapeOp, TransposeOp
from tx8c.dialect.ops.norm import BatchNormInferenceOp, SoftmaxOp
from tx8c.dialect.ops.reduce_pool import PoolOp, ReduceOp
from tx8c.interfaces import Combine, NotShardable, ShardingSplitParam, SliceParam, Window

F32 = np.float32


def op_of(cls, inputs, **attrs):
    module = single_op_module(cls, inputs, **attrs)
    return next(o for o in module.walk() if isinstance(o, cls))


def param(sharding, split):
    return ShardingSplitParam(tuple(sharding), tuple(split))


def batchnorm():
    x = np.zeros((2, 4, 6, 8), F32)
    c = np.zeros(4, F32)
    return op_of(BatchNormInferenceOp, [x, c, c, c, c])


def test_batchnorm_shards_only_c_and_never_splits_its_parameters():
    """Seed 003's BatchNorm example: the input is sharded along C only, split along N, H,
    W; the four [C] parameters get the C sharding and split (1)."""
    bn = batchnorm()
    result = bn.tile_sharding_split(param((1, 4, 1, 1), (2, 1, 3, 1)))
    assert result[0] == param((1, 4, 1, 1), (2, 1, 3, 1))
    assert all(r == param((4,), (1,)) for r in result[1:])
    with pytest.raises(NotShardable, match="cannot shard loop dim 0"):
        bn.tile_sharding_split(param((2, 1, 1, 1), (1, 1, 1, 1)))
    with pytest.raises(NotShardable, match="cannot split loop dim 1"):
        bn.tile_sharding_split(param((1, 1, 1, 1), (1, 2, 1, 1)))


def test_gemm_k_split_is_a_sum_reduction():
    """Gemm [M, K] @ [K, N]: loop dims (M, N, K); K combines partial sums; a K split
    splits a along its dim 1 and b along its dim 0; the bias follows (M, N)."""
    gemm = op_of(GemmOp, [np.zeros((16, 32), F32), np.zeros((32, 8), F32),
                          np.zeros((8,), F32)])
    space = gemm.loop_space()
    assert [d.size for d in space] == [16, 8, 32]
    assert space[2].reduce == Combine.SUM and space[0].reduce is None
    a, b, bias = gemm.tile_sharding_split(param((4, 2, 1), (1, 1, 4)))
    assert a == param((4, 1), (1, 4)) and b == param((1, 2), (4, 1))
    assert bias == param((2,), (1,))


def test_conv_halo_rows():
    """3x3 conv, stride 1, pads 1: output rows [4, 8) read input rows [3, 9); the first
    rows [0, 4) read [0, 5) (the top row is padding); channels of the weight follow."""
    conv = op_of(ConvOp, [np.zeros((1, 8, 16, 16), F32), np.zeros((4, 8, 3, 3), F32)],
                 pads=[1, 1, 1, 1])
    loops = Window((0, 0, 4, 0, 0), (1, 4, 8, 16, 8))
    x, w = conv.back_window(loops)
    assert x == Window((0, 0, 3, 0), (1, 8, 9, 16))
    assert w == Window((0, 0, 0, 0), (4, 8, 3, 3))
    x0, _ = conv.back_window(Window((0, 0, 0, 0, 0), (1, 4, 4, 16, 8)))
    assert x0.dim(2) == (0, 5)
    # the largest input slice of a 4-row slice: 6 rows (4 + halo 2)
    x_shape, w_shape = conv.temporal_slice_shape(SliceParam((1, 4, 4, 16, 8)))
    assert x_shape.shape == (1, 8, 6, 16) and w_shape.shape == (4, 8, 3, 3)


def test_strided_pool_halo():
    """Max pool 3x3 stride 2 pads 1: output rows [2, 4) read input rows [3, 8)."""
    pool = op_of(PoolOp, [np.zeros((1, 2, 16, 16), F32)], mode="max", kernel=[3, 3],
                 strides=[2, 2], pads=[1, 1, 1, 1])
    (x,) = pool.back_window(Window((0, 0, 2, 0), (1, 2, 4, 8)))
    assert x.dim(2) == (3, 8) and x.dim(3) == (0, 16)


def test_softmax_axis_is_never_cut():
    sm = op_of(SoftmaxOp, [np.zeros((2, 4, 8), F32)], axis=1)
    assert [d.cut for d in sm.loop_space()] == [True, False, True]
    with pytest.raises(NotShardable, match="whole dim"):
        sm.tile_sharding_split(param((1, 2, 1), (1, 1, 1)))
    assert sm.tile_sharding_split(param((2, 1, 2), (1, 1, 4)))[0] == param((2, 1, 2),
                                                                          (1, 1, 4))


def test_reduce_over_a_split_axis_combines_like_its_mode():
    red = op_of(ReduceOp, [np.zeros((4, 6), F32)], mode="max", axes=[1], keepdims=False)
    space = red.loop_space()
    assert [d.size for d in space] == [4, 6] and space[1].reduce == Combine.MAX
    assert red.operand_axes() == ((0, 1),)


def test_reshape_head_split_and_merge():
    """[1, 128, 768] -> [1, 128, 12, 64]: heads may be cut (a head window reads 64
    channels per head), the 64 within a head may not; merging back cuts channels on
    multiples of 64."""
    split = op_of(ReshapeOp, [np.zeros((1, 128, 768), F32)], shape=[1, 128, 12, 64])
    assert [(d.size, d.cut, d.granule) for d in split.loop_space()] == [
        (1, True, 1), (128, True, 1), (12, True, 1), (64, False, 1)]
    (x,) = split.back_window(Window((0, 0, 3, 0), (1, 128, 6, 64)))
    assert x == Window((0, 0, 192), (1, 128, 384))
    merge = op_of(ReshapeOp, [np.zeros((1, 128, 12, 64), F32)], shape=[1, 128, 768])
    assert merge.loop_space()[2].granule == 64
    (y,) = merge.back_window(Window((0, 0, 128), (1, 128, 256)))
    assert y == Window((0, 0, 2, 0), (1, 128, 4, 64))


def test_transpose_operand_follows_the_permutation():
    tr = op_of(TransposeOp, [np.zeros((2, 3, 4), F32)], perm=[2, 0, 1])
    assert tr.operand_axes() == ((1, 2, 0),)
    assert tr.tile_sharding_split(param((4, 1, 1), (1, 3, 1)))[0] == param((1, 1, 4),
                                                                          (3, 1, 1))
