"""The byte-level cmodel (issue 4, item 7) against the reference executor.

- With no dev_info (everything compact), and with every op channel-aligned behind
  ChannelNorms, the cmodel equals the reference bit for bit, on hand-built graphs and on
  the bundled example models.
- A missing or misdirected ChannelNorm makes the answer wrong wherever aligned and compact
  bytes differ; where they are identical (f32 with C = 64, single-batch f16 with C = 64)
  the answer stays right, as documented.
- Hypothesis: random DAGs with random, correctly placed dev_info and ChannelNorms.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue

from examples.make_models import MODELS
from tx8c.dialect.attrs import DevAttr, LayoutMode
from tx8c.dialect.base import to_attr
from tx8c.dialect.layout import mem_layout_for
from tx8c.dialect.ops.backend import (
    ChannelNormOp,
    ConstantOp,
    GroupOp,
    LoadConstOp,
    LoadVarOp,
    StoreVarOp,
)
from tx8c.dialect.ops.conv_gemm import ConvOp, GemmOp
from tx8c.dialect.ops.elementwise import (
    AbsOp,
    AddOp,
    ExpOp,
    MaxOp,
    MulOp,
    NegOp,
    ReluOp,
    SubOp,
    TanhOp,
)
from tx8c.dialect.ops.movement import ConcatenateOp, ReshapeOp, TransposeOp
from tx8c.dialect.ops.norm import SoftmaxOp
from tx8c.dialect.types import tensor_of
from tx8c.errors import Tx8ComputeError
from tx8c.frontend.onnx.importer import import_onnx
from tx8c.frontend.onnx.runtime import random_inputs
from tx8c.sim.cmodel import CModel, run_cmodel
from tx8c.sim.reference import run_reference
from tx8c.target.mem_layout import byte_size

NP_DTYPES = {
    "f32": np.dtype(np.float32),
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "i8": np.dtype(np.int8),
}


# --------------------------------------------------------------------------------------
# Building graphs
# --------------------------------------------------------------------------------------


def rand(shape, dtype: str, rng: np.random.Generator) -> np.ndarray:
    if dtype == "i8":
        return rng.integers(-128, 128, shape).astype(np.int8)
    return rng.standard_normal(shape).astype(NP_DTYPES[dtype])


def dev(layout: LayoutMode) -> DevAttr:
    return DevAttr.make(mem_layout=layout)


def set_family(op: Operation, aligned: bool) -> None:
    """dev_info with the mem_layout of the op's result in the given family."""
    shape = tuple(op.results[0].type.get_shape())
    op.attributes["dev_info"] = dev(mem_layout_for(shape, aligned))


class Graph:
    """A main function built op by op.

    With `aligned`, every op gets a channel-aligned dev_info, inputs enter through
    ChannelNorm(true) and outputs leave through ChannelNorm(false): a correct placement.
    Without it, nothing has dev_info (all compact).
    """

    def __init__(self, *inputs: np.ndarray, aligned: bool = False):
        self.inputs = list(inputs)
        self.aligned = aligned
        self.block = Block(arg_types=[tensor_of(a) for a in inputs])

    def add(self, op: Operation) -> Operation:
        self.block.add_op(op)
        return op

    def arg(self, i: int) -> SSAValue:
        value = self.block.args[i]
        return self.cn(value, True) if self.aligned else value

    def op(self, cls, *operands: SSAValue, **attrs) -> SSAValue:
        op = self.add(cls.make(list(operands), **attrs))
        if self.aligned:
            set_family(op, True)
        return op.results[0]

    def const(self, array: np.ndarray) -> SSAValue:
        op = self.add(ConstantOp.from_array(array))
        if self.aligned:
            set_family(op, True)
        return op.results[0]

    def cn(self, value: SSAValue, direction: bool) -> SSAValue:
        op = self.add(ChannelNormOp.make([value], direction=direction))
        set_family(op, direction)
        return op.results[0]

    def module(self, *outs: SSAValue) -> ModuleOp:
        if self.aligned:
            outs = tuple(self.cn(v, False) for v in outs)
        self.block.add_op(func.ReturnOp(*outs))
        function = func.FuncOp(
            "main",
            ([a.type for a in self.block.args], [v.type for v in outs]),
            Region(self.block),
        )
        module = ModuleOp([function])
        module.verify()
        return module


