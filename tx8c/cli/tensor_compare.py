"""`tx8c compare --all-tensors`: every intermediate tensor against ONNX Runtime.

ONNX Runtime exposes an intermediate tensor when it is made a graph output; every node
output whose type ONNX's shape inference knows is added. On the tx8be side, the importer
names each SSA value that holds an ONNX tensor (`ImportResult.value_names`); a value keeps
its name through every pass that does not replace its op (passes that rebuild an op make
a new, unnamed value: that tensor is not compared after that pass, never mislabelled).
The reference executor records each named value as it computes it, and it is compared
on the spot (nothing is held beyond one tensor).

A value may be stored in another arrangement than ONNX's once the layout stage ran (a
Conv's NHWC result of an NCHW tensor): the first layout string a value had
(`Arrangements`) and its current one give the permutation back; a value whose shape
still does not match is counted as not comparable.

The first tensor, in the ONNX graph's order, that falls below its threshold is what a
compiler engineer looks at first: everything before it is right, so the error comes
from its producing op (or the pass that rewrote it). References that are all zero or
subnormal cannot tell a right result from a wrong one by cosine: they are "inconclusive"
with a reason, not a FAIL.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import onnx
from xdsl.ir import Operation, SSAValue

from tx8c.dialect.types import from_numpy_dtype, short_name
from tx8c.sim.numerics import compare_arrays, threshold_for
from tx8c.sim.reference import ReferenceExecutor

PASS, FAIL, INCONCLUSIVE = "PASS", "FAIL", "INCONCLUSIVE"


def inconclusive_reason(expected: np.ndarray) -> str | None:
    """Why a cosine against `expected` says nothing (all zero or subnormal), else None."""
    if not np.issubdtype(expected.dtype, np.floating) or expected.size == 0:
        return None
    values = np.asarray(expected, dtype=np.float64)
    values = values[np.isfinite(values)]
    tiny = np.finfo(expected.dtype).tiny
    if values.size and np.all(np.abs(values) < tiny):
        kind = "zero" if not np.any(values) else "zero or subnormal"
        return f"the reference is all {kind} (max |ref| = {np.max(np.abs(values)):.3g})"
    return None


def verdict(expected: np.ndarray, got: np.ndarray) -> tuple[str, dict]:
    """(PASS / FAIL / INCONCLUSIVE, the figures) of one tensor against its reference."""
    c = compare_arrays(expected, got)
    figures = {"cosine": c.cosine, "sqnr_db": c.sqnr_db, "max_abs_error": c.max_abs_error}
    reason = inconclusive_reason(expected)
    if reason is not None and not c.exact:
        return INCONCLUSIVE, {**figures, "reason": reason}
    ok = c.passes(threshold_for(short_name(from_numpy_dtype(got.dtype))))
    return (PASS if ok else FAIL), figures


# --------------------------------------------------------------------------------------
# ONNX Runtime: every intermediate
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OnnxTensors:
    """ONNX Runtime's value of every exposable tensor, its graph order and producer."""

    values: dict[str, np.ndarray]
    order: dict[str, int]
    producer: dict[str, str]
    """Tensor name -> "node name (OpType)"."""


def onnx_intermediates(model: onnx.ModelProto, inputs: Mapping[str, np.ndarray],
                       optimize: bool = False) -> OnnxTensors:
    """Every node output onnxruntime can expose (made a graph output), with its producer;
    `optimize` as in `run_onnxruntime` (compare runs the graph node by node by default)."""
    from tx8c.frontend.onnx.runtime import run_onnxruntime

    inferred = onnx.shape_inference.infer_shapes(model)
    typed = {v.name: v for v in list(inferred.graph.value_info) + list(inferred.graph.output)}
    exposed = onnx.ModelProto()
    exposed.CopyFrom(inferred)
    have = {o.name for o in exposed.graph.output}
    order, producer = {}, {}
    for index, node in enumerate(model.graph.node):
        for out in node.output:
            if not out or out not in typed:
                continue
            order[out] = len(order)
            producer[out] = f"{node.name or f'{node.op_type}_{index}'} ({node.op_type})"
            if out not in have:
                exposed.graph.output.append(typed[out])
                have.add(out)
    results = run_onnxruntime(exposed, inputs, optimize=optimize)
    values = {o.name: r for o, r in zip(exposed.graph.output, results, strict=True)}
    return OnnxTensors({k: values[k] for k in order}, order, producer)


