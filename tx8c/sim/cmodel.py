"""The cmodel, v1: runs a tx8be module after the layout stage on bytes (issue 4, item 7).

Where the reference executor (`tx8c.sim.reference`) runs every op on logical numpy
arrays, the cmodel keeps every value as the bytes the chip would hold, laid out in a
memory layout (`tx8c.target.mem_layout`: Tensor/NTensor compact, Cx/NCx channel-aligned).
A value stored in one layout and read in another is read wrongly, so a forgotten or
misdirected `ChannelNorm` gives a wrong answer instead of passing unnoticed.

Semantics:

- **Values.** Every SSA value is a byte buffer plus the layout it was written in. A result
  is written in the mem_layout of its defining op's `dev_info`; an op without `dev_info`
  writes compact (`mem_layout_for(shape, aligned=False)`). Function arguments (graph
  inputs) are packed compact: seed 000 makes graph inputs NALIGN.
- **Alignment family of an op.** An op's kernel works in one family: channel-aligned when
  its `dev_info.mem_layout` is Cx/NCx, compact otherwise (Tensor/NTensor, or no
  `dev_info`). The op reads *every* operand as if it were stored in that family
  (operand layout `mem_layout_for(operand_shape, aligned=family)`), whatever layout the
  operand was really written in; it unpacks, computes with the op's `compute()` (through
  `tx8c.sim.reference.evaluate`, so results are cast and checked as in the reference), and
  packs each result in its own layout. A single-result op writes exactly its
  `dev_info.mem_layout` (so a Cx written where an NCx reader expects NCx is caught); the
  results of a multi-result op are written in `mem_layout_for(result_shape, family)`.
- **ChannelNorm** (`direction` true: compact -> aligned, false: aligned -> compact) really
  converts bytes: it reads its operand in the family opposite to `direction` and writes its
  result in the family `direction` names. The direction decides what the engine does, so
  a ChannelNorm whose `direction` is wrong reads the wrong family and the answer is wrong
  even if its `dev_info` is right. Its `dev_info.mem_layout` picks the exact layout of the
  result (Cx or NCx, Tensor or NTensor) when its family agrees with the direction; if it
  does not, the result is written in `mem_layout_for(shape, direction)`.
- **Relabel** (`moves_no_bytes()`) moves no bytes: its result is its operand's buffer,
  unchanged, labelled with the result's layout. Read in that layout it gives the right
  values only if the relabel is the identity on the bytes of its family, so a relabel
  that is not gives a wrong answer.
- **Transpose** and every other op just compute (unpack, `compute()`, pack).
- **LoadVar / StoreVar** are DMA moves: they copy their operand's bytes unchanged (same
  bytes, same layout) when their `dev_info.mem_layout` is the layout the operand was
  written in (or they have none). When it is another layout they are a converting DMA
  (fuse-channel-norm-dma): each element is read where the operand's layout put it and
  written where the op's layout puts it, as the LSU does with the two address maps; so a
  store left in the wrong layout gives a wrong answer. They appear after grouping, not
  after the layout stage; the cmodel gives them their byte meaning so later stages can
  run on it.
- **Constants.** A `LoadConst` is the DMA of its constant's stored bytes: with a
  ConstContainer (given, or the one the module carries) its result is
  `container.stored_bytes(id)` in the container's layout for that id, exactly what
  `consts.bin` holds, whatever the LoadConst's own dev_info says; so a constant stored
  channel-aligned but read by a compact reader reads wrongly. With a plain mapping id ->
  array (tests), the value is packed in the LoadConst's dev_info mem_layout. A `Constant`
  is packed "at compile time" in its own `dev_info` mem_layout, compact without one.
- **Groups** run their region as the reference executor does: the block arguments take the
  group operands' buffers, `Yield` passes buffers through, so a group result keeps the
  layout its producer inside the group wrote.
- **Results.** The function's results are read compact (graph outputs are NALIGN, seed
  000), so an aligned value returned without a ChannelNorm(false) reads wrongly.
- **Reading past the end.** A buffer read in a layout larger than the one it was written in
  (compact bytes read as aligned) reads zeros past its end: memory after a tensor is
  modelled as zeros. Bytes beyond the layout being read are ignored.

Index tensors (int32/int64/bool) and other types outside the seed's alignment table are
stored compact in every layout by `tx8c.target.mem_layout`, so nothing here treats them
specially. Every hardware number (channel blocks, padding steps, batch alignment) comes
from the `TX8Config`.

Per-op byte traffic is recorded in `CModel.traffic`: for every op run (in execution order,
group bodies included), the bytes it read (each operand in the layout it was read in) and
the bytes it wrote.

What v1 does not model yet (DESIGN.md, "Numerics"): DDR/SPM addresses, tiles and slices,
engine cycles. Values are separate buffers, not placed at their planned addresses.

What the cmodel asks an op comes from the op: which op converts between the families
from OpLib (`reads_other_family`), which ops copy bytes unchanged from their `ByteMove`
trait, which run a region (Group) from their `ExecutesRegion` trait
(`tx8c.interfaces.traits`), and an op's mem_layout from `Tx8beOp.mem_layout()`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation

from tx8c.dialect.attrs import AlignMode, LayoutMode
from tx8c.dialect.base import Tx8beOp
from tx8c.dialect.layout import is_aligned, mem_layout_for
from tx8c.interfaces.traits import ByteMove, ExecutesRegion, ReadsConstContainer
from tx8c.ir_utils import shape_of
from tx8c.sim.reference import Constants, ReferenceExecutor, require_tx8be
from tx8c.target.config import DEFAULT_CONFIG, TX8Config
from tx8c.target.mem_layout import pack, stored_bytes, unpack

__all__ = ["Buffer", "CModel", "OpTraffic", "run_cmodel"]


@dataclass(frozen=True)
class Buffer:
    """The bytes of one value and the mem layout they were written in."""

    data: bytes | memoryview
    layout: LayoutMode


@dataclass(frozen=True)
class OpTraffic:
    """Bytes one op read (its operands, in the layouts it read them in) and wrote."""

    op: str
    read: int
    written: int


def op_is_aligned(op: Tx8beOp) -> bool:
    """The op's kernel family: True when its dev_info mem_layout is Cx/NCx."""
    layout = op.mem_layout()
    return layout is not None and is_aligned(layout)


