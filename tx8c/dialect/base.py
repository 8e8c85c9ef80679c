"""The common base of every tx8be op.

An op is one class that knows everything about itself: its operands (named, with optional
ones marked `?` and variadic ones `*`), its attributes, the dtypes it accepts, its shape
inference, its OpAttr and its compute. This module supplies what they share:

- the attributes every op carries (seed 003): `layout_str` (default "UNKNOWN"), and the
  optional `dev_info`, `chip_parallel`, `tile_parallel`;
- the custom syntax `tx8be.Op %a, %b {attrs} : (types) -> types` (the generic form
  parses too);
- a verifier that checks operand and result counts, dtypes, the op's own rules
  (`verify_op`), and that the result types equal `infer_shapes()`;
- typed attribute fields (`ints_attr`, `int_attr`, ...) read back as Python values with
  `op.attr("name")`, and `Op.make(operands, **attrs)` that creates an op whose result
  types are inferred.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np
from xdsl.dialects.builtin import (
    UNKNOWN_LOC,
    AnyTensorType,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntAttr,
    IntegerAttr,
    LocationAttr,
    StringAttr,
    TensorType,
    f64,
    i1,
    i64,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, Region, SSAValue, Use
from xdsl.ir.core import SSAValues
from xdsl.irdl import (
    IRDLOperation,
    OptionalDef,
    attr_def,
    irdl_op_definition,
    opt_attr_def,
    var_operand_def,
    var_result_def,
)
from xdsl.utils.exceptions import VerifyException

from tx8c.dialect.attrs import DevAttr, LayoutMode, ParallelAttr
from tx8c.dialect.types import short_name, to_numpy_dtype
from tx8c.errors import Tx8VerifyError
from tx8c.interfaces import Compute, OpAttr, OpLib, ShapeInference, ShardingInterface

UNKNOWN_LAYOUT = "UNKNOWN"


class OpRuleError(Tx8VerifyError, VerifyException):
    """An op breaks one of its rules. Both a user error and an xDSL verify error."""


# --------------------------------------------------------------------------------------
# Typed attribute fields
# --------------------------------------------------------------------------------------


def _field(kind: str, constraint: type, default: Any, optional: bool):
    if default is not None:
        fd = attr_def(constraint, default_value=to_attr(kind, default))
    elif optional:
        fd = opt_attr_def(constraint)
    else:
        fd = attr_def(constraint)
    fd.tx8_kind = kind
    return fd


def ints_attr(default: Sequence[int] | None = None, optional: bool = False):
    """A list of ints, written `array<i64: 1, 2>`."""
    return _field("ints", DenseArrayBase, default, optional)


def floats_attr(default: Sequence[float] | None = None, optional: bool = False):
    """A list of floats, written `array<f64: 0.5, 2.0>`."""
    return _field("floats", DenseArrayBase, default, optional)


def int_attr(default: int | None = None, optional: bool = False):
    """An int, written `3 : i64`."""
    return _field("int", IntegerAttr, default, optional)


def float_attr(default: float | None = None, optional: bool = False):
    """A float, written `1.0e-05 : f64`."""
    return _field("float", FloatAttr, default, optional)


def str_attr(default: str | None = None, optional: bool = False):
    """A string, written `"nearest"`."""
    return _field("str", StringAttr, default, optional)


def bool_attr(default: bool | None = None, optional: bool = False):
    """A bool, written `true` / `false`."""
    return _field("bool", IntegerAttr, default, optional)


def dense_attr_field():
    """A tensor constant, written `dense<...> : tensor<...>`."""
    return _field("dense", DenseIntOrFPElementsAttr, None, False)


def to_attr(kind: str, value: Any) -> Attribute:
    """The IR attribute of a Python value of the given kind."""
    if kind == "int" and type(value) is int:  # the most frequent: group ids and tags
        return _scalar_attr(kind, value)
    if kind == "ints":
        return DenseArrayBase.from_list(i64, [int(v) for v in value])
    if kind == "floats":
        return DenseArrayBase.from_list(f64, [float(v) for v in value])
    if kind in _SCALAR_TYPES:
        return _scalar_attr(kind, _SCALAR_TYPES[kind](value))
    if kind == "float":
        return FloatAttr(float(value), f64)
    if kind == "dense":
        from tx8c.dialect.types import dense_attr

        return value if isinstance(value, Attribute) else dense_attr(np.asarray(value))
    raise ValueError(f"unknown attribute kind {kind}")


_SCALAR_TYPES = {"int": int, "str": str, "bool": bool}
"""Kinds whose attributes are shared (not floats: 0.0 and -0.0 are equal keys)."""


@lru_cache(maxsize=8192)
def _scalar_attr(kind: str, value: int | str | bool) -> Attribute:
    """Attributes are immutable: one object per value serves every op (building an
    IntegerAttr costs tens of microseconds, which passes that number thousands of groups
    would pay again and again)."""
    if kind == "int":
        return i64_attr(value)
    if kind == "str":
        return StringAttr(value)
    return IntegerAttr(1 if value else 0, i1)


def i64_attr(value: int) -> IntegerAttr:
    """`IntegerAttr(value, i64)`, built without xDSL's generic parameter verification
    (60 us against 4: the grouping stage numbers every group) when `value` fits in 64
    bits, the only thing that verification checks of an i64 value; otherwise the
    checked constructor (which raises). `tests/unit/dialect/test_build_op.py` checks
    that both give equal attributes."""
    if not _I64_MIN <= value <= _I64_MAX:
        return IntegerAttr(value, i64)
    data = IntAttr.__new__(IntAttr)
    object.__setattr__(data, "data", value)
    attr = IntegerAttr.__new__(IntegerAttr)
    object.__setattr__(attr, "value", data)
    object.__setattr__(attr, "type", i64)
    return attr


_I64_MIN, _I64_MAX = -(2**63), 2**63 - 1


def from_attr(kind: str, attr: Attribute) -> Any:
    """The Python value of an IR attribute of the given kind."""
    if kind == "ints":
        return tuple(int(v) for v in attr.get_values())
    if kind == "floats":
        return tuple(float(v) for v in attr.get_values())
    if kind == "int":
        return int(attr.value.data)
    if kind == "float":
        return float(attr.value.data)
    if kind == "str":
        return attr.data
    if kind == "bool":
        return bool(attr.value.data)
    if kind == "dense":
        from tx8c.dialect.types import dense_to_numpy

        return dense_to_numpy(attr)
    raise ValueError(f"unknown attribute kind {kind}")


COMMON_ATTRS = ("layout_str", "dev_info", "chip_parallel", "tile_parallel")


def _common_attr(name: str, value: Any) -> Attribute:
    """The attributes every op has: layout_str from a str, the others as attributes."""
    if name == "layout_str" and isinstance(value, str):
        return StringAttr(value)
    return value


def tx8be_op(cls):
    """Class decorator for concrete tx8be ops: records attribute kinds, then IRDL."""
    kinds: dict[str, str] = {}
    for klass in reversed(cls.mro()):
        for key, value in vars(klass).items():
            kind = getattr(value, "tx8_kind", None)
            if kind is not None:
                kinds[key] = kind
    cls = irdl_op_definition(cls)
    cls.ATTR_KINDS = kinds
    return cls


_FIELD_DEFAULTS: dict[type, tuple[dict, dict]] = {}
"""Per op class, the defaults of its properties and of its attributes, by name."""


def _field_defaults(cls) -> tuple[dict, dict]:
    """The properties and attributes IRDL fills into a new op of `cls` that lacks them
    (name -> default, in definition order)."""
    found = _FIELD_DEFAULTS.get(cls)
    if found is None:
        op_def = cls.get_irdl_definition()
        found = _FIELD_DEFAULTS[cls] = tuple(
            {name: f.default_value for name, f in fields.items()
             if not isinstance(f, OptionalDef) and f.default_value is not None}
            for fields in (op_def.properties, op_def.attributes))
    return found


def build_op(
    cls: type[Operation],
    operands: Sequence[SSAValue] = (),
    result_types: Sequence[Attribute] = (),
    attributes: Mapping[str, Attribute] | None = None,
    regions: Sequence[Region] = (),
) -> Operation:
    """The op `cls.create(operands=..., result_types=..., attributes=..., regions=...)`
    makes (at the unknown location, absent attributes and properties taking their
    defaults), built directly: for the grouping stage, which creates a group, a Yield
    and a LoadVar or StoreVar for about every op of the graph.

    Requires an IRDL op class whose ops have no successors (every tx8be op, Yield
    included); the regions are unattached. xDSL's `Operation.__init__` goes through the
    generic operand and successor setters and IRDL's default filling, together about
    half the cost of creating a small op; this sets the same fields of xDSL's (pinned)
    `Operation` once each. `tests/unit/dialect/test_build_op.py` checks that the op is
    the one `create` makes, field by field, for the ops the grouping stage builds.
    """
    op = cls.__new__(cls)
    operands = SSAValues(operands)
    uses = tuple([_new_use(op, index, value) for index, value in enumerate(operands)])
    op._operands = operands
    op._operand_uses = uses
    op.results = SSAValues([
        OpResult(result_type, op, index) for index, result_type in enumerate(result_types)
    ])
    property_defaults, attribute_defaults = _FIELD_DEFAULTS.get(cls) or _field_defaults(cls)
    op.properties = property_defaults.copy()
    if attributes:
        # The given attributes first, then the defaults of the others, as create
        # orders them: the merge puts the new keys after the given ones, the update
        # restores the given values.
        op.attributes = {**attributes, **attribute_defaults}
        op.attributes.update(attributes)
    else:
        op.attributes = attribute_defaults.copy()
    op.location = UNKNOWN_LOC
    op.parent = op._next_op = op._prev_op = None
    op._successors = op._successor_uses = ()
    op.regions = ()
    for region in regions:
        op.add_region(region)
    return op


def _new_use(op: Operation, index: int, value: SSAValue) -> Use:
    """`Use(op, index)` put at the head of `value`'s use list, as `value.add_use` does,
    linked as it is built (one call less per operand)."""
    first = value.first_use
    use = Use(op, index, None, first)
    if first is not None:
        first._prev_use = use
    value.first_use = use
    return use


def build_block(arg_types: Sequence[Attribute]) -> Block:
    """`Block(arg_types=arg_types)`, its arguments built at the unknown location directly:
    xDSL's BlockArgument looks its default location up with an import statement for
    each argument (the grouping stage makes a body block for about every op).
    `tests/unit/ops/test_build_op.py` compares it with `Block(arg_types=...)`."""
    block = Block.__new__(Block)  # Block() runs IRNode initialisers and add_ops(())
    block._first_op = block._last_op = None
    block._args = tuple([
        BlockArgument(arg_type, block, index, UNKNOWN_LOC)
        for index, arg_type in enumerate(arg_types)
    ])
    return block


def build_region(block: Block) -> Region:
    """`Region(block)` for a block in no region, linked directly: xDSL's `add_block`
    takes any iterable of blocks (an iterator and a StopIteration per call) and walks up
    from the region to check it is not inside the block. Requires `block.parent is None`
    (then nothing can contain the new region). `tests/unit/ops/test_build_op.py`
    compares it with `Region(block)`."""
    if block.parent is not None:
        raise ValueError("build_region: the block is already in a region")
    region = Region.__new__(Region)  # Region() iterates the empty block list
    region._first_block = region._last_block = block
    block.parent = region
    return region


# --------------------------------------------------------------------------------------
# The base op
# --------------------------------------------------------------------------------------


class Tx8beOp(IRDLOperation, ShapeInference, ShardingInterface, OpLib, Compute):
    """Base of every tx8be op; concrete ops are decorated with `@tx8be_op`."""

    OPERANDS: ClassVar[tuple[str, ...]] = ("input",)
    """Operand names; `name?` is optional (only at the end), `name*` is variadic."""
    NUM_RESULTS: ClassVar[int | None] = 1
    """How many results; None when it depends on attributes (see `num_results`)."""
    DTYPES: ClassVar[frozenset[str] | None] = None
    """Accepted element types of the data operands (by IR name), None = any."""
    DATA_OPERANDS: ClassVar[tuple[int, ...] | None] = None
    """Operands checked against DTYPES and required to share one dtype; None = all."""
    ATTR_KINDS: ClassVar[dict[str, str]] = {}

    __hash__ = object.__hash__
    """Identity, as IRDLOperation's `id(self)`, without a Python call: passes keep ops in
    sets and dicts (the grouping stage looks up about every op several times)."""

    inputs = var_operand_def(AnyTensorType)
    outputs = var_result_def(AnyTensorType)

    layout_str = attr_def(StringAttr, default_value=StringAttr(UNKNOWN_LAYOUT))
    dev_info = opt_attr_def(DevAttr)
    chip_parallel = opt_attr_def(ParallelAttr)
    tile_parallel = opt_attr_def(ParallelAttr)

    assembly_format = "operands attr-dict `:` functional-type(operands, results)"

    # -- construction --------------------------------------------------------------------
    def __post_init__(self) -> None:
        """IRDLOperation's (absent fields take their defaults), from the defaults listed
        once per class: IRDL scans every field definition of the op for each new op,
        which was a third of the cost of creating the groups, loads and stores of a
        large graph."""
        properties, attributes = _field_defaults(type(self))
        for name, value in properties.items():
            if name not in self.properties:
                self.properties[name] = value
        for name, value in attributes.items():
            if name not in self.attributes:
                self.attributes[name] = value
        super(IRDLOperation, self).__post_init__()

    @classmethod
    def create(cls, *, location: LocationAttr | None = None, **fields: Any):
        """xDSL's Operation.create, at the unknown location unless one is given: xDSL
        looks its default up with an import statement for every op it creates, which
        costs a twentieth of making a group, a load or a store."""
        return super().create(location=UNKNOWN_LOC if location is None else location,
                              **fields)

    @classmethod
    def make(
        cls,
        operands: Sequence[SSAValue],
        result_types: Sequence[Attribute] | None = None,
        **attrs: Any,
    ):
        """Create the op from Python attribute values; infer result types if not given."""
        attributes = cls.ir_attributes(attrs)
        if result_types is None:
            result_types = cls.inferred_result_types(operands, attributes)
        return cls.create(
            operands=list(operands),
            result_types=list(result_types),
            attributes=attributes,
        )

    @classmethod
    def inferred_result_types(
        cls, operands: Sequence[SSAValue], attributes: Mapping[str, Attribute]
    ) -> list[Attribute]:
        """The result types an op of this class gets on `operands` with `attributes`
        (IR attributes), from `infer_shapes` on a probe op that is thrown away."""
        probe = cls.create(operands=list(operands), result_types=[], attributes=dict(attributes))
        try:  # count and dtype rules first: infer_shapes relies on them
            probe._verify_operand_count()
            probe._verify_dtypes()
            return probe.infer_shapes()
        finally:
            probe.drop_all_references()

    @classmethod
    def ir_attributes(cls, values: Mapping[str, Any]) -> dict[str, Attribute]:
        """The IR attributes of Python attribute `values` (as `make` takes them: the
        common ones may be given as IR attributes, a layout_str as a str; None values are
        left out)."""
        if not values:  # GroupOp.wrap's groups: no sets to build
            return {}
        unknown = set(values) - set(cls.ATTR_KINDS) - set(COMMON_ATTRS)
        if unknown:
            raise TypeError(f"{cls.name} has no attribute(s) {sorted(unknown)}")
        return {
            name: _common_attr(name, value) if name in COMMON_ATTRS
            else to_attr(cls.ATTR_KINDS[name], value)
            for name, value in values.items()
            if value is not None
        }

    # -- reading ---------------------------------------------------------------------
    def attr(self, name: str) -> Any:
        """The Python value of attribute `name` (its default if absent, None if unset)."""
        kind = self.ATTR_KINDS[name]
        value = self.attributes.get(name)
        if value is None:
            field_def = self.get_irdl_definition().attributes[name]
            value = field_def.default_value
            if value is None:
                return None
        return from_attr(kind, value)

    def operand_named(self, name: str) -> SSAValue | None:
        """The operand called `name` in OPERANDS, None if an optional one is absent."""
        for i, spec in enumerate(self.OPERANDS):
            if spec.rstrip("?*") == name:
                return self.operands[i] if i < len(self.operands) else None
        raise KeyError(name)

    @property
    def layout(self) -> str:
        return self.layout_str.data

    def mem_layout(self) -> LayoutMode | None:
        """The memory layout the op's `dev_info` gives its result(s); None without
        dev_info (before the layout stage)."""
        return self.dev_info.get("mem_layout") if self.dev_info is not None else None

    def input_types(self) -> list[TensorType]:
        return [o.type for o in self.operands]

    def input_shapes(self) -> list[tuple[int, ...]]:
        return [tuple(o.type.get_shape()) for o in self.operands]

    def result_dtype(self, index: int = 0) -> np.dtype:
        return to_numpy_dtype(self.results[index].type.get_element_type())

    def fail(self, message: str) -> OpRuleError:
        """An error naming this op; `raise self.fail(...)`."""
        return OpRuleError(f"'{self.name}' op {message}")

    # -- operand and result counts ----------------------------------------------------
    @classmethod
    def operand_count_range(cls) -> tuple[int, int | None]:
        required = sum(1 for s in cls.OPERANDS if not s.endswith(("?", "*")))
        if any(s.endswith("*") for s in cls.OPERANDS):
            return required, None
        return required, len(cls.OPERANDS)

    def num_results(self) -> int:
        """How many results this op has; override when NUM_RESULTS is None."""
        assert self.NUM_RESULTS is not None
        return self.NUM_RESULTS

    # -- verification ------------------------------------------------------------------
    def verify_(self) -> None:
        self._verify_operand_count()
        self._verify_dtypes()
        self._verify_bool_attrs()
        self.verify_op()
        expected = self.infer_shapes()
        if len(expected) != len(self.results):
            raise self.fail(f"expects {len(expected)} result(s), got {len(self.results)}")
        for i, (want, got) in enumerate(zip(expected, self.result_types, strict=True)):
            if want != got:
                raise self.fail(
                    f"result #{i} has type {_type_str(got)} but its operands and "
                    f"attributes give {_type_str(want)}"
                )

    def _verify_operand_count(self) -> None:
        lo, hi = self.operand_count_range()
        n = len(self.operands)
        if n < lo or (hi is not None and n > hi):
            want = f"{lo}" if lo == hi else (f"at least {lo}" if hi is None else f"{lo} to {hi}")
            names = ", ".join(self.OPERANDS)
            raise self.fail(f"expects {want} operand(s) ({names}), got {n}")

    def _verify_dtypes(self) -> None:
        indices = (
            range(len(self.operands)) if self.DATA_OPERANDS is None else self.DATA_OPERANDS
        )
        indices = [i for i in indices if i < len(self.operands)]
        names = [short_name(self.operands[i].type.get_element_type()) for i in indices]
        if self.DTYPES is not None:
            for i, dtype in zip(indices, names, strict=True):
                if dtype not in self.DTYPES:
                    raise self.fail(
                        f"operand #{i} has element type {dtype}; this op accepts "
                        f"{', '.join(sorted(self.DTYPES))}"
                    )
        if len(set(names)) > 1:
            raise self.fail(
                f"operands {indices} must share one element type, got {', '.join(names)}"
            )

    def _verify_bool_attrs(self) -> None:
        """Bool attributes are written `true`/`false` (i1); `1 : i64` is not a bool."""
        for name, kind in self.ATTR_KINDS.items():
            value = self.attributes.get(name)
            if kind == "bool" and value is not None and value.type != i1:
                raise self.fail(
                    f"{name} must be a bool (true or false), got {_type_str(value)}"
                )

    def verify_op(self) -> None:
        """The op's own rules (attribute ranges, ranks). Override; raise self.fail()."""

    # -- OpLib defaults --------------------------------------------------------------------
    def default_layout(self) -> str:
        """"Tensor" when the first operand's batch is 1, else "NTensor" (seed 003)."""
        # Only its shape matters. The operand tuple read directly: OpOperands' __len__,
        # __iter__ and __getitem__ and SSAValues' __getitem__ are Python calls, and every
        # OpAttr query asks this.
        operands = self._operands
        first = tuple.__getitem__(operands, 0) if operands else self.results[0]
        dims = first.type.shape.data  # not get_shape(): it builds a tuple of every dim
        batch = dims[0].data if dims else 1
        return "Tensor" if batch == 1 else "NTensor"

    def is_broadcast(self) -> bool:
        """True for a V_VS op (seed 000): it broadcasts a lower-rank operand against its
        complete operand (`complete_operand()`), whose alignment family it follows. Only
        the broadcasting element-wise ops (BinaryOp, Where) can be; False here."""
        return False

    def op_attr(self, **fields: Any) -> OpAttr:
        """An OpAttr with this op's default layout and the given fields."""
        return _shared_op_attr(self.default_layout(), **fields)


@lru_cache(maxsize=1024)
def _shared_op_attr(default_layout: str, **fields: Any) -> OpAttr:
    """OpAttrs are frozen: one object per combination of fields serves every op (the
    grouping passes query every op's, and a frozen dataclass costs microseconds to
    build)."""
    return OpAttr(default_layout=default_layout, **fields)


def _type_str(t: Attribute) -> str:
    from io import StringIO

    from xdsl.printer import Printer

    out = StringIO()
    Printer(out).print_attribute(t)
    return out.getvalue()


def result_type_like(shape: Sequence[int], like: Attribute) -> TensorType:
    """A tensor of `shape` with the element type of tensor type `like`."""
    return TensorType(like.get_element_type(), [int(d) for d in shape])


# dtype classes (IR names) used by the op families
FLOATS = frozenset({"f32", "f16", "bf16"})
INTS = frozenset({"i8", "i32", "i64"})
BOOLS = frozenset({"i1"})
NUMERIC = FLOATS | INTS
ALL_DTYPES = FLOATS | INTS | BOOLS
