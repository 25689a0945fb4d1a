"""The rewrite's expression pass (`_Predicates`): conditions, `is None` tests, `bool()`/`int()`/`float()` of tensors,
subscripts and subscript assignment, list literals and `len`, rewritten into calls of the
rewrite's runtime, which keep them traceable on dynamic values.
"""

from __future__ import annotations

import ast

from .syntax import _call, _const, _name, _thunk

# -- pass 2: predicates and scalar conversions --------------------------------------------------
_CONVERSIONS = {"bool": "to_bool", "float": "to_float", "int": "to_int"}


_AUGMENTED = {ast.Add: "iadd", ast.Sub: "isub", ast.Mult: "imul", ast.Div: "itruediv",
              ast.FloorDiv: "ifloordiv", ast.Mod: "imod", ast.Pow: "ipow", ast.MatMult: "imatmul",
              ast.BitAnd: "iand", ast.BitOr: "ior", ast.BitXor: "ixor", ast.LShift: "ilshift",
              ast.RShift: "irshift"}


class _Predicates(ast.NodeTransformer):
    def __init__(self, filename: str, first_line: int, fresh: frozenset[str] = frozenset(),
                 fresh_writes: frozenset[int] = frozenset()):
        self.filename = filename
        self.first_line = first_line
        self.fresh = fresh  # variables only ever holding tensors made here (aliasing.py)
        self.fresh_writes = fresh_writes  # writes into a tensor made just before them
        self.depth = 0  # how many ifs and loops the visited statement is inside
        self.counters: set[str] = set()  # variables of the `for v in range(n)` loops around

    def _nested(self, node: ast.AST) -> ast.AST:
        self.depth += 1
        try:
            self.generic_visit(node)
        finally:
            self.depth -= 1
        return node

    def _written_item(self, node: ast.stmt, target: ast.expr) -> str | None:
        """The variable `h` of a target `h[...]` to write on a copy (inside control flow,
        where a branch or loop body may not change what it was given), else None."""
        if (self.depth and isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)
                and (target.value.id in self.fresh or id(node) in self.fresh_writes)):
            return target.value.id
        return None

    def _setitem(self, node: ast.stmt, target: ast.Subscript, value: ast.expr,
                 op: str | None = None) -> ast.stmt:
        """`h[i] = v` -> `h = __dync__.setitem(h, i, v[, op])` (values.py)."""
        name = target.value.id
        call = _call("setitem", _name(name), _index_expr(target.slice), value,
                     *([_const(op)] if op else []))
        return ast.copy_location(ast.Assign(targets=[_name(name, True)], value=call), node)

    def visit_For(self, node: ast.For) -> ast.For:
        counter = _counter(node)
        if counter is None or counter in self.counters:
            return self._nested(node)
        self.counters.add(counter)
        try:
            return self._nested(node)
        finally:
            self.counters.discard(counter)

    def visit_Subscript(self, node: ast.Subscript) -> ast.expr:
        """`x[i]` -> `__dync__.getitem(x, i)` (values.py): `i` may be a 0-d tensor; so may
        `t` of a slice `t:t + 1` where `t` counts a `for t in range(n)` loop (`one_step`)."""
        self.generic_visit(node)
        if not isinstance(node.ctx, ast.Load):
            return node
        index = _index_expr(_with_steps(node.slice, self.counters))
        return ast.copy_location(_call("getitem", node.value, index), node)

    def visit_Attribute(self, node: ast.Attribute) -> ast.expr:
        """`x.data` -> `__dync__.data_of(x)` (values.py)."""
        self.generic_visit(node)
        if node.attr == "data" and isinstance(node.ctx, ast.Load):
            return ast.copy_location(_call("data_of", node.value), node)
        return node

    def visit_Assign(self, node: ast.Assign) -> ast.stmt:
        """`v = []` -> `v = __dync__.new_list(site)`, `v = [a, b]` -> `v = __dync__.new_list(site,
        a, b)`: a list that may grow on a data-dependent path (see `lists.py`); so too each
        list of `h, v = x, []`."""
        self.generic_visit(node)
        if len(node.targets) == 1 and self._written_item(node, node.targets[0]):
            return self._setitem(node, node.targets[0], node.value)
        if len(node.targets) != 1:
            return node
        target = node.targets[0]
        if not isinstance(target, ast.Name | ast.Tuple) or not hasattr(node, "lineno"):
            return node  # the rewrite's own assignments have no line
        site = f"{self.filename}:{self.first_line + node.lineno - 1}"
        if isinstance(target, ast.Name):
            node.value = _new_list(node.value, site)
        elif (isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple)
              and len(target.elts) == len(node.value.elts)):
            node.value.elts = [_new_list(v, site) if isinstance(t, ast.Name) else v
                               for t, v in zip(target.elts, node.value.elts, strict=True)]
        return node

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.stmt:
        """`v += e` -> `v = v + e` inside an `if` or a loop: a branch must not mutate a tensor
        it received. Outside them the statement stays as written: there it writes the
        caller's tensor as eager does (`Signature.input_writes`)."""
        self.generic_visit(node)
        if self._written_item(node, node.target) and type(node.op) in _AUGMENTED:
            return self._setitem(node, node.target, node.value, _AUGMENTED[type(node.op)])
        if not isinstance(node.target, ast.Name) or not self.depth:
            return node
        value = ast.BinOp(left=_name(node.target.id), op=node.op, right=node.value)
        return ast.copy_location(ast.Assign(targets=[_name(node.target.id, True)], value=value), node)

    def visit_Expr(self, node: ast.Expr) -> ast.stmt:
        """`v.add_(e)` -> `v = v.add(e)` inside an `if` or a loop: in-place tensor methods on a
        variable become out-of-place updates of it, so a branch returns the new value instead
        of mutating; outside them, as `visit_AugAssign`, the statement stays."""
        self.generic_visit(node)
        call = node.value
        if (self.depth and isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and isinstance(call.func.value, ast.Name) and call.func.attr.endswith("_")
                and not call.func.attr.startswith("_")):
            name = call.func.value.id
            out_of_place = ast.Call(
                func=ast.Attribute(value=_name(name), attr=call.func.attr[:-1], ctx=ast.Load()),
                args=call.args, keywords=call.keywords,
            )
            return ast.copy_location(ast.Assign(targets=[_name(name, True)], value=out_of_place), node)
        return node

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        if _rounding(node):
            node.args[0] = _exact_divisions(node.args[0])
        if isinstance(node.func, ast.Attribute) and node.func.attr == "item" and not node.args:
            return ast.copy_location(_call("item", node.func.value), node)
        if isinstance(node.func, ast.Name) and node.func.id in _CONVERSIONS and len(node.args) == 1 and not node.keywords:
            return ast.copy_location(_call(_CONVERSIONS[node.func.id], node.args[0]), node)
        if isinstance(node.func, ast.Name) and node.func.id == "len" and len(node.args) == 1:
            return ast.copy_location(_call("length", node.args[0]), node)
        if _square_root(node):
            return ast.copy_location(_call("sqrt", node.args[0]), node)
        if (isinstance(node.func, ast.Attribute) and node.func.attr in ("tensor", "as_tensor")
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "torch"):
            call = _call(node.func.attr, *node.args)
            call.keywords = node.keywords
            return ast.copy_location(call, node)
        if isinstance(node.func, ast.Attribute) and node.func.attr == "new_tensor" and node.args:
            call = _call("new_tensor", node.func.value, *node.args)
            call.keywords = node.keywords
            return ast.copy_location(call, node)
        return node

    def visit_Compare(self, node: ast.Compare) -> ast.expr:
        """`x is None` -> `__dync__.is_none(x)`, `x is not None` -> `__dync__.is_not_none(x)`:
        a predicate where a data-dependent branch left `x` None on one path only
        (`optionals.py`), Python's test elsewhere."""
        self.generic_visit(node)
        if len(node.ops) != 1 or not isinstance(node.ops[0], ast.Is | ast.IsNot):
            return node
        left, right = node.left, node.comparators[0]
        if _is_none_literal(left):
            left, right = right, left
        if not _is_none_literal(right):
            return node
        test = "is_none" if isinstance(node.ops[0], ast.Is) else "is_not_none"
        return ast.copy_location(_call(test, left), node)

    def visit_If(self, node: ast.If) -> ast.If:
        self._nested(node)
        node.test = _condition(node.test)
        return node

    def visit_While(self, node: ast.While) -> ast.While:
        self._nested(node)
        node.test = _condition(node.test)
        return node

    def visit_IfExp(self, node: ast.IfExp) -> ast.IfExp:
        self.generic_visit(node)
        node.test = _condition(node.test)
        return node


