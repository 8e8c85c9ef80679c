"""Sharding interface (seed 003, ShardingInterface).

Sharding splits a tensor over tiles (space); split cuts each tile's share into pieces
processed one after another (time). The three methods derive, from the result's
sharding/split, what each operand needs. They are declared here with their parameter
types and are implemented with the slicing work (group-cost, data-split); until then
calling them raises `NotImplementedError`.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ShardingSplitParam:
    """Per-dimension factors: how many tiles share a dim, how many time steps split it."""

    out_sharding: list[int] = field(default_factory=list)
    out_split: list[int] = field(default_factory=list)


@dataclass
class SliceParam:
    """The shape one tile processes in one step, per operand/result."""

    shape: list[int] = field(default_factory=list)


@dataclass
class WindowParam:
    """A window [start, end) per dimension; back_window maps output windows to inputs."""

    start: list[int] = field(default_factory=list)
    end: list[int] = field(default_factory=list)


class ShardingInterface:
    def tile_sharding_split(self, param: ShardingSplitParam) -> list[ShardingSplitParam]:
        """Each operand's sharding/split, given the result's."""
        raise NotImplementedError(
            f"{type(self).__name__}.tile_sharding_split is implemented with slicing"
        )

    def temporal_slice_shape(self, param: SliceParam) -> list[SliceParam]:
        """Each operand's per-step slice shape, given the result's."""
        raise NotImplementedError(
            f"{type(self).__name__}.temporal_slice_shape is implemented with slicing"
        )

    def back_window(self, param: WindowParam) -> list[WindowParam]:
        """Each operand's window (with halo, for conv/pool), given the result's."""
        raise NotImplementedError(
            f"{type(self).__name__}.back_window is implemented with slicing"
        )
