"""The shape-expression parser (`dync.shape_expr`): what dync and torch.export write parses
back to the same sympy expression; anything else is a `ModuleFormatError`, and no text ever
reaches Python's compiler or evaluator (watched with an audit hook)."""

import re
import string
import sys

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from dync.errors import ModuleFormatError
from dync.shape_expr import parse_shape_expr

NAMES = ("batch", "h", "w", "s0", "n_1")
SYMBOLS = [sympy.Symbol(n) for n in NAMES]

# Audit events that evaluating or running text raises (eval/exec/compile, os.system, ...).
_WATCHED = {"compile", "exec", "os.system", "subprocess.Popen", "os.exec", "os.posix_spawn"}
_SEEN: list[str] = []
_WATCHING = [False]


def _audit(event, _args):
    if _WATCHING[0] and event in _WATCHED:
        _SEEN.append(event)


sys.addaudithook(_audit)


def _parse_watched(text):
    """`parse_shape_expr(text)`, failing the test if Python compiled or ran anything."""
    _SEEN.clear()
    _WATCHING[0] = True
    try:
        return parse_shape_expr(text, where="m.json")
    finally:
        _WATCHING[0] = False
        assert not _SEEN, f"parsing {text!r} raised audit events {_SEEN}"


def test_the_audit_hook_sees_sympify():
    """The watch is real: sympy's own parser compiles and evaluates text."""
    _SEEN.clear()
    _WATCHING[0] = True
    try:
        sympy.sympify("batch + 1")
    finally:
        _WATCHING[0] = False
    assert "exec" in _SEEN or "compile" in _SEEN


def _leaf():
    return st.one_of(st.sampled_from(SYMBOLS), st.integers(0, 10**6).map(sympy.Integer))


def _extend(children):
    pairs = st.tuples(children, children)
    return st.one_of(
        pairs.map(lambda p: p[0] + p[1]),
        pairs.map(lambda p: p[0] - p[1]),
        pairs.map(lambda p: p[0] * p[1]),
        pairs.map(lambda p: sympy.floor(p[0] / (p[1] ** 2 + 1))),
        pairs.map(lambda p: sympy.ceiling(p[0] / 3)),
        pairs.map(lambda p: sympy.Mod(p[0], p[1] ** 2 + 1)),
        pairs.map(lambda p: sympy.Max(p[0], p[1])),
        pairs.map(lambda p: sympy.Min(p[0], p[1], 4)),
        st.tuples(children, st.integers(0, 3)).map(lambda p: p[0] ** p[1]),
        children.map(lambda c: -c),
    )


EXPRESSIONS = st.recursive(_leaf(), _extend, max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(EXPRESSIONS, st.lists(st.integers(1, 50), min_size=len(NAMES), max_size=len(NAMES)))
def test_what_sympy_prints_parses_back(expr, values):
    """The same expression sympy's own (evaluating) parser builds from the text, and the same
    value as the original at a point."""
    text = str(expr)
    parsed = _parse_watched(text)
    assert parsed == sympy.sympify(text, locals=dict(zip(NAMES, SYMBOLS, strict=True)))
    point = dict(zip(SYMBOLS, values, strict=True))
    assert parsed.xreplace(point) == expr.xreplace(point)


@pytest.mark.parametrize("text, expected", [
    ("(((s0 - 1)//2)) + 1", sympy.floor((SYMBOLS[3] - 1) / 2) + 1),  # torch's FloorDiv
    ("((h + 2)//3)", sympy.floor((SYMBOLS[1] + 2) / 3)),
    ("PythonMod(w, 4)", sympy.Mod(SYMBOLS[2], 4)),
    ("CeilDiv(w, 4) * 2", 2 * sympy.ceiling(SYMBOLS[2] / 4)),
    ("-batch**2 % 7", sympy.Mod(-SYMBOLS[0] ** 2, 7)),
    ("2**-1 * h", SYMBOLS[1] / 2),
    ("max(h, w)", sympy.Max(SYMBOLS[1], SYMBOLS[2])),
])
def test_torch_and_python_spellings(text, expected):
    assert _parse_watched(text) == expected


GRAMMAR_CHARACTERS = set(string.ascii_letters + string.digits + "_+-*/%(), \t\r\n")


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=60))
def test_any_text_parses_or_is_a_module_format_error(text):
    try:
        result = _parse_watched(text)
    except ModuleFormatError as e:
        assert str(e).startswith("m.json: malformed shape expression")
    else:
        assert isinstance(result, sympy.Expr)
        assert set(text) <= GRAMMAR_CHARACTERS


PYTHON_TOKENS = ["__import__", "(", ")", "'os'", '"os"', ".", "system", "[", "]", "lambda",
                 ":", "__globals__", "__builtins__", "subs", "batch", "1", ",", "=", ";",
                 "getattr", "{", "}", "@", "\\", "!", "`", "$", "#"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(PYTHON_TOKENS), min_size=1, max_size=12))
def test_python_that_is_not_a_shape_expression_is_refused(tokens):
    text = "".join(tokens)
    if set(text) <= GRAMMAR_CHARACTERS:
        return  # e.g. "batch(1)": decided by the grammar, covered above
    with pytest.raises(ModuleFormatError, match="malformed shape expression"):
        _parse_watched(text)


@pytest.mark.parametrize("text, reason", [
    ("batch.subs.__globals__['__builtins__']['__import__']('os').system('true')",
     "'.' is not part of"),
    ("__import__('os')", "\"'\" is not part of"),
    ("system(1)", "'system' is not a known function"),
    ("Max(h)", "takes two or more arguments"),
    ("floor(h, w)", "takes 1 arguments"),
    ("h +", "it ends early"),
    ("(h", "expected ')'"),
    ("", "it is empty"),
    ("1e9", "unexpected 'e9'"),
    ("Mod(h, 0)", "does not evaluate"),
    ("h/0", "not a finite expression"),
    ("2**2**2**2**2", "exponent 65536"),
    ("(10**60)**10", "more than 512 bits"),
    ("(" * 200 + "h" + ")" * 200, "nested more than 100 deep"),
    ("h+" * 60_000 + "h", "longer than 100000"),
])
def test_refusals_say_why(text, reason):
    with pytest.raises(ModuleFormatError,
                       match=f"m.json: malformed shape expression .*{re.escape(reason)}"):
        _parse_watched(text)


def test_symbols_take_the_callers_assumptions():
    positive = parse_shape_expr("floor(h/2)*2 + h - h", symbol=lambda n: sympy.Symbol(
        n, integer=True, positive=True))
    assert positive.free_symbols == {sympy.Symbol("h", integer=True, positive=True)}
