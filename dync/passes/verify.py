"""`dync-verify`: checks that a module is well-formed dync IR.

Reads: the whole module. Writes: nothing. Fails with one diagnostic per problem found by
`dync.dialects.dync.verify` (symbol table, entry signature shapes, `torch.symbolic_int`
ranges against `dync.symbols`).
"""

from __future__ import annotations

from iree.compiler import ir

from ..dialects import dync as dync_ir
from .pipeline import Pass, PassFailure


class Verify(Pass):
    name = "dync-verify"
    summary = "check the dync IR conventions (symbols, entry signature, symbol ranges)"

    def run(self, module: ir.Operation) -> None:
        problems = dync_ir.verify(module)
        if problems:
            raise PassFailure("; ".join(problems))
