"""combine-parallel-conv and combine-parallel-gemm: what combines, what must not, numerics
before/after on random inputs, and the attention projections of the example models
against onnxruntime. Also random graphs through the four passes of this family
(with peephole and canonicalize-concat-pos), one after another."""

from __future__ import annotations

import importlib.util
import random
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Region, SSAValue
from xdsl.utils.arg_spec import parse_spec

from tx8c.dialect.ops.backend import ConstantOp
from tx8c.dialect.ops.conv_gemm import ConvOp, GemmOp
from tx8c.dialect.ops.elementwise import AddOp, MulOp, ReluOp, SigmoidOp, SubOp
from tx8c.dialect.ops.movement import ConcatenateOp
from tx8c.dialect.ops.norm import BatchNormInferenceOp
from tx8c.dialect.types import tensor_of
from tx8c.frontend.onnx.importer import import_onnx
from tx8c.frontend.onnx.runtime import random_inputs, run_onnxruntime
from tx8c.passes import pass_class
from tx8c.sim.numerics import compare_arrays
from tx8c.sim.reference import run_reference
from tx8c.transforms.midend.canonicalize_concat_pos import CanonicalizeConcatPosPass
from tx8c.transforms.midend.combine_parallel_conv import CombineParallelConvPass
from tx8c.transforms.midend.combine_parallel_gemm import CombineParallelGemmPass
from tx8c.transforms.midend.peephole import PeepholePass

# --------------------------------------------------------------------------------------
# A small graph builder and a before/after check (shared by the midend test files)
# --------------------------------------------------------------------------------------


class Graph:
    """Builds a function `main` from input shapes, constants and tx8be ops."""

    def __init__(self, *input_shapes, dtype=np.float32, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)
        self.inputs = [np.zeros(s, dtype) for s in input_shapes]
        self.block = Block(arg_types=[tensor_of(a) for a in self.inputs])
        self.args = list(self.block.args)

    def const(self, array) -> SSAValue:
        op = ConstantOp.from_array(np.asarray(array))
        self.block.add_op(op)
        return op.results[0]

    def rand(self, *shape, dtype=np.float32) -> SSAValue:
        return self.const(self.rng.standard_normal(shape).astype(dtype))

    def __call__(self, op_cls, *operands, **attrs):
        op = op_cls.make(list(operands), **attrs)
        self.block.add_op(op)
        return op.results[0] if len(op.results) == 1 else list(op.results)

    def module(self, *outputs: SSAValue) -> ModuleOp:
        self.block.add_op(func.ReturnOp(*outputs))
        function = func.FuncOp(
            "main",
            ([a.type for a in self.args], [o.type for o in outputs]),
            Region(self.block),
        )
        module = ModuleOp([function])
        module.verify()
        return module

    def random_inputs(self, seed: int = 1) -> list[np.ndarray]:
        rng = np.random.default_rng(seed)
        return [rng.standard_normal(a.shape).astype(a.dtype) for a in self.inputs]


def op_counts(module: ModuleOp) -> Counter:
    return Counter(op.name.removeprefix("tx8be.") for op in module.walk()
                   if op.name.startswith("tx8be."))


def apply_and_compare(module: ModuleOp, inputs, pass_, rtol=1e-5, atol=1e-5) -> ModuleOp:
    """Run the pass on a copy of `module`; its results must match the original's."""
    before = run_reference(module, inputs)
    after_module = module.clone()
    pass_.apply(Context(), after_module)
    after_module.verify()
    after = run_reference(after_module, inputs)
    assert len(before) == len(after)
    for b, a in zip(before, after, strict=True):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)
    return after_module


# --------------------------------------------------------------------------------------
# Gemm
# --------------------------------------------------------------------------------------


def _projections(g: Graph, x, widths, bias_add=True, trans_b=False, **attrs):
    outs = []
    for n in widths:
        w = g.rand(n, 8) if trans_b else g.rand(8, n)
        y = g(GemmOp, x, w, trans_b=trans_b, **attrs)
        if bias_add:
            y = g(AddOp, g.rand(n), y)  # the importer's order: Add(bias, MatMul)
        outs.append(y)
    return outs


