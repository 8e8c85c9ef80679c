"""Reduce and Pool: compute vs onnxruntime, infer_shapes vs compute, OpAttr."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tests.helpers import (
    OnnxCase,
    check_against_onnx,
    check_shapes,
    node,
    run_onnx,
    run_op,
    single_op_module,
)
from tx8c.dialect.attrs import AlignMode
from tx8c.dialect.ops.reduce_pool import PoolOp, ReduceOp, pool_output_size
from tx8c.interfaces import Engine

RNG_SEEDS = (0, 1, 2)

# --------------------------------------------------------------------------------------
# Reduce: ONNX ReduceX at opset 18, axes as an initializer input
# --------------------------------------------------------------------------------------

ONNX_REDUCE = {
    "sum": "ReduceSum", "mean": "ReduceMean", "max": "ReduceMax", "min": "ReduceMin",
    "prod": "ReduceProd",
}


def _reduce_axes(rng: np.random.Generator, rank: int, seed: int) -> list[int]:
    """Seed 0: all axes (empty); seed 1: negative axes; seed 2: non-negative axes."""
    if seed == 0:
        return []
    count = int(rng.integers(1, rank + 1))
    axes = sorted(int(a) for a in rng.choice(rank, size=count, replace=False))
    return [a - rank for a in axes] if seed == 1 else axes


def reduce_case(mode: str, seed: int, dtype=np.float32) -> OnnxCase:
    rng = np.random.default_rng(seed)
    rank = int(rng.integers(1, 5))
    shape = tuple(int(d) for d in rng.integers(1, 5, size=rank))
    if np.issubdtype(dtype, np.integer):
        x = rng.integers(-5, 6, shape).astype(dtype)
        if mode == "prod":
            x = rng.choice(np.array([-2, -1, 1, 2], dtype), shape)
    elif mode == "prod":  # near 1 so the product stays well conditioned
        x = rng.uniform(0.5, 1.5, shape).astype(dtype)
    else:
        x = rng.standard_normal(shape).astype(dtype)
    axes = _reduce_axes(rng, rank, seed)
    keepdims = seed != 1
    inputs, inits = ["in0"], {}
    if axes:
        inputs.append("axes")
        inits["axes"] = np.array(axes, np.int64)
    return OnnxCase(
        ReduceOp, [x], {"mode": mode, "axes": axes, "keepdims": keepdims},
        [node(ONNX_REDUCE[mode], inputs, keepdims=int(keepdims))],
        initializers=inits, opset=18,
    )


REDUCE_CASES = [reduce_case(mode, s) for mode in ONNX_REDUCE for s in RNG_SEEDS]
REDUCE_INT_CASES = [
    reduce_case(mode, s, dtype)
    for mode, dtype in (("sum", np.int32), ("sum", np.int64), ("max", np.int8),
                        ("min", np.int32), ("prod", np.int64))
    for s in RNG_SEEDS
]


def _ids(cases: list[OnnxCase]) -> list[str]:
    return [f"{c.attrs.get('mode')}-{c.inputs[0].dtype}-{i % 3}" for i, c in enumerate(cases)]


@pytest.mark.parametrize("case", REDUCE_CASES + REDUCE_INT_CASES,
                         ids=_ids(REDUCE_CASES + REDUCE_INT_CASES))
def test_reduce_matches_onnxruntime(case: OnnxCase) -> None:
    check_against_onnx(case)


@pytest.mark.parametrize("case", REDUCE_CASES, ids=_ids(REDUCE_CASES))
def test_reduce_infer_shapes_matches_compute(case: OnnxCase) -> None:
    check_shapes(case)


def test_reduce_all_axes_without_keepdims_gives_a_scalar() -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    (got,) = run_op(ReduceOp, [x], mode="sum", keepdims=False)
    assert got.shape == ()
    assert got == 15


# --------------------------------------------------------------------------------------
# Pool: ONNX MaxPool / AveragePool / GlobalMaxPool / GlobalAveragePool (opset 19)
# --------------------------------------------------------------------------------------

TO_NCHW, TO_NHWC = [0, 3, 1, 2], [0, 2, 3, 1]


def _pool_nodes(onnx_op: str, nhwc: bool, **attrs) -> list:
    """The ONNX pool node, wrapped in transposes when the tx8be op reads NHWC."""
    if not nhwc:
        return [node(onnx_op, ["in0"], **attrs)]
    first = node("Transpose", ["in0"], perm=TO_NCHW)
    first.output[0] = "nchw"
    pool = node(onnx_op, ["nchw"], **attrs)
    pool.output[0] = "pooled"
    return [first, pool, node("Transpose", ["pooled"], perm=TO_NHWC)]


# Per seed: kernel, strides, pads, dilations, ceil_mode, count_include_pad, data_format.
MAX_SETTINGS = [
    ((3, 3), (2, 2), (1, 1, 1, 1), (1, 1), False, False, "NCHW"),
    ((2, 3), (2, 1), (1, 0, 0, 2), (2, 1), True, False, "NCHW"),
    ((3, 2), (3, 2), (0, 1, 2, 0), (1, 2), True, False, "NHWC"),
]
AVG_SETTINGS = [
    ((3, 3), (2, 2), (1, 1, 1, 1), (1, 1), False, False, "NCHW"),
    ((3, 2), (2, 2), (1, 1, 2, 0), (1, 1), True, True, "NCHW"),
    ((2, 3), (3, 2), (0, 2, 1, 1), (1, 1), True, False, "NHWC"),
]


def pool_case(mode: str, settings: tuple, seed: int, dtype=np.float32) -> OnnxCase:
    kernel, strides, pads, dilations, ceil_mode, include_pad, fmt = settings
    rng = np.random.default_rng(seed)
    n, c, h, w = (int(d) for d in (*rng.integers(1, 4, 2), *rng.integers(5, 11, 2)))
    shape = (n, c, h, w) if fmt == "NCHW" else (n, h, w, c)
    if np.issubdtype(dtype, np.integer):
        x = rng.integers(-100, 100, shape).astype(dtype)
    else:
        x = rng.standard_normal(shape).astype(dtype)
    attrs = {
        "mode": mode, "kernel": kernel, "strides": strides, "pads": pads,
        "ceil_mode": ceil_mode, "data_format": fmt,
    }
    onnx_attrs = {
        "kernel_shape": list(kernel), "strides": list(strides), "pads": list(pads),
        "ceil_mode": int(ceil_mode),
    }
    if mode == "max" or dilations != (1, 1):  # AveragePool takes dilations from opset 19
        attrs["dilations"] = onnx_attrs["dilations"] = dilations
    if mode == "max":
        onnx_op = "MaxPool"
    else:
        attrs["count_include_pad"] = include_pad
        onnx_attrs["count_include_pad"] = int(include_pad)
        onnx_op = "AveragePool"
    return OnnxCase(PoolOp, [x], attrs, _pool_nodes(onnx_op, fmt == "NHWC", **onnx_attrs),
                    opset=19)


def global_pool_case(mode: str, seed: int) -> OnnxCase:
    rng = np.random.default_rng(seed)
    shape = tuple(int(d) for d in rng.integers(1, 7, 4))
    fmt = "NHWC" if seed == 2 else "NCHW"
    attrs = {"mode": mode, "global_pool": True, "data_format": fmt}
    if seed == 1:  # a kernel is ignored by global pooling
        attrs["kernel"] = (2, 2)
    onnx_op = "GlobalMaxPool" if mode == "max" else "GlobalAveragePool"
    x = rng.standard_normal(shape).astype(np.float32)
    return OnnxCase(PoolOp, [x], attrs, _pool_nodes(onnx_op, fmt == "NHWC"), opset=19)


POOL_CASES = (
    [pool_case("max", MAX_SETTINGS[s], s) for s in RNG_SEEDS]
    + [pool_case("avg", AVG_SETTINGS[s], s) for s in RNG_SEEDS]
    + [global_pool_case("max", s) for s in RNG_SEEDS]
    + [global_pool_case("avg", s) for s in RNG_SEEDS]
)
POOL_IDS = [
    f"{kind}-{i % 3}" for i, kind in enumerate(
        ["max"] * 3 + ["avg"] * 3 + ["global_max"] * 3 + ["global_avg"] * 3
    )
]


@pytest.mark.parametrize("case", POOL_CASES, ids=POOL_IDS)
def test_pool_matches_onnxruntime(case: OnnxCase) -> None:
    check_against_onnx(case)


@pytest.mark.parametrize("case", POOL_CASES, ids=POOL_IDS)
def test_pool_infer_shapes_matches_compute(case: OnnxCase) -> None:
    check_shapes(case)


def _window_case(mode: str, size: int, kernel: int, stride: int, pads: tuple[int, int],
                 include_pad: bool = False) -> OnnxCase:
    """A ceil-mode pool over W only (H kernel 1), to pin down one spatial rule."""
    settings = ((1, kernel), (1, stride), (0, pads[0], 0, pads[1]), (1, 1), True,
                include_pad, "NCHW")
    case = pool_case(mode, settings, 0)
    case.inputs = [np.random.default_rng(7).standard_normal((1, 2, 3, size)).astype(np.float32)]
    return case


@pytest.mark.parametrize("mode", ["max", "avg"])
def test_ceil_mode_drops_a_window_starting_in_right_padding(mode: str) -> None:
    # W 4, kernel 3, stride 2, right pad 2: ceil((4 + 2 - 3) / 2) + 1 = 3 windows, but
    # the third would start at 4, inside the right padding, so there are 2.
    assert pool_output_size(4, 3, 2, 0, 2, 1, True) == 2
    case = _window_case(mode, 4, 3, 2, (0, 2))
    check_against_onnx(case)
    assert run_op(PoolOp, case.inputs, **case.attrs)[0].shape[-1] == 2


@pytest.mark.parametrize("include_pad", [False, True])
def test_avg_ceil_window_beyond_padding_divides_like_onnxruntime(include_pad: bool) -> None:
    # W 6, kernel 3, stride 2, pads (1, 1): ceil(5 / 2) + 1 = 4 windows; the last covers
    # input 5, the right pad and one position beyond the declared padding.
    assert pool_output_size(6, 3, 2, 1, 1, 1, True) == 4
    check_against_onnx(_window_case("avg", 6, 3, 2, (1, 1), include_pad))


def test_max_pool_int8_matches_onnxruntime() -> None:
    for seed in RNG_SEEDS:
        check_against_onnx(pool_case("max", MAX_SETTINGS[seed], seed, np.int8))


@pytest.mark.parametrize(
    ("op_cls", "case", "dtype"),
    [
        (ReduceOp, reduce_case("mean", 2), np.float16),
        (ReduceOp, reduce_case("sum", 1), ml_dtypes.bfloat16),
        (PoolOp, pool_case("avg", AVG_SETTINGS[1], 1), np.float16),
        (PoolOp, pool_case("max", MAX_SETTINGS[2], 2), ml_dtypes.bfloat16),
    ],
    ids=["reduce-mean-f16", "reduce-sum-bf16", "pool-avg-f16", "pool-max-bf16"],
)
def test_low_precision_matches_fp32_onnxruntime(op_cls, case: OnnxCase, dtype) -> None:
    """fp16/bf16 inputs give onnxruntime's fp32 result (on the same values), rounded."""
    low = case.inputs[0].astype(dtype)
    case.inputs = [low.astype(np.float32)]
    (expected,) = run_onnx(case)
    (got,) = run_op(op_cls, [low], **case.attrs)
    assert got.dtype == np.dtype(dtype)
    tol = 1e-2 if dtype == ml_dtypes.bfloat16 else 2e-3
    np.testing.assert_allclose(got.astype(np.float32), expected, rtol=tol, atol=tol)


