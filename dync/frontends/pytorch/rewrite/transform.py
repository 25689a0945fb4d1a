"""Rewrite a `forward` so that its data-dependent control flow can be exported whole (DyCL §5.2).

Three AST passes over the function, on the live module's method:

1. **exits to flags** — `return`/`break`/`continue` nested in `if`s and loops become
   assignments to flags (`__dync_returned`, `__dync_break_<k>`, ...) and the statements
   after them are guarded by `if not <flag>`; loops stop early on the flags. Static flags
   cost nothing (they stay Python bools); flags set under a data-dependent condition become
   tensors and guard the rest of the program with `cond`s, as an early exit should.
2. **predicates** — `and`/`or`/`not` in conditions and `.item()`, `bool()`, `float()`,
   `int()`, `len()` anywhere become `__dync__` calls that keep tensors when the value is traced;
   `v = []` makes a list that becomes a bounded buffer if it grows on a data-dependent path;
   inside an `if` or a loop, `v += e` and `v.op_(...)` statements on a plain name become
   `v = v + e` and `v = v.op(...)` (a branch must not update its inputs in place; outside
   them they stay and write the caller's tensor as eager does), and
   `h[i] = v` and `h[i] op= v` on a variable that only ever holds tensors the function made
   (`aliasing.py`) become `h = __dync__.setitem(h, i, v)`; `x[i]` becomes `__dync__.getitem`
   (the index may be a 0-d tensor), `torch.tensor(...)` and `x.data` become their
   `values.py` forms, which are the same on real tensors and traceable inside a branch.
3. **functional control flow** — each `if` becomes two nested functions over the variables
   it assigns (found by a def/use scan), returning those live after it (`liveness.py`), and
   a call to `__dync__.if_`; a loop carries only what is live at its head; each `while` becomes
   `__dync__.while_` (given its counter and limit where a counter bounds it: `counted.py`,
   found in pass 1, before its exits become flags); `a if c else b` becomes
   `__dync__.if_exp`; `for v in range(...)` becomes `__dync__.for_range`, a `while_loop` when a bound is a symbolic size. Other `for` loops stay
   Python: they iterate over static things (ModuleLists, lists, constant ranges) and are
   unrolled by tracing, which is DyCL's partial evaluation done by the tracer.

What is static and what is tensor-dependent is decided when the program runs (see
`runtime.py`), so the rewritten function is exactly the original on real tensors. Generated
code keeps the user's file and line numbers, so errors and stack traces point at their code.
"""

from __future__ import annotations

import ast
import functools
import inspect
import itertools
import textwrap
import types
from collections.abc import Callable
from dataclasses import dataclass

from ....errors import UnsupportedConstructError
from . import liveness, runtime
from .aliasing import fresh_names, fresh_writes
from .counted import counted
from .helpers import Helpers
from .predicates import _number_call, _Predicates, _rounding, _square_root
from .syntax import _assign, _call, _const, _name, _thunk, walk_same_scope

RET_FLAG, RET_VALUE = "__dync_returned", "__dync_return_value"
GENERATED_PREFIX = "__dync_"


@dataclass
class RewrittenFunction:
    original: Callable
    function: Callable
    source: str
    filename: str


def needs_rewrite(fn: Callable, helpers: Helpers | None = None) -> bool:
    """True when `fn`'s body has control flow or scalar conversions worth rewriting, or (given
    `helpers`) it calls a helper function that has."""
    try:
        tree = _parse(fn)[0]
    except (OSError, TypeError, SyntaxError):
        return False
    if _needs_rewrite(tree):
        return True
    return helpers is not None and helpers.any_needs_rewrite(tree, inspect.unwrap(fn).__globals__)


def _needs_rewrite(tree: ast.FunctionDef) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.If | ast.While | ast.IfExp) or _symbolic_range(node) \
                or _over_a_name(node):
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "item":
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len":
            return True
        if isinstance(node, ast.Call) and _rounding(node) and isinstance(node.args[0], ast.BinOp):
            return True  # `int(x.shape[1] * 0.7)`, `int(n / (H * W / 49))`: `runtime.to_int`
        if isinstance(node, ast.Call) and (_square_root(node) or _number_call(node)):
            return True  # `float(x.shape[1])`, `int(t.max())`, `math.sqrt(d)`
        if isinstance(node, ast.Attribute) and node.attr == "data" and isinstance(node.ctx, ast.Load):
            return True
        if isinstance(node, ast.Subscript) and any(isinstance(n, ast.Call) for n in ast.walk(node.slice)):
            return True  # `x[t.argmax()]`: the index may be a 0-d tensor
    return False


