"""Data-movement ops: compute vs onnxruntime, infer_shapes vs compute, dtypes, OpAttr."""

from __future__ import annotations

from dataclasses import replace

import ml_dtypes
import numpy as np
import pytest
from onnx import helper
from xdsl.ir import Block

from tests.helpers import OnnxCase, check_against_onnx, check_shapes, node, run_onnx, run_op
from tx8c.dialect.attrs import AlignMode
from tx8c.dialect.base import OpRuleError
from tx8c.dialect.ops import movement as mv
from tx8c.dialect.types import tensor_of
from tx8c.interfaces.oplib import Engine

RNG_SEEDS = (0, 1, 2)
INT64_MAX = np.iinfo(np.int64).max
INT64_MIN = np.iinfo(np.int64).min


def _shape(rng: np.random.Generator, lo_rank: int = 1, hi_rank: int = 4,
           hi_dim: int = 5) -> tuple[int, ...]:
    rank = int(rng.integers(lo_rank, hi_rank + 1))
    return tuple(int(d) for d in rng.integers(1, hi_dim + 1, size=rank))


def _data(rng: np.random.Generator, shape) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def _i64(values) -> np.ndarray:
    return np.asarray(values, dtype=np.int64)


# --------------------------------------------------------------------------------------
# Cases, one builder per op
# --------------------------------------------------------------------------------------


def _prime_factors(n: int) -> list[int]:
    factors, p = [], 2
    while n > 1:
        while n % p == 0:
            factors.append(p)
            n //= p
        p += 1
    return factors


def reshape_case(seed: int) -> OnnxCase:
    rng = np.random.default_rng(seed)
    shape = _shape(rng)
    new_shape = [1] * int(rng.integers(1, 5))
    for factor in _prime_factors(int(np.prod(shape))):  # spread the factors over the dims
        new_shape[int(rng.integers(0, len(new_shape)))] *= factor
    return OnnxCase(
        mv.ReshapeOp, [_data(rng, shape)], {"shape": new_shape},
        [node("Reshape", ["in0", "shape"])], initializers={"shape": _i64(new_shape)},
    )


def transpose_case(seed: int) -> OnnxCase:
    rng = np.random.default_rng(seed)
    shape = _shape(rng, lo_rank=2)
    if seed == 2:  # no perm: reverse the dims, like ONNX
        return OnnxCase(mv.TransposeOp, [_data(rng, shape)], {}, [node("Transpose", ["in0"])])
    perm = [int(p) for p in rng.permutation(len(shape))]
    return OnnxCase(
        mv.TransposeOp, [_data(rng, shape)], {"perm": perm},
        [node("Transpose", ["in0"], perm=perm)],
    )


def _spread(rng: np.random.Generator, size: int, rank: int) -> list[int]:
    """A shape of `rank` dims holding `size` elements (its prime factors spread)."""
    shape = [1] * rank
    for factor in _prime_factors(size):
        shape[int(rng.integers(0, rank))] *= factor
    return shape


def relabel_case(seed: int) -> OnnxCase:
    """A Relabel is a reshape -> transpose -> reshape (seed 0: an attention head split)."""
    rng = np.random.default_rng(seed)
    if seed == 0:
        shape, view, perm, result = (1, 8, 12), [8, 3, 4], [1, 0, 2], [1, 3, 8, 4]
    else:
        shape = _shape(rng, lo_rank=2)
        size = int(np.prod(shape))
        view = _spread(rng, size, int(rng.integers(2, 5)))
        perm = [int(p) for p in rng.permutation(len(view))]
        result = _spread(rng, size, int(rng.integers(1, 5)))
    nodes = [
        helper.make_node("Reshape", ["in0", "view"], ["viewed"]),
        helper.make_node("Transpose", ["viewed"], ["moved"], perm=perm),
        helper.make_node("Reshape", ["moved", "shape"], ["out0"]),
    ]
    return OnnxCase(
        mv.RelabelOp, [_data(rng, shape)], {"shape": result, "view": view, "perm": perm},
        nodes, initializers={"view": _i64(view), "shape": _i64(result)},
    )


