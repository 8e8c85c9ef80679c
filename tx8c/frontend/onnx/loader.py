"""Loading an ONNX model for import: read, check, fix input shapes, infer shapes.

Everything that can be wrong with the model file or the user's shapes is reported here as
an `OnnxImportError`, one paragraph that says what to do, before any IR is built.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from pathlib import Path

import onnx
from google.protobuf.message import DecodeError

from tx8c.errors import Tx8Error

MIN_OPSET = 11
MAX_OPSET = 21


class OnnxImportError(Tx8Error):
    """The model cannot be imported; the message says why and what to do."""


class OnnxDtypeError(OnnxImportError):
    """The model computes at run time on an element type tx8c does not support."""


def load_model(source: str | Path | onnx.ModelProto) -> onnx.ModelProto:
    """Read a model file (or take a ModelProto); never modifies the caller's proto."""
    if isinstance(source, onnx.ModelProto):
        model = onnx.ModelProto()
        model.CopyFrom(source)
        return model
    path = Path(source)
    if not path.is_file():
        raise OnnxImportError(f"'{path}' does not exist or is not a file.")
    data = path.read_bytes()
    model = onnx.ModelProto()
    try:
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
    return model


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
                f"cannot read input shape '{item}'; write NAME:DIMxDIMx... "
                "(for example --input-shapes input:1x3x224x224,mask:1x128)"
            )
        name, dims = m.group(1), m.group(2)
        shapes[name] = [int(d) for d in dims.split("x")] if dims else []
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


LARGE_INITIALIZER_ELEMENTS = 1024
"""Initializers with more elements are left out of ONNX shape inference (their types
stay); shapes, axes and other data its propagation reads are far smaller."""


def infer_shapes(model: onnx.ModelProto) -> onnx.ModelProto:
    """ONNX shape inference (with constant data propagation); best effort.

    It runs on a copy of the model without the data of its large initializers (weights),
    which are given to it as typed graph inputs instead: ONNX's inference serialises and
    re-parses the whole model, which for a 400 MB model took 4 s of the 8 s compile budget,
    and only small integer initializers (shapes, axes) feed its data propagation. The
    inferred value_info and outputs are copied back into `model`.
    """
    try:
        inferred = onnx.shape_inference.infer_shapes(
            _without_large_data(model), strict_mode=False, data_prop=True
        )
    except Exception:  # tx8c infers shapes itself; ONNX's inference only adds value_info
        return model
    del model.graph.value_info[:]
    model.graph.value_info.extend(inferred.graph.value_info)
    del model.graph.output[:]
    model.graph.output.extend(inferred.graph.output)
    return model


def prepare(
    source: str | Path | onnx.ModelProto, input_shapes: Mapping[str, list[int]] | None
) -> tuple[onnx.ModelProto, int]:
    """Load, check the opset, fix input shapes, and run ONNX shape inference."""
    model = load_model(source)
    opset = check_opset(model)
    fix_input_shapes(model, input_shapes or {})
    return infer_shapes(model), opset


def _without_large_data(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of `model` whose large initializers are typed graph inputs (no data)."""
    light = onnx.ModelProto()
    _copy_fields(light, model, skip="graph")
    graph, source = light.graph, model.graph
    _copy_fields(graph, source, skip="initializer")
    inputs = {i.name for i in source.input}
    for init in source.initializer:
        if math.prod(init.dims) <= LARGE_INITIALIZER_ELEMENTS:  # ByteSize() is slow
            graph.initializer.append(init)
        elif init.name not in inputs:
            graph.input.append(
                onnx.helper.make_tensor_value_info(init.name, init.data_type, list(init.dims))
            )
    return light


def _copy_fields(target, source, skip: str) -> None:
    """Copy every set field of the protobuf message `source` but `skip` into `target`."""
    for descriptor, value in source.ListFields():
        if descriptor.name == skip:
            continue
        field = getattr(target, descriptor.name)
        if hasattr(field, "extend"):  # repeated
            field.extend(value)
        elif hasattr(field, "CopyFrom"):  # a message
            field.CopyFrom(value)
        else:
            setattr(target, descriptor.name, value)
