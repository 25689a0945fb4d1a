"""`dync-strided-views`: on the CPU, a gather from, or a scatter into, a view whose innermost
elements are not adjacent takes that view through a fence.

Reads: every gather (`index_select`, `gather`, `index.Tensor`, `_unsafe_index.Tensor`) and
every scatter (`index_put`, `scatter*`, `index_add`, ...) whose operand 0 (the source read,
the tensor written) is, through unit dims added or dropped (`squeeze`, `unsqueeze`), a
`select.int` of the last dim of a tensor of rank 2 or more (a column, `y[:, k]`), or a
`slice.Tensor` of the last dim with a step other than 1 (`y[..., ::2]`) or one element wide
(`y[:, k:k + 1]`, `y.narrow(1, k, 1)`), in every function; the module's backend (only
``llvm-cpu``).
Writes: that operand through a fence, IREE's `iree_tensor_ext.compute_barrier.start`
(`torch_ops.fence_operand`), bound as the view's; the view's other readers keep the value
before it.

Why: IREE 3.13 folds such a view into the dispatch of the op that indexes it as a load or
store with strides. A gather is vectorized to a `vector.gather` from a memref whose innermost
stride is not 1, which its LLVM lowering does not take ("LLVM Translation failed for
operation: builtin.unrealized_conversion_cast": `lit/upstream/iree-gather-strided-view.mlir`);
a scatter into a column failed before code generation ("'linalg.generic' op write affecting
operations on global resources are restricted to workgroup distributed contexts":
`lit/upstream/iree-scatter-into-strided-view.mlir`). A column of a tensor computed in the
graph, gathered (`y = (x * 1.5).round(); y[:, 1][i]`, `torch.unique(..., dim=0)`, which sorts
a matrix's rows by gathering their columns) or written at indices (`z[..., 0][i] = -1`), so
made the whole model run in eager. Behind the fence the view is a copy of its own (one small
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


def _strided_view(value: ir.Value) -> bool:
    """Whether `value` is a view of the last dim of a tensor, through unit dims added or
    dropped, that leaves its innermost elements apart: a select of it, a slice of it with a
    step, or a slice of one element of it (IREE drops that unit dim)."""
    op = owner(value)
    for _ in range(_REACH):
        if op is None or op.name not in _UNIT_VIEWS:
            break
        op = owner(op.operands[0])
    if op is None or op.name not in ("torch.aten.select.int", "torch.aten.slice.Tensor"):
        return False
    dims = type_dims(op.operands[0].type)
    dim = constant_int(op.operands[1])
    if not dims or dim is None or dim % len(dims) != len(dims) - 1:
        return False
    if op.name == "torch.aten.select.int":
        return len(dims) >= 2
    width = type_dims(op.results[0].type)[-1]
    return constant_int(op.operands[4]) != 1 or width == 1 and len(dims) >= 2


class StridedViews(HostCpuPass):
    name = "dync-strided-views"
    summary = "a gather from or scatter into a view with strided innermost elements takes it through a fence (CPU)"

    def run_on_cpu(self, module: ir.Operation) -> None:
        found = [op for op in nested_ops(module) if op.name in GATHERS | SCATTERS and op.operands
                 and _strided_view(op.operands[0])]
        with module.context:
            for op in found:
                fence_operand(op, 0)
