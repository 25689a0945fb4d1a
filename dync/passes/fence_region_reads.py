"""`dync-fence-region-reads`: the scalars that leave a branch or a loop go through an
optimization barrier before anything reads them.

Reads: the 0-d tensors an `scf.if`/`scf.while` yields (through `torch_c.from_builtin_tensor`):
a list's length, a loop's flag or counter, which the host reads (`item`, `Bool.Tensor`), in
this function or in a sub-DNN it is passed to.
Writes: each such tensor through a `util.optimization_barrier` of its own, right after the
cast; every use reads the barrier's result.

Why: IREE 3.13 miscompiled the length of a list grown in a loop left by `break` (the 0-d
int64 tensor each iteration's `scf.if` yields, read with `item` to slice the list's buffer)
inside a branch of a larger program: the slice took the length the first iteration left, and
`torch.cat` of the list silently lost its later items (fuzz seed 267; the same module with
IREE's dispatch tracing, or with the barrier, is right). A barrier costs a 0-d copy at most.
No paper section: a workaround at the boundary to IREE, run last.
"""

from __future__ import annotations

from iree.compiler import ir

from ..dialects.symbolic import type_dims
from ..dialects.torch_ops import builtin_type, leaves_region, owner, through_barrier
from ..dialects.walk import functions, ops_named
from .pipeline import Pass


def _region_scalars(module: ir.Operation) -> list[ir.Value]:
    """The 0-d tensors leaving an `scf.if` or `scf.while`, as `!torch.vtensor`s."""
    return [cast.results[0] for func in functions(module).values()
            for cast in ops_named(func, "torch_c.from_builtin_tensor")
            if leaves_region(cast.results[0]) and type_dims(cast.results[0].type) == ()
            and builtin_type(cast.results[0].type) is not None]


class FenceRegionReads(Pass):
    name = "dync-fence-region-reads"
    summary = "put the 0-d tensors leaving scf.if/scf.while through an optimization barrier"

    def run(self, module: ir.Operation) -> None:
        for value in _region_scalars(module):
            cast = owner(value)
            fenced = through_barrier(value, ir.InsertionPoint.after(cast), cast.location)
            barrier = owner(owner(fenced).operands[0])
            value.replace_all_uses_except(fenced, [owner(barrier.operands[0])])
