"""The bad-input corpus: what a hostile-but-realistic user gives `tx8c` and `tx8c-opt`.

Every case runs a command line on files of its own and asserts the promise of the README:
- the exit code (1 for a user error; 0 for the edge cases that must work);
- no Python traceback, and a one-paragraph message starting with "error:" that names the
  problem (the case's `needles`);
- no user file modified or removed, and no new file left behind by a failing command (no
  partial output); a succeeding one writes exactly the files it promises;
- bounded wall time (no hang) and bounded memory (no blow-up).

Commands run in-process (`tx8c.cli.main.main`, `tx8c.cli.opt.main`) with stdout and
stderr captured, a wall-clock alarm and the growth of the process's peak memory measured;
the few cases about the process itself (exit status of the real executable, tracebacks
printed by the interpreter) run as subprocesses. `summary()` prints the table the issue
asks for: tried / clean error / traceback / hang / harmed file / partial output.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from tx8c.cli.main import main as tx8c_main
from tx8c.cli.opt import main as opt_main

SECONDS_PER_CASE = 30
"""The alarm: a case running longer than this is a hang."""
MAX_MEMORY_GROWTH = 1 << 30
"""Bytes the process's peak memory may grow by during one case."""

# --------------------------------------------------------------------------------------
# Building the inputs
# --------------------------------------------------------------------------------------

Setup = Callable[[Path], None]


def vi(name: str, shape, elem=TensorProto.FLOAT) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def model(nodes, inputs, outputs, inits=(), opset: int = 17, ir: int = 8) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = ir
    return m


def init(name: str, value, dtype=np.float32) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(value, dtype=dtype), name)


def one_node(op: str, inputs=("x",), attrs=None, x_shape=(1, 3, 8, 8), inits=(),
             extra_inputs=(), y_shape=None, opset=17, elem=TensorProto.FLOAT, outputs=("y",),
             name="n0", out_elems=None) -> onnx.ModelProto:
    """One node on input x (of type `elem`); outputs of type `out_elems` (default
    `elem`)."""
    node = helper.make_node(op, list(inputs), list(outputs), name=name, **(attrs or {}))
    out_elems = out_elems or [elem] * len(outputs)
    return model([node], [vi("x", list(x_shape), elem), *extra_inputs],
                 [vi(o, y_shape, e) for o, e in zip(outputs, out_elems, strict=True)], inits,
                 opset=opset)


def relu(shape=(2, 3), **kw) -> onnx.ModelProto:
    return one_node("Relu", x_shape=shape, **kw)


def onnx_file(name: str, make: Callable[[], onnx.ModelProto]) -> Setup:
    return lambda d: onnx.save(make(), d / name)


def text_file(name: str, text: str) -> Setup:
    return lambda d: (d / name).write_text(text, encoding="utf-8")


def bytes_file(name: str, data: bytes) -> Setup:
    return lambda d: (d / name).write_bytes(data)


def directory(name: str) -> Setup:
    return lambda d: (d / name).mkdir(parents=True, exist_ok=True)


def npz_file(name: str, **arrays) -> Setup:
    def make(d: Path) -> None:
        with open(d / name, "wb") as f:
            np.savez(f, **arrays)

    return make


def npz_raw(name: str, arrays: dict) -> Setup:
    """An npz with names np.savez would not take (`file`, non-ASCII)."""
    def make(d: Path) -> None:
        with zipfile.ZipFile(d / name, "w") as z:
            for key, value in arrays.items():
                with z.open(f"{key}.npy", "w") as member:
                    np.lib.format.write_array(member, np.asarray(value))

    return make


def npy_file(name: str, array) -> Setup:
    def make(d: Path) -> None:
        with open(d / name, "wb") as f:
            np.save(f, array)

    return make


def truncated(source: Setup, source_name: str, name: str, keep: float | int) -> Setup:
    """`source` written, then cut: the first `keep` bytes (a fraction or a count)."""
    def make(d: Path) -> None:
        scratch = d / ".scratch"
        scratch.mkdir()
        source(scratch)
        data = (scratch / source_name).read_bytes()
        count = int(len(data) * keep) if isinstance(keep, float) else keep
        (d / name).write_bytes(data[:count])
        shutil.rmtree(scratch)

    return make


# a compiled model (the output directory of `tx8c compile`), made once per worker
_COMPILED: dict[str, dict[str, bytes]] = {}


def compiled(name: str = "out", make: Callable[[], onnx.ModelProto] = relu) -> Setup:
    """The output directory of `tx8c compile` for `make`'s model (model.mlir, consts.bin,
    consts.json and report.json)."""
    def setup(d: Path) -> None:
        key = f"{make.__name__}"
        if key not in _COMPILED:
            scratch = Path(__import__("tempfile").mkdtemp())
            onnx.save(make(), scratch / "m.onnx")
            with contextlib.redirect_stderr(io.StringIO()):
                assert tx8c_main(["compile", str(scratch / "m.onnx"), "-o",
                                  str(scratch / "o"), "--quiet"]) == 0
            _COMPILED[key] = {p.name: p.read_bytes() for p in (scratch / "o").iterdir()
                              if p.is_file()}
            shutil.rmtree(scratch)
        (d / name).mkdir()
        for file_name, data in _COMPILED[key].items():
            (d / name / file_name).write_bytes(data)

    return setup


_IMPORTED: dict[str, str] = {}


def compiled_text() -> str:
    """A small CNN's module as IR text with its weights inline (dense<"0x..."> literals):
    what `--dump-ir-after-all` writes after import."""
    if "cnn" not in _IMPORTED:
        from examples.make_models import MODELS
        from tx8c.frontend.onnx.importer import import_onnx
        from tx8c.ir import print_module

        _IMPORTED["cnn"] = print_module(import_onnx(MODELS["residual_cnn"]()).module)
    return _IMPORTED["cnn"]


def cut_mlir(name: str, where: Callable[[str], int]) -> Setup:
    def make(d: Path) -> None:
        text = compiled_text()
        (d / name).write_text(text[: where(text)], encoding="utf-8")

    return make


GOOD_MLIR = """func.func @main(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = tx8be.Add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
"""

# --------------------------------------------------------------------------------------
# The cases
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    id: str
    tool: str  # "tx8c" or "tx8c-opt"
    argv: tuple[str, ...]  # "{d}" is the case's directory
    setup: tuple[Setup, ...] = ()
    needles: tuple[str, ...] = ()
    code: int = 1
    outputs: tuple[str, ...] = ()
    """For code 0: files (relative to the directory) the command must have written."""
    absent: tuple[str, ...] = ()
    """Files that must not exist afterwards (for code 0)."""
    writes: tuple[str, ...] = ()
    """Path prefixes a succeeding command may change besides `outputs` and `absent` (an
    output directory whose old contents it replaces)."""
    subprocess: bool = False
    check: Callable[[Path, str, str], None] | None = field(default=None, compare=False)
    """Extra assertions on (directory, stdout, stderr)."""


