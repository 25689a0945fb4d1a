"""Special and floating-point functions torch-mlir (as bundled in IREE 3.13) does not lower,
as elementwise ops it does. Without these a model calling one ran whole in eager PyTorch.

The gamma functions follow eager's CPU kernels in structure (the argument shifted up by the
recurrence, an asymptotic series there, the reflection formula below zero, eager's values at
poles, zeros and infinities); the Bessel functions are Abramowitz & Stegun's polynomials. Both
are computed in float32: half types are widened and narrowed back, and float64 is left to
eager, as IREE 3.13 links no float64 `log` or `sin` for the CPU. `frexp` and `nextafter` work
on the bits (any float dtype), so they are exact."""

from __future__ import annotations

import functools
import math

import torch

_aten = torch.ops.aten

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
_SHIFT = 8  # lgamma: below it the recurrence lifts the argument, where Stirling's error < 1e-11


def _in_float32(function):
    """`function` of float32 tensors as a decomposition: integer and half inputs computed in
    float32, the result in the dtype eager gives; float64 and complex left to eager."""

    @functools.wraps(function)
    def decomposition(x, *args):
        dtype = x.dtype if x.is_floating_point() else torch.get_default_dtype()
        if dtype == torch.float64 or x.is_complex():
            return NotImplemented
        return function(x.to(torch.float32), *args).to(dtype)

    return decomposition


def _lgamma_of_nonnegative(z: torch.Tensor) -> torch.Tensor:
    """log Gamma(z) for z >= 0: Stirling's series at z + 8 where z < 8, less the log of the
    product z (z + 1) ... (z + 7) the recurrence divides by (+inf at 0)."""
    small = z < _SHIFT
    lifted = torch.where(small, z + _SHIFT, z)
    base = torch.where(small, z, 1.0)
    product = base
    for k in range(1, _SHIFT):
        product = product * (base + k)
    r = 1 / lifted
    r2 = r * r
    series = r * (1 / 12 + r2 * (-1 / 360 + r2 * (1 / 1260 + r2 * (-1 / 1680))))
    stirling = (lifted - 0.5) * torch.log(lifted) - lifted + _HALF_LOG_2PI + series
    return torch.where(small, stirling - torch.log(product.abs()), stirling)


# IREE 3.13's float32 sin and tan lose their relative precision below zero (sin(-1e-8) came
# out +6.2e-8: an absolute error of ~1e-7 from its range reduction), so the reflections take
# them at arguments in [0, pi/4] or [0, pi/2], reduced exactly by symmetry.
def _sin_pi_magnitude(x: torch.Tensor) -> torch.Tensor:
    """|sin(pi x)|, from x's distance to the nearest integer (in [0, 0.5], exact)."""
    return torch.sin(math.pi * (x - torch.round(x)).abs())


def _cot_pi(x: torch.Tensor) -> torch.Tensor:
    """cot(pi x), from the distance r to the nearest integer: 1 / tan(pi r) up to r = 1/4,
    tan(pi (1/2 - r)) beyond, with r's sign (inf at the integers)."""
    r = x - torch.round(x)
    a = r.abs()
    cot = torch.where(a <= 0.25, 1 / torch.tan(math.pi * a), torch.tan(math.pi * (0.5 - a)))
    return torch.where(r < 0, -cot, cot)


@_in_float32
def _lgamma(x: torch.Tensor) -> torch.Tensor:
    """`lgamma`: log |Gamma(x)|; below 0 by reflection, log(pi / |sin(pi x)|) - lgamma(1 - x);
    +inf at the poles and at +-inf, as eager."""
    negative = x < 0
    value = _lgamma_of_nonnegative(torch.where(negative, 1 - x, x))
    reflected = math.log(math.pi) - torch.log(_sin_pi_magnitude(x)) - value
    pole = torch.isinf(x) | (negative & (x == torch.round(x)))
    return torch.where(pole, math.inf, torch.where(negative, reflected, value))


@_in_float32
def _digamma(x: torch.Tensor) -> torch.Tensor:
    """`digamma`: psi(x) = psi(x + n) - sum of 1 / (x + k), k < n, with x + n >= 10, and the
    asymptotic series there; below 0 psi(1 - x) - pi cot(pi x). As eager: -inf at +0, +inf
    at -0, NaN at the negative integers and -inf."""
    negative = x < 0
    y = torch.where(negative, 1 - x, x)
    recurrence = torch.zeros_like(y)
    for _ in range(10):
        below = y < 10
        recurrence = recurrence - torch.where(below, 1 / y, 0.0)
        y = torch.where(below, y + 1, y)
    z = 1 / (y * y)
    series = z * (1 / 12 - z * (1 / 120 - z * (1 / 252 - z * (1 / 240 - z / 132))))
    value = torch.log(y) - 0.5 / y - series + recurrence
    reflected = value - math.pi * _cot_pi(x)
    value = torch.where(negative, reflected, value)
    return torch.where(negative & (x == torch.round(x)), math.nan, value)


