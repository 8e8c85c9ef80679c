"""Random graphs for property tests (hypothesis), shared by the test areas.

`build_dag(steps)` builds a CNN-ish DAG from a list of steps drawn by `dag_steps()`:
convolutions (constant or run-time weights), element-wise ops with fan-out, pools, batch
norms, concatenations (multi-input), splits (multi-output), reshapes to and from Tensor
class, user Transposes, softmax, reductions, slice, pad and layer norm, every value
nobody reads a graph output. `random_inputs` draws inputs for any module.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, f32
from xdsl.ir import Block, Region, SSAValue

from tests.helpers import main_block as block_of
from tx8c.dialect.base import Tx8beOp
from tx8c.dialect.ops import backend as be
from tx8c.dialect.ops import conv_gemm as cg
from tx8c.dialect.ops import elementwise as ew
from tx8c.dialect.ops import movement as mv
from tx8c.dialect.ops import norm as nm
from tx8c.dialect.ops import reduce_pool as rp
from tx8c.dialect.types import tensor, to_numpy_dtype

NHWC = (0, 2, 3, 1)
NCHW = (0, 3, 1, 2)
X = (1, 4, 6, 6)
RNG = np.random.default_rng(7)


def _f(*shape) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def _pos(*shape) -> np.ndarray:
    return (RNG.random(shape) + 0.5).astype(np.float32)


def random_inputs(module: ModuleOp, seed: int = 0) -> list[np.ndarray]:
    """Inputs for the module's function: normal floats, 0/1 integers."""
    rng = np.random.default_rng(seed)
    arrays = []
    for arg in block_of(module).args:
        shape = tuple(arg.type.get_shape())
        dtype = to_numpy_dtype(arg.type.get_element_type())
        if np.issubdtype(dtype, np.floating):
            arrays.append(rng.standard_normal(shape).astype(dtype))
        else:
            arrays.append(rng.integers(0, 2, shape).astype(dtype))
    return arrays


class Graph:
    """A function body built op by op with `Op.make` (result types inferred)."""

    def __init__(self, *input_shapes, dtype=f32):
        self.block = Block(arg_types=[tensor(s, dtype) for s in input_shapes])

    @property
    def args(self) -> tuple[SSAValue, ...]:
        return tuple(self.block.args)

    def op(self, cls, *operands, **attrs) -> Tx8beOp:
        op = cls.make(list(operands), **attrs)
        self.block.add_op(op)
        return op

    def add(self, cls, *operands, **attrs) -> SSAValue:
        return self.op(cls, *operands, **attrs).results[0]

    def const(self, array) -> SSAValue:
        op = be.ConstantOp.from_array(np.asarray(array, np.float32))
        self.block.add_op(op)
        return op.results[0]

    def module(self, *outputs: SSAValue) -> ModuleOp:
        self.block.add_op(func.ReturnOp(*outputs))
        function = func.FuncOp(
            "main", ([a.type for a in self.block.args], [o.type for o in outputs]),
            Region(self.block),
        )
        module = ModuleOp([function])
        module.verify()
        return module


KINDS = ("conv", "conv1x1", "conv_rt", "relu", "add", "bias", "pool", "bn", "concat",
         "flatten", "reshape_back", "transposed", "softmax", "reduce", "split_swap",
         "slice_pad", "layernorm")
DRAWN = KINDS + ("conv", "conv1x1", "relu", "add", "add")  # more of the common ones


MAX_OPS = 14


def build_dag(steps: list[tuple[str, int, int]], max_ops: int = MAX_OPS) -> ModuleOp:
    """A CNN-ish DAG of up to `max_ops` ops (and constants) over [1,4,6,6] features: convs
    (constant or run-time weights), element-wise ops with fan-out, pools, BN, concat,
    reshapes to and from Tensor class, user Transposes, softmax, a reduction, split,
    slice, pad, layer norm; every value nobody reads is an output."""
    g = Graph(X, X, (4, 4, 1, 1))
    feats: list[SSAValue] = [g.args[0], g.args[1]]
    sinks: list[SSAValue] = []

    def pick(k: int) -> SSAValue:
        return feats[k % len(feats)]

    def size() -> int:
        return sum(not isinstance(op, be.ConstantOp) for op in g.block.ops)

    for kind, a, b in [("conv1x1", 0, 0), *steps]:  # a Conv first: CNN data to work on
        if size() >= max_ops:
            break
        x, y = pick(a), pick(b)
        if kind == "conv":
            out = g.add(cg.ConvOp, x, g.const(_f(4, 4, 3, 3)), pads=(1, 1, 1, 1))
        elif kind == "conv1x1":
            out = g.add(cg.ConvOp, x, g.const(_f(4, 4, 1, 1)), g.const(_f(4)))
        elif kind == "conv_rt":
            out = g.add(cg.ConvOp, x, g.args[2])
        elif kind == "relu":
            out = g.add(ew.ReluOp, x)
        elif kind == "add":
            out = g.add(ew.AddOp, x, y)
        elif kind == "bias":
            out = g.add(ew.MulOp, x, g.const(_f(4, 1, 1)))
        elif kind == "pool":
            out = g.add(rp.PoolOp, x, mode="max", kernel=(3, 3), pads=(1, 1, 1, 1))
        elif kind == "bn":
            out = g.add(nm.BatchNormInferenceOp, x, *[g.const(_pos(4)) for _ in range(4)])
        elif kind == "concat":
            wide = g.add(mv.ConcatenateOp, x, y, axis=1)
            out = g.add(cg.ConvOp, wide, g.const(_f(4, 8, 1, 1)))
        elif kind == "flatten":
            sinks.append(g.add(mv.ReshapeOp, x, shape=(1, 144)))
            continue
        elif kind == "reshape_back":
            flat = g.add(mv.ReshapeOp, x, shape=(1, 144))
            out = g.add(mv.ReshapeOp, g.add(ew.TanhOp, flat), shape=X)
        elif kind == "transposed":
            t = g.add(ew.SigmoidOp, g.add(mv.TransposeOp, x, perm=NHWC))
            out = g.add(mv.TransposeOp, t, perm=NCHW)
        elif kind == "softmax":
            out = g.add(nm.SoftmaxOp, x, axis=1)
        elif kind == "split_swap":  # channel halves swapped: Split, Concatenate
            split = mv.SplitOp.make([x], axis=1, split=(2, 2))
            g.block.add_op(split)
            out = g.add(mv.ConcatenateOp, split.results[1], split.results[0], axis=1)
        elif kind == "slice_pad":
            cut = g.add(mv.SliceOp, x, starts=(1,), ends=(5,), axes=(2,))
            out = g.add(mv.PadOp, cut, pads=(0, 0, 1, 0, 0, 0, 1, 0), mode="edge")
        elif kind == "layernorm":
            out = g.add(nm.LayerNormOp, x, g.const(_f(4, 6, 6)), axis=1)
        else:
            sinks.append(g.add(rp.ReduceOp, x, mode="mean", axes=(2, 3), keepdims=False))
            continue
        feats.append(out)
    used = {o for op in g.block.ops for o in op.operands}
    outputs = [v for v in feats[2:] + sinks if v not in used] or [feats[-1]]
    return g.module(*outputs)


def dag_steps(max_size: int = 12):
    """Hypothesis strategy of `build_dag` steps: (kind, operand pick, operand pick)."""
    return st.lists(
        st.tuples(st.sampled_from(DRAWN), st.integers(0, 20), st.integers(0, 20)),
        min_size=1, max_size=max_size,
    )
