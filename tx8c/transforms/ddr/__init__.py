"""The DDR stage (seed 003): ddr-alloc, ddr-reorder."""