# --------------------------------------------------------------------------------------
# The tx8be side
# --------------------------------------------------------------------------------------


class Arrangements:
    """The first known layout string of each named value (module docstring)."""

    def __init__(self):
        self.first: dict[SSAValue, str] = {}

    def note(self, names: Mapping[SSAValue, str]) -> None:
        for value in names:
            layout = current_layout(value)
            if layout is not None and value not in self.first:
                self.first[value] = layout

    def to_onnx(self, value: SSAValue, array: np.ndarray, shape: tuple[int, ...]
                ) -> np.ndarray | None:
        """`array` in ONNX's arrangement, or None when no permutation gives `shape`."""
        if array.shape == shape:
            return array
        now, then = current_layout(value), self.first.get(value)
        if now is None or then is None or sorted(now) != sorted(then) or len(now) != array.ndim:
            return None
        permuted = array.transpose([now.index(c) for c in then])
        return permuted if permuted.shape == shape else None


def current_layout(value: SSAValue) -> str | None:
    """The data arrangement of a result (the last part of its op's layout_str)."""
    owner = value.owner
    if not isinstance(owner, Operation) or len(owner.results) != 1:
        return None
    attr = owner.attributes.get("layout_str")
    text = getattr(attr, "data", None)
    if not text or text == "UNKNOWN":
        return None
    last = text.split("-")[-1]
    return last if last.isalpha() and len(set(last)) == len(last) else None


class _Recorder(ReferenceExecutor):
    """The reference executor, handing each named value to `on_value` as computed."""

    def __init__(self, module, names, on_value):
        super().__init__(module)
        self.names, self.on_value = names, on_value

    def run_op(self, op, values):
        results = super().run_op(op, values)
        for result, array in zip(op.results, results, strict=True):
            if result in self.names:
                self.on_value(result, array)
        return results


@dataclass
class StageTensors:
    """One stage's per-tensor comparison."""

    compared: int
    not_comparable: int
    failures: list[dict]
    inconclusive: int

    def as_dict(self) -> dict:
        return {"compared": self.compared, "not_comparable": self.not_comparable,
                "inconclusive": self.inconclusive, "failures": self.failures[:20],
                "failed": len(self.failures),
                "first_failure": self.failures[0] if self.failures else None}


def run_and_compare(module, inputs, names: Mapping[SSAValue, str], onnx_tensors: OnnxTensors,
                    arrangements: Arrangements) -> tuple[list[np.ndarray], StageTensors]:
    """Run `module` (reference executor) comparing every named value on the way; the
    module's outputs and the stage's per-tensor summary (failures in graph order)."""
    live = {v: n for v, n in names.items() if n in onnx_tensors.values}
    arrangements.note(live)
    stage = StageTensors(0, 0, [], 0)

    def on_value(value: SSAValue, array: np.ndarray) -> None:
        name = live[value]
        expected = onnx_tensors.values[name]
        got = arrangements.to_onnx(value, array, expected.shape)
        if got is None:
            stage.not_comparable += 1
            return
        stage.compared += 1
        result, figures = verdict(expected, got)
        if result == INCONCLUSIVE:
            stage.inconclusive += 1
        elif result == FAIL:
            stage.failures.append({"tensor": name, "producer": onnx_tensors.producer[name],
                                   "order": onnx_tensors.order[name], **figures})

    outputs = _Recorder(module, live, on_value).run(inputs)
    stage.failures.sort(key=lambda f: f["order"])
    return outputs, stage
