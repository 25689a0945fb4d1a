"""torch.export's sympy shape expressions -> MLIR (semi-)affine expressions.

Covers what shape arithmetic produces in practice: sums, products, integer powers, floor
and ceil division (conv/pool output sizes), modulo, and sizes scaled by a constant factor
(`F.interpolate(scale_factor=0.5)`: `TruncToInt(0.5*ToFloat(s))`, see `integral`). Anything
else (`Max`, `Min`, `Where`, non-integer division) is not affine: `NotAffine` is raised and
the caller leaves that value's dims unbound (dynamic, with no symbolic fact) instead of
failing the import.
"""

from __future__ import annotations

import fractions
import math

import sympy
from iree.compiler import ir
from torch.utils._sympy import functions as tf


class NotAffine(Exception):
    pass


def size_range(size) -> tuple[int, int | None]:
    """The least and the largest value (None: unbounded) a size may take: an int, or a
    backed symbolic size's declared range."""
    if not hasattr(size, "node"):
        return int(size), int(size)
    bounds = size.node.shape_env.bound_sympy(size.node.expr)
    return int(bounds.lower), int(bounds.upper) if bounds.upper.is_finite else None


def to_affine(expr: sympy.Expr, symbols: dict[str, ir.AffineExpr]) -> ir.AffineExpr:
    expr = integral(expr)
    if isinstance(expr, int) or (isinstance(expr, sympy.Expr) and expr.is_Integer):
        return ir.AffineConstantExpr.get(int(expr))
    if isinstance(expr, sympy.Symbol):
        return symbols[str(expr)]
    args = [to_affine(a, symbols) for a in getattr(expr, "args", ())]
    if isinstance(expr, sympy.Add):
        return _fold(ir.AffineAddExpr.get, args)
    if isinstance(expr, sympy.Mul):
        return _fold(ir.AffineMulExpr.get, args)
    if isinstance(expr, sympy.Pow | tf.PowByNatural):
        base, exponent = expr.args
        if not (exponent.is_Integer and int(exponent) > 0):
            raise NotAffine(f"power {expr}")
        return _fold(ir.AffineMulExpr.get, [args[0]] * int(exponent))
    if isinstance(expr, tf.FloorDiv):
        return ir.AffineFloorDivExpr.get(*args)
    if isinstance(expr, tf.CeilDiv):
        return ir.AffineCeilDivExpr.get(*args)
    if isinstance(expr, sympy.Mod | tf.Mod | tf.PythonMod):
        return ir.AffineModExpr.get(*args)
    raise NotAffine(f"{type(expr).__name__}: {expr}")


def _fold(make, args: list[ir.AffineExpr]) -> ir.AffineExpr:
    result = args[0]
    for a in args[1:]:
        result = make(result, a)
    return result


_ROUNDINGS = {tf.TruncToInt: tf.FloorDiv, tf.FloorToInt: tf.FloorDiv, tf.CeilToInt: tf.CeilDiv}


def integral(expr: sympy.Expr) -> sympy.Expr:
    """`expr` with sizes rounded from float arithmetic, `TruncToInt(1.5*ToFloat(s))`, in
    integers, `FloorDiv(3*s, 2)`, where each float constant is the float nearest to a
    fraction of small denominator (the export's frontend rewrites the graph's own size
    arithmetic the same way). Truncation is flooring here: sizes are not negative."""
    if not isinstance(expr, sympy.Basic):
        return expr
    return expr.replace(lambda e: type(e) in _ROUNDINGS, _integer_division)


def _integer_division(rounded: sympy.Expr) -> sympy.Expr:
    (inner,) = rounded.args
    p, q = sympy.fraction(sympy.together(_rational(inner)))
    if not (p.is_integer and q.is_Integer and q > 0):
        return rounded
    return _ROUNDINGS[type(rounded)](p, q) if q != 1 else p


def nearest_fraction(value: float) -> fractions.Fraction | None:
    """The fraction of denominator below 2**16 whose nearest float is `value` (0.7 -> 7/10),
    if any: what a float constant in size arithmetic stands for."""
    if not math.isfinite(value):
        return None
    near = fractions.Fraction(value).limit_denominator(1 << 16)
    return near if float(near) == value else None


def _rational(expr: sympy.Expr) -> sympy.Expr:
    if isinstance(expr, tf.ToFloat):
        return expr.args[0]
    if isinstance(expr, sympy.Float):
        near = nearest_fraction(float(expr))
        return sympy.Rational(near.numerator, near.denominator) if near is not None else expr
    if isinstance(expr, sympy.Add | sympy.Mul):
        return expr.func(*map(_rational, expr.args))
    if isinstance(expr, tf.FloatTrueDiv | tf.IntTrueDiv):
        num, den = map(_rational, expr.args)
        return num / den if den.is_Rational and den != 0 else expr
    return expr
