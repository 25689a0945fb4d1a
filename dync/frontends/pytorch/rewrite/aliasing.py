"""Which variables of a function only ever hold tensors the function made itself and shares
with no other name, so that writing into one (`h[i] = v`) changes nothing else and may be done
on a copy rebound to the same name (see `values.setitem`). The test is syntactic and
conservative, both ways:

- every binding of the name in the function's own scope makes a new tensor (a factory,
  `clone()`, arithmetic, `torch.cat`...): a parameter, a loop or `with` target, a tuple
  unpacking, a plain copy of another name, a view (`x[...]`, `x.view(...)`) or a module call
  (`nn.Dropout` in eval returns its input itself) is not;
- no read of the name lets its tensor reach another name, a container or an unknown callee's
  result kept under another name (`y = h`, `y = h[0]`, `y = self.drop(h)`, `xs.append(h)`,
  `for row in h`): where one does, eager's write through `h` would change that other name too.
"""

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
    """The names whose every binding in `func`'s own scope makes a new tensor, and whose
    tensor no other name can reach."""
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
    parents = {child: node for node in ast.walk(func) for child in ast.iter_child_nodes(node)}
    for node in ast.walk(func):
        if (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
                and verdict.get(node.id) and not _kept_to_itself(node, parents)):
            verdict[node.id] = False
    return frozenset(name for name, fresh in verdict.items() if fresh)


_METADATA = frozenset({"shape", "dtype", "device", "ndim", "requires_grad", "is_cuda"})
_READS = frozenset("""
size dim numel item tolist sum mean max min amax amin argmax argmin prod std var norm any all
abs exp log sigmoid tanh relu softmax log_softmax sqrt clamp cumsum matmul topk sort eq ne lt
le gt ge equal allclose isnan isinf nonzero count_nonzero
""".split()) | _NEW_FROM_METHOD
_PLAIN_FUNCTIONS = frozenset({"len", "int", "float", "bool", "print", "isinstance", "str", "repr",
                              "type", "id", "hash"})


def _kept_to_itself(name: ast.Name, parents: dict) -> bool:
    """Whether this read of `name` cannot hand its tensor to another name: the value it
    flows into is a new tensor, a Python value, a write into it, or `name` itself again."""
    node = name
    while True:
        parent = parents.get(node)
        if isinstance(parent, ast.Subscript) and parent.value is node:
            if not isinstance(parent.ctx, ast.Load):
                return True  # `h[i] = v`: a write into it
            node = parent  # a view of it
        elif isinstance(parent, ast.Attribute) and parent.value is node:
            if parent.attr in _METADATA:
                return True
            call = parents.get(parent)
            if not (isinstance(call, ast.Call) and call.func is parent):
                return False
            if parent.attr in _READS:
                return True
            node = call  # `h.view(...)`, `h.float()`: a view of it, or it
        elif isinstance(parent, ast.BinOp | ast.Compare):
            return True
        elif isinstance(parent, ast.UnaryOp):
            return not isinstance(parent.op, ast.UAdd)
        elif isinstance(parent, ast.keyword | ast.Starred):
            node = parent
        elif isinstance(parent, ast.Call) and node is not parent.func:
            if _makes_new(parent) or (isinstance(parent.func, ast.Name)
                                      and parent.func.id in _PLAIN_FUNCTIONS):
                return True
            if isinstance(parent.func, ast.Attribute) and parent.func.attr in ("append", "extend",
                                                                              "insert", "add"):
                return False  # into a container
            node = parent  # an unknown callee may return it
        elif isinstance(parent, ast.List | ast.Tuple) and isinstance(parent.ctx, ast.Load):
            holder = parents.get(parent)
            if isinstance(holder, ast.Return):
                return True  # `return a, b`: nothing runs after it
            return isinstance(holder, ast.Call) and parent in holder.args and _makes_new(holder)
        elif isinstance(parent, ast.IfExp) and node is not parent.test:
            node = parent
        elif isinstance(parent, ast.Assign) and parent.value is node:
            return all(isinstance(t, ast.Name) and t.id == name.id for t in parent.targets)
        else:
            return isinstance(parent, ast.Return | ast.Expr | ast.If | ast.While | ast.IfExp
                              | ast.AugAssign | ast.Assert)


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

