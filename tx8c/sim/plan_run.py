"""Running a group slice by slice as its plan says, on logical arrays.

Each tile keeps its own copy of every value of the group (it never sees another tile's
results: a halo a tile needs it computes itself); at every step the nodes that run
compute their slice with `compute_slice` from the windows of their operands, which must
have been computed on that tile before (reading anything else is an error naming the
group, tile, step and node). Partial sums of a reduction cut in time accumulate; those of
a reduction cut over tiles are added on the owner tile before the nodes that follow the
reduction run (the NoC reduction). Stores write their windows into the group's outputs,
which must end up covered exactly once.

This checks a plan's windows, coverage, hoisting and reductions against the unsliced
reference; the byte-level cmodel (issue 12) checks addresses and layouts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from tx8c.dialect.ops.backend import GroupOp
from tx8c.errors import Tx8ComputeError
from tx8c.interfaces.sharding import Combine, Window
from tx8c.interfaces.traits import ReadsConstContainer
from tx8c.slicing.group import GroupSpec, ValueRef, group_spec
from tx8c.slicing.plan import Plan
from tx8c.slicing.steps import downstream_of, steps, tiles
from tx8c.target.config import TX8Config
from tx8c.target.mem_layout import resolve_dtype


class _TileValues:
    """One tile's arrays of the group's values, with what of each has been computed."""

    def __init__(self):
        self.arrays: dict[ValueRef, np.ndarray] = {}
        self.done: dict[ValueRef, np.ndarray] = {}

    def write(self, ref: ValueRef, shape, window: Window, piece: np.ndarray,
              combine: Combine | None = None):
        """Write `piece` at `window` of value `ref`; with `combine`, combine it with what
        is there (a partial result)."""
        if ref not in self.arrays:
            self.arrays[ref] = np.zeros(shape, piece.dtype)
            self.done[ref] = np.zeros(shape, bool)
        index = window.slices()
        if combine is not None:
            self.arrays[ref][index] = combine.apply(self.arrays[ref][index], piece)
        else:
            self.arrays[ref][index] = piece
        self.done[ref][index] = True

    def read(self, ref: ValueRef, window: Window) -> np.ndarray | None:
        done = self.done.get(ref)
        if done is None or not done[window.slices()].all():
            return None
        return np.array(self.arrays[ref][window.slices()], order="C")


def run_group(group: GroupOp, plan: Plan, inputs: Sequence[np.ndarray], config: TX8Config,
              constants: Mapping[int, np.ndarray] | None = None) -> list[np.ndarray]:
    """The group's outputs computed slice by slice (see the module docstring)."""
    spec = group_spec(group)
    body = [op for op in group.block.ops if op is not group.yield_op]
    outputs: dict[ValueRef, np.ndarray] = {}
    covered: dict[ValueRef, np.ndarray] = {}
    shares = tiles(spec, plan.candidate, config)
    late = downstream_of(spec, plan.candidate.reduce.node) if plan.candidate.reduce else set()
    partials: dict[tuple, np.ndarray] = {}
    # non-owner tiles first: their partial sums are ready when the owner needs them
    for tile in sorted(shares, key=lambda t: t.owner):
        values = _TileValues()
        for step in steps(spec, plan.candidate, tile, config):
            for node in spec.nodes:
                if not step.runs[node.index]:
                    continue
                loops = step.windows.loops[node.index]
                where = f"group {group.attr('group_id')}, tile {tile.index}, step " \
                        f"{step.index}, {node.label}"
                operands = _operands(spec, node, loops, values, inputs, where)
                op = body[node.index]
                results = _compute(op, node, loops, operands, constants)
                is_reduce = bool(plan.candidate.reduce) and \
                    node.index == plan.candidate.reduce.node
                for r, (window, piece) in enumerate(zip(
                        node.slicer.result_windows(loops), results, strict=True)):
                    if window is None:
                        continue
                    piece = np.asarray(piece)
                    if not is_reduce:  # rounded to the result type, as the reference does
                        piece = piece.astype(_dtype(node.results[r]), copy=False)
                    combine = node.slicer.combine if is_reduce and not step.first_piece \
                        else None
                    values.write(ValueRef(node.index, r), node.results[r].shape, window,
                                 piece, combine)
                if is_reduce and not tile.owner:
                    window = node.slicer.result_windows(loops)[0]
                    partials[(tile.index, window)] = values.read(ValueRef(node.index, 0),
                                                                  window)
                if node.kind == "store":
                    _store(node, loops, results[0], outputs, covered)
                if is_reduce and tile.owner and _completes(step, late):
                    _add_siblings(values, node, loops, tile, partials, shares)
    return _outputs(spec, group, outputs, covered)