def test_op_attrs() -> None:
    x = np.zeros((1, 4, 6, 6), np.float32)
    modules = [
        single_op_module(ReduceOp, [x], mode="max", axes=[1]),
        single_op_module(PoolOp, [x], mode="max", kernel=[2, 2]),
    ]
    for module, cls in zip(modules, (ReduceOp, PoolOp), strict=True):
        op = next(o for o in module.walk() if isinstance(o, cls))
        attr = op.query_op_attr()
        assert attr.align_mode == AlignMode.ALIGN
        assert attr.engine == Engine.CT
        assert not attr.need_preset_to_npu


# --------------------------------------------------------------------------------------
# Dilated average pooling (ONNX opset 19) and 3-D pooling (rank-5 NCDHW / NDHWC)
# --------------------------------------------------------------------------------------

# kernel, strides, pads, dilations, ceil_mode, count_include_pad, data_format
DILATED_AVG_SETTINGS = [
    ((3, 2), (1, 2), (1, 1, 2, 0), (2, 3), False, True, "NCHW"),
    ((2, 3), (2, 1), (1, 0, 1, 2), (3, 2), True, False, "NHWC"),
]


@pytest.mark.parametrize("seed", [0, 1])
def test_dilated_avg_pool_matches_onnxruntime(seed: int) -> None:
    case = pool_case("avg", DILATED_AVG_SETTINGS[seed], seed)
    check_against_onnx(case)
    check_shapes(case)


