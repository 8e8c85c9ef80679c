"""tx8be ops: reduce_pool family (being written)."""

OPS: list[type] = []
