"""`dync-im2col`: on the CPU, a convolution with many input channels becomes one matmul over its
input's windows (im2col).

Reads: 2-D convolutions (`torch.aten.conv2d`, `torch.aten.convolution`, not transposed) with
one group, a floating-point literal weight and constant stride, padding and dilation, in
every function: with at least `MIN_CHANNELS` input channels, those with a kernel larger than
1×1 and fewer output pixels per image (static) than filters, and strided 1×1 ones (on AVX2,
SSE and AVX-512, `STRIP_RULES`, the unstrided ones too); and every
other one with a kernel larger than 1×1 over a static H x W where the CPU's vector extension
(``dync.vector_isa``) has it run faster so (`STRIP_RULES`: on AVX2 and SSE those over 4
channels or more whose reduction kh*kw*C is at least 64; on AVX-512 those with 64 channels
and 128 filters or more), and over a dynamic H x W those the rule's `dynamic` channel counts
admit (on AVX-512 from 256 channels, from 128 when strided); on every CPU, those whose
windows tile a static H x W (stride = kernel, no padding or dilation: a ViT's patch
embedding, a ConvNeXt stem); the module's backend (only ``llvm-cpu``).

Writes: in place of each, the input permuted to NHWC and its columns: with a static H x W
and a kernel larger than 1×1, the input viewed as a table of its pixels (``N x (H*W) x C``)
and one gather (`torch.aten.index_select` over a static index, fenced off from its consumer)
reading each output pixel's taps in (kernel row, kernel column, channel) order, zeros
selected (`where` over a static mask) where a tap reads the padding; for a 1×1 kernel, the
strided slice of the input it reads; over a dynamic H x W, per kernel offset the
``N x Ho x Wo x C`` elements it reads, strided slices of the input zero-padded whole.
(Windows that tile the input: its rows and columns some window reads, viewed as
``N x C x Ho x kh x Wo x kw`` tiles and permuted to ``N x Ho x Wo x kh x kw x C``, one
transpose instead of a slice per kernel offset; the columns are the input itself.)
Slices are concatenated along the channels into the columns ``N x Ho x Wo x (kh*kw*C)``
(one offset: the slice itself); the columns flattened to rows and multiplied (`torch.aten.mm`)
by the weight as a ``(kh*kw*C) x F`` matrix (a literal; for a literal too large to read here, a
permute and a view of it, which IREE evaluates at compile time); the bias added; the product
viewed as ``N x Ho x Wo x F`` and permuted back to NCHW. The batch may be dynamic (its size
read from the columns). Where an image's columns would outweigh both its input and the
filter (those last ones), the output rows are split into horizontal strips whose columns do
not (``ceil(columns / max(input, filter))`` strips), each strip's columns gathered and
multiplied on their own, and the strips' products concatenated along H in NHWC.
`dync-im2col-within-filter` (`LOW_MEMORY_PIPELINE`'s) is the same pass without `STRIP_RULES`.

Why: IREE 3.13's CPU code for a direct convolution falls far behind on AVX2 when the channels
are many and the image small: one thread, `x86-64-v3`, 3×3 256→256 at 14×14 ran 3.8 GFLOP/s
and 3×3 512→512 at 7×7 3.3 against eager's 81 and 57 (BENCHMARKS.md "Kernels (AVX2)"); as a
matmul it runs at IREE's matmul speed (on this AVX2 host, one thread: 256→256 at 14×14 1.0 ->
19.9 GFLOP/s, eager 29; `python -m benchmarks ops`). The columns are ``kh*kw`` times the
input, so the pass keeps them no larger than the filter (fewer output pixels than filters,
the deep layers of a CNN, where the direct code is worst): the same rewrite for 64→64 at
56×56 ran 11.8 -> 20.6 GFLOP/s but raised the peak 1.6 -> 9.8 MB, and the suite's CIFAR
networks (64 filters at 8×8) would pass eager's peak. IREE has the rewrite too
(``--iree-global-opt-use-im2col-for-convs``), for every convolution of a module: the suite's
CNNs' peaks rose 2-4x (`tests/test_isolate_subdnns.py`: 860416 against 196608 bytes).
On AVX2 the direct code is slow on every shape — 3×3 64→64 at 56×56 and 128→128 at 28×28
ran 33 GFLOP/s against eager's 122-127, at batch 1 and 8 — so there the early layers are
matmuls too, strip by strip so that the columns never outweigh the input (9 strips for a
3×3 convolution of stride 1): measured in BENCHMARKS.md "Kernels (AVX2)". On AVX-512 the
strips pay from 128 filters (`STRIP_RULES`).

Why one gather per strip: per kernel offset, a slice of the input and its border of zeros
concatenated into the columns were one IREE dispatch each (`slow_memcpy`), 9 to 27 a strip,
each with its own offsets baked in and so an executable of its own: on AVX2 (strips from 4
channels) blockdrop compiled 552 such executables of its 644 (IREE 27 s), yolo_nms's 16
bucketed versions 2016 of 2078 (110 s). A gather is one dispatch and one executable for
every strip of its shape: blockdrop 138 executables, IREE 9.3 s (the whole compile 42 ->
19 s), yolo_nms 27 s (123 -> 36 s); on AVX-512 ResNet-50's second stage alone compiled in
11.1 -> 7.0 s (batch 1) and 13.4 -> 7.7 s (batch 4), and ran in 25.6 -> 23.6 and 107.9 ->
107.1 ms (Xeon, one thread). Per convolution the same: `python -m benchmarks ops --only 3×3`
within its run-to-run noise on both ISAs. The fence keeps IREE from fusing the gather into
the product's packing of its operand, where the gather's rows become the tile's inner dim and
every load a scalar (3×3 128→128 @28 in 7 strips: 3.01 ms unfenced, 2.6-2.7 fenced, as the
slices were). The padding is selected, not padded in (see below).
Why the unpadded input, and strided 1×1 convolutions as slices: IREE fuses a padding into
the dispatch that produces its input (the store lands inside the padded buffer) and a strided
slice into the dispatch that reads it; either way a 1×1 convolution is left a 4-D contraction
that IREE neither flattens into a matmul nor data-tiles. In ResNet-50's stages 3-4 (batch 2,
one thread, AVX-512) the 1×1 convolution before a strided 3×3 one ran 46-99 GFLOP/s, the
strided 1×1 shortcut 15, against 220-245 for the flattened ones; with the patches read from
the unpadded input and the shortcut as a slice and a matmul, stages 3-4 ran 100 -> 50 ms
(eager 72). Reading the unpadded input also keeps a padded copy of it out of memory.
Why unstrided 1×1 convolutions on AVX2: where others border them (a CNN's blocks, which
`dync-pointwise-matmuls` leaves to IREE), IREE 3.13 computes them in NHWC as a contraction
over batch and pixels (`matmul_like_Dx3136x256x64`) at 27-38 GFLOP/s on an AVX2 EPYC (one
thread), half of what it reaches on the same product written as a matmul
(`matmul_Dx256x64`, 57-62). ResNet-50's stages alone over a dynamic batch (one thread):
stage 1 at batch 2 65.1 -> 50.4 ms, stage 4 61.7 -> 53.3 ms (BENCHMARKS.md "1×1
convolutions as matmuls on AVX2"). On AVX-512 the same: on a Xeon (one thread) such a
contraction, `matmul_like_4x3136x128x256` in ResNet-50's second stage at batch 4, ran 40
GFLOP/s against 120-127 for the matmuls beside it; as matmuls, the stages at batch 1/4 ran
19.3 -> 9.7 / 95.7 -> 55.6 ms (stage 1; eager 13.7 / 54.0), 21.7 -> 20.6 / 116.5 -> 98.1
(stage 2), 32.6 -> 32.1 / 141.5 -> 124.3 (stage 3), 25.9 -> 25.1 / 91.2 -> 75.1 (stage 4)
(BENCHMARKS.md "1×1 convolutions as matmuls on AVX-512").
Why windows that tile the input, on every CPU: IREE 3.13's direct code for them is far
behind (the lone convolution compiled by `dync.compile`, one thread, an AVX-512 Xeon at
2.1 GHz: ViT-B/16's 3→768 16×16/16 at 224×224 97.5 ms against eager's 2.9, a 4×4/4 stem 3→96
at 224×224 9.0 against 0.40), while their columns cost no memory the input does not: as the
matmul 3.9 and 0.60 ms.
No paper section: a kernel choice at the boundary to IREE (issue 33), as TVM's and oneDNN's
CPU convolution schedules make it by shape.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from iree.compiler import ir

from ..analysis.layout import constant_window
from ..dialects.dync_ir import read_vector_isa
from ..dialects.literals import (
    LITERAL,
    erase_if_unused,
    inline_literal,
    readable,
    transformed_literal,
)
from ..dialects.symbolic import type_dims
from ..dialects.torch_ops import (
    TorchBuilder,
    defining,
    float_constant,
    int_list,
    through_fence,
    vtensor_type,
)
from ..dialects.walk import nested_ops
from .pipeline import HostCpuPass

# The fewest input channels of a convolution computed as a matmul. Measured on an AVX2 host
# (one thread, python -m benchmarks ops): from 64 channels up the direct convolution ran at
# 5-30% of eager and the matmul faster (docs in BENCHMARKS.md "Kernels (AVX2)").
MIN_CHANNELS = 64


@dataclass(frozen=True)
class StripRule:
    """Which convolutions whose columns outweigh their filter run as matmuls over strips on one
    vector extension: those with at least `filters` filters, `channels` input channels and
    `depth` = kh*kw*C (the matmul's reduction); whether 1×1 convolutions of stride 1
    over `MIN_CHANNELS` channels or more are one matmul too (`pointwise`); and the fewest
    input channels of one over a dynamic H x W (no strips: one matmul) at stride 1 and at a
    larger stride (`dynamic`; None: such convolutions stay direct)."""

    filters: int
    channels: int
    depth: int
    pointwise: bool = False
    dynamic: tuple[int, int] | None = None


# Measured one thread at a time (`python -m benchmarks ops`; eager held to the same ISA). On
# AVX2 IREE 3.13's direct code runs at a third of eager or less on nearly every shape
# (BENCHMARKS.md "Kernels (AVX2)"), and strips win from a reduction of 64: 3×3 16→16 at 32×32,
# batch 1/8, 0.55/0.43 -> 0.88/0.78 of eager, 32→32 at 56×56 0.30/0.30 -> 0.72/0.60, 8→16
# at 64×64 0.56/0.47 -> 0.86/0.63. 3×3 over 3 channels (depth 27) loses, 0.73/0.79 ->
# 0.47/0.55; ResNet-50's 7×7/2 stem over 3 channels won alone (0.45/0.66 -> 0.59/0.69) but lost
# in the network: the early-exit ResNet-50 (x86-64-v3, one thread) exiting first at batch 1
# 24.1 -> 27.0 ms with the stem in strips, all four stages at batch 4 401 -> 417 ms (eager
# 21.5 and 346), so image inputs (under 4 channels) stay direct. On AVX-512 the direct code is
# the faster one over 64 filters (3×3 64→64 at 56×56, batch 8: 140 GFLOP/s direct, 95 as one
# matmul) and the slower one from 128 (3×3 128→128 at 28×28, batch 1/8: 129/138 direct,
# 176/163 in strips; eager 211/222). Unstrided 1×1 convolutions are one matmul on all three
# (the module docstring). Other CPUs (NEON, unknown) keep the direct code.
# Over a dynamic H x W (one matmul, its columns kh*kw times the input), one thread, Ho x Wo
# sizes met at run time: on AVX2 (`x86-64-v3` on the Xeon) the direct code ran 3×3
# convolutions 2.7-4.2x slower than the matmul (32→32 at 56×56 1820 -> 640 µs, 64→64 at
# 56×56 7357 -> 2675, 128→128 at 56×56 29686 -> 17199, 256→256 at 14×14 10751 -> 2552). On
# AVX-512 (an EPYC; eager alongside) the matmul wins from 256 channels (256→256 at 14×14
# and 28×28 2436/9444 -> 1190/5126 µs, eager 1109/4204; 512→512 at 7×7 and 14×14
# 2593/9949 -> 1483/4643, eager 2094/4999) and, strided, from 128 (128→128/2 at 56×56 1598
# -> 1321, eager 1128; 256→256/2 at 28×28 1795 -> 1220, eager 1222), and loses below at
# stride 1 (128→128 at 28×28 1296 -> 1381, at 56×56 4956 -> 7718; 64→64 at 56×56 1252 ->
# 1569): the columns of a large image no longer fit the caches.
STRIP_RULES = {"avx2": StripRule(filters=1, channels=4, depth=64, pointwise=True,
                                 dynamic=(4, 4)),
               "sse": StripRule(filters=1, channels=4, depth=64, pointwise=True, dynamic=(4, 4)),
               "avx512": StripRule(filters=128, channels=MIN_CHANNELS, depth=1, pointwise=True,
                                   dynamic=(256, 128))}
_NHWC, _NCHW = [0, 2, 3, 1], [0, 3, 1, 2]
_PAST_THE_END = 2**62  # a slice end torch clamps to the dim's size


def _window(conv: ir.Operation,
            rule: StripRule | None) -> tuple[list[int], list[int], list[int], int] | None:
    """(stride, padding, dilation, strips) of a convolution `conv` computed as a matmul in
    `strips` horizontal strips under the vector extension's `rule`; None if it is not one
    (see the module's docstring)."""
    found = constant_window(conv)
    if found is None or found.groups != 1:
        return None
    x, weight, out = (type_dims(v.type) for v in (conv.operands[0], conv.operands[1],
                                                   conv.results[0]))
    if defining(conv.operands[1], LITERAL) is None:
        return None
    pointwise = weight[2] * weight[3] == 1
    if pointwise:
        if weight[1] < MIN_CHANNELS:
            return None
        if found.stride == [1, 1] and not (rule and rule.pointwise):
            return None  # IREE runs it as a contraction of its own
        return found.stride, found.padding, found.dilation, 1
    if None in out[2:]:
        if rule is None or rule.dynamic is None or weight[0] < rule.filters \
                or weight[1] * weight[2] * weight[3] < rule.depth \
                or weight[1] < rule.dynamic[found.stride != [1, 1]]:
            return None
        return found.stride, found.padding, found.dilation, 1
    if _patches(found.stride, found.padding, found.dilation, weight[2:]) and None not in x[2:]:
        return found.stride, found.padding, found.dilation, 1  # its columns are its input
    if weight[1] >= MIN_CHANNELS and out[2] * out[3] < weight[0]:
        return found.stride, found.padding, found.dilation, 1  # columns within the filter
    if (rule is None or None in x[2:] or weight[0] < rule.filters or weight[1] < rule.channels
            or weight[1] * weight[2] * weight[3] < rule.depth):
        return None
    columns = out[2] * out[3] * weight[1] * weight[2] * weight[3]
    strips = min(out[2], math.ceil(columns / max(x[1] * x[2] * x[3], math.prod(weight))))
    return found.stride, found.padding, found.dilation, strips


def _as_matmul(conv: ir.Operation, stride: list[int], padding: list[int],
               dilation: list[int], strips: int, made: dict) -> None:
    b = TorchBuilder(conv)
    x, weight, bias = conv.operands[0], conv.operands[1], conv.operands[2]
    n, c, h, w = type_dims(x.type)
    f, _, kh, kw = type_dims(weight.type)
    _, _, ho, wo = type_dims(conv.results[0].type)
    like = conv.results[0].type
    bounds = [(0, ho)] if strips == 1 else [(ho * i // strips, ho * (i + 1) // strips)
                                            for i in range(strips)]

    row_spans = col_spans = None
    if None not in (h, w):
        row_spans = [[_span(h, padding[0], i, dilation[0], stride[0], start, end)
                      for i in range(kh)] for start, end in bounds]
        col_spans = [_span(w, padding[1], j, dilation[1], stride[1], 0, wo) for j in range(kw)]
        if None in col_spans or any(None in per_strip for per_strip in row_spans):
            row_spans = None
    if row_spans is None and strips > 1:
        return  # a strip would read only padding at some kernel offset: left direct
    matrix = _matrix(b, weight, made)
    if _patches(stride, padding, dilation, (kh, kw)):
        parts = [_product(b, [_patch_columns(b, x, (kh, kw), like)], matrix, bias, like)]
    elif row_spans is not None and kh * kw > 1:
        table = _pixel_table(b, _nhwc(b, x, like), like)
        parts = [_product(b, [_gathered_columns(b, table, (h, w), padding, rows, wo, (kh, kw),
                                                stride, dilation, like)], matrix, bias, like)
                 for rows in bounds]
    elif row_spans is not None:
        x = _nhwc(b, x, like)
        parts = [_strip_product(b, x, rows, col_spans, stride, matrix, bias, like)
                 for rows in row_spans]
    else:
        parts = [_product(b, _padded_patches(b, x, (kh, kw), stride, padding, dilation, like),
                          matrix, bias, like)]
    if len(parts) == 1:
        nhwc = parts[0]
    else:
        nhwc = b("torch.aten.cat", vtensor_type(like, (n, ho, wo, f)), b.tensors(parts),
                 b.int(1))
    result = b("torch.aten.permute", like, nhwc, int_list(_NCHW, b.ip, b.loc))
    conv.results[0].replace_all_uses_with(result)
    conv.erase()
    erase_if_unused(weight)


def _strip_product(b: TorchBuilder, x: ir.Value, row_spans: list, col_spans: list,
                   stride: list[int], matrix: ir.Value, bias: ir.Value,
                   like: ir.Type) -> ir.Value:
    """The NHWC output rows that `row_spans` (one `_span` per kernel row) cover, from NHWC
    `x`: each kernel offset's elements read inside `x` and zero-padded where it reads the
    padding, multiplied by `matrix`."""
    columns = []
    for rows in row_spans:
        sliced = _read(b, x, 1, rows, stride[0])
        columns += [_border(b, _read(b, sliced, 2, cols, stride[1]), rows, cols, like)
                    for cols in col_spans]
    return _product(b, columns, matrix, bias, like)


def _pixel_table(b: TorchBuilder, x: ir.Value, like: ir.Type) -> ir.Value:
    """NHWC `x` (static H x W) viewed as the table ``N x (H*W) x C`` of its pixels."""
    n, h, w, c = type_dims(x.type)
    return b("torch.aten.flatten.using_ints", vtensor_type(like, (n, h * w, c)), x, b.int(1),
             b.int(2))


def _gathered_columns(b: TorchBuilder, table: ir.Value, size: tuple[int, int],
                      padding: list[int], rows: tuple[int, int], wo: int,
                      kernel: tuple[int, int], stride: list[int], dilation: list[int],
                      like: ir.Type) -> ir.Value:
    """The columns ``N x r x Wo x (kh*kw*C)`` of output rows `rows` (start, end) in one
    gather (`index_select` over a static index) from `table`, the pixels of an H x W (`size`)
    image (`_pixel_table`), zeros selected where a tap reads the padding; fenced off from its
    consumer."""
    (start, end), (kh, kw), (h, w) = rows, kernel, size
    n, _, c = type_dims(table.type)
    y = (np.arange(start, end).reshape(-1, 1, 1, 1) * stride[0]
         + np.arange(kh).reshape(1, 1, -1, 1) * dilation[0] - padding[0])
    x_ = (np.arange(wo).reshape(1, -1, 1, 1) * stride[1]
          + np.arange(kw).reshape(1, 1, 1, -1) * dilation[1] - padding[1])
    y, x_ = np.broadcast_arrays(y, x_)
    inside = ((y >= 0) & (y < h) & (x_ >= 0) & (x_ < w)).reshape(-1)
    pixels = np.where(inside, y.reshape(-1) * w + x_.reshape(-1), 0).astype(np.int64)
    gathered = b("torch.aten.index_select", vtensor_type(like, (n, len(pixels), c)), table,
                 b.int(1), inline_literal(pixels, b.ip, b.loc))
    if not inside.all():  # select, not multiply: an inf read in place of padding stays out
        gathered = b("torch.aten.where.ScalarOther", gathered.type,
                     inline_literal(inside.reshape(1, -1, 1), b.ip, b.loc), gathered,
                     b.float(0.0))
    gathered = through_fence(gathered, b.ip, b.loc)
    r = end - start
    return b("torch.aten.view", vtensor_type(like, (n, r, wo, kh * kw * c)), gathered,
             b.ints([b.size(table, 0), b.int(r), b.int(wo), b.int(kh * kw * c)]))


def _product(b: TorchBuilder, columns: list[ir.Value], matrix: ir.Value, bias: ir.Value,
             like: ir.Type) -> ir.Value:
    """`N x r x Wo x F`: the columns (one `N x r x Wo x C` per kernel offset) concatenated
    along the channels, flattened to rows, multiplied by `matrix` and the bias added."""
    n, r, wo, c = type_dims(columns[0].type)
    k, f = type_dims(matrix.type)
    if len(columns) == 1:
        cols = columns[0]
    else:
        cols = b("torch.aten.cat", vtensor_type(like, (n, r, wo, k)), b.tensors(columns),
                 b.int(3))
    m = None if None in (n, r, wo) else n * r * wo
    rows_of = b("torch.aten.flatten.using_ints", vtensor_type(like, (m, k)), cols, b.int(0),
                b.int(2))
    product = b("torch.aten.mm", vtensor_type(like, (m, f)), rows_of, matrix)
    if defining(bias, "torch.constant.none") is None:
        product = b("torch.aten.add.Tensor", product.type, product, bias, b.int(1))
    sizes = [b.size(cols, axis) for axis in range(3)]
    return b("torch.aten.view", vtensor_type(like, (n, r, wo, f)), product,
             b.ints([*sizes, b.int(f)]))


def _patches(stride: list[int], padding: list[int], dilation: list[int], kernel) -> bool:
    """Whether the windows tile the input without overlap or gaps (a ViT's patch embedding,
    a ConvNeXt stem or downsampling layer): kernel larger than 1x1, stride = kernel, no
    padding or dilation."""
    return (list(stride) == list(kernel) and kernel[0] * kernel[1] > 1 and not any(padding)
            and list(dilation) == [1, 1])


def _patch_columns(b: TorchBuilder, x: ir.Value, kernel: tuple[int, int],
                   like: ir.Type) -> ir.Value:
    """The columns `N x Ho x Wo x (kh*kw*C)` of a convolution whose windows tile the static
    H x W input `x` (`_patches`): the rows and columns the windows cover, viewed as
    ``N x C x Ho x kh x Wo x kw`` and permuted (one transpose, no copy per kernel offset)."""
    n, c, h, w = type_dims(x.type)
    (kh, kw), (_, _, ho, wo) = kernel, type_dims(like)
    for dim, (size, covered) in enumerate(((h, ho * kh), (w, wo * kw)), start=2):
        if covered != size:  # the last rows or columns no window reaches
            x = b.slice(x, dim, 0, covered, size=covered)
    tiles = b("torch.aten.view", vtensor_type(like, (n, c, ho, kh, wo, kw)), x,
              b.ints([b.size(x, 0), *(b.int(d) for d in (c, ho, kh, wo, kw))]))
    windows = b("torch.aten.permute", vtensor_type(like, (n, ho, wo, kh, kw, c)), tiles,
                int_list([0, 2, 4, 3, 5, 1], b.ip, b.loc))
    return b("torch.aten.flatten.using_ints", vtensor_type(like, (n, ho, wo, kh * kw * c)),
             windows, b.int(3), b.int(5))


def _padded_patches(b: TorchBuilder, x: ir.Value, kernel: tuple[int, int], stride: list[int],
                    padding: list[int], dilation: list[int], like: ir.Type) -> list[ir.Value]:
    """The columns of each kernel offset, sliced from `x` zero-padded whole and permuted to
    NHWC."""
    n, c, h, w = type_dims(x.type)
    _, _, ho, wo = type_dims(like)
    if any(padding):
        pads = [padding[1], padding[1], padding[0], padding[0]]
        h, w = (None if d is None else d + 2 * p for d, p in zip((h, w), padding, strict=True))
        x = b("torch.aten.constant_pad_nd", vtensor_type(like, (n, c, h, w)), x,
              int_list(pads, b.ip, b.loc), float_constant(0.0, b.ip, b.loc))
    x = b("torch.aten.permute", vtensor_type(like, (n, h, w, c)), x, int_list(_NHWC, b.ip, b.loc))
    columns = []
    for i in range(kernel[0]):
        rows = _offset(b, x, 1, i, kernel[0], stride[0], dilation[0], ho)
        for j in range(kernel[1]):
            columns.append(_offset(b, rows, 2, j, kernel[1], stride[1], dilation[1], wo))
    return columns


def _nhwc(b: TorchBuilder, x: ir.Value, like: ir.Type) -> ir.Value:
    """`x` permuted to NHWC. A `torch.tensor_static_info_cast` that makes `x` is moved after
    the permute: torch-mlir lowers a slice of a permuted cast into a `linalg.generic` whose
    operand and result types disagree (`lit/upstream/torch-slice-of-permuted-cast.mlir`);
    the shape-specialized versions `dync-specialize` makes read their arguments through such
    casts."""
    n, c, h, w = type_dims(x.type)
    order = int_list(_NHWC, b.ip, b.loc)
    cast = defining(x, "torch.tensor_static_info_cast")
    if cast is None:
        return b("torch.aten.permute", vtensor_type(like, (n, h, w, c)), x, order)
    source = cast.operands[0]
    sn, sc, sh, sw = type_dims(source.type)
    static = b("torch.aten.permute", vtensor_type(like, (sn, sh, sw, sc)), source, order)
    return b("torch.tensor_static_info_cast", vtensor_type(like, (n, h, w, c)), static)


def _span(size: int, pad: int, index: int, dilation: int, stride: int, start: int,
          end: int) -> tuple[int, int, int, int] | None:
    """(first input index, count, zeros before, zeros after) of outputs `start` to `end`
    (exclusive) along one dim that kernel offset `index` reads inside the unpadded input; None
    when it reads only padding."""
    offset = index * dilation - pad  # output o reads input o*stride + offset
    first = max(start, -(offset // stride))
    last = min(end - 1, (size - 1 - offset) // stride)
    if last < first:
        return None
    return first * stride + offset, last - first + 1, first - start, end - 1 - last


def _read(b: TorchBuilder, x: ir.Value, dim: int, span: tuple[int, int, int, int],
          step: int) -> ir.Value:
    """The elements of `x` along `dim` that a kernel offset reads inside the input (`_span`)."""
    start, count, _, _ = span
    if start == 0 and count == type_dims(x.type)[dim]:
        return x  # all of them
    return b.strided(x, dim, start, count, step)


def _border(b: TorchBuilder, x: ir.Value, rows: tuple[int, int, int, int],
            cols: tuple[int, int, int, int], like: ir.Type) -> ir.Value:
    """NHWC `x` with the zero rows and columns its kernel offset reads in the padding."""
    (_, _, top, bottom), (_, _, left, right) = rows, cols
    if not (top or bottom or left or right):
        return x
    n, h, w, c = type_dims(x.type)
    return b("torch.aten.constant_pad_nd",
             vtensor_type(like, (n, h + top + bottom, w + left + right, c)), x,
             int_list([0, 0, left, right, top, bottom], b.ip, b.loc),
             float_constant(0.0, b.ip, b.loc))


def _matrix(b: TorchBuilder, weight: ir.Value, made: dict) -> ir.Value:
    """The literal `F x C x kh x kw` weight as the `(kh*kw*C) x F` matrix: a literal if this
    module reads it, else a permute and a view of it, which IREE evaluates at compile time."""
    f, c, kh, kw = type_dims(weight.type)
    if readable(weight):
        return transformed_literal(weight, lambda a: a.transpose(2, 3, 1, 0).reshape(-1, f),
                                   made)
    hwcf = b("torch.aten.permute", vtensor_type(weight.type, (kh, kw, c, f)), weight,
             int_list([2, 3, 1, 0], b.ip, b.loc))
    return b("torch.aten.view", vtensor_type(weight.type, (kh * kw * c, f)), hwcf,
             int_list([kh * kw * c, f], b.ip, b.loc))


def _offset(b: TorchBuilder, x: ir.Value, dim: int, index: int, size: int, stride: int,
            dilation: int, outputs: int | None) -> ir.Value:
    """The `outputs` elements of `x` along `dim` that kernel offset `index` (of `size`)
    reads: from ``index*dilation`` on, every `stride`-th, up to the end less the offsets
    after it."""
    left = (size - 1 - index) * dilation
    return b.slice(x, dim, index * dilation, -left if left else _PAST_THE_END, stride, outputs)


class Im2col(HostCpuPass):
    name = "dync-im2col"
    summary = "convolutions with many input channels as one matmul over their windows (CPU)"
    strip_rules = STRIP_RULES

    def run_on_cpu(self, module: ir.Operation) -> None:
        rule = self.strip_rules.get(read_vector_isa(module))
        convolutions = [(op, found) for op in nested_ops(module)
                        if (found := _window(op, rule))]
        made: dict = {}
        with module.context, ir.Location.unknown():
            for conv, (stride, padding, dilation, strips) in convolutions:
                _as_matmul(conv, stride, padding, dilation, strips, made)


class Im2colWithinFilter(Im2col):
    """`dync-im2col` without `STRIP_RULES`: only the convolutions whose columns weigh no
    more than their input or filter. `LOW_MEMORY_PIPELINE`'s: on AVX2 the strips of a 3×3
    16→16 convolution at 32×32 held 6.6 activations at the peak of a gated CNN against
    eager's 3 (`tests/test_isolate_subdnns.py`)."""

    name = "dync-im2col-within-filter"
    summary = "dync-im2col without the strips that raise the peak (the low-memory pipeline's)"
    strip_rules: dict[str, StripRule] = {}
