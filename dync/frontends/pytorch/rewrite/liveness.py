"""Which variables the rest of a function reads after each of its `if`, `while` and `for`
statements: a backward dataflow over the structured AST (the classic live-variables analysis,
Aho et al. §9.2.5), so that the rewriter passes across control flow only what is read later.

A temporary assigned in one branch, a masked selection whose size depends on the data, or a
loop variable left behind by `break` is dead after its statement; carried out of a `cond` or a
`while_loop` it would be an output whose shape differs between paths or whose size is an
unbacked symbol, and the export fails on a program that needs none of it (issue 32, item c).

The analysis is conservative: where it cannot see every read (`locals()`, `global`, a `break`
the rewriter left in place), it answers nothing and every assigned variable stays live; a name
a nested function or lambda reads is live everywhere, since it may be called at any point.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_SCOPES = (*_DEFS, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_READS_BY_NAME = frozenset({"locals", "vars", "eval", "exec", "dir"})
_OPAQUE = (ast.Global, ast.Nonlocal, ast.Yield, ast.YieldFrom, ast.Await, ast.Break, ast.Continue)


@dataclass
class Liveness:
    """`after[id(stmt)]`: the names live right after an `if` or a loop (for a loop: what a
    `break` must hand on); `head[id(loop)]`: the names live at the head of a `while`/`for`
    (what an iteration must hand to the next, or to the code after the loop)."""

    after: dict[int, frozenset[str]] = field(default_factory=dict)
    head: dict[int, frozenset[str]] = field(default_factory=dict)


def analyze(func: ast.FunctionDef) -> Liveness | None:
    """The live sets of `func`'s own control-flow statements, or None when some read of a
    variable cannot be seen in the syntax."""
    escaping: set[str] = set()
    for node in ast.walk(func):
        if isinstance(node, _OPAQUE):
            return None
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in _READS_BY_NAME):
            return None
        if node is not func and isinstance(node, _SCOPES):
            escaping |= _reads(node)
    result = Liveness()
    _Dataflow(frozenset(escaping), result).block(func.body, frozenset(escaping))
    return result


class _Dataflow:
    def __init__(self, always: frozenset[str], result: Liveness):
        self.always = always
        self.result = result

    def block(self, stmts: list[ast.stmt], live: frozenset[str]) -> frozenset[str]:
        for stmt in reversed(stmts):
            live = self.stmt(stmt, live)
        return live

    def stmt(self, stmt: ast.stmt, live: frozenset[str]) -> frozenset[str]:
        if isinstance(stmt, ast.If):
            self.result.after[id(stmt)] = live
            return _reads(stmt.test) | self.block(stmt.body, live) | self.block(stmt.orelse, live)
        if isinstance(stmt, ast.While | ast.For):
            self.result.after[id(stmt)] = live
        if isinstance(stmt, ast.While):
            exit_live = _reads(stmt.test) | self.block(stmt.orelse, live)
            return self._loop(stmt, exit_live, frozenset())
        if isinstance(stmt, ast.For):
            head = self._loop(stmt, self.block(stmt.orelse, live), _writes(stmt.target))
            return head | _reads(stmt.iter)
        if isinstance(stmt, ast.Return):
            return _reads(stmt) | self.always
        if isinstance(stmt, _DEFS):  # a nested def binds its name; its body is its own
            return (live - {stmt.name}) | _reads(stmt) | self.always
        if _is_compound(stmt):
            # with/try/match: everything read anywhere in it is live throughout it.
            inner = live | _reads(stmt)
            for body in _bodies(stmt):
                self.block(body, inner)
            return inner
        return (live - _writes(stmt)) | _reads(stmt) | self.always

    def _loop(self, loop: ast.While | ast.For, exit_live: frozenset[str],
              target: frozenset[str]) -> frozenset[str]:
        head = exit_live
        while True:  # the sets only grow, over finitely many names
            grown = head | (self.block(loop.body, head) - target)
            if grown == head:
                break
            head = grown
        self.result.head[id(loop)] = head
        return head


def _reads(node: ast.AST) -> frozenset[str]:
    """Every name read anywhere under `node`, nested scopes included (over-approximating)."""
    names = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            names.add(n.id)
        elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
            names.add(n.target.id)  # `v += e` reads v
    return frozenset(names)


def _writes(node: ast.AST) -> frozenset[str]:
    """The names a simple statement (or a loop target) binds in the function's own scope."""
    if isinstance(node, _DEFS):
        return frozenset({node.name})
    names = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store | ast.Del):
            names.add(n.id)
        if isinstance(n, _SCOPES + _COMPREHENSIONS):
            continue  # their own bindings are not the function's
        stack.extend(ast.iter_child_nodes(n))
    return frozenset(names)


def _is_compound(stmt: ast.stmt) -> bool:
    return any(isinstance(value, list) and value and isinstance(value[0], ast.stmt | ast.excepthandler
                                                                   | ast.match_case)
               for _, value in ast.iter_fields(stmt))


def _bodies(stmt: ast.stmt):
    for _, value in ast.iter_fields(stmt):
        if not (isinstance(value, list) and value):
            continue
        for item in value:
            if isinstance(item, ast.excepthandler | ast.match_case):
                yield item.body
        if isinstance(value[0], ast.stmt):
            yield value