CASES: list[Case] = []


def case(id: str, tool: str, *argv: str, setup=(), needles=(), code=1, outputs=(), absent=(),
         writes=(), subprocess=False, check=None) -> None:
    assert all(c.id != id for c in CASES), id
    CASES.append(Case(id, tool, tuple(argv), tuple(setup), tuple(needles), code,
                      tuple(outputs), tuple(absent), tuple(writes), subprocess, check))


def compile_case(id: str, make: Callable[[], onnx.ModelProto], *needles: str, extra=(),
                 code=1, outputs=(), check=None) -> None:
    case(id, "tx8c", "compile", "{d}/m.onnx", "-o", "{d}/out", *extra,
         setup=[onnx_file("m.onnx", make)], needles=needles, code=code, outputs=outputs,
         check=check)


# -- ONNX files that are not (readable) models ---------------------------------------------

case("onnx-missing", "tx8c", "compile", "{d}/absent.onnx", "-o", "{d}/out",
     needles=["does not exist"])
case("onnx-directory", "tx8c", "compile", "{d}/dir.onnx", "-o", "{d}/out",
     setup=[directory("dir.onnx")], needles=["is a directory"])
case("onnx-empty-file", "tx8c", "compile", "{d}/m.onnx", "-o", "{d}/out",
     setup=[bytes_file("m.onnx", b"")], needles=["holds no ONNX graph"])
case("onnx-text-file", "tx8c", "compile", "{d}/m.onnx", "-o", "{d}/out",
     setup=[text_file("m.onnx", "my notes, not a model\n")], needles=["not a readable ONNX"])
case("onnx-random-bytes", "tx8c", "compile", "{d}/m.onnx", "-o", "{d}/out",
     setup=[bytes_file("m.onnx", np.random.default_rng(0).bytes(4096))],
     needles=["ONNX"])
for _keep in (0.3, 0.6, 0.95):
    case(f"onnx-truncated-{_keep}", "tx8c", "compile", "{d}/m.onnx", "-o", "{d}/out",
         setup=[truncated(onnx_file("full.onnx", lambda: __import__(
             "examples.make_models", fromlist=["MODELS"]).MODELS["residual_cnn"]()),
             "full.onnx", "m.onnx", _keep)],
         needles=["ONNX"])
case("onnx-truncated-compare", "tx8c", "compare", "{d}/m.onnx",
     setup=[truncated(onnx_file("full.onnx", relu), "full.onnx", "m.onnx", 0.5)],
     needles=["not a readable ONNX"])

# -- opsets ------------------------------------------------------------------------------
compile_case("opset-6", lambda: relu(opset=6), "opset 6", "7 to 26")
compile_case("opset-27", lambda: relu(opset=27), "opset 27", "convert_version")


def _no_opset() -> onnx.ModelProto:
    m = relu()
    del m.opset_import[:]
    m.opset_import.append(helper.make_opsetid("com.example", 1))
    return m


compile_case("opset-none", _no_opset, "no opset")

# -- graphs ONNX itself rejects ----------------------------------------------------------
compile_case("float-strides", lambda: one_node(
    "MaxPool", attrs={"kernel_shape": [2, 2], "strides": [2.0, 2.0]}), "n0", "strides")
