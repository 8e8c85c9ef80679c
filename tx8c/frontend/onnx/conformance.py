"""Conformance of the importer + reference executor against ONNX's own node tests.

The onnx package ships the generators of its backend node tests
(`onnx.backend.test.case.node`): each builds a one-node model and its expected outputs
with ONNX's reference implementation. For every test whose op type tx8c claims to support
(the converter table), this runner imports the model, runs the reference executor and
compares with the expected outputs (the test's own rtol/atol). The `_expanded` variants,
which hold an op's function body (a decomposition into other ops) rather than the op, are
left out: they test other op types.

Models of opsets outside 7..28 are first converted with onnx.version_converter, the
tool a user would use; when ONNX has no adapter, the case is reported as rejected.

Each case ends as:
- pass: imported, ran, and matched;
- rejected: the importer refused it with a clear error (an unsupported attribute, dtype
  or opset), listed with the message;
- fail: it ran but the numbers differ (a bug to fix);
- error: it crashed (a bug to fix).
"""

from __future__ import annotations

import warnings
from collections import Counter, defaultdict
from dataclasses import dataclass

import numpy as np
import onnx

from tx8c.errors import Tx8Error
from tx8c.frontend.onnx.loader import MAX_OPSET, MIN_OPSET, default_opset


@dataclass(frozen=True)
class CaseResult:
    name: str
    op_type: str
    status: str  # pass | rejected | fail | error
    reason: str = ""
    dtype_rejection: bool = False
    """Rejected because the test computes on an element type tx8c does not run (uint16,
    float64, float8, int4, string, ...), directly or through an opset conversion."""


def collect_cases(op_types: set[str] | None = None) -> list:
    """ONNX's node test cases whose op type is in `op_types` (default: all supported)."""
    from onnx.backend.test.case.node import collect_testcases

    from tx8c.frontend.onnx.registry import load_converters

    wanted = set(load_converters()) if op_types is None else op_types
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = collect_testcases()
    return [c for c in cases if len(c.model.graph.node) == 1 and _op_type(c.model) in wanted]


def _op_type(model: onnx.ModelProto) -> str:
    return model.graph.node[0].op_type


def _to_supported_opset(model: onnx.ModelProto) -> onnx.ModelProto:
    try:
        version = default_opset(model)
    except Tx8Error:
        return model
    target = min(max(version, MIN_OPSET), MAX_OPSET)
    if target == version:
        return model
    try:
        return onnx.version_converter.convert_version(model, target)
    except Exception as e:
        detail = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise _OpsetConversionError(
            f"opset {version} model; onnx.version_converter cannot convert it to opset "
            f"{target} ({detail})",
            type_related="DataType" in detail,
        ) from None


def run_case(case) -> CaseResult:
    from tx8c.sim.reference import run_reference

    op_type = _op_type(case.model)
    for inputs, expected in case.data_sets:
        try:
            model = _to_supported_opset(case.model)
            model, result = _import_freezing(model, inputs)
        except Tx8Error as e:
            return CaseResult(case.name, op_type, "rejected", str(e), _is_dtype_rejection(e))
        except Exception as e:  # a crash in the importer is a bug
            reason = f"import crashed: {type(e).__name__}: {e}"
            return CaseResult(case.name, op_type, "error", reason)
        try:
            got = run_reference(
                result.module, _runtime_inputs(inputs, result.input_names, case.model))
        except Tx8Error as e:
            return CaseResult(case.name, op_type, "error", f"run failed: {e}")
        except Exception as e:
            return CaseResult(case.name, op_type, "error", f"run crashed: {type(e).__name__}: {e}")
        mismatch = _mismatch(expected, got, case.rtol, case.atol)
        if mismatch and not _more_accurate_than_expected(case.model, inputs, expected, got):
            return CaseResult(case.name, op_type, "fail", mismatch)
        if mismatch:
            note = ("low precision: differs from ONNX's expected output, but tx8c's result is "
                    "closer to the exact (float64) one")
            return CaseResult(case.name, op_type, "pass", note)
    return CaseResult(case.name, op_type, "pass")


class _OpsetConversionError(Tx8Error):
    def __init__(self, message: str, type_related: bool):
        super().__init__(message)
        self.type_related = type_related


def _is_dtype_rejection(e: Tx8Error) -> bool:
    from tx8c.frontend.onnx.loader import OnnxDtypeError

    return isinstance(e, OnnxDtypeError) or getattr(e, "type_related", False)


def _import_freezing(model: onnx.ModelProto, inputs):
    """Import; graph inputs the compiler needs at compile time (axes, shapes, pads, scales
    fed as inputs by the node tests) are frozen to their data-set values, as a user of a
    static-graph compiler does."""
    from tx8c.frontend.onnx.context import NeedsConstantError
    from tx8c.frontend.onnx.importer import import_onnx

    values = dict(zip([i.name for i in model.graph.input], inputs, strict=False))
    while True:
        try:
            return model, import_onnx(model)
        except NeedsConstantError as e:
            if e.value_name not in values or _is_initializer(model, e.value_name):
                raise
            model = _freeze_input(model, e.value_name, _as_array(values[e.value_name]))


def _is_initializer(model: onnx.ModelProto, name: str) -> bool:
    return any(t.name == name for t in model.graph.initializer)


def _freeze_input(model: onnx.ModelProto, name: str, value: np.ndarray) -> onnx.ModelProto:
    frozen = onnx.ModelProto()
    frozen.CopyFrom(model)
    kept = [i for i in frozen.graph.input if i.name != name]
    del frozen.graph.input[:]
    frozen.graph.input.extend(kept)
    frozen.graph.initializer.append(onnx.numpy_helper.from_array(value, name))
    return frozen


