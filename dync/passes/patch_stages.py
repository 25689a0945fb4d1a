"""`dync-patch-stages`: compute a CNN's leading convolutions strip by strip, so that their
large activations never exist whole (patch-based inference, MCUNetV2, Lin et al., NeurIPS
2021, §3.1; the memory it targets is SoD²'s intermediate peak, §4).

Reads: in every function, chains of convolutions over fully static rank-4 tensors, each
convolution's result read only by the next link: elementwise ops whose other operands are
scalars or broadcast along H (a bias, a per-channel scale), then the next convolution. Such a
chain is a *stage*; its output is the last convolution's, with the elementwise ops after it.

Writes: for a stage worth patching (below), the stage's output rows are split into ``k``
horizontal strips. For each strip the pass walks the chain backwards to find the rows of each
link's input the strip needs: output rows ``[a, b)`` of a convolution with kernel ``K``,
stride ``s``, padding ``p`` and dilation ``d`` read input rows ``[a*s - p, (b-1)*s - p +
d*(K-1) + 1)``. It then slices those rows out of the stage's input (`torch.aten.slice.Tensor`),
adds zero rows where the window crosses the border (`torch.aten.constant_pad_nd`: the
padding the convolution had there; each convolution keeps its width padding and gets none in
H), runs the chain's ops on the slice, and concatenates the strips' outputs along H
(`torch.aten.cat`, marked ``dync.patches`` with the strip count). Rows in the overlap of two
strips' windows are computed twice.

Under `dync-channels-last` the strips are concatenated in NHWC: each goes through a permute
to NHWC and the concatenation through one back, both ``dync.cancels``. IREE then writes each
strip's last convolution straight into the concatenation and the next convolution reads it
in place. Concatenated in NCHW, IREE copied each strip through a transpose into the
concatenation and materialized a padded NHWC copy for the next convolution (the captioner:
21.8 KiB peak against 19.9 KiB).

Which stage, how many strips: a chain starts at a convolution reading a function argument (the
model's input, or a sub-DNN's; an input computed in the function would stay whole while the
strips read it), or reading an argument zero-padded to static sizes as `dync-bucket` pads
it. There the first link's strip gathers its rows straight from the unpadded argument
(`torch.aten.index.Tensor_hacked_twin` over static row and column indices clamped into the
argument, then `torch.aten.where.ScalarOther` with zeros past its true size and above row
0), one static strip per dispatch: neither the padded argument nor a slice of the argument
(dynamically sized, and IREE 3.13 gives such transients no reuse) ever exists. Its peak is
the link with the largest input + output (the input of the first link counted: IREE reads an
argument through an NHWC copy); the stage ends one link after it,
so that the peak link's output never exists whole. The pass estimates the stage's patched
peak (the stage's output plus, over the strips, the largest input + output of one link's
strip) for 2 to 4 strips, and takes the fewest strips within 5% of the lowest estimate, when
that estimate is below the unpatched peak and no op outside the stage reads and writes as
many bytes (the function's peak would be elsewhere, and the extra dispatches only cost time).
More strips measured slower out of proportion: the captioner in 8 strips peaks at 14.9 KiB
but runs 1.56x slower (one-row strips), in 4 strips 1.04x.

Why: a CNN's first convolutions have the largest activations and, on the CPU, read an NHWC
copy of the model's input. The suite's captioner peaked at its input's copy (12 KiB) beside
conv1's output (16 KiB): 28.8 KiB against eager's 24.0 KiB. In 4 strips it peaks at 19.9 KiB
(0.83x eager), 4% slower (0.187 -> 0.195 ms; 13 dispatches instead of 4 for the stage).
`dync-plan-buffers` models the slices, fused pads, crossings and the in-place concatenation
(predicted 20.5 KiB).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from iree.compiler import ir

from ..analysis.layout import converts_to_channels_last, maybe_transposed
from ..analysis.op_facts import window
from ..analysis.op_kinds import (
    CONVOLUTIONS_2D,
    ELEMENTWISE,
    element_bytes,
    from_constants,
    viewed_argument,
)
from ..analysis.padding import padded_argument
from ..dialects.attributes import CANCELS_ATTR, PATCHES_ATTR
from ..dialects.literals import inline_literal
from ..dialects.symbolic import is_tensor, type_dims
from ..dialects.torch_ops import (
    bindings,
    constant_int_list,
    create,
    float_constant,
    int_constant,
    int_list,
    owner,
    users,
    vtensor_of,
    vtensor_type,
)
from ..dialects.walk import functions, nested_ops
from .pipeline import Pass

MAX_STRIPS = 4
NHWC, NCHW = [0, 2, 3, 1], [0, 3, 1, 2]
H = 2


@dataclass
class Link:
    """One convolution of a stage and the elementwise ops that follow it."""

    conv: ir.Operation
    after: list[ir.Operation]
    kernel: int
    stride: int
    padding: int
    dilation: int

    @property
    def last(self) -> ir.Operation:
        return self.after[-1] if self.after else self.conv

    @property
    def output(self) -> ir.Value:
        return self.last.results[0]

    @property
    def input_height(self) -> int:
        return _dims(self.conv.operands[0])[H]

    def rows_read(self, a: int, b: int) -> tuple[int, int]:
        """The input rows [lo, hi) output rows [a, b) read (beyond the border: padding)."""
        return (a * self.stride - self.padding,
                (b - 1) * self.stride - self.padding + self.dilation * (self.kernel - 1) + 1)


def _dims(value: ir.Value) -> tuple[int, ...] | None:
    dims = type_dims(value.type)
    if dims is None or len(dims) != 4 or None in dims:
        return None
    return tuple(dims)


def _bytes(value: ir.Value, rows: int | None = None) -> int:
    n, c, h, w = _dims(value)
    return n * c * (h if rows is None else rows) * w * element_bytes(value.type)


def _link(conv: ir.Operation) -> Link | None:
    """`conv` as a link of a stage: a 2-D convolution over static tensors, not transposed,
    its stride, padding and dilation constants."""
    if conv.name not in CONVOLUTIONS_2D or _dims(conv.operands[0]) is None \
            or _dims(conv.results[0]) is None:
        return None
    if maybe_transposed(conv):
        return None
    facts = window(conv.name)
    stride, padding, dilation = (constant_int_list(conv.operands[i])
                                 for i in (facts.stride, facts.padding, facts.dilation))
    weight = type_dims(conv.operands[1].type)
    if any(v is None or len(v) != 2 for v in (stride, padding, dilation)) or weight is None \
            or len(weight) != 4 or weight[2] is None:
        return None
    return Link(conv, [], weight[2], stride[0], padding[0], dilation[0])


def _row_wise(op: ir.Operation, value: ir.Value) -> bool:
    """Whether elementwise `op` reads `value` once and nothing else that varies along H."""
    if op.name not in ELEMENTWISE or len(op.results) != 1 \
            or str(op.results[0].type) != str(value.type):
        return False
    if sum(1 for v in op.operands if v == value) != 1:
        return False
    for v in op.operands:
        if v == value or not is_tensor(v.type):
            continue
        dims = type_dims(v.type)
        if dims is None or (len(dims) >= 2 and dims[-2] != 1):
            return False
    return True


def _chain(first: Link) -> list[Link]:
    """The links from `first` on: each output read once, by row-wise ops and then the next
    convolution."""
    chain = [first]
    while True:
        link = chain[-1]
        value = link.conv.results[0]
        while True:
            readers = users(value)
            if len(readers) != 1:
                return chain
            reader = readers[0]
            if _row_wise(reader, value):
                link.after.append(reader)
                value = reader.results[0]
                continue
            break
        nxt = _link(reader) if reader.operands[0] == value else None
        if nxt is None or any(v == value for v in list(reader.operands)[1:]):
            return chain
        chain.append(nxt)


def _strips(height: int, k: int) -> list[tuple[int, int]]:
    return [(i * height // k, (i + 1) * height // k) for i in range(k)]


def _inside(lo: int, hi: int, height: int) -> int:
    """How many of rows [lo, hi) a tensor of `height` rows has (the rest is padding)."""
    return min(hi, height) - max(lo, 0)


def _windows(links: list[Link], a: int, b: int) -> list[tuple[int, int]]:
    """Per link, the rows [lo, hi) of its input that output rows [a, b) of the last read."""
    windows = []
    for link in reversed(links):
        lo, hi = link.rows_read(a, b)
        windows.append((lo, hi))
        a, b = max(lo, 0), min(hi, link.input_height)
    return windows[::-1]


def _rows_out(links: list[Link], windows: list[tuple[int, int]], i: int, a: int, b: int) -> int:
    """How many output rows link `i` computes for the strip [a, b) of the stage."""
    if i == len(links) - 1:
        return b - a
    return _inside(*windows[i + 1], links[i + 1].input_height)


def _every_strip_reads_rows(links: list[Link], k: int) -> bool:
    """Whether each link of each strip reads at least one row of its input (a window inside
    the padding alone, with padding as wide as the kernel, would not)."""
    for a, b in _strips(_dims(links[-1].output)[H], k):
        for link, (lo, hi) in zip(links, _windows(links, a, b), strict=True):
            if _inside(lo, hi, link.input_height) <= 0:
                return False
    return True


def _patched_peak(links: list[Link], k: int) -> int:
    """The stage's output plus, over its strips, the most one link reads and writes (the last
    link writes into the output)."""
    out = links[-1].output
    worst = 0
    for a, b in _strips(_dims(out)[H], k):
        windows = _windows(links, a, b)
        for i, (lo, hi) in enumerate(windows):
            rows_in = _inside(lo, hi, links[i].input_height)
            written = 0 if i == len(links) - 1 else \
                _bytes(links[i].output, _rows_out(links, windows, i, a, b))
            worst = max(worst, _bytes(links[i].conv.operands[0], rows_in) + written)
    return _bytes(out) + worst


def _constants(func: ir.Operation) -> set[ir.Value]:
    """Values computed from literals alone (weights, their transposes): IREE hoists them."""
    constant: set[ir.Value] = set()
    for op in nested_ops(func):
        if from_constants(op, constant):
            constant.update(op.results)
    return constant


def _footprint(op: ir.Operation, constant: set[ir.Value]) -> int:
    """The bytes `op` reads and writes (its static tensors, weights left out)."""
    total = 0
    for v in [*op.operands, *op.results]:
        if v in constant:
            continue
        dims = type_dims(v.type) if is_tensor(v.type) else None
        if dims is not None and None not in dims:
            total += math.prod(dims) * element_bytes(v.type)
    return total


def _plan(chain: list[Link], footprints: list[tuple[ir.Value, int]]) -> tuple[int, int] | None:
    """(links, strips) of the patching of `chain`, or None when it does not pay. `footprints`:
    each op's first result and its footprint, over the function."""
    sizes = [_bytes(link.conv.operands[0]) + _bytes(link.conv.results[0]) for link in chain]
    peak = max(sizes)
    n = min(sizes.index(peak) + 2, len(chain))
    links = chain[:n]
    stage = {link.conv.results[0] for link in links} | {
        op.results[0] for link in links for op in link.after}
    if n < 2 or any(size >= peak for value, size in footprints if value not in stage):
        return None
    estimates = {k: _patched_peak(links, k)
                 for k in range(2, min(MAX_STRIPS, _dims(links[-1].output)[H]) + 1)
                 if _every_strip_reads_rows(links, k)}
    if not estimates or min(estimates.values()) >= peak:
        return None
    best = min(estimates.values())
    return n, min(k for k, e in estimates.items() if e <= best * 1.05)


