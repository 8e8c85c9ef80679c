"""group-mapping: the tile region of every group (seed 003, "Sharding Search and SPM
Management", GroupMappingPass / simpleGroupMapping).

The module attributes `tx8c.tile_dx` and `tx8c.tile_dy` (the seed's ModuleAttr::TileDx
and TileDy) give the region of tiles a group runs on; every group of every function,
nested ones included, gets `dev_region = [tile_dx, tile_dy]`.

Where the two numbers come from, first found wins: the pass options `tile-dx` /
`tile-dy` (which also rewrite the module attributes), the module attributes, the
`TX8Config` mesh (`mesh_x` x `mesh_y`, the whole chip: 4 x 4). The pass writes both
module attributes, so later stages and `tx8c-opt` runs read the same region.

Requires: nothing (a module without groups only gets the module attributes).
Guarantees: `tx8c.tile_dx` / `tx8c.tile_dy` are set on the module, and every group's
`dev_region` is `[tile_dx, tile_dy]`, each between 1 and the chip's mesh size; values
are unchanged. A region that does not fit the chip is a `Tx8Error` naming the attribute.

Departs from the seed: the seed reads the attributes the frontend set; here a missing
attribute defaults to the whole chip. Groups of `tx8be` subgraph calls do not exist in
tx8c (functions hold their groups directly).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.ir import Block
from xdsl.passes import ModulePass

from tx8c.dialect.base import to_attr
from tx8c.dialect.ops.backend import GroupOp
from tx8c.errors import Tx8Error
from tx8c.ir_utils import op_list
from tx8c.target.config import DEFAULT_CONFIG

TILE_DX, TILE_DY = "tx8c.tile_dx", "tx8c.tile_dy"


@dataclass(frozen=True)
class GroupMappingPass(ModulePass):
    name = "group-mapping"

    tile_dx: int = 0
    """Tiles along x for every group (0: the module attribute, else the whole mesh)."""
    tile_dy: int = 0
    """Tiles along y for every group (0: the module attribute, else the whole mesh)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        dx = _region_size(op, TILE_DX, self.tile_dx, DEFAULT_CONFIG.mesh_x, "tile-dx")
        dy = _region_size(op, TILE_DY, self.tile_dy, DEFAULT_CONFIG.mesh_y, "tile-dy")
        op.attributes[TILE_DX] = to_attr("int", dx)
        op.attributes[TILE_DY] = to_attr("int", dy)
        region = to_attr("ints", (dx, dy))
        for group in _groups(op.body.block):
            group.attributes["dev_region"] = region


def _groups(block: Block) -> Iterator[GroupOp]:
    """The groups of `block`, of the functions in it and of the groups in those, so
    nested groups too (without walking the ops nested in an op without regions). A
    worklist of blocks, not a generator per block: the function body holds thousands of
    groups, each a block to look into."""
    blocks = [block]
    while blocks:
        for op in op_list(blocks.pop()):
            if op.regions:  # before the class test: most ops have none, and a test of a
                if isinstance(op, GroupOp):  # class that is not the op's is a Python call
                    yield op
                for region in op.regions:
                    for inner in region.blocks:  # not extend(): it asks the length first
                        blocks.append(inner)


def _region_size(module: ModuleOp, attr: str, option: int, mesh: int, option_name: str) -> int:
    """The option when set, else the module attribute, else the whole mesh; checked."""
    if option:
        value, source = option, f"group-mapping{{{option_name}={option}}}"
    elif attr in module.attributes:
        found = module.attributes[attr]
        if not isinstance(found, IntegerAttr):
            raise Tx8Error(
                f"module attribute {attr} must be an integer (e.g. {attr} = 4 : i64)"
            )
        value, source = found.value.data, f"module attribute {attr} = {found.value.data}"
    else:
        return mesh
    if not 1 <= value <= mesh:
        raise Tx8Error(
            f"{source}: a group's tile region must be 1 to {mesh} tiles along this axis "
            f"(the chip's mesh is {DEFAULT_CONFIG.mesh_x} x {DEFAULT_CONFIG.mesh_y})"
        )
    return value
