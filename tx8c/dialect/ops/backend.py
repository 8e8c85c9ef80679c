"""tx8be ops: backend family (being written)."""

OPS: list[type] = []
