"""LSTM, GRU and RNN, statically unrolled (forward, reverse, bidirectional).

tx8c compiles static graphs, so a recurrent node becomes its time steps, one after
another: the input projection of every step is one Gemm over the whole sequence
([T*B, I] @ W^T, biases added once); each step then adds H @ R^T and applies the cell's
gate equations (ONNX's, with its activations and their alpha/beta, clip, peepholes,
input_forget and linear_before_reset). A reverse direction walks the steps backwards.

sequence_lens (compile-time or run-time) masks the steps past each batch entry's length:
there the state is carried unchanged and the output is 0, so a reverse direction starts
at each entry's own last step, as ONNX defines. The outputs are the per-step hidden
states (Y), and the last hidden and cell states (Y_h, Y_c), in `layout` 0 or 1.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from tx8c.dialect.ops import elementwise as ew
from tx8c.dialect.ops.movement import SplitOp
from tx8c.frontend.onnx.compose import (
    add,
    cast,
    concat,
    iota,
    like,
    matmul,
    mul,
    reshape,
    slice_axis,
    sub,
    transpose,
    where,
)
from tx8c.frontend.onnx.context import NodeContext, Value
from tx8c.frontend.onnx.registry import converter

Activation = Callable[[Value], Value]


# --------------------------------------------------------------------------------------
# Activations (ONNX's list for recurrent ops)
# --------------------------------------------------------------------------------------


def _activation(ctx: NodeContext, name: str, alpha: float | None,
                beta: float | None) -> Activation:
    simple = {"sigmoid": ew.SigmoidOp, "tanh": ew.TanhOp, "relu": ew.ReluOp}
    key = name.lower()
    if key in simple:
        return lambda x: ctx.emit(simple[key], [x])
    if key == "hardsigmoid":
        return lambda x: ctx.emit(ew.HardSigmoidOp, [x], alpha=_or(alpha, 0.2),
                                  beta=_or(beta, 0.5))
    if key == "leakyrelu":
        return lambda x: ctx.emit(ew.LeakyReluOp, [x], alpha=_or(alpha, 0.01))
    if key == "affine":
        return lambda x: add(ctx, mul(ctx, x, like(ctx, _or(alpha, 1.0), x)),
                             like(ctx, _or(beta, 0.0), x))
    if key == "scaledtanh":
        return lambda x: mul(ctx, ctx.emit(ew.TanhOp, [mul(ctx, x, like(ctx, _or(beta, 1.0), x))]),
                             like(ctx, _or(alpha, 1.0), x))
    if key == "thresholdedrelu":
        return lambda x: where(ctx, ctx.emit(ew.GreaterOp, [x, like(ctx, _or(alpha, 1.0), x)]),
                               x, like(ctx, 0, x))
    if key == "elu":
        def elu(x):
            negative = mul(ctx, sub(ctx, ctx.emit(ew.ExpOp, [x]), like(ctx, 1, x)),
                           like(ctx, _or(alpha, 1.0), x))
            return where(ctx, ctx.emit(ew.GreaterOp, [x, like(ctx, 0, x)]), x, negative)
        return elu
    if key == "softsign":
        return lambda x: ctx.emit(ew.DivOp, [x, add(ctx, ctx.emit(ew.AbsOp, [x]),
                                                    like(ctx, 1, x))])
    if key == "softplus":
        return lambda x: ctx.emit(ew.LogOp, [add(ctx, ctx.emit(ew.ExpOp, [x]), like(ctx, 1, x))])
    raise ctx.error(f"activation '{name}' is not an ONNX recurrent activation")


def _or(value, default):
    return default if value is None else value


_TAKES_ALPHA = {"hardsigmoid", "leakyrelu", "affine", "scaledtanh", "thresholdedrelu", "elu"}
_TAKES_BETA = {"hardsigmoid", "affine", "scaledtanh"}


def activations(ctx: NodeContext, defaults: list[str], directions: int) -> list[list[Activation]]:
    """The activation functions of each direction (`defaults` per direction unless the
    node gives `activations`); alpha/beta are consumed in order by those that take them."""
    names = ctx.attr("activations") or defaults * directions
    if len(names) != len(defaults) * directions:
        raise ctx.error(f"activations lists {len(names)} functions, expected "
                        f"{len(defaults) * directions}")
    alphas = list(ctx.attr("activation_alpha") or [])
    betas = list(ctx.attr("activation_beta") or [])
    functions = []
    for name in names:
        key = name.lower()
        alpha = alphas.pop(0) if key in _TAKES_ALPHA and alphas else None
        beta = betas.pop(0) if key in _TAKES_BETA and betas else None
        functions.append(_activation(ctx, name, alpha, beta))
    per = len(defaults)
    return [functions[d * per:(d + 1) * per] for d in range(directions)]


# --------------------------------------------------------------------------------------
# The unrolling shared by LSTM, GRU and RNN
# --------------------------------------------------------------------------------------


@dataclass
class Recurrence:
    """What every recurrent node has: the sequence, its sizes, directions and masks."""

    ctx: NodeContext
    x: Value  # [T, B, I]
    steps: int
    batch: int
    hidden: int
    directions: list[str]  # "forward" / "reverse", one per direction
    masks: list[Value | None]  # per step [B, 1] bool (None: every entry is running)
    clip: float | None

    @staticmethod
    def read(ctx: NodeContext, gates: int) -> Recurrence:
        x = ctx.input(0)
        if x.rank != 3:
            raise ctx.error(f"X must have rank 3, got {list(x.shape)}")
        layout = ctx.attr("layout", 0)
        if layout == 1:
            x = transpose(ctx, x, [1, 0, 2])
        steps, batch, _ = x.shape
        hidden = ctx.attr("hidden_size")
        w = ctx.input(1)
        if hidden is None:
            hidden = w.shape[1] // gates
        direction = ctx.attr("direction", "forward")
        if direction not in ("forward", "reverse", "bidirectional"):
            raise ctx.error(f"direction must be forward, reverse or bidirectional, got "
                            f"'{direction}'")
        directions = ["forward", "reverse"] if direction == "bidirectional" else [direction]
        if w.shape != (len(directions), gates * hidden, x.shape[2]):
            raise ctx.error(f"W must have shape [{len(directions)}, {gates * hidden}, "
                            f"{x.shape[2]}], got {list(w.shape)}")
        clip = ctx.attr("clip")
        return Recurrence(ctx, x, steps, batch, hidden, directions,
                          _masks(ctx, steps, batch), clip)

    def initial(self, index: int, direction: int) -> Value:
        """initial_h (index 5) or initial_c (6) of one direction as [B, H], or zeros."""
        ctx = self.ctx
        if not ctx.has_input(index):
            return ctx.constant(np.zeros((self.batch, self.hidden), self.x.dtype))
        value = ctx.input(index)
        if ctx.attr("layout", 0) == 1:
            value = transpose(ctx, value, [1, 0, 2])
        return reshape(ctx, slice_axis(ctx, value, 0, direction, direction + 1),
                       [self.batch, self.hidden])

    def projected_inputs(self, direction: int, bias: Value | None) -> Value:
        """X @ W^T (+ bias) for every step: [T, B, gates*H]."""
        ctx = self.ctx
        w = reshape(ctx, slice_axis(ctx, ctx.input(1), 0, direction, direction + 1),
                    list(ctx.input(1).shape[1:]))
        rows = reshape(ctx, self.x, [self.steps * self.batch, self.x.shape[2]])
        projected = matmul(ctx, rows, w, trans_b=True, bias=bias)
        return reshape(ctx, projected, [self.steps, self.batch, w.shape[0]])

    def recurrent_weight(self, direction: int) -> Value:
        """R of one direction as [gates*H, H]."""
        r = self.ctx.input(2)
        return reshape(self.ctx, slice_axis(self.ctx, r, 0, direction, direction + 1),
                       list(r.shape[1:]))

    def bias(self, direction: int, gates: int) -> tuple[Value | None, Value | None]:
        """(Wb, Rb) of one direction, each [gates*H], or None without B."""
        ctx = self.ctx
        if not ctx.has_input(3):
            return None, None
        b = reshape(ctx, slice_axis(ctx, ctx.input(3), 0, direction, direction + 1),
                    [2 * gates * self.hidden])
        return (slice_axis(ctx, b, 0, 0, gates * self.hidden),
                slice_axis(ctx, b, 0, gates * self.hidden, 2 * gates * self.hidden))

    def clipped(self, value: Value) -> Value:
        if self.clip is None:
            return value
        return self.ctx.emit(ew.ClipOp, [value], min=-self.clip, max=self.clip)

    def order(self, direction: int) -> range:
        if self.directions[direction] == "forward":
            return range(self.steps)
        return range(self.steps - 1, -1, -1)

    def gate_inputs(self, projected: Value, t: int) -> Value:
        return reshape(self.ctx, slice_axis(self.ctx, projected, 0, t, t + 1),
                       [self.batch, projected.shape[2]])

    def split(self, value: Value, gates: int) -> list[Value]:
        return self.ctx.emit_multi(SplitOp, [value], axis=1, split=[self.hidden] * gates)

    def keep_running(self, t: int, new: Value, old: Value) -> Value:
        """`new` where the entry is still inside its sequence at step t, else `old`."""
        mask = self.masks[t]
        return new if mask is None else where(self.ctx, mask, new, old)


def _masks(ctx: NodeContext, steps: int, batch: int) -> list[Value | None]:
    if not ctx.has_input(4):
        return [None] * steps
    lengths = ctx.input(4)
    if lengths.is_const:
        if np.any((lengths.const < 0) | (lengths.const > steps)):
            raise ctx.error(f"sequence_lens {lengths.const.tolist()} must lie in 0..{steps}")
        if np.all(lengths.const == steps):
            return [None] * steps
    lengths = reshape(ctx, cast(ctx, lengths, np.int64), [batch, 1])
    t = iota(ctx, steps, 0, 1)
    return [ctx.emit(ew.LessOp, [slice_axis(ctx, t, 0, i, i + 1), lengths])
            for i in range(steps)]


# --------------------------------------------------------------------------------------
# The cells
# --------------------------------------------------------------------------------------


@converter("LSTM")
def convert_lstm(ctx: NodeContext) -> list[Value]:
    rec = Recurrence.read(ctx, gates=4)
    fns = activations(ctx, ["Sigmoid", "Tanh", "Tanh"], len(rec.directions))
    couple = bool(ctx.attr("input_forget", 0))
    prepared = []
    for d in range(len(rec.directions)):
        wb, rb = rec.bias(d, 4)
        bias = add(ctx, wb, rb) if wb is not None else None
        peep = None
        if ctx.has_input(7):
            p = reshape(ctx, slice_axis(ctx, ctx.input(7), 0, d, d + 1), [3 * rec.hidden])
            peep = [slice_axis(ctx, p, 0, i * rec.hidden, (i + 1) * rec.hidden)
                    for i in range(3)]
        prepared.append((rec.projected_inputs(d, bias), rec.recurrent_weight(d), peep))

    def step(d, t, h, c):
        f, g, act_h = fns[d]
        projected, r, peep = prepared[d]
        gates = add(ctx, rec.gate_inputs(projected, t), matmul(ctx, h, r, trans_b=True))
        i_pre, o_pre, f_pre, c_pre = rec.split(gates, 4)
        if peep is not None:
            i_pre, f_pre = add(ctx, i_pre, mul(ctx, peep[0], c)), add(ctx, f_pre,
                                                                      mul(ctx, peep[2], c))
        i = f(rec.clipped(i_pre))
        forget = sub(ctx, like(ctx, 1, i), i) if couple else f(rec.clipped(f_pre))
        cell = add(ctx, mul(ctx, forget, c), mul(ctx, i, g(rec.clipped(c_pre))))
        if peep is not None:
            o_pre = add(ctx, o_pre, mul(ctx, peep[1], cell))
        o = f(rec.clipped(o_pre))
        return mul(ctx, o, act_h(cell)), cell

    return _run(rec, step, carries_cell=True)


@converter("GRU")
def convert_gru(ctx: NodeContext) -> list[Value]:
    rec = Recurrence.read(ctx, gates=3)
    fns = activations(ctx, ["Sigmoid", "Tanh"], len(rec.directions))
    before_reset = bool(ctx.attr("linear_before_reset", 0))
    prepared = []
    for d in range(len(rec.directions)):
        wb, rb = rec.bias(d, 3)
        r = rec.recurrent_weight(d)
        r_zr = slice_axis(ctx, r, 0, 0, 2 * rec.hidden)
        r_h = slice_axis(ctx, r, 0, 2 * rec.hidden, 3 * rec.hidden)
        rb_zr = rb_h = None
        if rb is not None:
            rb_zr = slice_axis(ctx, rb, 0, 0, 2 * rec.hidden)
            rb_h = slice_axis(ctx, rb, 0, 2 * rec.hidden, 3 * rec.hidden)
        prepared.append((rec.projected_inputs(d, wb), r_zr, r_h, rb_zr, rb_h))

    def step(d, t, h, c):
        f, g = fns[d]
        projected, r_zr, r_h, rb_zr, rb_h = prepared[d]
        x_z, x_r, x_h = rec.split(rec.gate_inputs(projected, t), 3)
        h_zr = matmul(ctx, h, r_zr, trans_b=True, bias=rb_zr)
        h_z, h_r = rec.split(h_zr, 2)
        z = f(rec.clipped(add(ctx, x_z, h_z)))
        reset = f(rec.clipped(add(ctx, x_r, h_r)))
        if before_reset:
            recurrent = mul(ctx, reset, matmul(ctx, h, r_h, trans_b=True, bias=rb_h))
        else:
            recurrent = matmul(ctx, mul(ctx, reset, h), r_h, trans_b=True, bias=rb_h)
        candidate = g(rec.clipped(add(ctx, x_h, recurrent)))
        one = like(ctx, 1, z)
        return add(ctx, mul(ctx, sub(ctx, one, z), candidate), mul(ctx, z, h)), None

    return _run(rec, step, carries_cell=False)


@converter("RNN")
def convert_rnn(ctx: NodeContext) -> list[Value]:
    rec = Recurrence.read(ctx, gates=1)
    fns = activations(ctx, ["Tanh"], len(rec.directions))
    prepared = []
    for d in range(len(rec.directions)):
        wb, rb = rec.bias(d, 1)
        bias = add(ctx, wb, rb) if wb is not None else None
        prepared.append((rec.projected_inputs(d, bias), rec.recurrent_weight(d)))

    def step(d, t, h, c):
        (f,) = fns[d]
        projected, r = prepared[d]
        pre = add(ctx, rec.gate_inputs(projected, t), matmul(ctx, h, r, trans_b=True))
        return f(rec.clipped(pre)), None

    return _run(rec, step, carries_cell=False)


def _run(rec: Recurrence, step, carries_cell: bool) -> list[Value]:
    """Unroll every direction and assemble Y, Y_h (and Y_c)."""
    ctx = rec.ctx
    zeros = ctx.constant(np.zeros((rec.batch, rec.hidden), rec.x.dtype))
    ys, last_h, last_c = [], [], []
    for d in range(len(rec.directions)):
        h = rec.initial(5, d)
        c = rec.initial(6, d) if carries_cell else None
        outputs: list[Value | None] = [None] * rec.steps
        for t in rec.order(d):
            new_h, new_c = step(d, t, h, c)
            outputs[t] = rec.keep_running(t, new_h, zeros)
            h = rec.keep_running(t, new_h, h)
            if carries_cell:
                c = rec.keep_running(t, new_c, c)
        ys.append(concat(ctx, [reshape(ctx, y, [1, 1, rec.batch, rec.hidden])
                               for y in outputs], axis=0))
        last_h.append(reshape(ctx, h, [1, rec.batch, rec.hidden]))
        if carries_cell:
            last_c.append(reshape(ctx, c, [1, rec.batch, rec.hidden]))
    results = [concat(ctx, ys, axis=1), concat(ctx, last_h, axis=0)]
    if carries_cell:
        results.append(concat(ctx, last_c, axis=0))
    if ctx.attr("layout", 0) == 1:
        results = [transpose(ctx, results[0], [2, 0, 1, 3])] + [
            transpose(ctx, r, [1, 0, 2]) for r in results[1:]]
    return results[:max(ctx.num_outputs, 1)]