def _operands(spec: GroupSpec, node, loops, values: _TileValues, inputs, where):
    arrays = []
    for ref, window in zip(node.inputs, node.slicer.back_window(loops), strict=True):
        if ref.is_input:
            arrays.append(np.array(inputs[ref.index][window.slices()], order="C"))
            continue
        got = values.read(ref, window)
        if got is None:
            raise Tx8ComputeError(f"{where}: reads window {window} of {ref}, which this "
                                  "tile has not computed")
        arrays.append(got)
    return arrays


def _compute(op, node, loops, operands, constants):
    if op.has_trait(ReadsConstContainer):  # LoadConst: its window of the constant
        value = op.load_const(constants or {})
        return [np.array(value[loops.head(node.slicer.num_outputs).slices()], order="C")]
    if node.kind in ("load", "store"):
        return [operands[0]]
    return op.compute_slice(loops, operands)


def _dtype(stored) -> np.dtype:
    return resolve_dtype(stored.dtype).dtype


def _completes(step, late) -> bool:
    """The reduction's partial sum for this output window is complete at this step (the
    nodes that follow it run now, or it has none)."""
    return any(step.runs[n] for n in late) or not late


def _add_siblings(values: _TileValues, node, loops, tile, partials, shares) -> None:
    window = node.slicer.result_windows(loops)[0]
    ref = ValueRef(node.index, 0)
    mine = values.read(ref, window)
    for other in shares:
        if other is tile or other.anchor != tile.anchor or other.owner:
            continue
        part = partials.get((other.index, window))
        if part is not None:
            mine = node.slicer.combine.apply(mine, part)
    values.write(ref, node.results[0].shape, window, mine)


def _store(node, loops, piece, outputs, covered) -> None:
    ref = ValueRef(node.index, 0)
    shape = node.results[0].shape
    window = loops.head(node.slicer.num_outputs)
    if ref not in outputs:
        outputs[ref] = np.zeros(shape, _dtype(node.results[0]))
        covered[ref] = np.zeros(shape, np.int32)
    outputs[ref][window.slices()] = piece
    covered[ref][window.slices()] += 1


def _outputs(spec, group, outputs, covered) -> list[np.ndarray]:
    out = []
    for ref in spec.outputs:
        count = covered.get(ref)
        shape = spec.value(ref).shape
        if count is None and 0 in shape:  # an empty output: nothing to store
            out.append(np.zeros(shape, _dtype(spec.value(ref))))
            continue
        if count is None or (count.size and (count.min() != 1 or count.max() != 1)):
            bad = "never" if count is None else f"{int(count.min())}..{int(count.max())} times"
            raise Tx8ComputeError(
                f"group {group.attr('group_id')}: output {ref} is stored {bad}, not "
                "exactly once per element")
        out.append(outputs[ref])
    return out


def run_by_plans(module, inputs, constants=None, config: TX8Config | None = None
                 ) -> list[np.ndarray]:
    """The reference executor over `module`, with every group that has a plan run slice
    by slice from it (`run_group`) instead of op by op."""
    from tx8c.sim.reference import ReferenceExecutor
    from tx8c.slicing.plan import Plan
    from tx8c.transforms.slice.group_cost import PLAN_ATTR, target_config

    config = config or target_config(module)

    class _ByPlans(ReferenceExecutor):
        def run_op(self, op, values):
            if isinstance(op, GroupOp) and PLAN_ATTR in op.attributes:
                import json

                plan = Plan.from_dict(json.loads(op.attributes[PLAN_ATTR].data))
                return run_group(op, plan, values, config, self.constants)
            return super().run_op(op, values)

    return _ByPlans(module, constants).run(inputs)
