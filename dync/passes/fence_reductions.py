"""`dync-fence-reductions`: on the CPU, with data tiling on, a reduction over the inner dims of
a tensor with a dynamic leading dim passes its result through a fence before
the matmul that reads it.

Reads: `sum.dim_IntList`, `mean.dim`, `amax`, `amin`, `max.dim`, `min.dim`, `prod.dim_int`
and `logsumexp` of a float tensor whose dim 0 is dynamic, over dims that leave dim 0 out,
whose result (the values of `max.dim`/`min.dim`) reaches a matmul (`linear`, `mm`, ...)
through elementwise ops and views, in every function; the module's backend (only
``llvm-cpu``) and whether it asks IREE for data tiling (`dync-data-tiling`).
Writes: the result through a fence, IREE's `iree_tensor_ext.compute_barrier.start`
(`torch_ops.through_fence`): it keeps dispatch creation from fusing across it without the
host's wait an optimization barrier costs
(`lit/upstream/iree-optimization-barrier-host-wait.mlir`), which every use (its shape binding
too) reads.

Why: IREE 3.13 fuses such a reduction into the packing of the data-tiled matmul's rows, whose
inner tile is 16 rows of the dynamic dim, and vectorizes the reduction 16 rows wide: below
16 rows, each step loads from rows the tensor lacks, one reduction extent apart, far past its
buffer (`lit/upstream/iree-cpu-reduction-pack-vectorizes-small-batch.mlir`; the NHWC pools of
`dync-spatial-reductions` are one case). PointNet's max over 1024 points at batch 2 took
4.4 ms so (one thread), 0.24 ms as a dispatch of its own; the whole model at that size
(with `dync-conv1d-linear`) 3.1-3.8 ms against eager's 3.2-4.1. Behind the fence the
reduction is a dispatch of its own, and the pack reads the small result. No paper section: a kernel choice at the boundary to IREE (issue 33).
"""

from __future__ import annotations

from iree.compiler import ir

from ..analysis.op_kinds import ELEMENTWISE, MATMULS, RESHAPES, VIEWS
from ..dialects.dync_ir import data_tiled
from ..dialects.symbolic import FLOAT_ELEMENTS, element_type, type_dims
from ..dialects.torch_ops import (
    constant_int,
    constant_int_list,
    owner,
    through_fence,
    users,
)
from ..dialects.walk import nested_ops
from .pipeline import HostCpuPass

REDUCTIONS = ("torch.aten.sum.dim_IntList", "torch.aten.mean.dim", "torch.aten.amax",
              "torch.aten.amin", "torch.aten.max.dim", "torch.aten.min.dim",
              "torch.aten.prod.dim_int", "torch.aten.logsumexp")
# Ops a reduction's result may pass on its way to the matmul whose packing IREE fuses it into.
_PASSING = ELEMENTWISE | VIEWS | RESHAPES
_REACH = 64


def _inner_reduction(op: ir.Operation) -> bool:
    """Whether `op` reduces a float tensor with a dynamic dim 0 over dims other than 0."""
    if op.name not in REDUCTIONS:
        return False
    dims = type_dims(op.operands[0].type)
    if not dims or dims[0] is not None or element_type(op.operands[0].type) not in FLOAT_ELEMENTS:
        return False
    axes = constant_int_list(op.operands[1])
    if axes is None:
        axis = constant_int(op.operands[1])
        axes = None if axis is None else [axis]
    return bool(axes) and all(a % len(dims) != 0 for a in axes)


def _reaches_matmul(value: ir.Value) -> bool:
    seen, todo = set(), [value]
    while todo and len(seen) < _REACH:
        for op in users(todo.pop()):
            op = op.operation
            if op.name in MATMULS:
                return True
            if op.name in _PASSING and op not in seen:
                seen.add(op)
                todo += [r for r in op.results if type_dims(r.type) is not None]
    return False


class FenceReductions(HostCpuPass):
    name = "dync-fence-reductions"
    summary = "reductions over inner dims of a dynamic batch get a dispatch of their own before a data-tiled matmul (CPU)"

    def run_on_cpu(self, module: ir.Operation) -> None:
        if not data_tiled(module):
            return
        found = [op.results[0] for op in nested_ops(module)
                 if _inner_reduction(op) and _reaches_matmul(op.results[0])]
        with module.context:
            for value in found:
                op = owner(value)
                readers = [use.owner for use in value.uses]
                fenced = through_fence(value, ir.InsertionPoint.after(op), op.location)
                cast = next(use.owner for use in value.uses if use.owner not in readers)
                # Its shape binding, inserted before, moves to the fenced value with the uses.
                value.replace_all_uses_except(fenced, [cast.operation])