TO_NCDHW, TO_NDHWC = [0, 4, 1, 2, 3], [0, 2, 3, 4, 1]

# mode, kernel, strides, pads, dilations, ceil_mode, count_include_pad, data_format
POOL3D_SETTINGS = [
    ("max", (2, 3, 2), (2, 1, 2), (1, 0, 1, 0, 2, 1), (1, 1, 2), True, False, "NCDHW"),
    ("max", (3, 2, 2), (1, 2, 1), (0, 1, 0, 2, 0, 1), (2, 1, 1), False, False, "NDHWC"),
    ("avg", (3, 2, 2), (1, 2, 2), (1, 1, 0, 2, 0, 1), (2, 1, 1), False, True, "NCDHW"),
    ("avg", (2, 2, 3), (2, 2, 1), (0, 1, 1, 1, 1, 0), (1, 2, 1), True, False, "NDHWC"),
    ("avg", (2, 2, 2), None, None, None, False, False, "NCDHW"),  # the defaults
]


def pool3d_case(settings: tuple, seed: int) -> OnnxCase:
    mode, kernel, strides, pads, dilations, ceil_mode, include_pad, fmt = settings
    rng = np.random.default_rng(seed)
    n, c, d, h, w = (int(v) for v in (*rng.integers(1, 3, 2), *rng.integers(4, 8, 3)))
    shape = (n, c, d, h, w) if fmt == "NCDHW" else (n, d, h, w, c)
    x = rng.standard_normal(shape).astype(np.float32)
    attrs = {"mode": mode, "kernel": kernel, "strides": strides, "pads": pads,
             "dilations": dilations, "ceil_mode": ceil_mode}
    if fmt == "NDHWC":
        attrs["data_format"] = fmt
    onnx_attrs = {"kernel_shape": list(kernel), "ceil_mode": int(ceil_mode)}
    for name, value in (("strides", strides), ("pads", pads), ("dilations", dilations)):
        if value is not None:
            onnx_attrs[name] = list(value)
    if mode == "avg":
        attrs["count_include_pad"] = include_pad
        onnx_attrs["count_include_pad"] = int(include_pad)
    onnx_op = "MaxPool" if mode == "max" else "AveragePool"
    return OnnxCase(PoolOp, [x], attrs, _pool_nodes_nd(onnx_op, fmt == "NDHWC", **onnx_attrs),
                    opset=19)


