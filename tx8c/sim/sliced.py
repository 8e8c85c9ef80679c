"""Running one op slice by slice (the Sharding interface's contract, executed).

`run_sliced(op, operands, slices)` computes `op` on each loop-space window of `slices`
from the operand windows its `back_window` names (cut from the full operands), and
assembles the result windows: a window computed once is placed, a window that several
slices compute (they cover different pieces of a reduction dim) is combined with the
reduction's `Combine`. It checks on the way what a later stage would trip over: an
operand window outside its operand, a result window of the wrong shape, an output element
no slice computed.

The slicing search and the cmodel use the same contract on byte buffers; this is its
logical form, used by the property tests and by the slice-by-slice reference run of a
plan.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import product

import numpy as np

from tx8c.dialect.base import Tx8beOp
from tx8c.errors import Tx8ComputeError
from tx8c.interfaces.sharding import Combine, Window, piece_bounds
from tx8c.sim.reference import evaluate


def partition(op: Tx8beOp, cuts: Sequence[Sequence[int]]) -> list[Window]:
    """The loop windows of `op` cut at `cuts[d]` (sorted inner cut positions per loop dim)."""
    per_dim = []
    for size, points in zip(op.loop_shape(), cuts, strict=True):
        edges = [0, *sorted(set(p for p in points if 0 < p < size)), size]
        per_dim.append(list(zip(edges, edges[1:], strict=False)) or [(0, size)])
    return [Window.of(pairs) for pairs in product(*per_dim)]


def even_partition(op: Tx8beOp, pieces: Sequence[int]) -> list[Window]:
    """The loop windows of `op` cut into `pieces[d]` near-equal parts per loop dim
    (respecting each dim's granule; dims that cannot be cut stay whole)."""
    per_dim = [
        piece_bounds(dim.size, n if dim.cut else 1, dim.granule)
        for dim, n in zip(op.loop_space(), pieces, strict=True)
    ]
    return [Window.of(pairs) for pairs in product(*per_dim)]


def reduction_combine(op: Tx8beOp) -> Combine | None:
    """The Combine of the op's reduction dims (one per op), None when it has none."""
    combines = {d.reduce for d in op.loop_space() if d.is_reduction}
    if len(combines) > 1:
        raise Tx8ComputeError(f"'{op.name}' combines its reduction dims differently")
    return combines.pop() if combines else None


def run_sliced(
    op: Tx8beOp, operands: Sequence[np.ndarray], slices: Iterable[Window]
) -> list[np.ndarray]:
    """`op`'s results assembled from the slices (see the module docstring), cast to the
    result types like the reference executor's."""
    shapes = [tuple(r.type.get_shape()) for r in op.results]
    parts: list[np.ndarray | None] = [None] * len(shapes)
    seen = [np.zeros(s, np.int32) for s in shapes]
    combine = reduction_combine(op)
    outputs = op.num_output_loops()
    for loops in slices:
        if loops.head(outputs).is_empty():  # computes no element
            continue
        windows = op.back_window(loops)
        pieces = op.compute_slice(loops, _cut_operands(op, operands, windows))
        for r, (wanted, piece) in enumerate(zip(op.result_windows(loops), pieces, strict=True)):
            if wanted is None:
                continue
            piece = np.asarray(piece)
            if piece.shape != wanted.shape:
                raise Tx8ComputeError(
                    f"'{op.name}' slice {loops}: result #{r} window {wanted} is "
                    f"{list(wanted.shape)} but compute_slice gave {list(piece.shape)}"
                )
            if parts[r] is None:
                parts[r] = np.zeros(shapes[r], piece.dtype)
            _place(parts[r], seen[r], wanted, piece, combine)
    for r, count in enumerate(seen):
        if count.size and count.min() == 0:
            missing = np.argwhere(count == 0)[0].tolist()
            raise Tx8ComputeError(f"'{op.name}': no slice computed result #{r} at {missing}")
    return [_as_result_type(op, r, p) for r, p in enumerate(parts)]


def _cut_operands(op, operands, windows) -> list[np.ndarray]:
    cut = []
    for i, (array, window) in enumerate(zip(operands, windows, strict=True)):
        whole = Window.whole(array.shape)
        if not whole.contains(window) or any(s < 0 for s in window.shape):
            raise Tx8ComputeError(
                f"'{op.name}': operand #{i} window {window} is outside the operand "
                f"{list(array.shape)}"
            )
        cut.append(np.array(array[window.slices()], order="C"))  # keeps rank 0
    return cut


def _place(out, seen, window: Window, piece, combine: Combine | None) -> None:
    index = window.slices()
    fresh = seen[index] == 0
    if fresh.all():
        out[index] = piece
    elif combine is None:
        raise Tx8ComputeError(f"two slices compute result window {window} of an op with "
                              "no reduction")
    else:
        out[index] = np.where(fresh, piece, combine.apply(out[index], piece))
    seen[index] += 1


def _as_result_type(op, r: int, part) -> np.ndarray:
    shape = tuple(op.results[r].type.get_shape())
    if part is None:  # no slice produced anything: an empty result
        part = np.zeros(shape)
    from tx8c.dialect.types import to_numpy_dtype

    return part.astype(to_numpy_dtype(op.results[r].type.get_element_type()), copy=False)


def run_whole(op: Tx8beOp, operands: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The reference: the op computed unsliced."""
    return evaluate(op, operands)
