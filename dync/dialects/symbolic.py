"""Symbolic dims of dync IR as sympy expressions: SoD²'s lattice, bounds, and the affine maps
of `torch.bind_symbolic_shape`.

A dim is one of (SoD² §4.1, digest-sod2.md 3.3):

* ``None`` — undefined (⊤, nothing known yet);
* a sympy ``Integer`` — a known constant;
* a sympy ``Symbol`` — a symbolic constant (an input dim, or a fresh symbol for a value known
  only at run time such as a `nonzero` count);
* any other sympy expression over symbols — an op-inferred constant (``floor((h - 1)/2) + 1``);
* `NAC` — not a constant (⊥): nothing can be said.

Integer division is ``sympy.floor(a / b)`` so that sympy's own canonicalization decides
equalities; `to_affine` turns it back into ``floordiv``.
"""

from __future__ import annotations

import itertools
import math
import re

import sympy
from iree.compiler import ir

from ..shape_expr import parse_shape_expr


class _NotAConstant:
    """⊥ of the lattice: a dim about which nothing is known."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "nac"


NAC = _NotAConstant()
Dim = sympy.Expr | _NotAConstant | None
_VTENSOR = re.compile(r"^!torch\.vtensor<\[([^\]]*)\]")
_VTENSOR_ELEMENT = re.compile(r"^!torch\.vtensor<\[[^\]]*\],([^>]+)>$")


def symbol(name: str) -> sympy.Symbol:
    """The sympy symbol of a shape symbol (a positive integer)."""
    return sympy.Symbol(name, integer=True, positive=True)


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def parse_dim(text: str, evaluate: bool = True) -> sympy.Expr:
    """A dim written as text (``"32*h"``, ``"Max(2*s, 4)"``) as a sympy expression over shape
    symbols (`symbol`), parsed by `dync.shape_expr`'s grammar (IR may come from a file)."""
    return parse_shape_expr(text, symbol=symbol, evaluate=evaluate)


def is_symbol_name(text: str) -> bool:
    return _IDENT.fullmatch(text) is not None


def narrow_range(ranges: dict[str, tuple[int, int]], symbolic_int: ir.Operation) -> None:
    """Intersect `ranges[name]` with the range a `torch.symbolic_int` declares for `name`."""
    name = ir.StringAttr(symbolic_int.attributes["symbol_name"]).value
    lo = ir.IntegerAttr(symbolic_int.attributes["min_val"]).value
    hi = ir.IntegerAttr(symbolic_int.attributes["max_val"]).value
    old = ranges.get(name, (lo, hi))
    ranges[name] = (max(lo, old[0]), min(hi, old[1]))


def declarations_first(block: ir.Block) -> ir.Operation | None:
    """Move `block`'s `torch.symbolic_int` declarations to its top (they take no operands) and
    return the first op after them. The exporter declares them after the literals, so a
    binding or a size computed before the first literal (an argument's, in a specialized
    or bucketed copy) would otherwise use a later declaration."""
    ops = [op.operation for op in block.operations]
    first = next((op for op in ops if op.name != "torch.symbolic_int"), None)
    if first is not None:
        for op in ops[ops.index(first) + 1:]:
            if op.name == "torch.symbolic_int":
                op.move_before(first)
    return first


def bound_dims(bind: ir.Operation) -> tuple[sympy.Expr, ...]:
    """The dims a `torch.bind_symbolic_shape` gives its tensor, over its symbols' names."""
    names = [symbol(ir.StringAttr(v.owner.attributes["symbol_name"]).value)
             for v in list(bind.operands)[1:]]
    amap = ir.AffineMapAttr(bind.attributes["shape_expressions"]).value
    return tuple(from_affine(e, names) for e in amap.results)


def type_dims(t: ir.Type) -> tuple[int | None, ...] | None:
    """The dims of a tensor type (None per dynamic dim), or None if it is unranked or not a
    tensor."""
    t = t.maybe_downcast()
    if isinstance(t, ir.RankedTensorType):
        ranked = t
        return tuple(None if ranked.is_dynamic_dim(i) else ranked.get_dim_size(i)
                     for i in range(ranked.rank))
    match = _VTENSOR.match(str(t))
    if match is None:
        return None
    text = match.group(1).strip()
    return tuple(None if d == "?" else int(d) for d in text.split(",")) if text else ()


# The floating-point element types as `element_type` spells them.
FLOAT_ELEMENTS = ("f16", "bf16", "f32", "f64")


def element_type(t: ir.Type) -> str | None:
    """The element type of a ranked tensor type as text (``f32``, ``si64``), or None if `t` is
    not one."""
    t = t.maybe_downcast()
    if isinstance(t, ir.RankedTensorType):
        return str(t.element_type)
    match = _VTENSOR_ELEMENT.match(str(t))
    return match.group(1) if match else None


def is_tensor(t: ir.Type) -> bool:
    return isinstance(t.maybe_downcast(), ir.RankedTensorType) or str(t).startswith("!torch.vtensor")


def known(d: Dim) -> bool:
    return isinstance(d, sympy.Expr)


def floordiv(a: sympy.Expr, b: sympy.Expr) -> sympy.Expr:
    return sympy.floor(a / b)


def ceildiv(a: sympy.Expr, b: sympy.Expr) -> sympy.Expr:
    return sympy.ceiling(a / b)


def quotient(division: sympy.floor | sympy.ceiling) -> tuple[sympy.Expr, sympy.Expr]:
    """The expanded numerator and the denominator of the quotient a floor or ceiling takes."""
    numerator, denominator = sympy.fraction(sympy.together(division.args[0]))
    return sympy.expand(numerator), denominator