def channel_norms(module: ModuleOp) -> list[ChannelNormOp]:
    return [op for op in module.walk() if isinstance(op, ChannelNormOp)]


def remove(op: Operation) -> None:
    """Rewire the op's users to its operand and erase it (a forgotten conversion)."""
    op.results[0].replace_all_uses_with(op.operands[0])
    op.detach()
    op.erase()


def flip(op: ChannelNormOp) -> None:
    """A misdirected conversion: only the direction changes, dev_info stays."""
    op.attributes["direction"] = to_attr("bool", not op.attr("direction"))


def assert_bit_exact(got: list[np.ndarray], want: list[np.ndarray]) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert g.tobytes() == w.tobytes()


def differs(got: list[np.ndarray], want: list[np.ndarray]) -> bool:
    return any(g.tobytes() != w.tobytes() for g, w in zip(got, want, strict=True))


def check_equal(module: ModuleOp, inputs, constants=None) -> None:
    assert_bit_exact(
        run_cmodel(module, inputs, constants), run_reference(module, inputs, constants)
    )


# --------------------------------------------------------------------------------------
# Small graphs: all compact, and all aligned behind ChannelNorms
# --------------------------------------------------------------------------------------

RNG = np.random.default_rng(7)


def conv(aligned: bool, dtype: str = "f32") -> tuple[ModuleOp, list[np.ndarray]]:
    g = Graph(rand((1, 3, 6, 5), dtype, RNG), aligned=aligned)
    w = g.const(rand((4, 3, 3, 3), dtype, RNG))
    b = g.const(rand((4,), dtype, RNG))
    y = g.op(ConvOp, g.arg(0), w, b, pads=[1, 1, 1, 1])
    return g.module(g.op(ReluOp, y)), g.inputs


def gemm(aligned: bool, dtype: str = "f32") -> tuple[ModuleOp, list[np.ndarray]]:
    g = Graph(rand((2, 5, 7), dtype, RNG), rand((7, 3), dtype, RNG), aligned=aligned)
    bias = g.const(rand((3,), dtype, RNG))
    return g.module(g.op(GemmOp, g.arg(0), g.arg(1), bias)), g.inputs


def broadcast(aligned: bool, dtype: str = "f32") -> tuple[ModuleOp, list[np.ndarray]]:
    g = Graph(rand((2, 3, 5), dtype, RNG), rand((5,), dtype, RNG), aligned=aligned)
    s = g.op(AddOp, g.arg(0), g.arg(1))
    m = g.op(MulOp, s, g.const(rand((2, 1, 5), dtype, RNG)))
    return g.module(g.op(SubOp, m, g.const(rand((3, 1), dtype, RNG)))), g.inputs


def softmax(aligned: bool, dtype: str = "f32") -> tuple[ModuleOp, list[np.ndarray]]:
    g = Graph(rand((2, 3, 33), dtype, RNG), aligned=aligned)
    return g.module(g.op(SoftmaxOp, g.arg(0), axis=-1)), g.inputs


def reshape(aligned: bool, dtype: str = "f32") -> tuple[ModuleOp, list[np.ndarray]]:
    g = Graph(rand((2, 3, 4), dtype, RNG), aligned=aligned)
    r = g.op(ReshapeOp, g.arg(0), shape=[4, 6])
    return g.module(g.op(ReshapeOp, r, shape=[3, 8])), g.inputs


def transpose(aligned: bool, dtype: str = "f32") -> tuple[ModuleOp, list[np.ndarray]]:
    g = Graph(rand((2, 3, 67), dtype, RNG), aligned=aligned)
    t = g.op(TransposeOp, g.arg(0), perm=[2, 0, 1])
    return g.module(g.op(TransposeOp, t, perm=[0, 2, 1])), g.inputs


