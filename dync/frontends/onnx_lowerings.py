"""ONNX nodes IREE's importer does not lower (or whose lowering IREE 3.13 cannot compile or
run), rewritten before import into ONNX ops that it does, with the spec's values:

- `ConvInteger` with pads (padded first with the input's zero point) or with a weight zero
  point per output channel (subtracted as `z * conv(x', ones)` in int32);
- `DequantizeLinear` of 16-bit integers: `(x - zero point) * scale` in the scale's type;
- `ReverseSequence`: a GatherElements along the time axis (IREE 3.13 fails to compile its own
  lowering: a vector.gather left unconverted);
- `NonMaxSuppression` with a score threshold above the least score, which the lowering
  rejects at run time: run without it, then the boxes not above it dropped;
- `Resize` in nearest mode with `axes`, a `keep_aspect_ratio_policy` or `align_corners` (not
  lowered), over a static shape with the scales or sizes known: a Gather along each resized
  axis of the indices ONNX's reference reads, found by running the reference on the input's
  indices along that axis;
- `Compress`, whose lowering IREE 3.13 fails to compile (a `tensor.cast` between a dynamic
  and a static count): a Gather of the condition's `NonZero` positions (of the flattened
  input without an axis);
- `Dropout` in training mode with a ratio of 0 (the lowering's `aten.dropout` does not
  compile): the input, and a mask of ones; any other ratio in training mode is refused (a
  random mask: dync compiles inference);
- `CumProd` of a static shape: the product of `x` over a triangular mask (ones where an
  element does not count), `n` times the input's elements for `n` along the axis (the
  importer lowers no `ReduceProd` of a dynamic shape).
- `DFT` (`aten.fft_fft` is not legalized by IREE 3.13) along an axis of static size, with its
  length known: a MatMul by the transform's matrix (the real and imaginary parts of every
  output frequency as a linear map of the input's, found by running ONNX's reference on the
  basis), with the signal axis and the real/imaginary dim moved last and back; onesided,
  inverse and a `dft_length` shorter or longer than the signal are all in the matrix.
- `AffineGrid` of a size known at compile time (not lowered): the base grid of the output's
  points, as ONNX's reference builds it, times each theta (one MatMul).
- `DeformConv` in 2-D with static spatial sizes (IREE 3.13 does not legalize the lowering's
  `torchvision.deform_conv2d`): each kernel tap's offset sampling point read bilinearly (its
  four neighbours gathered, those outside the input weighing 0), times the mask, then the
  convolution as one grouped MatMul of the weights by those columns, plus the bias.
"""

from __future__ import annotations

import math

import numpy as np
import onnx
from onnx import helper

from ..errors import UnsupportedConstructError
from .onnx_graphs import (
    GraphEditor,
    attribute,
    gathered_along,
    named_shape,
    node_source,
    padded_with,
    reversed_within,
    static_result,
)


def _conv_integer(node: onnx.NodeProto, g: GraphEditor) -> bool:
    """ConvInteger with pads or with a zero point per output channel, which the importer does
    not lower. Pads: the input padded first with its zero point (ONNX pads `x - x_zero_point`
    with zeros), by Concat, since Pad before opset 11 takes its value as an attribute. A weight
    zero point `z` per channel: conv(x', w - z) = conv(x', w) - z * conv(x', ones), in int32."""
    pads = attribute(node, "pads", [])
    rank, w_shape = g.rank(node.input[0]), named_shape(g.types.get(node.input[1]))
    per_channel = len(node.input) > 3 and node.input[3] and g.rank(node.input[3]) == 1
    if (not any(pads) and not per_channel) or rank is None or (
            attribute(node, "auto_pad", "NOTSET") != "NOTSET"):
        return False
    if per_channel and (attribute(node, "group", 1) != 1 or w_shape is None
                        or not all(isinstance(d, int) for d in w_shape)):
        return False
    x = node.input[0]
    x_dtype = helper.tensor_dtype_to_np_dtype(g.elem_type(x))
    x_zero = node.input[2] if len(node.input) > 2 and node.input[2] else None
    if any(pads):
        x = padded_with(g, x, pads, rank, x_zero or g.const(0, x_dtype))
    attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute
                  if a.name != "pads"}
    inputs = [x, node.input[1], x_zero or ""]
    if not per_channel:
        g.op("ConvInteger", *inputs, *node.input[3:], out=node.output[0], **attributes)
        return True
    product = g.op("ConvInteger", *inputs, **attributes)
    ones = g.const(np.ones([1, *w_shape[1:]], x_dtype), x_dtype)
    window_sums = g.op("ConvInteger", x, ones, x_zero or "", **attributes)
    zero = g.op("Reshape", g.op("Cast", node.input[3], to=onnx.TensorProto.INT32),
                g.const([1, -1] + [1] * (rank - 2), np.int64))
    g.op("Sub", product, g.op("Mul", zero, window_sums), out=node.output[0])
    return True


