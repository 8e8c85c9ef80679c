"""The C runtime's kernels against the ops' `compute_slice` (issue 12, part 4).

Every op with a C kernel gets random cases (the slicing cases: random shapes, dtypes,
attributes) and a random slice of a random partition of each. All cases go into one
Program (one group per slice; DMA in, kernel, DMA out, with random layouts in DDR and
SPM), emitted, compiled and run once per session. The C result window must equal the
Python `compute_slice` result cast to the result type, bit for bit, except for the ops
that call a transcendental function: numpy computes exp/log/sin/... of float32 with its
own SIMD routines, C with libm, and the two differ by an ulp now and then; those are
held to a few ulps.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.unit.codegen.slice_programs import ProgramBuilder, random_slice_case
from tests.unit.sharding.cases import CASES
from tests.unit.sharding.test_slice_equivalence import build
from tx8c.codegen.c_backend import find_compiler, run_c
from tx8c.dialect.ops import indexing, movement, quant, resize, sort

C_KERNEL_OPS = sorted([
    "Add", "Sub", "Mul", "Div", "Max", "Min", "Pow", "Mod", "Equal", "Less", "LessOrEqual",
    "Greater", "GreaterOrEqual", "And", "Or", "Where", "Relu", "LeakyRelu", "Clip",
    "Sigmoid", "Tanh", "Erf", "HardSigmoid", "Exp", "Log", "Sqrt", "Rsqrt", "Reciprocal",
    "Abs", "Neg", "Not", "Sin", "Cos", "Floor", "Ceil", "Round", "Atan", "Cast", "Conv",
    "Gemm", "BatchNorm_Inference", "LayerNorm", "RMSNorm", "Softmax", "Reduce", "Pool",
    "Reshape", "Transpose", "BroadCast", "Slice", "Concatenate", "Split", "Gather",
    "ChannelNorm", "LoadVar", "StoreVar", "Tile", "Pad", "Resize", "TopK", "GatherElements",
    "ScatterND", "MatMulInteger", "ConvInteger",
])
"""The ops the C runtime has a kernel for (the others raise NoCKernelError)."""

NO_C_KERNEL = {
    "Gelu": "no TX8 kernel (has_kernel False): legalize decomposes it before the backend",
    "Silu": "no TX8 kernel (has_kernel False): legalize decomposes it before the backend",
    "HardSwish": "no TX8 kernel (has_kernel False): legalize decomposes it before the "
                 "backend",
    "Relabel": "moves no bytes (engine NONE): lowering emits no kernel, its result aliases "
               "its operand's bytes",
    "Constant": "compile time: folded into the constants region, never lowered",
    "LoadConst": "a DDR constant: lowering reads it with a DMA, no kernel",
    "Group": "a region of ops: lowered op by op",
    "Yield": "the terminator of a Group's region: no computation",
}
"""The tx8be ops without a C kernel, each with why the C backend never needs one."""



# -- cases beyond the slicing cases: the paths of the newer kernels those leave out ---------


def _scatter_reduce(rng):
    """ScatterND with a reduction and repeated indices (updates applied in order)."""
    dtype = [np.float32, np.float16, np.int32, np.int8][int(rng.integers(4))]
    data_shape = tuple(int(d) for d in rng.integers(1, 5, int(rng.integers(1, 4))))
    q = int(rng.integers(1, len(data_shape) + 1))
    rows = int(rng.integers(1, 6))
    indices = np.stack([rng.integers(-d, d, rows) for d in data_shape[:q]], axis=-1)
    values = (rng.integers(-9, 9, data_shape), rng.integers(-9, 9, (rows, *data_shape[q:])))
    if dtype in (np.float32, np.float16):
        values = tuple(v + rng.random(v.shape) for v in values)
    data, updates = (v.astype(dtype) for v in values)
    reduction = ["add", "mul", "max", "min"][int(rng.integers(4))]
    return indexing.ScatterNDOp, [data, indices.astype(np.int64), updates], \
        {"reduction": reduction}


def _pad_int(rng):
    shape = tuple(int(d) for d in rng.integers(2, 6, int(rng.integers(1, 4))))
    mode = ["constant", "reflect", "edge", "wrap"][int(rng.integers(4))]
    high = [d if mode == "reflect" else d + 3 for d in shape]
    pads = [int(rng.integers(0, h)) for h in high] * 2
    x = rng.integers(-100, 100, shape).astype([np.int8, np.int32, np.int64][
        int(rng.integers(3))])
    return movement.PadOp, [x], {"pads": pads, "mode": mode,
                                 "value": float(rng.integers(-3, 3))}


def _resize_crop(rng):
    """Resize with "tf_crop_and_resize": outputs outside the roi get the extrapolation
    value."""
    mode = ["nearest", "bilinear", "bicubic"][int(rng.integers(3))]
    shape = tuple(int(d) for d in rng.integers(1, 6, 4))
    sizes = [shape[0], shape[1], int(rng.integers(1, 9)), int(rng.integers(1, 9))]
    roi = [0.0, 0.0, float(rng.uniform(-0.3, 0.5)), float(rng.uniform(-0.3, 0.5)),
           1.0, 1.0, float(rng.uniform(0.5, 1.3)), float(rng.uniform(0.5, 1.3))]
    x = rng.standard_normal(shape).astype(np.float32)
    return resize.ResizeOp, [x], dict(
        mode=mode, sizes=sizes, coordinate_transformation_mode="tf_crop_and_resize",
        roi=roi, extrapolation_value=float(rng.uniform(-2, 2)))


def _topk_nan(rng):
    shape = tuple(int(d) for d in rng.integers(1, 9, int(rng.integers(1, 4))))
    x = rng.integers(-3, 3, shape).astype(np.float32)
    x[rng.random(shape) < 0.2] = np.nan
    axis = int(rng.integers(len(shape)))
    return sort.TopKOp, [x], {"k": int(rng.integers(0, shape[axis] + 1)), "axis": axis,
                              "largest": bool(rng.random() < 0.5)}


def _matmul_integer_wide(rng):
    """i32 operands whose products overflow int32: the sum wraps like the accumulator."""
    m, k, n = (int(v) for v in rng.integers(1, 7, 3))
    a = rng.integers(-2**31, 2**31, (m, k)).astype(np.int32)
    b = rng.integers(-2**31, 2**31, (k, n)).astype(np.int32)
    return quant.MatMulIntegerOp, [a, b], {}


def _conv_integer_wide(rng):
    """i32 ConvInteger with sums far past 2^24 (exact, wrapping)."""
    x = rng.integers(-2**20, 2**20, (1, 4, 5, 5)).astype(np.int32)
    w = rng.integers(-2**20, 2**20, (3, 4, 3, 3)).astype(np.int32)
    return quant.ConvIntegerOp, [x, w], {"pads": [1, 1, 1, 1]}


EXTRA_CASES = {"ScatterND": _scatter_reduce, "Pad": _pad_int, "Resize": _resize_crop,
               "TopK": _topk_nan, "MatMulInteger": _matmul_integer_wide,
               "ConvInteger": _conv_integer_wide}
"""More cases for the ops listed (as many as CASES_PER_OP again)."""

TRANSCENDENTAL = {"Pow", "Sigmoid", "Tanh", "Exp", "Log", "Sin", "Cos", "Atan", "Softmax",
                  "Erf"}
MAX_ULPS = 4
CASES_PER_OP = 12

pytestmark = pytest.mark.skipif(find_compiler() is None, reason="no C compiler found")


def test_ops_without_a_kernel_answer_none():
    """Every op outside C_KERNEL_OPS says it has no C kernel (gen_op_code None), every
    op in it has one."""
    rng = np.random.default_rng(22)
    for name, make in sorted(CASES.items()):
        op, _ = build(make(rng))
        code = op.gen_op_code(_whole_loops(op))
        assert (code is not None) == (name in C_KERNEL_OPS), name


def test_every_op_has_a_c_kernel_or_a_reason():
    """Every tx8be op class of tx8c/dialect/ops/ is either in C_KERNEL_OPS (with slicing
    cases, so the kernel is tested below) or in NO_C_KERNEL with the reason it needs
    none: a new op without a C kernel fails here until it gets one or a reason."""
    from tx8c.dialect.ops import families

    names = {cls.name.removeprefix("tx8be.") for module in families() for cls in module.OPS}
    missing = sorted(names - set(C_KERNEL_OPS) - set(NO_C_KERNEL))
    assert not missing, f"ops with neither a C kernel nor a reason: {missing}"
    assert not set(C_KERNEL_OPS) & set(NO_C_KERNEL)
    assert set(C_KERNEL_OPS) <= set(CASES) and set(C_KERNEL_OPS) <= names


def _whole_loops(op):
    from tx8c.interfaces.sharding import Window

    return Window.whole(op.loop_shape())


@pytest.fixture(scope="session")
def c_results(tmp_path_factory):
    rng = np.random.default_rng(22)
    builder = ProgramBuilder(rng)
    cases = []
    for name in C_KERNEL_OPS:
        for make in (CASES[name], EXTRA_CASES.get(name)):
            for _ in range(CASES_PER_OP if make else 0):
                case = random_slice_case(name, make, rng)
                builder.add(case)
                cases.append(case)
    outputs = run_c(builder.program(), builder.arrays, None, tmp_path_factory.mktemp("c"),
                    ops=builder.ops)
    return cases, outputs


def ulps(a: np.ndarray, b: np.ndarray) -> int:
    """The largest distance in units in the last place between same-typed floats."""
    bits = {2: np.int16, 4: np.int32, 8: np.int64}[a.dtype.itemsize]
    ia = np.ascontiguousarray(a).view(bits).astype(np.int64)
    ib = np.ascontiguousarray(b).view(bits).astype(np.int64)
    sign = np.int64(1) << (8 * a.dtype.itemsize - 1)
    ia = np.where(ia < 0, -(ia + sign), ia)  # sign-magnitude to a monotonic integer line
    ib = np.where(ib < 0, -(ib + sign), ib)
    return int(np.max(np.abs(ia - ib))) if ia.size else 0


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


@pytest.mark.parametrize("name", C_KERNEL_OPS)
def test_c_kernel_equals_compute_slice(c_results, name):
    cases, outputs = c_results
    for case in (c for c in cases if c.name == name):
        for expected, window, at in zip(case.expected, case.windows, case.outputs_at,
                                        strict=True):
            if expected is None:
                continue
            got = outputs[at][window.slices()]
            assert got.dtype == expected.dtype and got.shape == expected.shape
            where = f"{name} slice {case.loops} of {[list(a.shape) for a in case.inputs]}"
            if name in TRANSCENDENTAL and expected.dtype.kind in "fV":
                assert np.array_equal(np.isnan(got.astype(np.float64)),
                                      np.isnan(expected.astype(np.float64))), where
                finite = ~np.isnan(expected.astype(np.float64))
                assert ulps(got[finite], expected[finite]) <= MAX_ULPS, where
            else:
                assert same_bits(got, expected), where
