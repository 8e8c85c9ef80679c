"""The slicing contract of every op (issue 8, part 2): slice by slice equals whole.

For each op, random cases (shapes, dtypes, attributes) and random partitions of its loop
space (cut points on each dim, on multiples of its granule, never through a dim that
cannot be cut): computing every slice from the operand windows `back_window` names, and
combining partials over reduction dims, gives the op's result.

Equality is exact (bit for bit) unless a reduction dim is cut: partial sums are then
added in another order than the whole reduction, so they agree to rounding.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import single_op_module
from tests.unit.sharding.cases import CASES, NOT_SLICED
from tx8c.dialect.ops import families
from tx8c.sim.sliced import partition, run_sliced, run_whole

ALL_OPS = {op.name.removeprefix("tx8be."): op for m in families() for op in m.OPS}


def build(case):
    cls, inputs, attrs = case
    module = single_op_module(cls, inputs, **attrs)
    op = next(o for o in module.walk() if isinstance(o, cls))
    return op, inputs


def random_cuts(rng, op) -> list[list[int]]:
    cuts = []
    for dim in op.loop_space():
        if not dim.cut or dim.size <= 1:
            cuts.append([])
            continue
        units = -(-dim.size // dim.granule)
        count = int(rng.integers(0, min(units, 4)))
        points = rng.choice(np.arange(1, units), size=min(count, units - 1), replace=False)
        cuts.append(sorted(int(p) * dim.granule for p in points))
    return cuts


def assert_equivalent(op, inputs, cuts) -> None:
    whole = run_whole(op, inputs)
    sliced = run_sliced(op, inputs, partition(op, cuts))
    reduced = any(
        d.is_reduction and c for d, c in zip(op.loop_space(), cuts, strict=True)
    )
    for w, s in zip(whole, sliced, strict=True):
        assert w.dtype == s.dtype and w.shape == s.shape
        if reduced and w.dtype.kind == "f" or w.dtype.kind == "V":
            np.testing.assert_allclose(
                s.astype(np.float64), w.astype(np.float64), rtol=2e-2 if w.itemsize == 2
                else 1e-5, atol=1e-5 if w.itemsize > 2 else 2e-2,
            )
        else:
            np.testing.assert_array_equal(s, w)


def test_every_op_has_a_case_generator():
    missing = sorted(set(ALL_OPS) - set(CASES) - NOT_SLICED)
    assert not missing, f"ops without slicing cases: {missing}"


@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=50, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1))
def test_slices_equal_whole(name, seed):
    rng = np.random.default_rng(seed)
    op, inputs = build(CASES[name](rng))
    assert_equivalent(op, inputs, random_cuts(rng, op))
