"""`tx8c report`: one self-contained HTML page about a compiled model (summary, graph,
groups, per-group SPM and pipeline views, numerics)."""
