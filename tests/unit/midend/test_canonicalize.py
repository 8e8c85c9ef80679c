"""canonicalize-cast and canonicalize-op.

canonicalize-cast: the merge rule's table holds bit for bit through `Cast.compute()` on
every f16/bf16/i8 pattern and on edge and random values of the wider types; the chains it
refuses really differ; the pass keeps values and leaves unsafe chains alone.

canonicalize-op: Conv/Gemm biases become broadcast Adds (bit-identical in f32, one more
rounding in f16), constants move to the second operand of Add/Mul, bias-mode=fuse undoes
the split, and what must not move does not; the bundled models keep their values.
"""

from __future__ import annotations

import warnings
from collections import Counter
from functools import cache

import ml_dtypes
import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block

from examples.make_models import MODELS
from tests.helpers import assert_same_values
from tests.helpers import op_counts as counts
from tests.helpers import parse_verified as parse
from tx8c.dialect import make_context
from tx8c.dialect.ops.elementwise import CastOp
from tx8c.dialect.types import tensor_of
from tx8c.errors import Tx8Error
from tx8c.frontend.onnx.importer import import_onnx
from tx8c.frontend.onnx.runtime import random_inputs, run_onnxruntime
from tx8c.sim.numerics import compare_arrays
from tx8c.sim.reference import run_reference
from tx8c.transforms.midend.canonicalize_cast import CanonicalizeCastPass, chain_is_mergeable
from tx8c.transforms.midend.canonicalize_op import CanonicalizeOpPass


def apply(pass_, module: ModuleOp) -> ModuleOp:
    pass_.apply(make_context(), module)
    module.verify()
    return module


# =======================================================================================
# canonicalize-cast
# =======================================================================================

