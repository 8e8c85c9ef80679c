"""layout-normalize-rank and the layout stage around it (issue 15): on random
transformer-like graphs and the bundled examples the program computes the same, the
cmodel equals the reference, every relabel leaves `pack` bytes identical in its family,
the optimal alignment is still the brute-force minimum, and a forced relabel that is not
the identity on the bytes gives the cmodel a wrong answer."""

from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType, bf16, f16, f32
from xdsl.ir import Block, Region

from examples.make_models import MODELS
from tests.helpers import main_block as block_of
from tests.unit.layout.test_layout_align_to_npu import example, random_inputs
from tx8c.analysis.layout_problem import read_layout_stats
from tx8c.dialect import make_context
from tx8c.dialect.attrs import AlignMode, DevAttr
from tx8c.dialect.layout import is_aligned, mem_layout_for
from tx8c.dialect.ops import conv_gemm as cg
from tx8c.dialect.ops import elementwise as ew
from tx8c.dialect.ops import movement as mv
from tx8c.dialect.ops import norm as nm
from tx8c.dialect.ops.backend import ChannelNormOp, ConstantOp
from tx8c.dialect.types import to_numpy_dtype
from tx8c.passes import available_passes
from tx8c.pipeline import layout_spec
from tx8c.sim.cmodel import run_cmodel
from tx8c.sim.reference import run_reference
from tx8c.target.mem_layout import pack
from tx8c.transforms.layout.layout_align_to_npu import (
    build_problem,
    conversion_cost,
    movement_cost,
    solve_optimal,
)

FLOAT_TYPES = {f32: np.float32, f16: np.float16, bf16: ml_dtypes.bfloat16}


def run_passes(module: ModuleOp, spec: list[str]) -> ModuleOp:
    from xdsl.passes import PassPipeline

    ctx = make_context()
    for p in PassPipeline.parse_spec(available_passes(), ",".join(spec)).passes:
        p.apply(ctx, module)
        module.verify()
    return module


def layout_stage(module: ModuleOp, strategy: str = "optimal") -> ModuleOp:
    return run_passes(module, layout_spec(strategy))


# --------------------------------------------------------------------------------------
# random transformer-like graphs
# --------------------------------------------------------------------------------------


class Builder:
    def __init__(self, arg_types, dtype, seed: int):
        self.block = Block(arg_types=arg_types)
        self.dtype = dtype
        self.rng = np.random.default_rng(seed)

    def add(self, cls, *operands, **attrs):
        op = cls.make(list(operands), **attrs)
        self.block.add_op(op)
        return op.results[0] if len(op.results) == 1 else op.results

    def weight(self, *shape):
        value = (self.rng.standard_normal(shape) * 0.2).astype(FLOAT_TYPES[self.dtype])
        op = ConstantOp.from_array(value)
        self.block.add_op(op)
        return op.results[0]

    def module(self, outputs) -> ModuleOp:
        self.block.add_op(func.ReturnOp(*outputs))
        fn = func.FuncOp("main", ([a.type for a in self.block.args], [o.type for o in outputs]),
                         Region(self.block))
        module = ModuleOp([fn])
        module.verify()
        return module


@st.composite
def transformer_layers(draw) -> dict:
    """The recipe of a transformer-like layer of random sizes, dtype and pieces (GPT-2's
    2-D Gemms or BERT's 3-D ones, heads of 8 to 64 channels, batch 1 or 2); plain data,
    so that hypothesis shows a failing case readably (`build_layer` makes the module)."""
    return {
        "batch": draw(st.sampled_from([1, 2])), "seq": draw(st.sampled_from([1, 3, 8, 16])),
        "heads": draw(st.sampled_from([1, 2, 3])), "width": draw(st.sampled_from([8, 32, 64])),
        "dtype": draw(st.sampled_from(["f32", "f16", "bf16"])),
        "rows": draw(st.lists(st.booleans(), min_size=5, max_size=5)),
        "ffn": draw(st.booleans()), "head": draw(st.sampled_from([0, 64, 100])),
        "seed": draw(st.integers(0, 99)),
    }


