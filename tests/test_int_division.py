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


class _SameDivisor(torch.nn.Module):
    def forward(self, x, y):
        return x % y, x // y


def test_two_divisions_by_one_divisor_over_a_dynamic_length_do_not_fault():
    """uint8 `x % y, x // y` over 4 elements killed the process (SIGFPE): IREE divided the
    vector lanes past the end, read as 0, by the shared filled divisor."""
    n = torch.export.Dim("n", min=1, max=64)
    for dtype in (torch.uint8, torch.int64):
        x, y = torch.tensor([1, 2, 3, 100], dtype=dtype), torch.tensor([5, 6, 3, 10], dtype=dtype)
        compiled = dync.compile(_SameDivisor(), (x, y), dynamic_shapes=({0: n}, {0: n}),
                                mode="graph", cache=False)
        for k in (1, 4, 7, 9, 17, 33):
            xs, ys = (x * 2 + 1).repeat(9)[:k], y.repeat(9)[:k]
            for got, want in zip(compiled(xs, ys), _SameDivisor()(xs, ys), strict=True):
                torch.testing.assert_close(got, want, rtol=0, atol=0)


class _ProvenNonzero(torch.nn.Module):
    def forward(self, x, counts):
        return (torch.div(x, counts.clamp(min=1), rounding_mode="floor"), x // x.shape[0],
                x % counts.clamp(min=0))


def test_divisors_proven_nonzero_are_not_checked(tmp_path):
    """Counts clamped to at least 1 and a size declared from 2 up need no check (a reduction
    and a wait of the host each); counts clamped to 0 and up keep theirs, and it still fires."""
    n = torch.export.Dim("n", min=2, max=64)
    x, counts = torch.tensor([7, -9, 12, 5]), torch.tensor([1, 2, 5, 3])
    ir = tmp_path / "ir.mlir"
    compiled = dync.compile(_ProvenNonzero(), (x, counts), dynamic_shapes=({0: n}, {0: n}),
                            mode="graph", cache=False, dump_ir=ir)
    checks = [line for line in ir.read_text().splitlines() if "dync division check" in line]
    assert len(checks) == 1 and "remainder" in checks[0]
    xs, cs = torch.tensor([7, -9, 12, 5, 40, -1]), torch.tensor([1, 2, 5, 3, 7, 4])
    for got, want in zip(compiled(xs, cs), _ProvenNonzero()(xs, cs), strict=True):
        torch.testing.assert_close(got, want, rtol=0, atol=0)
    with pytest.raises(dync.IntegerDivisionByZeroError, match="remainder"):
        compiled(x, torch.tensor([0, 2, 5, 3]))
