"""`dync-rdp` rules of the layout ops (ISDOS, or ISVDOS where sizes are values): views,
reshapes, permutes, slices, concatenation, splitting, padding, repetition.
"""

from __future__ import annotations

import sympy

from ....dialects.symbolic import NAC, Dim, ceildiv, floordiv, known
from . import INT64_MAX, UNDEF, Fact, _axis, _product, iconst, ilist, ival, rule

# --- ISDOS / ISVDOS: layout ------------------------------------------------------------------

@rule("torch.aten.view", "torch.aten.reshape", "torch.aten._unsafe_view", shape_operands=(1,))
def _view(op, ins, ctx) -> Fact:
    x, sizes = ins[0], ilist(ins[1])
    if sizes is None:
        return UNDEF
    if sizes.count(-1) + sum(not known(d) for d in sizes) == 1:
        # a view keeps the element count: the one size not given (-1, or read from a
        # tensor at run time) is the count divided by the others
        sizes = [-1 if not known(d) else d for d in sizes]
        rest = [d for d in sizes if d != -1]
        total, others = _product(x.shape or [NAC]), _product(rest)
        inferred = NAC
        if known(total) and known(others):
            quotient = sympy.cancel(total / others)
            inferred = quotient if sympy.fraction(sympy.together(quotient))[1] == 1 else \
                floordiv(total, others)
        sizes = [inferred if d == -1 else d for d in sizes]
    return Fact(shape=tuple(sizes))


@rule("torch.aten.expand", "torch.aten.broadcast_to", shape_operands=(1,))
def _expand(op, ins, ctx) -> Fact:
    x, sizes = ins[0], ilist(ins[1])
    if sizes is None or x.shape is None:
        return UNDEF
    lead = len(sizes) - len(x.shape)
    return Fact(shape=tuple(x.shape[i - lead] if d == -1 else d for i, d in enumerate(sizes)))


@rule("torch.aten.permute")
def _permute(op, ins, ctx) -> Fact:
    x, order = ins[0], ilist(ins[1])
    if x.shape is None or order is None or not all(isinstance(d, sympy.Integer) for d in order):
        return UNDEF
    return Fact(shape=tuple(x.shape[_axis(int(d), x.rank)] for d in order))


@rule("torch.aten.transpose.int")
def _transpose(op, ins, ctx) -> Fact:
    x = ins[0]
    if x.shape is None:
        return UNDEF
    a, b = (_axis(iconst(f), x.rank) for f in ins[1:3])
    if a is None or b is None:
        return UNDEF
    dims = list(x.shape)
    dims[a], dims[b] = dims[b], dims[a]
    return Fact(shape=tuple(dims))


@rule("torch.aten.t")
def _t(op, ins, ctx) -> Fact:
    return Fact(shape=None if ins[0].shape is None else tuple(reversed(ins[0].shape)))


@rule("torch.aten.unsqueeze")
def _unsqueeze(op, ins, ctx) -> Fact:
    x = ins[0]
    d = None if x.shape is None else _axis(iconst(ins[1]), x.rank + 1)
    if d is None:
        return UNDEF
    return Fact(shape=x.shape[:d] + (sympy.Integer(1),) + x.shape[d:])


@rule("torch.aten.squeeze.dim", "torch.aten.select.int")
def _drop_dim(op, ins, ctx) -> Fact:
    x = ins[0]
    d = None if x.shape is None else _axis(iconst(ins[1]), x.rank)
    if d is None:
        return UNDEF
    if op.name.endswith("squeeze.dim") and x.shape[d] != 1:
        return Fact(shape=x.shape) if is_int(x.shape[d]) else UNDEF
    return Fact(shape=x.shape[:d] + x.shape[d + 1:])


def is_int(d: Dim) -> bool:
    return isinstance(d, sympy.Integer)


@rule("torch.aten.flatten.using_ints")
def _flatten(op, ins, ctx) -> Fact:
    x = ins[0]
    if x.shape is None:
        return UNDEF
    rank = max(x.rank, 1)
    start, end = (_axis(iconst(f), rank) for f in ins[1:3])
    if start is None or end is None or x.rank == 0:
        return Fact(shape=(sympy.Integer(1),)) if x.rank == 0 else UNDEF
    return Fact(shape=x.shape[:start] + (_product(x.shape[start:end + 1]),) + x.shape[end + 1:])