def concat(aligned: bool, dtype: str = "f32") -> tuple[ModuleOp, list[np.ndarray]]:
    g = Graph(rand((2, 3, 5), dtype, RNG), rand((2, 4, 5), dtype, RNG), aligned=aligned)
    c = g.op(ConcatenateOp, g.arg(0), g.arg(1), axis=1)
    return g.module(g.op(ConcatenateOp, c, g.arg(0), axis=1)), g.inputs


GRAPHS: dict[str, Callable] = {
    "conv": conv,
    "gemm": gemm,
    "broadcast": broadcast,
    "softmax": softmax,
    "reshape": reshape,
    "transpose": transpose,
    "concat": concat,
}


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("aligned", [False, True], ids=["compact", "aligned"])
@pytest.mark.parametrize("name", list(GRAPHS))
def test_small_graphs_equal_reference(name: str, aligned: bool, dtype: str) -> None:
    module, inputs = GRAPHS[name](aligned, dtype)
    check_equal(module, inputs)


def test_compact_graph_has_no_dev_info() -> None:
    module, _ = conv(False)
    assert all(getattr(op, "dev_info", None) is None for op in module.walk())


@pytest.mark.parametrize("name", sorted(MODELS))
def test_bundled_examples_equal_reference(name: str) -> None:
    model = MODELS[name]()
    inputs = random_inputs(model, seed=3)
    module = import_onnx(model).module
    check_equal(module, inputs)


# --------------------------------------------------------------------------------------
# Missing and misdirected ChannelNorms
# --------------------------------------------------------------------------------------


def chain(shape, dtype: str) -> tuple[ModuleOp, list[np.ndarray]]:
    """x -> ChannelNorm(true) -> Relu (aligned) -> ChannelNorm(false) -> Neg (compact).

    The Neg has no dev_info: it reads compact, so the second conversion matters too.
    """
    g = Graph(rand(shape, dtype, RNG))
    a = g.cn(g.block.args[0], True)
    r = g.op(ReluOp, a)
    set_family(r.owner, True)
    back = g.cn(r, False)
    return g.module(g.op(NegOp, back)), g.inputs


# C not a multiple of the padding step: aligned and compact bytes differ.
DIFFERING = [
    ((2, 4, 131), "f16"),  # the seed's C = 131: two blocks + 3 padded to 4, batched
    ((1, 5, 3), "f32"),  # Cx, C = 3 padded to 4
    ((2, 3, 5, 3), "f32"),  # NCx, rank 4
    ((3, 7), "bf16"),  # rank 2: N = 3, HW = 1, C = 7 padded to 8, batch alignment
    ((2, 3, 130), "i8"),  # int8: one block of 128 + 2 padded to 4
    ((1, 4, 100), "i8"),  # int8: C = 100 > 64 padded to a block of 128
    ((2, 3, 64), "f16"),  # f16 C = 64: no channel padding, but batch 1 moves (384 -> 512)
]


@pytest.mark.parametrize(("shape", "dtype"), DIFFERING)
def test_chain_with_channel_norms_equals_reference(shape, dtype: str) -> None:
    module, inputs = chain(shape, dtype)
    check_equal(module, inputs)


@pytest.mark.parametrize("which", [0, 1])
@pytest.mark.parametrize(("shape", "dtype"), DIFFERING)
def test_missing_channel_norm_gives_a_wrong_answer(shape, dtype: str, which: int) -> None:
    module, inputs = chain(shape, dtype)
    remove(channel_norms(module)[which])
    module.verify()
    assert differs(run_cmodel(module, inputs), run_reference(module, inputs))


@pytest.mark.parametrize("which", [0, 1])
@pytest.mark.parametrize(("shape", "dtype"), DIFFERING)
def test_misdirected_channel_norm_gives_a_wrong_answer(shape, dtype: str, which: int) -> None:
    module, inputs = chain(shape, dtype)
    flip(channel_norms(module)[which])
    assert differs(run_cmodel(module, inputs), run_reference(module, inputs))


def test_misdirected_channel_norm_with_matching_dev_info_is_wrong_too() -> None:
    module, inputs = chain((2, 4, 131), "f16")
    cn = channel_norms(module)[0]
    flip(cn)
    set_family(cn, False)
    assert differs(run_cmodel(module, inputs), run_reference(module, inputs))


