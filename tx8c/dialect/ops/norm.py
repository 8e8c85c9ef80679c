"""tx8be ops: norm family (being written)."""

OPS: list[type] = []