def _runtime_inputs(inputs, names: list[str], model: onnx.ModelProto) -> list[np.ndarray]:
    """The data set's inputs (one per graph input of the test's own model, in order) for
    the module's arguments (the inputs left after freezing)."""
    by_name = dict(zip([i.name for i in model.graph.input], inputs, strict=False))
    return [_as_array(by_name[n]) for n in names]


def _as_array(value) -> np.ndarray:
    """Data-set values are numpy arrays or, for some dtypes, TensorProtos."""
    if isinstance(value, onnx.TensorProto):
        return onnx.numpy_helper.to_array(value)
    return np.asarray(value)


_LOW_PRECISION = {onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16}


def _more_accurate_than_expected(model: onnx.ModelProto, inputs, expected, got) -> bool:
    """For float16/bfloat16 outputs: ONNX's reference rounds after every numpy step,
    tx8c once per op, so the two can differ by an ulp or two. The result is accepted when
    it is at least as close as the expected output to the exact result (the model run by
    ONNX's reference evaluator in float64)."""
    outputs = model.graph.output
    if not outputs or any(o.type.tensor_type.elem_type not in _LOW_PRECISION for o in outputs):
        return False
    from onnx.reference import ReferenceEvaluator

    exact_model = onnx.ModelProto()
    exact_model.CopyFrom(model)
    for info in [*exact_model.graph.input, *exact_model.graph.output]:
        if info.type.tensor_type.elem_type in _LOW_PRECISION:
            info.type.tensor_type.elem_type = onnx.TensorProto.DOUBLE
    feeds = {}
    for info, value in zip(model.graph.input, inputs, strict=False):
        value = _as_array(value)
        low = info.type.tensor_type.elem_type in _LOW_PRECISION
        feeds[info.name] = value.astype(np.float64) if low else value
    try:
        exact = ReferenceEvaluator(exact_model).run(None, feeds)
    except Exception:  # the model does not run in float64: no verdict
        return False
    for e, g, x in zip(expected, got, exact, strict=True):
        x = np.asarray(x, np.float64)
        ours = np.abs(g.astype(np.float64) - x)
        theirs = np.abs(_as_array(e).astype(np.float64) - x)
        if not np.all(np.isfinite(ours) == np.isfinite(theirs)) or np.nanmax(
                ours) > np.nanmax(theirs):
            return False
    return True


def _mismatch(expected, got, rtol: float, atol: float) -> str:
    if len(expected) != len(got):
        return f"{len(got)} outputs, expected {len(expected)}"
    for i, (e, g) in enumerate(zip(expected, got, strict=True)):
        e = _as_array(e)
        if e.shape != g.shape:
            return f"output {i}: shape {list(g.shape)}, expected {list(e.shape)}"
        if e.dtype.kind in "biu" or e.dtype == np.bool_:
            if not np.array_equal(e, g):
                return f"output {i}: values differ"
            continue
        try:
            np.testing.assert_allclose(
                g.astype(np.float64), e.astype(np.float64), rtol=rtol, atol=atol
            )
        except AssertionError as err:
            lines = [ln for ln in str(err).splitlines() if "Max" in ln]
            return f"output {i}: " + ("; ".join(lines) or "values differ")
    return ""


def run_conformance(op_types: set[str] | None = None) -> list[CaseResult]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [run_case(c) for c in collect_cases(op_types)]


def summary_table(results: list[CaseResult]) -> str:
    """Per op type: passes, rejections, failures, errors; then the totals."""
    per_op: dict[str, Counter] = defaultdict(Counter)
    for r in results:
        per_op[r.op_type][r.status] += 1
    head = f"{'op type':<22} {'cases':>5} {'pass':>5} {'reject':>6} {'fail':>5} {'error':>5}"
    lines = [head, "-" * len(head)]
    for op, c in sorted(per_op.items()):
        lines.append(
            f"{op:<22} {sum(c.values()):>5} {c['pass']:>5} {c['rejected']:>6} "
            f"{c['fail']:>5} {c['error']:>5}"
        )
    total = Counter(r.status for r in results)
    lines.append("-" * len(head))
    lines.append(
        f"{'total':<22} {len(results):>5} {total['pass']:>5} {total['rejected']:>6} "
        f"{total['fail']:>5} {total['error']:>5}"
    )
    rates = pass_rates(results)
    lines.append(
        f"pass rate: {rates['all']:.1%} of all cases; {rates['supported_dtypes']:.1%} of the "
        f"{rates['supported_dtype_cases']} cases on element types tx8c runs "
        f"({rates['dtype_rejections']} cases compute on other types)"
    )
    return "\n".join(lines)


def pass_rates(results: list[CaseResult]) -> dict:
    passing = sum(r.status == "pass" for r in results)
    dtype_rejections = sum(r.dtype_rejection for r in results)
    on_supported = len(results) - dtype_rejections
    return {
        "all": passing / max(len(results), 1),
        "supported_dtypes": passing / max(on_supported, 1),
        "supported_dtype_cases": on_supported,
        "dtype_rejections": dtype_rejections,
    }


def main() -> None:
    results = run_conformance()
    print(summary_table(results))
    for r in results:
        if r.status != "pass":
            print(f"{r.status:8} {r.name}: {r.reason}")


if __name__ == "__main__":
    main()
