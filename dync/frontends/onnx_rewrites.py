"""ONNX nodes whose lowering in IREE's importer gives other values than the ONNX spec, and
the driver that rewrites a graph's nodes before import (with the rules of `onnx_loops`,
`onnx_lowerings` and `onnx_recurrent` too).

Found by the ONNX node tests (`python -m benchmarks conformance`); a wrong value returned
silently is the worst a compiler can do, so before import each such node is either rewritten
into ONNX ops whose lowerings are right, or refused with the op, the attribute and the node:

- `GridSample`, padding "zeros" (the default): torch-mlir's `aten.grid_sampler` lowering reads
  outside the input for a sample point outside it and returns whatever memory holds there; in
  "nearest" mode it also rounds halves away from zero (ONNX: to even). Rewritten: the input is
  padded with zeros and the sample points clamped into the padding (rounded first, with ONNX's
  `Round`, in "nearest" mode), so every read is in bounds and every outside read is a zero.
  Padding "border" and "reflection" (not lowered): the points clamped into the image (reflected
  into it first), then sampled as above. Cubic mode and 3 or more spatial dims (not lowered):
  gathered and weighted as the reference does (`onnx_lowerings.grid_sample_by_gathers`).
- `BitShift` by a negative amount or by the width of the type or more: ONNX defines 0 (left) and
  the sign fill (right); the lowering shifts by the amount modulo the width for 8-bit types.
- `LpNormalization` of an all-zero slice: ONNX gives 0, the lowering 0/0 = NaN.
- `SoftmaxCrossEntropyLoss` with weights and mean reduction (the lowering returns inf) and
  `SpaceToDepth` in CRD mode (the lowering ignores the mode): replaced by the op's own function
  body from the ONNX schema, as ONNX's `_expanded` tests do (`onnx_functions`).
- `NegativeLogLikelihoodLoss` and `SoftmaxCrossEntropyLoss` over more than a batch of class
  scores (input rank above 2): torch's `nll_loss_forward`, which the lowering gives, does not
  compile in IREE; replaced by their function bodies (the loss's inner one too).
- `RotaryEmbedding`: lowered to `torch.onnx.rotary_embedding`, which IREE does not compile (or
  not at all without position ids): replaced by its function body.
- `MatMul` of a vector and a batch of matrices (rank 3 and up): torch's `matmul`, which the
  lowering gives, does not compile in IREE; the vector made a matrix, the dim squeezed out.
- `Det`: the lowering eliminates without pivoting (NaN for any matrix with a zero leading
  minor); rewritten as elimination with partial pivoting unrolled over the static size.
- `Resize` in linear or cubic mode with `align_corners` (wrong when downsampling): rewritten as
  per-axis Gathers of the neighbours, weighted as ONNX's reference does.
- `AveragePool` with `ceil_mode`, `count_include_pad` and a dilation (the windows that end in
  the padding averaged over the wrong count): the zeros padded explicitly first.
- `Slice` with a negative step: the lowering's `aten.slice` takes the step as positive (wrong
  values and shape, or offsets IREE rejects): each axis with a negative step becomes a Gather
  of the indices ONNX reads (a `Range` from the clamped start down to the clamped end; a
  constant where they and the size are known), the other axes a Slice of their own.
  Refused: a Slice whose steps are not known at compile time.
- `Pad` in edge, reflect or wrap mode: the lowering's reflect padding fails IREE's codegen
  (an unconverted cast) on some shapes, and its wrap padding never finishes (torch-mlir loops
  in the backend lowering). Rewritten, along each axis of static size with pads known at
  compile time: a Gather of the indices `np.pad` reads (`np.pad(arange(n), pads, mode)`, the
  reference's own definition). Refused: wrap mode over an axis of dynamic size.
- `Range` whose limit is behind its start (an empty result): the lowering's size is
  negative, and the process aborts at run time (malloc). Rewritten: the limit clamped to the
  start on that side (`Where` on the delta's sign), so the size is 0. In float16 and
  bfloat16 (not lowered): computed in float32, then rounded.
- `QLinearMatMul` of rank above 2 (wrong values): computed as ONNX's reference does, the
  zero points subtracted in int32, the product scaled in float64, rounded half to even and
  saturated.
- `MaxPool`'s Indices: the lowering counts them within each (batch, channel) plane (ONNX:
  over the whole tensor; silently wrong for more than one plane) and, where the pads of an
  axis differ at its two ends, in the padded input; `storage_order=1` is not lowered.
  Rewritten: the pool of the input padded explicitly where pads differ, each index's
  coordinates put together over the input in ONNX's order, the plane's first index added.
- Refused: `Det` of a dynamic size, `QLinearMatMul` of rank above 2 with a scale or zero
  point of more than one element, the `AveragePool` above where ceil mode would drop a window
  that starts in the pads.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx
from onnx import helper

from ..errors import UnsupportedConstructError
from . import onnx_functions, onnx_loops, onnx_lowerings, onnx_recurrent
from .onnx_graphs import (
    GraphEditor,
    attribute,
    gathered_along,
    named_shape,
    node_source,
    padded_with,
    refuse_wrong_values,
    static_result,
    subgraphs,
)


def _grid_sample(node: onnx.NodeProto, g: GraphEditor) -> bool:
    mode, padding = attribute(node, "mode", "linear"), attribute(node, "padding_mode", "zeros")
    if padding not in ("zeros", "border", "reflection"):
        return False  # the importer names it
    if mode not in ("linear", "bilinear", "nearest") or g.rank(node.input[0]) != 4:
        return onnx_lowerings.grid_sample_by_gathers(node, g, _reflected)
    pad = 2  # a bilinear read at floor(p) and floor(p) + 1 stays in [-2, size + 1]
    x, grid = node.input[0], node.input[1]
    dtype = helper.tensor_dtype_to_np_dtype(g.elem_type(grid))
    padded = g.op("Pad", x, g.const([0, 0, pad, pad, 0, 0, pad, pad], np.int64))
    shape = g.op("Shape", x)
    # Grid points are (x, y): x indexes W (axis 3), y indexes H (axis 2).
    sizes = g.op("Cast", g.op("Gather", shape, g.const([3, 2], np.int64)),
                 to=g.elem_type(grid))
    one, two = g.const(1, dtype), g.const(2, dtype)
    if attribute(node, "align_corners", 0):
        span = g.op("Sub", sizes, one)  # p = (grid + 1) / 2 * (size - 1)
        pixel = g.op("Mul", g.op("Div", g.op("Add", grid, one), two), span)
    else:  # p = ((grid + 1) * size - 1) / 2
        pixel = g.op("Div", g.op("Sub", g.op("Mul", g.op("Add", grid, one), sizes), one), two)
    last = g.op("Sub", sizes, one)
    if padding == "zeros":
        margin = g.const(1.5, dtype)
        pixel = g.op("Min", g.op("Max", pixel, g.op("Neg", margin)), g.op("Add", last, margin))
    else:  # every read in the image: reflected into it first, then clamped to its pixels
        if padding == "reflection":
            half = g.const(0.0 if attribute(node, "align_corners", 0) else 0.5, dtype)
            pixel = _reflected(g, pixel, g.op("Neg", half), g.op("Add", last, half))
        pixel = g.op("Min", g.op("Max", pixel, g.const(0, dtype)), last)
    if mode == "nearest":
        pixel = g.op("Round", pixel)
    shifted = g.op("Add", pixel, g.const(pad, dtype))
    padded_sizes = g.op("Add", sizes, g.const(2 * pad, dtype))
    if attribute(node, "align_corners", 0):
        new_grid = g.op("Sub", g.op("Div", g.op("Mul", shifted, two),
                                    g.op("Sub", padded_sizes, one)), one)
    else:
        new_grid = g.op("Sub", g.op("Div", g.op("Add", g.op("Mul", shifted, two), one),
                                    padded_sizes), one)
    rewritten = onnx.NodeProto()
    rewritten.CopyFrom(node)
    rewritten.input[0], rewritten.input[1] = padded, new_grid
    kept = [a for a in rewritten.attribute if a.name != "padding_mode"]
    del rewritten.attribute[:]
    rewritten.attribute.extend(kept)  # every read is in the zero-padded input now
    g.emitted.append(rewritten)
    return True


def _reflected(g: GraphEditor, x: str, low: str, high: str) -> str:
    """`x` reflected into [low, high] as often as it takes (ONNX's GridSample reflection):
    its offset from `low` modulo twice the span, folded back past `high`."""
    span = g.op("Sub", high, low)
    period = g.op("Add", span, span)
    offset = g.op("Sub", x, low)
    wrapped = g.op("Sub", offset, g.op("Mul", g.op("Floor", g.op("Div", offset, period)), period))
    folded = g.op("Where", g.op("Greater", wrapped, span), g.op("Sub", period, wrapped), wrapped)
    return g.op("Add", low, folded)


def _bit_shift(node: onnx.NodeProto, g: GraphEditor) -> bool:
    x, amount = node.input
    dtype = np.dtype(helper.tensor_dtype_to_np_dtype(g.elem_type(x)))
    width = dtype.itemsize * 8
    out_of_range = g.op("GreaterOrEqual", amount, g.const(width, dtype))
    if dtype.kind == "i":
        out_of_range = g.op("Or", out_of_range, g.op("Less", amount, g.const(0, dtype)))
    safe_amount = g.op("Where", out_of_range, g.const(0, dtype), amount)
    shifted = g.op("BitShift", x, safe_amount, direction=attribute(node, "direction"))
    zero = g.const(0, dtype)
    fill = zero
    if attribute(node, "direction") == "RIGHT" and dtype.kind == "i":
        fill = g.op("Where", g.op("Less", x, zero), g.const(-1, dtype), zero)
    g.op("Where", out_of_range, fill, shifted, out=node.output[0])
    return True


def _lp_normalization(node: onnx.NodeProto, g: GraphEditor) -> bool:
    x = node.input[0]
    axis, p = attribute(node, "axis", -1), attribute(node, "p", 2)
    if p not in (1, 2):
        return False
    reduce = "ReduceL2" if p == 2 else "ReduceL1"
    norm = g.reduce(reduce, x, [axis], keepdims=1)
    dtype = helper.tensor_dtype_to_np_dtype(g.elem_type(x))
    zero = g.op("Equal", norm, g.const(0, dtype))
    g.op("Div", x, g.op("Where", zero, g.const(1, dtype), norm), out=node.output[0])
    return True


_NLL = frozenset({("", "NegativeLogLikelihoodLoss")})


def _beyond_2d(node: onnx.NodeProto, g: GraphEditor) -> bool:
    rank = g.rank(node.input[0])
    return rank is None or rank > 2


def _negative_log_likelihood(node: onnx.NodeProto, g: GraphEditor) -> bool:
    return _beyond_2d(node, g) and onnx_functions.expand(node, g)


def _softmax_cross_entropy(node: onnx.NodeProto, g: GraphEditor) -> bool:
    weighted = len(node.input) > 2 and node.input[2]
    weighted_mean = bool(weighted and attribute(node, "reduction", "mean") == "mean")
    beyond_2d = _beyond_2d(node, g)
    if beyond_2d and onnx_functions.expand(node, g, _NLL):
        return True
    return weighted_mean and _expanded(
        node, g, "with weights and mean reduction", "the lowering returns inf")


def _space_to_depth(node: onnx.NodeProto, g: GraphEditor) -> bool:
    return attribute(node, "mode", "DCR") == "CRD" and _expanded(
        node, g, "in CRD mode", "the lowering ignores the mode")


def _expanded(node: onnx.NodeProto, g: GraphEditor, what: str, why: str) -> bool:
    """`node` replaced by its function body; refused where the body cannot be built."""
    if not onnx_functions.expand(node, g):
        refuse_wrong_values(node, what, why)
    return True


def _matmul_with_a_vector(node: onnx.NodeProto, g: GraphEditor) -> bool:
    """A vector times a batch of matrices (or the reverse): the vector made a one-row (one
    column) matrix, multiplied, and the added dim squeezed out, as numpy's matmul defines it."""
    a, b = node.input
    ranks = g.rank(a), g.rank(b)
    if None in ranks or 1 not in ranks or max(ranks) <= 2:
        return False
    if ranks[0] == 1:
        product = g.op("MatMul", g.op("Unsqueeze", a, g.const([0], np.int64)), b)
        g.squeeze(product, [-2], out=node.output[0])
    else:
        product = g.op("MatMul", a, g.op("Unsqueeze", b, g.const([1], np.int64)))
        g.squeeze(product, [-1], out=node.output[0])
    return True


def _det(node: onnx.NodeProto, g: GraphEditor) -> bool:
    """Det by Gaussian elimination with partial pivoting (numpy's LU), unrolled over the
    static matrix size: IREE's lowering does not pivot."""
    shape = named_shape(g.types.get(node.input[0]))
    size = shape[-1] if shape and len(shape) >= 2 else None
    if not isinstance(size, int) or size < 1 or shape[-2] != size:
        refuse_wrong_values(node, "of a matrix of dynamic size", "it eliminates without pivoting, so any "
                "matrix with a zero leading minor gives NaN (det [[0, 1], [2, 3]] = -2)")
    dtype = helper.tensor_dtype_to_np_dtype(g.elem_type(node.input[0]))

    def rows_cols(x: str, rows: tuple[int, int], cols: tuple[int, int]) -> str:
        return g.op("Slice", x, g.const([rows[0], cols[0]], np.int64),
                    g.const([rows[1], cols[1]], np.int64), g.const([-2, -1], np.int64))

    a, det = node.input[0], None
    rows = g.const(np.arange(size).reshape(size, 1), np.int64)
    zero, one = g.const(0, dtype), g.const(1, dtype)
    for k in range(size):
        column = rows_cols(a, (k, size), (k, k + 1))
        pivot_row = g.op("Add", g.op("ArgMax", g.op("Abs", column), axis=-2, keepdims=1),
                         g.const(k, np.int64))  # [..., 1, 1]
        at_k, at_pivot = g.op("Equal", rows, g.const(k, np.int64)), g.op("Equal", rows, pivot_row)
        order = g.op("Where", at_k, pivot_row, g.op("Where", at_pivot, g.const(k, np.int64), rows))
        a = g.op("GatherElements", a, g.op("Expand", order, g.op("Shape", a)), axis=-2)
        swapped = g.op("Not", g.op("Equal", pivot_row, g.const(k, np.int64)))
        pivot = rows_cols(a, (k, k + 1), (k, k + 1))
        signed = g.op("Where", swapped, g.op("Neg", pivot), pivot)
        det = signed if det is None else g.op("Mul", det, signed)
        if k + 1 < size:  # a zero pivot makes the det 0: divide by 1 instead of making NaNs
            safe = g.op("Where", g.op("Equal", pivot, zero), one, pivot)
            factors = g.op("Div", rows_cols(a, (k + 1, size), (k, k + 1)), safe)
            below = g.op("Sub", rows_cols(a, (k + 1, size), (0, size)),
                         g.op("Mul", factors, rows_cols(a, (k, k + 1), (0, size))))
            a = g.op("Concat", rows_cols(a, (0, k + 1), (0, size)), below, axis=-2)
    g.squeeze(det, [-2, -1], out=node.output[0])
    return True


def _resize(node: onnx.NodeProto, g: GraphEditor) -> bool:
    """Resize in linear or cubic mode with align_corners, which IREE's lowering gets wrong when
    downsampling: interpolated axis by axis with Gathers of the neighbours (clamped to the
    edge, as ONNX pads) weighted as in ONNX's reference, including its output width of
    `scale * size` (not the rounded size) in the coordinate transform."""
    mode = attribute(node, "mode", "nearest")
    if mode == "nearest":
        return onnx_lowerings.nearest_resize(node, g)
    if onnx_lowerings.interpolating_resize(node, g):
        return True
    if attribute(node, "coordinate_transformation_mode") != "align_corners":
        return False
    x, rank = node.input[0], g.rank(node.input[0])
    scales = node.input[2 if g.opset >= 11 else 1] if len(node.input) > 1 else ""
    sizes = node.input[3] if g.opset >= 11 and len(node.input) > 3 else ""
    dtype = helper.tensor_dtype_to_np_dtype(g.elem_type(x))
    unsupported = [what for what, present in (
        ("antialias", attribute(node, "antialias", 0)), ("axes", attribute(node, "axes")),
        ("keep_aspect_ratio_policy",
         attribute(node, "keep_aspect_ratio_policy", "stretch") != "stretch"),
        ("a non-float input", np.dtype(dtype).kind != "f"), ("an input of unknown rank",
                                                              rank is None)) if present]
    if unsupported:
        refuse_wrong_values(node, f"in {mode} mode with coordinate_transformation_mode align_corners and "
                f"{unsupported[0]}", "downsampled values are wrong")
    float_type = g.elem_type(x)
    shape = g.op("Shape", x)
    y = x
    for axis in range(rank):
        if not sizes and np.all(g.constants.get(scales, np.zeros(rank))[axis] == 1):
            continue
        at = g.const([axis], np.int64)
        length = g.op("Gather", shape, at)
        length_f = g.op("Cast", length, to=float_type)
        if sizes:
            out = g.op("Gather", sizes, at)
            width = g.op("Cast", out, to=float_type)
        else:
            width = g.op("Mul", length_f, g.op("Gather", scales, at))
            out = g.op("Cast", g.op("Floor", width), to=onnx.TensorProto.INT64)
        positions = g.op("Cast", g.op("Range", g.const(0, np.int64), g.squeeze(out, [0]),
                                      g.const(1, np.int64)), to=float_type)
        one = g.const(1, dtype)
        # Below a width of 2 the only position is 0: any divisor from 1 up gives it.
        source = g.op("Div", g.op("Mul", positions, g.op("Sub", length_f, one)),
                      g.op("Max", g.op("Sub", width, one), one))
        start = g.op("Floor", source)
        ratio = g.op("Sub", source, start)
        start = g.op("Cast", start, to=onnx.TensorProto.INT64)
        if mode == "linear":
            taps = {0: g.op("Sub", one, ratio), 1: ratio}
        else:
            taps = _cubic_weights(g, ratio, attribute(node, "cubic_coeff_a", -0.75), dtype)
        last = g.op("Sub", length, g.const(1, np.int64))
        broadcast = g.const([-1 if d == axis else 1 for d in range(rank)], np.int64)
        weights, values = [], []
        for offset, weight in taps.items():
            index = g.op("Add", start, g.const(offset, np.int64))
            if attribute(node, "exclude_outside", 0):
                outside = g.op("Or", g.op("Less", index, g.const(0, np.int64)),
                               g.op("Greater", index, last))
                weight = g.op("Where", outside, g.const(0, dtype), weight)
            weights.append(weight)
            index = g.op("Min", g.op("Max", index, g.const(0, np.int64)), last)
            values.append(g.op("Gather", y, index, axis=axis))
        if attribute(node, "exclude_outside", 0):
            total = g.op("Sum", *weights)
            weights = [g.op("Div", w, total) for w in weights]
        y = g.op("Sum", *(g.op("Mul", v, g.op("Reshape", w, broadcast))
                          for v, w in zip(values, weights, strict=True)))
    g.op("Identity", y, out=node.output[0])
    return True


def _cubic_weights(g: GraphEditor, ratio: str, a: float, dtype) -> dict[int, str]:
    """The weights of the neighbours at offsets -1..2 of ONNX's cubic interpolation (its
    `_cubic_coeffs`) at fractional position `ratio`."""
    def const(v: float) -> str:
        return g.const(v, dtype)

    def outer(d: str) -> str:  # ((a d - 5a) d + 8a) d - 4a, for 1 < d < 2
        inner = g.op("Sub", g.op("Mul", const(a), d), const(5 * a))
        return g.op("Sub", g.op("Mul", g.op("Add", g.op("Mul", inner, d), const(8 * a)), d),
                    const(4 * a))

    def near(d: str) -> str:  # ((a + 2) d - (a + 3)) d d + 1, for d <= 1
        inner = g.op("Sub", g.op("Mul", const(a + 2), d), const(a + 3))
        return g.op("Add", g.op("Mul", g.op("Mul", inner, d), d), const(1))

    rest = g.op("Sub", const(1), ratio)
    return {-1: outer(g.op("Add", ratio, const(1))), 0: near(ratio), 1: near(rest),
            2: outer(g.op("Add", rest, const(1)))}


# --------------------------------------------------------------------------- refusals


def _slice(node: onnx.NodeProto, g: GraphEditor) -> bool:
    """Slice with negative steps (see the module's docstring)."""
    if g.opset < 10 or len(node.input) < 5 or not node.input[4]:
        return False  # no steps: every one is 1
    steps = g.constants.get(node.input[4])
    axes = g.constants.get(node.input[3]) if node.input[3] else None
    rank = g.rank(node.input[0])
    if steps is None or (node.input[3] and axes is None):
        refuse_wrong_values(node, "with steps or axes known only at run time",
                            "a negative step is taken as positive")
    if (steps > 0).all():
        return False
    axes = np.arange(len(steps)) if axes is None else axes.astype(np.int64)
    if (axes < 0).any() and rank is None:
        refuse_wrong_values(node, "with a negative step and axis over an input of unknown rank",
                            "a negative step is taken as positive")
    axes = np.where(axes < 0, axes + (rank or 0), axes)
    x, starts, ends = node.input[:3]
    if g.elem_type(starts) != onnx.TensorProto.INT64:  # int32 starts and ends
        starts, ends = (g.op("Cast", v, to=onnx.TensorProto.INT64) for v in (starts, ends))
    forward = np.flatnonzero(steps > 0)
    if forward.size:
        picked = g.const(forward, np.int64)
        x = g.op("Slice", x, g.op("Gather", starts, picked), g.op("Gather", ends, picked),
                 g.const(axes[forward], np.int64), g.const(steps[forward], np.int64))
    for i in np.flatnonzero(steps < 0):
        x = g.op("Gather", x, _backward_indices(g, x, starts, ends, int(axes[i]), i, steps[i]),
                 axis=int(axes[i]))
    static_result(g, x, node.output[0])
    return True


def _backward_indices(g: GraphEditor, x: str, starts: str, ends: str, axis: int, i: int,
                      step: int) -> str:
    """The indices along `axis` a Slice with the negative `step` reads (its `i`th start and
    end clamped as ONNX's reference, numpy, does: into [-1, size - 1]): a constant where they
    and the size are known."""
    start, end = (g.constants.get(v) for v in (starts, ends))
    size = (named_shape(g.types.get(x)) or [None] * (axis + 1))[axis]
    if start is not None and end is not None and isinstance(size, int):
        first, stop, _ = slice(int(start[i]), int(end[i]), int(step)).indices(size)
        return g.const(np.arange(first, stop, step), np.int64)
    zero, one, minus_one = (g.const([v], np.int64) for v in (0, 1, -1))
    at = g.const([i], np.int64)
    size = g.op("Gather", g.op("Shape", x), g.const([axis], np.int64))
    last = g.op("Sub", size, one)

    def clamped(v):  # a negative position counts from the end; into [-1, size - 1]
        v = g.op("Where", g.op("Less", v, zero), g.op("Add", v, size), v)
        return g.op("Min", g.op("Max", v, minus_one), last)

    first, stop = (clamped(g.op("Gather", v, at)) for v in (starts, ends))
    stop = g.op("Min", stop, first)  # IREE's Range of a negative count is no empty one
    return g.op("Range", g.squeeze(first, [0]), g.squeeze(stop, [0]), g.const(step, np.int64))


def _pad(node: onnx.NodeProto, g: GraphEditor) -> bool:
    """Pad in edge, reflect or wrap mode (see the module's docstring)."""
    mode = attribute(node, "mode", "constant")
    if mode == "constant" or g.opset < 11:
        return False
    x, shape = node.input[0], named_shape(g.types.get(node.input[0]))
    pads = g.constants.get(node.input[1]) if len(node.input) > 1 else None
    axes = node.input[3] if len(node.input) > 3 else ""
    axes_value = g.constants.get(axes) if axes else np.arange(len(shape or []))
    if shape is None or pads is None or axes_value is None or (pads < 0).any():
        return False
    gathers = []  # (axis, indices)
    for axis, before, after in zip(axes_value.astype(int) % max(len(shape), 1),
                                   pads[:len(pads) // 2], pads[len(pads) // 2:], strict=True):
        size = shape[axis]
        if not (before or after):
            continue
        if not isinstance(size, int) or size == 0:
            if mode == "wrap":
                raise UnsupportedConstructError(
                    "ONNX Pad in wrap mode over a dynamic dim",
                    "IREE's importer does not finish lowering it (torch-mlir's backend "
                    "lowering loops); give the padded dims a static size",
                    node_source(node))
            return False
        gathers.append((int(axis), np.pad(np.arange(size), (int(before), int(after)), mode)))
    gathered_along(g, x, gathers, node.output[0])
    return True


def _range(node: onnx.NodeProto, g: GraphEditor) -> bool:
    start, limit, delta = node.input
    elem_type = g.elem_type(delta)
    half = elem_type in (onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16)
    if half:  # not lowered: computed in float32 (exact for the operands), then rounded
        start, limit, delta = (g.op("Cast", v, to=onnx.TensorProto.FLOAT)
                               for v in (start, limit, delta))
    zero = g.const(0, np.float32 if half else helper.tensor_dtype_to_np_dtype(elem_type))
    limit = g.op("Where", g.op("Greater", delta, zero), g.op("Max", limit, start),
                 g.op("Min", limit, start))
    if half:
        g.op("Cast", g.op("Range", start, limit, delta), to=elem_type, out=node.output[0])
    else:
        g.op("Range", start, limit, delta, out=node.output[0])
    return True


def _qlinear_matmul(node: onnx.NodeProto, g: GraphEditor) -> bool:
    """QLinearMatMul of rank above 2, whose lowering comes out wrong: as ONNX's reference
    computes it, `(a - a_zero) @ (b - b_zero)` in int32, times `a_scale * b_scale / y_scale`
    (in the scales' type), in float64, plus `y_zero`, rounded half to even and saturated."""
    ranks = [g.rank(node.input[0]), g.rank(node.input[3])]
    if all(r is not None and r <= 2 for r in ranks):
        return False
    a, a_scale, a_zero, b, b_scale, b_zero, y_scale, y_zero = node.input
    if any(r is None for r in ranks) or not all(
            _one_element(g.types.get(name)) for name in node.input[1:] if name not in (a, b)):
        refuse_wrong_values(node, f"of rank {max((r or 3) for r in ranks)}",
                            "batched (rank above 2) quantized matmuls come out wrong")

    def centred(x: str, zero: str) -> str:
        as_int = g.op("Cast", x, to=onnx.TensorProto.INT32)
        return g.op("Sub", as_int, g.op("Cast", zero, to=onnx.TensorProto.INT32))

    def as_double(x: str) -> str:
        return g.op("Cast", x, to=onnx.TensorProto.DOUBLE)

    product = g.op("MatMul", centred(a, a_zero), centred(b, b_zero))
    scale = g.op("Div", g.op("Mul", a_scale, b_scale), y_scale)
    scaled = g.op("Add", g.op("Mul", as_double(product), as_double(scale)), as_double(y_zero))
    dtype = helper.tensor_dtype_to_np_dtype(g.elem_type(y_zero))
    limits = np.iinfo(dtype)
    clipped = g.op("Clip", g.op("Round", scaled), g.const(limits.min, np.float64),
                   g.const(limits.max, np.float64))
    g.op("Cast", clipped, to=g.elem_type(y_zero), out=node.output[0])
    return True


def _one_element(t: onnx.TypeProto | None) -> bool:
    shape = named_shape(t)
    return shape is not None and all(d == 1 for d in shape)


def _average_pool(node: onnx.NodeProto, g: GraphEditor) -> bool:
    """AveragePool with ceil_mode, count_include_pad and a dilation, whose lowering averages the
    windows that end in the padding over the wrong count: the zeros padded explicitly first,
    then averaged as input (count_include_pad then has nothing left to count). Only where
    that keeps ONNX's output size: ceil mode drops a last window that starts in the end pads."""
    rank = g.rank(node.input[0])
    if rank is None or not (attribute(node, "ceil_mode", 0) and attribute(node, "count_include_pad", 0)
            and any(d > 1 for d in attribute(node, "dilations", []))):
        return False
    if not _same_ceil_windows(node, named_shape(g.types.get(node.input[0]))):
        refuse_wrong_values(node, "with ceil_mode, count_include_pad and dilations",
                "the windows that end in the padding are averaged over the wrong count")
    dtype = helper.tensor_dtype_to_np_dtype(g.elem_type(node.input[0]))
    pads = attribute(node, "pads", [0] * 2 * (rank - 2))
    padded = padded_with(g, node.input[0], pads, rank, g.const(0, dtype))
    attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute
                  if a.name not in ("pads", "count_include_pad")}
    g.op("AveragePool", padded, out=node.output[0], **attributes)
    return True


def _max_pool_indices(node: onnx.NodeProto, g: GraphEditor) -> bool:
    """MaxPool's Indices, which the lowering (`aten.max_pool2d_with_indices`) counts within
    each (batch, channel) plane where ONNX counts over the whole tensor (wrong wherever batch x
    channels > 1), in the padded input where the pads of an axis differ at its two ends (ONNX:
    in the input), and not at all in column-major order (`storage_order=1`). Rewritten: the
    pool in row-major order (over the input padded explicitly with the type's least value
    where the pads differ), each index taken apart into its coordinates and put together again
    over the input in ONNX's order where that differs, then `(n * C + c) * plane` added.
    Spatial sizes of dynamic size: symmetric pads and row-major order only, else refused."""
    if len(node.output) < 2 or not node.output[1]:
        return False
    x = node.input[0]
    rank, shape = g.rank(x), named_shape(g.types.get(x))
    if rank is None or shape is None:
        return False
    sizes, spatial = shape[2:], rank - 2
    column_major = attribute(node, "storage_order", 0) == 1
    attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute
                  if a.name not in ("storage_order", "auto_pad", "pads")}
    pooled, within = x, g.fresh("dync_plane_index")
    given_pads = attribute(node, "pads", [0] * 2 * spatial)
    if all(isinstance(d, int) for d in sizes):
        pads = _pool_pads(node, sizes)
        if pads[:spatial] == pads[spatial:]:
            attributes["pads"], dims, begins = pads, sizes, [0] * spatial
        else:
            if not _same_ceil_windows(node, shape):
                refuse_wrong_values(node, "with indices, ceil_mode and pads that differ at the "
                                    "two ends of an axis", "the indices count in the padded input")
            lowest = _lowest(helper.tensor_dtype_to_np_dtype(g.elem_type(x)))
            pooled = padded_with(g, x, pads, rank, g.const(lowest, lowest.dtype))
            dims = [d + pads[i] + pads[spatial + i] for i, d in enumerate(sizes)]
            begins = pads[:spatial]
    elif (attribute(node, "auto_pad", "NOTSET") not in ("NOTSET", "VALID") or column_major
          or given_pads[:spatial] != given_pads[spatial:]):
        refuse_wrong_values(node, "with indices over spatial sizes of dynamic size and "
                            "asymmetric pads or storage_order=1",
                            "the indices count in the padded input, in row-major order")
    else:
        dims, attributes["pads"] = None, given_pads
    g.emitted.append(helper.make_node("MaxPool", [pooled], [node.output[0], within],
                                      **attributes))
    if dims is not None and (dims != sizes or column_major):
        order = range(spatial - 1, -1, -1) if column_major else range(spatial)
        index = None
        for axis in order:
            coordinate = g.op("Mod", g.op("Div", within, g.const(
                int(np.prod(dims[axis + 1:])), np.int64)), g.const(dims[axis], np.int64))
            if begins[axis]:
                coordinate = g.op("Sub", coordinate, g.const(begins[axis], np.int64))
            index = coordinate if index is None else g.op(
                "Add", g.op("Mul", index, g.const(sizes[axis], np.int64)), coordinate)
        within = index
    plane = g.size(x, 2)
    for axis in range(3, rank):
        plane = g.op("Mul", plane, g.size(x, axis))
    planes = g.op("Mul", g.size(x, 0), g.size(x, 1))
    starts = g.op("Mul", g.op("Range", g.const(0, np.int64), planes, g.const(1, np.int64)), plane)
    leading = g.sizes(x, 0, 2)
    offsets = g.op("Reshape", starts, g.op("Concat", leading, g.const([1] * spatial, np.int64),
                                           axis=0))
    g.op("Add", within, offsets, out=node.output[1])
    return True


def _pool_pads(node: onnx.NodeProto, sizes: list[int]) -> list[int]:
    """A pool's pads (ONNX order: the begins, then the ends), those `auto_pad` asks for
    computed as the spec does (SAME_UPPER: the odd one at the end)."""
    spatial = len(sizes)
    auto_pad = attribute(node, "auto_pad", "NOTSET")
    if not auto_pad.startswith("SAME"):
        return list(attribute(node, "pads", [0] * 2 * spatial)) if auto_pad == "NOTSET" \
            else [0] * 2 * spatial
    kernel = attribute(node, "kernel_shape")
    strides = attribute(node, "strides", [1] * spatial)
    dilations = attribute(node, "dilations", [1] * spatial)
    totals = [max((-(-n // s) - 1) * s + (k - 1) * d + 1 - n, 0)
              for n, s, k, d in zip(sizes, strides, kernel, dilations, strict=True)]
    begins = [t // 2 if auto_pad == "SAME_UPPER" else t - t // 2 for t in totals]
    return begins + [t - b for t, b in zip(totals, begins, strict=True)]


def _lowest(dtype: np.dtype) -> np.ndarray:
    """The least value of `dtype` (-inf for floats), as a 0-d array of it."""
    dtype = np.dtype(dtype)
    return np.array(-np.inf if dtype.kind == "f" else np.iinfo(dtype).min, dtype)


def _same_ceil_windows(node: onnx.NodeProto, shape: list[int | str] | None) -> bool:
    """Whether pooling the explicitly padded input gives ONNX's number of windows per axis."""
    if shape is None or not all(isinstance(d, int) for d in shape[2:]):
        return False
    kernel, spatial = attribute(node, "kernel_shape"), len(shape) - 2
    pads = attribute(node, "pads", [0] * 2 * spatial)
    strides = attribute(node, "strides", [1] * spatial)
    dilations = attribute(node, "dilations", [1] * spatial)
    for i, size in enumerate(shape[2:]):
        padded = size + pads[i] + pads[spatial + i]
        span = dilations[i] * (kernel[i] - 1) + 1
        windows = -(-(padded - span) // strides[i]) + 1
        onnx_windows = windows - ((windows - 1) * strides[i] >= size + pads[i])
        explicit_windows = windows - ((windows - 1) * strides[i] >= padded)
        if onnx_windows != explicit_windows:
            return False
    return True


_RULES: dict[str, Callable[[onnx.NodeProto, GraphEditor], bool]] = {
    "GridSample": _grid_sample,
    "BitShift": _bit_shift,
    "LpNormalization": _lp_normalization,
    "SoftmaxCrossEntropyLoss": _softmax_cross_entropy,
    "NegativeLogLikelihoodLoss": _negative_log_likelihood,
    "RotaryEmbedding": onnx_functions.expand,
    "MatMul": _matmul_with_a_vector,
    "SpaceToDepth": _space_to_depth,
    "Det": _det,
    "QLinearMatMul": _qlinear_matmul,
    "Resize": _resize,
    "AveragePool": _average_pool,
    "MaxPool": _max_pool_indices,
    "Slice": _slice,
    "Range": _range,
    "Pad": _pad,
    **onnx_loops.RULES,
    **onnx_lowerings.RULES,
    **onnx_recurrent.RULES,
}


def rewrite_for_iree(graph: onnx.GraphProto, opset: int,
                     outer: dict[str, onnx.TypeProto] | None = None) -> list[str]:
    """Rewrite (in place) or refuse the nodes of `graph` and its subgraphs that IREE's importer
    would lower to other values than ONNX's (a rule's function body rewritten in turn);
    returns one note per rewritten op type."""
    g = GraphEditor(graph, opset, outer or {})
    rewritten: set[str] = set()
    work = list(graph.node)
    work.reverse()  # popped from the end: an expanded body's nodes are pushed back in order
    while work:
        node = work.pop()
        if node.domain not in ("", "ai.onnx"):
            g.emitted.append(node)
            continue
        for sub in subgraphs(node):
            rewritten.update(rewrite_for_iree(sub, opset, g.types))
        rule = _RULES.get(node.op_type)
        if rule is not None and rule(node, g):
            rewritten.add(node.op_type)
        else:
            g.emitted.append(node)
        work.extend(reversed(g.expanded))  # a function body's nodes are rewritten in turn
        g.expanded.clear()
    if rewritten:
        del graph.node[:]
        graph.node.extend(g.emitted)
        graph.value_info.extend(g.declared)
    return sorted(rewritten)
