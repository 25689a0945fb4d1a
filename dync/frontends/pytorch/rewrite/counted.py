"""`while` loops whose condition bounds their trips: a counter compared with a limit the loop
does not change, the counter stepped by a positive constant on every trip that goes on,

    steps = 0
    while steps < self.max_len:        # or `steps <= n`, `n > steps`, `... and not done`
        ...                            # may `break` on data (an end token)
        steps += 1                     # or `steps = steps + 1`, unconditionally

as greedy decoders are written. Such a loop makes at most `ceil((limit - counter) / step)`
trips from where it starts, so a list it appends to can become a bounded buffer, as in a
`for` over a range (`runtime.while_`); without a bound the loop is refused in one graph.

Found on the syntax tree before exits become flags. The limit is evaluated once more when the
loop starts, so it is taken only where that cannot change anything: constants, names,
attributes, sizes (`x.size(d)`, `x.shape[d]`) and arithmetic on them.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass

from .syntax import walk_same_scope


@dataclass(frozen=True)
class Counter:
    name: str
    step: int
    inclusive: bool  # `<=`: one more trip
    limit: ast.expr  # a copy, evaluated in the loop's scope when it starts


def counted(loop: ast.While) -> Counter | None:
    """The counter bounding `loop` (its original syntax, before exits become flags), or None."""
    body_nodes = list(walk_same_scope(loop.body))
    if any(isinstance(n, ast.Continue) for n in body_nodes):
        return None  # a trip that continues may skip the step
    if any(isinstance(n, ast.Nonlocal | ast.Global) for n in ast.walk(loop)):
        return None  # a nested function may step the counter or change the limit
    stores = [n for n in body_nodes
              if isinstance(n, ast.Name | ast.Attribute) and isinstance(n.ctx, ast.Store | ast.Del)]
    assigned = {n.id if isinstance(n, ast.Name) else n.attr for n in stores}
    joined = isinstance(loop.test, ast.BoolOp) and isinstance(loop.test.op, ast.And)
    tests = loop.test.values if joined else [loop.test]
    for test in tests:
        compared = _compared(test)
        if compared is None:
            continue
        name, limit, inclusive = compared
        if not _pure(limit) or _names(limit) & assigned:
            continue
        step = _step(loop.body, name, stores)
        if step is not None:
            return Counter(name, step, inclusive, copy.deepcopy(limit))
    return None


def _compared(test: ast.expr) -> tuple[str, ast.expr, bool] | None:
    """(counter, limit, inclusive) of `counter < limit`, `counter <= limit`, `limit > counter`
    or `limit >= counter`."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if isinstance(op, ast.Lt | ast.LtE) and isinstance(left, ast.Name):
        return left.id, right, isinstance(op, ast.LtE)
    if isinstance(op, ast.Gt | ast.GtE) and isinstance(right, ast.Name):
        return right.id, left, isinstance(op, ast.GtE)
    return None


def _step(body: list[ast.stmt], name: str, stores: list[ast.AST]) -> int | None:
    """The constant `name` grows by in a statement of `body`'s own level (run on every trip
    that reaches it; a trip that stops before it ends the loop), where it is the only
    assignment to `name` among `stores` (the body's)."""
    if sum(_is_name(n, name) for n in stores) != 1:
        return None
    for stmt in body:
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.Add) \
                and _is_name(stmt.target, name):
            grow = stmt.value
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
                and _is_name(stmt.targets[0], name) and isinstance(stmt.value, ast.BinOp) \
                and isinstance(stmt.value.op, ast.Add):
            left, right = stmt.value.left, stmt.value.right
            grow = right if _is_name(left, name) else left if _is_name(right, name) else None
        else:
            continue
        if isinstance(grow, ast.Constant) and type(grow.value) is int and grow.value > 0:
            return grow.value
        return None
    return None


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv)


def _pure(node: ast.expr) -> bool:
    """Whether evaluating `node` once more changes nothing and reads no tensor data."""
    if isinstance(node, ast.Constant):
        return type(node.value) is int
    if isinstance(node, ast.Name):
        return True
    if isinstance(node, ast.Attribute):
        return _pure(node.value)
    if isinstance(node, ast.BinOp):
        return isinstance(node.op, _ARITHMETIC) and _pure(node.left) and _pure(node.right)
    if isinstance(node, ast.Subscript):  # x.shape[d]
        return isinstance(node.value, ast.Attribute) and node.value.attr == "shape" \
            and _pure(node.value.value) and isinstance(node.slice, ast.Constant)
    if isinstance(node, ast.Call):  # x.size(d)
        return isinstance(node.func, ast.Attribute) and node.func.attr == "size" \
            and _pure(node.func.value) and not node.keywords \
            and all(isinstance(a, ast.Constant) for a in node.args)
    return False


def _names(node: ast.expr) -> set[str]:
    """The names and attribute names `node` reads."""
    return {n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(node)
            if isinstance(n, ast.Name | ast.Attribute)}