def _aten_ops(func: ir.Operation) -> list[ir.Operation]:
    return [op for op in nested_ops(func) if op.name.startswith("torch.aten.")]


# --- the rewrite ---------------------------------------------------------------------------

def _with_rows(like: ir.Value, rows: int) -> ir.Type:
    dims = list(_dims(like))
    dims[H] = rows
    return vtensor_type(like.type, dims)


def _rows(x: ir.Value, lo: int, hi: int, height: int, first: int, ip, loc) -> ir.Value:
    """Rows [lo, hi) of a tensor of `height` rows, zero rows where the range leaves it, from
    `x`, which holds its rows from `first` on."""
    start, end = max(lo, 0), min(hi, height)
    top, bottom = start - lo, hi - end
    if (start - first, end - first) != (0, _dims(x)[H]):
        x = create("torch.aten.slice.Tensor", _with_rows(x, end - start), ip, loc,
                   operands=[x, int_constant(H, ip, loc), int_constant(start - first, ip, loc),
                             int_constant(end - first, ip, loc), int_constant(1, ip, loc)])
    if top or bottom:
        zero = float_constant(0.0, ip, loc)
        x = create("torch.aten.constant_pad_nd", _with_rows(x, hi - lo), ip, loc,
                   operands=[x, int_list([0, 0, top, bottom], ip, loc), zero])
    return x


