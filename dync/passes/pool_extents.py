"""`dync-pool-extents`: a pool reads its input only as far as its windows reach.

Reads: `torch.aten.max_pool{1,2,3}d`, `max_pool{1,2,3}d_with_indices` and
`torch.aten.avg_pool{1,2,3}d` (floor mode) with constant kernel, stride, padding and
dilation, in every function (both frontends: `nn.MaxPool2d`, `F.avg_pool3d`, ONNX
`MaxPool`/`AveragePool`).
Writes: where, along a spatial axis of static size, the last window ends before the input
does (more than the end padding is left over: `(in + 2p - extent) mod stride > p`), the
input sliced to the end of that window (`slice.Tensor`) before the pool. Values are
unchanged: the elements cut off are in no window, and PyTorch's divisor of an average
counts a window's extent within the padded input, which no window that is left crosses;
the number of windows is the same (the padding after the cut is too short for another).
A pool that returns indices (PyTorch's: row-major within each plane) has them counted again
over the input's own plane where a cut changed its width (`floor_divide`/`remainder` by
constants into coordinates, put together again).
Runs before `dync-rdp`, which binds the new tensors' shapes.

Why: IREE 3.13 folds an output dim of size one out of a pool (its unit-extent folding) and
then takes the window to cover the input's whole extent along it: where elements are left
over, it fails to compile ("'linalg.generic' op inferred input/output operand #1 has shape's
dimension #0 to be 3, but found 2": `F.max_pool2d` of a 3 x 4 image by 2, `F.max_pool3d` of
a 3 x 4 x 4 volume by 2, an average pool of a depth of 5 by 2 with stride 3) or, with a
dynamic batch, compiles to wrong values (`F.max_pool3d` of `[n, 1, 3, 8, 8]` by 2: off by up
to 1.8; caught on the example only by the first-call check). A pool whose windows tile its
axis exactly was right. Left alone: ceil mode (its windows may end in the padding; ONNX's
`test_averagepool_2d_ceil_last_window_starts_on_pad` still fails in IREE). `F.max_pool2d` of
a 3 x 4 image with indices gave wrong values and indices over a dynamic batch too.
No paper section: a lowering repair at the boundary to IREE.
"""

from __future__ import annotations

import math

from iree.compiler import ir

from ..analysis.layout import POOLS, pool_window
from ..dialects.symbolic import type_dims
from ..dialects.torch_ops import TorchBuilder
from ..dialects.walk import nested_ops
from .pipeline import Pass


class PoolExtents(Pass):
    name = "dync-pool-extents"
    summary = "pools read their input only as far as their windows reach"

    def run(self, module: ir.Operation) -> None:
        for pool in [op for op in nested_ops(module) if op.name in POOLS]:
            _cut(pool)


def _cut(op: ir.Operation) -> None:
    """Slice the input of pool `op` where its windows end before it (see the docstring)."""
    found = pool_window(op)
    if found is None or found.ceil_mode:
        return
    n, x = len(found.kernel), op.operands[0]
    dims = type_dims(x.type)
    if dims is None or len(dims) not in (n + 1, n + 2):
        return
    kernel, stride, padding, dilation = found.kernel, found.stride, found.padding, found.dilation
    first = len(dims) - n
    b = None
    for i in range(n):
        size, axis = dims[first + i], first + i
        extent = dilation[i] * (kernel[i] - 1) + 1
        if size is None or size + 2 * padding[i] < extent:
            continue
        reach = (size + 2 * padding[i] - extent) // stride[i] * stride[i] + extent - padding[i]
        if reach >= size:
            continue
        b = b or TorchBuilder(op)
        x = b.slice(x, axis, 0, reach, size=reach)
    if b is None:
        return
    op.operands[0] = x
    spatial, cut = dims[first:], type_dims(x.type)[first:]
    if len(op.results) == 2 and spatial[1:] != cut[1:]:
        _recount(op, b, spatial, cut)


def _recount(op: ir.Operation, b: TorchBuilder, spatial: list[int], cut: list[int]) -> None:
    """The indices of a pool of the cut input (row-major positions within a plane of the
    `cut` sizes) as positions within a plane of the input's own `spatial` sizes."""
    pool = ir.Operation.create(op.name, results=[r.type for r in op.results],
                               operands=list(op.operands), loc=op.location, ip=b.ip)
    indices = pool.results[1]
    recounted = None
    for i, size in enumerate(cut):
        step = math.prod(cut[i + 1:])
        coordinate = b("torch.aten.remainder.Scalar", indices.type, indices if step == 1 else b(
            "torch.aten.floor_divide.Scalar", indices.type, indices, b.int(step)), b.int(size))
        recounted = coordinate if recounted is None else b(
            "torch.aten.add.Tensor", indices.type, b("torch.aten.mul.Scalar", indices.type,
                                                     recounted, b.int(spatial[i])),
            coordinate, b.int(1))
    op.results[0].replace_all_uses_with(pool.results[0])
    op.results[1].replace_all_uses_with(recounted)
    op.erase()
