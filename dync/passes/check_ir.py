"""`dync-check-ir`: checks that a module is well-formed dync IR.

Reads: the whole module. Writes: nothing. Fails with one diagnostic per problem found by
`dync.dialects.dync_ir.check_ir` (symbol table, entry signature shapes, `torch.symbolic_int`
ranges against `dync.symbols`).
"""

from __future__ import annotations

from iree.compiler import ir

from ..dialects import dync_ir
from .pipeline import Pass, PassFailure


class CheckIR(Pass):
    name = "dync-check-ir"
    summary = "check the dync IR conventions (symbols, entry signature, symbol ranges)"

    def run(self, module: ir.Operation) -> None:
        problems = dync_ir.check_ir(module)
        if problems:
            raise PassFailure("; ".join(problems))