compile_case("softmax-axis-7", lambda: one_node("Softmax", attrs={"axis": 7}), "axis", "7")
compile_case("two-writers", lambda: model(
    [helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Sigmoid", ["x"], ["y"])],
    [vi("x", [2, 3])], [vi("y", [2, 3])]), "'y'", "output names multiple times")
compile_case("no-outputs", lambda: model(
    [helper.make_node("Relu", ["x"], ["y"])], [vi("x", [2, 3])], []), "no outputs")
compile_case("missing-attribute", lambda: one_node("MaxPool"), "kernel_shape", "n0")
compile_case("unknown-attribute", lambda: one_node("Relu", attrs={"foo": 1}), "foo", "Relu")
compile_case("mistyped-attribute", lambda: one_node("LeakyRelu", attrs={"alpha": "big"}),
             "alpha", "n0")
compile_case("unsorted-graph", lambda: model(
    [helper.make_node("Relu", ["a"], ["y"]), helper.make_node("Relu", ["x"], ["a"])],
    [vi("x", [2, 3])], [vi("y", [2, 3])]), "topologically sorted")
compile_case("undefined-input", lambda: model(
    [helper.make_node("Add", ["x", "ghost"], ["y"])], [vi("x", [2, 3])], [vi("y", [2, 3])]),
    "ghost")
compile_case("reshape-wrong-count", lambda: one_node(
    "Reshape", ("x", "s"), x_shape=(2, 3), inits=[init("s", [4, 2], np.int64)]), "eshape")
compile_case("matmul-mismatch", lambda: one_node(
    "MatMul", ("x", "w"), x_shape=(2, 3), inits=[init("w", np.ones((4, 5)))]), "n0")
compile_case("conv-weight-rank", lambda: one_node(
    "Conv", ("x", "w"), inits=[init("w", np.ones((4, 3, 3)))]), "n0")
compile_case("concat-mismatch", lambda: one_node(
    "Concat", ("x", "c"), attrs={"axis": 1}, x_shape=(2, 3),
    inits=[init("c", np.ones((3, 3)))]), "n0")
compile_case("transpose-bad-perm", lambda: one_node(
    "Transpose", attrs={"perm": [0, 0, 1]}, x_shape=(2, 3, 4)), "perm")
compile_case("split-wrong-sizes", lambda: one_node(
    "Split", ("x", "s"), attrs={"axis": 1}, x_shape=(2, 6), outputs=("a", "b"),
    inits=[init("s", [2, 2], np.int64)]), "n0")
compile_case("slice-step-0", lambda: one_node(
    "Slice", ("x", "st", "en", "ax", "sp"), x_shape=(2, 6),
    inits=[init("st", [0], np.int64), init("en", [4], np.int64), init("ax", [1], np.int64),
           init("sp", [0], np.int64)]), "n0", "step")
compile_case("pad-reflect-too-wide", lambda: one_node(
    "Pad", ("x", "p"), attrs={"mode": "reflect"}, x_shape=(2, 3),
    inits=[init("p", [0, 5, 0, 5], np.int64)]), "n0", "reflect")
compile_case("auto-pad-bogus", lambda: one_node(
    "Conv", ("x", "w"), attrs={"auto_pad": "SIDEWAYS"},
    inits=[init("w", np.ones((4, 3, 3, 3)))]), "auto_pad")
compile_case("softmax-on-int", lambda: one_node(
    "Softmax", x_shape=(2, 3), elem=TensorProto.INT32), "n0")
compile_case("resize-scales-and-sizes", lambda: one_node(
    "Resize", ("x", "", "sc", "sz"),
    inits=[init("sc", [1, 1, 2, 2]), init("sz", [1, 3, 16, 16], np.int64)]), "n0")

# -- graphs ONNX accepts but tx8c cannot take ----------------------------------------------
compile_case("gather-index-out-of-range", lambda: one_node(
    "Gather", ("x", "i"), attrs={"axis": 1}, x_shape=(2, 3),
    inits=[init("i", [0, 5], np.int64)]), "n0", "index 5", "out of range")
compile_case("initializer-shadows-input", lambda: model(
    [helper.make_node("Relu", ["x"], ["y"])], [vi("x", [1, 3, 8, 8])], [vi("y", None)],
    [init("x", np.zeros((2, 2)))]), "shadows an input")
compile_case("int-div-by-zero", lambda: one_node(
    "Div", ("x", "z"), x_shape=(2, 3), elem=TensorProto.INT32,
    inits=[init("z", [1, 0, 2], np.int32)]), "n0", "zero")
compile_case("int-div-by-zero-folded", lambda: model(
    [helper.make_node("Div", ["a", "z"], ["q"], name="div"),
     helper.make_node("Cast", ["q"], ["qf"], to=TensorProto.FLOAT),
     helper.make_node("Add", ["x", "qf"], ["y"])],
    [vi("x", [3])], [vi("y", [3])],
    [init("a", [4, 5, 6], np.int64), init("z", [2, 0, 3], np.int64)]), "div", "zero")


def _range(limit: float) -> onnx.ModelProto:
    return model(
        [helper.make_node("Range", ["s", "l", "dl"], ["r"], name="range"),
         helper.make_node("Cast", ["r"], ["rf"], to=TensorProto.FLOAT),
         helper.make_node("ReduceSum", ["rf"], ["sum"], keepdims=0),
         helper.make_node("Add", ["x", "sum"], ["y"])],
        [vi("x", [3])], [vi("y", [3])],
        [init("s", 0, np.int64), init("l", int(limit), np.int64), init("dl", 1, np.int64)])


compile_case("range-1e11", lambda: _range(1e11), "range", "elements")
compile_case("range-delta-0", lambda: model(
    [helper.make_node("Range", ["s", "l", "dl"], ["r"], name="range"),
     helper.make_node("Cast", ["r"], ["rf"], to=TensorProto.FLOAT),
     helper.make_node("Add", ["x", "rf"], ["y"])],
    [vi("x", [3])], [vi("y", [3])],
    [init("s", 0, np.int64), init("l", 3, np.int64), init("dl", 0, np.int64)]), "range", "0")


def _constant_of_shape(shape) -> onnx.ModelProto:
    return model(
        [helper.make_node("ConstantOfShape", ["s"], ["c"], name="cos",
                          value=helper.make_tensor("v", TensorProto.FLOAT, [1], [0.5])),
         helper.make_node("Add", ["x", "c"], ["y"])],
        [vi("x", [1])], [vi("y", None)], [init("s", shape, np.int64)])


compile_case("constant-of-shape-8192x8192", lambda: _constant_of_shape([8192, 8192]),
             code=0, outputs=("out/model.mlir", "out/report.json"),
             check=lambda d, out, err: _assert_small(d / "out" / "model.mlir", 1 << 20))
compile_case("constant-of-shape-1e12", lambda: _constant_of_shape([1000000, 1000000]),
             "cos", "elements")
compile_case("unsupported-ops", lambda: model(
    [helper.make_node("Relu", ["x"], ["a"]),
     helper.make_node("RoiAlign", ["a", "r", "b"], ["y"], name="roi")],
    [vi("x", [1, 3, 8, 8])], [vi("y", None)],
    [init("r", np.zeros((1, 4))), init("b", [0], np.int64)]), "RoiAlign", "'roi'")


def _custom_domain() -> onnx.ModelProto:
    m = model([helper.make_node("FusedThing", ["x"], ["y"], domain="com.example", name="f")],
              [vi("x", [2])], [vi("y", [2])])
    m.opset_import.append(helper.make_opsetid("com.example", 1))
    return m


compile_case("custom-domain-op", _custom_domain, "com.example.FusedThing")
compile_case("dynamic-dims", lambda: relu(shape=("batch", 3)), "--input-shapes", "batch")
compile_case("negative-input-dim", lambda: relu(shape=(-2, 3)), "negative dimension")
compile_case("string-input", lambda: one_node("Identity", x_shape=(2,), elem=TensorProto.STRING),
             "STRING")
compile_case("double-input", lambda: relu(elem=TensorProto.DOUBLE), "DOUBLE")
compile_case("cast-to-double", lambda: one_node(
    "Cast", attrs={"to": TensorProto.DOUBLE}, x_shape=(2,), out_elems=[TensorProto.DOUBLE]),
    "n0", "DOUBLE")


def _short_raw_data() -> onnx.ModelProto:
    w = init("w", np.ones((2, 3)))
    w.raw_data = w.raw_data[:4]
    return one_node("Add", ("x", "w"), x_shape=(2, 3), inits=[w])


compile_case("short-raw-data", _short_raw_data, "initializer 'w'", "4 bytes")


def _short_constant_node() -> onnx.ModelProto:
    t = numpy_helper.from_array(np.ones((2, 3), np.float32), "c")
    t.raw_data = t.raw_data[:8]
    return model([helper.make_node("Constant", [], ["c"], value=t, name="k"),
                  helper.make_node("Add", ["x", "c"], ["y"])],
                 [vi("x", [2, 3])], [vi("y", [2, 3])])


compile_case("short-constant-node", _short_constant_node, "Name: k", "8 bytes")
compile_case("maxpool-indices", lambda: one_node(
    "MaxPool", attrs={"kernel_shape": [2, 2]}, outputs=("y", "idx"),
    out_elems=[TensorProto.FLOAT, TensorProto.INT64]), "Indices")
compile_case("batchnorm-spatial-0", lambda: model(
    [helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], spatial=0,
                      name="bn")],
    [vi("x", [1, 3, 4, 4])], [vi("y", None)],
    [init(n, np.ones((3, 4, 4))) for n in "sbmv"], opset=8), "bn", "spatial")
compile_case("sequence-input", lambda: model(
    [helper.make_node("Identity", ["s"], ["y"])],
    [helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, [2])],
    [helper.make_tensor_sequence_value_info("y", TensorProto.FLOAT, [2])]), "'s'", "sequence")
