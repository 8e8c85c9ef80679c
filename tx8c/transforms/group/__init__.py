"""Grouping passes (seed 003, "Sharding Search and SPM Management" and opt_barrier):
group-pattern, group-optimization, group-ldst, group-mapping, group-dag. What they build
on lives in `tx8c.analysis` (group_patterns, acyclic_groups, group_dag, group_stats)."""
