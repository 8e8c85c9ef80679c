"""group-ldst with relabels, group-dag's barriers (each kept one is needed), group-mapping's
errors, the boundary statistics, and the pass errors."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import IntegerAttr, StringAttr, i1, i64

from examples.make_models import MODELS
from tests.helpers import main_block, parse_verified
from tests.unit.group.common import grouping, laid_out
from tx8c.analysis.group_dag import group_graph, layers, missing_barriers
from tx8c.analysis.group_stats import boundary_bytes, group_report, singles_boundary_bytes
from tx8c.dialect import make_context
from tx8c.dialect.ops.backend import GroupOp, LoadVarOp, StoreVarOp
from tx8c.dialect.ops.movement import ReshapeOp
from tx8c.errors import Tx8Error
from tx8c.ir import parse_module
from tx8c.transforms.group.group_dag import GroupDagPass
from tx8c.transforms.group.group_ldst import GroupLdStPass
from tx8c.transforms.group.group_mapping import GroupMappingPass

# --------------------------------------------------------------------------------------
# group-ldst and relabels (issue 15's ops that move no bytes)
# --------------------------------------------------------------------------------------

RELABELS = """
func.func @main(%x: tensor<2x6xf32>) -> (tensor<3x4xf32>, tensor<12xf32>) {
  %only = tx8be.Group(%x) : (tensor<2x6xf32>) -> tensor<3x4xf32> {
  ^bb0(%a: tensor<2x6xf32>):
    %r = tx8be.Reshape %a {shape = array<i64: 3, 4>} : (tensor<2x6xf32>) -> tensor<3x4xf32>
    tx8be.Yield %r : tensor<3x4xf32>
  }
  %mixed = tx8be.Group(%x) : (tensor<2x6xf32>) -> tensor<12xf32> {
  ^bb0(%a: tensor<2x6xf32>):
    %r = tx8be.Reshape %a {shape = array<i64: 12>} : (tensor<2x6xf32>) -> tensor<12xf32>
    %n = tx8be.Neg %r : (tensor<12xf32>) -> tensor<12xf32>
    tx8be.Yield %n : tensor<12xf32>
  }
  func.return %only, %mixed : tensor<3x4xf32>, tensor<12xf32>
}
"""


def test_relabels_run_where_their_operand_lives(monkeypatch) -> None:
    """Assumed for issue 15: a relabel answers moves_no_bytes() = True. A group of
    relabels only loads and stores nothing (group_tag 2); a relabel feeding an op that
    reads SPM gets its operand loaded before it, and no load of its own result."""
    monkeypatch.setattr(ReshapeOp, "moves_no_bytes", lambda self: True)
    module = parse_verified(RELABELS)
    GroupLdStPass().apply(make_context(), module)
    only, mixed = [op for op in main_block(module).ops if isinstance(op, GroupOp)]
    assert only.attr("group_tag") == 2
    assert not any(isinstance(op, LoadVarOp | StoreVarOp) for op in only.block.ops)
    assert mixed.attr("group_tag") == 0
    load, reshape, neg, store, _ = mixed.block.ops
    assert isinstance(load, LoadVarOp) and reshape.operands[0] is load.results[0]
    assert neg.operands[0] is reshape.results[0] and isinstance(store, StoreVarOp)


def test_without_relabels_a_reshape_is_loaded_and_stored() -> None:
    module = parse_verified(RELABELS)
    GroupLdStPass().apply(make_context(), module)
    only = next(op for op in main_block(module).ops if isinstance(op, GroupOp))
    assert only.attr("group_tag") == 0
    assert [op.name for op in only.block.ops] == [
        "tx8be.LoadVar", "tx8be.Reshape", "tx8be.StoreVar", "tx8be.Yield"]


# --------------------------------------------------------------------------------------
# group-dag
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_barrier_group_dag_keeps_is_needed(name: str) -> None:
    """Dropping any kept barrier but the program's last lets a group read a result
    before every tile has written it (missing_barriers sees it)."""
    module = grouping(parse_module(laid_out(name)))
    block = main_block(module)
    groups, readers = group_graph(block)
    layer = layers(readers)
    assert layer == sorted(layer, reverse=True)  # layer order, each layer contiguous
    kept = [g for g in groups if g.attr("need_barrier")]
    assert len(kept) == len(set(layer))
    assert missing_barriers(block) == []
    for group in kept[:-1]:
        group.attributes["need_barrier"] = IntegerAttr(0, i1)
        assert missing_barriers(block), group.attr("group_id")
        group.attributes["need_barrier"] = IntegerAttr(1, i1)


def test_group_dag_needs_every_op_in_a_group() -> None:
    module = parse_verified("""
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %n = tx8be.Neg %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %n : tensor<4xf32>
}""")
    with pytest.raises(Tx8Error, match="'tx8be.Neg' is not in a group.*group-optimization"):
        GroupDagPass().apply(make_context(), module)


# --------------------------------------------------------------------------------------
# group-mapping
# --------------------------------------------------------------------------------------


def test_group_mapping_checks_the_module_attributes() -> None:
    module = parse_verified("func.func @main() {\n  func.return\n}")
    module.attributes["tx8c.tile_dx"] = StringAttr("four")
    with pytest.raises(Tx8Error, match="tx8c.tile_dx must be an integer"):
        GroupMappingPass().apply(make_context(), module)
    module.attributes["tx8c.tile_dx"] = IntegerAttr(0, i64)
    with pytest.raises(Tx8Error, match="tx8c.tile_dx = 0: a group's tile region must be 1 to 4"):
        GroupMappingPass().apply(make_context(), module)
    GroupMappingPass(tile_dx=1, tile_dy=2).apply(make_context(), module)
    assert module.attributes["tx8c.tile_dx"] == IntegerAttr(1, i64)


# --------------------------------------------------------------------------------------
# statistics
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(MODELS))
def test_boundary_bytes_against_the_singles_grouping(name: str) -> None:
    singles = grouping(parse_module(laid_out(name)), "none")
    patterns = grouping(parse_module(laid_out(name)), "default")
    # opt-group=none is the singles grouping itself; the count through the boundaries
    # agrees with it, and both ways give the same figure on any grouping of one program
    assert boundary_bytes(singles) == singles_boundary_bytes(singles)
    assert singles_boundary_bytes(patterns) == singles_boundary_bytes(singles)
    assert boundary_bytes(patterns) < boundary_bytes(singles)
    report = group_report(patterns)
    assert report["count"] == len(report["groups"])
    assert report["boundary_bytes"] == boundary_bytes(patterns)
    assert report["singles_boundary_bytes"] == boundary_bytes(singles)
    assert sum(len(g["ops"]) for g in report["groups"]) == report["ops"]
    assert report["barriers"] == sum(g["barrier"] for g in report["groups"])
    assert all(g["boundary_bytes"] > 0 for g in report["groups"])
