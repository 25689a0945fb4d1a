"""Small IR traversal helpers shared by frontends and passes."""

from __future__ import annotations

from iree.compiler import ir


def nested_ops(root: ir.Operation, *, post_order: bool = False) -> list[ir.Operation]:
    """The ops nested in `root`, not `root` itself (pre-order: outer ops first, or
    post-order: inner ops first)."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        found.append(op.operation)
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.POST_ORDER if post_order else ir.WalkOrder.PRE_ORDER)
    return found[:-1] if post_order else found[1:]


def ops_named(root: ir.Operation, name: str, *, post_order: bool = False) -> list[ir.Operation]:
    """All ops called `name` under `root` (pre-order, or post-order: inner ops first)."""
    return [op for op in nested_ops(root, post_order=post_order) if op.name == name]


def functions(module: ir.Module | ir.Operation) -> dict[str, ir.Operation]:
    """The module's `func.func`s by symbol name, in module order."""
    return {ir.StringAttr(op.attributes["sym_name"]).value: op.operation
            for op in module.operation.regions[0].blocks[0].operations
            if op.operation.name == "func.func"}


def function_argument(value: ir.Value) -> int | None:
    """The position of `value` among its function's arguments, if it is one (not an argument
    of a nested region's block)."""
    if isinstance(value.owner, ir.Block) and value.owner.owner.operation.name == "func.func":
        return ir.BlockArgument(value).arg_number
    return None


CALLS = ("func.call", "torch.call")


def callee(call: ir.Operation) -> str:
    """The name of the function `call` calls."""
    return ir.FlatSymbolRefAttr(call.attributes["callee"]).value


def call_sites(module: ir.Module | ir.Operation) -> dict[str, list[ir.Operation]]:
    """The calls in `module` by callee name."""
    sites: dict[str, list[ir.Operation]] = {}
    for op in nested_ops(module.operation):
        if op.name in CALLS and "callee" in op.attributes:
            sites.setdefault(callee(op), []).append(op)
    return sites


def reachable(module: ir.Module | ir.Operation, roots: list[str],
              kinds: tuple[str, ...] = CALLS) -> list[str]:
    """`roots` and the functions of `module` they call (by `kinds` of call op), directly or
    through other calls, in the order first met."""
    funcs = functions(module)
    found, todo = list(roots), list(roots)
    while todo:
        func = funcs.get(todo.pop())
        for op in nested_ops(func) if func is not None else ():
            if op.name in kinds and "callee" in op.attributes:
                name = callee(op)
                if name in funcs and name not in found:
                    found.append(name)
                    todo.append(name)
    return found


def exported(module: ir.Module | ir.Operation) -> list[str]:
    """The module's public functions (entry points of the compiled module), in order."""
    return [name for name, op in functions(module).items()
            if "sym_visibility" not in op.attributes
            or ir.StringAttr(op.attributes["sym_visibility"]).value == "public"]


def in_region(op: ir.Operation) -> bool:
    """Whether `op` sits in a region of an op (`scf.if`, a loop) inside its function."""
    parent = op.parent
    while parent is not None and parent.name != "func.func":
        if parent.name.startswith(("scf.", "torch.prim.")):
            return True
        parent = parent.parent
    return False


def enclosing_function(op: ir.Operation) -> str | None:
    parent = op.parent
    while parent is not None and parent.name != "func.func":
        parent = parent.parent
    return None if parent is None else ir.StringAttr(parent.attributes["sym_name"]).value


def functions_under_control_flow(module: ir.Module | ir.Operation) -> set[str]:
    """The functions called, directly or through other calls, from inside a region."""
    funcs = functions(module)
    calls: dict[str, list[tuple[str, bool]]] = {name: [] for name in funcs}
    for name, func in funcs.items():
        for op in nested_ops(func):
            if op.name in CALLS and "callee" in op.attributes:
                calls[name].append((callee(op), in_region(op)))
    hot = {name for sites in calls.values() for name, nested in sites if nested}
    todo = list(hot)
    while todo:
        for name, _ in calls.get(todo.pop(), ()):
            if name not in hot:
                hot.add(name)
                todo.append(name)
    return hot


def under_control_flow(op: ir.Operation, hot: set[str]) -> bool:
    """Whether `op` runs under control flow: in a region, or in one of `hot`'s functions
    (`functions_under_control_flow`)."""
    return in_region(op) or enclosing_function(op) in hot
