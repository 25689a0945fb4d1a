"""Python syntax trees the rewrite builds: names, assignments, calls into the rewrite's runtime
(`__dync__.<fn>(...)`), thunks and constants; and the walk over one scope's nodes the
analyses share.
"""

from __future__ import annotations

import ast


def _name(id_: str, store: bool = False) -> ast.Name:
    return ast.Name(id=id_, ctx=ast.Store() if store else ast.Load())


def _assign(target: str, value: ast.expr) -> ast.Assign:
    return ast.Assign(targets=[_name(target, True)], value=value)


def _call(fn: str, *args: ast.expr) -> ast.Call:
    return ast.Call(func=ast.Attribute(value=_name("__dync__"), attr=fn, ctx=ast.Load()), args=list(args), keywords=[])


def _thunk(expr: ast.expr) -> ast.Lambda:
    return ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]), body=expr)


def _const(value) -> ast.Constant:
    return ast.Constant(value=value)


def walk_same_scope(nodes, stop_at_loops: bool = False):
    """ast.walk over `nodes` without entering nested functions/classes (or loops)."""
    stack = list(nodes)
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
                continue
            if stop_at_loops and isinstance(child, ast.For | ast.While):
                continue
            stack.append(child)
