"""`dync-collapse-views`: a view that merges dims of a tensor with two or more dynamic dims is
taken one `flatten` at a time.

Reads: `torch.aten.view`, `reshape` and `_unsafe_view` whose input has two or more dynamic
dims and whose result merges runs of consecutive input dims (each result dim the product of
a run, as the shape bindings of input and result state it), one run holding a dynamic dim
and another dim, in every function.
Writes: in its place one `torch.aten.flatten.using_ints` per run of two or more dims (the last
run first, so the earlier dims keep their positions), each bound from the input's binding.

Why: torch-mlir's lowering of `aten.view` in IREE 3.13 pairs the result's dynamic dims with
the input's one to one: `[s, b, 2, 16] -> [s*b, 32]` (the heads of `nn.MultiheadAttention`
merged back, `F.multi_head_attention_forward`, over a dynamic batch and length) became a
collapse of `?x1x2x16`, asserting at run time that the batch is 1 or returning `s` rows
instead of `s*b` (`lit/upstream/torch-view-merging-dynamic-dims.mlir`): every
`nn.MultiheadAttention` and `nn.TransformerEncoderLayer` over a dynamic batch and a dynamic
length returned wrong values, or failed at the first call. `flatten.using_ints` names the
dims it merges, and lowers right. No paper section: a repair at the boundary to torch-mlir.
"""

from __future__ import annotations

import sympy
from iree.compiler import ir

from ..dialects.symbolic import bound_dims, type_dims
from ..dialects.torch_ops import (
    TorchBuilder,
    bind_from,
    bindings,
    vtensor_type,
)
from ..dialects.walk import nested_ops
from .pipeline import Pass

VIEWS = ("torch.aten.view", "torch.aten.reshape", "torch.aten._unsafe_view")


def _runs(source: tuple[sympy.Expr, ...], result: tuple[sympy.Expr, ...]) \
        -> list[tuple[int, int]] | None:
    """For each result dim, the (first, last) input dims it is the product of; None where the
    view is no such merge."""
    runs, i = [], 0
    for dim in result:
        first, product = i, sympy.Integer(1)
        while i < len(source):
            product *= source[i]
            i += 1
            if sympy.expand(product - dim) == 0:
                break
        else:
            return None
        runs.append((first, i - 1))
    return runs if i == len(source) else None


def _merges(op: ir.Operation) -> list[tuple[int, int]] | None:
    """The runs of input dims view `op` merges, where it is one this pass rewrites."""
    if op.name not in VIEWS:
        return None
    x = op.operands[0]
    dims = type_dims(x.type)
    if dims is None or sum(d is None for d in dims) < 2 or type_dims(op.results[0].type) is None:
        return None
    given, made = bindings(x)[:1], bindings(op.results[0])[:1]
    if not given or not made:
        return None
    runs = _runs(bound_dims(given[0]), bound_dims(made[0]))
    if runs is None:
        return None
    merged = [(a, b) for a, b in runs if b > a]
    if not any(None in dims[a:b + 1] for a, b in merged):
        return None
    return merged


def _flattened(op: ir.Operation, runs: list[tuple[int, int]]) -> ir.Value:
    b = TorchBuilder(op)
    value = op.operands[0]
    for step, (first, last) in enumerate(reversed(runs)):
        dims = list(type_dims(value.type))
        run = dims[first:last + 1]
        merged = None if None in run else int(sympy.prod(run))
        shape = dims[:first] + [merged] + dims[last + 1:]
        flat = b("torch.aten.flatten.using_ints", vtensor_type(value.type, shape), value,
                 b.int(first), b.int(last))

        def merge(e, first=first, last=last):
            product = e[first]
            for factor in e[first + 1:last + 1]:
                product = product * factor
            return e[:first] + [product] + e[last + 1:]

        if step < len(runs) - 1:  # the last takes the view's own binding with its uses
            bind_from(flat, value, merge, b.ip)
        value = flat
    return value


class CollapseViews(Pass):
    name = "dync-collapse-views"
    summary = "views merging dims of tensors with several dynamic dims as one flatten at a time"

    def run(self, module: ir.Operation) -> None:
        found = [(op, runs) for op in nested_ops(module) if (runs := _merges(op))]
        with module.context, ir.Location.unknown():
            for op, runs in found:
                op.results[0].replace_all_uses_with(_flattened(op, runs))
                op.erase()
