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

C_KERNEL_OPS = sorted([
    "Add", "Sub", "Mul", "Div", "Max", "Min", "Pow", "Mod", "Equal", "Less", "LessOrEqual",
    "Greater", "GreaterOrEqual", "And", "Or", "Where", "Relu", "LeakyRelu", "Clip",
    "Sigmoid", "Tanh", "Erf", "HardSigmoid", "Exp", "Log", "Sqrt", "Rsqrt", "Reciprocal",
    "Abs", "Neg", "Not", "Sin", "Cos", "Floor", "Ceil", "Round", "Atan", "Cast", "Conv",
    "Gemm", "BatchNorm_Inference", "LayerNorm", "RMSNorm", "Softmax", "Reduce", "Pool",
    "Reshape", "Transpose", "BroadCast", "Slice", "Concatenate", "Split", "Gather",
    "ChannelNorm", "LoadVar", "StoreVar",
])
"""The ops the C runtime has a kernel for (the others raise NoCKernelError)."""

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


def _whole_loops(op):
    from tx8c.interfaces.sharding import Window

    return Window.whole(op.loop_shape())


@pytest.fixture(scope="session")
def c_results(tmp_path_factory):
    rng = np.random.default_rng(22)
    builder = ProgramBuilder(rng)
    cases = []
    for name in C_KERNEL_OPS:
        for _ in range(CASES_PER_OP):
            case = random_slice_case(name, CASES[name], rng)
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
