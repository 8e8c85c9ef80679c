"""ONNX converters, one small function per op type, grouped by family.

Importing this package registers every converter in `registry.CONVERTERS`.
"""

from tx8c.frontend.onnx.converters import (  # noqa: F401
    activations,
    attention,
    conv,
    einsum,
    elementwise,
    indexing,
    math,
    nn,
    norm,
    pool,
    quant,
    recurrent,
    shape,
    tensor,
)