def _reverse_sequence(node: onnx.NodeProto, g: GraphEditor) -> bool:
    """ReverseSequence, whose lowering IREE 3.13 fails to compile (a vector.gather left
    unconverted): a GatherElements along the time axis (`reversed_within`)."""
    x, lengths = node.input
    rank = g.rank(x)
    if rank is None:
        return False
    reversed_within(g, x, g.op("Cast", lengths, to=onnx.TensorProto.INT64),
                    attribute(node, "time_axis", 0), attribute(node, "batch_axis", 1), rank,
                    out=node.output[0])
    return True


def _non_max_suppression(node: onnx.NodeProto, g: GraphEditor) -> bool:
    """NonMaxSuppression with a score threshold, which the lowering rejects at run time unless
    it is at most the least score: run without it, then drop the selected boxes whose score is
    not above it. Equivalent, since boxes are taken in falling score order: one under the
    threshold comes after every box over it, so it neither suppresses nor displaces one."""
    if len(node.input) < 5 or not node.input[4]:
        return False
    unfiltered = onnx.NodeProto()
    unfiltered.CopyFrom(node)
    del unfiltered.input[4:]
    selected = unfiltered.output[0] = g.fresh(f"{node.output[0]}_unfiltered")
    g.emitted.append(unfiltered)
    scores = g.op("GatherND", node.input[1], selected)
    above = g.op("Greater", scores, node.input[4])
    kept = g.squeeze(g.op("NonZero", above), [0])  # not Compress: its lowering is wrong
    # Into a dynamic value first: the model's output may be declared with the static count.
    filtered = g.op("Gather", selected, kept, axis=0)
    # Shape inference cannot see through the new NonMaxSuppression's output: declare all three.
    g.declared.extend([
        helper.make_tensor_value_info(selected, onnx.TensorProto.INT64, [None, 3]),
        helper.make_tensor_value_info(scores, g.elem_type(node.input[1]), [None]),
        helper.make_tensor_value_info(above, onnx.TensorProto.BOOL, [None]),
        helper.make_tensor_value_info(filtered, onnx.TensorProto.INT64, [None, 3])])
    g.op("Identity", filtered, out=node.output[0])
    return True


_QUANTIZED_BY_IMPORTER = {onnx.TensorProto.INT8, onnx.TensorProto.UINT8, onnx.TensorProto.INT32}


def _dequantize_linear(node: onnx.NodeProto, g: GraphEditor) -> bool:
    """DequantizeLinear of a 16-bit integer, which the importer does not lower: (x - zero
    point) * scale in the scale's float type, the scale per tensor or per axis."""
    x, scale = node.input[0], node.input[1]
    rank, scale_rank = g.rank(x), g.rank(scale)
    if (g.elem_type(x) in _QUANTIZED_BY_IMPORTER or attribute(node, "block_size", 0)
            or rank is None or scale_rank not in (0, 1)):
        return False
    float_type = g.elem_type(scale)
    shifted = g.op("Cast", x, to=float_type)
    zero = g.op("Cast", node.input[2], to=float_type) if len(node.input) > 2 and node.input[
        2] else None
    if scale_rank == 1 and rank > 1:  # per axis: broadcast along `axis`
        along = g.const([-1 if d == (attribute(node, "axis", 1) % rank) else 1
                         for d in range(rank)], np.int64)
        scale = g.op("Reshape", scale, along)
        zero = zero and g.op("Reshape", zero, along)
    if zero:
        shifted = g.op("Sub", shifted, zero)
    g.op("Mul", shifted, scale, out=node.output[0])
    return True


