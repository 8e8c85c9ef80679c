"""A batched Gemm whose B slice is reloaded once per batch (hoisted over the row steps)
and double-buffered, while A's row slices rotate every step: the SPM allocation sees
both in one unrolled stretch, so B's second copy never lands on A's buffers (gpt2_base,
group 16: cmodel v2 found a store reading bytes a later load had overwritten)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.unit.group.common import run
from tests.unit.slicing.helpers import single
from tx8c.codegen.lower import lower_module
from tx8c.const_container import module_container
from tx8c.dialect.ops.conv_gemm import GemmOp
from tx8c.pipeline import CompileOptions, ddr_spec, slicing_spec
from tx8c.sim.cmodel_v2 import run_program
from tx8c.sim.reference import run_reference
from tx8c.slicing.evaluate import evaluate
from tx8c.slicing.plan import Candidate


@pytest.mark.parametrize("rows", [4, 8])
def test_a_hoisted_double_buffered_operand_keeps_its_own_bytes(monkeypatch, rows):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((1, 3, 64, 32)).astype(np.float32)
    b = rng.standard_normal((1, 3, 32, 16)).astype(np.float32)
    module = single(GemmOp, [a, b])
    cand = Candidate((1, 1, 1, 1), (1, 3, rows, 1), None, True, True)
    import tx8c.transforms.slice.group_cost as group_cost

    monkeypatch.setattr(group_cost, "search", lambda spec, config, options, name="":
                        evaluate(spec, cand, config))
    run(module, slicing_spec(CompileOptions()) + ddr_spec(CompileOptions()))
    container = module_container(module)
    got, _ = run_program(lower_module(module, container), module, [a, b], container)
    np.testing.assert_allclose(got[0], run_reference(module, [a, b])[0], rtol=1e-5,
                               atol=1e-5)
