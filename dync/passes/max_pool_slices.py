"""`dync-max-pool-slices`: on the CPU, a 2-D max pool is the maximum of strided slices of its
input, in NHWC.

Reads: `torch.aten.max_pool2d` with a constant window (`analysis.layout.pool_window`: kernel,
stride, padding, dilation, ceil mode), over a rank-4 floating-point input of static H x W with
a result of static H x W (the batch and channels may be dynamic), in every function; the
module's backend (only ``llvm-cpu``).
Writes: in place of each, the input permuted to NHWC and padded with -inf
(`torch.aten.constant_pad_nd`: the pool's padding, and at the bottom and right as far as
ceil mode's last windows reach past it), per kernel offset the rows and then the columns it
reads (strided slices), their elementwise `torch.aten.maximum`, permuted back to NCHW.
Values are the pool's: every window is the same elements, -inf where it reads padding (a
window holds at least one element of the input), NaN wherever a window holds one (torch-mlir's
`maximum` drops the NaN of its first operand; `dync-nan-extremes`, a required pass, mends it).

Why: IREE 3.13 computes a pool whose input it laid out in NHWC (a convolution's result,
`dync-channels-last`) and whose result is NCHW (a function result, an op that reads NCHW) as
one loop nest reading NHWC and writing NCHW, vectorized along W: each vector gathers elements
2 x C apart. A ResNet stem's 3x3/2 max pool of 64 x 112 x 112 (AMD EPYC, AVX2, one thread,
batch 2) took 9.7 ms of the stem's 20 (`dync profile`; alone, NCHW in and out, 1.5 ms). As
slices in NHWC each offset's rows are contiguous runs of C, and IREE fuses the slices and
the maximum into one elementwise dispatch: the stem 11.6 -> 7.7 ms (eager 20.4), the stem and
ResNet-50's first bottleneck 31.9 -> 25.8 ms (eager 35.6), the pool alone 2.0 -> 1.0 ms
(eager 13.7), over a dynamic batch (throwaway scripts, a CI running beside them; the stem
measured again in BENCHMARKS.md "Max pools as slices, 2026-12-06"). No paper section: a
kernel choice at the boundary to IREE (issue 33).
"""

from __future__ import annotations

import math

from iree.compiler import ir

from ..analysis.layout import pool_window
from ..dialects.symbolic import FLOAT_ELEMENTS, element_type, type_dims
from ..dialects.torch_ops import TorchBuilder, float_constant, int_list, vtensor_type
from ..dialects.walk import nested_ops
from .pipeline import HostCpuPass

_NHWC, _NCHW = [0, 2, 3, 1], [0, 3, 1, 2]


def _pool(op: ir.Operation):
    """The window of a max pool this pass rewrites (see the module docstring), else None."""
    if op.name != "torch.aten.max_pool2d":
        return None
    found = pool_window(op)
    x, out = type_dims(op.operands[0].type), type_dims(op.results[0].type)
    if found is None or x is None or out is None or len(x) != 4 or len(out) != 4 \
            or None in (*x[2:], *out[2:]) \
            or element_type(op.operands[0].type) not in FLOAT_ELEMENTS:
        return None
    return found


def _as_slices(pool: ir.Operation, found) -> None:
    b = TorchBuilder(pool)
    x, like = pool.operands[0], pool.results[0].type
    n, c, h, w = type_dims(x.type)
    _, _, ho, wo = type_dims(like)
    extents = [d * (k - 1) + 1 for d, k in zip(found.dilation, found.kernel, strict=True)]
    # The end padding reaches the last window's end (ceil mode's may pass the pool's padding).
    ends = [max(p, (o - 1) * s + e - size - p) for p, o, s, e, size in
            zip(found.padding, (ho, wo), found.stride, extents, (h, w), strict=True)]
    top, left = found.padding
    padded_dims = (n, h + top + ends[0], w + left + ends[1], c)
    nhwc = b("torch.aten.permute", vtensor_type(like, (n, h, w, c)), x,
             int_list(_NHWC, b.ip, b.loc))
    padded = nhwc if not (top or left or any(ends)) else b(
        "torch.aten.constant_pad_nd", vtensor_type(like, padded_dims), nhwc,
        int_list([0, 0, left, ends[1], top, ends[0]], b.ip, b.loc),
        float_constant(-math.inf, b.ip, b.loc))
    result = None
    for i in range(found.kernel[0]):
        rows = b.strided(padded, 1, i * found.dilation[0], ho, found.stride[0])
        for j in range(found.kernel[1]):
            window = b.strided(rows, 2, j * found.dilation[1], wo, found.stride[1])
            result = window if result is None else b(
                "torch.aten.maximum", window.type, result, window)
    back = b("torch.aten.permute", like, result, int_list(_NCHW, b.ip, b.loc))
    pool.results[0].replace_all_uses_with(back)
    pool.erase()


class MaxPoolSlices(HostCpuPass):
    name = "dync-max-pool-slices"
    summary = "2-D max pools as the maximum of strided slices of the input, in NHWC (CPU)"

    def run_on_cpu(self, module: ir.Operation) -> None:
        pools = [(op, found) for op in nested_ops(module) if (found := _pool(op))]
        with module.context, ir.Location.unknown():
            for pool, found in pools:
                _as_slices(pool, found)