compile_case("sequence-op", lambda: model(
    [helper.make_node("SequenceLength", ["s"], ["y"])],
    [helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, [2])],
    [vi("y", [], TensorProto.INT64)]), "SequenceLength")


# -- ops whose converters check what ONNX does not -------------------------------------------
compile_case("einsum-diagonal", lambda: one_node(
    "Einsum", attrs={"equation": "ii->i"}, x_shape=(3, 3)), "n0", "repeats a letter")
compile_case("if-run-time-condition", lambda: model(
    [helper.make_node("If", ["c"], ["y"], name="branch",
                      then_branch=helper.make_graph([helper.make_node("Relu", ["x"], ["t"])],
                                                    "then", [], [vi("t", [2])]),
                      else_branch=helper.make_graph([helper.make_node("Neg", ["x"], ["e"])],
                                                    "else", [], [vi("e", [2])]))],
    [vi("x", [2]), vi("c", [], TensorProto.BOOL)], [vi("y", [2])]), "branch",
    "compile time")
compile_case("loop", lambda: model(
    [helper.make_node("Loop", ["n", "c"], ["y"], name="loop", body=helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"])], "body",
        [vi("i", [], TensorProto.INT64), vi("cond_in", [], TensorProto.BOOL)],
        [vi("cond_out", [], TensorProto.BOOL)]))],
    [vi("x", [2])], [vi("y", None, TensorProto.BOOL)],
    [init("n", 3, np.int64), init("c", True, np.bool_)]), "Loop", "'loop'")
compile_case("uint8-graph-output", lambda: model(
    [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], name="q")],
    [vi("x", [4])], [vi("y", [4], TensorProto.UINT8)],
    [init("s", 0.1), init("z", 3, np.uint8)]), "'y'", "UINT8")
compile_case("quantize-to-float8", lambda: model(
    [helper.make_node("QuantizeLinear", ["x", "s"], ["q"], name="q",
                      output_dtype=TensorProto.FLOAT8E4M3FN),
     helper.make_node("DequantizeLinear", ["q", "s"], ["y"])],
    [vi("x", [4])], [vi("y", [4])], [init("s", 0.1)], opset=21), "q", "not supported")
compile_case("one-hot-depth-0", lambda: one_node(
    "OneHot", ("x", "d", "v"), x_shape=(3,), elem=TensorProto.INT64,
    inits=[init("d", 0, np.int64), init("v", [0, 1])], out_elems=[TensorProto.FLOAT]),
    "n0", "depth")
compile_case("reverse-sequence-too-long", lambda: one_node(
    "ReverseSequence", ("x", "l"), x_shape=(4, 2, 3), inits=[init("l", [5, 2], np.int64)]),
    "n0", "sequence_lens")
compile_case("conv-transpose-3d", lambda: one_node(
    "ConvTranspose", ("x", "w"), x_shape=(1, 2, 3, 3, 3),
    inits=[init("w", np.ones((2, 2, 2, 2, 2)))]), "n0", "3-D ConvTranspose")
compile_case("recurrent-unknown-activation", lambda: one_node(
    "RNN", ("x", "w", "r"), x_shape=(3, 1, 2), attrs={"hidden_size": 4,
                                                      "activations": ["Swish"]},
    inits=[init("w", np.ones((1, 4, 2))), init("r", np.ones((1, 4, 4)))]),
    "n0", "Swish")
compile_case("lp-normalization-p-3", lambda: one_node(
    "LpNormalization", attrs={"p": 3}, x_shape=(2, 3)), "n0", "p must be 1 or 2")
compile_case("compress-run-time-condition", lambda: one_node(
    "Compress", ("x", "c"), x_shape=(4,), extra_inputs=[vi("c", [4], TensorProto.BOOL)]),
    "n0", "compile time")
compile_case("topk-run-time-k", lambda: one_node(
    "TopK", ("x", "k"), x_shape=(2, 5), outputs=("v", "i"),
    extra_inputs=[vi("k", [1], TensorProto.INT64)],
    out_elems=[TensorProto.FLOAT, TensorProto.INT64]), "n0", "compile time")
compile_case("attention-3d-without-heads", lambda: model(
    [helper.make_node("Attention", ["q", "k", "v"], ["y"], name="att")],
    [vi("q", [1, 4, 8]), vi("k", [1, 4, 8]), vi("v", [1, 4, 8])], [vi("y", None)],
    opset=23), "att", "heads")
compile_case("group-norm-bad-groups", lambda: one_node(
    "GroupNormalization", ("x", "s", "b"), attrs={"num_groups": 4},
    inits=[init("s", np.ones(3)), init("b", np.zeros(3))], opset=21), "n0")


def _external_data(d: Path, keep_data: bool) -> None:
    m = one_node("Add", ("x", "w"), x_shape=(64, 64), inits=[init("w", np.ones((64, 64)))])
    (d / "models").mkdir()
    onnx.save(m, d / "models" / "m.onnx", save_as_external_data=True,
              location="m.weights", size_threshold=0)
    if not keep_data:
        (d / "models" / "m.weights").unlink()


case("external-data-missing", "tx8c", "compile", "{d}/models/m.onnx", "-o", "{d}/out",
     setup=[lambda d: _external_data(d, False)], needles=["'w'", "m.weights", "external data"])
case("external-data-beside-model", "tx8c", "compile", "{d}/models/m.onnx", "-o", "{d}/out",
     "--quiet", setup=[lambda d: _external_data(d, True)], code=0,
     outputs=("out/model.mlir",))


def _unicode_model() -> onnx.ModelProto:
    return model([helper.make_node("Relu", ["größe_入力"], ["出力"])],
                 [vi("größe_入力", [2, 3])], [vi("出力", [2, 3])])


case("unicode-names-compile-and-run", "tx8c", "run", "{d}/out", "--inputs", "{d}/in.npz",
     "-o", "{d}/y.npz", "--quiet",
     setup=[compiled("out", _unicode_model),
            npz_raw("in.npz", {"größe_入力": np.ones((2, 3), np.float32)})],
     code=0, outputs=("y.npz",),
     check=lambda d, out, err: _assert_npz_keys(d / "y.npz", ["出力"]))
compile_case("empty-dimension", lambda: relu(shape=(0, 3)), code=0, outputs=("out/model.mlir",))

# -- command lines -------------------------------------------------------------------------
case("no-arguments", "tx8c", needles=["usage:", "required"])
case("unknown-command", "tx8c", "build", "m.onnx", needles=["invalid choice", "build"])
case("compile-without-output", "tx8c", "compile", "{d}/m.onnx",
     setup=[onnx_file("m.onnx", relu)], needles=["-o/--output", "required"])