def build_layer(recipe: dict) -> ModuleOp:
    dtype = {"f32": f32, "f16": f16, "bf16": bf16}[recipe["dtype"]]
    batch, seq, heads, width = (recipe[k] for k in ("batch", "seq", "heads", "width"))
    hidden = heads * width
    b = Builder([TensorType(dtype, [batch, seq, hidden])], dtype, recipe["seed"])
    x = b.block.args[0]
    rows = iter(recipe["rows"])

    def dense(v, n_in, n_out):
        if next(rows):  # GPT-2: rows of a 2-D Gemm
            flat = b.add(mv.ReshapeOp, v, shape=[batch * seq, n_in])
            out = b.add(cg.GemmOp, flat, b.weight(n_in, n_out), b.weight(n_out))
            return b.add(mv.ReshapeOp, out, shape=[batch, seq, n_out])
        return b.add(cg.GemmOp, v, b.weight(n_in, n_out), b.weight(n_out))

    qkv = dense(x, hidden, 3 * hidden)
    q, k, v = b.add(mv.SplitOp, qkv, axis=2, split=[hidden] * 3)
    heads_of = [batch, seq, heads, width]
    q = b.add(mv.TransposeOp, b.add(mv.ReshapeOp, q, shape=heads_of), perm=[0, 2, 1, 3])
    k = b.add(mv.TransposeOp, b.add(mv.ReshapeOp, k, shape=heads_of), perm=[0, 2, 3, 1])
    v = b.add(mv.TransposeOp, b.add(mv.ReshapeOp, v, shape=heads_of), perm=[0, 2, 1, 3])
    p = b.add(nm.SoftmaxOp, b.add(cg.GemmOp, q, k), axis=-1)
    o = b.add(mv.TransposeOp, b.add(cg.GemmOp, p, v), perm=[0, 2, 1, 3])
    o = dense(b.add(mv.ReshapeOp, o, shape=[batch, seq, hidden]), hidden, hidden)
    h = b.add(nm.LayerNormOp, b.add(ew.AddOp, o, x), b.weight(hidden), b.weight(hidden))
    outputs = [h]
    if recipe["ffn"]:  # the feed-forward half
        f = dense(b.add(ew.GeluOp, dense(h, hidden, 2 * hidden)), 2 * hidden, hidden)
        outputs = [b.add(nm.LayerNormOp, b.add(ew.AddOp, f, h), b.weight(hidden))]
    if recipe["head"]:  # an LM head (64 wide: its rows pack alike aligned and compact)
        outputs.append(dense(outputs[0], hidden, recipe["head"]))
    return b.module(outputs)