def _is_none_literal(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


_ROUNDINGS = {"int", "floor", "ceil"}


def _rounding(node: ast.Call) -> bool:
    """`int(e)`, `math.floor(e)`, `math.ceil(e)` (or `floor(e)`, `ceil(e)` imported)."""
    func = node.func
    name = func.id if isinstance(func, ast.Name) else func.attr if (
        isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
        and func.value.id == "math") else None
    return name in _ROUNDINGS and len(node.args) == 1 and not node.keywords


def _number_call(node: ast.Call) -> bool:
    """`float(e)` or `int(e)` of something other than a literal (`float(x.shape[1])`,
    `int(batch.max())`: `runtime.to_float`, `runtime.to_int`)."""
    return (isinstance(node.func, ast.Name) and node.func.id in ("float", "int")
            and len(node.args) == 1 and not node.keywords
            and not isinstance(node.args[0], ast.Constant))


def _square_root(node: ast.Call) -> bool:
    """`math.sqrt(e)`, which specializes a size `e` (`runtime.sqrt` keeps it symbolic)."""
    func = node.func
    return (isinstance(func, ast.Attribute) and func.attr == "sqrt" and isinstance(func.value, ast.Name)
            and func.value.id == "math" and len(node.args) == 1 and not node.keywords)


def _exact_divisions(expr: ast.expr) -> ast.expr:
    """`expr` with each `/` reached through arithmetic alone made `__dync__.exact_div`
    (`ratios.py`)."""
    if isinstance(expr, ast.UnaryOp):
        expr.operand = _exact_divisions(expr.operand)
    elif isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add | ast.Sub | ast.Mult | ast.Div):
        expr.left, expr.right = _exact_divisions(expr.left), _exact_divisions(expr.right)
        if isinstance(expr.op, ast.Div):
            return ast.copy_location(_call("exact_div", expr.left, expr.right), expr)
    return expr


