"""The reference executor: runs a module's main function on numpy arrays.

Every tx8be op is evaluated through its `compute()` (the Compute interface); `Group`
regions are entered with their block arguments bound to the group's operands and left
through their terminator. The executor checks what each compute returns against the op's
result types, so a compute that disagrees with `infer_shapes` is caught where it happens.

Inputs are given by position or by the names of the function's arguments (`arg_names`
attribute, else `arg0`, `arg1`, ...). A `LoadConst` reads its value from the constants
given (a `ConstContainer` or a mapping id -> array), by default from the ConstContainer
the module carries (`tx8c.const_container`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.traits import IsTerminator

from tx8c.dialect.base import Tx8beOp
from tx8c.dialect.types import short_name, to_numpy_dtype
from tx8c.errors import Tx8ComputeError
from tx8c.interfaces.traits import ExecutesRegion, ReadsConstContainer


def main_function(module: ModuleOp) -> func.FuncOp:
    """The function to run: `@main` if present, else the only function."""
    funcs = [op for op in module.ops if isinstance(op, func.FuncOp)]
    for f in funcs:
        if f.sym_name.data == "main":
            return f
    if len(funcs) == 1:
        return funcs[0]
    raise Tx8ComputeError(
        f"the module has {len(funcs)} functions and none is called @main; "
        "name the function to run @main"
    )


def input_names(function: func.FuncOp) -> list[str]:
    """The names of the function's inputs (`arg_attrs` `tx8c.name`, else argN)."""
    names = []
    arg_attrs = function.arg_attrs.data if function.arg_attrs is not None else None
    for i in range(len(function.body.block.args)):
        name = None
        if arg_attrs is not None:
            entry = arg_attrs[i].data.get("tx8c.name")
            if entry is not None:
                name = entry.data
        names.append(name or f"arg{i}")
    return names


def require_tx8be(op: Operation) -> Tx8beOp:
    """`op`, when it is a tx8be op; a Tx8ComputeError naming it otherwise."""
    if not isinstance(op, Tx8beOp):
        raise Tx8ComputeError(
            f"op '{op.name}' is not a tx8be op and has no compute; the reference "
            "executor runs tx8be ops only"
        )
    return op


