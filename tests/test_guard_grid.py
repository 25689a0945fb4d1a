"""`guard_grid.truth`: torch's shape guards evaluated over many sizes at once give sympy's
answer at every point, or no answer (the caller then substitutes point by point)."""

import itertools

import sympy
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.utils._sympy.functions import CleanDiv, FloorDiv, Max, Min, Mod, PythonMod
from torch.utils._sympy.value_ranges import ValueRanges

from dync.frontends.pytorch.guard_grid import truth
from dync.frontends.pytorch.guards import holds_in

S0, S1 = sympy.symbols("s0 s1", integer=True, positive=True)
POINTS = list(itertools.product(range(-3, 13), range(1, 9)))


def _pointwise(expr):
    """sympy's answer at each point: True, False, or None (no boolean, or sympy raised)."""
    out = []
    for a, b in POINTS:
        try:
            value = expr.xreplace({S0: sympy.Integer(a), S1: sympy.Integer(b)})
        except Exception:  # noqa: BLE001
            value = None
        out.append(bool(value) if value in (sympy.true, sympy.false) else None)
    return out


def _grid(expr):
    return truth(expr, {S0: [a for a, _ in POINTS], S1: [b for _, b in POINTS]})


def _built(make):
    """`make` applied to its operands, or `s0` where sympy refuses to build it (a division
    by a literal zero; nested Max, Min and Mod its assumptions recurse into without end)."""
    def build(operands):
        try:
            return make(*operands)
        except (ZeroDivisionError, AssertionError, TypeError, RecursionError):
            return S0
    return build


def _pairs(inner, make):
    return st.tuples(inner, inner).map(_built(make))


integers = st.recursive(
    st.sampled_from([S0, S1, sympy.Integer(0), sympy.Integer(1), sympy.Integer(4),
                     sympy.Integer(-2)]),
    lambda inner: st.one_of(
        _pairs(inner, lambda a, b: a + b), _pairs(inner, lambda a, b: a * b),
        _pairs(inner, FloorDiv), _pairs(inner, PythonMod), _pairs(inner, Mod),
        _pairs(inner, Max), _pairs(inner, Min), inner.map(lambda e: e ** 2)),
    max_leaves=8,
)
RELATIONS = [sympy.Eq, sympy.Ne, sympy.Lt, sympy.Le, sympy.Gt, sympy.Ge]
booleans = st.recursive(
    st.tuples(st.sampled_from(RELATIONS), integers, integers).map(
        lambda t: _built(t[0])(t[1:])),
    lambda inner: st.one_of(_pairs(inner, sympy.And), _pairs(inner, sympy.Or),
                            inner.map(sympy.Not)),
    max_leaves=4,
)


@settings(max_examples=300, deadline=None, derandomize=True)  # the same draws in every CI run
@given(booleans)
def test_every_answer_is_sympys(expr):
    found = _grid(expr)
    if found is None:
        return
    want = _pointwise(expr)
    assert None not in want, expr
    assert list(found) == want, expr


def test_torchs_window_guards_are_answered():
    """A guard of a Swin-style window round trip (a pad to whole windows of 4, viewed as
    windows and back), as torch.export writes it."""
    padded = S0 + Mod(4 - Mod(S0, 4), 4)
    guard = sympy.Eq(4 * FloorDiv(padded, 4), padded)
    found = truth(guard, {S0: range(1, 41)})
    assert found is not None and found.all()
    assert holds_in(guard, {S0: ValueRanges(1, 40)})
    windows = sympy.Ne(FloorDiv(padded, 4), 1)
    assert list(truth(windows, {S0: range(1, 9)})) == [False] * 4 + [True] * 4
    assert not holds_in(windows, {S0: ValueRanges(1, 40)})


def test_what_it_cannot_answer_exactly_is_left_to_sympy():
    assert truth(sympy.Eq(S0 / 2, 3), {S0: [6]}) is None           # a fraction
    assert truth(sympy.Lt(S0 * sympy.Float(0.5), 3), {S0: [6]}) is None  # a float
    assert truth(sympy.Eq(Mod(S0, 4), 1), {S0: [-3, 5]}) is None    # torch's Mod of a negative
    assert truth(sympy.Eq(FloorDiv(4, S0), 1), {S0: [0, 4]}) is None  # a division by zero
    assert truth(S0 + 1, {S0: [1]}) is None                        # not a boolean
    assert truth(sympy.Eq(S0, S1), {S0: [1]}) is None               # a symbol without sizes
    assert list(truth(sympy.Eq(CleanDiv(S0, 2), 3), {S0: [6, 8]})) == [True, False]