def bounds(expr: sympy.Expr, ranges: dict[str, tuple[int, int]]) -> tuple[int, int] | None:
    """[min, max] of `expr` over the symbols' ranges, evaluated at the corners of the box: exact
    for the monotone expressions shape functions produce (sums, products of sizes, floor
    divisions). None when a symbol has no range."""
    if isinstance(expr, sympy.Integer):
        return int(expr), int(expr)
    free = sorted(expr.free_symbols, key=lambda s: s.name)
    if len(free) > 8 or any(s.name not in ranges for s in free):
        return None
    values = []
    for corner in itertools.product(*(ranges[s.name] for s in free)):
        v = expr.subs(dict(zip(free, corner, strict=True)))
        if not v.is_number:
            return None
        values.append(int(sympy.floor(v)))
    return min(values), max(values)


def nonpositive_at_each(expr: sympy.Expr, ranges: dict[str, tuple[int, int]],
                        limit: int) -> bool:
    """Whether `expr <= 0` at every value of its symbols in their ranges, tried one by one
    (floor divisions and remainders are not monotone enough to trust `bounds`' corners); False
    when a symbol has no range or the symbols take more than `limit` values together."""
    free = sorted(expr.free_symbols, key=lambda s: s.name)
    if any(s.name not in ranges for s in free):
        return False
    box = [ranges[s.name] for s in free]
    # counted from the bounds: len(range(0, 2**63)) for an unbounded dim overflows ssize_t
    if math.prod(high - low + 1 for low, high in box) > limit:
        return False
    return all(expr.subs(dict(zip(free, values, strict=True))) <= 0
               for values in itertools.product(*(range(low, high + 1) for low, high in box)))


def tighten(expr: sympy.Expr, ranges: dict[str, tuple[int, int]]) -> sympy.Expr:
    """`expr` with each max/min whose operands the symbols' ranges order replaced by the
    winning operand (a slice clamp `max(n - 2, 0)` with n >= 2 is `n - 2`)."""
    if not expr.has(sympy.Max, sympy.Min):
        return expr

    def pick(e: sympy.Expr) -> sympy.Expr:
        if not isinstance(e, sympy.Max | sympy.Min):
            return e
        a, *rest = e.args
        for b in rest:
            gap = bounds(a - b, ranges)
            if gap is None:
                return e
            if isinstance(e, sympy.Max):
                a = a if gap[0] >= 0 else b if gap[1] <= 0 else None
            else:
                a = a if gap[1] <= 0 else b if gap[0] >= 0 else None
            if a is None:
                return e
        return a

    return expr.replace(lambda e: isinstance(e, sympy.Max | sympy.Min), pick)


def from_affine(expr: ir.AffineExpr, symbols: list[sympy.Symbol]) -> sympy.Expr:
    """The sympy form of an affine expression whose symbol `i` is `symbols[i]`."""
    expr = expr.maybe_downcast()
    if isinstance(expr, ir.AffineConstantExpr):
        return sympy.Integer(expr.value)
    if isinstance(expr, ir.AffineSymbolExpr):
        return symbols[expr.position]
    for kind, combine in (
        (ir.AffineAddExpr, lambda a, b: a + b),
        (ir.AffineMulExpr, lambda a, b: a * b),
        (ir.AffineFloorDivExpr, floordiv),
        (ir.AffineCeilDivExpr, ceildiv),
        (ir.AffineModExpr, sympy.Mod),
    ):
        if isinstance(expr, kind):
            return combine(from_affine(expr.lhs, symbols), from_affine(expr.rhs, symbols))
    raise ValueError(f"unsupported affine expression {expr}")


def to_affine(expr: sympy.Expr, symbols: list[str]) -> ir.AffineExpr | None:
    """`expr` as an affine expression over `symbols` (positions in that list), or None when it
    is not affine (max/min, division by a symbol, ...). Needs an active context."""
    if isinstance(expr, sympy.Integer):
        return ir.AffineConstantExpr.get(int(expr))
    if isinstance(expr, sympy.Symbol):
        return ir.AffineSymbolExpr.get(symbols.index(expr.name)) if expr.name in symbols else None
    if isinstance(expr, sympy.Add | sympy.Mul):
        numerator, denominator = sympy.fraction(sympy.together(expr))
        if denominator != 1:
            return None
        parts = [to_affine(a, symbols) for a in numerator.args]
        if any(p is None for p in parts):
            return None
        result = parts[0]
        for p in parts[1:]:
            result = result + p if isinstance(numerator, sympy.Add) else result * p
        return result
    if isinstance(expr, sympy.floor | sympy.ceiling):
        numerator, denominator = quotient(expr)
        if not isinstance(denominator, sympy.Integer):
            return None
        lhs = to_affine(numerator, symbols)
        if lhs is None:
            return None
        d = ir.AffineConstantExpr.get(int(denominator))
        get = ir.AffineFloorDivExpr.get if isinstance(expr, sympy.floor) else ir.AffineCeilDivExpr.get
        return get(lhs, d)
    if isinstance(expr, sympy.Mod) and isinstance(expr.args[1], sympy.Integer):
        lhs = to_affine(expr.args[0], symbols)
        return None if lhs is None else ir.AffineModExpr.get(lhs, to_affine(expr.args[1], symbols))
    return None


def merged_runs(source: tuple[sympy.Expr, ...] | list[sympy.Expr],
                result: tuple[sympy.Expr, ...] | list[sympy.Expr]) -> list[tuple[int, int]] | None:
    """For each dim of a view's `result`, the (first, last) dims of its `source` it is the
    product of (each dim an expression over the same symbols); None where the view is no such
    merge (a split, a regrouping)."""
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