def evaluate(op: Operation, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Run one op's compute and cast its results to the op's result types."""
    op = require_tx8be(op)
    # contiguous inputs: numpy's kernels (matmul, reductions) may sum in another order for
    # other strides, and both executors must get bit-identical results from one compute
    outputs = op.compute(*(np.asarray(x, order="C") for x in inputs))
    if len(outputs) != len(op.results):
        raise Tx8ComputeError(
            f"op '{op.name}' computed {len(outputs)} result(s) but declares "
            f"{len(op.results)}"
        )
    return [_as_result(op, i, out) for i, out in enumerate(outputs)]


def _as_result(op: Operation, index: int, value: np.ndarray) -> np.ndarray:
    rtype = op.results[index].type
    assert isinstance(rtype, TensorType)
    value = np.asarray(value)
    shape = tuple(rtype.get_shape())
    if value.shape != shape:
        raise Tx8ComputeError(
            f"op '{op.name}' computed result #{index} of shape {list(value.shape)} "
            f"but its type says {list(shape)}"
        )
    return value.astype(to_numpy_dtype(rtype.get_element_type()), copy=False)


Constants = Any
"""What the executors take for LoadConst: None (the container the module carries, if any),
a `ConstContainer`, or a plain mapping id -> array."""


def constant_container(module: ModuleOp, constants: Constants):
    """The ConstContainer to read LoadConsts from: the one given, else the module's own
    when no mapping is given; None for a plain mapping."""
    from tx8c.const_container import ConstContainer, module_container

    if isinstance(constants, ConstContainer):
        return constants
    return module_container(module) if constants is None else None


class ReferenceExecutor:
    """Runs a module on logical tensors, op by op, with each op's compute()."""

    def __init__(self, module: ModuleOp, constants: Constants = None):
        self.module = module
        self.function = main_function(module)
        self.container = constant_container(module, constants)
        self.constants = (self.container.values() if self.container is not None
                          else dict(constants or {}))

    def run(
        self, inputs: Sequence[np.ndarray] | Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        block = self.function.body.block
        args = self._bind_inputs(block, inputs)
        return self.run_block(block, args)

    def _bind_inputs(self, block: Block, inputs) -> list[np.ndarray]:
        names = input_names(self.function)
        if isinstance(inputs, Mapping):
            missing = [n for n in names if n not in inputs]
            if missing:
                raise Tx8ComputeError(
                    f"no value given for input(s) {missing}; the function takes {names}"
                )
            inputs = [inputs[n] for n in names]
        if len(inputs) != len(block.args):
            raise Tx8ComputeError(
                f"the function takes {len(block.args)} input(s) ({names}), "
                f"got {len(inputs)}"
            )
        bound = []
        for name, arg, value in zip(names, block.args, inputs, strict=True):
            bound.append(_check_input(name, arg, np.asarray(value)))
        return bound

    def run_block(self, block: Block, args: Sequence[np.ndarray]) -> list[np.ndarray]:
        env: dict[SSAValue, np.ndarray] = dict(zip(block.args, args, strict=True))
        dead_after = _dead_after(block)
        for op in block.ops:
            if _is_terminator(op):
                return [env[v] for v in op.operands]
            values = [env[v] for v in op.operands]
            for result, value in zip(op.results, self.run_op(op, values), strict=True):
                env[result] = value
            for value in dead_after.get(op, ()):  # free what no later op reads
                del env[value]
        raise Tx8ComputeError("block has no terminator")

    def run_op(self, op: Operation, values: list[np.ndarray]) -> list[np.ndarray]:
        if op.has_trait(ExecutesRegion):  # Group
            return op.run_region(self, values)
        if op.has_trait(ReadsConstContainer):  # LoadConst
            return [_as_result(op, 0, op.load_const(self.constants))]
        try:
            return evaluate(op, values)
        except Tx8ComputeError:
            raise
        except Exception as e:  # a compute that crashes is a bug; name the op
            raise Tx8ComputeError(f"op '{op.name}' failed in compute: {e}") from e


def _dead_after(block: Block) -> dict[Operation, list[SSAValue]]:
    """For each op of `block`, the values of the block it is the last reader of (or
    defines without readers): the executor drops them after running it, so a run holds
    only live values (a model's weights one layer at a time, not all at once)."""
    last: dict[SSAValue, Operation] = {}
    for value in block.args:
        last[value] = None
    for op in block.ops:
        for value in op.results:
            last[value] = op
        for inner in op.walk():  # uses inside an op's regions are the op's uses
            for value in inner.operands:
                if value in last:
                    last[value] = op
    dead: dict[Operation, list[SSAValue]] = {}
    for value, op in last.items():
        if op is not None and not _is_terminator(op):
            dead.setdefault(op, []).append(value)
    return dead


def _is_terminator(op: Operation) -> bool:
    """func.return or tx8be.Yield: the block's results are the op's operands."""
    return op.has_trait(IsTerminator)


def _check_input(name: str, arg: SSAValue, value: np.ndarray) -> np.ndarray:
    t = arg.type
    shape = tuple(t.get_shape())
    dtype = to_numpy_dtype(t.get_element_type())
    if value.shape != shape:
        raise Tx8ComputeError(
            f"input '{name}' has shape {list(value.shape)}, the model expects {list(shape)}"
        )
    if value.dtype != dtype:
        raise Tx8ComputeError(
            f"input '{name}' has dtype {value.dtype}, the model expects "
            f"{short_name(t.get_element_type())} ({dtype})"
        )
    return value


def run_reference(
    module: ModuleOp,
    inputs: Sequence[np.ndarray] | Mapping[str, np.ndarray],
    constants: Constants = None,
) -> list[np.ndarray]:
    """Run `module`'s main function on `inputs` and return its results."""
    return ReferenceExecutor(module, constants).run(inputs)
