"""Integer division at every magnitude: IREE computes an integer floor division in f32, exact
only under 2**24 (`lit/upstream/torch-int-floor-divide-f32.mlir`); `dync-int-division` builds
it from an exact truncating division. A zero divisor is an error naming the line, as in eager,
never a crash (x86 faults on an integer division by zero)."""

from __future__ import annotations

import pytest
import torch

import dync


class _Divisions(torch.nn.Module):
    def forward(self, x, y):
        return (x // y, x // 7, torch.div(x, y, rounding_mode="floor"),
                torch.div(x, y, rounding_mode="trunc"), x % y, torch.fmod(x, y),
                x.int() // y.int())


_X = torch.tensor([2 ** 40 + 12345, -(2 ** 33) - 5, 100_000_007, -7, 2 ** 62, -(2 ** 62) - 1,
                   16_777_217, -16_777_219, 0, 5])
_Y = torch.tensor([7, 3, -13, 2, 3, -(2 ** 31) + 1, 1, 3, -4, 5])


@pytest.fixture(scope="module")
def compiled():
    return dync.compile(_Divisions(), (_X, _Y), mode="graph")


def test_integer_division_is_exact_beyond_float_precision(compiled):
    for got, want in zip(compiled(_X, _Y), _Divisions()(_X, _Y), strict=True):
        assert got.dtype == want.dtype
        torch.testing.assert_close(got, want, rtol=0, atol=0)


def test_a_zero_divisor_is_an_error_naming_the_line(compiled):
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        _Divisions()(_X, torch.zeros_like(_Y))
    y = _Y.clone()
    y[3] = 0
    with pytest.raises(dync.IntegerDivisionByZeroError,
                       match=r"floor_divide at .*test_int_division.py:\d+ divides an integer by "
                             r"zero"):
        compiled(_X, y)
    assert torch.equal(compiled(_X, _Y)[0], _X // _Y)  # the module still runs after the error