def _cum_prod(node: onnx.NodeProto, g: GraphEditor) -> bool:
    """CumProd, which the importer does not lower: `x` unsqueezed to `[..., i, j, ...]` (n x
    n along the axis), ones where `j` does not count for `i` (after it; exclusive: at it too;
    reversed: before it), multiplied over `j`."""
    x, axis_input = node.input
    rank, axis = g.rank(x), g.constants.get(axis_input)
    if not rank or axis is None:
        return False  # the importer names the op
    axis = int(axis.reshape(-1)[0]) % rank
    shape = named_shape(g.types.get(x))
    if shape is None or not all(isinstance(d, int) for d in shape):
        return False  # the importer lowers no ReduceProd of a dynamic shape
    steps = g.const(np.arange(shape[axis]), np.int64)
    trailing = [1] * (rank - axis - 1)
    i = g.op("Reshape", steps, g.const([-1, 1, *trailing], np.int64))
    j = g.op("Reshape", steps, g.const([1, -1, *trailing], np.int64))
    counts = {(0, 0): "LessOrEqual", (1, 0): "Less", (0, 1): "GreaterOrEqual",
              (1, 1): "Greater"}[attribute(node, "exclusive", 0), attribute(node, "reverse", 0)]
    one = g.const(1, helper.tensor_dtype_to_np_dtype(g.elem_type(x)))
    spread = g.op("Where", g.op(counts, j, i),
                  g.op("Unsqueeze", x, g.const([axis], np.int64)), one)
    g.op("ReduceProd", spread, g.const([axis + 1], np.int64), keepdims=0, out=node.output[0])
    return True


def _compress(node: onnx.NodeProto, g: GraphEditor) -> bool:
    x, condition = node.input
    axis = attribute(node, "axis")
    if axis is None:
        x, axis = g.op("Reshape", x, g.const([-1], np.int64)), 0
    picked = g.squeeze(g.op("NonZero", condition), [0])
    static_result(g, g.op("Gather", x, picked, axis=axis), node.output[0])
    return True


def _dropout(node: onnx.NodeProto, g: GraphEditor) -> bool:
    training = g.constants.get(node.input[2]) if len(node.input) > 2 and node.input[2] else None
    if training is None or not training.any():
        return False  # inference: the importer's lowering is the identity
    ratio = g.constants.get(node.input[1]) if len(node.input) > 1 and node.input[1] else None
    if ratio is None or ratio.any():
        raise UnsupportedConstructError(
            "ONNX Dropout in training mode",
            f"a random mask (ratio {'unknown' if ratio is None else float(ratio)}) in a "
            "compiled model: dync compiles inference; export the model in eval mode",
            node_source(node))
    g.op("Identity", node.input[0], out=node.output[0])
    if len(node.output) > 1 and node.output[1]:
        g.op("Expand", g.const(True, np.bool_), g.op("Shape", node.input[0]),
             out=node.output[1])
    return True


#: The most elements of a DFT's matrix.
DFT_MATRIX_ELEMENTS = 1 << 22


