"""Loading an ONNX model for import: read, check, fix input shapes, validate.

Everything that can be wrong with the model file or the user's shapes is reported here as
an `OnnxImportError`, one paragraph that says what to do, before any IR is built:

- the file: missing, a directory, truncated or not ONNX; external data files are read
  relative to the model's directory (where exporters put them), a missing one named;
- the opset: 7 to 26. Every opset is read natively: the converters read the forms an op
  had at the model's opset (attribute axes, Clip's bounds, Slice's and Pad's attributes,
  TopK's k, Upsample and Resize-10's asymmetric coordinates). ONNX's version converter is
  not used: converting Upsample to Resize it drops the asymmetric coordinates, which
  changes the model's results;
- the graph: ONNX's checker (attribute types, required attributes, one producer per
  tensor, ...) and ONNX's strict shape inference (axes in range, operand shapes and types
  that fit the op), run on a copy without the weights' bytes so that a large model is not
  serialised twice; then what neither checks: at least one output, initializers that
  shadow an input with another shape, tensor data of the wrong size, negative dims;
- the user's `--input-shapes`.

ONNX's shape inference runs without data propagation: tx8c folds shape computations
itself, with size limits, where ONNX's propagation would allocate them whole (a
Range(0, 1e11) took 5.6 GB).
"""

from __future__ import annotations

import math
import mmap
import re
from collections.abc import Mapping
from contextlib import contextmanager
from pathlib import Path

import onnx
from google.protobuf.message import DecodeError

from tx8c.errors import Tx8Error, require_file

MIN_OPSET = 7
MAX_OPSET = 26
"""The newest released opset (the pinned onnx package also defines 27 and 28, still under
development, which onnxruntime does not guarantee). Opsets 24..26 changed few ops beyond
new element types (which the importer rejects where they are used): they added CumProd,
and Attention's sliding windows, which its converter refuses."""
LARGE_TENSOR_BYTES = 4096
"""Initializers larger than this are left out of the validation copy (they are weights,
never the shape tensors ONNX's shape inference reads)."""


class OnnxImportError(Tx8Error):
    """The model cannot be imported; the message says why and what to do."""


class OnnxDtypeError(OnnxImportError):
    """The model computes at run time on an element type tx8c does not support."""


def load_model(source: str | Path | onnx.ModelProto) -> onnx.ModelProto:
    """Read a model file (or take a ModelProto), with its external data; never modifies
    the caller's proto."""
    if isinstance(source, onnx.ModelProto):
        model = onnx.ModelProto()
        model.CopyFrom(source)
        return model
    path = Path(source)
    require_file(path, OnnxImportError, "model", "the .onnx file")
    model = onnx.ModelProto()
    try:
        with _file_contents(path) as data:
            model.ParseFromString(data)
    except (DecodeError, RuntimeError, ValueError) as e:
        raise OnnxImportError(
            f"'{path}' is not a readable ONNX model ({_short(e)}); the file may be truncated "
            "or not an ONNX file. Re-export the model and check the file is complete."
        ) from None
    if not model.HasField("graph") or not model.graph.node and not model.graph.output:
        raise OnnxImportError(
            f"'{path}' parsed but holds no ONNX graph; it is probably not an ONNX model."
        )
    _load_external_data(model, path)
    return model


@contextmanager
def _file_contents(path: Path):
    """The bytes of the file at `path` as a buffer: a read-only memory map of it (the
    parser reads the pages where the operating system keeps them, instead of a
    `read_bytes` copy first: BERT-base's 415 MB took 0.4 s to copy), or, for an empty
    file or one that cannot be mapped (a pipe), its bytes read. The map is closed on
    leaving (the parsed message holds copies of what it needs)."""
    with path.open("rb") as f:
        try:
            mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):  # empty, or not a mappable file
            yield f.read()
            return
        with mapped, memoryview(mapped) as view:
            yield view


