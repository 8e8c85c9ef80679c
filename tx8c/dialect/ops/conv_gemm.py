"""tx8be ops: conv_gemm family (being written)."""

OPS: list[type] = []
