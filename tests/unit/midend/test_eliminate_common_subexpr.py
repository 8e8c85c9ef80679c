"""eliminate-common-subexpr: duplicated sub-graphs merge (values unchanged), equal constants
merge bit for bit, different attributes / operand orders / memory moves / groups do not,
xDSL's own CSE leaves tx8be ops alone, and the bundled models keep their values."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Region
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination

from examples.make_models import MODELS, transformer_stack
from tests.helpers import assert_same_values
from tests.helpers import op_counts as counts
from tests.helpers import parse_verified as parse
from tx8c.dialect import make_context
from tx8c.dialect.ops.backend import ConstantOp
from tx8c.frontend.onnx.importer import import_onnx
from tx8c.frontend.onnx.runtime import random_inputs, run_onnxruntime
from tx8c.sim.numerics import compare_arrays
from tx8c.sim.reference import run_reference
from tx8c.transforms.midend.eliminate_common_subexpr import EliminateCommonSubexprPass


def cse(module: ModuleOp) -> ModuleOp:
    EliminateCommonSubexprPass().apply(make_context(), module)
    module.verify()
    return module


# Two copies of an attention-like sub-graph on the same input, each with its own copy of
# the scale constant (the importer's habit): one copy survives, values unchanged.
DUPLICATED = """
func.func @main(%x: tensor<2x4x8xf32>, %w: tensor<8x8xf32>)
    -> (tensor<2x4x4xf32>, tensor<2x4x4xf32>) {
  %s1 = tx8be.Constant {value = dense<0.125> : tensor<f32>} : () -> tensor<f32>
  %q1 = tx8be.Gemm %x, %w : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
  %k1 = tx8be.Transpose %q1 {perm = array<i64: 0, 2, 1>} : (tensor<2x4x8xf32>) -> tensor<2x8x4xf32>
  %a1 = tx8be.Gemm %q1, %k1 : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %m1 = tx8be.Mul %a1, %s1 : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %p1 = tx8be.Softmax %m1 {axis = -1 : i64} : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %s2 = tx8be.Constant {value = dense<0.125> : tensor<f32>} : () -> tensor<f32>
  %q2 = tx8be.Gemm %x, %w : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
  %k2 = tx8be.Transpose %q2 {perm = array<i64: 0, 2, 1>} : (tensor<2x4x8xf32>) -> tensor<2x8x4xf32>
  %a2 = tx8be.Gemm %q2, %k2 : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %m2 = tx8be.Mul %a2, %s2 : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %p2 = tx8be.Softmax %m2 {axis = -1 : i64} : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %o = tx8be.Add %p1, %p2 : (tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  func.return %o, %p2 : tensor<2x4x4xf32>, tensor<2x4x4xf32>
}
"""


def test_duplicated_subexpressions_merge_and_values_are_unchanged() -> None:
    module = parse(DUPLICATED)
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal((2, 4, 8)).astype(np.float32),
              rng.standard_normal((8, 8)).astype(np.float32)]
    before = run_reference(module, inputs)
    assert sum(counts(module).values()) == 13
    cse(module)
    assert counts(module) == Counter(
        {"Constant": 1, "Gemm": 2, "Transpose": 1, "Mul": 1, "Softmax": 1, "Add": 1}
    )
    assert_same_values(before, run_reference(module, inputs))


def test_a_long_duplicated_chain_merges_in_one_pass() -> None:
    n = 300
    lines = []
    for copy in "ab":
        prev = "%x"
        for i in range(n):
            lines.append(f"%{copy}{i} = tx8be.Tanh {prev} : (tensor<4xf32>) -> tensor<4xf32>")
            prev = f"%{copy}{i}"
    body = "\n  ".join(lines)
    module = parse(
        "func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {\n  "
        f"{body}\n  func.return %a{n - 1}, %b{n - 1} : tensor<4xf32>, tensor<4xf32>\n}}"
    )
    cse(module)
    assert counts(module) == Counter({"Tanh": n})


# ---------------------------------------------------------------------------------------
# what is not merged
# ---------------------------------------------------------------------------------------

T = "tensor<2x3x4xf32>"
PAIRS = {
    "transpose perm": (
        f"tx8be.Transpose %x {{perm = array<i64: 1, 0, 2>}} : ({T}) -> tensor<3x2x4xf32>",
        f"tx8be.Transpose %x {{perm = array<i64: 0, 2, 1>}} : ({T}) -> tensor<2x4x3xf32>",
    ),
    "transpose perm, same type": (
        f"tx8be.Transpose %x {{perm = array<i64: 0, 1, 2>}} : ({T}) -> {T}",
        f"tx8be.Transpose %x {{perm = array<i64: 0, 1, 2>, layout_str = \"NCHW\"}} "
        f": ({T}) -> {T}",
    ),
    "cast target": (
        f'tx8be.Cast %x {{to = "f16"}} : ({T}) -> tensor<2x3x4xf16>',
        f'tx8be.Cast %x {{to = "bf16"}} : ({T}) -> tensor<2x3x4xbf16>',
    ),
    "reduce mode": (
        f'tx8be.Reduce %x {{mode = "sum", axes = array<i64: 1>}} : ({T}) -> tensor<2x1x4xf32>',
        f'tx8be.Reduce %x {{mode = "max", axes = array<i64: 1>}} : ({T}) -> tensor<2x1x4xf32>',
    ),
    "softmax axis": (
        f"tx8be.Softmax %x {{axis = 1 : i64}} : ({T}) -> {T}",
        f"tx8be.Softmax %x {{axis = 2 : i64}} : ({T}) -> {T}",
    ),
    "leaky relu alpha": (
        f"tx8be.LeakyRelu %x {{alpha = 0.1 : f64}} : ({T}) -> {T}",
        f"tx8be.LeakyRelu %x {{alpha = 0.2 : f64}} : ({T}) -> {T}",
    ),
    "gemm trans_b": (
        "tx8be.Gemm %m, %m {trans_b = true} : (tensor<4x4xf32>, tensor<4x4xf32>) "
        "-> tensor<4x4xf32>",
        "tx8be.Gemm %m, %m : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>",
    ),
    "layout_str": (
        f'tx8be.Relu %x {{layout_str = "NCHW-NCHW"}} : ({T}) -> {T}',
        f'tx8be.Relu %x {{layout_str = "NHWC-NHWC"}} : ({T}) -> {T}',
    ),
    "operand order": (
        f"tx8be.Sub %x, %y : ({T}, {T}) -> {T}",
        f"tx8be.Sub %y, %x : ({T}, {T}) -> {T}",
    ),
}


def _two_ops(first: str, second: str) -> ModuleOp:
    """The two ops on %x, %y : tensor<2x3x4xf32> and %m : tensor<4x4xf32>, both returned."""
    types = [line.rsplit("-> ", 1)[1] for line in (first, second)]
    return parse(f"""
func.func @main(%x: {T}, %y: {T}, %m: tensor<4x4xf32>) -> ({", ".join(types)}) {{
  %a = {first}
  %b = {second}
  func.return %a, %b : {", ".join(types)}
}}""")


@pytest.mark.parametrize("case", sorted(PAIRS))
def test_ops_with_different_attributes_or_operand_order_are_not_merged(case: str) -> None:
    module = cse(_two_ops(*PAIRS[case]))
    assert sum(counts(module).values()) == 2


def test_the_same_pair_written_twice_is_merged() -> None:
    line = PAIRS["reduce mode"][0]
    module = cse(_two_ops(line, line))
    assert sum(counts(module).values()) == 1


def test_an_attribute_spelled_at_its_default_value_is_the_same_op() -> None:
    gemm = "tx8be.Gemm %m, %m {attrs} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>"
    plain = gemm.replace("{attrs}", "")
    spelled = gemm.replace("{attrs}", "{trans_a = false, alpha = 1.0 : f64}")
    module = cse(_two_ops(plain, spelled))
    assert counts(module) == Counter({"Gemm": 1})


def _constants_module(*arrays: np.ndarray) -> ModuleOp:
    block = Block()
    ops = [ConstantOp.from_array(a) for a in arrays]
    for op in ops:
        block.add_op(op)
    block.add_op(func.ReturnOp(*[op.results[0] for op in ops]))
    types = [op.results[0].type for op in ops]
    return ModuleOp([func.FuncOp("main", ([], types), Region(block))])


def test_constants_merge_only_when_type_and_bits_are_equal() -> None:
    nan1 = np.array([np.nan], np.float32)
    nan2 = np.frombuffer(np.array([0x7FC00001], np.uint32).tobytes(), np.float32).copy()
    module = _constants_module(
        np.array([1.0, 2.0], np.float32),
        np.array([1.0, 2.0], np.float32),  # merged with the first
        np.array([1.0, 2.0], np.float16),  # another type
        np.array([[1.0, 2.0]], np.float32),  # another shape
        np.array(0.0, np.float32),
        np.array(-0.0, np.float32),  # other bits
        nan1,
        nan1.copy(),  # merged
        nan2,  # another NaN payload
        np.array([1, 2], np.int32),
        np.array([1, 2], np.int64),
    )
    values_before = run_reference(module, [])
    cse(module)
    assert counts(module) == Counter({"Constant": 9})
    for b, a in zip(values_before, run_reference(module, []), strict=True):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()


def test_a_splat_and_its_full_spelling_are_one_constant() -> None:
    module = parse("""
func.func @main() -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %a = tx8be.Constant {value = dense<2.0> : tensor<3xf32>} : () -> tensor<3xf32>
  %b = tx8be.Constant {value = dense<[2.0, 2.0, 2.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %c = tx8be.Constant {value = dense<[2.0, 2.0, 2.5]> : tensor<3xf32>} : () -> tensor<3xf32>
  func.return %a, %b, %c : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}""")
    cse(module)
    assert counts(module) == Counter({"Constant": 2})


def test_memory_moves_and_groups_are_not_merged() -> None:
    t = "tensor<4xf32>"
    text = f"""
func.func @main(%x: {t}) -> ({", ".join([t] * 8)}) {{
  %l1 = tx8be.LoadVar %x : ({t}) -> {t}
  %l2 = tx8be.LoadVar %x : ({t}) -> {t}
  %s1 = tx8be.StoreVar %x : ({t}) -> {t}
  %s2 = tx8be.StoreVar %x : ({t}) -> {t}
  %c1 = tx8be.LoadConst {{const_id = 0 : i64}} : () -> {t}
  %c2 = tx8be.LoadConst {{const_id = 0 : i64}} : () -> {t}
  %g1 = tx8be.Group(%x) : ({t}) -> {t} {{
  ^bb0(%a: {t}):
    %r = tx8be.Relu %a : ({t}) -> {t}
    tx8be.Yield %r : {t}
  }}
  %g2 = tx8be.Group(%x) : ({t}) -> {t} {{
  ^bb0(%a: {t}):
    %r = tx8be.Relu %a : ({t}) -> {t}
    tx8be.Yield %r : {t}
  }}
  func.return %l1, %l2, %s1, %s2, %c1, %c2, %g1, %g2 : {", ".join([t] * 8)}
}}"""
    module = cse(parse(text))
    assert counts(module) == counts(parse(text))


def test_xdsl_cse_leaves_tx8be_ops_alone() -> None:
    """Why this pass exists: tx8be ops declare no MemoryEffect trait (see the docstring)."""
    module = parse(DUPLICATED)
    CommonSubexpressionElimination().apply(make_context(), module)
    assert sum(counts(module).values()) == 13


# ---------------------------------------------------------------------------------------
# imported models
# ---------------------------------------------------------------------------------------

MODEL_CASES = {**{name: MODELS[name] for name in sorted(MODELS)},
               "transformer_stack3": lambda: transformer_stack(3)}


@pytest.mark.parametrize("name", sorted(MODEL_CASES))
def test_imported_models_merge_duplicates_and_keep_their_values(name: str) -> None:
    model = MODEL_CASES[name]()
    module = import_onnx(model).module
    inputs = random_inputs(model, seed=4)
    before_counts, before = counts(module), run_reference(module, inputs)
    cse(module)
    after_counts = counts(module)
    assert_same_values(before, run_reference(module, inputs))
    for e, g in zip(run_onnxruntime(model, inputs), before, strict=True):
        assert compare_arrays(e, g).cosine >= 0.99999
    # only duplicated constants (scalars the exporter repeats) merge in these models;
    # nothing but Constants changes
    assert {k: v for k, v in after_counts.items() if k != "Constant"} == {
        k: v for k, v in before_counts.items() if k != "Constant"
    }
    assert after_counts["Constant"] <= before_counts["Constant"]
    if name in ("llama_decoder", "transformer_encoder", "transformer_stack3"):
        assert after_counts["Constant"] < before_counts["Constant"]