def _counter(node: ast.For) -> str | None:
    """The variable of `for v in range(n)` or `range(k, n)` with k a literal >= 0: never
    negative."""
    it = node.iter
    if not (isinstance(node.target, ast.Name) and isinstance(it, ast.Call)
            and isinstance(it.func, ast.Name) and it.func.id == "range" and not it.keywords
            and 1 <= len(it.args) <= 2):
        return None
    start = it.args[0] if len(it.args) == 2 else None
    if start is not None and not (isinstance(start, ast.Constant) and type(start.value) is int
                                  and start.value >= 0):
        return None
    return node.target.id


def _with_steps(index: ast.expr, counters: set[str]) -> ast.expr:
    """`index` with each slice `t:t + 1` (no step) of a loop counter `t` made
    `__dync__.one_step(t)`."""
    if isinstance(index, ast.Tuple):
        return ast.copy_location(ast.Tuple(elts=[_with_steps(e, counters) for e in index.elts],
                                           ctx=ast.Load()), index)
    if (isinstance(index, ast.Slice) and index.step is None
            and isinstance(index.lower, ast.Name) and index.lower.id in counters
            and isinstance(index.upper, ast.BinOp) and isinstance(index.upper.op, ast.Add)
            and isinstance(index.upper.left, ast.Name) and index.upper.left.id == index.lower.id
            and isinstance(index.upper.right, ast.Constant) and index.upper.right.value == 1
            and type(index.upper.right.value) is int):
        return ast.copy_location(_call("one_step", index.lower), index)
    return index


def _index_expr(index: ast.expr) -> ast.expr:
    """A subscript's index as an expression: `a:b` -> `slice(a, b, None)`."""
    if isinstance(index, ast.Slice):
        bounds = [part if part is not None else _const(None)
                  for part in (index.lower, index.upper, index.step)]
        return ast.copy_location(ast.Call(func=_name("slice"), args=bounds, keywords=[]), index)
    if isinstance(index, ast.Tuple):
        return ast.copy_location(ast.Tuple(elts=[_index_expr(e) for e in index.elts], ctx=ast.Load()),
                                 index)
    return index


def _new_list(value: ast.expr, site: str) -> ast.expr:
    """`[a, b]` -> `__dync__.new_list(site, a, b)`; anything else as it is."""
    if isinstance(value, ast.List) and not any(isinstance(e, ast.Starred) for e in value.elts):
        return ast.copy_location(_call("new_list", _const(site), *value.elts), value)
    return value


def _condition(test: ast.expr) -> ast.expr:
    if isinstance(test, ast.BoolOp):
        fn = "and_" if isinstance(test.op, ast.And) else "or_"
        return ast.copy_location(_call(fn, *[_thunk(_condition(v)) for v in test.values]), test)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return ast.copy_location(_call("not_", _condition(test.operand)), test)
    if isinstance(test, ast.Compare) and len(test.ops) > 1:  # a < b < c: pairwise, short-circuit
        parts, left = [], test.left
        for op, right in zip(test.ops, test.comparators, strict=True):
            parts.append(ast.Compare(left=left, ops=[op], comparators=[right]))
            left = right
        return ast.copy_location(_call("and_", *[_thunk(p) for p in parts]), test)
    return test
