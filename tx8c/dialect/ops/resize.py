"""tx8be ops: resize family (being written)."""

OPS: list[type] = []