def _padded_rows(pad: ir.Operation, lo: int, hi: int, ip, loc) -> ir.Value:
    """Rows [lo, hi) of `pad`'s result (a function argument zero-padded at the end of its
    H and W, as `dync-bucket` pads it) read straight from the argument, zeros beyond its
    true extent and above row 0: one gather over static index tensors, into a static strip.
    The padded argument never exists, and neither does a slice of the argument: its size
    would be dynamic, and IREE 3.13 gives dynamically sized transients no reuse (the four
    strips' slices were all alive at once)."""
    arg = pad.operands[0]
    n, c, _, width = _dims(pad.result)
    rows, cols = np.arange(lo, hi), np.arange(width)

    def literal(values: np.ndarray, shape: tuple[int, ...]) -> ir.Value:
        return inline_literal(values.astype(np.int64).reshape(shape), ip, loc)

    def size(axis: int) -> ir.Value:
        return create("torch.aten.size.int", "!torch.int", ip, loc,
                      operands=[arg, int_constant(axis, ip, loc)])

    def below(index: ir.Value, bound: ir.Value) -> ir.Value:
        return create("torch.aten.lt.Scalar", vtensor_of(_dims_of(index), "i1"), ip, loc,
                      operands=[index, bound])

    def clamped(index: ir.Value, bound: ir.Value) -> ir.Value:
        last = create("torch.aten.sub.int", "!torch.int", ip, loc,
                      operands=[bound, int_constant(1, ip, loc)])
        return create("torch.aten.clamp", index.type, ip, loc,
                      operands=[index, int_constant(0, ip, loc), last])

    h, w = size(H), size(H + 1)
    row, col = literal(rows, (1, 1, hi - lo, 1)), literal(cols, (1, 1, 1, width))
    indices = [literal(np.arange(n), (n, 1, 1, 1)), literal(np.arange(c), (1, c, 1, 1)),
               clamped(row, h), clamped(col, w)]
    index_list = create("torch.prim.ListConstruct", "!torch.list<vtensor>", ip, loc,
                        operands=indices)
    strip = _with_rows(pad.result, hi - lo)
    gathered = create("torch.aten.index.Tensor_hacked_twin", strip, ip, loc,
                      operands=[arg, index_list])
    inside = [below(row, h), below(col, w)]
    if lo < 0:
        inside.append(create("torch.aten.ge.Scalar", vtensor_of((1, 1, hi - lo, 1), "i1"),
                             ip, loc, operands=[row, int_constant(0, ip, loc)]))
    mask = inside[0]
    for other in inside[1:]:
        dims = np.broadcast_shapes(_dims_of(mask), _dims_of(other))
        mask = create("torch.aten.logical_and", vtensor_of(dims, "i1"), ip, loc,
                      operands=[mask, other])
    zero = float_constant(0.0, ip, loc)
    return create("torch.aten.where.ScalarOther", strip, ip, loc,
                  operands=[mask, gathered, zero])