for _spec, _needle in (("x=1,3", "NAME:DIM"), ("x:1x", "NAME:DIM"), (":1x3", "NAME:DIM"),
                       ("x:1x0", "size 0"), ("x:2x3,x:2x3", "twice"),
                       ("nope:1x3", "'nope', which the model does not have"),
                       ("x:2x3x4", "rank 3"), ("x:-1x3", "NAME:DIM"), ("x:axb", "NAME:DIM")):
    case(f"input-shapes-{_spec}", "tx8c", "compile", "{d}/m.onnx", "-o", "{d}/out",
         "--input-shapes", _spec, setup=[onnx_file("m.onnx", lambda: relu(shape=("n", 3)))],
         needles=[_needle])
case("input-shapes-conflict", "tx8c", "compile", "{d}/m.onnx", "-o", "{d}/out",
     "--input-shapes", "x:5x3", setup=[onnx_file("m.onnx", lambda: relu(shape=(2, 3)))],
     needles=["fixes it to 2"])
case("opt-level-5", "tx8c", "compile", "{d}/m.onnx", "-o", "{d}/out", "--opt-level", "5",
     setup=[onnx_file("m.onnx", relu)], needles=["--opt-level", "invalid choice"])
case("layout-strategy-bogus", "tx8c", "compile", "{d}/m.onnx", "-o", "{d}/out",
     "--layout-strategy", "best", setup=[onnx_file("m.onnx", relu)],
     needles=["--layout-strategy", "invalid choice"])
case("seed-negative", "tx8c", "compare", "{d}/m.onnx", "--seed", "-1",
     setup=[onnx_file("m.onnx", relu)], needles=["--seed", "0 or more"])
case("seed-not-a-number", "tx8c", "compare", "{d}/m.onnx", "--seed", "abc",
     setup=[onnx_file("m.onnx", relu)], needles=["--seed", "not an integer"])
case("compile-output-is-a-file", "tx8c", "compile", "{d}/m.onnx", "-o", "{d}/keep.txt",
     setup=[onnx_file("m.onnx", relu), text_file("keep.txt", "mine")],
     needles=["not a directory"])
case("compile-output-parent-is-a-file", "tx8c", "compile", "{d}/m.onnx", "-o",
     "{d}/keep.txt/out", setup=[onnx_file("m.onnx", relu), text_file("keep.txt", "mine")],
     needles=["keep.txt"])
case("compile-would-overwrite-input", "tx8c", "compile", "{d}/out/report.json", "-o",
     "{d}/out", setup=[directory("out"), onnx_file("out/report.json", relu)],
     needles=["is the input"])
case("compile-input-inside-stages", "tx8c", "compile", "{d}/out/stages/00-m.mlir", "-o",
     "{d}/out", "--dump-ir-after-all",
     setup=[directory("out/stages"), onnx_file("out/stages/00-m.mlir", relu)],
     needles=["replaces on every run"])
case("compile-foreign-files-in-stages", "tx8c", "compile", "{d}/m.onnx", "-o", "{d}/out",
     "--dump-ir-after-all",
     setup=[onnx_file("m.onnx", relu), directory("out/stages"),
            text_file("out/stages/notes.txt", "mine")],
     needles=["did not write", "notes.txt"])


def _old_stages(d: Path) -> None:
    (d / "out" / "stages").mkdir(parents=True)
    for name in ("00-import.mlir", "07-old-pass.mlir", "99-stale.mlir"):
        (d / "out" / "stages" / name).write_text("// from an older run\n")


def _only_new_stages(d: Path, out: str, err: str) -> None:
    names = sorted(p.name for p in (d / "out" / "stages").iterdir())
    assert "99-stale.mlir" not in names and "07-old-pass.mlir" not in names, names
    assert all("older run" not in (d / "out" / "stages" / n).read_text() for n in names)


case("compile-replaces-old-stages", "tx8c", "compile", "{d}/m.onnx", "-o", "{d}/out",
     "--dump-ir-after-all", "--quiet", setup=[onnx_file("m.onnx", relu), _old_stages],
     code=0, outputs=("out/model.mlir", "out/stages/00-import.mlir"), writes=("out/stages",),
     check=_only_new_stages)
case("compile-removes-old-stages", "tx8c", "compile", "{d}/m.onnx", "-o", "{d}/out",
     "--quiet", setup=[onnx_file("m.onnx", relu), _old_stages], code=0,
     outputs=("out/model.mlir",), absent=("out/stages",))
case("run-output-is-inputs", "tx8c", "run", "{d}/out", "--inputs", "{d}/in.npz", "-o",
     "{d}/in.npz", setup=[compiled(), npz_file("in.npz", x=np.ones((2, 3), np.float32))],
     needles=["is the input"])
case("run-output-is-inputs-without-suffix", "tx8c", "run", "{d}/out", "--inputs",
     "{d}/in.npz", "-o", "{d}/in",
     setup=[compiled(), npz_file("in.npz", x=np.ones((2, 3), np.float32))],
     code=0, outputs=("in",), absent=("in.npz.npz",))
case("run-output-is-model", "tx8c", "run", "{d}/out", "--inputs", "{d}/in.npz", "-o",
     "{d}/out/model.mlir",
     setup=[compiled(), npz_file("in.npz", x=np.ones((2, 3), np.float32))],
     needles=["is the input"])
case("run-output-is-the-constants", "tx8c", "run", "{d}/out", "--inputs", "{d}/in.npz", "-o",
     "{d}/out/consts.bin", setup=[compiled(), npz_file("in.npz", x=np.ones((2, 3), np.float32))],
     needles=["is the input"])
case("run-output-is-a-directory", "tx8c", "run", "{d}/out", "--inputs", "{d}/in.npz", "-o",
     "{d}/out", setup=[compiled(), npz_file("in.npz", x=np.ones((2, 3), np.float32))],
     needles=["is a directory"])
case("run-output-exact-path", "tx8c", "run", "{d}/out", "--inputs", "{d}/in.npz", "-o",
     "{d}/result.txt", "--quiet",
     setup=[compiled(), npz_file("in.npz", x=np.ones((2, 3), np.float32))],
     code=0, outputs=("result.txt",), absent=("result.txt.npz",),
     check=lambda d, out, err: _assert_npz_keys(d / "result.txt", ["y"]))


def _awkward_names() -> onnx.ModelProto:
    return model([helper.make_node("Relu", ["x"], ["file"]),
                  helper.make_node("Neg", ["x"], ["allow_pickle"])],
                 [vi("x", [2, 3])], [vi("file", [2, 3]), vi("allow_pickle", [2, 3])])


