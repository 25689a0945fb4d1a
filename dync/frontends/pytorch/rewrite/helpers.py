"""The free functions a rewritten function calls by name, rewritten as its methods are.

Research code keeps much of a model in module-level helpers that `forward` calls:
PointNet++'s `farthest_point_sample` (a loop over the samples) and `query_ball_point`,
DGCNN's `knn` and `get_graph_feature`, ToMe's `bipartite_soft_matching`. Such a helper's
control flow on tensor data needs the same rewrite as a method's (DyCL §5.2), and a loop in
it the same `for_range`. A rewritten function's globals are a copy of its module's, so each
name a rewritten function calls that refers to such a helper is bound, in that copy only, to
the helper rewritten: nothing of the user's modules is patched, and calls from elsewhere run
the original.

A helper counts when it is a plain Python function outside the standard library and the
frameworks dync traces through (torch and its kin, numpy, einops): their control flow is on
Python values or is traced as it stands. A helper the rewrite rejects stays as written.
"""

from __future__ import annotations

import ast
import sys
import types
from collections.abc import Callable

from ....errors import UnsupportedConstructError

# Top-level packages whose functions are traced as they are, never rewritten.
FRAMEWORKS = frozenset({"torch", "torchvision", "torchaudio", "functorch", "numpy", "einops",
                        "dync", "sympy", "triton"})


def called_names(tree: ast.FunctionDef) -> set[str]:
    """The names `tree` calls as plain names (`f(...)`)."""
    return {n.func.id for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}


def user_function(value: object) -> bool:
    """Whether `value` is a plain function of the user's code (see the module docstring)."""
    if not isinstance(value, types.FunctionType):
        return False
    top = (value.__module__ or "").split(".")[0]
    return top not in FRAMEWORKS and top not in sys.stdlib_module_names


class Helpers:
    """The helpers of one rewrite (one export), each rewritten at most once."""

    def __init__(self, rewrite: Callable, needs: Callable):
        self._rewrite, self._needs = rewrite, needs  # transform's, passed to avoid a cycle
        self._done: dict[Callable, Callable | None] = {}
        self.rewritten: dict[str, object] = {}  # qualified name -> RewrittenFunction

    def replacement(self, fn: Callable) -> Callable | None:
        """`fn` rewritten, or None where it needs no rewrite or the rewrite rejects it."""
        if fn in self._done:
            return self._done[fn]  # None while `fn` is being rewritten: it calls itself
        self._done[fn] = None
        if not self._needs(fn, self):
            return None
        try:
            done = self._rewrite(fn, helpers=self)
        except (UnsupportedConstructError, OSError, TypeError, SyntaxError):
            return None
        namespace = done.function.__globals__
        for name, value in list(namespace.items()):
            if value is fn:  # a recursive helper calls its rewritten self
                namespace[name] = done.function
        self._done[fn] = done.function
        self.rewritten[f"{fn.__module__}.{fn.__qualname__}"] = done
        return done.function

    def bind(self, tree: ast.FunctionDef, namespace: dict) -> None:
        """Bind, in `namespace` (a rewritten function's globals), each helper `tree` calls by
        name to its rewritten form."""
        for name in called_names(tree):
            value = namespace.get(name)
            if user_function(value) and (new := self.replacement(value)) is not None:
                namespace[name] = new

    def any_needs_rewrite(self, tree: ast.FunctionDef, namespace: dict) -> bool:
        """Whether a helper `tree` calls by name needs rewriting."""
        return any(user_function(v := namespace.get(name)) and self.replacement(v) is not None
                   for name in called_names(tree))