def rewrite_function(fn: Callable, owner: type | None = None, entry: bool = False,
                     helpers: Helpers | None = None) -> RewrittenFunction:
    """`entry`: `fn` is the model's own forward, whose arguments only the user's caller
    shares (`aliasing.fresh_names`). `helpers`: the free functions `fn` calls by name are
    bound to their rewritten forms (`helpers.py`)."""
    func_def, filename, first_line = _parse(fn)
    where = f"{filename}:{first_line}"
    _reject_unsupported(func_def, filename, first_line)
    counter = itertools.count()
    func_def.body = _ExitsToFlags(counter).function_body(func_def.body)
    private = entry and owner is not None and not _calls_itself(func_def)
    func_def = _Predicates(filename, first_line, fresh_names(func_def, private),
                           fresh_writes(func_def)).visit(func_def)
    live = liveness.analyze(func_def)
    func_def = _Functionalize(counter, filename, first_line, live).visit(func_def)
    func_def = _SuperCall().visit(func_def)
    func_def.decorator_list = []
    module = ast.Module(body=[func_def], type_ignores=[])
    ast.fix_missing_locations(module)
    source = ast.unparse(func_def)
    ast.increment_lineno(module, first_line - 1)
    namespace = dict(fn.__globals__)
    if fn.__closure__:
        namespace.update(zip(fn.__code__.co_freevars, (c.cell_contents for c in fn.__closure__), strict=True))
    namespace["__dync__"] = runtime
    namespace["__dync_class__"] = owner
    if helpers is not None:
        helpers.bind(func_def, namespace)
    try:
        code = compile(module, filename, "exec")
    except SyntaxError as e:
        raise UnsupportedConstructError("rewritten forward", f"does not compile: {e}", where) from e
    exec(code, namespace)
    function = namespace[func_def.name]
    if entry:
        function = _numbers_returned(function)
    return RewrittenFunction(fn, function, source, filename)


def _numbers_returned(forward: Callable) -> Callable:
    """The model's rewritten `forward`, returning as Python numbers the 0-d tensors that stand
    for them (`runtime.numbers_returned`): what the user's code returns in eager."""
    @functools.wraps(forward)
    def returning_numbers(*args, **kwargs):
        return runtime.numbers_returned(forward(*args, **kwargs))

    return returning_numbers


def _calls_itself(func: ast.FunctionDef) -> bool:
    """Whether `func` calls itself (`self.forward(...)`, recursion over a tree): then its
    arguments may be its own caller's tensors."""
    return any(isinstance(n, ast.Call) and (
        isinstance(n.func, ast.Attribute) and n.func.attr == func.name
        or isinstance(n.func, ast.Name) and n.func.id == func.name) for n in ast.walk(func))


def _parse(fn: Callable) -> tuple[ast.FunctionDef, str, int]:
    fn = inspect.unwrap(fn)
    if isinstance(fn, types.MethodType):
        fn = fn.__func__
    lines, first_line = inspect.getsourcelines(fn)
    filename = inspect.getsourcefile(fn) or "<unknown>"
    tree = ast.parse(textwrap.dedent("".join(lines)))
    func_def = tree.body[0]
    if not isinstance(func_def, ast.FunctionDef):
        raise TypeError(f"{fn} is not a plain function")
    return func_def, filename, first_line


def _reject_unsupported(func_def: ast.FunctionDef, filename: str, first_line: int) -> None:
    for node in ast.walk(func_def):
        if isinstance(node, ast.For | ast.While) and node.orelse and _exits(node.body, (ast.Break,)):
            raise UnsupportedConstructError(
                "loop `else` clause with `break`", "rewrite it with a flag",
                f"{filename}:{first_line + node.lineno - 1}",
            )
        if isinstance(node, ast.Try) and _exits(node.body + node.finalbody, (ast.Return,)):
            raise UnsupportedConstructError(
                "return inside try", "move the return after the try statement",
                f"{filename}:{first_line + node.lineno - 1}",
            )


