"""ShapeInference interface (seed 003, ShapeInferenceOpInterface): shapes and layouts.

`infer_shapes()` derives the result types of an op from its operand types and attributes,
without changing the op. The op verifiers check that the declared result types equal the
inferred ones, and builders use it to create ops whose result types are not given.

The layout methods are what `layout-init` and `layout-transmit` (seeds 001 and 003) ask an
op; the passes never look at op kinds themselves:

- `initial_layout_str()`: the layout_str the op's attributes fix (Conv: data_format and
  weight_format, Gemm: its operands' shapes), or None for every other op (layout-init
  then writes UNKNOWN);
- `infer_layout(operand_layouts)` (forward, the seed's `inferLayout`): the op's
  layout_str given the layouts of its operands; UNKNOWN when it cannot tell;
- `infer_operand_layouts(result_layout)` (backward): the layout each operand must have
  for the result to have `result_layout`; None when the op cannot infer backward at all
  (seed 001: Reshape and BroadCast), UNKNOWN in an entry when it says nothing about that
  operand.
- `permute_attributes(perm)` (seed 002, asked by `layout-preset-to-npu`): the attribute
  values under which the op computes the same values when its rank-4 data are permuted
  by `perm` (new dim i = old dim perm[i]), or None when it cannot run on permuted data.

The defaults here are the conservative rule: the result gets the Tensor class of its
shape and nothing is inferred backward. Each op family overrides them once, in its base
class, with the helpers below, and documents its rule there.

Layouts and shapes: CNN layouts (NCHW, NHWC, OIHW, HWOI) name four dims, so they only
describe rank-4 values; Tensor vs NTensor depends on the value's dim 0. `fit_layout`
carries a layout to a value of another shape with exactly these two facts, which is why
most family rules are "take this operand's layout and fit it".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from xdsl.dialects.builtin import TensorType

from tx8c.dialect.layout import (
    ALL_LAYOUTS,
    UNKNOWN,
    is_cnn,
    split_layout_str,
    tensor_class_layout,
)
from tx8c.ir_utils import shape_of

if TYPE_CHECKING:
    from tx8c.dialect.relabel import RankView, ViewMap


class ShapeInference:
    def infer_shapes(self) -> list[TensorType]:
        """The result types this op must have, given its operands and attributes.

        Raises `Tx8VerifyError` when the operands and attributes are inconsistent.
        """
        raise NotImplementedError(f"{type(self).__name__} does not implement infer_shapes")

    # -- layouts (seeds 001, 003) -------------------------------------------------------
    def initial_layout_str(self) -> str | None:
        """The layout_str this op's attributes fix (layout-init), None when they fix none."""
        return None

    def infer_layout(self, operand_layouts: Sequence[str]) -> str:
        """Forward: this op's layout_str from its operands' layouts (UNKNOWN if unknowable).

        For most ops the layout_str is one token, the layout of the result; ops whose
        layout is fixed per operand (Conv, Gemm) return their whole layout_str.
        Default: the Tensor class of the result's shape, whatever the operands.
        """
        return tensor_class_layout(result_shape(self))

    def infer_operand_layouts(self, result_layout: str) -> list[str] | None:
        """Backward: each operand's layout for a result of `result_layout`.

        None: the op cannot infer backward (its operands are left to other consumers, the
        graph-input default, or the forward pass). An UNKNOWN entry leaves that operand
        alone. Default: None.
        """
        return None

    # -- preset (seed 002) ----------------------------------------------------------------
    def permute_attributes(self, perm: tuple[int, ...]) -> dict[str, Any] | None:
        """The attributes under which this op computes the same on permuted data.

        The contract (`layout-preset-to-npu` relies on it): every operand and result of
        rank len(perm) (4) is permuted by `perm` (new dim i = old dim perm[i]); a
        lower-rank operand among the data operands (`data_operand_indices`) broadcasts
        against the result (numpy, right-aligned) and is rearranged the same way (padded
        with leading 1s to rank 4, permuted, leading 1s dropped down to its own rank; see
        `broadcast_arranged_shape`); every other operand, and every result of another
        rank, stays exactly as it is. Return the attributes to set (Python values, as
        `Op.make(**attrs)` takes them; None for an optional attribute that is absent),
        {} when none change, or None when no attributes make the op compute the same:
        the op must then see its original arrangement.

        Ops whose layout_str lists each operand (Conv: input-weight-result) may also move
        a listed operand to another arrangement (Conv's weight to HWOI); the layout_str
        of the op made with the returned attributes (`initial_layout_str`) names the
        arrangement of each listed operand, and that is what the pass feeds it.

        Default: None. Reshape, BroadCast, Gather, Gemm, ... keep it: they turn CNN data
        into Tensor-class data and must see the original arrangement.
        """
        return None


    # -- relabels and rank views (issue 15) -----------------------------------------------
    def element_map(self) -> ViewMap | None:
        """When the result is the operand's elements in another order and shape, and
        nothing else (Reshape, Transpose, Relabel): that reordering, from which the layout
        stage decides whether the op moves bytes (`tx8c.dialect.relabel`). Default: None."""
        return None

    def view_attributes(self, view: RankView) -> dict[str, Any] | None:
        """The attributes under which this op computes the same values on a rank view of
        its data (rank normalisation, `layout-normalize-rank`).

        The contract: every operand and result of the rank `view.rank` (the result's) is
        seen through `view` (dims of size 1 inserted); every operand of lower rank stays
        as it is and broadcasts against the trailing dims, which the view must keep
        (`view.keeps_trailing`). Return the attributes to set (Python values, as
        `Op.make(**attrs)` takes them), {} when none change, or None when the op cannot
        run on the view. Default: None.
        """
        return None

    def reshaped_operand_attributes(
        self, index: int, shape: Sequence[int]
    ) -> dict[str, Any] | None:
        """The attributes under which this op computes the same values, up to a reshape of
        its result that keeps the elements' row-major order, when operand `index` comes
        in `shape` (the same elements in the same order: the operand of the Reshape that
        feeds it) instead; None when it cannot. Its result type is then what
        `infer_shapes` gives. Lets a Gemm take `[1, 1, 128, 768]` rows instead of their
        `[128, 768]` reshape ("batch dims follow", `layout-normalize-rank`). Default: None.
        """
        return None


