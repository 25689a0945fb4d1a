"""Comparing symbolic sizes over the symbols' ranges: a fixed set of sample points of the box
the ranges span, every expression evaluated there with numpy. Exact for the monotone sizes
shape functions give; used where sympy cannot decide an order (Max of polynomials)."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Mapping

import numpy as np
import sympy
from iree.compiler import ir

from ..dialects import dync_ir
from ..dialects.symbolic import narrow_range, symbol
from ..dialects.walk import nested_ops
from ..errors import PassFailure

# Range assumed for a symbol no `torch.symbolic_int` or ``dync.symbols`` bounds.
UNBOUNDED = (1, 4096)
_MAX_CORNER_SYMBOLS = 6
_RANDOM_SAMPLES = 48
_NUMPY = {sympy.Add: lambda *a: functools.reduce(np.add, a),
          sympy.Mul: lambda *a: functools.reduce(np.multiply, a),
          sympy.Pow: np.power,
          sympy.Max: lambda *a: functools.reduce(np.maximum, a),
          sympy.Min: lambda *a: functools.reduce(np.minimum, a),
          sympy.floor: lambda a: np.floor(_snapped(a)),
          sympy.ceiling: lambda a: np.ceil(_snapped(a)), sympy.Mod: np.mod}


def _snapped(values: np.ndarray) -> np.ndarray:
    """`values` with those a rounding error away from an integer made that integer: sizes are
    exact rationals, and floor(4/7 + 3/7) must be 1, not the 0 floats give (a padded size's
    number of windows, then divided by)."""
    nearest = np.rint(values)
    close = np.abs(values - nearest) <= 1e-9 * np.maximum(1.0, np.abs(values))
    return np.where(close, nearest, values)


def symbol_ranges(module: ir.Operation) -> dict[str, tuple[int, int]]:
    """Each symbol's range: ``dync.symbols``, narrowed by every `torch.symbolic_int`."""
    ranges = {n: (s.min, s.max) for n, s in dync_ir.read_symbols(module).items()}
    for op in nested_ops(module):
        if op.name == "torch.symbolic_int":
            narrow_range(ranges, op)
    return ranges


class Sampler:
    """Points of the box the symbols' ranges span, at which sizes are compared: all corners
    (or, past 6 symbols, the all-min and all-max corners and each symbol alone at its
    extremes), midpoints and seeded random points."""

    def __init__(self, names: tuple[str, ...], ranges: Mapping[str, tuple[int, int]]):
        self.names = names
        self.symbols = [symbol(n) for n in names]
        self._ranges = {n: ranges.get(n, UNBOUNDED) for n in names}
        box = [self._ranges[n] for n in names]
        points: list[tuple[int, ...]] = []
        if len(names) <= _MAX_CORNER_SYMBOLS:
            points += itertools.product(*box)
        else:
            lows, highs = [lo for lo, _ in box], [hi for _, hi in box]
            points += [tuple(lows), tuple(highs)]
            for i in range(len(names)):
                points.append(tuple(highs[j] if j == i else lows[j] for j in range(len(names))))
                points.append(tuple(lows[j] if j == i else highs[j] for j in range(len(names))))
        self.middle = tuple((lo + hi) // 2 for lo, hi in box)
        if names:
            points.append(self.middle)
            rng = np.random.default_rng(0)
            for _ in range(_RANDOM_SAMPLES):
                points.append(tuple(int(rng.integers(lo, hi + 1)) for lo, hi in box))
        else:
            points.append(())
        unique = sorted(set(points))
        self.points = np.array(unique, dtype=np.float64).reshape(len(unique), len(names))
        self.middle_index = unique.index(self.middle) if names else 0
        self._cache: dict[sympy.Expr, np.ndarray] = {}

    def range(self, name: str) -> tuple[int, int]:
        return self._ranges[name]

    def values(self, expr: sympy.Expr) -> np.ndarray:
        """`expr` at every sample point."""
        cached = self._cache.get(expr)
        if cached is not None:
            return cached
        n = len(self.points)
        if expr.is_number:
            out = np.full(n, float(expr))
        elif isinstance(expr, sympy.Symbol):
            out = self.points[:, self.names.index(expr.name)].copy()
        else:
            args = [self.values(a) for a in expr.args]
            fn = _NUMPY.get(type(expr)) or _NUMPY.get(expr.func)
            if fn is None:
                raise PassFailure(f"cannot evaluate {type(expr).__name__} in size {expr}")
            out = np.broadcast_to(np.asarray(fn(*args), dtype=np.float64), (n,)).copy()
        self._cache[expr] = out
        return out


class Samplers:
    """One `Sampler` per set of symbols, over one module's ranges."""

    def __init__(self, ranges: Mapping[str, tuple[int, int]]):
        self.ranges = ranges
        self._made: dict[tuple[str, ...], Sampler] = {}

    def __call__(self, exprs) -> Sampler:
        names = tuple(sorted({s.name for e in exprs for s in e.free_symbols}))
        if names not in self._made:
            self._made[names] = Sampler(names, self.ranges)
        return self._made[names]


def dominant(rows: np.ndarray) -> list[int]:
    """Indices of the rows no other row is >= at every sample (first of equal rows)."""
    order = sorted(range(len(rows)), key=lambda i: (-rows[i].max(), -rows[i].sum(), i))
    kept: list[int] = []
    for i in order:
        if kept and (rows[kept] >= rows[i]).all(axis=1).any():
            continue
        kept.append(i)
    return sorted(kept)


def max_of(exprs: list[sympy.Expr], sampler: Sampler) -> sympy.Expr:
    """The max of `exprs`, without the ones another dominates over the symbols' ranges. The
    `Max` is left unevaluated: sympy's own simplification of it is exponential."""
    flat: list[sympy.Expr] = []
    for e in exprs:
        flat.extend(e.args if isinstance(e, sympy.Max) else (e,))
    unique = list(dict.fromkeys(flat))
    if not unique:
        return sympy.Integer(0)
    if len(unique) == 1:
        return unique[0]
    rows = np.stack([sampler.values(e) for e in unique])
    kept = [unique[i] for i in dominant(rows)]
    return kept[0] if len(kept) == 1 else sympy.Max(*kept, evaluate=False)
