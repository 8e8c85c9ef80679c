"""Mid-end graph optimisation passes (seed 004): one pass per file, named after the pass."""