case("run-outputs-named-like-savez-arguments", "tx8c", "run", "{d}/out", "--inputs",
     "{d}/in.npz", "-o", "{d}/y.npz", "--quiet",
     setup=[compiled("out", _awkward_names), npz_file("in.npz", x=np.ones((2, 3), np.float32))],
     code=0, outputs=("y.npz",),
     check=lambda d, out, err: _assert_npz_keys(d / "y.npz", ["file", "allow_pickle"]))
case("run-output-in-new-directory", "tx8c", "run", "{d}/out", "--inputs", "{d}/in.npz", "-o",
     "{d}/new/deeper/y.npz", "--quiet",
     setup=[compiled(), npz_file("in.npz", x=np.ones((2, 3), np.float32))],
     code=0, outputs=("new/deeper/y.npz",))
case("run-output-parent-is-a-file", "tx8c", "run", "{d}/out", "--inputs", "{d}/in.npz",
     "-o", "{d}/keep.txt/y.npz",
     setup=[compiled(), npz_file("in.npz", x=np.ones((2, 3), np.float32)),
            text_file("keep.txt", "mine")], needles=["keep.txt"])
case("run-an-onnx-model", "tx8c", "run", "{d}/m.onnx", "--inputs", "{d}/in.npz", "-o",
     "{d}/y.npz", setup=[onnx_file("m.onnx", relu), npz_file("in.npz", x=np.ones((2, 3)))],
     needles=["is an ONNX model", "tx8c compile"])
case("run-missing-directory", "tx8c", "run", "{d}/nowhere", "--inputs", "{d}/in.npz", "-o",
     "{d}/y.npz", setup=[npz_file("in.npz", x=np.ones((2, 3)))], needles=["not found"])
case("run-directory-without-model", "tx8c", "run", "{d}/empty", "--inputs", "{d}/in.npz",
     "-o", "{d}/y.npz", setup=[directory("empty"), npz_file("in.npz", x=np.ones((2, 3)))],
     needles=["model.mlir", "not found"])
case("run-without-inputs", "tx8c", "run", "{d}/out", "-o", "{d}/y.npz",
     setup=[compiled()], needles=["--inputs", "required"])
case("compare-inputs-missing", "tx8c", "compare", "{d}/m.onnx", "--inputs", "{d}/nope.npz",
     setup=[onnx_file("m.onnx", relu)], needles=["does not exist"])
case("compare-too-large", "tx8c", "compare", "{d}/m.onnx", "--input-shapes",
     "x:1x3x100000x100000", setup=[onnx_file("m.onnx", lambda: relu(shape=(1, 3, "h", "w")))],
     needles=["GiB", "--input-shapes"])

# -- .npz inputs ---------------------------------------------------------------------------
_X = np.ones((2, 3), np.float32)
for _cmd in ("run", "compare"):
    def _argv(inputs: str, cmd=_cmd) -> tuple[str, ...]:
        if cmd == "run":
            return ("run", "{d}/out", "--inputs", inputs, "-o", "{d}/y.npz")
        return ("compare", "{d}/m.onnx", "--inputs", inputs)

    _model_setup = compiled() if _cmd == "run" else onnx_file("m.onnx", relu)
    for _id, _setup, _needles in (
        ("npy-not-npz", npy_file("in.npz", _X), ["single .npy", "savez"]),
        ("empty-npz", npz_file("in.npz"), ["holds no arrays"]),
        ("text-not-npz", text_file("in.npz", "x = 1"), ["not a readable .npz"]),
        ("truncated-npz", truncated(npz_file("full.npz", x=_X), "full.npz", "in.npz", 0.5),
         ["in.npz"]),
        ("pickled-object", npz_file("in.npz", x=np.array([{"a": 1}], dtype=object)),
         ["not a readable .npz"]),
        ("wrong-name", npz_file("in.npz", image=_X), ["x"]),
        ("extra-name", npz_file("in.npz", x=_X, mask=_X), ["mask"]),
        ("wrong-shape", npz_file("in.npz", x=np.ones((3, 2), np.float32)), ["shape", "[3, 2]"]),
        ("wrong-dtype", npz_file("in.npz", x=_X.astype(np.float64)), ["float64"]),
        ("bool-for-float", npz_file("in.npz", x=_X > 0), ["bool"]),
        ("scalar-for-tensor", npz_file("in.npz", x=np.float32(1)), ["shape"]),
        ("directory", directory("in.npz"), ["is a directory"]),
    ):
        case(f"{_cmd}-{_id}", "tx8c", *_argv("{d}/in.npz"), setup=[_model_setup, _setup],
             needles=_needles)

# -- .mlir text ----------------------------------------------------------------------------


def _inside_hex(text: str, extra: int) -> int:
    return text.index('dense<"0x') + extra


for _extra in (10, 40, 400, 1500):
    case(f"mlir-cut-in-hex-{_extra}", "tx8c-opt", "{d}/m.mlir",
         setup=[cut_mlir("m.mlir", lambda t, e=_extra: _inside_hex(t, e))],
         needles=["not closed", "truncated"])
for _frac in (0.1, 0.25, 0.5, 0.75, 0.9, 0.999):
    case(f"mlir-cut-at-{_frac}", "tx8c-opt", "{d}/m.mlir",
         setup=[cut_mlir("m.mlir", lambda t, f=_frac: int(len(t) * f))], needles=["m.mlir:"])
for _frac in (0.2, 0.6, 0.99):
    case(f"run-mlir-cut-at-{_frac}", "tx8c", "run", "{d}/out", "--inputs", "{d}/in.npz", "-o",
         "{d}/y.npz",
         setup=[directory("out"), cut_mlir("out/model.mlir", lambda t, f=_frac: int(len(t) * f)),
                npz_file("in.npz", image=np.ones((1, 3, 32, 32), np.float32))],
         needles=["model.mlir:"])
case("mlir-not-utf8", "tx8c-opt", "{d}/m.mlir", setup=[bytes_file("m.mlir", b"\xff\xfe\x00a")],
     needles=["not UTF-8"])
case("mlir-binary-onnx-renamed", "tx8c-opt", "{d}/m.mlir",
     setup=[onnx_file("m.mlir", lambda: __import__(
         "examples.make_models", fromlist=["MODELS"]).MODELS["residual_cnn"]())],
     needles=["m.mlir"])
case("mlir-deep-attribute", "tx8c-opt", "{d}/m.mlir",
     setup=[text_file("m.mlir", "builtin.module attributes {a = " + "[" * 5000 + "]" * 5000
                      + "} {}\n")], needles=["nested more than"])