def view_keeps_operands(op, view: RankView) -> bool:
    """Every operand either has the view's rank (it is viewed too) or broadcasts against
    trailing dims the view keeps: the condition of `view_attributes`' contract."""
    return all(
        len(shape_of(v)) == view.rank or view.keeps_trailing(len(shape_of(v)))
        for v in op.operands
    )


def elementwise_view(op, view: RankView) -> dict[str, Any] | None:
    """`view_attributes` of an element-wise op (numpy broadcasting): nothing changes."""
    if len(result_shape(op)) != view.rank or not view_keeps_operands(op, view):
        return None
    return {}


def view_axis_attributes(op, view: RankView, name: str = "axis") -> dict[str, Any] | None:
    """`view_attributes` of an op with one axis attribute along which it works (Softmax,
    Split, the first normalised dim of LayerNorm): the axis follows its dim."""
    if len(result_shape(op)) != view.rank or not view_keeps_operands(op, view):
        return None
    return {name: view.axis(op.attr(name))}


# --------------------------------------------------------------------------------------
# Helpers the op families state their rules with
# --------------------------------------------------------------------------------------


def result_shape(op) -> tuple[int, ...]:
    """The shape of the op's first result (its layout_str describes every result)."""
    return shape_of(op.results[0]) if op.results else ()


def fit_layout(layout: str, shape: Sequence[int]) -> str:
    """`layout` carried to a value of `shape`.

    A CNN layout stays when the value has rank 4 (the four dims it names); anything else
    becomes the Tensor class of the shape (Tensor or NTensor by dim 0). UNKNOWN stays.
    Carried across an op that keeps the rank, this keeps CNN layouts; across one that
    changes it, it gives the Tensor class.
    """
    if layout == UNKNOWN:
        return UNKNOWN
    if is_cnn(layout) and len(shape) == 4:
        return layout
    return tensor_class_layout(shape)


def data_operand_indices(op) -> list[int]:
    """The operands that carry data (DATA_OPERANDS, all when None)."""
    indices = range(len(op.operands)) if op.DATA_OPERANDS is None else op.DATA_OPERANDS
    return [i for i in indices if i < len(op.operands)]


def keep_operand_layout(op, operand_layouts: Sequence[str]) -> str:
    """Forward "the result is laid out like its data": the layout of the first data
    operand whose layout is known, preferring complete operands (those of the result's
    shape) over broadcast ones, fitted to the result's shape; UNKNOWN when none is known."""
    out = result_shape(op)
    data = data_operand_indices(op)
    complete = [i for i in data if shape_of(op.operands[i]) == out]
    for i in complete + data:
        if operand_layouts[i] != UNKNOWN:
            return fit_layout(operand_layouts[i], out)
    return UNKNOWN