def broadcast_case(seed: int) -> OnnxCase:
    rng = np.random.default_rng(seed)
    target = list(_shape(rng, lo_rank=2))
    # the input: a suffix of the target with some dims set to 1
    shape = [d if rng.random() < 0.5 else 1 for d in target[int(rng.integers(0, 2)):]]
    if seed == 1:  # 1s in the target keep the input's dim; fewer dims than the input
        shape, target = [3, *shape], [1] * len(shape)
    return OnnxCase(
        mv.BroadCastOp, [_data(rng, shape)], {"shape": target},
        [node("Expand", ["in0", "shape"])], initializers={"shape": _i64(target)},
    )


def _slice_case(shape, starts, ends, axes=None, steps=None, seed: int = 0) -> OnnxCase:
    rng = np.random.default_rng(seed)
    names = ["in0", "starts", "ends"]
    inits = {"starts": _i64(starts), "ends": _i64(ends)}
    if axes is not None:
        names.append("axes")
        inits["axes"] = _i64(axes)
    if steps is not None:
        if axes is None:
            names.append("")
        names.append("steps")
        inits["steps"] = _i64(steps)
    attrs = {"starts": starts, "ends": ends, "axes": axes, "steps": steps}
    return OnnxCase(
        mv.SliceOp, [_data(rng, shape)], attrs, [node("Slice", names)],
        initializers=inits, opset=13,
    )


def slice_case(seed: int) -> OnnxCase:
    """Random starts/ends (possibly negative or out of range) and steps of either sign."""
    rng = np.random.default_rng(seed)
    shape = _shape(rng, lo_rank=2, hi_dim=7)
    rank = len(shape)
    axes = [int(a) for a in rng.choice(rank, size=int(rng.integers(1, rank + 1)),
                                       replace=False)]
    starts, ends, steps = [], [], []
    for axis in axes:
        dim = shape[axis]
        step = int(rng.choice([-3, -2, -1, 1, 2, 3]))
        start, end = (int(v) for v in rng.integers(-dim - 2, dim + 3, size=2))
        if (end - start) * step < 0:  # mostly non-empty slices
            start, end = end, start
        starts.append(start)
        ends.append(end)
        steps.append(step)
    axes = [a - rank if rng.random() < 0.5 else a for a in axes]  # some negative axes
    return _slice_case(shape, starts, ends, axes, steps, seed)


SLICE_EXTRA = [
    # INT64 sentinels: "to the end" forward and backward; default axes and steps
    _slice_case((4, 6), [1, INT64_MAX], [INT64_MAX, INT64_MIN], steps=[1, -1]),
    _slice_case((5, 8), [-3], [INT64_MAX]),
    # clamping of out-of-range starts/ends, negative step ending before index 0
    _slice_case((3, 4, 10), [-100, 20], [100, -20], axes=[0, 2], steps=[2, -3]),
    # an empty result, as ONNX allows
    _slice_case((3, 4), [3], [1], axes=[1]),
]


def concat_case(seed: int) -> OnnxCase:
    rng = np.random.default_rng(seed)
    shape = _shape(rng)
    rank = len(shape)
    axis = int(rng.integers(-rank, rank))
    n = 2 + seed  # 2, 3, 4 inputs
    inputs = []
    for _ in range(n):
        own = list(shape)
        own[axis] = int(rng.integers(1, 5))
        inputs.append(_data(rng, own))
    return OnnxCase(
        mv.ConcatenateOp, inputs, {"axis": axis},
        [node("Concat", [f"in{i}" for i in range(n)], axis=axis)],
    )