case("mlir-deep-regions", "tx8c-opt", "{d}/m.mlir",
     setup=[text_file("m.mlir", "builtin.module {" * 3000 + "}" * 3000 + "\n")],
     needles=["nested more than"])
case("mlir-unclosed-string-line", "tx8c-opt", "{d}/m.mlir",
     setup=[text_file("m.mlir", 'builtin.module attributes {a = "abc\n"} {}\n')],
     needles=["not closed on its line"])
case("mlir-invalid-escape", "tx8c-opt", "{d}/m.mlir",
     setup=[text_file("m.mlir", 'builtin.module attributes {a = "' + "a" * 5000 + '\\q"} {}')],
     needles=["invalid escape"])
case("mlir-huge-unclosed-string", "tx8c-opt", "{d}/m.mlir",
     setup=[text_file("m.mlir", 'builtin.module attributes {a = "0x' + "AB" * 5_000_000)],
     needles=["not closed"])
case("mlir-dynamic-dims", "tx8c-opt", "{d}/m.mlir", "-p", "layout-init,layout-transmit",
     setup=[text_file("m.mlir", GOOD_MLIR.replace("2x3", "?x3"))],
     needles=["dynamic dimension"])
case("mlir-unknown-op", "tx8c-opt", "{d}/m.mlir",
     setup=[text_file("m.mlir", GOOD_MLIR.replace("tx8be.Add", "tx8be.Frobnicate"))],
     needles=["Frobnicate"])
case("mlir-unknown-dialect", "tx8c-opt", "{d}/m.mlir",
     setup=[text_file("m.mlir", GOOD_MLIR.replace("tx8be.Add", "foo.add"))], needles=["foo"])
case("mlir-does-not-verify", "tx8c-opt", "{d}/m.mlir",
     setup=[text_file("m.mlir", GOOD_MLIR.replace("tensor<3xf32>", "tensor<4xf32>"))],
     needles=["do not broadcast"])
case("mlir-empty-file-run", "tx8c", "run", "{d}/m.mlir", "--inputs", "{d}/in.npz", "-o",
     "{d}/y.npz", setup=[text_file("m.mlir", ""), npz_file("in.npz", x=_X)],
     needles=["is empty"])
case("mlir-no-function-run", "tx8c", "run", "{d}/m.mlir", "--inputs", "{d}/in.npz", "-o",
     "{d}/y.npz", setup=[text_file("m.mlir", "builtin.module {}\n"),
                         npz_file("in.npz", x=_X)], needles=["@main"])
case("mlir-directory", "tx8c-opt", "{d}/dir.mlir", setup=[directory("dir.mlir")],
     needles=["is a directory"])
case("mlir-missing", "tx8c-opt", "{d}/nope.mlir", needles=["does not exist"])
case("mlir-onnx-extension", "tx8c-opt", "{d}/m.onnx", setup=[onnx_file("m.onnx", relu)],
     needles=["ONNX model", "tx8c compile"])
case("run-mlir-does-not-verify", "tx8c", "run", "{d}/m.mlir", "--inputs", "{d}/in.npz", "-o",
     "{d}/y.npz",
     setup=[text_file("m.mlir", GOOD_MLIR.replace("tensor<3xf32>", "tensor<4xf32>")),
            npz_file("in.npz", a=_X, b=np.ones(4, np.float32))], needles=["do not broadcast"])
case("run-two-functions-no-main", "tx8c", "run", "{d}/m.mlir", "--inputs", "{d}/in.npz", "-o",
     "{d}/y.npz",
     setup=[text_file("m.mlir", GOOD_MLIR.replace("@main", "@f") + GOOD_MLIR.replace(
         "@main", "@g")), npz_file("in.npz", a=_X)], needles=["@main"])
case("run-input-names-mismatch", "tx8c", "run", "{d}/m.mlir", "--inputs", "{d}/in.npz", "-o",
     "{d}/y.npz", setup=[text_file("m.mlir", GOOD_MLIR), npz_file("in.npz", a=_X, c=_X)],
     needles=["arg1", "'c'"])

# -- pass pipelines and tx8c-opt options ----------------------------------------------------
for _spec, _needle in (("fold-constant{max-elements=1", "Malformed pass arguments"),
                       (",,", "Expected pass name"), ("{", "pass"),
                       ("no-such-pass", "no-such-pass"),
                       ("fold-constant{nope=1}", "nope"),
                       ("fold-constant{max-elements=abc}", "max"),
                       ("canonicalize-op{bias-mode=sideways}", "sideways"),
                       ("layout-align-to-npu{strategy=best}", "best"),
                       ("fold-constant,,legalize", "pass"),
                       ("fold-constant{max-elements=-5}", "max")):
    case(f"pipeline-{_spec}", "tx8c-opt", "{d}/m.mlir", "-p", _spec,
         setup=[text_file("m.mlir", GOOD_MLIR)], needles=[_needle])
case("opt-target-irdl", "tx8c-opt", "{d}/m.mlir", "-t", "irdl",
     setup=[text_file("m.mlir", GOOD_MLIR)], needles=["MLIR only"])
case("opt-output-is-input", "tx8c-opt", "{d}/m.mlir", "-p", "infer-shapes", "-o", "{d}/m.mlir",
     setup=[text_file("m.mlir", GOOD_MLIR)], needles=["is the input"])
case("opt-output-is-directory", "tx8c-opt", "{d}/m.mlir", "-o", "{d}/dir",
     setup=[text_file("m.mlir", GOOD_MLIR), directory("dir")], needles=["is a directory"])
case("opt-unknown-flag", "tx8c-opt", "{d}/m.mlir", "--nope",
     setup=[text_file("m.mlir", GOOD_MLIR)], needles=["unrecognized arguments"])
case("opt-failed-chunk-writes-nothing", "tx8c-opt", "{d}/m.mlir", "--split-input-file", "-o",
     "{d}/o.mlir",
     setup=[text_file("m.mlir", GOOD_MLIR + "// -----\n" + GOOD_MLIR.replace(
         "tensor<3xf32>", "tensor<4xf32>"))], needles=["do not broadcast"])
case("opt-failure-keeps-existing-output", "tx8c-opt", "{d}/m.mlir", "-o", "{d}/o.mlir",
     setup=[text_file("m.mlir", GOOD_MLIR.replace("tensor<3xf32>", "tensor<4xf32>")),
            text_file("o.mlir", "// an older result\n")], needles=["do not broadcast"])
case("opt-writes-output", "tx8c-opt", "{d}/m.mlir", "-p", "infer-shapes", "-o", "{d}/o.mlir",
     setup=[text_file("m.mlir", GOOD_MLIR)], code=0, outputs=("o.mlir",))
