"""`dync-unbind-loop-carried`: a function called inside a loop does not bind the shapes of the
values the loop carries.

Reads: every `func.call` nested in an `scf.while` or `scf.for`, and the operands it passes
that the loop defines (its carried tensors, through their `torch_c.from_builtin_tensor` casts,
and what the body computes from them); operands defined before the loop are its invariants.
Writes: the callee's `torch.bind_symbolic_shape` ops of those arguments are erased (the
caller's bindings of the same values stay; a callee called elsewhere too loses them there).

Why: IREE 3.13 takes each shape symbol's value from a binding in the function that binds it
and ties the function's other bound tensors to that value. Once the callee is inlined into
the loop, a symbol whose value comes from an invariant bound there (a sequence computed
before the loop that a recurrent layer steps through) is computed in the loop body, and the
carried tensors bound to the same symbol get that body-defined dim: the `scf.while` then
forwards it as an extra `index` result of its condition region, and IREE's conversion to the
stream dialect crashes on such a loop (`ScfWhileOpConversion`,
`lit/upstream/iree-while-forwarded-dim.mlir`; a stacked or bidirectional LSTM over a dynamic
length, each layer a loop over what the previous loop produced). Unbound, a carried tensor
keeps the dims the loop carries for it. Erasing the invariant's binding instead does not do:
an adaptive-computation loop over the model's input then failed in the same conversion
("failed to legalize unresolved target materialization from ('index')").
An `scf.for` (an ONNX `Loop` over a trip count, see `dync-exact-loops`) with the same callee
fails IREE's flow stage instead ("'tensor.dim' op unexpected during shape cleanup";
`lit/upstream/iree-for-carried-dim.mlir`), and unbinding mends it the same way.
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


def _defined_in(value: ir.Value, loop: ir.Operation) -> bool:
    op = owner(value)
    if op is None:  # a block argument: of the loop's own regions, or of an op around it
        op = value.owner.owner.operation
        if op == loop:
            return True
    return _inside(op, loop)


def _carried_arguments(module: ir.Operation) -> dict[str, set[int]]:
    """For each function called in a loop, the positions of the arguments the loop defines."""
    found: dict[str, set[int]] = {}
    for func in functions(module).values():
        for loop in [*ops_named(func, "scf.while"), *ops_named(func, "scf.for")]:
            for call in ops_named(loop, "func.call"):
                found.setdefault(callee(call), set()).update(
                    i for i, v in enumerate(call.operands) if _defined_in(v, loop))
    return found


class UnbindLoopCarried(Pass):
    name = "dync-unbind-loop-carried"
    summary = "erase the shape bindings a loop's callee makes of the values the loop carries"

    def run(self, module: ir.Operation) -> None:
        funcs = functions(module)
        for name, positions in _carried_arguments(module).items():
            func = funcs.get(name)
            if func is None or not positions or not func.regions[0].blocks:
                continue
            arguments = func.regions[0].blocks[0].arguments
            targets = {arguments[i] for i in positions}
            for bind in ops_named(func, BIND):
                if bind.operands[0] in targets:
                    bind.erase()
