"""`dync-width-strips`: on the CPU, a convolution over a dynamic width runs over strips of a
static width, folded into the batch.

Reads: 2-D convolutions (`torch.aten.conv2d`, `torch.aten.convolution`, not transposed) of
one group (1×1 kernels included; depthwise ones are dync-depthwise-nhwc's), constant stride,
padding and dilation, whose input and output widths are dynamic, in every function (a
shape-specialized version's convolution, whose input is a static width cast to a dynamic
one, is left alone); the module's backend (only ``llvm-cpu``).

Writes: in place of each, with ``Wo`` the output's width (from the input's), ``T`` =
`STRIP` output columns a strip and ``nt = ceil(Wo / T)`` strips: the input zero-padded
once, its rows by the convolution's row padding and its columns by the left padding and
enough on the right for `nt` whole strips; its first ``nt*T*stride`` columns split
(`unflatten.int`) into ``N x C x H x nt x (T*stride)`` blocks, and, where the windows
overlap (``(kw-1)*dilation + 1 - stride`` columns, when positive), each block's following
columns appended as strided slices (cut to the strip's columns when negative), so that
strip `i` holds the ``(T-1)*stride + (kw-1)*dilation + 1`` columns its `T` outputs read;
the strips permuted into the batch, ``(N*nt) x C x H x Win``; the convolution over them
without padding; its ``(N*nt) x F x Ho x T`` result split back, permuted behind the rows,
flattened to ``N x F x Ho x (nt*T)`` and sliced to the first ``Wo`` columns (the old
result's shape binding moves to that slice).

Why: IREE 3.13's CPU code for a convolution vectorizes the output width by 8 only where the
width is static: over a dynamic width it computes one output column at a time (its lowering
config: vector tile ``[1, 1, 1, 16]`` against ``[1, 1, 8, 16]``), and a tile of 8 forced
onto the dynamic width did not vectorize at all (2.3 -> 12.7 ms). A dynamic height or batch
keeps the fast code (the tile there is 1). Measured with `python -m benchmarks ops
--any-size` (one thread, an AVX-512 Xeon, eager's oneDNN in the same process, batch 1 / 8,
GFLOP/s before -> after; noisy machine): 3×3 64→64 at 56×56 21.1/20.7 -> 64.1/56.4 (eager
108/138), 3×3 128→128 at 28×28 18.2/19.0 -> 68.1/71.5 (112/147), 3×3/2 128→128 at 56×56
18.9/18.0 -> 33.9/32.7, 3×3 32→32 at 96×96 19.0/20.2 -> 46.6/39.3; a 1×1 64→256 at 56×56
12.5/17.3 -> 34.9/15.3 (at batch 8 no gain, within the noise of repeated runs). The same
convolutions with static sizes reach eager's speed or near it; the strips copy the input
once more (with the overlap: 2/8 of it for a 3×3 convolution of stride 1) and the output
once, and compute up to 7 columns a row that are cut away. A resolution-adaptive network
is the case: its images come at any size (a two-stage early-exit CNN over 16-160 pixel
images, one thread: 0.60x -> 0.97-1.00x eager). No paper section: a kernel choice at the
boundary to IREE (issue 33) — SoD²'s multi-version code generation (§4.4.2) keeps CONV
versions per shape class for the same reason, that a convolution's tiling depends on its
shape.
"""

from __future__ import annotations

import sympy
from iree.compiler import ir

from ..analysis.layout import ConvWindow, constant_window
from ..analysis.op_facts import window
from ..dialects.symbolic import type_dims
from ..dialects.torch_ops import (
    TorchBuilder,
    defining,
    float_constant,
    int_expression,
    int_list,
    vtensor_type,
)
from ..dialects.walk import nested_ops
from .pipeline import HostCpuPass

# Output columns a strip: the 8 IREE vectorizes a static width by. Wider strips waste more
# on a row's last strip (up to STRIP - 1 columns computed and cut away) and gained nothing
# measurable (16 and 32: the same ratios to eager within the noise, 64→64 at 24×24 0.49x
# and 0.62x against 0.77x with 8).
STRIP = 8


def _strippable(conv: ir.Operation) -> ConvWindow | None:
    """The window of `conv` where it is a convolution this pass rewrites (see the module
    docstring), else None."""
    found = constant_window(conv)
    if found is None:
        return None
    x, weight, out = (type_dims(v.type) for v in (conv.operands[0], conv.operands[1],
                                                   conv.results[0]))
    if found.groups != 1 or out[3] is not None or x[3] is not None:
        return None  # depthwise ones run in NHWC at full speed (dync-depthwise-nhwc)
    cast = defining(conv.operands[0], "torch.tensor_static_info_cast")
    if cast is not None and type_dims(cast.operands[0].type)[3] is not None:
        return None
    return found