def fit_to_operands(
    op, result_layout: str, same_rank_only: bool = False, tensor_class: Sequence[int] = ()
) -> list[str]:
    """Backward "the operands are laid out like the result": `result_layout` fitted to
    each operand (so lower-rank broadcast operands get their Tensor class).

    `same_rank_only`: operands whose rank differs from the result's get UNKNOWN (a
    rank-changing op cannot tell how its operand was arranged). Operands listed in
    `tensor_class` (indices) always get the Tensor class of their shape.
    """
    rank = len(result_shape(op))
    layouts = []
    for i, operand in enumerate(op.operands):
        shape = shape_of(operand)
        if i in tensor_class:
            layouts.append(tensor_class_layout(shape))
        elif same_rank_only and len(shape) != rank:
            layouts.append(UNKNOWN)
        else:
            layouts.append(fit_layout(result_layout, shape))
    return layouts


def fit_to_same_rank_operands(op, result_layout: str) -> list[str]:
    """`fit_to_operands` for rank-changing ops: operands of another rank are left alone."""
    return fit_to_operands(op, result_layout, same_rank_only=True)


def cannot_infer_backward(op, result_layout: str) -> None:
    """Backward for ops whose result layout does not tell their operand's (seed 001:
    Reshape and BroadCast; a CNN and a Tensor-class input could give the same result)."""
    return None


def permute_layout(layout: str, perm: Sequence[int]) -> str:
    """The layout of `x.transpose(perm)` when `x` has CNN `layout`, if it is a CNN layout
    again (NCHW -(0,2,3,1)-> NHWC, OIHW -(2,3,0,1)-> HWOI, ...); UNKNOWN otherwise."""
    if not is_cnn(layout) or len(perm) != len(layout):
        return UNKNOWN
    permuted = "".join(layout[p] for p in perm)
    return permuted if permuted in ALL_LAYOUTS else UNKNOWN


def inverse_permutation(perm: Sequence[int]) -> tuple[int, ...]:
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    return tuple(inverse)


def fixed_operand_layouts(op, layout_str: str) -> list[str]:
    """Backward for ops with a per-operand layout_str (Conv, Gemm): the listed tokens for
    the first operands, the Tensor class for the unlisted ones (a bias)."""
    tokens = split_layout_str(layout_str)[:-1]
    return [
        tokens[i] if i < len(tokens) else tensor_class_layout(shape_of(operand))
        for i, operand in enumerate(op.operands)
    ]


# --------------------------------------------------------------------------------------
# Helpers for permute_attributes (seed 002's preset)
# --------------------------------------------------------------------------------------


def has_rank(op, perm: Sequence[int]) -> bool:
    """The op's first result has the rank `perm` permutes (the data it applies to)."""
    return len(result_shape(op)) == len(perm)


def moved_axis(axis: int, perm: Sequence[int]) -> int:
    """Where dim `axis` (0..rank-1) goes when the data are permuted by `perm`."""
    return inverse_permutation(perm)[axis]


def permute_per_dim(values: Sequence, perm: Sequence[int]) -> tuple:
    """A list with one entry per dim (Tile's repeats, Resize's sizes, Pad's begins)
    rearranged like the data: entry i of the result is entry perm[i]."""
    return tuple(values[p] for p in perm)


def broadcast_arranged_shape(shape: Sequence[int], perm: Sequence[int]) -> tuple[int, ...]:
    """The shape of a broadcast operand of lower rank when the data are permuted by
    `perm`: padded with leading 1s to len(perm) dims, permuted, and leading 1s dropped
    again as long as it has more dims than before ([C, 1, 1] by (0, 2, 3, 1): [1, 1, C])."""
    rank = len(shape)
    padded = (1,) * (len(perm) - rank) + tuple(shape)
    arranged = list(permute_per_dim(padded, perm))
    while len(arranged) > rank and arranged[0] == 1:
        arranged.pop(0)
    return tuple(arranged)


def keeps_element_order(shape: Sequence[int], perm: Sequence[int]) -> bool:
    """Permuting an array of `shape` (padded with leading 1s to len(perm) dims) by `perm`
    moves no element: only dims of size 1 change places."""
    padded = (1,) * (len(perm) - len(shape)) + tuple(shape)
    moved = [p for p in perm if padded[p] != 1]
    return moved == sorted(moved)


def unchanged_by(shape: Sequence[int], perm: Sequence[int]) -> bool:
    """A broadcast operand of `shape` is the same array after the rearrangement."""
    return (
        keeps_element_order(shape, perm)
        and broadcast_arranged_shape(shape, perm) == tuple(shape)
    )
