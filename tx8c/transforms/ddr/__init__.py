"""The DDR stage (seed 003): ddr-alloc, ddr-reorder; spm-resident (issue 11: values
between groups kept in SPM instead of DDR, decided before group-cost)."""
