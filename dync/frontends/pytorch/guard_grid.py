"""A guard of torch's shape environment evaluated at many sizes at once.

`guards.holds_in` checks each guard of a trace at up to `GUARD_SAMPLES` points of the dims'
ranges, and the range search in `guards.guarded_ranges` one size at a time. Substituting a
point into a sympy expression (`xreplace`) rebuilds and re-simplifies the whole tree: a
Swin-style window round trip's 130 guards over 4096 points took 17 of its 48 s of import.
`truth` walks the tree once over arrays of exact Python numbers (`object` arrays: sizes'
products never overflow), for the integer arithmetic, the comparisons and the logic torch's
guards are made of; anything else (fractions, floats, torch's float and bitwise functions, a
`Mod` of a negative) returns None and the caller substitutes point by
point as before, so the answers are sympy's.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Sequence

import numpy as np
import sympy
from torch.utils._sympy import functions as torch_sympy


class _NotExact(Exception):
    """A node `truth` does not evaluate the way sympy would (the caller falls back)."""


_FOLDS = {
    sympy.Add: operator.add,
    sympy.Mul: operator.mul,
    torch_sympy.Max: np.maximum,
    torch_sympy.Min: np.minimum,
    sympy.Max: np.maximum,
    sympy.Min: np.minimum,
}
_COMPARISONS = {
    sympy.Eq: operator.eq,
    sympy.Ne: operator.ne,
    sympy.Lt: operator.lt,
    sympy.Le: operator.le,
    sympy.Gt: operator.gt,
    sympy.Ge: operator.ge,
}
_LOGIC = {sympy.And: np.logical_and, sympy.Or: np.logical_or}


def truth(expr: sympy.Basic, columns: dict[sympy.Symbol, Sequence[int]]) -> np.ndarray | None:
    """Whether the boolean `expr` holds at each point, the points given as one column of
    sizes per symbol (all of one length); None where `expr` is not boolean, names a symbol
    without a column, or has a node evaluated here only approximately or not at all."""
    if not isinstance(expr, sympy.logic.boolalg.Boolean):
        return None
    arrays = {s: np.array([int(v) for v in column], dtype=object) for s, column in columns.items()}
    length = {len(a) for a in arrays.values()}
    if len(length) > 1:
        raise ValueError("columns of different lengths")
    try:
        value = _value(expr, arrays)
    except (_NotExact, ArithmeticError, TypeError, ValueError, KeyError):
        return None
    return np.broadcast_to(np.asarray(value, dtype=bool), (length.pop() if length else 1,))


def _value(expr: sympy.Basic, arrays: dict[sympy.Symbol, np.ndarray]):
    if isinstance(expr, sympy.Symbol):
        return arrays[expr]
    if expr is sympy.true or expr is sympy.false:
        return bool(expr)
    if isinstance(expr, sympy.Integer):
        return int(expr)
    kind = type(expr)
    if kind in _COMPARISONS or kind in _LOGIC or kind is sympy.Not:
        args = [np.asarray(_value(a, arrays)) for a in expr.args]
        if kind in _COMPARISONS:
            return np.asarray(_COMPARISONS[kind](*args), dtype=bool)
        if kind is sympy.Not:
            return np.logical_not(args[0].astype(bool))
        return functools.reduce(_LOGIC[kind], (a.astype(bool) for a in args))
    args = [_value(a, arrays) for a in expr.args]
    if kind in _FOLDS:
        return functools.reduce(_FOLDS[kind], args)
    if kind is sympy.Pow:
        if not isinstance(expr.exp, sympy.Integer) or expr.exp < 0:
            raise _NotExact(expr)
        return args[0] ** int(expr.exp)
    if issubclass(kind, torch_sympy.FloorDiv):  # CleanDiv too: a floor division known exact
        return _floor_div(*args)
    if kind is torch_sympy.PythonMod:
        return args[0] % _nonzero(args[1])
    if kind is torch_sympy.Mod:  # defined on p >= 0, q >= 1 only (sympy raises elsewhere)
        if np.any(np.asarray(args[0]) < 0) or np.any(np.asarray(args[1]) < 1):
            raise _NotExact(expr)
        return args[0] % args[1]
    raise _NotExact(expr)


def _floor_div(base, divisor):
    return base // _nonzero(divisor)


def _nonzero(divisor):
    if np.any(np.asarray(divisor) == 0):
        raise ZeroDivisionError("division by zero")
    return divisor