def _load_external_data(model: onnx.ModelProto, path: Path) -> None:
    """Read tensors stored in separate files, relative to the model's directory."""
    from onnx.external_data_helper import (
        _get_all_tensors,
        load_external_data_for_tensor,
        uses_external_data,
    )

    for tensor in _get_all_tensors(model):
        if not uses_external_data(tensor):
            continue
        location = next((e.value for e in tensor.external_data if e.key == "location"), "")
        try:
            load_external_data_for_tensor(tensor, str(path.parent))
        except (OSError, ValueError, onnx.checker.ValidationError) as e:
            raise OnnxImportError(
                f"tensor '{tensor.name}' of '{path}' is stored in the external data file "
                f"'{location}', which cannot be read from '{path.parent}' ({_short(e)}). "
                "Keep the data files next to the model, as the exporter wrote them."
            ) from None


def _short(e: Exception) -> str:
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__


def default_opset(model: onnx.ModelProto) -> int:
    for imp in model.opset_import:
        if imp.domain in ("", "ai.onnx"):
            return int(imp.version)
    raise OnnxImportError(
        "the model declares no opset for the default ONNX domain; re-export it with an "
        f"opset between {MIN_OPSET} and {MAX_OPSET}."
    )


def check_opset(model: onnx.ModelProto) -> int:
    version = default_opset(model)
    if not MIN_OPSET <= version <= MAX_OPSET:
        raise OnnxImportError(
            f"the model uses opset {version}; tx8c imports opsets {MIN_OPSET} to {MAX_OPSET}. "
            f"Convert it with onnx.version_converter.convert_version(model, {MAX_OPSET}) or "
            "re-export it with a supported opset."
        )
    return version


def parse_input_shapes(spec: str | None) -> dict[str, list[int]]:
    """`name:1x3x224x224,other:1x128` -> {"name": [1, 3, 224, 224], "other": [1, 128]}."""
    if not spec:
        return {}
    shapes: dict[str, list[int]] = {}
    for item in spec.split(","):
        item = item.strip()
        m = re.fullmatch(r"(.+):(\d+(?:x\d+)*|)", item)
        if m is None:
            raise OnnxImportError(
                f"cannot read input shape '{item}'; write NAME:DIMxDIMx... with dimensions "
                "of 1 or more (for example --input-shapes input:1x3x224x224,mask:1x128)"
            )
        name, dims = m.group(1), m.group(2)
        if name in shapes:
            raise OnnxImportError(f"--input-shapes gives input '{name}' twice.")
        shapes[name] = [int(d) for d in dims.split("x")] if dims else []
        if any(d < 1 for d in shapes[name]):
            raise OnnxImportError(
                f"--input-shapes gives input '{name}' a dimension of size 0; tx8c compiles "
                "tensors with at least one element in every dimension."
            )
    return shapes