@rule("torch.aten.slice.Tensor", shape_operands=(2, 3, 4))
def _slice(op, ins, ctx) -> Fact:
    x = ins[0]
    d = None if x.shape is None else _axis(iconst(ins[1]), x.rank)
    if d is None:
        return UNDEF
    size = x.shape[d]
    start = sympy.Integer(0) if ins[2].value is None else ival(ins[2])
    end = size if ins[3].value is None else ival(ins[3])
    step = ival(ins[4])
    if not all(known(v) for v in (size, start, end, step)):
        # bounds only known at run time (a length read from a tensor): a fresh symbol, at most
        # the sliced dim (SoD² §4.1's runtime symbol for a not-a-constant)
        length = ctx.fresh((d,), size) if known(size) else NAC
        return Fact(shape=x.shape[:d] + (length,) + x.shape[d + 1:])
    start, end = (_clamp_index(v, size) for v in (start, end))
    length = sympy.Max(ceildiv(end - start, step), 0)
    length = length.args[1] if isinstance(length, sympy.Max) and _nonneg(length.args[1]) else length
    return Fact(shape=x.shape[:d] + (length,) + x.shape[d + 1:])


def _nonneg(e: sympy.Expr) -> bool:
    return bool(e.is_nonnegative)


def _clamp_index(v: sympy.Expr, size: sympy.Expr) -> sympy.Expr:
    if isinstance(v, sympy.Integer):
        if v >= INT64_MAX // 2:
            return size
        if v < 0:
            v = size + v
            return v if not isinstance(v, sympy.Integer) else sympy.Max(v, 0)
        if isinstance(size, sympy.Integer):
            return sympy.Min(v, size)
        return v
    return v if v == size else sympy.Min(v, size)


@rule("torch.aten.narrow", shape_operands=(3,))
def _narrow(op, ins, ctx) -> Fact:
    x = ins[0]
    d = None if x.shape is None else _axis(iconst(ins[1]), x.rank)
    if d is None:
        return UNDEF
    length = ival(ins[3])
    if not known(length):
        length = ctx.fresh((d,), x.shape[d]) if known(x.shape[d]) else NAC
    return Fact(shape=x.shape[:d] + (length,) + x.shape[d + 1:])


@rule("torch.aten.cat", "torch.aten.stack")
def _cat(op, ins, ctx) -> Fact:
    parts = ins[0].items
    if not parts or any(p.shape is None for p in parts):
        return UNDEF
    stack = op.name.endswith("stack")
    rank = parts[0].rank + (1 if stack else 0)
    d = _axis(iconst(ins[1]), rank)
    if d is None:
        return UNDEF
    if stack:
        first = parts[0].shape
        return Fact(shape=first[:d] + (sympy.Integer(len(parts)),) + first[d:])
    shapes = [p.shape for p in parts if not (p.rank == 1 and p.shape[0] == 0)]  # cat skips []
    if not shapes:
        return Fact(shape=parts[0].shape)
    dims = []
    for i in range(len(shapes[0])):
        column = [s[i] for s in shapes]
        if i == d:
            dims.append(sympy.Add(*column) if all(known(c) for c in column) else NAC)
        else:
            dims.append(next((c for c in column if is_int(c)), column[0]))
    return Fact(shape=tuple(dims))


@rule("torch.aten.split.Tensor", "torch.aten.unbind.int", "torch.aten.split_with_sizes")
def _split(op, ins, ctx) -> Fact:
    x = ins[0]
    unbind = op.name.endswith("unbind.int")
    d = None if x.shape is None else _axis(iconst(ins[1] if unbind else ins[2]), x.rank)
    if d is None or not is_int(x.shape[d]):
        return UNDEF
    total = int(x.shape[d])
    if unbind:
        return Fact(items=tuple(Fact(shape=x.shape[:d] + x.shape[d + 1:]) for _ in range(total)))
    if op.name.endswith("split_with_sizes"):
        sizes = ilist(ins[1]) or []
    else:
        step = iconst(ins[1])
        if not step:
            return UNDEF
        sizes = [sympy.Integer(min(step, total - k)) for k in range(0, total, step)]
    return Fact(items=tuple(Fact(shape=x.shape[:d] + (s,) + x.shape[d + 1:]) for s in sizes))


@rule("torch.aten.constant_pad_nd", "torch.aten.pad")
def _pad(op, ins, ctx) -> Fact:
    x, pads = ins[0], ilist(ins[1])
    if x.shape is None or pads is None:
        return UNDEF
    dims = list(x.shape)
    for k in range(len(pads) // 2):
        i = len(dims) - 1 - k
        low, high = pads[2 * k], pads[2 * k + 1]
        dims[i] = dims[i] + low + high if known(dims[i]) and known(low) and known(high) else NAC
    return Fact(shape=tuple(dims))


@rule("torch.aten.repeat", shape_operands=(1,))
def _repeat(op, ins, ctx) -> Fact:
    x, times = ins[0], ilist(ins[1])
    if x.shape is None or times is None:
        return UNDEF
    lead = len(times) - x.rank
    return Fact(shape=tuple(t * (x.shape[i - lead] if i >= lead else 1) if known(t) else NAC
                            for i, t in enumerate(times)))