def _unflatten(b: TorchBuilder, x: ir.Value, dim: int, sizes: list[ir.Value],
               static: list[int | None]) -> ir.Value:
    """`x` with `dim` split in two, of `sizes` (`static`: each's size if known). Not a `view`
    to the whole shape: over several dynamic dims that one came out wrong in IREE 3.13 (a
    dynamic batch and more than 64 rows gave wrong strips; its torch-mlir pairs the dynamic
    dims of a view by guesswork, lit/upstream/torch-view-merging-dynamic-dims.mlir)."""
    dims = list(type_dims(x.type))
    dims[dim:dim + 1] = static
    return b("torch.aten.unflatten.int", vtensor_type(x.type, dims), x, b.int(dim),
             b.ints(sizes))


def _in_strips(conv: ir.Operation, found: ConvWindow) -> None:
    (_, sw), (ph, pw), (_, dw) = found.stride, found.padding, found.dilation
    b = TorchBuilder(conv)
    x, weight = conv.operands[0], conv.operands[1]
    n, c, h, _ = type_dims(x.type)
    f, kw = type_dims(weight.type)[0], type_dims(weight.type)[3]
    _, _, ho, _ = type_dims(conv.results[0].type)
    reach = (kw - 1) * dw + 1  # input columns one output reads
    step = STRIP * sw  # input columns between two strips
    width = (STRIP - 1) * sw + reach  # input columns one strip reads
    overlap = width - step

    w = sympy.Symbol("w", integer=True, positive=True)
    wo = sympy.floor((w + 2 * pw - reach) / sw) + 1
    cache: dict = {}

    def build(expr) -> ir.Value:
        return int_expression(expr, lambda _: b.size(x, 3), b.ip, b.loc, cache)

    out_width, strips = build(wo), build(sympy.ceiling(wo / STRIP))
    covered = build(sympy.ceiling(wo / STRIP) * step)
    right = pw + step + max(overlap, 0)
    h = None if h is None else h + 2 * ph  # the rows' padding too: the strips copy it once
    padded = b("torch.aten.constant_pad_nd", vtensor_type(x.type, (n, c, h, None)), x,
               int_list([pw, right, ph, ph], b.ip, b.loc), float_constant(0.0, b.ip, b.loc))

    columns = _unflatten(b, b.slice(padded, 3, 0, covered), 3,
                         [strips, b.int(step)], [None, step])
    if overlap > 0:
        # Column j of each strip's overlap: every `step`-th column from step + j, a strided
        # slice (the blocks' first columns, sliced from a second split, came out wrong).
        following = []
        for j in range(overlap):
            end = build(sympy.ceiling(wo / STRIP) * step + step + j)
            every = b.slice(padded, 3, step + j, end, step)
            following.append(b("torch.aten.unsqueeze", vtensor_type(x.type, (n, c, h, None, 1)),
                               every, b.int(4)))
        columns = b("torch.aten.cat", vtensor_type(x.type, (n, c, h, None, width)),
                    b.tensors([columns, *following]), b.int(4))
    elif overlap < 0:
        columns = b.slice(columns, 4, 0, width, size=width)
    moved = b("torch.aten.permute", vtensor_type(x.type, (n, None, c, h, width)), columns,
              int_list([0, 3, 1, 2, 4], b.ip, b.loc))
    folded = b("torch.aten.flatten.using_ints", vtensor_type(x.type, (None, c, h, width)), moved,
               b.int(0), b.int(1))
    operands = list(conv.operands)
    operands[0] = folded
    operands[window(conv.name).padding] = int_list([0, 0], b.ip, b.loc)
    like = conv.results[0].type
    strip_out = ir.Operation.create(conv.name, results=[vtensor_type(like, (None, f, ho, STRIP))],
                                    operands=operands, loc=conv.location, ip=b.ip).result
    unfolded = _unflatten(b, strip_out, 0, [b.size(x, 0), strips], [n, None])
    back = b("torch.aten.permute", vtensor_type(like, (n, f, ho, None, STRIP)), unfolded,
             int_list([0, 2, 3, 1, 4], b.ip, b.loc))
    flat = b("torch.aten.flatten.using_ints", vtensor_type(like, (n, f, ho, None)), back,
             b.int(3), b.int(4))
    # The old result's shape binding moves to the slice with its uses.
    result = b.slice(flat, 3, 0, out_width, size=type_dims(like)[3])
    conv.results[0].replace_all_uses_with(result)
    conv.erase()


class WidthStrips(HostCpuPass):
    name = "dync-width-strips"
    summary = "convolutions over a dynamic width as convolutions over static-width strips (CPU)"

    def run_on_cpu(self, module: ir.Operation) -> None:
        convolutions = [(op, found) for op in nested_ops(module) if (found := _strippable(op))]
        with module.context, ir.Location.unknown():
            for conv, found in convolutions:
                _in_strips(conv, found)
