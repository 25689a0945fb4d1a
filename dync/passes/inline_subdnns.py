"""`dync-inline-subdnns`: hand IREE one function per entry point, with one value per shape
symbol of its arguments.

Reads: every `func.call` of a private function (the sub-DNNs, the bodies of loops and branches
the exporter made functions of), the `torch.symbolic_int` ops and the
`torch.bind_symbolic_shape` bindings of every function.
Writes: each call replaced by its callee's body (a callee called more than once is copied),
the callees erased. Then, in each remaining function, every `torch.symbolic_int` named as one
its arguments' dims are bound to is replaced by the function's own. Other symbols (a size
read from data, a list's growing length) stay where their callee made them: one name in two
callees need not be one value (merged, 12 constructs came out wrong). Each value keeps one
binding: a callee's binding of what its caller binds goes (IREE rejects two, "conflicting
symbolic shape bindings for the same value"), and the caller's binding of a call's result
moves to where the callee makes the value, before its first use (dync-canonicalize's order).

Why: IREE 3.13 gives each function's shape symbols values of their own (a `util.assume.int`
of a dim of a tensor the function binds) and inlines the calls afterwards, so the batch size
of a loop body called inside a loop nested in another became `assume(assume(assume(b)))`:
three values IREE cannot tell equal. A loop then carried such a dim as its own `index` while
its body computed the same dim from the outer value, the canonicalizer forwarded that outer
value out of the loop's condition region, and IREE's stream conversion of the `scf.while`
failed ("failed to legalize unresolved target materialization from ('index') to
('!stream.resource<*>', 'index')"): adaptive computation time over a sequence, a ponder loop
inside a loop over time steps, fell back to Python. With the symbols merged, every dim of
the same symbol is one SSA value and the loop carries none. It mends the same way the loops
of `lit/upstream/iree-while-forwarded-dim.mlir` and `iree-for-carried-dim.mlir` (a stacked or
bidirectional LSTM over a dynamic length). Run before dync-tie-region-shapes, which then ties
the dims of every region of the function to its arguments' sizes.
No paper section: a lowering repair at the boundary to IREE.
"""

from __future__ import annotations

from iree.compiler import ir

from ..dialects.torch_ops import BIND, bindings, owner
from ..dialects.walk import call_sites, callee, exported, functions, ops_named
from .pipeline import Pass

_SYMBOL = "torch.symbolic_int"


class InlineSubdnns(Pass):
    name = "dync-inline-subdnns"
    summary = "inline every call of a private function; one value per argument shape symbol"

    def run(self, module: ir.Operation) -> None:
        funcs = functions(module)
        public = set(exported(module))
        private = {name for name, func in funcs.items()
                   if name not in public and func.regions[0].blocks}
        inlined: set[str] = set()
        while calls := [c for f in functions(module).values() for c in ops_named(f, "func.call")
                        if callee(c) in private]:
            for call in calls:  # a callee's own calls move into its caller, inlined next round
                func = funcs[callee(call)]
                inlined.add(callee(call))
                _inline(call, func.clone(ip=ir.InsertionPoint(func)))
        still_called = call_sites(module)
        for name in inlined - still_called.keys():
            funcs[name].erase()
        for func in functions(module).values():
            _merge_symbols(func)
            _one_binding_per_value(func)


def _inline(call: ir.Operation, func: ir.Operation) -> None:
    """Move `func`'s single block in place of `call`; `func` is erased."""
    block = func.regions[0].blocks[0]
    for argument, operand in zip(block.arguments, call.operands, strict=True):
        argument.replace_all_uses_with(operand)
    ops = list(block.operations)
    for op in ops[:-1]:
        op.move_before(call)
    moved = ops[:-1]
    for result, value in zip(call.results, ops[-1].operands, strict=True):
        made = owner(value)
        if bindings(result) and made is not None and made in moved:
            # The caller's binding (over its symbols) replaces the callee's, right after the
            # value is made: before its first use, as bindings are (dync-canonicalize).
            for bind in bindings(value):
                bind.erase()
            for bind in bindings(result):
                bind.move_after(made)
        result.replace_all_uses_with(value)
    call.erase()
    func.erase()


def _merge_symbols(func: ir.Operation) -> None:
    """The symbols `func` binds its arguments' dims to are fixed for the whole call: every
    `torch.symbolic_int` of one of their names becomes `func`'s own. Other symbols (a size
    read from data, a list's growing length) stay where the callee made them: the same name
    in two callees need not be one value."""
    entry = func.regions[0].blocks[0]
    arguments = set(entry.arguments)
    fixed: dict[str, ir.Operation] = {}
    for bind in ops_named(func, BIND):
        if bind.operands[0] in arguments:
            for value in list(bind.operands)[1:]:
                symbol = owner(value)
                if symbol is not None and symbol.name == _SYMBOL and symbol.parent == func:
                    fixed.setdefault(_name(symbol), symbol)
    for symbol in ops_named(func, _SYMBOL):
        kept = fixed.get(_name(symbol))
        if kept is not None and symbol != kept:
            symbol.results[0].replace_all_uses_with(kept.results[0])
            symbol.erase()


def _name(symbol: ir.Operation) -> str:
    return ir.StringAttr(symbol.attributes["symbol_name"]).value


def _one_binding_per_value(func: ir.Operation) -> None:
    """A callee's bindings of what it was handed repeat its caller's, over symbols of its
    own (or in another order), which IREE rejects ("conflicting symbolic shape bindings for
    the same value"): each value keeps its first binding."""
    bound: set[ir.Value] = set()
    for bind in ops_named(func, BIND):
        if bind.operands[0] in bound:
            bind.erase()
        else:
            bound.add(bind.operands[0])
