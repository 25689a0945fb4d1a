"""`aten.einsum` of two operands as one batched matmul between permutes and reshapes.

torch-mlir's lowering of `aten.einsum` took a dim only one operand has for a batch dim sized
from the example: `"...d,de->...e"` (a projection written with an ellipsis) over a `[b, n, 8]`
input compiled to a module asserting `b == 1` ("mismatching contracting dimension" at every
other batch). `einsum_as_matmul` sorts the letters of a two-operand equation into those both
operands and the output share (the batch), those of one operand kept in the output, and those
the two contract; letters of one operand that the output drops are summed first. Equations with
a letter twice in one term (a diagonal) or another number of operands are left to torch-mlir.
"""

from __future__ import annotations

import functools
import operator
import string

import torch

_ELLIPSIS = "..."


def spelled(equation: str, ranks: list[int]) -> str | None:
    """`equation` in explicit form (`->` and an output) with each ellipsis replaced by
    letters it does not use, for operands of `ranks` (torch's broadcasting: an ellipsis
    stands for its operand's leading dims, right-aligned across operands); None where it does
    not fit them."""
    lhs, arrow, rhs = equation.replace(" ", "").partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        return None
    widths = [rank - (len(term) - len(_ELLIPSIS)) if _ELLIPSIS in term else 0
              for term, rank in zip(terms, ranks, strict=True)]
    width = max(widths)
    free = [c for c in string.ascii_letters if c not in equation][:width]
    if min(widths) < 0 or len(free) < width:
        return None
    spelled_terms = [term.replace(_ELLIPSIS, "".join(free[width - k:]))
                     for term, k in zip(terms, widths, strict=True)]
    if arrow:
        out = rhs.replace(_ELLIPSIS, "".join(free))
    else:  # torch's implicit output: the ellipsis' dims, then the letters used once, sorted
        letters = [c for c in lhs if c.isalpha()]
        out = "".join(free) + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    if any(len(term) != rank for term, rank in zip(spelled_terms, ranks, strict=True)):
        return None
    return ",".join(spelled_terms) + "->" + out


def einsum_as_matmul(equation: str, operands: list[torch.Tensor], path=None):
    """The decomposition of `aten.einsum` (see the module's docstring); NotImplemented where
    torch-mlir keeps it."""
    if len(operands) != 2:
        return NotImplemented
    explicit = spelled(equation, [o.dim() for o in operands])
    if explicit is None:
        return NotImplemented
    lhs, _, out = explicit.partition("->")
    ta, tb = lhs.split(",")
    if any(len(set(term)) != len(term) for term in (ta, tb, out)):
        return NotImplemented
    a, ta = _summed_out(operands[0], ta, set(tb) | set(out))
    b, tb = _summed_out(operands[1], tb, set(ta) | set(out))
    batch = [c for c in out if c in ta and c in tb]
    left = [c for c in out if c in ta and c not in tb]
    right = [c for c in out if c in tb and c not in ta]
    contracted = [c for c in ta if c in tb and c not in out]
    a = a.permute([ta.index(c) for c in batch + left + contracted])
    b = b.permute([tb.index(c) for c in batch + contracted + right])
    sizes = {c: a.shape[i] for i, c in enumerate(batch + left + contracted)}
    for i, c in enumerate(batch + contracted + right):
        if c not in sizes or _one(sizes[c]):  # a static 1 broadcasts
            sizes[c] = b.shape[i]
    batch_sizes = [sizes[c] for c in batch]
    a = a.expand(*batch_sizes, *a.shape[len(batch):])
    b = b.expand(*batch_sizes, *b.shape[len(batch):])
    product = torch.bmm(
        a.reshape(_prod(batch_sizes), _prod(sizes[c] for c in left),
                  _prod(sizes[c] for c in contracted)),
        b.reshape(_prod(batch_sizes), _prod(sizes[c] for c in contracted),
                  _prod(sizes[c] for c in right)))
    kept = batch + left + right
    product = product.reshape([sizes[c] for c in kept])
    return product.permute([kept.index(c) for c in out])


def _summed_out(x: torch.Tensor, term: str, kept: set[str]) -> tuple[torch.Tensor, str]:
    """`x` summed over the letters of `term` not in `kept`, and the term left."""
    dropped = [i for i, c in enumerate(term) if c not in kept]
    if not dropped:
        return x, term
    return x.sum(dropped), "".join(c for c in term if c in kept)


def _one(size) -> bool:
    return isinstance(size, int) and size == 1


def _prod(sizes) -> int:
    return functools.reduce(operator.mul, sizes, 1)
