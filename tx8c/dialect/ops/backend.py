"""Backend ops: constants, alignment conversion, DMA and groups (seed 003).

- `Constant` holds a tensor value in the IR. `move-constant` (seed 003, MoveConstantPass /
  ConstantToLoadConst) registers each value in the module's ConstContainer and replaces
  every use by a `LoadConst` that names the value by its id.
- `ChannelNorm` converts a tensor between compact (NALIGN: Tensor/NTensor) and
  channel-aligned (ALIGN: Cx/NCx) memory layout; `layout-align-to-npu` inserts it where an
  op and its user disagree on alignment (seed 000).
- `LoadVar` / `StoreVar` are the DMA moves DDR -> SPM and SPM -> DDR that `group-ldst`
  (seed 003, GroupLdStPass) inserts at the edges of a group.
- `Group` encloses ops that stay in SPM between its loads and stores: the unit of the
  sharding search and SPM allocation. Its single block takes the group's operands as
  arguments and ends with `Yield`, whose operands are the group's results.

On logical tensors (the reference executor) ChannelNorm, LoadVar and StoreVar are the
identity: they move or re-lay bytes and leave the values unchanged. The byte-level cmodel
gives them their real effect.

Layout (seed 001): ChannelNorm, LoadVar and StoreVar keep the layout of their operand.
Constant and LoadConst have no operands: their layout comes from their consumers (the
backward pass of layout-transmit) or is the Tensor class of their shape; so is a Group's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from xdsl.dialects.builtin import (
    AnyTensorType,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    TensorType,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    lazy_traits_def,
    region_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import (
    ConstantLike,
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    SingleBlockImplicitTerminator,
)

from tx8c.dialect.attrs import AlignMode
from tx8c.dialect.base import (
    ALL_DTYPES,
    Tx8beOp,
    _type_str,
    bool_attr,
    build_block,
    build_op,
    build_region,
    dense_attr_field,
    int_attr,
    ints_attr,
    tx8be_op,
)
from tx8c.dialect.types import tensor_of, to_numpy_dtype
from tx8c.errors import Tx8ComputeError
from tx8c.interfaces import Engine, OpAttr
from tx8c.interfaces.oplib import OpCode, ct_work
from tx8c.interfaces.shape_inference import fit_to_operands, keep_operand_layout
from tx8c.interfaces.sharding import Slicer, slicer_fields
from tx8c.interfaces.traits import ByteMove, ExecutesRegion, MemoryOp, ReadsConstContainer
from tx8c.ir_utils import (
    insert_new_op_before,
    move_ops_to_new_block,
    replace_operands,
    set_operand,
)

UINT32_MAX = 2**32 - 1


def _verify_has_numpy_type(op: Tx8beOp, t: Attribute, what: str) -> None:
    if not isinstance(t, TensorType):
        raise op.fail(f"{what} must be a ranked tensor, got {_type_str(t)}")
    try:
        to_numpy_dtype(t.get_element_type())
    except ValueError:
        raise op.fail(
            f"{what} has element type {_type_str(t.get_element_type())}, which has no "
            "numpy counterpart"
        ) from None


# --------------------------------------------------------------------------------------
# Constants
# --------------------------------------------------------------------------------------


def _bytes_of(array: np.ndarray) -> bytes:
    """`array.tobytes()`, without copying when the array is a whole `bytes` object
    viewed as it is: an ONNX initializer's raw data (`numpy_helper.to_array` is a
    `frombuffer` of it), BERT-base's 340 MB of weights, which would otherwise be
    copied once more on import. The bytes are the same: a C-contiguous array's
    `tobytes` is its memory from its first element."""
    base = array.base
    while isinstance(base, np.ndarray):
        base = base.base
    if (isinstance(base, bytes) and len(base) == array.nbytes and array.flags.c_contiguous
            and array.nbytes and array.ctypes.data == np.frombuffer(base, np.uint8).ctypes.data):
        return base
    return array.tobytes()


@tx8be_op
class ConstantOp(Tx8beOp):
    """A tensor constant: `value` (a dense elements attribute) is the result.

    It exists at compile time only (engine NONE): `move-constant` turns its uses into
    `LoadConst`s. A constant can be read compact or channel-aligned, hence BOTH.
    """

    name = "tx8be.Constant"
    OPERANDS: ClassVar[tuple[str, ...]] = ()
    value = dense_attr_field()
    traits = traits_def(ConstantLike())

    @classmethod
    def from_array(cls, array: np.ndarray, **attrs: Any) -> ConstantOp:
        """A Constant holding `array` (its dtype must have a tx8be element type)."""
        array = np.asarray(array, order="C")  # unlike ascontiguousarray, keeps 0-d arrays
        value = DenseIntOrFPElementsAttr(tensor_of(array), BytesAttr(_bytes_of(array)))
        return cls.make([], value=value, **attrs)

    def verify_op(self) -> None:
        _verify_has_numpy_type(self, self.value.type, "value")
        if self.results and self.results[0].type != self.value.type:
            raise self.fail(
                f"result type {_type_str(self.results[0].type)} must equal the type of "
                f"value, {_type_str(self.value.type)}"
            )

    def infer_shapes(self) -> list[TensorType]:
        return [self.value.type]

    def query_op_attr(self) -> OpAttr:
        return self.op_attr(align_mode=AlignMode.BOTH, engine=Engine.NONE)

    def compute(self) -> list[np.ndarray]:
        return [self.attr("value")]


@tx8be_op
class LoadConstOp(Tx8beOp):
    """DMA of constant number `const_id` of the module's ConstContainer from DDR to SPM.

    The result type is given explicitly (it is the loaded constant's type). The value is
    not in the IR, so `compute()` cannot produce it: the reference executor calls
    `load_const(constants)` with the container instead. `bypass_codegen` (the seed's
    `bypasscodegen`) is set when no user needs the constant loaded, so codegen emits no
    load for it.
    """

    name = "tx8be.LoadConst"
    traits = traits_def(MemoryOp(), ReadsConstContainer())
    OPERANDS: ClassVar[tuple[str, ...]] = ()
    const_id = int_attr()
    bypass_codegen = bool_attr(optional=True)

    def verify_op(self) -> None:
        if self.attr("const_id") < 0:
            raise self.fail(f"const_id must be >= 0, got {self.attr('const_id')}")
        if self.results:
            _verify_has_numpy_type(self, self.results[0].type, "result")

    def infer_shapes(self) -> list[TensorType]:
        if not self.results:
            raise self.fail(
                "needs its result type given explicitly (the type of the constant it loads)"
            )
        return [self.results[0].type]

    def query_op_attr(self) -> OpAttr:
        return self.op_attr(align_mode=AlignMode.BOTH, engine=Engine.LSU)

    def slicer(self):
        """An RDMA of the slice's stored bytes, DDR -> SPM."""
        return TransferSlicer(**slicer_fields(self))

    def ddr_transfer(self) -> str:
        return "load"

    def load_const(self, constants: Mapping[int, np.ndarray]) -> np.ndarray:
        """The value of constant `const_id` in `constants`, checked against the result type."""
        const_id = self.attr("const_id")
        where = f"'{self.name}' (const_id = {const_id})"
        if const_id not in constants:
            known = sorted(constants)
            raise Tx8ComputeError(
                f"{where}: constant {const_id} is not in the constant container "
                f"(it holds ids {known}); run with the container move-constant produced"
            )
        value = np.asarray(constants[const_id])
        rtype = self.results[0].type
        shape = tuple(rtype.get_shape())
        dtype = to_numpy_dtype(rtype.get_element_type())
        if value.shape != shape or value.dtype != dtype:
            raise Tx8ComputeError(
                f"{where}: the container holds a {list(value.shape)} {value.dtype} array "
                f"but the op's result type is {_type_str(rtype)} ({list(shape)} {dtype})"
            )
        return value

    def load_stored(self, container: Any) -> tuple[memoryview, Any]:
        """The bytes DDR holds for this constant and their layout (the byte-level view:
        the cmodel's DMA), from a `tx8c.const_container.ConstContainer`."""
        const_id = self.attr("const_id")
        entry = container.entry(const_id)
        if entry.type != self.results[0].type:
            raise Tx8ComputeError(
                f"'{self.name}' (const_id = {const_id}): the container holds "
                f"{entry.describe()} but the op's result type is "
                f"{_type_str(self.results[0].type)}"
            )
        return container.stored_bytes(const_id), entry.mem_layout

    def emits_code(self) -> bool:
        """Whether codegen emits this load: not when `bypass_codegen` is set (its user
        reads the constant from DDR itself)."""
        return not self.attr("bypass_codegen")

    def compute(self, *inputs: np.ndarray) -> list[np.ndarray]:
        raise Tx8ComputeError(
            f"'{self.name}' (const_id = {self.attr('const_id')}) needs the module's "
            "constant container: its value is not in the IR. Run it with the reference "
            "executor and the constants, which calls load_const()."
        )


# --------------------------------------------------------------------------------------
# Alignment conversion and DMA
# --------------------------------------------------------------------------------------


class _IdentityOp(Tx8beOp):
    """One operand, one result of the same type; the identity on logical values."""

    OPERANDS: ClassVar[tuple[str, ...]] = ("input",)
    DTYPES: ClassVar[frozenset[str] | None] = ALL_DTYPES

    def infer_shapes(self) -> list[TensorType]:
        return [self.operands[0].type]

    def compute(self, x: np.ndarray) -> list[np.ndarray]:
        return [x]

    def gen_op_code(self, loops):
        """A copy of the window (ChannelNorm: read in one layout family, written in the
        other; the TSRs carry the layouts)."""
        return OpCode("op_copy")

    # layout rule of the family (module docstring)
    infer_layout = keep_operand_layout
    infer_operand_layouts = fit_to_operands

    def permute_attributes(self, perm):
        """The identity on values: runs on any arrangement as it is."""
        return {}


@tx8be_op
class ChannelNormOp(_IdentityOp):
    """Conversion between compact and channel-aligned memory layout (seed 000).

    `direction` = true converts NALIGN (Tensor/NTensor) to ALIGN (Cx/NCx), false converts
    ALIGN to NALIGN. The values do not change, only their placement in memory, so compute
    is the identity; the cmodel performs the byte conversion. Runs on CT; its output
    alignment is what `direction` produces.
    """

    name = "tx8be.ChannelNorm"
    traits = traits_def(MemoryOp())
    direction = bool_attr()

    def output_align_mode(self) -> AlignMode:
        """ALIGN when converting to channel-aligned, NALIGN when converting to compact."""
        return AlignMode.ALIGN if self.attr("direction") else AlignMode.NALIGN

    def reads_other_family(self) -> bool:
        return True

    def query_op_attr(self) -> OpAttr:
        return self.op_attr(align_mode=self.output_align_mode(), engine=Engine.CT)

    def slicer(self):
        """One CT format-conversion pass over the slice (a copy into the other layout)."""
        return ConvertSlicer(**slicer_fields(self))


@tx8be_op
class LoadVarOp(_IdentityOp):
    """DMA of a tensor from DDR to SPM (RDMA), inserted at a group's inputs. Its
    `dev_info.mem_layout` is the SPM side's layout; when it is not the layout its
    operand is stored in, the load converts (fuse-channel-norm-dma).

    need_load is 0: the LoadVar is itself the load of its operand, so `group-ldst` never
    puts another one in front of it.
    """

    name = "tx8be.LoadVar"
    traits = traits_def(ByteMove())

    def query_op_attr(self) -> OpAttr:
        return self.op_attr(align_mode=AlignMode.BOTH, engine=Engine.LSU, need_load=0)

    def slicer(self):
        """An RDMA of the slice's stored bytes, DDR -> SPM, counted in the layout family
        its operand is stored in in DDR (a converting load, fuse-channel-norm-dma, writes
        SPM in its own layout)."""
        from tx8c.dialect.layout import is_aligned
        from tx8c.ir_utils import stored_layout

        return TransferSlicer(**{**slicer_fields(self),
                                 "aligned": is_aligned(stored_layout(self.operands[0]))})

    def ddr_transfer(self) -> str:
        return "load"


@tx8be_op
class StoreVarOp(_IdentityOp):
    """DMA of a tensor from SPM to DDR (WDMA), inserted at a group's outputs. Its
    `dev_info.mem_layout` is the DDR side's layout; when it is not the layout its
    operand is stored in, the store converts (fuse-channel-norm-dma).

    need_store is 0: the StoreVar's result is already in DDR, so `group-ldst` never
    stores it again.
    """

    name = "tx8be.StoreVar"
    traits = traits_def(ByteMove())

    def query_op_attr(self) -> OpAttr:
        return self.op_attr(align_mode=AlignMode.BOTH, engine=Engine.LSU, need_store=0)

    def slicer(self):
        """A WDMA of the slice's stored bytes, SPM -> DDR."""
        return TransferSlicer(**slicer_fields(self))

    def ddr_transfer(self) -> str:
        return "store"


# --------------------------------------------------------------------------------------
# Group and Yield
# --------------------------------------------------------------------------------------


@tx8be_op
class GroupOp(Tx8beOp):
    """Ops that run together in SPM: the unit of sharding search and SPM allocation.

    The single block of `body` has one argument per operand (same types) and ends with
    `tx8be.Yield`, whose operands are the group's results. The body is isolated from
    above: it sees outside values only through its arguments.

    Attributes (seed 003, GroupOp):
    - `pipeline_parallel` (default false): run the group as a software pipeline;
    - `sp_stage_num` (default 1, >= 1): number of pipeline stages;
    - `dev_region` ([x_dim, y_dim], each >= 1): the tile region the group is mapped to;
    - `spm_alloc_size` (0 .. 2^32-1): SPM bytes the group occupies;
    - `group_tag`: 0 normal slicing, 1 split nht, 2 no slicing (runs in DDR);
    - `stream_online_check`, `stream_offline`: stream settings (lists of ints);
    - `need_barrier` (default true): tiles synchronise after the group;
    - `group_id` (default -1): the group's number; `template_id` (default -1): the id of
      the group whose slicing this one reuses, negative for none.
    """

    name = "tx8be.Group"
    OPERANDS: ClassVar[tuple[str, ...]] = ("inputs*",)
    SLICED: ClassVar[int] = 0
    """`group_tag` of a group that works in SPM (loads and stores; sliced)."""
    IN_DDR: ClassVar[int] = 2
    """`group_tag` of a group that runs in DDR (no slicing: e.g. pure reshapes)."""
    NUM_RESULTS: ClassVar[int | None] = None
    DATA_OPERANDS: ClassVar[tuple[int, ...] | None] = ()  # any mix of dtypes

    body = region_def("single_block")
    traits = lazy_traits_def(
        lambda: (
            SingleBlockImplicitTerminator(YieldOp), IsolatedFromAbove(), ExecutesRegion()
        )
    )
    assembly_format = "`(` operands `)` attr-dict `:` functional-type(operands, results) $body"

    pipeline_parallel = bool_attr(False)
    sp_stage_num = int_attr(1)
    dev_region = ints_attr(optional=True)
    spm_alloc_size = int_attr(optional=True)
    group_tag = int_attr(optional=True)
    stream_online_check = ints_attr(optional=True)
    stream_offline = ints_attr(optional=True)
    need_barrier = bool_attr(True)
    group_id = int_attr(-1)
    template_id = int_attr(-1)

    # -- construction --------------------------------------------------------------------
    @classmethod
    def make(
        cls,
        operands: Sequence[SSAValue],
        result_types: Sequence[Attribute] | None = None,
        *,
        body: Block | None = None,
        **attrs: Any,
    ) -> GroupOp:
        """A group over `operands` whose body is `body` (a block ending with Yield).

        The result types are the Yield's operand types unless given.
        """
        attributes = cls.ir_attributes(attrs)
        if body is None:
            raise TypeError("GroupOp.make needs body=<a Block ending with tx8be.Yield>")
        if result_types is None:
            last = body.last_op
            if not isinstance(last, YieldOp):
                raise TypeError("the body of a GroupOp must end with tx8be.Yield")
            result_types = [v.type for v in last.operands]
        return cls.create(
            operands=list(operands),
            result_types=list(result_types),
            attributes=attributes,
            regions=[Region(body)],
        )

    @classmethod
    def wrap(cls, ops: Sequence[Operation], **attrs: Any) -> GroupOp:
        """Move `ops` (consecutive ops of one block, in order) into a new group.

        The group takes their place. Values the ops use from outside become its operands
        (and block arguments), values used after them become its results; uses are
        rewired on both sides.
        """
        ops = list(ops)
        block = _check_consecutive(ops)
        inside = set(ops)
        # Values by id: an SSAValue's hash is a Python call, and every operand is looked up.
        inputs: dict[int, SSAValue] = {}
        for op in ops:
            for value in op.operands:
                if value.owner not in inside:  # a block (an argument's owner) never is
                    inputs.setdefault(id(value), value)
        outputs: list[tuple[SSAValue, list[tuple[Operation, int]]]] = []
        for op in ops:
            for result in op.results:
                after = []
                for use in result.uses:
                    reader = use.operation
                    if reader.parent is not block:  # nested in an op of the block
                        reader = block.find_ancestor_op_in_block(reader)
                    if reader not in inside:
                        after.append((use.operation, use.index))
                if after:
                    outputs.append((result, after))
        after_last = ops[-1].next_op
        # The body is filled before the group is placed, in one splice of the op lists
        # (nothing can contain a block that is in no region yet).
        body = build_block([v.type for v in inputs.values()])
        move_ops_to_new_block(ops, body)
        body.add_op(build_op(YieldOp, [value for value, _ in outputs]))
        # Rewire through the ops' own operands and the outputs' uses, never through all
        # uses of an input: a value read by thousands of ops (a shared weight) would make
        # wrapping each of them cost as much as all of them.
        argument = dict(zip(inputs, body.args, strict=True))
        for value, arg in zip(inputs.values(), body.args, strict=True):
            arg.name_hint = value.name_hint  # %x outside reads as %x inside
        for op in ops:
            for reader in op.walk() if op.regions else (op,):  # with any op nested in it
                replace_operands(reader, argument)
        group = build_op(
            cls, list(inputs.values()), [value.type for value, _ in outputs],
            cls.ir_attributes(attrs), [build_region(body)],
        )
        if after_last is None:
            block.add_op(group)
        else:  # the group holds only ops taken from `block`: it cannot contain `block`
            insert_new_op_before(group, after_last)
        for (value, readers), result in zip(outputs, group.results, strict=True):
            result.name_hint = value.name_hint
            for reader, index in readers:
                set_operand(reader, index, result)
        return group

    # -- reading ---------------------------------------------------------------------
    @property
    def block(self) -> Block:
        # Through `regions`, not the IRDL accessor `body` (a descriptor that looks the
        # op's definition up on every read): the grouping passes read every group's block.
        return self.regions[0].block

    @property
    def yield_op(self) -> YieldOp:
        last = self.block.last_op
        if not isinstance(last, YieldOp):
            raise self.fail("body must end with tx8be.Yield")
        return last

    def num_results(self) -> int:
        return len(self.yield_op.operands)

    # -- verification ------------------------------------------------------------------
    def verify_op(self) -> None:
        self._verify_block_args()
        self._verify_yield()
        self._verify_attr_ranges()

    def _verify_block_args(self) -> None:
        args = self.block.args
        if len(args) != len(self.operands):
            raise self.fail(
                f"body has {len(args)} argument(s) but the group has "
                f"{len(self.operands)} operand(s); they must correspond one to one"
            )
        for i, (arg, operand) in enumerate(zip(args, self.operands, strict=True)):
            if arg.type != operand.type:
                raise self.fail(
                    f"body argument #{i} has type {_type_str(arg.type)} but operand #{i} "
                    f"has type {_type_str(operand.type)}"
                )

    def _verify_yield(self) -> None:
        values = self.yield_op.operands
        if len(values) != len(self.results):
            raise self.fail(
                f"tx8be.Yield returns {len(values)} value(s) but the group has "
                f"{len(self.results)} result(s)"
            )
        for i, (value, result) in enumerate(zip(values, self.results, strict=True)):
            if value.type != result.type:
                raise self.fail(
                    f"tx8be.Yield operand #{i} has type {_type_str(value.type)} but "
                    f"result #{i} has type {_type_str(result.type)}"
                )

    def _verify_attr_ranges(self) -> None:
        if self.attr("sp_stage_num") < 1:
            raise self.fail(f"sp_stage_num must be >= 1, got {self.attr('sp_stage_num')}")
        region = self.attr("dev_region")
        if region is not None and (len(region) != 2 or min(region) < 1):
            raise self.fail(
                f"dev_region must be [x_dim, y_dim] with both >= 1, got {list(region)}"
            )
        size = self.attr("spm_alloc_size")
        if size is not None and not 0 <= size <= UINT32_MAX:
            raise self.fail(f"spm_alloc_size must be in [0, {UINT32_MAX}], got {size}")
        tag = self.attr("group_tag")
        if tag is not None and tag not in (0, 1, 2):
            raise self.fail(
                f"group_tag must be 0 (slice), 1 (split nht) or 2 (no slicing), got {tag}"
            )

    # -- interfaces ------------------------------------------------------------------------
    def infer_shapes(self) -> list[TensorType]:
        return [v.type for v in self.yield_op.operands]

    def default_layout(self) -> str:
        if not self.operands and not self.results:
            return "Tensor"
        return super().default_layout()

    def query_op_attr(self) -> OpAttr:
        """A container: no engine runs it (its ops run) and it accepts any alignment."""
        return self.op_attr(align_mode=AlignMode.BOTH, engine=Engine.NONE)

    def run_region(self, executor: Any, values: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Run the body with its arguments bound to `values` (the reference executor)."""
        return executor.run_block(self.block, values)


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Terminator of a `tx8be.Group` body: its operands are the group's results."""

    name = "tx8be.Yield"
    values = var_operand_def(AnyTensorType)
    __hash__ = Tx8beOp.__hash__  # identity without a Python call (Tx8beOp.__hash__)
    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(GroupOp)))
    assembly_format = "attr-dict ($values^ `:` type($values))?"

    def __init__(self, *values: SSAValue | Operation):
        super().__init__(operands=[list(values)])


# --------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TransferSlicer(Slicer):
    """A DMA between DDR and SPM of the slice (element-wise slicing)."""

    def work(self, shape):
        return self.transfer(shape, ddr=True)


@dataclass(frozen=True)
class ConvertSlicer(Slicer):
    """A CT layout conversion of the slice (element-wise slicing): one copy pass."""

    def work(self, shape):
        return ct_work(self.dtype, shape, arith=1, flops=0)


def _check_consecutive(ops: list[Operation]) -> Block:
    if not ops:
        raise ValueError("GroupOp.wrap needs at least one op")
    block = ops[0].parent
    if block is None:
        raise ValueError("GroupOp.wrap: the ops must be in a block")
    for prev, op in zip(ops, ops[1:]):
        if op.parent is not block or prev.next_op is not op:
            raise ValueError("GroupOp.wrap: the ops must be consecutive ops of one block")
    return block


OPS = [ConstantOp, LoadConstOp, ChannelNormOp, LoadVarOp, StoreVarOp, GroupOp, YieldOp]
