"""Exact ratios of sizes inside `int()`, `math.floor()` and `math.ceil()`.

Swin Transformer's `window_reverse` computes the batch as
``int(windows.shape[0] / (H * W / window_size / window_size))``. On symbolic sizes `/` makes
a `SymFloat`, and rounding that to an int makes torch.export specialize the sizes to the
example's. The rewrite passes the true divisions inside such a rounding (through `+ - * /`
only) to `exact_div`: a ratio of two ints, one of them symbolic, stays an exact `SizeRatio`,
and the rounding is integer division, `(windows.shape[0] * 49) // (H * W)`, which the export
keeps symbolic. The same Python ints give the same result as Python's float division, for
sizes far below 2**26. Any other use of a ratio (with a float, a tensor, or a sign torch
cannot bound) is the float division it was.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import torch

from ..shape_exprs import size_range


def _int_like(value: Any) -> bool:
    return isinstance(value, int | torch.SymInt) and not isinstance(value, bool)


def _sign_known(value: Any, strict: bool = False) -> bool:
    """Whether `value` is known > 0 (`strict`) or >= 0: from the sizes' sympy assumptions
    where they tell (asking the shape environment for bounds made the export add guards
    for `L * C / C`), else from the bounds of its declared ranges (Swin's padded sizes,
    floor divisions sympy's assumptions do not sign)."""
    if not isinstance(value, torch.SymInt):
        return value > 0 if strict else value >= 0
    expr = value.node.expr
    known = expr.is_positive if strict else expr.is_nonnegative
    if known is not None:
        return bool(known)
    low = size_range(value)[0]
    return low > 0 if strict else low >= 0


def _content(value: Any) -> int:
    """The constant factor of a symbolic size's product (16 of `16*L`), else 1."""
    if not isinstance(value, torch.SymInt):
        return 1
    coefficient = value.node.expr.as_coeff_Mul()[0]
    return abs(int(coefficient)) if coefficient.is_Integer and coefficient != 0 else 1


class SizeRatio:
    """`num / den * frac`: `num`, `den` ints or products of symbolic sizes, `frac` the
    constant factors apart (so that `L * C / C` is `L`, with nothing left to prove about `C`)."""

    __slots__ = ("num", "den", "frac")

    def __init__(self, num: Any, den: Any, frac: Fraction = Fraction(1)):
        if isinstance(num, int):
            num, frac = 1, frac * num
        if isinstance(den, int):
            den, frac = 1, frac / den
        # Constant factors of a symbolic product move into `frac` (`16*L // 16` is L exactly,
        # in torch's algebra too), so that they cancel instead of reaching the export.
        g = math.gcd(_content(num), frac.denominator)
        if g > 1:
            num, frac = num // g, frac * g
        g = math.gcd(_content(den), frac.numerator)
        if g > 1:
            den, frac = den // g, frac / g
        self.num, self.den, self.frac = num, den, frac

    def value(self) -> Any:
        return self.num * self.frac.numerator / (self.den * self.frac.denominator)

    @staticmethod
    def _of(other: Any) -> SizeRatio | None:
        if isinstance(other, SizeRatio):
            return other
        return SizeRatio(other, 1) if _int_like(other) else None

    def __mul__(self, other: Any) -> Any:
        o = self._of(other)
        return SizeRatio(self.num * o.num, self.den * o.den, self.frac * o.frac) if o \
            else self.value() * other

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> Any:
        o = self._of(other)
        return SizeRatio(self.num * o.den, self.den * o.num, self.frac / o.frac) if o \
            else self.value() / other

    def __rtruediv__(self, other: Any) -> Any:
        o = self._of(other)
        return o / self if o else other / self.value()

    def _sum(self, o: SizeRatio, sign: int) -> SizeRatio:
        q = self.frac.denominator * o.frac.denominator
        a = self.num * o.den * (self.frac.numerator * o.frac.denominator)
        b = o.num * self.den * (o.frac.numerator * self.frac.denominator)
        return SizeRatio(a + b if sign > 0 else a - b, self.den * o.den, Fraction(1, q))

    def __add__(self, other: Any) -> Any:
        o = self._of(other)
        return self._sum(o, 1) if o else self.value() + other

    __radd__ = __add__

    def __sub__(self, other: Any) -> Any:
        o = self._of(other)
        return self._sum(o, -1) if o else self.value() - other

    def __rsub__(self, other: Any) -> Any:
        o = self._of(other)
        return o._sum(self, -1) if o else other - self.value()

    def __neg__(self) -> SizeRatio:
        return SizeRatio(self.num, self.den, -self.frac)

    def _parts(self) -> tuple[Any, Any]:
        """(numerator, denominator) in integers."""
        return self.num * self.frac.numerator, self.den * self.frac.denominator

    def _divisor_positive(self) -> bool:
        return _sign_known(self.den, strict=True)

    def nonnegative(self) -> bool:
        """Whether the ratio is known >= 0 (then truncation is floor division)."""
        return self.frac >= 0 and _sign_known(self.num) and self._divisor_positive()

    def __floor__(self) -> Any:
        if not self._divisor_positive():
            return math.floor(self.value())
        n, d = self._parts()
        return n // d

    def __ceil__(self) -> Any:
        if not self._divisor_positive():
            return math.ceil(self.value())
        n, d = self._parts()
        return -(-n // d)

    def __trunc__(self) -> Any:
        return self.__floor__() if self.nonnegative() else math.trunc(self.value())


def exact_div(a: Any, b: Any) -> Any:
    """`a / b`: a `SizeRatio` when both are ints (or ratios) and one is symbolic."""
    if isinstance(a, SizeRatio) or isinstance(b, SizeRatio):
        return a / b if isinstance(a, SizeRatio) else b.__rtruediv__(a)
    if _int_like(a) and _int_like(b) and (isinstance(a, torch.SymInt) or isinstance(b, torch.SymInt)):
        return SizeRatio(a, b)
    return a / b