def global_pool3d_case(mode: str, fmt: str, seed: int) -> OnnxCase:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(tuple(int(d) for d in rng.integers(1, 6, 5))).astype(np.float32)
    onnx_op = "GlobalMaxPool" if mode == "max" else "GlobalAveragePool"
    attrs = {"mode": mode, "global_pool": True, "data_format": fmt}
    return OnnxCase(PoolOp, [x], attrs, _pool_nodes_nd(onnx_op, fmt == "NDHWC"), opset=19)


def _pool_nodes_nd(onnx_op: str, channels_last: bool, **attrs) -> list:
    """The ONNX pool node on rank-5 data, wrapped in transposes for NDHWC."""
    if not channels_last:
        return [node(onnx_op, ["in0"], **attrs)]
    first = node("Transpose", ["in0"], perm=TO_NCDHW)
    first.output[0] = "first"
    pool = node(onnx_op, ["first"], **attrs)
    pool.output[0] = "pooled"
    return [first, pool, node("Transpose", ["pooled"], perm=TO_NDHWC)]


POOL3D_CASES = [pool3d_case(s, i) for i, s in enumerate(POOL3D_SETTINGS)] + [
    global_pool3d_case("max", "NCDHW", 5), global_pool3d_case("avg", "NDHWC", 6),
]
POOL3D_IDS = [f"{s[0]}-{s[-1]}-{i}" for i, s in enumerate(POOL3D_SETTINGS)] + [
    "global_max-NCDHW", "global_avg-NDHWC",
]


