"""Programs built by hand for the C backend tests: one group per op slice.

Each case is one op (from the slicing cases, `tests/unit/sharding/cases.py`) and one
slice of a random partition of its loop space. Its group, on tile 0: a DMA per operand
bringing the operand's window from DDR (the whole operand is a program input) into SPM,
the kernel, a DMA per result storing its window into DDR (the whole result is a program
output; only the window is written). DDR tensors and SPM buffers get random layouts of
their rank (compact or channel-aligned), so the runtime's layouts and DMA are exercised
with the kernels.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tests.unit.sharding.test_slice_equivalence import build, random_cuts
from tx8c.codegen.program import (
    DdrTensor,
    Dma,
    GroupProgram,
    Kernel,
    Operand,
    OpInfo,
    Program,
    SpmRef,
    TileProgram,
)
from tx8c.dialect.types import short_name
from tx8c.interfaces.sharding import Window
from tx8c.sim.sliced import partition
from tx8c.target.config import DEFAULT_CONFIG
from tx8c.target.mem_layout import stored_bytes

ALIGN = 256


@dataclass
class SliceCase:
    """One op slice: the op, its whole operands, the slice and its result windows."""

    name: str
    op: object
    inputs: list[np.ndarray]
    loops: Window
    expected: list[np.ndarray | None]
    windows: list[Window | None]
    inputs_at: list[int]  # program input index of each operand
    outputs_at: list[int | None]  # program output index of each result


def _dtype(value) -> str:
    return short_name(value.type.get_element_type())


def _layout(rng, shape) -> str:
    batched = len(shape) >= 2 and rng.random() < 0.5
    aligned = rng.random() < 0.5
    return ("NCx" if aligned else "NTensor") if batched else ("Cx" if aligned else "Tensor")


def random_slice_case(name: str, make, rng) -> SliceCase:
    slices = []
    while not slices:  # a case with an empty result has no slice to compute
        op, inputs = build(make(rng))
        slices = [w for w in partition(op, random_cuts(rng, op))
                  if not w.head(op.num_output_loops()).is_empty()]
    loops = slices[int(rng.integers(len(slices)))]
    windows = op.back_window(loops)
    pieces = op.compute_slice(loops, [np.array(a[w.slices()], order="C")
                                      for a, w in zip(inputs, windows, strict=True)])
    results = op.result_windows(loops)
    expected = []
    for r, (piece, window) in enumerate(zip(pieces, results, strict=True)):
        if window is None:
            expected.append(None)
            continue
        from tx8c.dialect.types import to_numpy_dtype

        dtype = to_numpy_dtype(op.results[r].type.get_element_type())
        expected.append(np.asarray(piece).astype(dtype))
    return SliceCase(name, op, inputs, loops, expected, list(results), [], [])


class ProgramBuilder:
    """Collects slice cases into one Program (one group each)."""

    def __init__(self, rng):
        self.rng = rng
        self.tensors: list[DdrTensor] = []
        self.inputs: list[str] = []
        self.outputs: list[str] = []
        self.arrays: list[np.ndarray] = []
        self.ops: list = []
        self.infos: list[OpInfo] = []
        self.groups: list[GroupProgram] = []
        self.ddr = 0

    def _ddr(self, name, shape, dtype, kind) -> DdrTensor:
        layout = _layout(self.rng, shape)
        size = stored_bytes(shape, dtype, layout, DEFAULT_CONFIG)
        tensor = DdrTensor(name, self.ddr, tuple(shape), dtype, layout, size, kind)
        self.ddr += -(-max(size, 1) // ALIGN) * ALIGN
        self.tensors.append(tensor)
        return tensor

    def add(self, case: SliceCase) -> None:
        g = len(self.groups)
        op = case.op
        spm = 0
        code = []

        def buffer(shape, dtype):
            nonlocal spm
            ref = SpmRef(spm, tuple(shape), dtype, _layout(self.rng, shape))
            spm += -(-max(stored_bytes(shape, dtype, ref.layout, DEFAULT_CONFIG), 1)
                     // ALIGN) * ALIGN
            return ref

        operands = []
        for i, (value, array, window) in enumerate(
                zip(op.operands, case.inputs, op.back_window(case.loops), strict=True)):
            dtype = _dtype(value)
            tensor = self._ddr(f"g{g}_in{i}", array.shape, dtype, "input")
            case.inputs_at.append(len(self.inputs))
            self.inputs.append(tensor.name)
            self.arrays.append(array)
            ref = buffer(window.shape, dtype)
            code.append(Dma("ld", tensor.name, window, ref))
            operands.append(Operand(ref, window))
        results, stores = [], []
        for r, (value, window) in enumerate(zip(op.results, case.windows, strict=True)):
            if window is None:
                results.append(None)
                case.outputs_at.append(None)
                continue
            dtype = _dtype(value)
            tensor = self._ddr(f"g{g}_out{r}", tuple(value.type.get_shape()), dtype, "output")
            case.outputs_at.append(len(self.outputs))
            self.outputs.append(tensor.name)
            ref = buffer(window.shape, dtype)
            results.append(Operand(ref, window))
            stores.append(Dma("st", tensor.name, window, ref))
        code.append(Kernel("ct", len(self.ops), case.loops, tuple(operands), tuple(results)))
        code.extend(stores)
        self.ops.append(op)
        self.infos.append(OpInfo(op.name, str(op), g, 0))
        self.groups.append(GroupProgram(g, True, (TileProgram(0, tuple(code)),)))

    def program(self) -> Program:
        return Program(DEFAULT_CONFIG.as_dict(), max(self.ddr, 1), tuple(self.tensors),
                       tuple(self.inputs), tuple(self.outputs), tuple(self.infos),
                       tuple(self.groups))
