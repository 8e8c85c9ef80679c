"""OpLib interface (seed 003, OpLibInterface and struct OpAttr).

`query_op_attr()` tells the backend what an op needs: its alignment (seed 000), whether it
needs NHWC/HWOI data (seed 002), which engine runs it, and how it is loaded and stored.
`imm_size`, `clock_cycles` and `gen_op_code` are declared here and implemented with the
slicing and codegen work; until then calling them raises `NotImplementedError`.
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


class OpLib:
    def query_op_attr(self) -> OpAttr:
        raise NotImplementedError(f"{type(self).__name__} does not implement query_op_attr")

    def reads_other_family(self) -> bool:
        """True when the op reads its operands in the other alignment family than the one
        its OpAttr gives for its result (ChannelNorm converts between the two); every other
        op reads and writes in one family (seed 000)."""
        return False

    def is_relabel(self) -> bool:
        """Does the op move bytes, or is it a relabel of its operand's bytes?

        True for a relabel (tx8be.Relabel, made by the layout stage): its result is its
        operand's bytes, unchanged, read under another shape, because in the family the
        op runs in the two layouts put every element at the same byte. It runs no kernel
        and moves nothing: the backend gives the result its operand's buffer, the cmodel
        passes the bytes through. False for every op that computes or moves bytes."""
        return False

    def follows_operand(self) -> int | None:
        """The operand whose alignment family this op shares when it may run in either
        (seed 000: a broadcast op follows its complete operand), so that operand is never
        converted for it; None when the op's family is a free choice or fixed by its
        OpAttr."""
        return None

    def imm_size(self) -> int:
        """Scratch bytes the op needs in SPM."""
        raise NotImplementedError(f"{type(self).__name__}.imm_size is implemented with slicing")

    def clock_cycles(self, slice_shape: list[int]) -> int:
        """Cycles the op takes on its engine for one slice."""
        raise NotImplementedError(
            f"{type(self).__name__}.clock_cycles is implemented with slicing"
        )

    def gen_op_code(self, param: object) -> str:
        """The C call that runs the op."""
        raise NotImplementedError(
            f"{type(self).__name__}.gen_op_code is implemented with codegen"
        )
