"""`dync-fence-gathered-reductions`: on the CPU, a reduction of a value blended from several
gathers passes that value through a fence.

Reads: every reduction (`mean.dim`, `sum.dim_IntList`, `amax`, `amin`, softmaxes) whose
operand 0 is computed, through elementwise ops and views alone, from two or more gathers
(`index_select`, `gather`, `index.Tensor`) in every function; the module's backend (only
``llvm-cpu``).
Writes: that operand through a fence, IREE's `iree_tensor_ext.compute_barrier.start`
(`torch_ops.through_fence`): it keeps dispatch creation from fusing across it without the
host's wait an optimization barrier costs
(`lit/upstream/iree-optimization-barrier-host-wait.mlir`), which the reduction reads; the
blend's other readers keep the value before it.

Why: IREE 3.13 fuses the gathers and the blend into the reduction's dispatch and vectorizes
the gathers unrolled, element by element: LLVM then takes minutes on that one dispatch. An
image resized by a non-integer factor, then averaged (`F.interpolate(..., mode="bilinear")
.mean((2, 3))`, two gathers along W per output) took 15 s of IREE's compile for that
dispatch, the bicubic form (four) 85 s — of a 90 s compile of a head whose 60 other
dispatches took 5 s together. Behind the fence the blend is an elementwise dispatch, the
reduction one of its own over the stored blend (one extra write and read of it). A single
gather in a reduction (an embedding bag's mean, `x.index_select(...).amax()`) compiles in
seconds and is left fused. No paper section: a kernel choice at the boundary to IREE
(issue 33).
"""

from __future__ import annotations

from iree.compiler import ir

from ..analysis.op_kinds import ELEMENTWISE, GATHERS, REDUCTIONS, VIEWS
from ..dialects.symbolic import type_dims
from ..dialects.torch_ops import fence_operand, owner
from ..dialects.walk import nested_ops
from .pipeline import HostCpuPass

_PASSING = ELEMENTWISE | VIEWS
# Gathers a dispatch may take before it is fenced, and how far back to look for them.
_MOST_GATHERS = 1
_REACH = 64


def _gathers_behind(value: ir.Value) -> int:
    """The gathers `value` is computed from through elementwise ops and views only."""
    seen: set[ir.Operation] = set()
    gathers, todo = 0, [value]
    while todo and len(seen) < _REACH:
        op = owner(todo.pop())
        if op is None or op in seen:
            continue
        seen.add(op)
        if op.name in GATHERS:
            gathers += 1
        elif op.name in _PASSING:
            todo += [v for v in op.operands if type_dims(v.type) is not None]
    return gathers


class FenceGatheredReductions(HostCpuPass):
    name = "dync-fence-gathered-reductions"
    summary = "a reduction of a blend of several gathers reads it from its own dispatch (CPU)"

    def run_on_cpu(self, module: ir.Operation) -> None:
        found = [op for op in nested_ops(module) if op.name in REDUCTIONS and op.operands
                 and _gathers_behind(op.operands[0]) > _MOST_GATHERS]
        with module.context:
            for op in found:
                fence_operand(op, 0)
