"""The reference executor: groups (nested), constants, LoadConst with a constant container,
inputs by name and by position, and the errors a user can cause."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Region

from tests.helpers import parse_verified as parse
from tx8c.dialect.types import tensor_of
from tx8c.errors import Tx8ComputeError
from tx8c.sim.reference import ReferenceExecutor, run_reference

# out = relu((x + c) * w) + x, with the Add inside an inner group, c a Constant inside the
# outer group and w the LoadConst of constant 3; the second result is c itself.
NESTED = """
func.func @main(%x: tensor<2x3xf32> {tx8c.name = "image"}, %k: tensor<3xi32>)
    -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xi32>) {
  %w = tx8be.LoadConst {const_id = 3 : i64} : () -> tensor<3xf32>
  %g, %g_1 = tx8be.Group(%x, %w) {group_id = 0 : i64}
      : (tensor<2x3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>) {
  ^bb0(%a: tensor<2x3xf32>, %b: tensor<3xf32>):
    %la = tx8be.LoadVar %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %c = tx8be.Constant {value = dense<[1.0, -2.0, 3.0]> : tensor<3xf32>} : () -> tensor<3xf32>
    %inner = tx8be.Group(%la, %c) {group_id = 1 : i64}
        : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32> {
    ^bb0(%p: tensor<2x3xf32>, %q: tensor<3xf32>):
      %s = tx8be.Add %p, %q : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
      tx8be.Yield %s : tensor<2x3xf32>
    }
    %m = tx8be.Mul %inner, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %r = tx8be.Relu %m : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %o = tx8be.Add %r, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %st = tx8be.StoreVar %o : (tensor<2x3xf32>) -> tensor<2x3xf32>
    tx8be.Yield %st, %c : tensor<2x3xf32>, tensor<3xf32>
  }
  func.return %g, %g_1, %k : tensor<2x3xf32>, tensor<3xf32>, tensor<3xi32>
}
"""

# The same computation without groups, DMA ops or LoadConst.
FLAT = """
func.func @main(%x: tensor<2x3xf32>, %w: tensor<3xf32>) -> tensor<2x3xf32> {
  %c = tx8be.Constant {value = dense<[1.0, -2.0, 3.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %s = tx8be.Add %x, %c : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %m = tx8be.Mul %s, %w : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %r = tx8be.Relu %m : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %o = tx8be.Add %r, %x : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %o : tensor<2x3xf32>
}
"""

C = np.array([1.0, -2.0, 3.0], np.float32)


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    w = rng.standard_normal(3).astype(np.float32)
    k = np.array([1, 2, 3], np.int32)
    return x, w, k


def test_nested_groups_constants_and_load_const(data) -> None:
    x, w, k = data
    out, c, k_out = run_reference(parse(NESTED), [x, k], constants={3: w, 4: C})
    np.testing.assert_allclose(out, np.maximum((x + C) * w, 0) + x, rtol=1e-6)
    np.testing.assert_array_equal(c, C)
    np.testing.assert_array_equal(k_out, k)
    assert (out.dtype, c.dtype, k_out.dtype) == (np.float32, np.float32, np.int32)


def test_grouped_program_equals_the_flat_one(data) -> None:
    x, w, k = data
    (grouped, _, _) = run_reference(parse(NESTED), [x, k], constants={3: w})
    (flat,) = run_reference(parse(FLAT), [x, w])
    np.testing.assert_array_equal(grouped, flat)


def test_inputs_by_name_and_by_position(data) -> None:
    x, w, k = data
    module = parse(NESTED)
    executor = ReferenceExecutor(module, {3: w})
    by_position = executor.run([x, k])
    by_name = executor.run({"image": x, "arg1": k})  # unnamed inputs are argN
    for a, b in zip(by_position, by_name, strict=True):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(Tx8ComputeError, match=r"no value given for input\(s\) \['arg1'\]"):
        executor.run({"image": x, "k": k})


def test_load_const_without_its_constant(data) -> None:
    x, _, k = data
    with pytest.raises(Tx8ComputeError, match=r"const_id = 3\): constant 3 is not in"):
        run_reference(parse(NESTED), [x, k])
    with pytest.raises(Tx8ComputeError, match=r"const_id = 3\): the container holds a \[4\]"):
        run_reference(parse(NESTED), [x, k], constants={3: np.zeros(4, np.float32)})


def test_wrong_input_count_shape_and_dtype(data) -> None:
    x, _, k = data
    executor = ReferenceExecutor(parse(NESTED), {3: C})
    count = r"takes 2 input\(s\) \(\['image', 'arg1'\]\), got 1"
    with pytest.raises(Tx8ComputeError, match=count):
        executor.run([x])
    shape = r"input 'image' has shape \[3, 2\], the model expects \[2, 3\]"
    with pytest.raises(Tx8ComputeError, match=shape):
        executor.run([x.reshape(3, 2), k])
    dtype = "input 'arg1' has dtype int64, the model expects i32"
    with pytest.raises(Tx8ComputeError, match=dtype):
        executor.run([x, k.astype(np.int64)])


def test_non_tx8be_op_is_refused() -> None:
    x = np.ones((2, 3), np.float32)
    block = Block(arg_types=[tensor_of(x)])
    add = arith.AddfOp(block.args[0], block.args[0])
    block.add_ops([add, func.ReturnOp(add)])
    module = ModuleOp([func.FuncOp("main", ([tensor_of(x)], [tensor_of(x)]), Region(block))])
    with pytest.raises(Tx8ComputeError, match="'arith.addf' is not a tx8be op"):
        run_reference(module, [x])


def test_function_to_run_is_main() -> None:
    text = FLAT.replace("@main", "@other") + FLAT
    x, w = np.ones((2, 3), np.float32), np.full(3, 2, np.float32)
    (out,) = run_reference(parse(text), [x, w])
    np.testing.assert_allclose(out, np.maximum((x + C) * w, 0) + x)
    with pytest.raises(Tx8ComputeError, match="none is called @main"):
        run_reference(parse(FLAT.replace("@main", "@a") + FLAT.replace("@main", "@b")), [x, w])
