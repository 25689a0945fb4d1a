"""Shape expressions read from files, parsed by a grammar into sympy objects: never evaluated.

Manifests, compile-cache entries, dync IR attributes and ONNX ``dim_param``s hold dims and
formulas as text (``"2*batch"``, ``"((h - 1)//2) + 1"``, ``"Max(16*n, 64)"``). Such a file may
come from someone else, so the text is tokenized and parsed here by a small recursive-descent
grammar covering exactly what dync and torch.export write, and built into sympy objects
directly; ``sympy.sympify``/``parse_expr`` would run Python.

    expr   := term (("+" | "-") term)*
    term   := unary (("*" | "/" | "//" | "%") unary)*
    unary  := ("-" | "+") unary | power
    power  := atom ("**" unary)?                  exponent: an integer in [-64, 64]
    atom   := INT | NAME | NAME "(" expr ("," expr)* ")" | "(" expr ")"

NAME is an ASCII identifier; a NAME followed by "(" must be one of `FUNCTIONS` (sympy's
``Max``/``Min``/``floor``/``ceiling``/``Mod`` and torch's ``FloorDiv``/``CeilDiv``/
``PythonMod``/``CleanDiv``), any other NAME is a symbol. ``a // b`` is ``floor(a/b)`` and
``a % b`` is ``Mod(a, b)``. Anything else — another character, an unknown function, an
unbalanced parenthesis, a result that is not a finite number or expression, text longer than
`MAX_LENGTH`, nesting deeper than `MAX_DEPTH`, an integer of more than `MAX_BITS` bits — is a
`ModuleFormatError` naming the file (when given) and the text.
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Callable

import sympy

from .errors import ModuleFormatError

MAX_LENGTH = 100_000
MAX_DEPTH = 100
MAX_BITS = 512
MAX_EXPONENT = 64
MAX_DIGITS = 150

_TOKEN = re.compile(r"[ \t\r\n]*(?:(?P<int>\d+)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
                    r"|(?P<op>\*\*|//|[-+*/%(),]))", re.ASCII)


def _floordiv(a: sympy.Expr, b: sympy.Expr) -> sympy.Expr:
    return sympy.floor(a / b)


def _ceildiv(a: sympy.Expr, b: sympy.Expr) -> sympy.Expr:
    return sympy.ceiling(a / b)


# Function name -> (number of arguments, None: two or more; builder).
FUNCTIONS: dict[str, tuple[int | None, Callable[..., sympy.Expr]]] = {
    "Max": (None, sympy.Max),
    "Min": (None, sympy.Min),
    "max": (None, sympy.Max),
    "min": (None, sympy.Min),
    "floor": (1, sympy.floor),
    "ceiling": (1, sympy.ceiling),
    "Mod": (2, sympy.Mod),
    "PythonMod": (2, sympy.Mod),
    "FloorDiv": (2, _floordiv),
    "CleanDiv": (2, _floordiv),
    "CeilDiv": (2, _ceildiv),
}


class _Malformed(Exception):
    pass


class _Parser:
    def __init__(self, text: str, symbol: Callable[[str], sympy.Symbol]):
        self.tokens = _tokenize(text)
        self.position = 0
        self.depth = 0
        self.symbol = symbol

    def parse(self) -> sympy.Expr:
        if not self.tokens:
            raise _Malformed("it is empty")
        result = self.expr()
        if self.position != len(self.tokens):
            raise _Malformed(f"unexpected {self.tokens[self.position][1]!r}")
        return result

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def take(self, *ops: str) -> str | None:
        token = self.peek()
        if token is not None and token[0] == "op" and token[1] in ops:
            self.position += 1
            return token[1]
        return None

    def expect(self, op: str) -> None:
        if self.take(op) is None:
            token = self.peek()
            found = "the end" if token is None else repr(token[1])
            raise _Malformed(f"expected {op!r}, found {found}")

    def expr(self) -> sympy.Expr:
        result = self.term()
        while (op := self.take("+", "-")) is not None:
            right = self.term()
            result = result + right if op == "+" else result - right
        return result

    def term(self) -> sympy.Expr:
        result = self.unary()
        while (op := self.take("*", "/", "//", "%")) is not None:
            right = self.unary()
            if op == "*":
                result = result * right
            elif op == "/":
                result = result / right
            elif op == "//":
                result = _floordiv(result, right)
            else:
                result = sympy.Mod(result, right)
            _check_size(result)
        return result

    def unary(self) -> sympy.Expr:
        if (op := self.take("-", "+")) is not None:
            with self.nested():
                operand = self.unary()
            return -operand if op == "-" else operand
        return self.power()

    def power(self) -> sympy.Expr:
        base = self.atom()
        if self.take("**") is None:
            return base
        with self.nested():
            exponent = self.unary()
        if not exponent.is_Integer or abs(int(exponent)) > MAX_EXPONENT:
            raise _Malformed(f"the exponent {str(exponent)[:40]} is not an integer in "
                             f"[-{MAX_EXPONENT}, {MAX_EXPONENT}]")
        result = base ** exponent
        _check_size(result)
        return result

    def atom(self) -> sympy.Expr:
        token = self.peek()
        if token is None:
            raise _Malformed("it ends early")
        kind, text = token
        self.position += 1
        if kind == "int":
            if len(text) > MAX_DIGITS:
                raise _Malformed(f"the integer {text[:20]}... is too large")
            return sympy.Integer(int(text))
        if kind == "name":
            if self.take("(") is None:
                return self.symbol(text)
            if text not in FUNCTIONS:
                raise _Malformed(f"{text!r} is not a known function "
                                 f"({', '.join(sorted(FUNCTIONS))})")
            with self.nested():
                args = [self.expr()]
                while self.take(",") is not None:
                    args.append(self.expr())
                self.expect(")")
            arity, build = FUNCTIONS[text]
            if (arity is None and len(args) < 2) or (arity is not None and len(args) != arity):
                wanted = "two or more" if arity is None else str(arity)
                raise _Malformed(f"{text} takes {wanted} arguments, got {len(args)}")
            return build(*args)
        if text == "(":
            with self.nested():
                inner = self.expr()
                self.expect(")")
            return inner
        raise _Malformed(f"unexpected {text!r}")

    @contextlib.contextmanager
    def nested(self):
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _Malformed(f"it is nested more than {MAX_DEPTH} deep")
        try:
            yield
        finally:
            self.depth -= 1


def _tokenize(text: str) -> list[tuple[str, str]]:
    tokens = []
    position, end = 0, len(text.rstrip(" \t\r\n"))
    while position < end:
        match = _TOKEN.match(text, position)
        if match is None:
            bad = text[position:].lstrip(" \t\r\n")[:1]
            raise _Malformed(f"{bad!r} is not part of a shape expression")
        kind = match.lastgroup
        tokens.append((kind, match.group(kind)))
        position = match.end()
    return tokens


def _check_size(value: sympy.Expr) -> None:
    # sympy gathers the numbers of a product or a power into its leading coefficient, so a
    # number can only grow there (a literal is bounded when it is read).
    for number in (value.as_coeff_Mul()[0], value.as_coeff_Add()[0]):
        if isinstance(number, sympy.Rational) and max(
                abs(number.p).bit_length(), abs(number.q).bit_length()) > MAX_BITS:
            raise _Malformed(f"a number in it has more than {MAX_BITS} bits")


def parse_shape_expr(text: str, *, where: str | None = None,
                     symbol: Callable[[str], sympy.Symbol] = sympy.Symbol,
                     evaluate: bool = True) -> sympy.Expr:
    """`text` (a dim or a size formula) as a sympy expression whose symbols are `symbol(name)`.

    `where` names the file the text was read from, for the error. Raises `ModuleFormatError`
    for anything outside the grammar (see the module's docstring); never runs code.
    """
    if not isinstance(text, str):
        raise _error(where, repr(text), f"a shape expression is text, not {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise _error(where, text, f"it is longer than {MAX_LENGTH} characters")
    try:
        with sympy.core.parameters.evaluate(evaluate):
            result = _Parser(text, symbol).parse()
    except _Malformed as e:
        raise _error(where, text, str(e)) from None
    except (ZeroDivisionError, ArithmeticError, TypeError, ValueError, RecursionError) as e:
        raise _error(where, text, f"it does not evaluate ({type(e).__name__}: {e})") from None
    if result.has(sympy.zoo, sympy.oo, -sympy.oo, sympy.nan) or not isinstance(result, sympy.Expr):
        raise _error(where, text, "it is not a finite expression")
    return result


@functools.lru_cache(maxsize=1024)
def parse_cached(text: str) -> sympy.Expr:
    """`parse_shape_expr(text)` over plain symbols, remembered (the runtime's hot path)."""
    return parse_shape_expr(text)


def _error(where: str | None, text: str, reason: str) -> ModuleFormatError:
    place = f"{where}: " if where else ""
    shown = text if len(text) <= 200 else text[:200] + "..."
    return ModuleFormatError(f"{place}malformed shape expression {shown!r}: {reason}")
