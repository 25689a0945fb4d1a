"""`dync-canonicalize`: tidy the shape facts of dync IR.

Reads: `torch.symbolic_int` and `torch.bind_symbolic_shape` ops in every function.
Writes: one `torch.symbolic_int` per symbol per function, at the top of its entry block
(duplicates, which appear when branch functions are inlined, are replaced by it); removes
`torch.bind_symbolic_shape` ops whose dims are all constants (they say nothing beyond the
type) and `torch.symbolic_int` ops left without uses outside the entry function. No paper
section: this is housekeeping that keeps later passes (RDP) simple.
"""

from __future__ import annotations

from iree.compiler import ir

from ..dialects.walk import functions, ops_named
from .pipeline import Pass


def _is_constant_bind(bind: ir.Operation) -> bool:
    amap = ir.AffineMapAttr(bind.attributes["shape_expressions"]).value
    return all(isinstance(e, ir.AffineConstantExpr) for e in amap.results)


class Canonicalize(Pass):
    name = "dync-canonicalize"
    summary = "dedupe torch.symbolic_int per function, drop all-constant shape bindings"

    def run(self, module: ir.Operation) -> None:
        for func in functions(module).values():
            first: dict[str, ir.Operation] = {}
            entry = func.regions[0].blocks[0]
            for op in ops_named(func, "torch.symbolic_int"):
                name = ir.StringAttr(op.attributes["symbol_name"]).value
                if name in first:
                    op.result.replace_all_uses_with(first[name].result)
                    op.erase()
                else:
                    first[name] = op
                    if op.parent.name != "func.func":  # inlined from a branch: hoist it
                        op.move_before(entry.operations[0])
            for bind in ops_named(func, "torch.bind_symbolic_shape"):
                if _is_constant_bind(bind):
                    bind.erase()
            is_entry = "dync.entry" in func.attributes
            for op in first.values():
                if not is_entry and not list(op.result.uses):
                    op.erase()
