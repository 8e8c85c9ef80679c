"""Compute interface (seed 003, ComputeInterface).

`compute(*inputs)` is the reference semantics of an op, written with numpy. It is the only
place an op's math is written: the reference executor, constant folding and the cmodel all
call it. Inputs arrive with the numpy dtypes of the operand element types; the returned
arrays are cast to the result element types by `evaluate`.
"""

from __future__ import annotations

import numpy as np

from tx8c.errors import Tx8ComputeError


class Compute:
    def compute(self, *inputs: np.ndarray) -> list[np.ndarray]:
        raise Tx8ComputeError(
            f"op '{self.name}' has no compute: it cannot be run by the reference "
            "executor. Lower it to ops that have one, or implement compute() in its class."
        )
