"""`dync-canonicalize`: tidy the shape facts of dync IR.

Reads: `torch.symbolic_int` and `torch.bind_symbolic_shape` ops in every function, and which
function is the entry (``dync.entry``).
Writes: one `torch.symbolic_int` per symbol per function, at the top of its entry block
(duplicates, which appear when branch functions are inlined, are replaced by it); one
`torch.bind_symbolic_shape` per value: removes those whose dims are all constants (they say
nothing beyond the type) and those repeating an earlier binding of the same value (splitting
and isolating sub-DNNs can leave two, with the symbols in another order, which IREE rejects
as "conflicting symbolic shape bindings for the same value"); two bindings of one value that
disagree fail the pass. Removes `torch.symbolic_int` ops left without uses outside the entry
function. No paper section: housekeeping that keeps later passes (RDP) and IREE simple; it
runs first and again after the sub-DNNs are isolated.
"""

from __future__ import annotations

import sympy
from iree.compiler import ir

from ..dialects.attributes import ENTRY_ATTR
from ..dialects.symbolic import from_affine
from ..dialects.walk import functions, ops_named
from .pipeline import Pass, PassFailure


def _is_constant_bind(bind: ir.Operation) -> bool:
    amap = ir.AffineMapAttr(bind.attributes["shape_expressions"]).value
    return all(isinstance(e, ir.AffineConstantExpr) for e in amap.results)


def _binding(bind: ir.Operation) -> tuple[sympy.Expr, ...]:
    """The dims a binding states, over its symbols by name."""
    names = []
    for operand in list(bind.operands)[1:]:
        owner = getattr(operand.owner, "operation", operand.owner)
        if isinstance(owner, ir.Operation) and "symbol_name" in owner.attributes:
            names.append(ir.StringAttr(owner.attributes["symbol_name"]).value)
        else:
            names.append(operand.get_name())
    amap = ir.AffineMapAttr(bind.attributes["shape_expressions"]).value
    symbols = [sympy.Symbol(name, integer=True) for name in names]
    return tuple(from_affine(e, symbols) for e in amap.results)


def _move_to_definition(bind: ir.Operation) -> None:
    """Put a binding right after what defines its value (for a block argument, at the top
    of its block), so that it comes before every use of the value: IREE replaces the uses
    after a binding with the bound value, and a use before it then reads a value defined
    later ("operand #0 does not dominate this use")."""
    value = bind.operands[0]
    owner = getattr(value.owner, "operation", value.owner)
    if isinstance(owner, ir.Operation):
        bind.move_after(owner)
        return
    block = owner
    first = next((op for op in block.operations if op.name != "torch.symbolic_int"), None)
    if first is not None and first != bind:
        bind.move_before(first)


class Canonicalize(Pass):
    name = "dync-canonicalize"
    summary = ("dedupe torch.symbolic_int per function; one shape binding per value, right "
               "after its definition; drop all-constant bindings")

    def run(self, module: ir.Operation) -> None:
        for func in functions(module).values():
            first: dict[str, ir.Operation] = {}
            entry = func.regions[0].blocks[0]
            for op in ops_named(func, "torch.symbolic_int"):
                name = ir.StringAttr(op.attributes["symbol_name"]).value
                if name in first:
                    op.result.replace_all_uses_with(first[name].result)
                    op.erase()
                    continue
                # At the top, in order (some were inlined from a branch): they then come
                # before every use, and so does a binding placed anywhere.
                if list(first.values()):
                    op.move_after(list(first.values())[-1])
                else:
                    op.move_before(entry.operations[0])
                first[name] = op
            stated: dict[ir.Value, tuple[sympy.Expr, ...]] = {}
            for bind in ops_named(func, "torch.bind_symbolic_shape"):
                if _is_constant_bind(bind):
                    bind.erase()
                    continue
                value, dims = bind.operands[0], _binding(bind)
                if value not in stated:
                    stated[value] = dims
                    continue
                if stated[value] != dims:
                    raise PassFailure(f"two shape bindings of one value disagree: "
                                      f"{list(stated[value])} and {list(dims)}")
                bind.erase()
            for bind in ops_named(func, "torch.bind_symbolic_shape"):
                _move_to_definition(bind)
            is_entry = ENTRY_ATTR in func.attributes
            for op in first.values():
                if not is_entry and not list(op.result.uses):
                    op.erase()
