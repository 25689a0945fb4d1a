"""Special functions torch-mlir does not lower, decomposed by dync before import
(`frontends/pytorch/decompositions.py`), against eager PyTorch over a dynamic length, the
ends of their domain included."""

from __future__ import annotations

import torch
from torch.export import Dim

import dync


class InverseErf(torch.nn.Module):
    def forward(self, y):
        return torch.erfinv(y)


def test_erfinv_over_its_domain_and_beyond():
    """`erfinv` sent the whole model to eager; ±1 give ±inf, beyond them NaN, as eager."""
    length = Dim("length", min=2, max=4096)
    compiled = dync.compile(InverseErf().eval(), (torch.rand(16) * 2 - 1,),
                            dynamic_shapes=({0: length},), mode="graph", cache=False)
    ends = torch.tensor([-1.0, 1.0, 0.0, -0.0, 0.9999999, -0.99999994, 1e-30, 1.5, -2.0,
                         float("nan")])
    for y in (torch.linspace(-1, 1, 4001), ends, torch.rand(7) * 2 - 1):
        torch.testing.assert_close(compiled(y), torch.erfinv(y), rtol=1e-6, atol=5e-7,
                                   equal_nan=True)


class _Gammas(torch.nn.Module):
    def forward(self, x):
        return (torch.lgamma(x), torch.special.gammaln(x), torch.digamma(x), torch.special.psi(x),
                torch.polygamma(0, x), torch.special.polygamma(0, x),
                torch.mvlgamma(x.abs() + 2, 3), torch.special.multigammaln(x.abs() + 2, 2),
                torch.special.xlog1py(x, x.abs()))


# Poles, zeros, both infinities, NaN, subnormals, the largest floats, the points where the
# recurrence and the reflection take over, and far below zero.
_ENDS = torch.tensor([0.0, -0.0, 1.0, 2.0, -1.0, -2.5, 0.5, float("inf"), -float("inf"),
                      float("nan"), 1e-40, -1e-40, -3e38, 3e38, 1e30, 1.4616321, -0.5,
                      -1e4 + 0.5, -123.25, 1e-8, 7.99999, 8.0, 9.999999, 10.0, -7.5, 1e5, 12.3])

# Not the subnormals: IREE's CPU code takes them for zero in arithmetic (lgamma(1e-40) = inf).
_NORMAL_ENDS = _ENDS[~((_ENDS != 0) & (_ENDS.abs() < torch.finfo(torch.float32).tiny))]


def test_gamma_functions_over_the_reals():
    """lgamma, digamma, polygamma(0, .), mvlgamma and xlog1py sent the whole model to eager;
    now within 1e-5 of eager over [-30, 30] and [1e-30, 1e30], eager's infinities and NaNs at
    the poles and ends."""
    length = Dim("length", min=2, max=100_000)
    model = _Gammas().eval()
    compiled = dync.compile(model, (torch.rand(16),), dynamic_shapes=({0: length},),
                            mode="graph", cache=False)
    for x in (_NORMAL_ENDS, torch.linspace(-30, 30, 60_001), torch.logspace(-30, 30, 6001),
              -torch.logspace(-6, 6, 6001)):
        for got, want in zip(compiled(x), model(x), strict=True):
            torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5, equal_nan=True)


class _Bessels(torch.nn.Module):
    def forward(self, x):
        return (torch.i0(x), torch.special.i0(x), torch.special.i0e(x), torch.special.i1(x),
                torch.special.i1e(x), torch.special.spherical_bessel_j0(x))


def test_bessel_functions_over_the_reals():
    """i0, i0e, i1, i1e and spherical_bessel_j0 sent the whole model to eager; now within 1e-5
    of eager from -100 to 100 (I's overflow to inf included) and at the ends."""
    length = Dim("length", min=2, max=100_000)
    model = _Bessels().eval()
    compiled = dync.compile(model, (torch.rand(16),), dynamic_shapes=({0: length},),
                            mode="graph", cache=False)
    for x in (_NORMAL_ENDS, torch.linspace(-100, 100, 40_001), torch.logspace(-8, 2, 2001)):
        for got, want in zip(compiled(x), model(x), strict=True):
            torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6, equal_nan=True)


class _FloatBits(torch.nn.Module):
    def forward(self, x, y):
        mantissa, exponent = torch.frexp(x)
        return mantissa, exponent, torch.nextafter(x, y), torch.isreal(x)


def test_frexp_and_nextafter_bit_for_bit():
    """frexp and nextafter, from the bits: exact, subnormals (which IREE's CPU code compares as
    zero), signed zeros, infinities and NaN included, in float32 and float16."""
    model = _FloatBits().eval()
    x = torch.cat([_ENDS, torch.randn(200) * 1e-39, torch.randn(200) * 1e30,
                   torch.tensor([1.4e-45, -1.4e-45, 3.4028235e38, -3.4028235e38, 1.17549435e-38])])
    length = Dim("length", min=2, max=4096)
    for dtype in (torch.float32, torch.float16):
        xs = x.to(dtype)
        compiled = dync.compile(model, (xs[:8], xs[:8]), dynamic_shapes=({0: length}, {0: length}),
                                mode="graph", cache=False)
        for y in (torch.zeros_like(xs), -xs, xs.flip(0), torch.full_like(xs, float("inf")), xs):
            for got, want in zip(compiled(xs, y), model(xs, y), strict=True):
                assert got.dtype == want.dtype
                torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)


class _Trapezoids(torch.nn.Module):
    def forward(self, y, t):
        return (torch.cumulative_trapezoid(y), torch.cumulative_trapezoid(y, dx=0.3, dim=0),
                torch.cumulative_trapezoid(y, t), torch.block_diag(y, y[:2, :3]))


def test_cumulative_trapezoid_and_block_diag_over_a_dynamic_length():
    length = Dim("length", min=4, max=256)
    model = _Trapezoids().eval()
    compiled = dync.compile(model, (torch.rand(4, 6), torch.rand(6)),
                            dynamic_shapes=({1: length}, {0: length}), mode="graph", cache=False)
    for n in (4, 5, 31):
        y, t = torch.randn(4, n), torch.rand(n).cumsum(0)
        for got, want in zip(compiled(y, t), model(y, t), strict=True):
            torch.testing.assert_close(got, want)


class _Powers(torch.nn.Module):
    def forward(self, x):
        return (x ** -1, x ** -2, x ** -3, torch.pow(x, -4), x ** 2, x ** 3,
                torch.nn.functional.gelu(x, approximate="tanh"), torch.nn.functional.gelu(x))


def test_negative_powers_and_tanh_gelu_as_eager():
    """`x ** -2` at +-0 gave -inf (eager: inf, its kernel's 1 / (x * x)), and torch-mlir's tanh
    GELU was off by 5e-5 near 1.33; both now eager's formulas."""
    length = Dim("length", min=2, max=100_000)
    model = _Powers().eval()
    compiled = dync.compile(model, (torch.rand(16) + 0.5,), dynamic_shapes=({0: length},),
                            mode="graph", cache=False)
    # Not +inf: eager's own erf GELU gives NaN there.
    for x in (torch.tensor([0.0, -0.0, 1.0, -1.0, 2.5, -3.0, 1e-20, -float("inf"), float("nan")]),
              torch.linspace(-6, 6, 12_001)):
        for got, want in zip(compiled(x), model(x), strict=True):
            torch.testing.assert_close(got, want, rtol=1e-6, atol=3e-6, equal_nan=True)
