"""tx8be ops: movement family (being written)."""

OPS: list[type] = []
