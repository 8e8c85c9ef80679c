"""The four op interfaces of seed 003 (ShapeInference, Sharding, OpLib, Compute).

Each interface is a mixin class that every tx8be op inherits. Passes are written against
these methods, never against concrete op classes. Facts that are simply true or false of
an op kind (commutative, constant-like, memory op, byte move, ...) are xDSL traits, see
`tx8c.interfaces.traits`.
"""

from tx8c.interfaces.compute import Compute
from tx8c.interfaces.oplib import Engine, Matmul, OpAttr, OpLib, Work
from tx8c.interfaces.shape_inference import ShapeInference
from tx8c.interfaces.sharding import (
    Combine,
    LoopDim,
    NotShardable,
    ShardingInterface,
    ShardingSplitParam,
    SliceParam,
    Window,
)

__all__ = [
    "Combine",
    "Compute",
    "Engine",
    "LoopDim",
    "Matmul",
    "NotShardable",
    "OpAttr",
    "OpLib",
    "ShapeInference",
    "ShardingInterface",
    "ShardingSplitParam",
    "SliceParam",
    "Window",
    "Work",
]