def test_qkv_projections_become_one_gemm_with_bias_and_a_split():
    g = Graph((2, 5, 8))
    outs = _projections(g, g.args[0], [8, 4, 6])
    module = g.module(*outs)
    after = apply_and_compare(module, g.random_inputs(), CombineParallelGemmPass())
    counts = op_counts(after)
    assert counts["Gemm"] == 1 and counts["Split"] == 1 and counts["Add"] == 0
    # the old weights and biases are gone: one wide weight and one wide bias remain
    assert counts["Constant"] == 2
    gemm = next(op for op in after.walk() if isinstance(op, GemmOp))
    assert [list(o.type.get_shape()) for o in gemm.operands[1:]] == [[8, 18], [18]]


def test_gemms_with_transposed_weights_and_bias_operands_combine():
    g = Graph((3, 8))
    outs = []
    for n in (4, 4, 5):
        outs.append(g(GemmOp, g.args[0], g.rand(n, 8), g.rand(1, n), trans_b=True,
                      alpha=0.5, beta=2.0))
    module = g.module(*outs)
    after = apply_and_compare(module, g.random_inputs(), CombineParallelGemmPass())
    assert op_counts(after)["Gemm"] == 1


def test_following_elementwise_ops_are_combined_too():
    g = Graph((4, 8))
    outs = []
    for n in (3, 5, 7):
        y = g(GemmOp, g.args[0], g.rand(8, n))
        y = g(MulOp, y, g.rand(n))
        y = g(ReluOp, y)
        outs.append(g(SubOp, g.rand(1, n), y))  # constant first: kept first
    module = g.module(*outs)
    after = apply_and_compare(module, g.random_inputs(), CombineParallelGemmPass())
    counts = op_counts(after)
    assert (counts["Gemm"], counts["Mul"], counts["Relu"], counts["Sub"]) == (1, 1, 1, 1)


def test_a_branch_value_read_elsewhere_stops_the_chain():
    g = Graph((4, 8))
    outs, extra = [], None
    for i, n in enumerate((3, 3, 3)):
        y = g(GemmOp, g.args[0], g.rand(8, n))
        if i == 0:
            extra = g(ReluOp, y)  # the first Gemm's result is also read here
        outs.append(g(AddOp, y, g.rand(n)))
    module = g.module(*outs, extra)
    after = apply_and_compare(module, g.random_inputs(), CombineParallelGemmPass())
    counts = op_counts(after)
    assert counts["Gemm"] == 1 and counts["Add"] == 3


def test_two_branches_need_the_option():
    g = Graph((2, 8))
    module = g.module(*_projections(g, g.args[0], [4, 4], bias_add=False))
    untouched = apply_and_compare(module, g.random_inputs(), CombineParallelGemmPass())
    assert op_counts(untouched)["Gemm"] == 2
    spec = parse_spec("combine-parallel-gemm{min-num-branches=2}")  # the dashed name
    two = pass_class("combine-parallel-gemm").from_spec(spec)
    assert two.min_num_branches == 2
    combined = apply_and_compare(module, g.random_inputs(), two)
    assert op_counts(combined)["Gemm"] == 1


@pytest.mark.parametrize("odd", [
    {"alpha": 2.0}, {"trans_a": True}, "dynamic-b", "other-input", "bias",
])
def test_mismatched_gemms_do_not_combine(odd):
    g = Graph((8, 8), (8, 8))
    x, other = g.args
    outs = [g(GemmOp, x, g.rand(8, 4)) for _ in range(2)]
    if odd == "dynamic-b":
        outs.append(g(GemmOp, x, other))
    elif odd == "other-input":
        outs.append(g(GemmOp, other, g.rand(8, 4)))
    elif odd == "bias":
        outs.append(g(GemmOp, x, g.rand(8, 4), g.rand(4)))
    else:
        outs.append(g(GemmOp, x, g.rand(8, 4), **odd))
    module = g.module(*outs)
    after = apply_and_compare(module, g.random_inputs(), CombineParallelGemmPass())
    assert op_counts(after)["Gemm"] == 3 and op_counts(after)["Split"] == 0


# --------------------------------------------------------------------------------------
# Conv
# --------------------------------------------------------------------------------------


