"""Small IR traversal helpers shared by frontends and passes."""

from __future__ import annotations

from iree.compiler import ir


def ops_named(root: ir.Operation, name: str, *, post_order: bool = False) -> list[ir.Operation]:
    """All ops called `name` under `root` (pre-order, or post-order: inner ops first)."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == name:
            found.append(op.operation)
        return ir.WalkResult.ADVANCE

    order = ir.WalkOrder.POST_ORDER if post_order else ir.WalkOrder.PRE_ORDER
    root.walk(visit, order)
    return found