def _exits(stmts, kinds, loops_are_barriers: bool = False) -> bool:
    return any(isinstance(n, kinds) for n in walk_same_scope(stmts, loops_are_barriers))


def _assigned_names(stmts) -> list[str]:
    names: set[str] = set()
    for node in walk_same_scope(stmts):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            names.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
    for stmt in stmts:  # nested defs at this level are bound here too
        if isinstance(stmt, ast.FunctionDef | ast.ClassDef):
            names.add(stmt.name)
    return sorted(n for n in names if not n.startswith(("__dync_then", "__dync_else", "__dync_cond", "__dync_body")))


# -- pass 1: exits to flags ------------------------------------------------------------------------
class _ExitsToFlags:
    def __init__(self, counter):
        self.counter = counter
        self.loops: list[tuple[str | None, str | None]] = []  # (break flag, continue flag)
        self.lower_returns = False

    def function_body(self, body: list[ast.stmt]) -> list[ast.stmt]:
        # Returns are lowered only when one sits inside a compound statement.
        self.lower_returns = any(
            _exits([stmt], (ast.Return,)) for stmt in body if not isinstance(stmt, ast.Return)
        )
        lowered = self.block(body)
        if not self.lower_returns:
            return lowered
        return [_assign(RET_FLAG, _const(False)), _assign(RET_VALUE, _const(None)), *lowered,
                ast.Return(value=_name(RET_VALUE))]

    def block(self, stmts: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for i, stmt in enumerate(stmts):
            rest = stmts[i + 1:]
            if isinstance(stmt, ast.If) and rest and self._absorb(stmt, rest):
                out.extend(self.stmt(stmt))  # `if c: ...; return` + rest -> if c: ... else: rest
                break
            flags = self.flags_set_by(stmt)  # before lowering replaces the exits in stmt
            out.extend(self.stmt(stmt))
            if flags and rest:
                guarded = self.block(rest)
                for flag in reversed(flags):
                    guard = ast.If(test=_call("not_", _name(flag)), body=guarded, orelse=[])
                    guard.dync_guard = flag
                    guarded = [guard]
                out.extend(guarded)
                break
        return out or [ast.Pass()]

    def _absorb(self, stmt: ast.If, rest: list[ast.stmt]) -> bool:
        """Move the statements after an `if` whose one branch always exits into the other
        branch, so that both branches of the resulting if are complete paths."""
        if self.always_exits(stmt.body):
            stmt.orelse = [*stmt.orelse, *rest]
            return True
        if stmt.orelse and self.always_exits(stmt.orelse):
            stmt.body = [*stmt.body, *rest]
            return True
        return False

    def always_exits(self, stmts: list[ast.stmt]) -> bool:
        if not stmts:
            return False
        last = stmts[-1]
        if isinstance(last, ast.Return):
            return self.lower_returns
        if isinstance(last, ast.Break | ast.Continue):
            return bool(self.loops)
        if isinstance(last, ast.If):
            return self.always_exits(last.body) and self.always_exits(last.orelse)
        return False

    def flags_set_by(self, stmt: ast.stmt) -> list[str]:
        flags = []
        if self.lower_returns and _exits([stmt], (ast.Return,)):
            flags.append(RET_FLAG)
        if self.loops:
            brk, cont = self.loops[-1]
            if brk and _exits([stmt], (ast.Break,), loops_are_barriers=True):
                flags.append(brk)
            if cont and _exits([stmt], (ast.Continue,), loops_are_barriers=True):
                flags.append(cont)
        return flags

    def stmt(self, stmt: ast.stmt) -> list[ast.stmt]:
        if isinstance(stmt, ast.Return) and self.lower_returns:
            value = stmt.value if stmt.value is not None else _const(None)
            return [ast.copy_location(_assign(RET_VALUE, value), stmt),
                    ast.copy_location(_assign(RET_FLAG, _const(True)), stmt)]
        if isinstance(stmt, ast.Break) and self.loops and self.loops[-1][0]:
            return [ast.copy_location(_assign(self.loops[-1][0], _const(True)), stmt)]
        if isinstance(stmt, ast.Continue) and self.loops and self.loops[-1][1]:
            return [ast.copy_location(_assign(self.loops[-1][1], _const(True)), stmt)]
        if isinstance(stmt, ast.If):
            stmt.body = self.block(stmt.body)
            stmt.orelse = self.block(stmt.orelse) if stmt.orelse else []
            return [stmt]
        if isinstance(stmt, ast.For | ast.While):
            return self.loop(stmt)
        if isinstance(stmt, ast.With | ast.AsyncWith):
            stmt.body = self.block(stmt.body)
            return [stmt]
        if isinstance(stmt, ast.Try):
            stmt.body = self.block(stmt.body)
            stmt.orelse = self.block(stmt.orelse) if stmt.orelse else []
            stmt.finalbody = self.block(stmt.finalbody) if stmt.finalbody else []
            return [stmt]
        return [stmt]

    def loop(self, loop: ast.For | ast.While) -> list[ast.stmt]:
        k = next(self.counter)
        has_break = _exits(loop.body, (ast.Break,), loops_are_barriers=True)
        has_continue = _exits(loop.body, (ast.Continue,), loops_are_barriers=True)
        returns = self.lower_returns and _exits(loop.body, (ast.Return,))
        brk = f"__dync_break_{k}" if has_break else None
        cont = f"__dync_continue_{k}" if has_continue else None
        loop.dync_break = brk
        if isinstance(loop, ast.While):
            loop.dync_counter = counted(loop)  # before the exits become flags
        self.loops.append((brk, cont))
        body = self.block(loop.body)
        self.loops.pop()
        stop_flags = [f for f in (brk, RET_FLAG if returns else None) if f]
        if cont:
            body = [_assign(cont, _const(False)), *body]
        before = [_assign(brk, _const(False))] if brk else []
        if isinstance(loop, ast.While):
            if stop_flags:
                loop.test = ast.BoolOp(op=ast.And(), values=[loop.test] + [
                    ast.UnaryOp(op=ast.Not(), operand=_name(f)) for f in stop_flags])
        else:
            for flag in reversed(stop_flags):
                guard = ast.If(test=_call("not_", _name(flag)), body=body, orelse=[])
                guard.dync_guard = flag
                body = [guard]
            loop.dync_stops = stop_flags  # a `for_range` stops on them (`runtime.for_range`)
        loop.body = body
        return [*before, loop]


def _symbolic_range(node: ast.AST) -> bool:
    """`for v in range(...)` whose bounds are not all constants (they may be sizes)."""
    if not isinstance(node, ast.For):
        return False
    it = node.iter
    return (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"
            and not it.keywords and 1 <= len(it.args) <= 3 and isinstance(node.target, ast.Name)
            and not node.orelse and not all(isinstance(a, ast.Constant) for a in it.args))


def _over_a_name(node: ast.AST) -> bool:
    """`for v in xs` over a variable, or over `x.unbind(d)` / `torch.unbind(x, d)`: the rows
    of a tensor (a time-major sequence, or a batch-major one's steps) whose length may be a
    size, or anything else Python iterates; also as `for i, v in enumerate(...)`."""
    if not isinstance(node, ast.For) or node.orelse:
        return False
    items, target = node.iter, node.target
    if _enumerated(node):
        items, target = items.args[0], target.elts[1]
    return isinstance(target, ast.Name) and (isinstance(items, ast.Name)
                                             or _unbind_operands(items) is not None
                                             or _reversed_operand(items) is not None)


def _reversed_operand(call: ast.expr) -> ast.expr | None:
    """`xs` of `reversed(xs)` over a variable (a Viterbi backtrace over its history list)."""
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) \
            and call.func.id == "reversed" and len(call.args) == 1 and not call.keywords \
            and isinstance(call.args[0], ast.Name):
        return call.args[0]
    return None