def _polygamma(n: int, x: torch.Tensor) -> torch.Tensor:
    """`polygamma(0, x)` is digamma; higher orders (Hurwitz zeta) are left to eager."""
    return _digamma(x) if n == 0 else NotImplemented


# Modified Bessel functions I0, I1 (Abramowitz & Stegun 9.8.1-9.8.4): polynomials in
# (x / 3.75)**2 below 3.75 (relative error < 4e-8), and of sqrt(x) exp(-x) I(x) in 3.75 / x
# above (< 6e-7): a few float32 units of eager's Chebyshev series (Cephes).
_BESSEL_NEAR = {0: (1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.0360768, 0.0045813),
                1: (0.5, 0.87890594, 0.51498869, 0.15084934, 0.02658733, 0.00301532,
                    0.00032411)}
_BESSEL_FAR = {0: (0.39894228, 0.01328592, 0.00225319, -0.00157565, 0.00916281, -0.02057706,
                   0.02635537, -0.01647633, 0.00392377),
               1: (0.39894228, -0.03988024, -0.00362018, 0.00163801, -0.01031555, 0.02282967,
                   -0.02895312, 0.01787654, -0.00420059)}
_BESSEL_SPLIT = 3.75


def _polynomial(coefficients: tuple[float, ...], t: torch.Tensor) -> torch.Tensor:
    """sum of coefficients[k] * t**k, by Horner's rule."""
    value = torch.full_like(t, coefficients[-1])
    for c in reversed(coefficients[:-1]):
        value = value * t + c
    return value


def _bessel_i(order: int, scaled: bool):
    """`i0`/`i1` (`scaled`: `i0e`/`i1e`, times exp(-|x|)); I1 is odd; +-inf give eager's NaN
    (0 scaled)."""

    @_in_float32
    def decomposition(x: torch.Tensor) -> torch.Tensor:
        a = x.abs()
        near = a < _BESSEL_SPLIT
        inner = _polynomial(_BESSEL_NEAR[order], (torch.where(near, a, 0.0) / _BESSEL_SPLIT) ** 2)
        inner = inner * a if order else inner
        outer_at = torch.where(near, _BESSEL_SPLIT, a)
        outer = _polynomial(_BESSEL_FAR[order], _BESSEL_SPLIT / outer_at) / torch.sqrt(outer_at)
        if scaled:
            value = torch.where(near, inner * torch.exp(-a), outer)
        else:
            value = torch.where(near, inner, outer * torch.exp(a))
        value = torch.where(torch.isinf(a), 0.0 if scaled else math.nan, value)
        return torch.where(x < 0, -value, value) if order else value

    return decomposition


@_in_float32
def _spherical_bessel_j0(x: torch.Tensor) -> torch.Tensor:
    """`special.spherical_bessel_j0`: sin(x) / x, its Taylor series below 1/2 (1 at 0), taken
    at |x| (it is even, and IREE's sin is coarse below zero); 0 at +-inf."""
    a = x.abs()
    t = a * a
    series = _polynomial((1.0, -1 / 6, 1 / 120, -1 / 5040, 1 / 362880, -1 / 39916800), t)
    # Clamped: IREE's sin of an argument past ~1e30 is not in [-1, 1] (it gave -inf).
    value = torch.where(a < 0.5, series, torch.sin(a).clamp(-1.0, 1.0) / a)
    return torch.where(torch.isinf(a), 0.0, value)


# A float dtype -> the integer dtype of its bits, its mantissa's bits, its exponent's bias.
_LAYOUTS = {torch.float64: (torch.int64, 52, 1023), torch.float32: (torch.int32, 23, 127),
            torch.float16: (torch.int16, 10, 15), torch.bfloat16: (torch.int16, 7, 127)}