class CModel(ReferenceExecutor):
    """Runs a module's main function on byte buffers (see the module docstring).

    It shares the reference executor's walk over blocks and groups, its input checks and
    its per-op compute (with the result checks); only the values differ: `Buffer`s
    instead of arrays, converted at every op's boundary.
    """

    def __init__(
        self,
        module: ModuleOp,
        constants: Constants = None,
        config: TX8Config = DEFAULT_CONFIG,
    ):
        super().__init__(module, constants)
        self.config = config
        if self.container is not None and self.container.config != config:
            raise ValueError("the cmodel and its ConstContainer must use one TX8Config")
        self.traffic: list[OpTraffic] = []

    # -- the function ------------------------------------------------------------------
    def run(
        self, inputs: Sequence[np.ndarray] | Mapping[str, np.ndarray]
    ) -> list[np.ndarray]:
        """Pack the inputs compact, run, and read the results compact."""
        block = self.function.body.block
        arrays = self._bind_inputs(block, inputs)
        buffers = [
            self.write(a, arg.type, mem_layout_for(a.shape, aligned=False))
            for a, arg in zip(arrays, block.args, strict=True)
        ]
        results = self.run_block(block, buffers)
        types = self.function.function_type.outputs.data
        return [
            self.read(b, t, mem_layout_for(tuple(t.get_shape()), aligned=False))
            for b, t in zip(results, types, strict=True)
        ]

    # -- one op --------------------------------------------------------------------------
    def run_op(self, op: Operation, values: list[Buffer]) -> list[Buffer]:
        if op.has_trait(ExecutesRegion):  # Group: its body runs on the buffers
            return op.run_region(self, values)
        if op.has_trait(ReadsConstContainer) and self.container is not None:  # LoadConst
            data, layout = op.load_stored(self.container)  # the bytes DDR holds
            self._record(op, [], [len(data)])
            return [Buffer(data, layout)]
        if op.has_trait(ByteMove):  # LoadVar, StoreVar
            return [self._dma(op, values[0])]
        if isinstance(op, Tx8beOp) and op.moves_no_bytes():  # an alias of its operand
            self._record(op, [0], [0])
            return [Buffer(values[0].data, self._result_layouts(op, op_is_aligned(op))[0])]
        op = require_tx8be(op)
        read_aligned, write_aligned = self._families(op)
        read_layouts = [
            mem_layout_for(shape_of(v), aligned=read_aligned) for v in op.operands
        ]
        arrays = [
            self.read(b, v.type, layout)
            for b, v, layout in zip(values, op.operands, read_layouts, strict=True)
        ]
        outputs = super().run_op(op, arrays)  # compute (or load_const), results checked
        out_layouts = self._result_layouts(op, write_aligned)
        results = [
            self.write(a, r.type, layout)
            for a, r, layout in zip(outputs, op.results, out_layouts, strict=True)
        ]
        self._record(
            op,
            [
                stored_bytes(shape_of(v), v.type.get_element_type(), layout, self.config)
                for v, layout in zip(op.operands, read_layouts, strict=True)
            ],
            [len(b.data) for b in results],
        )
        return results

    def _dma(self, op: Tx8beOp, source: Buffer) -> Buffer:
        """A LoadVar/StoreVar: the same bytes when its layout is its operand's (or it
        has none); else a converting DMA (fuse-channel-norm-dma): every element read at
        its address in the operand's layout and written at its address in the op's."""
        layout = op.mem_layout()
        if layout is None or layout == source.layout:
            self._record(op, [len(source.data)], [len(source.data)])
            return source
        t = op.results[0].type
        result = self.write(self.read(source, t, source.layout), t, layout)
        self._record(op, [len(source.data)], [len(result.data)])
        return result

    @staticmethod
    def _families(op: Tx8beOp) -> tuple[bool, bool]:
        """(reads aligned, writes aligned) for an op's kernel."""
        if op.reads_other_family():  # converts (ChannelNorm)
            writes = op.query_op_attr().align_mode == AlignMode.ALIGN
            return not writes, writes
        aligned = op_is_aligned(op)
        return aligned, aligned

    @staticmethod
    def _result_layouts(op: Tx8beOp, aligned: bool) -> list[LayoutMode]:
        """The layout each result is written in (see the module docstring)."""
        layout = op.mem_layout()
        if layout is not None and len(op.results) == 1 and is_aligned(layout) == aligned:
            return [layout]
        return [mem_layout_for(shape_of(r), aligned=aligned) for r in op.results]

    def _record(self, op: Operation, read: list[int], written: list[int]) -> None:
        self.traffic.append(OpTraffic(op.name, sum(read), sum(written)))

    # -- bytes <-> arrays ------------------------------------------------------------------
    def read(self, buffer: Buffer, t: TensorType, layout: LayoutMode) -> np.ndarray:
        """The array a kernel sees when it reads `buffer` as if laid out in `layout`."""
        shape, dtype = tuple(t.get_shape()), t.get_element_type()
        need = stored_bytes(shape, dtype, layout, self.config)
        data = buffer.data
        if len(data) < need:  # memory past the end of the tensor reads as zeros
            data = bytes(data) + bytes(need - len(data))
        return unpack(data, shape, dtype, layout, self.config)

    def write(self, array: np.ndarray, t: TensorType, layout: LayoutMode) -> Buffer:
        """The bytes of `array` (of type `t`) laid out in `layout`."""
        return Buffer(pack(array, layout, self.config, dtype=t.get_element_type()), layout)

    @property
    def bytes_moved(self) -> int:
        """Total bytes read and written by every op run so far."""
        return sum(t.read + t.written for t in self.traffic)


def run_cmodel(
    module: ModuleOp,
    inputs: Sequence[np.ndarray] | Mapping[str, np.ndarray],
    constants: Constants = None,
    config: TX8Config = DEFAULT_CONFIG,
) -> list[np.ndarray]:
    """Run `module`'s main function on `inputs` at byte level and return its results."""
    return CModel(module, constants, config).run(inputs)