def _dft(node: onnx.NodeProto, g: GraphEditor) -> bool:
    """DFT along an axis of static size with a known length: see the module's docstring."""
    x = node.input[0]
    shape, rank = named_shape(g.types.get(x)), g.rank(x)
    operands = [g.constants.get(name) if name else None for name in node.input[1:]]
    if shape is None or rank is None or any(
            name and value is None for name, value in zip(node.input[1:], operands, strict=False)):
        return False  # the importer names the op
    length = None if operands[:1] in ([], [None]) else int(operands[0].reshape(-1)[0])
    axis = (int(operands[1].reshape(-1)[0]) if len(operands) > 1 and operands[1] is not None
            else attribute(node, "axis", 1 if g.opset < 20 else -2)) % rank
    n, parts = shape[axis], shape[-1]
    if not isinstance(n, int) or parts not in (1, 2) or axis == rank - 1:
        return False
    matrix = _dft_matrix(node, g.opset, n, parts, length)
    if matrix is None:
        return False
    moved = [d for d in range(rank - 1) if d != axis] + [axis, rank - 1]
    t = g.op("Transpose", x, perm=moved)
    rows = g.op("Flatten", t, axis=rank - 2)
    dtype = helper.tensor_dtype_to_np_dtype(g.elem_type(x))
    product = g.op("MatMul", rows, g.const(matrix.T, dtype))
    out_parts = 1 if attribute(node, "inverse", 0) and attribute(node, "onesided", 0) else 2
    leading = g.op("Slice", g.op("Shape", t), g.const([0], np.int64),
                   g.const([rank - 2], np.int64))
    sizes = g.op("Concat", leading,
                 g.const([matrix.shape[0] // out_parts, out_parts], np.int64), axis=0)
    back = [moved.index(d) for d in range(rank)]
    g.op("Transpose", g.op("Reshape", product, sizes), perm=back, out=node.output[0])
    return True


def _dft_matrix(node: onnx.NodeProto, opset: int, n: int, parts: int,
                length: int | None) -> np.ndarray | None:
    """[outputs, n * parts]: each output (frequency or sample, real then imaginary part) of
    `node` along its axis as a linear map of its n * parts inputs, from ONNX's reference run
    on each basis signal; None where the reference refuses the node or the matrix is too
    large."""
    if (n * parts) * max(n, length or 0) * 2 > DFT_MATRIX_ELEMENTS:
        return None  # outputs: at most the length (or n) frequencies, two parts each
    basis = np.eye(n * parts, dtype=np.float64).reshape(n * parts, n, parts)
    probe = onnx.NodeProto()
    probe.CopyFrom(node)
    operands = {} if length is None else {"length": np.array(length, np.int64)}
    inputs = ["x", "" if length is None else "length"]
    if opset >= 20:  # the axis an input
        operands["axis"] = np.array(1, np.int64)
        inputs.append("axis")
    else:
        kept = [a for a in node.attribute if a.name != "axis"]
        del probe.attribute[:]
        probe.attribute.extend([*kept, helper.make_attribute("axis", 1)])
    del probe.input[:]
    probe.input.extend(inputs)
    try:
        out = _reference_run(probe, opset, basis, operands)
    except Exception:  # noqa: BLE001 - the reference refuses it: left to the importer
        return None
    if out.shape[0] != n * parts:
        return None
    return out.reshape(n * parts, -1).T


#: The most elements of an AffineGrid's base grid.
AFFINE_GRID_ELEMENTS = 1 << 22


def _affine_grid(node: onnx.NodeProto, g: GraphEditor) -> bool:
    """AffineGrid of a size known at compile time: the base grid of the output's spatial
    points (homogeneous, as ONNX's reference builds it) times each theta, one MatMul."""
    from onnx.reference.ops.op_affine_grid import construct_original_grid

    theta, size = node.input[0], g.constants.get(node.input[1])
    if size is None or size.size not in (4, 5):
        return False
    spatial = [int(d) for d in size.reshape(-1)[2:]]
    if math.prod(spatial) * (len(spatial) + 1) > AFFINE_GRID_ELEMENTS:
        return False
    base = construct_original_grid(spatial, attribute(node, "align_corners", 0))
    dtype = helper.tensor_dtype_to_np_dtype(g.elem_type(theta))
    rows = g.const(base.reshape(-1, len(spatial) + 1), dtype)
    points = g.op("MatMul", rows, g.op("Transpose", theta, perm=[0, 2, 1]))
    g.op("Reshape", points, g.const([-1, *spatial, len(spatial)], np.int64), out=node.output[0])
    return True


def _deform_conv(node: onnx.NodeProto, g: GraphEditor) -> bool:
    """2-D DeformConv: each tap's sampling point read bilinearly (four GatherElements of the
    flattened input, a corner outside it weighing 0), masked, then a grouped MatMul. Needs the
    input's channels and spatial size, the weights' shape and the offsets' spatial size
    static. (IREE 3.13 computed ONNX `GridSample` wrong on such a computed grid: points one
    pixel outside read the neighbouring row.)"""
    x, w, offset = node.input[:3]
    bias = node.input[3] if len(node.input) > 3 and node.input[3] else None
    mask = node.input[4] if len(node.input) > 4 and node.input[4] else None
    x_shape, w_shape, o_shape = (named_shape(g.types.get(v)) for v in (x, w, offset))
    if x_shape is None or w_shape is None or o_shape is None or len(x_shape) != 4 or not all(
            isinstance(d, int) for d in [*x_shape[1:], *w_shape, *o_shape[1:]]):
        return False
    _, channels, height, width = x_shape
    out_channels, _, kh, kw = w_shape
    out_h, out_w = o_shape[2:]
    groups, offset_groups = attribute(node, "group", 1), attribute(node, "offset_group", 1)
    sh, sw = attribute(node, "strides", [1, 1])
    dh, dw = attribute(node, "dilations", [1, 1])
    top, left = attribute(node, "pads", [0, 0, 0, 0])[:2]
    taps, points = kh * kw, out_h * out_w
    per_offset_group = channels // offset_groups
    dtype = helper.tensor_dtype_to_np_dtype(g.elem_type(x))
    # Where each tap of each output point reads without offsets: [taps, out_h, out_w].
    ky, kx = np.divmod(np.arange(taps), kw)
    base_y = (np.arange(out_h) * sh - top)[None, :, None] + (ky * dh)[:, None, None]
    base_x = (np.arange(out_w) * sw - left)[None, None, :] + (kx * dw)[:, None, None]
    moved = g.op("Reshape", offset, g.const([-1, offset_groups, taps, 2, points], np.int64))
    row_of_points = g.const([-1, offset_groups, 1, taps * points], np.int64)

    def position(part: int, base: np.ndarray) -> tuple[str, str]:
        """(the point's floor along one axis, its distance past it): [n, og, 1, taps*points]."""
        along = g.op("Reshape", g.op("Gather", moved, g.const(part, np.int64), axis=3),
                     row_of_points)
        at = g.op("Add", along, g.const(np.broadcast_to(base, (taps, out_h, out_w)).reshape(-1),
                                        dtype))
        floor = g.op("Floor", at)
        return floor, g.op("Sub", at, floor)

    (y0, fy), (x0, fx) = position(0, base_y), position(1, base_x)
    flat = g.op("Reshape", x, g.const([-1, offset_groups, per_offset_group, height * width],
                                      np.int64))
    spread = g.const([1, 1, per_offset_group, taps * points], np.int64)
    one = g.const(1.0, dtype)
    sampled = None
    for dy, dx in ((0, 0), (0, 1), (1, 0), (1, 1)):
        yy = g.op("Add", y0, g.const(float(dy), dtype)) if dy else y0
        xx = g.op("Add", x0, g.const(float(dx), dtype)) if dx else x0
        weight = g.op("Mul", fy if dy else g.op("Sub", one, fy),
                      fx if dx else g.op("Sub", one, fx))
        inside = g.op("And", g.op("And", g.op("GreaterOrEqual", yy, g.const(0.0, dtype)),
                                  g.op("Less", yy, g.const(float(height), dtype))),
                      g.op("And", g.op("GreaterOrEqual", xx, g.const(0.0, dtype)),
                           g.op("Less", xx, g.const(float(width), dtype))))
        weight = g.op("Where", inside, weight, g.const(0.0, dtype))
        row = g.op("Clip", yy, g.const(0.0, dtype), g.const(float(height - 1), dtype))
        column = g.op("Clip", xx, g.const(0.0, dtype), g.const(float(width - 1), dtype))
        index = g.op("Cast", g.op("Add", g.op("Mul", row, g.const(float(width), dtype)), column),
                     to=onnx.TensorProto.INT64)
        corner = g.op("Mul", g.op("GatherElements", flat, g.op("Expand", index, spread), axis=3),
                      weight)
        sampled = corner if sampled is None else g.op("Add", sampled, corner)
    # [n, offset groups, channels per offset group, taps, points], masked per tap and point.
    sampled = g.op("Reshape", sampled, g.const(
        [-1, offset_groups, per_offset_group, taps, points], np.int64))
    if mask is not None:
        sampled = g.op("Mul", sampled, g.op("Reshape", mask, g.const(
            [-1, offset_groups, 1, taps, points], np.int64)))
    columns = g.op("Reshape", sampled, g.const(
        [-1, groups, channels // groups * taps, points], np.int64))
    weights = g.op("Reshape", w, g.const(
        [groups, out_channels // groups, channels // groups * taps], np.int64))
    product = g.op("Reshape", g.op("MatMul", weights, columns), g.const(
        [-1, out_channels, out_h, out_w], np.int64))
    if bias is None:
        g.op("Identity", product, out=node.output[0])
    else:
        g.op("Add", product, g.op("Reshape", bias, g.const([1, -1, 1, 1], np.int64)),
             out=node.output[0])
    return True


#: The most elements of an input whose nearest Resize is found by running ONNX's reference.
PROBED_ELEMENTS = 1 << 22


def unlowered_nearest_resize(node: onnx.NodeProto) -> bool:
    """Whether `node` is a Resize in nearest mode with an attribute the importer does not
    lower."""
    return node.op_type == "Resize" and attribute(node, "mode", "nearest") == "nearest" and bool(
        attribute(node, "axes") or attribute(node, "coordinate_transformation_mode") ==
        "align_corners" or attribute(node, "keep_aspect_ratio_policy", "stretch") != "stretch")


def nearest_resize(node: onnx.NodeProto, g: GraphEditor) -> bool:
    """Resize in nearest mode that the importer does not lower (see the module's docstring);
    False where it is left to the importer."""
    if g.opset < 18 or not unlowered_nearest_resize(node):
        return False
    x, shape = node.input[0], named_shape(g.types.get(node.input[0]))
    operands = {name: g.constants.get(name) for name in node.input[1:] if name}
    if (shape is None or not all(isinstance(d, int) for d in shape)
            or any(v is None for v in operands.values()) or math.prod(shape) > PROBED_ELEMENTS
            or attribute(node, "coordinate_transformation_mode") == "tf_crop_and_resize"):
        return False
    gathers = []
    for axis, size in enumerate(shape):
        along = np.arange(size, dtype=np.float64).reshape([-1 if d == axis else 1
                                                           for d in range(len(shape))])
        try:
            read = _reference_run(node, g.opset, np.broadcast_to(along, shape).copy(), operands)
        except Exception:  # noqa: BLE001 - the reference refuses it: left to the importer
            return False
        indices = read[tuple(slice(None) if d == axis else 0 for d in range(len(shape)))]
        if not (indices.shape == (size,) and (indices == np.arange(size)).all()):
            gathers.append((axis, indices.astype(np.int64)))
    gathered_along(g, x, gathers, node.output[0])
    return True


def _reference_run(node: onnx.NodeProto, opset: int, x: np.ndarray,
                   operands: dict[str, np.ndarray]) -> np.ndarray:
    """`node` alone run by ONNX's reference evaluator on `x`, its other operands `operands`."""
    from onnx.reference import ReferenceEvaluator

    probe = onnx.NodeProto()
    probe.CopyFrom(node)
    probe.input[0], probe.output[0] = "x", "y"
    for a in probe.attribute:
        if a.name == "axes":  # the reference takes no negative ones
            a.ints[:] = [d % x.ndim for d in a.ints]
    graph = helper.make_graph(
        [probe], "probe", [helper.make_tensor_value_info("x", onnx.TensorProto.DOUBLE, x.shape)],
        [helper.make_tensor_value_info("y", onnx.TensorProto.DOUBLE, None)],
        [onnx.numpy_helper.from_array(v, name) for name, v in operands.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    return ReferenceEvaluator(model).run(None, {"x": x})[0]


RULES = {"ConvInteger": _conv_integer, "DequantizeLinear": _dequantize_linear,
         "ReverseSequence": _reverse_sequence, "NonMaxSuppression": _non_max_suppression,
         "CumProd": _cum_prod, "Compress": _compress, "Dropout": _dropout, "DFT": _dft,
         "AffineGrid": _affine_grid, "DeformConv": _deform_conv}