def _frexp(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """`frexp`: x = mantissa * 2**exponent with |mantissa| in [0.5, 1), from x's bits; 0, +-inf
    and NaN give themselves and 0."""
    if x.dtype not in _LAYOUTS:
        return NotImplemented
    if x.dtype in (torch.float16, torch.bfloat16):  # float32 holds each exactly
        mantissa, exponent = _frexp(x.float())
        return mantissa.to(x.dtype), exponent
    bits_dtype, width, bias = _LAYOUTS[x.dtype]
    top = x.element_size() * 8 - 1
    field = (1 << (top - width)) - 1
    bits = x.view(bits_dtype)
    magnitude = bits & ((1 << top) - 1)
    # Tests on the bits: IREE's CPU code takes subnormal floats for zero. A subnormal is its
    # mantissa's integer times 2**(1 - bias - width), and that integer a normal float, exactly.
    subnormal = (magnitude >> width == 0) & (magnitude != 0)
    source = torch.where(subnormal, magnitude.to(x.dtype).view(bits_dtype), magnitude)
    exponent = (source >> width) - (bias - 1) - torch.where(subnormal, bias - 1 + width, 0)
    # `+` for `|` (torch-mlir lowers no `__or__.Scalar`): the cleared field takes no carry.
    mantissa = ((source & ~(field << width)) + ((bias - 1) << width)).view(x.dtype)
    same = (magnitude == 0) | (magnitude >> width == field)
    return (torch.where(same, x, torch.where(bits < 0, -mantissa, mantissa)),
            torch.where(same, 0, exponent).to(torch.int32))


def _nextafter(x: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    """`nextafter`: the float after x toward `other`: one step along the floats' order, taken
    on integers (the magnitude's bits, negated below zero, so +-0 are one point and the step
    from it is the smallest subnormal); `other` where they are equal, NaN where either is."""
    if x.dtype not in _LAYOUTS or other.dtype != x.dtype:
        return NotImplemented
    bits_dtype = _LAYOUTS[x.dtype][0]
    sign = -(1 << (x.element_size() * 8 - 1))
    x, other = torch.broadcast_tensors(x, other)

    def rank(t: torch.Tensor) -> torch.Tensor:
        bits = t.view(bits_dtype)
        magnitude = bits & ~sign
        return torch.where(bits < 0, -magnitude, magnitude)

    start, goal = rank(x), rank(other)
    stepped = torch.where(start < goal, start + 1, start - 1)
    stepped = torch.where(stepped < 0, sign - stepped, stepped).view(x.dtype)
    stepped = torch.where(start == goal, other, stepped)
    return torch.where(torch.isnan(x) | torch.isnan(other), x + other, stepped)


def _cumulative_trapezoid(y: torch.Tensor, x: torch.Tensor, *, dim: int = -1) -> torch.Tensor:
    """`cumulative_trapezoid` over sample points `x` (1-D along `dim`, or y's shape): running
    sums of the trapezoids, formed as eager's kernel forms them."""
    if x.dim() == 1:
        widths = x.diff().view([-1] + [1] * (y.dim() - 1 - dim % y.dim()))
    else:
        widths = x.diff(dim=dim)
    return (widths * _trapezoid_sides(y, dim) / 2.0).cumsum(dim)


def _cumulative_trapezoid_dx(y: torch.Tensor, *, dx=1, dim: int = -1) -> torch.Tensor:
    """`cumulative_trapezoid` with a constant spacing `dx`."""
    return (dx / 2.0 * _trapezoid_sides(y, dim)).cumsum(dim)


def _trapezoid_sides(y: torch.Tensor, dim: int) -> torch.Tensor:
    """Each sample plus the next, along `dim`."""
    n = y.shape[dim] - 1
    return y.narrow(dim, 0, n) + y.narrow(dim, 1, n)


def _isreal(x: torch.Tensor) -> torch.Tensor:
    """`isreal` of a real tensor: true everywhere."""
    return NotImplemented if x.is_complex() else torch.ones_like(x, dtype=torch.bool)


SPECIAL_FUNCTIONS = {
    _aten.lgamma.default: _lgamma,
    _aten.special_gammaln.default: _lgamma,
    _aten.digamma.default: _digamma,
    _aten.special_digamma.default: _digamma,
    _aten.special_psi.default: _digamma,
    _aten.polygamma.default: _polygamma,
    _aten.special_polygamma.default: _polygamma,
    _aten.special_multigammaln.default: lambda x, p: torch.mvlgamma(x, p),
    _aten.i0.default: _bessel_i(0, scaled=False),
    _aten.special_i0.default: _bessel_i(0, scaled=False),
    _aten.special_i0e.default: _bessel_i(0, scaled=True),
    _aten.special_i1.default: _bessel_i(1, scaled=False),
    _aten.special_i1e.default: _bessel_i(1, scaled=True),
    _aten.special_spherical_bessel_j0.default: _spherical_bessel_j0,
    _aten.frexp.Tensor: _frexp,
    _aten.nextafter.default: _nextafter,
    _aten.cumulative_trapezoid.dx: _cumulative_trapezoid_dx,
    _aten.cumulative_trapezoid.x: _cumulative_trapezoid,
    _aten.isreal.default: _isreal,
}
"""The decompositions above, by the ATen op each replaces."""

# torch's own decompositions of these are in ops the importer lowers (given the ones above).
FROM_TORCH = [_aten.mvlgamma, _aten.block_diag, _aten.special_xlog1py]
