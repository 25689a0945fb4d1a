"""torch.export's sympy shape expressions -> MLIR (semi-)affine expressions.

Covers what shape arithmetic produces in practice: sums, products, integer powers, floor
and ceil division (conv/pool output sizes), modulo. Anything else (`Max`, `Min`, `Where`,
non-integer division) is not affine: `NotAffine` is raised and the caller leaves that
value's dims unbound (dynamic, with no symbolic fact) instead of failing the import.
"""

from __future__ import annotations

import sympy
from iree.compiler import ir
from torch.utils._sympy import functions as tf


class NotAffine(Exception):
    pass


def to_affine(expr: sympy.Expr, symbols: dict[str, ir.AffineExpr]) -> ir.AffineExpr:
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