def _convs(g, x, specs, **attrs):
    return [g(ConvOp, x, g.rand(*w), *([g.rand(w[0])] if bias else []), **{**attrs, **extra})
            for w, bias, extra in specs]


def test_parallel_convs_combine_along_output_channels():
    g = Graph((1, 3, 8, 8))
    specs = [((4, 3, 3, 3), True, {}), ((2, 3, 3, 3), True, {}), ((5, 3, 3, 3), True, {})]
    outs = [g(ReluOp, y) for y in _convs(g, g.args[0], specs, pads=[1, 1, 1, 1])]
    module = g.module(*outs)
    after = apply_and_compare(module, g.random_inputs(), CombineParallelConvPass())
    counts = op_counts(after)
    assert (counts["Conv"], counts["Split"], counts["Relu"]) == (1, 1, 1)


def test_nhwc_hwoi_convs_combine_and_absorb_a_per_channel_add():
    g = Graph((1, 6, 6, 3))
    outs = []
    for c in (2, 3, 4):
        y = g(ConvOp, g.args[0], g.rand(1, 1, c, 3), data_format="NHWC",
              weight_format="HWOI")
        outs.append(g(AddOp, y, g.rand(1, 1, 1, c)))
    module = g.module(*outs)
    after = apply_and_compare(module, g.random_inputs(), CombineParallelConvPass())
    counts = op_counts(after)
    assert (counts["Conv"], counts["Add"], counts["Split"]) == (1, 0, 1)


def test_an_add_that_is_not_per_channel_stays_an_add():
    g = Graph((1, 3, 4, 4))
    outs = [g(AddOp, y, g.rand(1, 1, 4, 4))
            for y in _convs(g, g.args[0], [((2, 3, 1, 1), False, {})] * 3)]
    module = g.module(*outs)
    after = apply_and_compare(module, g.random_inputs(), CombineParallelConvPass())
    counts = op_counts(after)
    assert (counts["Conv"], counts["Add"]) == (1, 1)


@pytest.mark.parametrize("odd", [
    ((2, 3, 1, 1), False, {}),                      # another kernel size
    ((2, 3, 3, 3), False, {"strides": [2, 2]}),     # other strides
    ((2, 3, 3, 3), False, {"dilations": [2, 2]}),   # other dilations
    ((2, 3, 3, 3), True, {}),                       # a bias where the others have none
    ((3, 1, 3, 3), False, {"groups": 3}),           # grouped
])
def test_mismatched_convs_do_not_combine(odd):
    g = Graph((1, 3, 8, 8))
    outs = _convs(g, g.args[0], [((2, 3, 3, 3), False, {})] * 2 + [odd])
    module = g.module(*outs)
    after = apply_and_compare(module, g.random_inputs(), CombineParallelConvPass())
    assert op_counts(after)["Conv"] == 3 and op_counts(after)["Split"] == 0


def test_convs_with_a_non_constant_weight_do_not_combine():
    g = Graph((1, 3, 5, 5), (2, 3, 1, 1))
    x, w = g.args
    outs = [g(ConvOp, x, w) for _ in range(3)]
    after = apply_and_compare(g.module(*outs), g.random_inputs(), CombineParallelConvPass())
    assert op_counts(after)["Conv"] == 3


# --------------------------------------------------------------------------------------
# The example models against onnxruntime
# --------------------------------------------------------------------------------------