# Documented equalities: the aligned bytes are the compact bytes.
# - f32, C = 64: one full block of 64 channels, no remainder, and a batch is HW * 256
#   bytes, already on the 256-byte batch alignment: NCx == NTensor, Cx == Tensor.
# - f16, C = 64, one batch (Cx): no padding and no batch to align.
# - f16, C = 64 with HW * 128 a multiple of 256 (HW even): NCx == NTensor.
SAME_BYTES = [((2, 3, 64), "f32"), ((1, 5, 64), "f32"), ((3, 2, 2, 64), "f32"),
              ((1, 5, 64), "f16"), ((2, 2, 64), "f16")]


@pytest.mark.parametrize(("shape", "dtype"), SAME_BYTES)
def test_without_channel_norms_identical_layouts_still_agree(shape, dtype: str) -> None:
    module, inputs = chain(shape, dtype)
    for cn in channel_norms(module):
        remove(cn)
    check_equal(module, inputs)


def test_missing_final_channel_norm_gives_a_wrong_answer() -> None:
    """Graph outputs are read compact (NALIGN), so an aligned value returned without its
    ChannelNorm(false) reads wrongly."""
    module, inputs = conv(True)
    last = channel_norms(module)[-1]
    assert not last.attr("direction")
    remove(last)
    assert differs(run_cmodel(module, inputs), run_reference(module, inputs))


def test_cx_written_where_ncx_is_read_is_wrong() -> None:
    """dev_info's exact layout counts: Cx on a batched value is not NCx."""
    x = rand((2, 3, 5), "f32", RNG)
    g = Graph(x)
    a = g.cn(g.block.args[0], True)
    a.owner.attributes["dev_info"] = dev(LayoutMode.Cx)  # should be NCx for N = 2
    r = g.op(ReluOp, a)
    set_family(r.owner, True)
    module = g.module(g.op(NegOp, g.cn(r, False)))
    assert differs(run_cmodel(module, [x]), run_reference(module, [x]))


def test_input_read_as_aligned_without_conversion_is_wrong() -> None:
    module, inputs = gemm(True)
    remove(channel_norms(module)[0])
    assert differs(run_cmodel(module, inputs), run_reference(module, inputs))


# --------------------------------------------------------------------------------------
# Constants, LoadConst, groups, DMA
# --------------------------------------------------------------------------------------


def test_aligned_constant_is_packed_aligned() -> None:
    """An aligned constant needs no ChannelNorm before an aligned op; a compact one does."""
    x, c = rand((2, 3, 5), "f16", RNG), rand((2, 3, 5), "f16", RNG)
    for const_aligned, expect_equal in ((True, True), (False, False)):
        g = Graph(x)
        k = g.add(ConstantOp.from_array(c))
        set_family(k, const_aligned)
        s = g.op(AddOp, g.cn(g.block.args[0], True), k.results[0])
        set_family(s.owner, True)
        module = g.module(g.cn(s, False))
        got, want = run_cmodel(module, [x]), run_reference(module, [x])
        assert (not differs(got, want)) is expect_equal


def _load_const_graph(x: np.ndarray, c: np.ndarray, layout: LayoutMode | None) -> ModuleOp:
    g = Graph(x)
    k = g.add(LoadConstOp.make([], [tensor_of(c)], const_id=3))
    if layout is not None:
        k.attributes["dev_info"] = dev(layout)
    s = g.op(MulOp, g.cn(g.block.args[0], True), k.results[0])
    set_family(s.owner, True)
    return g.module(g.cn(s, False))


def test_load_const_uses_the_constant_container_and_its_dev_info() -> None:
    x, c = rand((2, 3, 67), "f32", RNG), rand((2, 3, 67), "f32", RNG)
    check_equal(_load_const_graph(x, c, LayoutMode.NCx), [x], {3: c})
    compact = _load_const_graph(x, c, None)
    assert differs(run_cmodel(compact, [x], {3: c}), run_reference(compact, [x], {3: c}))


