"""ONNX -> tx8be import (seed 003: the backend receives a static tensor graph).

Requires: an ONNX model (path or ModelProto), opset 11..21, static input shapes (from
the model or from `input_shapes`).
Guarantees: a verified module with one function `@main` whose arguments are the model's
inputs and whose results are its outputs (both carry their ONNX names in the `tx8c.name`
argument/result attribute); the function holds only tensor compute: shape sub-graphs are
folded, Identity and Dropout are gone, each initializer used at run time is one
`tx8be.Constant`. Nothing is written anywhere.

Any model tx8c cannot take is rejected before building with one message (`prepare`):
every unsupported op type, with counts and a few node names each
(`registry.check_supported`).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import onnx
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, StringAttr
from xdsl.ir import Block, Region, SSAValue

from tx8c.dialect.types import tensor
from tx8c.errors import Tx8Error
from tx8c.frontend.onnx.context import GraphBuilder, NodeContext, Value
from tx8c.frontend.onnx.loader import (
    OnnxDtypeError,
    OnnxImportError,
    graph_inputs,
    prepare,
    tensor_array,
)
from tx8c.frontend.onnx.registry import load_converters
from tx8c.frontend.onnx.types import RUNTIME, element_type_of


@dataclass
class ImportResult:
    module: ModuleOp
    input_names: list[str]
    output_names: list[str]
    opset: int
    onnx_nodes: int
    onnx_op_counts: dict[str, int]
    seconds: float
    constants: int = 0
    notes: list[str] = field(default_factory=list)
    value_names: dict[SSAValue, str] = field(default_factory=dict)
    """The ONNX tensor name of each SSA value that holds one (the first name, in graph
    order, when Identity-like nodes give a value several). Values keep their identity
    through every pass that does not replace their op, so after a pipeline the entries
    whose value is still in the module name what it computes (`tx8c compare
    --all-tensors`)."""


def import_onnx(
    source: str | Path | onnx.ModelProto,
    input_shapes: Mapping[str, list[int]] | None = None,
    on_node: Callable[[str], None] | None = None,
) -> ImportResult:
    """Import an ONNX model into a tx8be module (see the module docstring); `on_node` is
    called with each top-level node's name once it is converted (progress)."""
    start = time.perf_counter()
    model, opset = prepare(source, input_shapes)
    return import_prepared(model, opset, on_node, start)


def import_prepared(
    model: onnx.ModelProto,
    opset: int,
    on_node: Callable[[str], None] | None = None,
    start: float | None = None,
) -> ImportResult:
    """`import_onnx` of a model `prepare` returned (loaded, checked, its input shapes
    fixed) with its `opset`: a caller that prepared the model itself does not pay for a
    second copy and check of it (1 s on BERT-base). `start`: the `perf_counter` time the
    import's `seconds` count from (default: now)."""
    start = time.perf_counter() if start is None else start
    graph = model.graph

    inputs = graph_inputs(model)
    block = Block(arg_types=[_input_type(i) for i in inputs])
    builder = GraphBuilder(block)
    values: dict[str, Value] = {"": None}
    for info, arg in zip(inputs, block.args, strict=True):
        values[info.name] = Value.of_ssa(arg)
    for init in graph.initializer:
        values[init.name] = Value.of_const(tensor_array(init, f"initializer '{init.name}'"))

    convert_nodes(graph, values, builder, opset, on_node)

    results = []
    for out in graph.output:
        if out.name not in values:
            raise OnnxImportError(f"graph output '{out.name}' is not produced by any node.")
        _check_output_type(out)
        results.append(builder.ssa(values[out.name]))
    block.add_op(func.ReturnOp(*results))

    function = func.FuncOp(
        "main", ([a.type for a in block.args], [r.type for r in results]), Region(block)
    )
    function.arg_attrs = _names_attr([i.name for i in inputs])
    function.res_attrs = _names_attr([o.name for o in graph.output])
    module = ModuleOp([function])
    module.verify()
    return ImportResult(
        module=module,
        input_names=[i.name for i in inputs],
        output_names=[o.name for o in graph.output],
        opset=opset,
        onnx_nodes=len(graph.node),
        onnx_op_counts=dict(Counter(n.op_type for n in graph.node)),
        seconds=time.perf_counter() - start,
        constants=builder.constants_made,
        value_names=_value_names(values),
    )


