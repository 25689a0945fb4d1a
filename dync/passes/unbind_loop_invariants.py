"""`dync-unbind-loop-invariants`: a function called inside a loop does not bind the shape of
an argument the loop does not change.

Reads: every `func.call` nested in an `scf.while`, and the operands it passes that are defined
outside that loop (the loop's invariants: a sequence a recurrent layer steps through, weights
computed before the loop).
Writes: the callee's `torch.bind_symbolic_shape` ops of those arguments are erased (the
caller's bindings of the same values stay; a callee called elsewhere loses them there too).

Why: IREE 3.13 takes each shape symbol's value from a binding in the function it is bound in.
Once the callee is inlined into the loop, a symbol bound on the invariant inside the loop
becomes a dim the loop body defines, and the loop's carried tensors bound to the same symbol
are tied to it; the `scf.while` then forwards that dim as an extra `index` result of its
condition region, and IREE's conversion to the stream dialect crashes on such a loop
(SIGSEGV/SIGABRT in `ScfWhileOpConversion`, `lit/upstream/iree-while-forwarded-dim.mlir`).
A stacked or bidirectional LSTM over a dynamic length (each layer a loop over the previous
layer's output) met it. The callee still knows the invariant's static dims from its type.
No paper section: a workaround at the boundary to IREE, run last.
"""

from __future__ import annotations

from iree.compiler import ir

from ..dialects.torch_ops import BIND, owner
from ..dialects.walk import callee, functions, ops_named
from .pipeline import Pass


def _inside(op: ir.Operation, loop: ir.Operation) -> bool:
    parent = op.parent
    while parent is not None:
        if parent.operation == loop:
            return True
        parent = parent.parent
    return False


def _defined_outside(value: ir.Value, loop: ir.Operation) -> bool:
    op = owner(value)
    if op is None:  # a block argument: of the loop's own regions, or of an op around it
        op = value.owner.owner.operation
        if op == loop:
            return False
    return not _inside(op, loop)


def _invariant_arguments(module: ir.Operation) -> dict[str, set[int]]:
    """For each callee, the positions of the arguments some loop passes it unchanged."""
    found: dict[str, set[int]] = {}
    for func in functions(module).values():
        for loop in ops_named(func, "scf.while"):
            for call in ops_named(loop, "func.call"):
                found.setdefault(callee(call), set()).update(
                    i for i, v in enumerate(call.operands) if _defined_outside(v, loop))
    return found


class UnbindLoopInvariants(Pass):
    name = "dync-unbind-loop-invariants"
    summary = "erase the shape bindings a loop's callee makes of the loop's invariants"

    def run(self, module: ir.Operation) -> None:
        funcs = functions(module)
        for name, positions in _invariant_arguments(module).items():
            func = funcs.get(name)
            if func is None or not positions or not func.regions[0].blocks:
                continue
            arguments = func.regions[0].blocks[0].arguments
            targets = {arguments[i] for i in positions}
            for bind in ops_named(func, BIND):
                if bind.operands[0] in targets:
                    bind.erase()