def _enumerated(node: ast.For) -> bool:
    """`for i, v in enumerate(items)` (names both, no start)."""
    it, target = node.iter, node.target
    return (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "enumerate"
            and len(it.args) == 1 and not it.keywords and isinstance(target, ast.Tuple)
            and len(target.elts) == 2 and all(isinstance(e, ast.Name) for e in target.elts))


def _unbind_operands(call: ast.expr) -> tuple[ast.expr, ast.expr] | None:
    """(tensor, dim) of `x.unbind(d)`, `x.unbind(dim=d)`, `torch.unbind(x, d)` (d default 0)."""
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute) \
            or call.func.attr != "unbind":
        return None
    args = list(call.args)
    if _is_torch(call.func.value):
        if not args:
            return None
        tensor, args = args[0], args[1:]
    else:
        tensor = call.func.value
    dims = args + [k.value for k in call.keywords if k.arg == "dim"]
    if len(dims) > 1 or any(k.arg != "dim" for k in call.keywords):
        return None
    return tensor, dims[0] if dims else _const(0)


def _is_torch(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == "torch"


# -- pass 3: functional control flow ---------------------------------------------------------------
class _Functionalize(ast.NodeTransformer):
    def __init__(self, counter, filename: str, first_line: int, live: liveness.Liveness | None):
        self.counter = counter
        self.filename = filename
        self.first_line = first_line
        self.live = live
        self.after_break: dict[str, frozenset[str]] = {}  # break flag -> live after its loop

    def _live(self, names: list[str], node: ast.stmt, table: str) -> list[str]:
        """`names` less those dead after `node` (`table` "after") or at its head ("head")."""
        live = None if self.live is None else getattr(self.live, table).get(id(node))
        return names if live is None else [n for n in names if n in live]

    def _site(self, node: ast.AST) -> str:
        return f"{self.filename}:{self.first_line + getattr(node, 'lineno', 1) - 1}"

    def _function(self, name: str, params: list[str], body: list[ast.stmt], returns: list[str]) -> ast.FunctionDef:
        result = ast.Tuple(elts=[_name(n) for n in returns], ctx=ast.Load())
        return ast.FunctionDef(
            name=name,
            args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=p) for p in params], kwonlyargs=[],
                               kw_defaults=[], defaults=[]),
            body=[*body, ast.Return(value=result)],
            decorator_list=[],
            returns=None,
            type_params=[],
        )

    def _bind(self, names: list[str], call: ast.expr) -> ast.stmt:
        if not names:
            return ast.Expr(value=call)
        return ast.Assign(targets=[ast.Tuple(elts=[_name(n, True) for n in names], ctx=ast.Store())], value=call)

    def _state(self, names: list[str], inputs: list[str] | None = None) -> tuple[ast.expr, ast.expr]:
        """The tuple of `names` (what the statement binds) and the call reading the values of
        `inputs` (default: the same names) from the frame."""
        names_tuple = ast.Tuple(elts=[_const(n) for n in names], ctx=ast.Load())
        inputs_tuple = names_tuple if inputs is None else ast.Tuple(
            elts=[_const(n) for n in inputs], ctx=ast.Load())
        locals_call = ast.Call(func=_name("locals"), args=[], keywords=[])
        return names_tuple, _call("state", locals_call, inputs_tuple)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        if self.live is not None:  # before the visit replaces the loops
            for loop in ast.walk(node):
                flag = getattr(loop, "dync_break", None)
                if flag and id(loop) in self.live.after:
                    self.after_break[flag] = self.live.after[id(loop)]
        self.generic_visit(node)
        return node

    def visit_If(self, node: ast.If) -> list[ast.stmt]:
        self.generic_visit(node)
        k = next(self.counter)
        names = _assigned_names(node.body + node.orelse)
        outputs = self._live(names, node, "after")
        then_fn = self._function(f"__dync_then_{k}", names, node.body, outputs)
        else_fn = self._function(f"__dync_else_{k}", names, node.orelse or [ast.Pass()], outputs)
        names_tuple, values = self._state(outputs, names)
        call = _call("if_", node.test, _name(then_fn.name), _name(else_fn.name), names_tuple, values,
                     _const(self._site(node)))
        if getattr(node, "dync_guard", None) == RET_FLAG:
            # The false branch is "already returned": only the return value is live there.
            call.keywords.append(ast.keyword(arg="returned_if_false", value=_const(True)))
        breaks = tuple((flag, tuple(sorted(live))) for flag, live in self.after_break.items()
                       if flag in outputs)
        if breaks:  # a branch that breaks hands on only what is live after its loop
            call.keywords.append(ast.keyword(arg="breaks", value=_const(breaks)))
        out = [then_fn, else_fn, self._bind(outputs, call)]
        return [ast.copy_location(s, node) for s in out]

    def visit_While(self, node: ast.While) -> list[ast.stmt]:
        self.generic_visit(node)
        k = next(self.counter)
        names = self._live(_assigned_names(node.body), node, "head")
        cond_fn = ast.FunctionDef(
            name=f"__dync_cond_{k}",
            args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=p) for p in names], kwonlyargs=[],
                               kw_defaults=[], defaults=[]),
            body=[ast.Return(value=node.test)], decorator_list=[], returns=None, type_params=[],
        )
        body_fn = self._function(f"__dync_body_{k}", names, node.body, names)
        names_tuple, values = self._state(names)
        call = _call("while_", _name(cond_fn.name), _name(body_fn.name), names_tuple, values,
                     _const(self._site(node)))
        counter = getattr(node, "dync_counter", None)
        if counter is not None and counter.name in names:
            call.keywords += [
                ast.keyword(arg="counter", value=_const((counter.name, counter.step, counter.inclusive))),
                ast.keyword(arg="limit", value=_thunk(counter.limit))]
        out = [cond_fn, body_fn, self._bind(names, call)]
        return [ast.copy_location(s, node) for s in out]

    def visit_For(self, node: ast.For) -> ast.stmt | list[ast.stmt]:
        """`for v in range(...)` -> `__dync__.for_range`: a Python loop, or a `while_loop`
        when a bound is a symbolic size; `for v in xs` -> `__dync__.for_each`, the same over
        the rows of a tensor or the items of a list (also `reversed`). Other `for` loops (over `self.layers`, `enumerate(...)`,
        constant ranges) stay Python and are unrolled."""
        self.generic_visit(node)
        over_range, over_name = _symbolic_range(node), _over_a_name(node)
        if not (over_range or over_name):
            return node
        it = node.iter
        k = next(self.counter)
        enumerated = not over_range and _enumerated(node)
        targets = [e.id for e in node.target.elts] if enumerated else [node.target.id]
        names = self._live([n for n in _assigned_names(node.body) if n not in targets], node, "head")
        body_fn = self._function(f"__dync_body_{k}", [*targets, *names], node.body, names)
        names_tuple, values = self._state(names)
        if over_range:
            call = _call("for_range", ast.Tuple(elts=it.args, ctx=ast.Load()), _name(body_fn.name),
                         names_tuple, values, _const(self._site(node)))
        else:
            items = it.args[0] if enumerated else it
            unbound = _unbind_operands(items)
            if unbound is not None:  # the rows of the tensor with that dim moved first
                items = _call("unbound", *unbound)
            elif (backwards := _reversed_operand(items)) is not None:
                items = _call("reversed_items", backwards)
            call = _call("for_each", items, _name(body_fn.name), names_tuple, values,
                         _const(self._site(node)))
            if enumerated:
                call.keywords.append(ast.keyword(arg="enumerated", value=_const(True)))
        stops = [f for f in getattr(node, "dync_stops", []) if f in names]
        if stops:
            call.keywords.append(ast.keyword(arg="stops", value=_const(tuple(stops))))
        return [ast.copy_location(s, node) for s in (body_fn, self._bind(names, call))]

    def visit_IfExp(self, node: ast.IfExp) -> ast.expr:
        self.generic_visit(node)
        call = _call("if_exp", node.test, _thunk(node.body), _thunk(node.orelse), _const(self._site(node)))
        return ast.copy_location(call, node)


class _SuperCall(ast.NodeTransformer):
    """`super()` needs the compiler-made `__class__` cell, which exec'd code lacks."""

    def __init__(self):
        self.self_name = None

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        if self.self_name is None and node.args.args:
            self.self_name = node.args.args[0].arg
        self.generic_visit(node)
        return node

    def visit_Call(self, node: ast.Call) -> ast.Call:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "super" and not node.args and self.self_name:
            node.args = [_name("__dync_class__"), _name(self.self_name)]
        return node