TYPES = ("i1", "i8", "i32", "i64", "f16", "bf16", "f32")
NUMPY = {"i1": np.bool_, "i8": np.int8, "i32": np.int32, "i64": np.int64,
         "f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32}


@cache
def samples(t: str) -> np.ndarray:
    """Every bit pattern of the small types; edges and random values of the wide ones."""
    rng = np.random.default_rng(7)
    if t == "i1":
        return np.array([False, True])
    if t == "i8":
        return np.arange(-128, 128).astype(np.int8)
    if t in ("f16", "bf16"):
        return np.arange(65536, dtype=np.uint16).view(NUMPY[t])
    if t in ("i32", "i64"):
        info = np.iinfo(NUMPY[t])
        edges = [info.min, info.max, 0, 1, -1, 127, 128, -129, 255, 256, 65504, 65520,
                 2**24 + 1, -(2**24 + 1), 2**31 - 1, -(2**31)]
        edges = [e for e in edges if info.min <= e <= info.max]
        wide = rng.integers(info.min, info.max, 20000, dtype=NUMPY[t])
        return np.concatenate([np.array(edges, NUMPY[t]), wide,
                               np.arange(-70000, 70000).astype(NUMPY[t])])
    bits = rng.integers(0, 2**32, 60000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    edges = np.array([0.0, -0.0, 0.5, -0.5, 1.5, -2.5, 127.9, 128.0, -128.9, 255.5, 2.0**31,
                      -(2.0**31), 2.0**63, 3e38, np.inf, -np.inf, np.nan, 65504, 65520,
                      1e-8, 1e-40], np.float32)
    normal = rng.standard_normal(20000).astype(np.float32) * 300
    return np.concatenate([bits, edges, normal])


def cast(x: np.ndarray, to: str) -> np.ndarray:
    """What a tx8be.Cast to `to` computes on x."""
    block = Block(arg_types=[tensor_of(x)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return CastOp.make([block.args[0]], to=to).compute(x)[0]


def same_bits_or_both_nan(a: np.ndarray, b: np.ndarray) -> bool:
    same = a.view(np.uint8).reshape(a.shape[0], -1) == b.view(np.uint8).reshape(b.shape[0], -1)
    same = same.all(axis=1)
    if a.dtype.kind == "f" or a.dtype == ml_dtypes.bfloat16:
        same |= np.isnan(a.astype(np.float32)) & np.isnan(b.astype(np.float32))
    return bool(same.all())


@pytest.mark.parametrize("t0", TYPES)
def test_every_chain_the_rule_merges_gives_the_direct_casts_bits(t0: str) -> None:
    x = samples(t0)
    for t1 in TYPES:
        if t1 == t0:
            continue
        y = cast(x, t1)
        for t2 in TYPES:
            if t2 != t1 and chain_is_mergeable(t0, t1, t2):
                chain, direct = cast(y, t2), cast(x, t2)
                assert same_bits_or_both_nan(chain, direct), (t0, t1, t2)


REFUSED = [
    ("f32", "f16", "f32"), ("f32", "bf16", "f32"), ("f16", "bf16", "f16"),
    ("bf16", "f16", "bf16"), ("f32", "i32", "f32"), ("i32", "f32", "i32"),
    ("i64", "f32", "i64"), ("f32", "i1", "f32"), ("i32", "i8", "i64"), ("f16", "i8", "f16"),
]


@pytest.mark.parametrize("chain", REFUSED, ids="->".join)
def test_chains_the_rule_refuses_really_change_values(chain) -> None:
    t0, t1, t2 = chain
    assert not chain_is_mergeable(t0, t1, t2)
    x = samples(t0)
    assert not same_bits_or_both_nan(cast(cast(x, t1), t2), cast(x, t2))


CASTS = """
func.func @main(%h: tensor<64xf16>, %b: tensor<64xi8>, %l: tensor<64xi64>, %x: tensor<64xf32>)
    -> (tensor<64xf16>, tensor<64xf32>, tensor<64xi8>, tensor<64xf32>, tensor<64xf32>,
        tensor<64xf32>) {
  %up = tx8be.Cast %h {to = "f32"} : (tensor<64xf16>) -> tensor<64xf32>
  %back = tx8be.Cast %up {to = "f16"} : (tensor<64xf32>) -> tensor<64xf16>
  %w = tx8be.Cast %b {to = "i32"} : (tensor<64xi8>) -> tensor<64xi32>
  %f = tx8be.Cast %w {to = "f32"} : (tensor<64xi32>) -> tensor<64xf32>
  %t = tx8be.Cast %l {to = "i32"} : (tensor<64xi64>) -> tensor<64xi32>
  %t8 = tx8be.Cast %t {to = "i8"} : (tensor<64xi32>) -> tensor<64xi8>
  %same = tx8be.Cast %x {to = "f32"} : (tensor<64xf32>) -> tensor<64xf32>
  %r = tx8be.Cast %x {to = "f16"} : (tensor<64xf32>) -> tensor<64xf16>
  %r2 = tx8be.Cast %r {to = "f32"} : (tensor<64xf16>) -> tensor<64xf32>
  %e = tx8be.Exp %up : (tensor<64xf32>) -> tensor<64xf32>
  func.return %back, %f, %t8, %same, %r2, %e
      : tensor<64xf16>, tensor<64xf32>, tensor<64xi8>, tensor<64xf32>, tensor<64xf32>,
        tensor<64xf32>
}
"""


def _cast_inputs() -> list[np.ndarray]:
    rng = np.random.default_rng(2)
    h = (rng.standard_normal(64) * 10).astype(np.float16)
    h[:3] = [np.inf, -np.inf, np.nan]
    return [h, rng.integers(-128, 128, 64).astype(np.int8),
            rng.integers(-(2**62), 2**62, 64), (rng.standard_normal(64) * 1e4).astype(np.float32)]


def test_canonicalize_cast_keeps_values_and_leaves_unsafe_chains() -> None:
    module = parse(CASTS)
    inputs = _cast_inputs()
    before = run_reference(module, inputs)
    apply(CanonicalizeCastPass(), module)
    # merged: f16->f32->f16 (gone), i8->i32->f32 (one cast), i64->i32->i8 (one cast),
    # f32->f32 (gone); kept: f32->f16->f32 (two casts) and the f16->f32 the Exp reads
    assert counts(module) == Counter({"Cast": 5, "Exp": 1})
    for b, a in zip(before, run_reference(module, inputs), strict=True):
        assert same_bits_or_both_nan(b.reshape(-1), a.reshape(-1))


def test_canonicalize_cast_keeps_the_imported_transformer() -> None:
    model = MODELS["transformer_encoder"]()
    module = import_onnx(model).module
    inputs = random_inputs(model, seed=5)
    before_counts, before = counts(module), run_reference(module, inputs)
    apply(CanonicalizeCastPass(), module)
    assert counts(module) == before_counts  # its one Cast (i64 mask -> f32) is needed
    assert_same_values(before, run_reference(module, inputs))


# =======================================================================================
# canonicalize-op
# =======================================================================================


def _array_text(a: np.ndarray) -> str:
    return "dense<" + np.array2string(
        a, separator=", ", threshold=10**6, floatmode="unique"
    ).replace("\n", "") + ">"


def _type(shape, dtype="f32") -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + f"{dtype}>"


def _const(name: str, a: np.ndarray, dtype="f32") -> str:
    t = _type(a.shape, dtype)
    return f"%{name} = tx8be.Constant {{value = {_array_text(a)} : {t}}} : () -> {t}"


def _conv_module(data_format: str, weight_format: str, groups: int, dtype: str,
                 const_bias: bool) -> tuple[ModuleOp, list[np.ndarray]]:
    rng = np.random.default_rng(3)
    n, c_in, c_out, h, w = 2, 4, 6, 5, 5
    x_shape = (n, c_in, h, w) if data_format == "NCHW" else (n, h, w, c_in)
    w_oihw = rng.standard_normal((c_out, c_in // groups, 3, 3)).astype(np.float32)
    weight = w_oihw if weight_format == "OIHW" else w_oihw.transpose(2, 3, 0, 1)
    bias = rng.standard_normal(c_out).astype(np.float32)
    out_shape = (n, c_out, h, w) if data_format == "NCHW" else (n, h, w, c_out)
    bias_def = _const("b", bias, dtype) if const_bias else ""
    bias_arg = "" if const_bias else f", %b: {_type((c_out,), dtype)}"
    text = f"""
func.func @main(%x: {_type(x_shape, dtype)}{bias_arg}) -> {_type(out_shape, dtype)} {{
  {_const("w", weight, dtype)}
  {bias_def}
  %y = tx8be.Conv %x, %w, %b {{pads = array<i64: 1, 1, 1, 1>, groups = {groups} : i64,
      data_format = "{data_format}", weight_format = "{weight_format}"}}
      : ({_type(x_shape, dtype)}, {_type(weight.shape, dtype)}, {_type((c_out,), dtype)})
      -> {_type(out_shape, dtype)}
  func.return %y : {_type(out_shape, dtype)}
}}"""
    np_dtype = NUMPY[dtype]
    inputs = [rng.standard_normal(x_shape).astype(np_dtype)]
    if not const_bias:
        inputs.append(bias.astype(np_dtype))
    return parse(text), inputs


@pytest.mark.parametrize("const_bias", [True, False], ids=["const-bias", "arg-bias"])
@pytest.mark.parametrize("layout", [("NCHW", "OIHW", 1), ("NHWC", "HWOI", 1),
                                    ("NCHW", "OIHW", 2)], ids=["nchw", "nhwc", "grouped"])
def test_conv_bias_splits_into_a_broadcast_add_bit_identical_in_f32(layout, const_bias):
    module, inputs = _conv_module(*layout, "f32", const_bias)
    before = run_reference(module, inputs)
    apply(CanonicalizeOpPass(), module)
    c = counts(module)
    assert c["Conv"] == 1 and c["Add"] == 1
    assert c["Reshape"] == (0 if const_bias or layout[0] == "NHWC" else 1)
    conv = next(op for op in module.walk() if op.name == "tx8be.Conv")
    assert len(conv.operands) == 2
    assert_same_values(before, run_reference(module, inputs))


def test_conv_bias_split_in_f16_rounds_at_most_once_more() -> None:
    module, inputs = _conv_module("NCHW", "OIHW", 1, "f16", True)
    before = run_reference(module, inputs)
    apply(CanonicalizeOpPass(), module)
    (after,) = run_reference(module, inputs)
    assert after.dtype == np.float16
    ulp = np.spacing(np.abs(before[0]).astype(np.float16)).astype(np.float32)
    err = np.abs(after.astype(np.float32) - before[0].astype(np.float32))
    assert (err <= 2 * ulp + 1e-3).all()
    assert compare_arrays(before[0], after).cosine >= 0.999


GEMMS = {
    "bias, beta 1": ("{}", "%c", (5,)),
    "bias, beta 0.5": ("{beta = 0.5 : f64}", "%c", (5,)),
    "2-D bias, alpha 2, trans_b": ("{alpha = 2.0 : f64, trans_b = true}", "%c", (3, 5)),
    "run-time bias, beta 3": ("{beta = 3.0 : f64}", "%arg", (5,)),
}


@pytest.mark.parametrize("case", sorted(GEMMS))
def test_gemm_bias_splits_into_an_add_bit_identical_in_f32(case: str) -> None:
    attrs, bias_name, bias_shape = GEMMS[case]
    rng = np.random.default_rng(4)
    trans_b = "trans_b" in attrs
    b = rng.standard_normal((5, 8) if trans_b else (8, 5)).astype(np.float32)
    c = rng.standard_normal(bias_shape).astype(np.float32)
    bt = _type(bias_shape)
    text = f"""
func.func @main(%a: tensor<3x8xf32>, %arg: {bt}) -> tensor<3x5xf32> {{
  {_const("b", b)}
  {_const("c", c)}
  %y = tx8be.Gemm %a, %b, {bias_name} {attrs}
      : (tensor<3x8xf32>, {_type(b.shape)}, {bt}) -> tensor<3x5xf32>
  func.return %y : tensor<3x5xf32>
}}"""
    module = parse(text)
    inputs = [rng.standard_normal((3, 8)).astype(np.float32), c * 2]
    before = run_reference(module, inputs)
    apply(CanonicalizeOpPass(), module)
    gemm = next(op for op in module.walk() if op.name == "tx8be.Gemm")
    assert len(gemm.operands) == 2 and gemm.attr("beta") == 1.0
    assert counts(module)["Add"] == 1
    assert_same_values(before, run_reference(module, inputs))


OPERANDS = """
func.func @main(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>)
    -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<2x3xf32>) {
  %c = tx8be.Constant {value = dense<[1.5, -2.0, 0.25]> : tensor<3xf32>} : () -> tensor<3xf32>
  %a = tx8be.Add %c, %x : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %m = tx8be.Mul %c, %a : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %s = tx8be.Sub %c, %m : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %cc = tx8be.Add %c, %c : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %xy = tx8be.Mul %x, %y : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %a, %m, %s, %cc, %xy
      : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<2x3xf32>
}
"""


def test_add_and_mul_take_their_constant_second_and_nothing_else_moves() -> None:
    module = parse(OPERANDS)
    rng = np.random.default_rng(5)
    inputs = [rng.standard_normal((2, 3)).astype(np.float32) for _ in range(2)]
    before = run_reference(module, inputs)
    apply(CanonicalizeOpPass(), module)
    ops = {op.results[0].name_hint: op for op in module.walk() if op.results}
    const = ops["c"].results[0]
    assert ops["a"].operands[1] is const and ops["m"].operands[1] is const
    assert ops["s"].operands[0] is const  # Sub does not commute
    assert list(ops["cc"].operands) == [const, const]
    assert ops["xy"].operands[0].name_hint == "x"
    assert_same_values(before, run_reference(module, inputs))


def test_fuse_undoes_the_split_bit_identically() -> None:
    for layout in (("NCHW", "OIHW", 1), ("NHWC", "HWOI", 2)):
        module, inputs = _conv_module(*layout, "f32", True)
        original = counts(module)
        before = run_reference(module, inputs)
        apply(CanonicalizeOpPass(), module)
        apply(CanonicalizeOpPass(bias_mode="fuse"), module)
        assert counts(module) == original
        assert_same_values(before, run_reference(module, inputs))


FUSE_REFUSED = """
func.func @main(%x: tensor<1x2x3x3xf32>, %a: tensor<2x4xf32>, %z: tensor<1x2x3x3xf32>)
    -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<2x2x3x3xf32>,
        tensor<1x2x3x3xf32>, tensor<2x3xf32>) {
  %w = tx8be.Constant {value = dense<0.5> : tensor<2x2x1x1xf32>} : () -> tensor<2x2x1x1xf32>
  %b = tx8be.Constant {value = dense<[[[1.0]], [[2.0]]]> : tensor<2x1x1xf32>}
      : () -> tensor<2x1x1xf32>
  %hw = tx8be.Constant {value = dense<[1.0, 2.0, 3.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %big = tx8be.Constant {value = dense<1.0> : tensor<2x1x1x1xf32>} : () -> tensor<2x1x1x1xf32>
  %c1 = tx8be.Conv %x, %w : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %twice = tx8be.Add %c1, %b : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %c2 = tx8be.Conv %x, %w : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %along_w = tx8be.Add %c2, %hw : (tensor<1x2x3x3xf32>, tensor<3xf32>) -> tensor<1x2x3x3xf32>
  %c3 = tx8be.Conv %x, %w : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %grows = tx8be.Add %c3, %big : (tensor<1x2x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<2x2x3x3xf32>
  %c4 = tx8be.Conv %x, %w : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %runtime = tx8be.Add %c4, %z : (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %gw = tx8be.Constant {value = dense<0.5> : tensor<4x3xf32>} : () -> tensor<4x3xf32>
  %gb = tx8be.Constant {value = dense<1.0> : tensor<3xf32>} : () -> tensor<3xf32>
  %g = tx8be.Gemm %a, %gw, %gb
      : (tensor<2x4xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %has_bias = tx8be.Add %g, %gb : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %c1, %twice, %along_w, %grows, %runtime, %has_bias
      : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<2x2x3x3xf32>,
        tensor<1x2x3x3xf32>, tensor<2x3xf32>
}
"""


def test_fuse_leaves_adds_that_are_not_a_bias_of_a_lone_product() -> None:
    """Refused: the product has another user; the constant varies along W; the Add makes
    the result bigger; the addend is a run-time value; the Gemm already has a bias."""
    module = apply(CanonicalizeOpPass(bias_mode="fuse"), parse(FUSE_REFUSED))
    assert counts(module) == counts(parse(FUSE_REFUSED))


def test_bad_bias_mode_is_a_user_error() -> None:
    with pytest.raises(Tx8Error, match="bias-mode must be one of split, fuse"):
        apply(CanonicalizeOpPass(bias_mode="merge"), parse(OPERANDS))


def _biased(module: ModuleOp) -> int:
    return sum(
        1 for op in module.walk()
        if op.name in ("tx8be.Conv", "tx8be.Gemm") and len(op.operands) == 3
    )


@pytest.mark.parametrize("name", sorted(MODELS))
def test_bundled_models_split_and_fuse_with_the_same_values(name: str) -> None:
    model = MODELS[name]()
    module = import_onnx(model).module
    inputs = random_inputs(model, seed=6)
    before_counts, before = counts(module), run_reference(module, inputs)
    biased = _biased(module)
    apply(CanonicalizeOpPass(), module)
    assert _biased(module) == 0
    assert counts(module)["Add"] == before_counts["Add"] + biased
    assert_same_values(before, run_reference(module, inputs))
    for e, g in zip(run_onnxruntime(model, inputs), before, strict=True):
        assert compare_arrays(e, g).cosine >= 0.99999
    # fuse: every bias-add of a lone Conv/Gemm goes into its bias (in the transformers:
    # the exporter's MatMul + Add of each Linear); values unchanged
    apply(CanonicalizeOpPass(bias_mode="fuse"), module)
    assert sum(counts(module).values()) <= sum(before_counts.values())
    assert_same_values(before, run_reference(module, inputs))
