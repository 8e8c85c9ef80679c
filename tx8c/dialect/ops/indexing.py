"""tx8be ops: indexing family (being written)."""

OPS: list[type] = []