def test_groups_pass_buffers_through_and_dma_moves_bytes() -> None:
    """Wrap everything in a group, add LoadVar/StoreVar inside: still equal, and an aligned
    value yielded out of the group keeps its layout."""
    x = rand((2, 4, 131), "f16", RNG)
    g = Graph(x)
    a = g.cn(g.block.args[0], True)
    load = g.add(LoadVarOp.make([a]))
    set_family(load, True)
    r = g.op(TanhOp, load.results[0])
    set_family(r.owner, True)
    store = g.add(StoreVarOp.make([r]))
    set_family(store, True)
    t = g.op(TransposeOp, store.results[0], perm=[1, 0, 2])
    set_family(t.owner, True)
    module = g.module(g.cn(t, False), g.cn(r, False))
    ops = [op for op in module.ops.first.body.block.ops if not isinstance(op, func.ReturnOp)]
    inner = GroupOp.wrap(ops[:3], group_id=1)  # the cn, load, tanh
    GroupOp.wrap([inner, *ops[3:]], group_id=0)
    module.verify()
    check_equal(module, [x])


def test_group_inputs_are_not_converted() -> None:
    """A group argument carries the operand's bytes: an aligned op inside reading a
    compact group operand without a ChannelNorm is wrong."""
    x = rand((2, 4, 131), "f16", RNG)
    g = Graph(x)
    r = g.op(ReluOp, g.block.args[0])
    set_family(r.owner, True)
    module = g.module(g.op(NegOp, g.cn(r, False)))
    ops = [op for op in module.ops.first.body.block.ops if not isinstance(op, func.ReturnOp)]
    GroupOp.wrap(ops[:1])
    module.verify()
    assert differs(run_cmodel(module, [x]), run_reference(module, [x]))


# --------------------------------------------------------------------------------------
# API: inputs, errors, traffic
# --------------------------------------------------------------------------------------


def test_inputs_by_name_and_input_checks() -> None:
    module, inputs = chain((2, 4, 131), "f16")
    assert_bit_exact(run_cmodel(module, {"arg0": inputs[0]}), run_reference(module, inputs))
    with pytest.raises(Tx8ComputeError, match="shape"):
        run_cmodel(module, [inputs[0][:1]])
    with pytest.raises(Tx8ComputeError, match="dtype"):
        run_cmodel(module, [inputs[0].astype(np.float32)])
    with pytest.raises(Tx8ComputeError, match="arg0"):
        run_cmodel(module, {})


def test_traffic_counts_bytes_in_the_layouts_used() -> None:
    shape, dtype = (2, 4, 131), "f16"
    module, inputs = chain(shape, dtype)
    cm = CModel(module)
    cm.run(inputs)
    compact = byte_size(shape, "f16", LayoutMode.NTensor)
    aligned = byte_size(shape, "f16", LayoutMode.NCx)
    assert compact == 2 * 4 * 131 * 2 and aligned > compact
    assert [(t.op, t.read, t.written) for t in cm.traffic] == [
        ("tx8be.ChannelNorm", compact, aligned),
        ("tx8be.Relu", aligned, aligned),
        ("tx8be.ChannelNorm", aligned, compact),
        ("tx8be.Neg", compact, compact),
    ]
    assert cm.bytes_moved == 2 * (compact + aligned) + 2 * aligned + 2 * compact


# --------------------------------------------------------------------------------------
# Hypothesis: random DAGs with correct placements
# --------------------------------------------------------------------------------------

LAST_DIMS = [1, 3, 5, 33, 64, 67, 131]
OTHER_DIMS = [1, 2, 3, 5]
FLOAT_UNARY = [ReluOp, NegOp, AbsOp, TanhOp, ExpOp]
INT_UNARY = [ReluOp, NegOp, AbsOp]
BINARY = [AddOp, SubOp, MulOp, MaxOp]


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


