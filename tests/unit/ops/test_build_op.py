"""The dialect's direct construction paths build what xDSL's generic ones build.

`build_op` (the grouping stage's groups, Yields, LoadVars and StoreVars) against
`create`, `i64_attr` (group numbers) against `IntegerAttr(value, i64)`, and
`ir_utils.set_operand` against `op.operands[i] = v`: field by field, uses included.
"""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import IntegerAttr, f32, i64
from xdsl.ir import Block, Operation, Region
from xdsl.utils.exceptions import VerifyException

from tx8c.dialect.attrs import DevAttr, LayoutMode
from tx8c.dialect.base import build_block, build_op, build_region, i64_attr, to_attr
from tx8c.dialect.ops.backend import GroupOp, LoadVarOp, StoreVarOp, YieldOp
from tx8c.dialect.ops.elementwise import AddOp, ReluOp
from tx8c.dialect.types import tensor
from tx8c.ir import print_module
from tx8c.ir_utils import set_operand

T = tensor([1, 8, 4, 4], f32)


def _uses(value) -> list[tuple[Operation, int]]:
    return [(use.operation, use.index) for use in value.uses]


def _same_op(built: Operation, created: Operation, operands) -> None:
    """`built` and `created` (the same class, on the same `operands`) agree on every
    field of xDSL's Operation; each is one use of its operands, at the right index."""
    assert type(built) is type(created)
    assert list(built.operands) == list(created.operands) == list(operands)
    for index, value in enumerate(operands):
        assert (built, index) in _uses(value) and (created, index) in _uses(value)
    assert [(u.operation, u.index) for u in built._operand_uses] == [
        (built, i) for i in range(len(operands))]
    assert built.result_types == created.result_types
    assert [(r.op, r.index, r.first_use, r.name_hint) for r in built.results] == [
        (built, i, None, None) for i in range(len(created.results))]
    assert built.properties == created.properties
    assert list(built.attributes.items()) == list(created.attributes.items())  # order too
    assert built.location == created.location
    assert list(built.successors) == list(created.successors) == []
    assert (built.parent, built.next_op, built.prev_op) == (None, None, None)
    assert len(built.regions) == len(created.regions)
    for region in built.regions:
        assert region.parent is built


def test_build_op_makes_the_yield_create_makes() -> None:
    block = Block(arg_types=[T, T])
    values = [*block.args, block.args[0]]
    _same_op(build_op(YieldOp, values), YieldOp.create(operands=values), values)


@pytest.mark.parametrize("cls", [LoadVarOp, StoreVarOp])
@pytest.mark.parametrize("with_attributes", [False, True])
def test_build_op_makes_the_load_or_store_create_makes(cls, with_attributes) -> None:
    block = Block(arg_types=[T])
    (arg,) = block.args
    attributes = ({"layout_str": to_attr("str", "Cx"), "dev_info": DevAttr.make(
        mem_layout=LayoutMode.NCx)} if with_attributes else {})
    built = build_op(cls, [arg], [T], attributes)
    created = cls.create(operands=[arg], result_types=[T], attributes=dict(attributes))
    _same_op(built, created, [arg])
    assert "layout_str" in built.attributes  # the default filled in when not given
    block.add_ops([built, created])
    built.verify()


def test_build_op_makes_the_group_and_yield_create_makes() -> None:
    outer = Block(arg_types=[T, T])
    a, b = outer.args
    groups = []
    for make in (lambda *f: build_op(*f), lambda cls, o, t, attrs, regions: cls.create(
            operands=o, result_types=t, attributes=attrs, regions=regions)):
        body = Block(arg_types=[T, T])
        add = AddOp.create(operands=list(body.args), result_types=[T])
        relu = ReluOp.create(operands=[add.results[0]], result_types=[T])
        body.add_ops([add, relu])
        body.add_op(make(YieldOp, [add.results[0], relu.results[0]], [], {}, []))
        group = make(GroupOp, [a, b], [T, T], {"group_id": i64_attr(7)}, [Region(body)])
        groups.append(group)
    built, created = groups
    _same_op(built, created, [a, b])
    outer.add_ops(groups)
    for group in groups:
        group.verify()
    printed = [print_module(group).replace(" ", "") for group in groups]
    assert printed[0] == printed[1]


@pytest.mark.parametrize("value", [0, 1, -1, 7, 123456789, 2**63 - 1, -(2**63)])
def test_i64_attr_is_the_integer_attr(value) -> None:
    attr = i64_attr(value)
    assert attr == IntegerAttr(value, i64)
    assert hash(attr) == hash(IntegerAttr(value, i64))
    assert attr.value.data == value and attr.type == i64
    attr.verify()


def test_i64_attr_outside_64_bits_goes_through_the_checked_constructor() -> None:
    for value in (2**64, -(2**63) - 1):
        with pytest.raises(VerifyException):
            IntegerAttr(value, i64)
        with pytest.raises(VerifyException):
            i64_attr(value)


def test_set_operand_rewires_as_operands_setitem_does() -> None:
    block = Block(arg_types=[T, T, T])
    a, b, c = block.args
    ours = AddOp.create(operands=[a, b], result_types=[T])
    theirs = AddOp.create(operands=[a, b], result_types=[T])
    block.add_ops([ours, theirs])
    set_operand(ours, 1, c)
    theirs.operands[1] = c
    assert list(ours.operands) == list(theirs.operands) == [a, c]
    assert sorted(i for op, i in _uses(b)) == []
    assert {(op, i) for op, i in _uses(c)} == {(ours, 1), (theirs, 1)}
    assert {(op, i) for op, i in _uses(a)} == {(ours, 0), (theirs, 0)}
    assert [(u.operation, u.index) for u in ours._operand_uses] == [(ours, 0), (ours, 1)]
    set_operand(ours, 0, c)  # the same value twice: two uses
    assert list(ours.operands) == [c, c]
    assert sorted(i for op, i in _uses(c) if op is ours) == [0, 1]
    assert _uses(a) == [(theirs, 0)]


def test_build_block_makes_the_block_xdsl_makes() -> None:
    types = [T, tensor([3], f32), T]
    built, made = build_block(types), Block(arg_types=types)
    assert [(a.type, a.index, a.block is built, a.location, a.name_hint, a.first_use)
            for a in built.args] == [
        (a.type, a.index, True, a.location, a.name_hint, a.first_use) for a in made.args]
    assert (built.parent, built.first_op, built.last_op) == (None, None, None)
    assert build_block([]).args == ()


def test_build_region_makes_the_region_xdsl_makes() -> None:
    ours, theirs = Block(arg_types=[T]), Block(arg_types=[T])
    built, made = build_region(ours), Region(theirs)
    assert (built.parent, len(built.blocks), built.block is ours, ours.parent is built,
            ours.prev_block, ours.next_block) == (
        made.parent, len(made.blocks), made.block is theirs, theirs.parent is made,
        theirs.prev_block, theirs.next_block)
    with pytest.raises(ValueError, match="already in a region"):
        build_region(ours)