case("opt-layout-pass-out-of-order", "tx8c-opt", "{d}/m.mlir", "-p",
     "layout-align-to-npu,layout-align-opt", setup=[text_file("m.mlir", GOOD_MLIR)],
     code=0)
case("opt-compiled-model-through-all-passes", "tx8c-opt", "{d}/m.mlir", "-p",
     "fold-constant,layout-init,layout-transmit", "-o", "{d}/o.mlir",
     setup=[cut_mlir("m.mlir", len)], code=0, outputs=("o.mlir",))

# -- the executables themselves (exit status of the process) ---------------------------------
case("process-usage-error-exit-1", "tx8c", "compile", subprocess=True, needles=["usage:"])
case("process-opt-usage-error-exit-1", "tx8c-opt", "--passes", subprocess=True,
     needles=["usage:"])
case("process-truncated-mlir-fails-fast", "tx8c-opt", "{d}/m.mlir", subprocess=True,
     setup=[cut_mlir("m.mlir", lambda t: _inside_hex(t, 40))], needles=["not closed"])
case("process-bad-model", "tx8c", "compile", "{d}/m.onnx", "-o", "{d}/out", subprocess=True,
     setup=[onnx_file("m.onnx", lambda: one_node("Softmax", attrs={"axis": 7}))],
     needles=["axis"])


# --------------------------------------------------------------------------------------
# Running a case
# --------------------------------------------------------------------------------------


def _assert_small(path: Path, limit: int) -> None:
    assert path.stat().st_size < limit, f"{path} has {path.stat().st_size} bytes"


def _assert_npz_keys(path: Path, keys: list[str]) -> None:
    with np.load(path) as data:
        assert sorted(data.files) == sorted(keys), data.files


def snapshot(root: Path) -> dict[str, str]:
    """Every file and directory under `root` -> a hash of its contents ("dir" for one)."""
    state = {}
    for path in sorted(root.rglob("*")):
        key = str(path.relative_to(root))
        if path.is_dir():
            state[key] = "dir"
        else:
            state[key] = hashlib.sha256(path.read_bytes()).hexdigest()
    return state


class Hang(Exception):
    pass


@contextlib.contextmanager
def alarm(seconds: float):
    """Raise Hang in the block after `seconds`. The exception a signal handler raises is
    lost when the signal lands in a gc callback or a `__del__` (Python reports it as
    unraisable and goes on), so a ring is also remembered and raised when the block ends."""
    rang = []

    def ring(signum, frame):
        rang.append(True)
        raise Hang(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    if rang:
        raise Hang(f"still running after {seconds} s (the alarm's exception was swallowed)")


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str
    seconds: float
    memory_growth: int


def _peak_memory() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def invoke(c: Case, argv: list[str], cwd: Path) -> Outcome:
    if c.subprocess:
        module = "tx8c.cli.main" if c.tool == "tx8c" else "tx8c.cli.opt"
        start = time.perf_counter()
        r = subprocess.run([sys.executable, "-m", module, *argv], capture_output=True,
                           text=True, cwd=cwd, timeout=SECONDS_PER_CASE)
        return Outcome(r.returncode, r.stdout, r.stderr, time.perf_counter() - start, 0)
    entry = tx8c_main if c.tool == "tx8c" else opt_main
    out, err = io.StringIO(), io.StringIO()
    before = _peak_memory()
    start = time.perf_counter()
    old_cwd = os.getcwd()
    os.chdir(cwd)
    try:
        with alarm(SECONDS_PER_CASE), contextlib.redirect_stdout(out), \
                contextlib.redirect_stderr(err):
            code = entry(argv)
    finally:
        os.chdir(old_cwd)
    return Outcome(code, out.getvalue(), err.getvalue(), time.perf_counter() - start,
                   _peak_memory() - before)


def run_case(c: Case, root: Path) -> Outcome:
    for setup in c.setup:
        setup(root)
    cwd = root / ".cwd"
    cwd.mkdir()
    before = snapshot(root)
    argv = [a.replace("{d}", str(root)) for a in c.argv]
    outcome = invoke(c, argv, cwd)
    after = snapshot(root)
    context = f"{c.id}: exit {outcome.code}\nstdout: {outcome.stdout[-2000:]}\n" \
              f"stderr: {outcome.stderr[-3000:]}"
    assert "Traceback" not in outcome.stderr, context
    assert outcome.code == c.code, context
    assert outcome.memory_growth < MAX_MEMORY_GROWTH, (outcome.memory_growth, context)
    if c.code == 0:
        allowed = (*c.outputs, *c.absent, *c.writes)
        changed = [k for k, v in before.items() if after.get(k) != v
                   and not k.startswith(allowed)]
        assert not changed, (f"inputs changed: {changed}", context)
        for path in c.outputs:
            assert (root / path).exists(), (f"missing output {path}", context)
        for path in c.absent:
            assert not (root / path).exists(), (f"{path} should not exist", context)
    else:
        assert after == before, (_diff(before, after), context)
        assert re.search(r"(^|\n)(error|usage): ", outcome.stderr), context
        for needle in c.needles:
            assert needle in outcome.stderr, (needle, context)
    if c.check is not None:
        c.check(root, outcome.stdout, outcome.stderr)
    return outcome


def _diff(before: dict, after: dict) -> str:
    new = sorted(set(after) - set(before))
    gone = sorted(set(before) - set(after))
    changed = sorted(k for k in set(before) & set(after) if before[k] != after[k])
    return f"new files: {new}; removed: {gone}; changed: {changed}"


def test_the_corpus_is_large_enough() -> None:
    assert len(CASES) >= 150, len(CASES)


@pytest.mark.parametrize("c", CASES, ids=[c.id for c in CASES])
def test_bad_input(c: Case, tmp_path: Path) -> None:
    run_case(c, tmp_path)


def summary() -> str:
    """Run every case and print the issue's table (for the closing note)."""
    import tempfile

    counts = dict.fromkeys(("tried", "clean error", "works as it should", "traceback", "hang",
                            "harmed file", "partial output", "other failure"), 0)
    for c in CASES:
        counts["tried"] += 1
        with tempfile.TemporaryDirectory() as tmp:
            try:
                run_case(c, Path(tmp))
                counts["clean error" if c.code else "works as it should"] += 1
            except Hang:
                counts["hang"] += 1
            except AssertionError as e:
                text = str(e)
                key = ("traceback" if "Traceback" in text else
                       "harmed file" if "changed" in text or "removed: ['" in text else
                       "partial output" if "new files: ['" in text else "other failure")
                counts[key] += 1
    return "\n".join(f"{k:<20} {v:>4}" for k, v in counts.items())


if __name__ == "__main__":
    print(summary())