def split_case(seed: int) -> OnnxCase:
    rng = np.random.default_rng(seed)
    shape = list(_shape(rng))
    rank = len(shape)
    axis = int(rng.integers(-rank, rank))
    parts = (2, 3, 4)[seed % 3]
    sizes = [int(s) for s in rng.integers(1, 4, size=parts)]
    shape[axis] = sum(sizes)
    return OnnxCase(
        mv.SplitOp, [_data(rng, shape)], {"axis": axis, "split": sizes},
        [node("Split", ["in0", "split"], n_outputs=parts, axis=axis)],
        n_outputs=parts, initializers={"split": _i64(sizes)}, opset=13,
    )


def tile_case(seed: int) -> OnnxCase:
    rng = np.random.default_rng(seed)
    shape = _shape(rng)
    repeats = [int(r) for r in rng.integers(1, 4, size=len(shape))]
    repeats[int(rng.integers(0, len(repeats)))] = 2  # never all ones
    return OnnxCase(
        mv.TileOp, [_data(rng, shape)], {"repeats": repeats},
        [node("Tile", ["in0", "repeats"])], initializers={"repeats": _i64(repeats)},
    )


def pad_case(seed: int, mode: str | None = None) -> OnnxCase:
    """Seeds 0, 1, 2 pad in constant, reflect and edge mode."""
    rng = np.random.default_rng(seed)
    mode = mode or PAD_MODES_BY_SEED[seed % 3]
    shape = _shape(rng, hi_dim=6)
    limit = [d - 1 if mode == "reflect" else 3 for d in shape]  # reflect: pad < dim
    begins = [int(rng.integers(0, m + 1)) for m in limit]
    ends = [int(rng.integers(0, m + 1)) for m in limit]
    pads = begins + ends
    attrs: dict = {"pads": pads, "mode": mode}
    inits = {"pads": _i64(pads)}
    names = ["in0", "pads"]
    if mode == "constant":
        value = float(np.float32(rng.uniform(-3, 3)))
        attrs["value"] = value
        inits["value"] = np.array(value, np.float32)
        names.append("value")
    return OnnxCase(
        mv.PadOp, [_data(rng, shape)], attrs, [node("Pad", names, mode=mode)],
        initializers=inits, opset=19 if mode == "wrap" else 13,  # wrap: opset 19
    )


PAD_MODES_BY_SEED = ("constant", "reflect", "edge")

BUILDERS = {
    mv.ReshapeOp: reshape_case, mv.TransposeOp: transpose_case, mv.RelabelOp: relabel_case,
    mv.BroadCastOp: broadcast_case, mv.SliceOp: slice_case, mv.ConcatenateOp: concat_case,
    mv.SplitOp: split_case, mv.TileOp: tile_case, mv.PadOp: pad_case,
}

CASES = (
    [BUILDERS[op](s) for op in mv.OPS for s in RNG_SEEDS]
    + [slice_case(s) for s in range(3, 8)]
    + SLICE_EXTRA
    + [pad_case(s, "reflect") for s in range(3, 5)]
    + [pad_case(s, "constant") for s in range(3, 5)]
    + [pad_case(s, "wrap") for s in range(5, 9)]  # pads up to 3: some exceed their dim
)
IDS = [f"{c.id}-{i}" for i, c in enumerate(CASES)]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_matches_onnxruntime(case: OnnxCase) -> None:
    check_against_onnx(case)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_infer_shapes_matches_compute(case: OnnxCase) -> None:
    check_shapes(case)


# --------------------------------------------------------------------------------------
# Element types
# --------------------------------------------------------------------------------------

DTYPES = {
    "f32": np.dtype(np.float32), "f16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16), "i8": np.dtype(np.int8),
    "i32": np.dtype(np.int32), "i64": np.dtype(np.int64), "i1": np.dtype(np.bool_),
}