def _value_names(values: dict[str, Value | None]) -> dict[SSAValue, str]:
    names: dict[SSAValue, str] = {}
    for name, value in values.items():
        if value is not None and value.ssa is not None:
            names.setdefault(value.ssa, name)
    return names


def convert_nodes(graph: onnx.GraphProto, values: dict[str, Value], builder: GraphBuilder,
                  opset: int, on_node: Callable[[str], None] | None = None) -> None:
    """Convert the graph's nodes in order; `values` gains every output they produce.

    A node may hold subgraphs (If's branches): `NodeContext.convert_subgraph` converts
    one in a scope of its own that sees the outer values.
    """
    converters = load_converters()

    def convert_subgraph(subgraph: onnx.GraphProto) -> list[Value]:
        from tx8c.frontend.onnx.registry import check_supported

        check_supported(subgraph)
        scope = dict(values)
        for init in subgraph.initializer:
            scope[init.name] = Value.of_const(tensor_array(init, f"initializer '{init.name}'"))
        convert_nodes(subgraph, scope, builder, opset)
        missing = [o.name for o in subgraph.output if o.name not in scope]
        if missing:
            raise OnnxImportError(f"subgraph '{subgraph.name}' outputs {missing}, which none "
                                  "of its nodes produces.")
        return [scope[o.name] for o in subgraph.output]

    for index, node in enumerate(graph.node):
        name = node.name or f"{node.op_type}_{index}"
        missing = [i for i in node.input if i not in values]
        if missing:
            raise OnnxImportError(
                f"node '{name}' ({node.op_type}) reads {missing}, which no earlier node or "
                "input produces; the graph is not in topological order or is incomplete."
            )
        ctx = NodeContext(node, name, opset, [values[i] for i in node.input], builder,
                          convert_subgraph)
        outs = _convert(converters[node.op_type], ctx)
        for out_name, value in zip(node.output, outs, strict=False):
            if out_name:
                values[out_name] = value
        if on_node is not None:
            on_node(name)


def _convert(convert, ctx: NodeContext) -> list[Value]:
    """Run one converter; a crash inside it is reported against the node, not raised."""
    try:
        outs = convert(ctx)
    except Tx8Error:
        raise
    except Exception as e:  # a converter bug or a case it does not handle
        raise ctx.error(
            f"tx8c could not convert this node ({type(e).__name__}: {e}). This is a tx8c "
            "bug or an unsupported use of the op; please report it with the model."
        ) from e
    return outs if isinstance(outs, list) else [outs]


def _input_type(info: onnx.ValueInfoProto):
    tt = info.type.tensor_type
    dims = [d.dim_value for d in tt.shape.dim]
    try:
        return tensor(dims, element_type_of(tt.elem_type))
    except ValueError as e:
        raise OnnxDtypeError(
            f"input '{info.name}' has element type {onnx.TensorProto.DataType.Name(tt.elem_type)}"
            f", which tx8c does not support ({e})."
        ) from None


def _check_output_type(info: onnx.ValueInfoProto) -> None:
    """A declared output type must be one tx8c returns (uint8, for one, is carried in
    int32 inside the model and cannot be returned as uint8)."""
    elem = info.type.tensor_type.elem_type
    if elem and elem not in RUNTIME:
        raise OnnxDtypeError(
            f"graph output '{info.name}' has element type "
            f"{onnx.TensorProto.DataType.Name(elem)}, which tx8c does not return (supported: "
            "float, float16, bfloat16, int8, int32, int64, bool). Dequantize or cast it in "
            "the model."
        )


def _names_attr(names: list[str]) -> ArrayAttr:
    return ArrayAttr([DictionaryAttr({"tx8c.name": StringAttr(n)}) for n in names])


__all__ = ["ImportResult", "OnnxImportError", "import_onnx"]