class RandomDag:
    """Builds a correctly placed graph: every value is stored in its producer's family
    and each consumer of the other family reads it through one shared ChannelNorm."""

    def __init__(self, draw, dtype: str, inputs: list[np.ndarray]):
        self.draw, self.dtype = draw, dtype
        self.g = Graph(*inputs)
        self.values: list[tuple[SSAValue, bool]] = [(a, False) for a in self.g.block.args]
        self.family: dict[SSAValue, bool] = dict(self.values)
        self.cns: dict[tuple[SSAValue, bool], SSAValue] = {}
        self.rng = np.random.default_rng(draw(st.integers(0, 2**16)))

    def read(self, value: SSAValue, aligned: bool) -> SSAValue:
        if self.family[value] == aligned:
            return value
        key = (value, aligned)
        if key not in self.cns:
            self.cns[key] = self.g.cn(value, aligned)
            self.family[self.cns[key]] = aligned
        return self.cns[key]

    def emit(self, cls, operands: list[SSAValue], **attrs) -> None:
        aligned = self.draw(st.booleans())
        op = self.g.add(cls.make([self.read(v, aligned) for v in operands], **attrs))
        set_family(op, aligned)
        self.values.append((op.results[0], aligned))
        self.family[op.results[0]] = aligned

    def const(self, shape: tuple[int, ...]) -> SSAValue:
        op = self.g.add(ConstantOp.from_array(rand(shape, self.dtype, self.rng)))
        aligned = self.draw(st.booleans())
        set_family(op, aligned)
        self.family[op.results[0]] = aligned
        return op.results[0]

    def step(self) -> None:
        draw = self.draw
        src = draw(st.sampled_from([v for v, _ in self.values]))
        shape = tuple(src.type.get_shape())
        kind = draw(st.sampled_from(["unary", "binary", "transpose", "reshape"]))
        if kind == "unary":
            ops = INT_UNARY if self.dtype == "i8" else FLOAT_UNARY
            self.emit(draw(st.sampled_from(ops)), [src])
        elif kind == "binary":
            self.emit(draw(st.sampled_from(BINARY)), [src, self.other(shape)])
        elif kind == "transpose":
            perm = draw(st.permutations(range(len(shape))))
            self.emit(TransposeOp, [src], perm=list(perm))
        else:
            self.emit(ReshapeOp, [src], shape=list(self.new_shape(math.prod(shape))))

    def other(self, shape: tuple[int, ...]) -> SSAValue:
        """A second operand: a value of the same shape, or a constant (maybe broadcast)."""
        same = [v for v, _ in self.values if tuple(v.type.get_shape()) == shape]
        choice = self.draw(st.sampled_from(["value", "const", "vector"]))
        if choice == "value":
            return self.draw(st.sampled_from(same))
        return self.const(shape if choice == "const" else shape[-1:])

    def new_shape(self, total: int) -> tuple[int, ...]:
        rank = self.draw(st.integers(2, 4))
        dims, rest = [], total
        for _ in range(rank - 1):
            d = self.draw(st.sampled_from(_divisors(rest)))
            dims.append(d)
            rest //= d
        dims.append(rest)
        return tuple(self.draw(st.permutations(dims)))

    def module(self) -> ModuleOp:
        outs = [self.values[-1][0]]
        outs += self.draw(st.lists(st.sampled_from([v for v, _ in self.values]), max_size=2))
        # graph outputs are compact: an aligned output leaves through ChannelNorm(false)
        outs = [self.read(v, False) if self.family[v] else v for v in outs]
        return self.g.module(*outs)


@st.composite
def random_dags(draw) -> tuple[ModuleOp, list[np.ndarray]]:
    dtype = draw(st.sampled_from(list(NP_DTYPES)))
    rank = draw(st.integers(2, 4))
    shape = tuple(draw(st.sampled_from(OTHER_DIMS)) for _ in range(rank - 1))
    shape += (draw(st.sampled_from(LAST_DIMS)),)
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    inputs = [rand(shape, dtype, rng) for _ in range(draw(st.integers(1, 2)))]
    dag = RandomDag(draw, dtype, inputs)
    for _ in range(draw(st.integers(1, 10))):
        dag.step()
    return dag.module(), inputs


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_dags())
def test_random_dags_with_correct_channel_norms_equal_reference(case) -> None:
    module, inputs = case
    check_equal(module, inputs)