@pytest.mark.parametrize("dtype", sorted(DTYPES))
@pytest.mark.parametrize("op_cls", mv.OPS, ids=[op.name for op in mv.OPS])
def test_every_dtype_moves_data_exactly(op_cls, dtype: str) -> None:
    """Data movement commutes with an element-wise cast: the op on cast inputs equals
    onnxruntime's fp32 result cast the same way, bit for bit."""
    case = BUILDERS[op_cls](0)
    rng = np.random.default_rng(7)
    ints = [rng.integers(-3, 4, a.shape).astype(np.float32) for a in case.inputs]
    case = replace(case, inputs=ints)
    if op_cls is mv.PadOp:  # a fill value every dtype (even i1) represents
        case = replace(case, attrs={**case.attrs, "value": 1.0},
                       initializers={**case.initializers, "value": np.array(1.0, np.float32)})
    target = DTYPES[dtype]
    expected = [e.astype(target) for e in run_onnx(case)]
    got = run_op(op_cls, [a.astype(target) for a in case.inputs], **case.attrs)
    assert [g.dtype for g in got] == [target] * len(expected)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(g, e)


def _native(case: OnnxCase, dtype, value=None) -> OnnxCase:
    """The case with its inputs (and Pad's fill value) in another dtype, run natively."""
    rng = np.random.default_rng(11)
    inputs = [rng.integers(-100, 100, a.shape).astype(dtype) for a in case.inputs]
    case = replace(case, inputs=inputs)
    if value is not None:
        case = replace(case, attrs={**case.attrs, "value": float(value)},
                       initializers={**case.initializers, "value": np.array(value, dtype)})
    return case


@pytest.mark.parametrize(
    "case",
    [
        _native(pad_case(0), np.int32, value=-7),
        _native(pad_case(1), np.int64),
        _native(tile_case(1), np.bool_),
        _native(concat_case(2), np.int8),
        _native(slice_case(1), np.int64),
        _native(split_case(2), np.float16),
        _native(transpose_case(0), np.int32),
    ],
    ids=lambda c: c.id,
)
def test_matches_onnxruntime_in_other_dtypes(case: OnnxCase) -> None:
    check_against_onnx(case)


# --------------------------------------------------------------------------------------
# OpAttr
# --------------------------------------------------------------------------------------


def _make(op_cls, shapes, dtype=np.float32, **attrs):
    block = Block(arg_types=[tensor_of(np.zeros(s, dtype)) for s in shapes])
    return op_cls.make(list(block.args), **attrs)


@pytest.mark.parametrize(
    ("op", "align", "preset", "engine"),
    [
        (_make(mv.ReshapeOp, [(2, 6)], shape=[3, 4]), AlignMode.BOTH, False, Engine.LSU),
        (_make(mv.TransposeOp, [(2, 6)]), AlignMode.ALIGN, False, Engine.CT),
        # a relabel runs on no engine, in the families where it moves no bytes
        (_make(mv.RelabelOp, [(1, 8, 128)], shape=[1, 1, 8, 128]), AlignMode.BOTH, False,
         Engine.NONE),
        (_make(mv.RelabelOp, [(1, 128, 128)], shape=[1, 2, 128, 64], view=[128, 2, 64],
               perm=[1, 0, 2]), AlignMode.ALIGN, False, Engine.NONE),
        (_make(mv.RelabelOp, [(1, 128, 128)], shape=[128, 128]), AlignMode.NALIGN, False,
         Engine.NONE),
        (_make(mv.BroadCastOp, [(1, 6)], shape=[3, 6]), AlignMode.BOTH, False, Engine.CT),
        (_make(mv.ConcatenateOp, [(2, 6)] * 2, axis=0), AlignMode.ALIGN, True, Engine.CT),
        (_make(mv.SplitOp, [(2, 6)], split=[1, 1]), AlignMode.BOTH, False, Engine.CT),
        (_make(mv.TileOp, [(2, 6)], repeats=[2, 1]), AlignMode.BOTH, False, Engine.CT),
        (_make(mv.PadOp, [(2, 6)], pads=[0, 1, 0, 1]), AlignMode.ALIGN, True, Engine.CT),
    ],
    ids=lambda v: v.name if hasattr(v, "name") else str(v),
)
def test_op_attr(op, align, preset, engine) -> None:
    attr = op.query_op_attr()
    assert (attr.align_mode, attr.need_preset_to_npu, attr.engine) == (align, preset, engine)


