"""`dync-strided-views`: on the CPU, a gather from a view whose innermost elements are not
adjacent, and a scatter into any view, take that view through a fence.

Reads: every gather (`index_select`, `gather`, `index.Tensor`, `_unsafe_index.Tensor`) whose
source (operand 0) is, through unit dims added or dropped (`squeeze`, `unsqueeze`), a
`select.int` of the last dim of a tensor of rank 2 or more (a column, `y[:, k]`), or a
`slice.Tensor` of the last dim with a step other than 1 (`y[..., ::2]`) or one element wide
(`y[:, k:k + 1]`, `y.narrow(1, k, 1)`); every scatter (`index_put`, `scatter*`, `index_add`,
...) whose destination (operand 0) is, the same way, any `select.int` or `slice.Tensor`
(`z[0].index_copy_(...)`, `z[..., 0][i] = v`); in every function; the module's backend (only
``llvm-cpu``).
Writes: that operand through a fence, IREE's `iree_tensor_ext.compute_barrier.start`
(`torch_ops.fence_operand`), bound as the view's; the view's other readers keep the value
before it.

Why: IREE 3.13 folds such a view into the dispatch of the op that indexes it, as a load or
store with offsets and strides. A gather is vectorized to a `vector.gather` from a memref whose
innermost stride is not 1, which its LLVM lowering does not take ("LLVM Translation failed for
operation: builtin.unrealized_conversion_cast": `lit/upstream/iree-gather-strided-view.mlir`);
a scatter into a part of a tensor failed before code generation ("'linalg.generic' op write
affecting operations on global resources are restricted to workgroup distributed contexts":
`lit/upstream/iree-scatter-into-strided-view.mlir`), a column or a plane of an input alike.
A column of a tensor computed in the graph, gathered (`y = (x * 1.5).round(); y[:, 1][i]`,
`torch.unique(..., dim=0)`, which sorts a matrix's rows by gathering their columns), or a part
of a tensor written at indices (`z[..., 0][i] = -1`, `x[0].index_copy(1, i, v)`), so made the
whole model run in eager. Behind the fence the view is a copy of its own (one small
dispatch), which the op reads or writes whole. No paper section: a workaround at the boundary
to IREE.
"""

from __future__ import annotations

from iree.compiler import ir

from ..analysis.op_kinds import GATHERS, SCATTERS
from ..dialects.symbolic import type_dims
from ..dialects.torch_ops import constant_int, fence_operand, owner
from ..dialects.walk import nested_ops
from .pipeline import HostCpuPass

# Views that add or drop unit dims, which IREE folds into the load with the view they read.
_UNIT_VIEWS = frozenset({"torch.aten.squeeze.dim", "torch.aten.squeeze", "torch.aten.unsqueeze"})
_REACH = 8
_VIEWS = ("torch.aten.select.int", "torch.aten.slice.Tensor")


def _view_behind(value: ir.Value) -> ir.Operation | None:
    """The `select.int` or `slice.Tensor` that `value` is, through unit dims added or
    dropped; else None."""
    op = owner(value)
    for _ in range(_REACH):
        if op is None or op.name not in _UNIT_VIEWS:
            break
        op = owner(op.operands[0])
    return op if op is not None and op.name in _VIEWS else None


def _strided(view: ir.Operation) -> bool:
    """Whether `view` (a select or slice) leaves the innermost elements apart: a select of the
    last dim, a slice of it with a step, or a slice one element wide of it (IREE drops that
    unit dim)."""
    dims = type_dims(view.operands[0].type)
    dim = constant_int(view.operands[1])
    if not dims or dim is None or dim % len(dims) != len(dims) - 1:
        return False
    if view.name == "torch.aten.select.int":
        return len(dims) >= 2
    width = type_dims(view.results[0].type)[-1]
    return constant_int(view.operands[4]) != 1 or width == 1 and len(dims) >= 2


def _fenced(op: ir.Operation) -> bool:
    if not op.operands or (view := _view_behind(op.operands[0])) is None:
        return False
    return op.name in SCATTERS or op.name in GATHERS and _strided(view)


class StridedViews(HostCpuPass):
    name = "dync-strided-views"
    summary = "gathers from strided views, scatters into any view, take them through a fence (CPU)"

    def run_on_cpu(self, module: ir.Operation) -> None:
        found = [op for op in nested_ops(module) if _fenced(op)]
        with module.context:
            for op in found:
                fence_operand(op, 0)