def _examples():
    path = Path(__file__).resolve().parents[3] / "examples" / "make_models.py"
    spec = importlib.util.spec_from_file_location("tx8c_examples_make_models", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


EXAMPLES = _examples()


@pytest.mark.parametrize("name, gemms_before, gemms_after", [
    ("transformer_encoder", 8, 6),
    ("transformer_stack_2", 16, 12),
])
def test_attention_projections_combine_and_match_onnxruntime(name, gemms_before, gemms_after):
    model = (EXAMPLES.MODELS["transformer_encoder"]() if name == "transformer_encoder"
             else EXAMPLES.transformer_stack(2))
    module = import_onnx(model).module
    assert op_counts(module)["Gemm"] == gemms_before
    CombineParallelGemmPass().apply(Context(), module)
    module.verify()
    counts = op_counts(module)
    assert counts["Gemm"] == gemms_after
    assert counts["Split"] == (gemms_before - gemms_after) // 2
    inputs = random_inputs(model)
    for expected, got in zip(run_onnxruntime(model, inputs), run_reference(module, inputs),
                             strict=True):
        assert compare_arrays(expected, got).cosine >= 0.99999


def test_cnn_examples_are_left_alone():
    for name in ("residual_cnn", "mobilenet_block"):
        module = import_onnx(EXAMPLES.MODELS[name]()).module
        before = op_counts(module)
        CombineParallelConvPass().apply(Context(), module)
        assert op_counts(module) == before


# --------------------------------------------------------------------------------------
# Random graphs through all four passes of this family
# --------------------------------------------------------------------------------------


def _random_constant(g: Graph, shape, rng: random.Random):
    """A constant that broadcasts to `shape`: scalar, full, last dim or one dim."""
    kind = rng.choice(["scalar", "full", "last", "one-dim"])
    if kind == "scalar":
        return g.rand()
    if kind == "full":
        return g.rand(*shape)
    if kind == "last":
        return g.rand(shape[-1])
    dims = [1] * len(shape)
    axis = rng.randrange(len(shape))
    dims[axis] = shape[axis]
    return g.rand(*dims)


def _random_step(g: Graph, rng: random.Random, images: list, matrices: list) -> None:
    """Add one random op reading earlier values: Conv, Gemm, binary op with a constant,
    unary op, Concat or BatchNorm."""
    choice = rng.random()
    if choice < 0.25:
        x = rng.choice(images)
        k, c_out = rng.choice([1, 3]), rng.randrange(1, 5)
        bias = [g.rand(c_out)] if rng.random() < 0.5 else []
        c_in = x.type.get_shape()[1]
        images.append(g(ConvOp, x, g.rand(c_out, c_in, k, k), *bias, pads=[k // 2] * 4))
    elif choice < 0.45:
        x = rng.choice(matrices)
        n, k, trans_b = rng.randrange(1, 5), x.type.get_shape()[1], rng.random() < 0.3
        matrices.append(g(GemmOp, x, g.rand(n, k) if trans_b else g.rand(k, n),
                          trans_b=trans_b))
    elif choice < 0.65:
        pool = rng.choice([images, matrices])
        x = rng.choice(pool)
        shape = tuple(x.type.get_shape())
        op, c = rng.choice([AddOp, MulOp, SubOp]), _random_constant(g, shape, rng)
        y = g(op, x, c) if rng.random() < 0.5 else g(op, c, x)
        if tuple(y.type.get_shape()) == shape:
            pool.append(y)
    elif choice < 0.8:
        pool = rng.choice([images, matrices])
        pool.append(g(rng.choice([ReluOp, SigmoidOp]), rng.choice(pool)))
    elif choice < 0.9:
        pieces = rng.sample(images, min(len(images), rng.randrange(1, 4)))
        images.append(g(ConcatenateOp, *pieces, axis=1))
    else:
        x = rng.choice(images)
        c = x.type.get_shape()[1]
        variance = g.const(np.abs(g.rng.standard_normal(c)).astype(np.float32) + 0.5)
        images.append(g(BatchNormInferenceOp, x, g.rand(c), g.rand(c), g.rand(c), variance))


def _random_graph(seed: int):
    rng = random.Random(seed)
    g = Graph((1, 4, 5, 5), (3, 6), seed=seed)
    images, matrices, outs = [g.args[0]], [g.args[1]], []
    for _ in range(rng.randrange(3, 12)):
        _random_step(g, rng, images, matrices)
        if rng.random() < 0.2:
            outs.append(rng.choice(images + matrices))
    outs = list({id(v): v for v in [*outs, images[-1], matrices[-1]]}.values())
    return g, g.module(*outs)


FAMILY = [
    CombineParallelConvPass(min_num_branches=2),
    CombineParallelGemmPass(min_num_branches=2),
    PeepholePass(fc_to_conv=True),
    CanonicalizeConcatPosPass(),
]


@pytest.mark.parametrize("seed", range(60))
def test_random_graphs_keep_their_meaning(seed):
    g, module = _random_graph(seed)
    inputs = g.random_inputs()
    for pass_ in FAMILY:
        module = apply_and_compare(module, inputs, pass_, rtol=1e-4, atol=1e-4)