@pytest.mark.parametrize("case", POOL3D_CASES, ids=POOL3D_IDS)
def test_pool3d_matches_onnxruntime(case: OnnxCase) -> None:
    check_against_onnx(case)
    check_shapes(case)


def test_pool3d_defaults_stand_for_3d_ones_and_zeros() -> None:
    x = np.zeros((1, 2, 4, 5, 6), np.float32)
    module = single_op_module(PoolOp, [x], mode="max", kernel=[2, 3, 4])
    op = next(o for o in module.walk() if isinstance(o, PoolOp))
    assert op.window("strides") == (1, 1, 1)
    assert op.window("pads") == (0,) * 6
    assert op.window("dilations") == (1, 1, 1)
    assert op.spatial_format() == "NCDHW"
    assert op.spatial_axes() == (2, 3, 4)
    assert op.results[0].type.get_shape() == (1, 2, 3, 3, 3)


def test_pool3d_permute_attributes() -> None:
    """NCDHW <-> NDHWC: the permuted op on the permuted input gives the permuted result."""
    x = np.random.default_rng(3).standard_normal((1, 2, 5, 4, 6)).astype(np.float32)
    attrs = {"mode": "avg", "kernel": (2, 2, 3), "strides": (1, 2, 1),
             "pads": (1, 0, 1, 0, 1, 1), "count_include_pad": True}
    module = single_op_module(PoolOp, [x], **attrs)
    op = next(o for o in module.walk() if isinstance(o, PoolOp))
    assert op.permute_attributes((0, 2, 1, 3, 4)) is None
    new = op.permute_attributes(TO_NDHWC)
    assert new == {"data_format": "NDHWC"}
    (expected,) = run_op(PoolOp, [x], **attrs)
    (got,) = run_op(PoolOp, [x.transpose(TO_NDHWC)], **{**attrs, **new})
    np.testing.assert_allclose(got, expected.transpose(TO_NDHWC), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("mode, expected", [("max", [True, False]), ("min", [False, False])])
def test_bool_max_is_any_and_min_is_all(mode: str, expected: list[bool]) -> None:
    from tests.helpers import run_op

    x = np.array([[True, False, True], [False, False, False]])
    (got,) = run_op(ReduceOp, [x], mode=mode, axes=[1], keepdims=False)
    np.testing.assert_array_equal(got, expected)