def graph_inputs(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    """The real inputs: graph inputs that are not initializers (older exports list both)."""
    inits = {t.name for t in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in inits]


def fix_input_shapes(model: onnx.ModelProto, shapes: Mapping[str, list[int]]) -> None:
    """Apply user shapes; every input must end up fully static."""
    inputs = {i.name: i for i in graph_inputs(model)}
    unknown = [n for n in shapes if n not in inputs]
    if unknown:
        raise OnnxImportError(
            f"--input-shapes names {', '.join(repr(n) for n in unknown)}, which the model "
            f"does not have; its inputs are {', '.join(repr(n) for n in inputs)}."
        )
    for name, dims in shapes.items():
        tensor_type = inputs[name].type.tensor_type
        old = tensor_type.shape.dim
        if len(old) and len(old) != len(dims):
            raise OnnxImportError(
                f"--input-shapes gives input '{name}' rank {len(dims)} but the model "
                f"declares rank {len(old)}."
            )
        for i, d in enumerate(old):
            if d.HasField("dim_value") and d.dim_value != dims[i]:
                raise OnnxImportError(
                    f"--input-shapes gives input '{name}' dimension {i} = {dims[i]} but the "
                    f"model fixes it to {d.dim_value}."
                )
        tensor_type.shape.Clear()
        for d in dims:
            tensor_type.shape.dim.add().dim_value = d
    dynamic = {}
    for name, info in inputs.items():
        dims = info.type.tensor_type.shape.dim
        if not info.type.tensor_type.HasField("shape"):
            dynamic[name] = ["(unknown rank)"]
            continue
        bad = [d.dim_param or "?" for d in dims if not d.HasField("dim_value")]
        if bad:
            dynamic[name] = bad
    if dynamic:
        listing = "; ".join(f"'{n}' has {', '.join(d)}" for n, d in dynamic.items())
        example = ",".join(f"{n}:1x..." for n in dynamic)
        raise OnnxImportError(
            f"the model has dynamic input dimensions ({listing}); tx8c compiles static "
            f"shapes. Give them with --input-shapes, for example --input-shapes {example}."
        )


# --------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------


def validation_copy(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model without the bytes of its large initializers (they become graph inputs
    of the same type and shape), for ONNX's checker and shape inference."""
    light = onnx.ModelProto()
    _copy_fields(model, light, skip=("graph",))
    _copy_fields(model.graph, light.graph, skip=("initializer",))
    declared = {i.name for i in model.graph.input}
    for tensor in model.graph.initializer:
        if _checked_raw_bytes(tensor) <= LARGE_TENSOR_BYTES:
            light.graph.initializer.append(tensor)
        elif tensor.name not in declared:
            light.graph.input.append(onnx.helper.make_tensor_value_info(
                tensor.name, tensor.data_type, list(tensor.dims)))
    return light


def _copy_fields(source, target, skip: tuple[str, ...]) -> None:
    """Copy the set fields of protobuf message `source` into `target`, but `skip`."""
    for field, value in source.ListFields():
        if field.name in skip:
            continue
        if field.is_repeated:
            getattr(target, field.name).extend(value)
        elif field.message_type is not None:
            getattr(target, field.name).CopyFrom(value)
        else:
            setattr(target, field.name, value)


def _checked_raw_bytes(tensor: onnx.TensorProto) -> int:
    """`_payload_bytes`, read from the dims where `check_graph` has checked the raw
    data's size against them (`_raw_size_checked`): each read of `raw_data` copies it
    (BERT-base: 415 MB, 0.1 s)."""
    want = _raw_size_checked(tensor)
    return want if want is not None else _payload_bytes(tensor)


def _payload_bytes(tensor: onnx.TensorProto) -> int:
    return len(tensor.raw_data) + 8 * sum(
        len(getattr(tensor, f)) for f in
        ("float_data", "int32_data", "int64_data", "double_data", "uint64_data")
    )


def name_nodes(model: onnx.ModelProto) -> None:
    """Give every unnamed node the name errors use for it: `OpType_index`."""
    for index, node in enumerate(model.graph.node):
        if not node.name:
            node.name = f"{node.op_type}_{index}"


def check_model(model: onnx.ModelProto) -> None:
    """tx8c's own checks, then ONNX's checker and strict shape inference (module
    docstring); one OnnxImportError naming the node or tensor. A deprecated op version
    (GroupNormalization-18) is not an error: onnxruntime still runs it."""
    check_graph(model)
    light = validation_copy(model)
    try:
        onnx.checker.check_model(_with_shape_fields(light))
    except onnx.checker.ValidationError as e:
        if "is deprecated" not in str(e):
            raise OnnxImportError(
                f"the model is not valid ONNX: {_checker_text(e)}. Fix the exporter or the "
                "model; onnx.checker.check_model reports the same."
            ) from None
    try:
        onnx.shape_inference.infer_shapes(light, check_type=True, strict_mode=True)
    except onnx.shape_inference.InferenceError as e:
        if _inferred_through_function_body(str(e), model):
            return
        raise OnnxImportError(
            f"the model is not valid ONNX: {_checker_text(e)}. ONNX's shape inference "
            "rejects it (onnx.shape_inference.infer_shapes(model, strict_mode=True))."
        ) from None


def _inferred_through_function_body(message: str, model: onnx.ModelProto) -> bool:
    """The failing node's op has no inference function of its own: ONNX inferred it
    through the op's function body, where its inference has bugs (MeanVarianceNormalization
    at opset 22 fails on a Constant inside). Such an error says nothing about the model."""
    m = re.search(r"\(op_type:([A-Za-z0-9_]+)", message)
    if m is None:
        return False
    try:
        schema = onnx.defs.get_schema(m.group(1), default_opset(model))
    except onnx.defs.SchemaError:
        return False
    return not schema.has_type_and_shape_inference_function


def _with_shape_fields(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy whose graph inputs and outputs all have a shape field, and without untyped
    outputs: the checker demands types and shapes there, but onnxruntime runs models
    without them (unknown rank, inferred type)."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    for info in [*copy.graph.input, *copy.graph.output]:
        if info.type.HasField("tensor_type") and not info.type.tensor_type.HasField("shape"):
            info.type.tensor_type.shape.SetInParent()
    typed = [o for o in copy.graph.output if o.HasField("type")]  # untyped: ORT infers it
    del copy.graph.output[:]
    copy.graph.output.extend(typed)
    return copy


def _checker_text(e: Exception) -> str:
    """ONNX's multi-line checker message as one line."""
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    lines = [ln.removeprefix("==> Context: ") for ln in lines]
    return "; ".join(lines).rstrip(".")


def check_graph(model: onnx.ModelProto) -> None:
    """What ONNX's checker lets through but tx8c cannot take."""
    graph = model.graph
    if not graph.output:
        raise OnnxImportError(
            "the model's graph has no outputs, so there is nothing to compute; give it at "
            "least one output."
        )
    for kind, infos in (("input", graph.input), ("output", graph.output)):
        for info in infos:
            what = info.type.WhichOneof("value")
            if what is not None and what != "tensor_type":
                kind_of = what.replace("_type", "")
                article = "an" if kind_of[0] in "aeiou" else "a"
                raise OnnxImportError(
                    f"graph {kind} '{info.name}' is {article} {kind_of}, not a tensor; tx8c "
                    "compiles graphs of tensors."
                )
    _check_range_deltas(graph)
    inputs = {i.name: i for i in graph.input}
    for tensor in graph.initializer:
        _check_tensor_data(tensor, f"initializer '{tensor.name}'")
        declared = inputs.get(tensor.name)
        if declared is not None:
            _check_shadowing(tensor, declared)
    for info in graph.input:
        negative = [d.dim_value for d in info.type.tensor_type.shape.dim
                    if d.HasField("dim_value") and d.dim_value < 0]
        if negative:
            raise OnnxImportError(
                f"input '{info.name}' declares a negative dimension ({negative[0]}); "
                "dimensions are sizes (0 or more)."
            )


def _check_range_deltas(graph: onnx.GraphProto) -> None:
    """A Range whose delta is an initializer 0 never ends (ONNX's shape inference then
    reports a confusing error on a later node)."""
    inits = {t.name: t for t in graph.initializer}
    for node in graph.node:
        if node.op_type == "Range" and len(node.input) == 3 and node.input[2] in inits:
            delta = tensor_array(inits[node.input[2]], f"initializer '{node.input[2]}'")
            if delta.size == 1 and delta.reshape(-1)[0] == 0:
                raise OnnxImportError(
                    f"node '{node.name}' (Range): delta is 0, so the range never reaches its "
                    "limit."
                )


def _check_shadowing(tensor: onnx.TensorProto, declared: onnx.ValueInfoProto) -> None:
    """An initializer that is also a graph input gives it a default value; it must have
    the input's declared type and shape (tx8c uses the initializer)."""
    tt = declared.type.tensor_type
    dims = [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]
    shape_ok = not tt.HasField("shape") or (
        len(dims) == len(tensor.dims)
        and all(d is None or d == t for d, t in zip(dims, tensor.dims, strict=True))
    )
    if tt.elem_type != tensor.data_type or not shape_ok:
        raise OnnxImportError(
            f"initializer '{tensor.name}' has type "
            f"{onnx.TensorProto.DataType.Name(tensor.data_type)} {list(tensor.dims)}, but "
            f"the graph input of that name declares "
            f"{onnx.TensorProto.DataType.Name(tt.elem_type)} {dims}; an initializer that "
            "shadows an input must match it."
        )


def _check_tensor_data(tensor: onnx.TensorProto, what: str) -> None:
    """The tensor's data holds as many elements as its dims say (checked on the sizes,
    without converting the data)."""
    if tensor.data_location == onnx.TensorProto.EXTERNAL:
        return
    if any(d < 0 for d in tensor.dims):
        raise OnnxImportError(f"{what} has negative dimensions {list(tensor.dims)}.")
    count = math.prod(tensor.dims)
    try:
        dtype = onnx.helper.tensor_dtype_to_np_dtype(tensor.data_type)
        field = onnx.helper.tensor_dtype_to_field(tensor.data_type)
    except (KeyError, ValueError, TypeError):
        return  # exotic types (strings, 4-bit, float8): left to the converters
    if tensor.data_type in _PACKED_TYPES:
        return
    want = _raw_size_checked(tensor)
    if want is not None:
        have, unit = len(tensor.raw_data), "bytes"
    else:
        have, want = len(getattr(tensor, field)), count * (2 if dtype.kind == "c" else 1)
        unit = "values"
    if have != want:
        raise OnnxImportError(
            f"{what} (type {onnx.TensorProto.DataType.Name(tensor.data_type)}, dims "
            f"{list(tensor.dims)}) holds {have} {unit} of data where its type and dims need "
            f"{want}; the model file is damaged or was written wrongly."
        )


def _raw_size_checked(tensor: onnx.TensorProto) -> int | None:
    """The bytes of raw data the tensor's dims and type need, for a tensor whose raw
    data `_check_tensor_data` checks against them (in the model's file, of a type of
    fixed size that is not packed); None for any other."""
    if (tensor.data_location == onnx.TensorProto.EXTERNAL or not tensor.HasField("raw_data")
            or tensor.data_type in _PACKED_TYPES or any(d < 0 for d in tensor.dims)):
        return None
    try:
        itemsize = onnx.helper.tensor_dtype_to_np_dtype(tensor.data_type).itemsize
        onnx.helper.tensor_dtype_to_field(tensor.data_type)
    except (KeyError, ValueError, TypeError):
        return None
    return math.prod(tensor.dims) * itemsize


_PACKED_TYPES = {
    getattr(onnx.TensorProto, name)
    for name in ("INT4", "UINT4", "FLOAT4E2M1", "STRING", "INT2", "UINT2")
    if hasattr(onnx.TensorProto, name)
}
"""Types whose data are packed or of variable size: their sizes are left to ONNX."""


def tensor_array(tensor: onnx.TensorProto, what: str):
    """numpy_helper.to_array with an OnnxImportError naming the tensor when its data do
    not fit its dims or type."""
    from onnx import numpy_helper

    try:
        return numpy_helper.to_array(tensor)
    except (ValueError, TypeError, KeyError, AssertionError, RuntimeError) as e:
        raise OnnxImportError(
            f"{what} (type {onnx.TensorProto.DataType.Name(tensor.data_type)}, dims "
            f"{list(tensor.dims)}) has data that does not fit its type and dims "
            f"({_short(e)}); the model file is damaged or was written wrongly."
        ) from None


def prepare(
    source: str | Path | onnx.ModelProto, input_shapes: Mapping[str, list[int]] | None
) -> tuple[onnx.ModelProto, int]:
    """Load, check the opset, list unsupported ops, validate, fix input shapes."""
    from tx8c.frontend.onnx.registry import check_supported

    model = load_model(source)
    version = check_opset(model)
    name_nodes(model)
    check_supported(model.graph)
    check_model(model)
    fix_input_shapes(model, input_shapes or {})
    return model, version