@pytest.mark.parametrize(
    ("shape", "attrs", "align"),
    [
        ((1, 4, 128), {"starts": [1], "ends": [64], "axes": [2]}, AlignMode.NALIGN),
        # normalisation first: -64 is 64 on a dim of 128, INT64_MAX is 128
        ((1, 4, 128), {"starts": [3], "ends": [-64], "axes": [-1]}, AlignMode.NALIGN),
        ((2, 128), {"starts": [0, 5], "ends": [2, INT64_MAX]}, AlignMode.NALIGN),
        # start 0, an end off the 64 grid, or C not sliced: ALIGN
        ((1, 4, 128), {"starts": [0], "ends": [64], "axes": [2]}, AlignMode.ALIGN),
        ((1, 4, 128), {"starts": [1], "ends": [100], "axes": [2]}, AlignMode.ALIGN),
        ((1, 4, 128), {"starts": [1], "ends": [96], "axes": [2]}, AlignMode.ALIGN),
        ((1, 4, 128), {"starts": [1], "ends": [3], "axes": [1]}, AlignMode.ALIGN),
        # a backward slice ends at -1 ("before 0"), never a multiple of 64
        ((1, 128), {"starts": [100], "ends": [INT64_MIN], "axes": [1], "steps": [-1]},
         AlignMode.ALIGN),
    ],
)
def test_slice_align_rule_of_seed_000(shape, attrs, align) -> None:
    assert _make(mv.SliceOp, [shape], **attrs).query_op_attr().align_mode == align


# --------------------------------------------------------------------------------------
# Split's result count, and the errors infer_shapes raises when building
# --------------------------------------------------------------------------------------


def test_split_make_gives_one_result_per_size() -> None:
    op = _make(mv.SplitOp, [(2, 9, 3)], axis=1, split=[2, 3, 4])
    assert op.num_results() == len(op.results) == 3
    assert [tuple(r.type.get_shape()) for r in op.results] == [(2, 2, 3), (2, 3, 3), (2, 4, 3)]
    op.verify()


def test_split_result_count_is_verified() -> None:
    op = _make(mv.SplitOp, [(2, 9)], axis=1, split=[4, 5])
    short = mv.SplitOp.create(
        operands=list(op.operands), result_types=[op.results[0].type],
        attributes=dict(op.attributes),
    )
    with pytest.raises(OpRuleError, match="expects 2 result"):
        short.verify()


@pytest.mark.parametrize(
    ("op_cls", "shapes", "attrs", "message"),
    [
        (mv.ReshapeOp, [(2, 6)], {"shape": [5, 2]}, "cannot reshape"),
        (mv.ReshapeOp, [(2, 6)], {"shape": [-1, 6]}, "non-positive"),
        (mv.TransposeOp, [(2, 6)], {"perm": [0, 0]}, "not a permutation"),
        (mv.RelabelOp, [(2, 6)], {"shape": [5, 2]}, "hold the operand's 12 elements"),
        (mv.BroadCastOp, [(2, 6)], {"shape": [3, 6]}, "does not broadcast"),
        (mv.SliceOp, [(2, 6)], {"starts": [0], "ends": [1], "steps": [0]}, "zero entry"),
        (mv.ConcatenateOp, [(2, 6), (3, 5)], {"axis": 0}, "outside axis 0"),
        (mv.SplitOp, [(2, 6)], {"axis": 1, "split": [2, 3]}, "sums to 5"),
        (mv.TileOp, [(2, 6)], {"repeats": [2]}, "repeats has 1 entries"),
        (mv.PadOp, [(2, 6)], {"pads": [2, 0, 0, 0], "mode": "reflect"}, "smaller than"),
        (mv.PadOp, [(0, 6)], {"pads": [1, 0, 0, 0], "mode": "wrap"}, "non-empty dim"),
    ],
)
def test_make_rejects_inconsistent_attributes(op_cls, shapes, attrs, message) -> None:
    with pytest.raises(OpRuleError, match=message):
        _make(op_cls, shapes, **attrs)
