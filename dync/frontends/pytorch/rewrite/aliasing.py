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

The model's own `forward` (`inputs_are_private`) may also write on a copy of what the caller
passed: a parameter, and a name bound by `h = x` at the top of the body where that is the
only read of the parameter `x`. Nothing in the compiled program can see the caller's tensor,
so the results are eager's; the caller's tensor is left as it was (eager changes it). A
submodule's parameters stay shared: its caller may read them after the call.
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


def fresh_names(func: ast.FunctionDef, inputs_are_private: bool = False) -> frozenset[str]:
    """The names whose every binding in `func`'s own scope makes a new tensor (or, with
    `inputs_are_private`, holds an input only `func` can reach), and whose tensor no other
    name can reach."""
    verdict: dict[str, bool] = {}
    args = func.args
    positional = [*args.posonlyargs, *args.args][1:]  # after `self`
    for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
        if arg is not None:
            verdict[arg.arg] = inputs_are_private and arg in positional
    private = _private_copies(func, {a.arg for a in positional}) if inputs_are_private else set()
    nodes = list(_own_scope(func.body))
    judged = {id(t) for n in nodes if isinstance(n, ast.Assign) for t in n.targets}
    judged |= {id(n.target) for n in nodes if isinstance(n, ast.AnnAssign | ast.AugAssign)}
    for node in nodes:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    verdict[target.id] = verdict.get(target.id, True) and (
                        _makes_new(node.value) or id(node) in private)
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


def fresh_writes(func: ast.FunctionDef) -> frozenset[int]:
    """The writes `h[i] = v` / `h[i] op= v` (by `id` of the statement) into a tensor made
    just before in the same block: the last statement before it there that binds `h` makes a
    new tensor (`h = h.clone()`), and nothing between them binds `h` or hands its tensor to
    another name. Flow-sensitive where `fresh_names` is not: `h = x` earlier in the function,
    or `h = self.helper(h)`, does not matter once `h = h.clone()` came last."""
    parents = {child: node for node in ast.walk(func) for child in ast.iter_child_nodes(node)}
    found: set[int] = set()
    for block in _blocks(func):
        for i, stmt in enumerate(block):
            name = _written_name(stmt)
            if name is None:
                continue
            for j in range(i - 1, -1, -1):
                if not any(_stores(block[j], name)):
                    continue
                if _fresh_binding(block[j], name) and all(
                        _reads_kept(s, name, parents) for s in block[j + 1:i]):
                    found.add(id(stmt))
                break
    return frozenset(found)


def _blocks(func: ast.FunctionDef):
    """The statement lists of `func`'s own scope."""
    yield func.body
    for node in _own_scope(func.body):
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list) and stmts and isinstance(stmts[0], ast.stmt):
                yield stmts


def _written_name(stmt: ast.stmt) -> str | None:
    target = (stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
              else stmt.target if isinstance(stmt, ast.AugAssign) else None)
    if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
        return target.value.id
    return None


def _stores(stmt: ast.stmt, name: str):
    return (n for n in _own_scope([stmt]) if isinstance(n, ast.Name) and n.id == name
            and isinstance(n.ctx, ast.Store | ast.Del))


def _fresh_binding(stmt: ast.stmt, name: str) -> bool:
    return (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id == name
            and _makes_new(stmt.value) and sum(1 for _ in _stores(stmt, name)) == 1)


def _reads_kept(stmt: ast.stmt, name: str, parents: dict) -> bool:
    return all(_kept_to_itself(n, parents) for n in _own_scope([stmt])
               if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load))


def _private_copies(func: ast.FunctionDef, params: set[str]) -> set[int]:
    """The statements `h = x` at the top of `func`'s body that read a parameter `x` read
    nowhere else."""
    reads: dict[str, int] = {}
    for node in ast.walk(func):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in params:
            reads[node.id] = reads.get(node.id, 0) + 1
    return {id(stmt) for stmt in func.body
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name) and isinstance(stmt.value, ast.Name)
            and stmt.value.id in params and reads.get(stmt.value.id) == 1}


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

