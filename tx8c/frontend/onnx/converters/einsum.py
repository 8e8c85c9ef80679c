"""Einsum as transposes, reductions and batched matrix products.

The patterns exporters emit (batched matmuls such as "bhqd,bhkd->bhqk", transposes such
as "ij->ji", reductions such as "ij->i", outer products, ellipses) all reduce to:
1. per operand, sum out the letters no other operand and not the output uses;
2. contract the operands left to right: a letter of both that the output or a later
   operand needs is a batch dim, one that nothing needs is contracted; each side's own
   letters are its rows or columns; the pair becomes one Gemm on [batch..., rows, K] and
   [batch..., K, cols] (integers: a broadcast Mul and a Reduce sum, exact);
3. transpose the result to the output's letter order.
A letter repeated within one operand (a diagonal) is not supported.
"""

from __future__ import annotations

import re
import string

import numpy as np

from tx8c.frontend.onnx.compose import matmul, mul, reduce, reshape, transpose
from tx8c.frontend.onnx.context import NodeContext, Value
from tx8c.frontend.onnx.registry import converter


class Term:
    """An operand (or intermediate result) and the letter of each of its dims."""

    def __init__(self, value: Value, letters: str):
        self.value = value
        self.letters = letters

    def size(self, letter: str) -> int:
        return self.value.shape[self.letters.index(letter)]


def parse_equation(ctx: NodeContext, equation: str, ranks: list[int]) -> tuple[list[str], str]:
    """Each operand's letters and the output's, with '...' spelled out as capitals."""
    equation = equation.replace(" ", "")
    if not re.fullmatch(r"[A-Za-z.,]*(->[A-Za-z.]*)?", equation):
        raise ctx.error(f"cannot read the equation '{equation}'")
    lhs, _, rhs = equation.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != len(ranks):
        raise ctx.error(f"the equation '{equation}' names {len(inputs)} operand(s), the node "
                        f"has {len(ranks)}")
    ellipsis_rank = max((r - len(t.replace("...", "")) for t, r in zip(inputs, ranks,
                        strict=True) if "..." in t), default=0)
    spare = [c for c in string.ascii_uppercase if c not in equation][:ellipsis_rank]
    spelled = []
    for term, rank in zip(inputs, ranks, strict=True):
        if "..." in term:
            own = rank - len(term.replace("...", ""))
            term = term.replace("...", "".join(spare[ellipsis_rank - own:]))
        if len(term) != rank:
            raise ctx.error(f"'{term}' names {len(term)} dims for an operand of rank {rank}")
        if len(set(term)) != len(term):
            raise ctx.error(f"'{term}' repeats a letter (a diagonal), which tx8c does not "
                            "support")
        spelled.append(term)
    if "->" in equation:
        output = rhs.replace("...", "".join(spare))
    else:
        counts = {c: "".join(spelled).count(c) for c in "".join(spelled)}
        output = "".join(spare) + "".join(sorted(c for c, n in counts.items()
                                                 if n == 1 and c not in spare))
    return spelled, output


def _sum_out(ctx: NodeContext, term: Term, keep: set[str]) -> Term:
    gone = [i for i, c in enumerate(term.letters) if c not in keep]
    if not gone:
        return term
    value = reduce(ctx, term.value, "sum", gone, keepdims=False)
    return Term(value, "".join(c for c in term.letters if c in keep))


def _arranged(ctx: NodeContext, term: Term, order: str) -> Value:
    return transpose(ctx, term.value, [term.letters.index(c) for c in order])


def _contract(ctx: NodeContext, a: Term, b: Term, needed: set[str]) -> Term:
    """a and b combined; letters in `needed` are kept, shared others are summed."""
    shared = [c for c in a.letters if c in b.letters]
    batch = "".join(c for c in shared if c in needed)
    summed = "".join(c for c in shared if c not in needed)
    rows = "".join(c for c in a.letters if c not in shared)
    cols = "".join(c for c in b.letters if c not in shared)
    for c in summed:
        if a.size(c) != b.size(c):
            raise ctx.error(f"letter '{c}' has size {a.size(c)} in one operand and "
                            f"{b.size(c)} in the other")
    if not np.issubdtype(a.value.dtype, np.integer):
        return _contract_with_gemm(ctx, a, b, batch, rows, summed, cols)
    # integers: a broadcast product on [batch, rows, summed, cols], then a sum (exact)
    order = batch + rows + summed + cols
    left = _expanded(ctx, a, order)
    right = _expanded(ctx, b, order)
    product = Term(mul(ctx, left, right), order)
    return _sum_out(ctx, product, set(batch + rows + cols))


def _expanded(ctx: NodeContext, term: Term, order: str) -> Value:
    """The term arranged in `order`, its missing letters as dims of size 1."""
    present = "".join(c for c in order if c in term.letters)
    arranged = _arranged(ctx, term, present)
    return reshape(ctx, arranged, [term.size(c) if c in term.letters else 1 for c in order])


def _contract_with_gemm(ctx, a: Term, b: Term, batch, rows, summed, cols) -> Term:
    def size(term, letters):
        return int(np.prod([term.size(c) for c in letters]))

    lhs = reshape(ctx, _arranged(ctx, a, batch + rows + summed),
                  [a.size(c) for c in batch] + [size(a, rows), size(a, summed)])
    rhs = reshape(ctx, _arranged(ctx, b, batch + summed + cols),
                  [b.size(c) for c in batch] + [size(b, summed), size(b, cols)])
    product = matmul(ctx, lhs, rhs)
    batch_sizes = list(product.shape[:len(batch)])
    shape = batch_sizes + [a.size(c) for c in rows] + [b.size(c) for c in cols]
    return Term(reshape(ctx, product, shape), batch + rows + cols)


@converter("Einsum")
def convert_einsum(ctx: NodeContext) -> Value:
    values = [ctx.input(i) for i in range(len(ctx.inputs))]
    letters, output = parse_equation(ctx, ctx.attr("equation"), [v.rank for v in values])
    terms = [Term(v, t) for v, t in zip(values, letters, strict=True)]
    for i, term in enumerate(terms):
        others = "".join(t.letters for j, t in enumerate(terms) if j != i)
        terms[i] = _sum_out(ctx, term, set(others + output))
    result = terms[0]
    for i, term in enumerate(terms[1:], start=1):
        later = "".join(t.letters for t in terms[i + 1:])
        result = _contract(ctx, result, term, set(later + output))
    result = _sum_out(ctx, result, set(output))
    missing = [c for c in output if c not in result.letters]
    if missing:
        raise ctx.error(f"output letters {missing} appear in no operand")
    return _arranged(ctx, result, output)