def _dims_of(value: ir.Value) -> tuple[int, ...]:
    return tuple(type_dims(value.type))


def _clone(op: ir.Operation, operands: list[ir.Value], result: ir.Type, ip, loc) -> ir.Value:
    attrs = {a.name: a.attr for a in op.attributes}
    return ir.Operation.create(op.name, results=[result], operands=operands, attributes=attrs,
                               loc=loc, ip=ip).result


def _strip(links: list[Link], x: ir.Value, pad: ir.Operation | None, a: int, b: int, ip,
           loc) -> ir.Value:
    """Output rows [a, b) of the stage computed from its input `x`, the result of `pad` (a
    padded argument) if that is not None."""
    windows = _windows(links, a, b)
    first = 0
    for i, link in enumerate(links):
        lo, hi = windows[i]
        if i == 0 and pad is not None:
            x = _padded_rows(pad, lo, hi, ip, loc)
        else:
            x = _rows(x, lo, hi, link.input_height, first, ip, loc)
        first = max(windows[i + 1][0], 0) if i + 1 < len(links) else a
        rows = _rows_out(links, windows, i, a, b)
        operands = list(link.conv.operands)
        padding = window(link.conv.name).padding
        operands[0] = x
        operands[padding] = int_list([0, constant_int_list(operands[padding])[1]], ip, loc)
        old = link.conv.results[0]
        x = _clone(link.conv, operands, _with_rows(old, rows), ip, loc)
        for op in link.after:
            x = _clone(op, [x if v == old else v for v in op.operands],
                       _with_rows(op.results[0], rows), ip, loc)
            old = op.results[0]
    return x


