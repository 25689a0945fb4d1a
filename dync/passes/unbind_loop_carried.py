"""`dync-unbind-loop-carried`: a function called inside a loop does not bind the shapes of the
values the loop carries.

Reads: every `func.call` nested in an `scf.while` or `scf.for`, and the operands it passes
that the loop defines (its carried tensors, through their `torch_c.from_builtin_tensor` casts,
and what the body computes from them); operands defined before the loop are its invariants.
Writes: where the callee also binds an invariant argument with a symbol a carried one's
binding uses, the callee's `torch.bind_symbolic_shape` ops of the carried arguments are erased
(the caller's bindings of the same values stay; a callee called elsewhere too loses them
there). A callee whose carried arguments share no symbol with an invariant keeps them all:
unbound there, IREE 3.13 crashed in the stream dialect's resource analysis
(`ValueResourceUsage` on the loop's `scf.yield`, SIGSEGV) on a plain loop over a dynamic batch
(`while h.abs().max() > 0.25: h = h * 0.5`, fuzz seeds 1009, 1015, 1020 and 18 more of 1000-1119
fell back to eager for it).

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


def _symbols(binds: list[ir.Operation]) -> set[str]:
    """The names of the shape symbols `binds` use."""
    return {ir.StringAttr(v.owner.attributes["symbol_name"]).value
            for bind in binds for v in list(bind.operands)[1:]
            if not isinstance(v.owner, ir.Block) and v.owner.name == "torch.symbolic_int"}


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
            binds = ops_named(func, BIND)
            carried = [b for b in binds if b.operands[0] in targets]
            invariant = [b for b in binds if b.operands[0] not in targets
                         and owner(b.operands[0]) is None]
            if not _symbols(carried) & _symbols(invariant):
                continue  # nothing ties the carried dims to a value from before the loop
            for bind in carried:
                bind.erase()
