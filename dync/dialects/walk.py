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
