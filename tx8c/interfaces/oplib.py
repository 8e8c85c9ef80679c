"""OpLib interface (seed 003, OpLibInterface and struct OpAttr).

`query_op_attr()` tells the backend what an op needs: its alignment (seed 000), whether it
needs NHWC/HWOI data (seed 002), which engine runs it, and how it is loaded and stored.

For the slicing search (seed 003: getImmSpSize, getOpClockCycle) an op also answers, for
one slice of its loop space (`tx8c.interfaces.sharding`):

- `imm_bytes(slice, config)`: the scratch SPM its kernel needs besides its operands and
  results, in stored bytes (`tx8c.target.mem_layout.byte_size` in the layout the kernel
  works in);
- `work(slice)`: what the kernel does, as counts (`Work`: matrix products for the NE,
  element passes for the CT, bytes for the LSU). No hardware number appears in an op:
  `tx8c.target.cost` alone turns work into cycles with a `TX8Config`.

The seed's `genOpCode` (the C call of the op) belongs to code generation and is added
with it.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.utils.str_enum import StrEnum

from tx8c.dialect.attrs import AlignMode

ALL_OPERANDS = 0xFFFFFFFFFFFFFFFF


class Engine(StrEnum):
    """The tile engine that runs an op (seed 003: CT, NE, LSU)."""

    CT = "CT"
    NE = "NE"
    LSU = "LSU"
    NONE = "NONE"  # no engine runs it: compile time (constants) or a relabel (an alias)


@dataclass(frozen=True)
class OpAttr:
    """The seed's OpAttr, field for field.

    need_load / need_store are bit masks over operand / result indices: bit i set means
    operand i needs a LoadVar (result i a StoreVar).

    has_kernel (not a field of the seed's struct) says whether the TX8 op library has a
    kernel for this op; `legalize` rewrites the ops that have none into ops that do.
    """

    align_mode: AlignMode = AlignMode.UNKNOWN
    default_layout: str = "Tensor"
    need_preset_to_npu: bool = False
    engine: Engine = Engine.CT
    mem_inplace: bool = False
    need_load: int = ALL_OPERANDS
    need_store: int = ALL_OPERANDS
    parallel: bool = True
    align_cx: bool = True
    has_kernel: bool = True

    def loads(self, operand: int) -> bool:
        """Operand `operand` is read from SPM: from outside a group it needs a LoadVar."""
        return bool(self.need_load >> operand & 1)

    def stores(self, result: int) -> bool:
        """Result `result` is written to SPM: to leave a group it needs a StoreVar."""
        return bool(self.need_store >> result & 1)


@dataclass(frozen=True)
class Matmul:
    """`batch` independent products of an (m x k) and a (k x n) matrix on the NE."""

    batch: int
    m: int
    k: int
    n: int

    @property
    def macs(self) -> int:
        return self.batch * self.m * self.k * self.n


@dataclass(frozen=True)
class Transfer:
    """A tensor of `shape` and element type `dtype` (IR name) moved in memory layout
    `layout` (a `LayoutMode` name): the cost model sizes it in stored bytes. `ddr`: one
    side of the transfer is DDR (RDMA/WDMA, sharing the chip's DDR bandwidth); else it
    moves inside SPM (TDMA)."""

    shape: tuple[int, ...]
    dtype: str
    layout: str
    ddr: bool = True


@dataclass(frozen=True)
class Work:
    """What one slice of an op does, as plain counts (no hardware numbers).

    - `engine`: the engine that runs it; `dtype`: the element type it computes in (IR
      name; the NE's rate depends on it, the CT's through its width in bytes);
    - `matmuls`: NE matrix products (the cost model pads them to its MAC blocks);
    - `ct_arith`: CT element passes of simple arithmetic (add, mul, compare, select, copy,
      max/min, reduction steps), counted in elements;
    - `ct_special`: CT element passes of transcendental functions, division and square
      roots, counted in elements;
    - `transfers`: tensors an LSU transfer (DMA, TDMA, gather) moves;
    - `flops`: the useful arithmetic operations (two per multiply-add, one per other
      element operation), unpadded: what the roofline counts.
    """

    engine: Engine
    dtype: str
    matmuls: tuple[Matmul, ...] = ()
    ct_arith: int = 0
    ct_special: int = 0
    transfers: tuple[Transfer, ...] = ()
    flops: int = 0

    @property
    def macs(self) -> int:
        return sum(m.macs for m in self.matmuls)


def volume(shape) -> int:
    """Elements in a tensor of `shape`."""
    count = 1
    for d in shape:
        count *= int(d)
    return count


def ct_work(dtype: str, shape, arith: int = 0, special: int = 0,
            flops: int | None = None) -> Work:
    """CT work of `arith` simple and `special` transcendental element passes over a slice
    of `shape` in `dtype`; flops default to one per element per pass."""
    n = volume(shape)
    return Work(
        Engine.CT, dtype, ct_arith=arith * n, ct_special=special * n,
        flops=n * (arith + special) if flops is None else flops,
    )


def family_bytes(shape, dtype: str, aligned: bool, config) -> int:
    """Stored bytes of a tensor of `shape` and element type `dtype` (IR name) in the
    channel-aligned (Cx/NCx) or compact (Tensor/NTensor) layout of its shape."""
    from tx8c.dialect.layout import mem_layout_for
    from tx8c.target.mem_layout import byte_size

    shape = tuple(shape)
    return byte_size(shape, dtype, mem_layout_for(shape, aligned), config)


LOW_PRECISION = frozenset({"f16", "bf16"})
"""Element types the CT computes in fp32 after converting (seed 003: BatchNorm on fp16)."""


class OpLib:
    def query_op_attr(self) -> OpAttr:
        """The op's OpAttr; default: the seed's default struct."""
        return OpAttr()

    def reads_other_family(self) -> bool:
        """True when the op reads its operands in the other alignment family than the one
        its OpAttr gives for its result (ChannelNorm converts between the two); every other
        op reads and writes in one family (seed 000)."""
        return False

    def follows_operand(self) -> int | None:
        """The operand whose alignment family this op shares when it may run in either
        (seed 000: a broadcast op follows its complete operand), so that operand is never
        converted for it; None when the op's family is a free choice or fixed by its
        OpAttr."""
        return None

    def moves_no_bytes(self) -> bool:
        """True for a relabel: an op whose result is its operand's bytes as they are,
        read under another shape (a Reshape, or a Transpose that leaves the bytes of its
        layout in place). It costs nothing and runs wherever its operand lives, SPM or
        DDR, so group-ldst neither loads its operand nor stores its result for it; a
        group of relabels alone needs no load or store and runs in DDR (group_tag 2).
        Default: False (every op moves or computes its result). A method, not a trait:
        whether a Reshape moves no bytes depends on its shapes and layout."""
        return False

    def ddr_transfer(self) -> str | None:
        """"load" for an op that brings a tensor from DDR into SPM (LoadVar, LoadConst),
        "store" for one that writes SPM to DDR (StoreVar), None for every other op."""
        return None

    def imm_bytes(self, slice_shape: tuple[int, ...], config) -> int:
        """Scratch SPM bytes the kernel needs for a slice of `slice_shape` (loop dims):
        the op's `Slicer` knows (tx8c.interfaces.sharding)."""
        return self.slicer().imm_bytes(tuple(slice_shape), config)

    def work(self, slice_shape: tuple[int, ...]) -> Work:
        """The work of one slice of `slice_shape` (loop dims) on the op's engine: the
        op's `Slicer` knows (tx8c.interfaces.sharding)."""
        return self.slicer().work(tuple(slice_shape))