def float_inputs(module: ModuleOp, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [
        rng.standard_normal(tuple(a.type.get_shape())).astype(
            to_numpy_dtype(a.type.get_element_type()))
        for a in block_of(module).args
    ]


def assert_relabels_move_nothing(module: ModuleOp) -> None:
    """Every Relabel: its operand's bytes are its result's bytes in its family (pack)."""
    for op in block_of(module).ops:
        if isinstance(op, mv.RelabelOp):
            aligned = is_aligned(op.dev_info.get("mem_layout"))
            shape = tuple(op.operands[0].type.get_shape())
            dtype = op.operands[0].type.get_element_type()
            rng = np.random.default_rng(0)
            for _ in range(4):  # random draws: values may repeat, a move could hide once
                x = rng.integers(0, 100, shape).astype(to_numpy_dtype(dtype))
                (y,) = op.compute(x)
                assert pack(x, mem_layout_for(shape, aligned), dtype=dtype) == pack(
                    y, mem_layout_for(y.shape, aligned), dtype=dtype), op


def assert_same_values(expected, got, dtype) -> None:
    """The stage reorders no arithmetic except where a Gemm's rows get batch dims (numpy
    may sum a batched matmul in another order): equal to the last bits."""
    for e, g in zip(expected, got, strict=True):
        e, g = np.asarray(e, np.float64), np.asarray(g, np.float64)
        tolerance = 1e-6 if dtype == f32 else 1e-2
        np.testing.assert_allclose(g, e, rtol=tolerance, atol=tolerance)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(recipe=transformer_layers(), strategy=st.sampled_from(["greedy", "optimal"]))
def test_random_transformer_layers(recipe, strategy) -> None:
    module = build_layer(recipe)
    dtype = block_of(module).args[0].type.get_element_type()
    inputs = float_inputs(module)
    before = run_reference(module, inputs)
    layout_stage(module, strategy)
    after = run_reference(module, inputs)
    assert_same_values(before, after, dtype)
    for g, e in zip(run_cmodel(module, inputs), after, strict=True):
        np.testing.assert_array_equal(g, e)  # cmodel == reference, bit for bit
    assert_relabels_move_nothing(module)
    stats = read_layout_stats(module)
    assert stats["layout-normalize-rank"]["odd_rank_ops"] == 0
    layer = [op for op in block_of(module).ops
             if op.results and not isinstance(op, mv.RelabelOp | ConstantOp | ChannelNormOp)]
    ranks = {op.results[0].type.get_num_dims() for op in layer}
    assert ranks <= {2, 4}  # every op of the layer runs on a rank-2/4 view


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(recipe=transformer_layers())
def test_optimal_is_the_brute_force_minimum_after_normalisation(recipe) -> None:
    """The cut minimises bytes converted plus bytes moved over every assignment of the
    free ops (relabels among them), on the graphs the new pass makes."""
    module = run_passes(build_layer(recipe), layout_spec("optimal")[:4])  # to normalise
    problem = build_problem(block_of(module).parent_op())
    free = [v for v, constant in enumerate(problem.var_constant) if not constant]
    assume(len(free) <= 12)  # constants cost nothing either way: they are not enumerated

    def cost(chosen) -> int:
        modes = [AlignMode.NALIGN] * problem.num_vars
        for var, mode in zip(free, chosen, strict=True):
            modes[var] = mode
        return conversion_cost(problem, modes) + movement_cost(problem, modes)

    choices = (AlignMode.ALIGN, AlignMode.NALIGN)
    best = min(cost(m) for m in itertools.product(choices, repeat=len(free)))
    optimal = solve_optimal(problem)
    assert cost([optimal[v] for v in free]) == best


# --------------------------------------------------------------------------------------
# the bundled examples
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("strategy", ["greedy", "optimal"])
@pytest.mark.parametrize("name", list(MODELS))
def test_examples_through_the_layout_stage(name: str, strategy: str) -> None:
    module = example(name)
    inputs = random_inputs(module)
    before = run_reference(module, inputs)
    layout_stage(module, strategy)
    after = run_reference(module, inputs)
    for b, a in zip(before, after, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
    for g, e in zip(run_cmodel(module, inputs), after, strict=True):
        np.testing.assert_array_equal(g, e)
    assert_relabels_move_nothing(module)


def test_second_run_changes_nothing() -> None:
    module = run_passes(example("transformer_encoder"), layout_spec("optimal")[:4])
    from tx8c.ir import print_module

    text = print_module(module).split("\n", 1)[1]
    run_passes(module, ["layout-normalize-rank"])
    assert print_module(module).split("\n", 1)[1] == text
    stats = read_layout_stats(module)["layout-normalize-rank"]
    assert (stats["rank_views"], stats["transposes_split"], stats["compact_rows"]) == (0, 0, 0)


# --------------------------------------------------------------------------------------
# negative: a relabel that is not the identity on the bytes gives a wrong answer
# --------------------------------------------------------------------------------------


def _aligned_reshape_module(relabel: bool, shape) -> ModuleOp:
    """x -> CN(aligned) -> [Reshape or Relabel] to `shape`, run aligned -> CN back."""
    x_type = TensorType(f32, [1, 8, 128])
    block = Block(arg_types=[x_type])
    dev = DevAttr.make(mem_layout=mem_layout_for((1, 8, 128), True))
    cn = ChannelNormOp.make([block.args[0]], direction=True, dev_info=dev)
    cls = mv.RelabelOp if relabel else mv.ReshapeOp
    moved = cls.make([cn.results[0]], shape=shape,
                     dev_info=DevAttr.make(mem_layout=mem_layout_for(shape, True)))
    back = ChannelNormOp.make([moved.results[0]], direction=False,
                              dev_info=DevAttr.make(mem_layout=mem_layout_for(shape, False)))
    block.add_ops([cn, moved, back, func.ReturnOp(back.results[0])])
    fn = func.FuncOp("main", ([x_type], [back.results[0].type]), Region(block))
    return ModuleOp([fn])


def test_forced_relabel_that_moves_bytes_gives_a_wrong_answer() -> None:
    """[1,8,128] -> [8,128] aligned: Cx holds blocks of 64 channels, NCx whole rows, so
    the reshape moves bytes; as a relabel (bytes passed through) the cmodel is wrong."""
    x = float_inputs(_aligned_reshape_module(False, (8, 128)))
    reshape = _aligned_reshape_module(False, (8, 128))
    np.testing.assert_array_equal(run_cmodel(reshape, x)[0], run_reference(reshape, x)[0])
    forced = _aligned_reshape_module(True, (8, 128))
    assert mv.RelabelOp.families(next(op for op in block_of(forced).ops
                                      if isinstance(op, mv.RelabelOp))) == {False}
    expected = run_reference(forced, x)[0]
    np.testing.assert_array_equal(expected, x[0].reshape(8, 128))  # logically right
    assert not np.array_equal(run_cmodel(forced, x)[0], expected)


def test_relabel_that_is_the_identity_on_bytes_is_right() -> None:
    """The control: [1,8,128] -> [1,1,8,128] is the same bytes aligned."""
    module = _aligned_reshape_module(True, (1, 1, 8, 128))
    x = float_inputs(module)
    np.testing.assert_array_equal(run_cmodel(module, x)[0], run_reference(module, x)[0])
