"""Which variables of a function only ever hold tensors the function made itself, so that
writing into one (`h[i] = v`) changes no other variable and may be done on a copy rebound to
the same name (see `values.setitem`). The test is syntactic and conservative: every binding of
the name in the function's own scope must be an expression that returns a new tensor (a
factory, `clone()`, arithmetic, `torch.cat`...). A parameter, a loop or `with` target, a tuple
unpacking, a plain copy of another name, a view (`x[...]`, `x.view(...)`) or a module call
(`nn.Dropout` in eval returns its input itself) is not."""

from __future__ import annotations

import ast

_NEW_FROM_TORCH = frozenset("""
zeros ones full empty zeros_like ones_like full_like empty_like rand randn randint rand_like
randn_like randint_like arange linspace logspace eye tensor cat concat concatenate stack hstack
vstack where matmul mm bmm einsum exp log sigmoid tanh relu softmax log_softmax abs sqrt
clamp maximum minimum cumsum
""".split())
_NEW_FROM_METHOD = frozenset("""
clone new_zeros new_ones new_full new_empty new_tensor matmul exp log sigmoid tanh relu
softmax log_softmax abs sqrt clamp cumsum
""".split())
_TORCH_MODULES = frozenset({"torch", "F"})


def fresh_names(func: ast.FunctionDef) -> frozenset[str]:
    """The names whose every binding in `func`'s own scope makes a new tensor."""
    verdict: dict[str, bool] = {}
    args = func.args
    for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
        if arg is not None:
            verdict[arg.arg] = False
    nodes = list(_own_scope(func.body))
    judged = {id(t) for n in nodes if isinstance(n, ast.Assign) for t in n.targets}
    judged |= {id(n.target) for n in nodes if isinstance(n, ast.AnnAssign | ast.AugAssign)}
    for node in nodes:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    verdict[target.id] = verdict.get(target.id, True) and _makes_new(node.value)
                else:
                    for name in ast.walk(target):
                        if isinstance(name, ast.Name) and isinstance(name.ctx, ast.Store):
                            verdict[name.id] = False
        elif isinstance(node, ast.AugAssign):
            continue  # in place: the object stays what it was
        elif (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del)
              and id(node) not in judged):  # a loop or `with` target, a walrus, `del`
            verdict[node.id] = False
    return frozenset(name for name, fresh in verdict.items() if fresh)


def _makes_new(value: ast.expr) -> bool:
    if isinstance(value, ast.BinOp):
        return True
    if isinstance(value, ast.UnaryOp):
        return isinstance(value.op, ast.USub | ast.Invert | ast.Not)
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)):
        return False
    owner, attr = value.func.value, value.func.attr
    if isinstance(owner, ast.Name) and owner.id in _TORCH_MODULES:
        return attr in _NEW_FROM_TORCH
    return attr in _NEW_FROM_METHOD


def _own_scope(stmts):
    stack = list(stmts)
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
                              | ast.Lambda | ast.ListComp | ast.SetComp | ast.DictComp
                              | ast.GeneratorExp):
                stack.append(child)

