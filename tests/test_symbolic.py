"""The symbolic helpers passes share: what `nonpositive_at_each` proves, and that it gives up
(rather than crashing) on the ranges unbounded dims and unbacked sizes declare."""

from __future__ import annotations

import sympy

from dync.dialects.symbolic import bounds, nonpositive_at_each, symbol

_UNBOUNDED = 2**63 - 1  # the max torch.export declares for a dim with none (len(range) overflows)


def test_floor_divisions_are_checked_value_by_value():
    n = symbol("n")
    # (n + 3) // ((n + 3) // 4) reaches 7 (at n = 4) on 1..64, though both corners give 4
    window = sympy.floor((n + 3) / sympy.floor((n + 3) / 4))
    assert bounds(window, {"n": (1, 64)}) == (4, 4)
    assert nonpositive_at_each(window - 7, {"n": (1, 64)}, 256)
    assert not nonpositive_at_each(window - 6, {"n": (1, 64)}, 256)


def test_gives_up_past_the_limit_and_on_unknown_symbols():
    n, m = symbol("n"), symbol("m")
    assert not nonpositive_at_each(n - 100, {"n": (1, 64)}, 63)
    assert nonpositive_at_each(n - 100, {"n": (1, 64)}, 64)
    assert not nonpositive_at_each(n + m - 100, {"n": (1, 64)}, 4096)


def test_an_unbounded_range_is_refused_not_overflowed():
    n, u = symbol("n"), symbol("u")
    assert not nonpositive_at_each(u - 64, {"u": (0, _UNBOUNDED)}, 256)
    assert not nonpositive_at_each(n * u - 64, {"n": (2, 8), "u": (0, _UNBOUNDED)}, 4096)