def _patch(links: list[Link], k: int, nhwc: bool) -> None:
    out = links[-1].output
    ip, loc = ir.InsertionPoint(links[-1].last), links[-1].last.location
    x = links[0].conv.operands[0]
    pad = padded_argument(x)
    pieces = []
    for a, b in _strips(_dims(out)[H], k):
        piece = _strip(links, x, pad, a, b, ip, loc)
        if nhwc:
            dims = _dims(piece)
            piece = create("torch.aten.permute", vtensor_type(piece.type, [dims[i] for i in NHWC]),
                           ip, loc, operands=[piece, int_list(NHWC, ip, loc)],
                           **{CANCELS_ATTR: ir.UnitAttr.get()})
        pieces.append(piece)
    tensors = create("torch.prim.ListConstruct", "!torch.list<vtensor>", ip, loc,
                     operands=pieces)
    dims = list(_dims(out))
    whole = [dims[i] for i in NHWC] if nhwc else dims
    cat = create("torch.aten.cat", vtensor_type(out.type, whole), ip, loc,
                 operands=[tensors, int_constant(1 if nhwc else H, ip, loc)],
                 **{PATCHES_ATTR: ir.IntegerAttr.get(ir.IntegerType.get_signless(64), k)})
    if nhwc:
        cat = create("torch.aten.permute", out.type, ip, loc,
                     operands=[cat, int_list(NCHW, ip, loc)], **{CANCELS_ATTR: ir.UnitAttr.get()})
    out.replace_all_uses_with(cat)
    for link in reversed(links):
        for op in reversed(link.after):
            _erase(op)
        _erase(link.conv)
    # The ops computing the stage's input, now read by nobody (a padded argument's pad).
    while (op := owner(x)) is not None and not list(op.results[0].uses):
        x = op.operands[0]
        op.erase()


def _erase(op: ir.Operation) -> None:
    for binding in bindings(op.results[0]):
        binding.erase()
    op.erase()


class PatchStages(Pass):
    name = "dync-patch-stages"
    summary = ("compute a CNN's leading convolutions strip by strip where their activations "
               "make the peak (patch-based inference)")

    def run(self, module: ir.Operation) -> None:
        nhwc = converts_to_channels_last(module)
        for func in functions(module).values():
            ops = _aten_ops(func)
            constant = _constants(func)
            footprints = [(op.results[0], _footprint(op, constant)) for op in ops
                          if len(op.results)]
            chained: set[ir.Value] = set()
            patches = []
            for op in ops:
                if len(op.results) != 1 or op.results[0] in chained \
                        or (link := _link(op)) is None \
                        or (viewed_argument(op.operands[0]) is None
                            and padded_argument(op.operands[0]) is None):
                    continue
                chain = _chain(link)
                chained.update(c.conv.results[0] for c in chain)
                plan = _plan(chain, footprints)
                if plan is not None:
                    patches.append((chain[:plan[0]], plan[1]))
            with module.context:
                for links, k in patches:
                    _patch(links, k, nhwc)
