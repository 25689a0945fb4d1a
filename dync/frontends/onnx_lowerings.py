"""ONNX nodes IREE's importer does not lower (or whose lowering IREE 3.13 cannot compile or
run), rewritten before import into ONNX ops that it does, with the spec's values:

- `ConvInteger` with pads (padded first with the input's zero point) or with a weight zero
  point per output channel (subtracted as `z * conv(x', ones)` in int32);
- `DequantizeLinear` of 16-bit integers, or in blocks: `(x - zero point) * scale` in the
  scale's type; `QuantizeLinear` to uint16, or in blocks: `x / scale` rounded half to even,
  plus the zero point, saturated (a block's scale and zero point repeated along the axis);
- `ReverseSequence`: a GatherElements along the time axis (IREE 3.13 fails to compile its own
  lowering: a vector.gather left unconverted);
- `NonMaxSuppression` over several batches or classes (IREE 3.13 fails to compile the
  lowering): one per (batch, class), concatenated; with a score threshold above the least
  score, which the lowering rejects at run time: run without it, then the boxes not above
  it dropped;
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
- `TensorScatter` (not lowered): a ScatterElements of the update along the sequence axis at
  each batch's write index on (modulo the cache's length in circular mode).
- `Unique` (IREE 3.13 fails to compile the lowering): ascending TopKs, none of which needs
  ties kept in order; slices along an axis ranked column by column (see `_unique`).
- `LpPool` with dilations or a SAME auto_pad (not lowered): a depthwise Conv of ones over
  `|x|^p`, then the p-th root.
- `ConvTranspose` in 2-D with equal strides past 1 and a constant weight: per group one Conv
  over its input whose outputs are the phases of each output channel, then DepthToSpace (the
  lowering convolves the input with zeros inserted between its pixels); others in groups
  (IREE 3.13 fails to compile the lowering): one per group, concatenated; with a SAME
  auto_pad (not lowered): the pads the spec derives, explicit.
- `Resize` in linear or cubic mode with antialias, cubic `exclude_outside` or
  `tf_crop_and_resize` (not lowered), over static sizes with known operands: a MatMul by
  each resized axis's interpolation matrix, found by running the reference on an identity.
- `GridSample` in cubic mode or over 3 or more spatial dims (no lowering): the neighbours
  gathered from the flattened image and weighted as ONNX's reference does.
- `MaxUnpool` over static spatial sizes (IREE 3.13 does not legalize the lowering's
  `aten.max_unpool2d`, and the importer lowers none with an output shape): a ScatterElements
  of the values to their indices in flat zeros of the shape the spec derives, padded at the
  end up to the output shape where one is given (as ONNX's reference does).
- `RoiAlign` with a fixed sampling ratio (IREE 3.13 does not legalize the lowering's
  `torchvision.roi_align`): each ROI's sample points computed as ONNX's reference does, their
  four neighbours gathered from the ROI's image and weighted, averaged (or the greatest
  taken) over each bin.
- `Col2Im` with known image and block shapes (IREE 3.13 fails to compile the lowering): each
  column entry's output position computed at compile time, summed into place by an
  additive ScatterElements.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import numpy as np
import onnx
from onnx import helper, numpy_helper

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
    """NonMaxSuppression over several batches or classes (static counts), which IREE 3.13
    fails to compile: one per (batch, class), their selections concatenated in ONNX's order
    with their batch and class put in; with a score threshold, which the lowering rejects at
    run time unless it is at most the least score: run without it, then drop the selected
    boxes whose score is not above it. Equivalent, since boxes are taken in falling score
    order: one under the threshold comes after every box over it, so it neither suppresses
    nor displaces one."""
    shape = named_shape(g.types.get(node.input[1]))
    if shape is not None and all(isinstance(d, int) for d in shape[:2]) and shape[0] * shape[1] > 1:
        return _per_batch_and_class(node, g, *shape[:2])
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


def _per_batch_and_class(node: onnx.NodeProto, g: GraphEditor, batches: int,
                         classes: int) -> bool:
    """NonMaxSuppression as one per (batch, class) (see `_non_max_suppression`); each is
    rewritten in turn (`g.expanded`) for its score threshold."""
    selections = []
    for b, c in itertools.product(range(batches), range(classes)):
        boxes = g.op("Slice", node.input[0], g.const([b], np.int64), g.const([b + 1], np.int64),
                     g.const([0], np.int64))
        scores = g.op("Slice", node.input[1], g.const([b, c], np.int64),
                      g.const([b + 1, c + 1], np.int64), g.const([0, 1], np.int64))
        one = onnx.NodeProto()
        one.CopyFrom(node)
        one.name = f"{node.name}_{b}_{c}" if node.name else ""
        one.input[0], one.input[1] = boxes, scores
        one.output[0] = g.fresh(f"{node.output[0]}_{b}_{c}")
        g.expanded.append(one)
        g.declared.append(helper.make_tensor_value_info(one.output[0], onnx.TensorProto.INT64,
                                                        [None, 3]))
        selections.append((one.output[0], g.const([[b, c, 0]], np.int64)))
    placed = [g.fresh(f"{selected}_placed") for selected, _ in selections]
    g.expanded.extend(helper.make_node("Add", [selected, at], [name])
                      for (selected, at), name in zip(selections, placed, strict=True))
    # Into a dynamic value first: the model's output may be declared with the static count.
    every = g.fresh(f"{node.output[0]}_concatenated")
    g.declared.append(helper.make_tensor_value_info(every, onnx.TensorProto.INT64, [None, 3]))
    g.expanded += [helper.make_node("Concat", placed, [every], axis=0),
                   helper.make_node("Identity", [every], [node.output[0]])]
    return True


def _dequantize_linear(node: onnx.NodeProto, g: GraphEditor) -> bool:
    """DequantizeLinear of a 16-bit integer, or in blocks (`block_size`), which the importer
    does not lower: (x - zero point) * scale in the scale's float type, the scale per tensor,
    per axis or per block."""
    x, scale = node.input[0], node.input[1]
    if g.elem_type(x) in _QUANTIZED_BY_IMPORTER and not attribute(node, "block_size", 0):
        return False
    float_type = g.elem_type(scale)
    zero = g.op("Cast", node.input[2], to=float_type) if len(node.input) > 2 and node.input[
        2] else None
    parameters = _quantization_parameters(node, g, [scale, zero])
    if parameters is None:
        return False
    scale, zero = parameters
    shifted = g.op("Cast", x, to=float_type)
    if zero:
        shifted = g.op("Sub", shifted, zero)
    g.op("Mul", shifted, scale, out=node.output[0])
    return True


def _quantize_linear(node: onnx.NodeProto, g: GraphEditor) -> bool:
    """QuantizeLinear to uint16, or in blocks (`block_size`), which the importer does not
    lower: `x / scale` rounded half to even, plus the zero point, saturated to the output
    type's range, in `x`'s float type (exact for 16-bit results), the scale per tensor, per
    axis or per block."""
    x, scale = node.input[0], node.input[1]
    zero = node.input[2] if len(node.input) > 2 and node.input[2] else None
    out_type = g.elem_type(zero) if zero else attribute(node, "output_dtype", 0) or \
        onnx.TensorProto.UINT8
    if out_type not in _SATURATED or (out_type != onnx.TensorProto.UINT16
                                      and not attribute(node, "block_size", 0)):
        return False
    float_type = g.elem_type(x)
    parameters = _quantization_parameters(node, g, [
        g.op("Cast", scale, to=float_type), zero and g.op("Cast", zero, to=float_type)])
    if parameters is None:
        return False
    scale, zero = parameters
    value = g.op("Round", g.op("Div", x, scale))
    if zero:
        value = g.op("Add", value, zero)
    dtype = helper.tensor_dtype_to_np_dtype(float_type)
    low, high = (g.const(v, dtype) for v in _SATURATED[out_type])
    g.op("Cast", g.op("Clip", value, low, high), to=out_type, out=node.output[0])
    return True


# The integer types QuantizeLinear is rewritten for, and their ranges.
_SATURATED = {t: (np.iinfo(helper.tensor_dtype_to_np_dtype(t)).min,
                  np.iinfo(helper.tensor_dtype_to_np_dtype(t)).max)
              for t in (onnx.TensorProto.INT8, onnx.TensorProto.UINT8, onnx.TensorProto.INT16,
                        onnx.TensorProto.UINT16)}


def _quantization_parameters(node: onnx.NodeProto, g: GraphEditor,
                             values: list[str | None]) -> list[str | None] | None:
    """A (De)QuantizeLinear's scale and zero point (`values`, None where absent) shaped to
    broadcast against its input: as they are per tensor, along `axis` per axis, each
    repeated `block_size` times along `axis` (the last block cut to the input) per block.
    None where the input's rank, or for blocks its shape, is unknown."""
    x = node.input[0]
    rank, scale_rank = g.rank(x), g.rank(node.input[1])
    if rank is None or scale_rank is None:
        return None
    axis = attribute(node, "axis", 1) % max(rank, 1)
    block = attribute(node, "block_size", 0)
    if not block:
        if scale_rank == 0 or rank <= 1:
            return values
        if scale_rank != 1:
            return None
        along = g.const([-1 if d == axis else 1 for d in range(rank)], np.int64)
        return [v and g.op("Reshape", v, along) for v in values]
    shape = named_shape(g.types.get(x))
    if shape is None or not all(isinstance(d, int) for d in shape) or scale_rank != rank:
        return None
    blocks = -(-shape[axis] // block)
    repeated = [*shape[:axis], blocks, block, *shape[axis + 1:]]
    merged = [*shape[:axis], blocks * block, *shape[axis + 1:]]

    def spread(value: str) -> str:
        grown = g.op("Reshape", g.op("Expand", g.unsqueeze(value, [axis + 1]),
                                     g.const(repeated, np.int64)), g.const(merged, np.int64))
        return g.op("Slice", grown, g.const([0], np.int64), g.const([shape[axis]], np.int64),
                    g.const([axis], np.int64))

    return [v and spread(v) for v in values]


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
    leading = g.sizes(t, 0, rank - 2)
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


def unlowered_interpolating_resize(node: onnx.NodeProto) -> bool:
    """Whether `node` is a Resize in linear or cubic mode with an attribute the importer does
    not lower (antialias, tf_crop_and_resize, cubic exclude_outside)."""
    mode = attribute(node, "mode", "nearest")
    transform = attribute(node, "coordinate_transformation_mode", "half_pixel")
    return node.op_type == "Resize" and mode in ("linear", "cubic") and bool(
        attribute(node, "antialias", 0) or transform == "tf_crop_and_resize"
        or (mode == "cubic" and attribute(node, "exclude_outside", 0)))


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


def interpolating_resize(node: onnx.NodeProto, g: GraphEditor) -> bool:
    """Resize in linear or cubic mode that the importer does not lower (antialias, cubic with
    exclude_outside, tf_crop_and_resize), over static sizes with its roi, scales or sizes
    known: along each resized axis, a MatMul by the interpolation's matrix (each output point
    a weighted sum of the input's, found by running ONNX's reference on an identity along
    that axis alone: the interpolation is separable), then the points whose source falls
    outside the roi set to `extrapolation_value`. False where it is left to the importer."""
    transform = attribute(node, "coordinate_transformation_mode", "half_pixel")
    if not unlowered_interpolating_resize(node) or transform == "align_corners":
        return False
    x, shape = node.input[0], named_shape(g.types.get(node.input[0]))
    named = dict(zip(("roi", "scales", "sizes"), node.input[1:], strict=False))
    operands = {k: g.constants.get(v) for k, v in named.items() if v}
    if (shape is None or any(v is None for v in operands.values()) or g.opset < 11
            or attribute(node, "keep_aspect_ratio_policy", "stretch") != "stretch"):
        return False
    rank = len(shape)
    axes = [a % rank for a in attribute(node, "axes", list(range(rank)))]
    dtype = helper.tensor_dtype_to_np_dtype(g.elem_type(x))
    y, outside = x, []
    for k, axis in enumerate(axes):
        if not isinstance(shape[axis], int):
            if _kept(operands, k, len(axes), transform):
                continue  # a dynamic batch, say
            return False
        matrix, extrapolated = _interpolation(node, shape[axis], k, len(axes), operands)
        if matrix is None:
            return False
        if matrix.shape[0] == matrix.shape[1] and np.allclose(matrix, np.eye(len(matrix))):
            continue
        moved = [d for d in range(rank) if d != axis] + [axis]
        product = g.op("MatMul", g.op("Transpose", y, perm=moved), g.const(matrix.T, dtype))
        y = g.op("Transpose", product, perm=[moved.index(d) for d in range(rank)])
        if extrapolated.any():
            outside.append(g.const(extrapolated.reshape(
                [-1 if d == axis else 1 for d in range(rank)]), np.bool_))
    if outside:
        mask = outside[0]
        for more in outside[1:]:
            mask = g.op("Or", mask, more)
        y = g.op("Where", mask, g.const(attribute(node, "extrapolation_value", 0.0), dtype), y)
    g.op("Identity", y, out=node.output[0])
    return True


def _kept(operands: dict[str, np.ndarray], k: int, count: int, transform: str) -> bool:
    """Whether the `k`-th of `count` resized axes keeps its points: a scale of 1, no sizes,
    and (cropping) the whole axis as its roi."""
    scales, roi = operands.get("scales"), operands.get("roi")
    if operands.get("sizes") is not None and operands["sizes"].size:
        return False
    if scales is None or scales.reshape(-1)[k] != 1:
        return False
    return transform != "tf_crop_and_resize" or (
        roi is not None and roi.size and tuple(roi.reshape(2, count)[:, k]) == (0, 1))


def _interpolation(node: onnx.NodeProto, size: int, k: int, count: int,
                   operands: dict[str, np.ndarray]) -> tuple[np.ndarray | None, np.ndarray]:
    """The resize of the `k`-th of `count` resized axes (`size` long) as a matrix [out, size],
    and which outputs are extrapolated: ONNX's reference run on an identity (and on zeros,
    extrapolating ones) resized along that axis alone, the node's attributes kept."""
    if size * size > PROBED_ELEMENTS:
        return None, np.zeros(0, bool)
    probe = onnx.NodeProto()
    probe.CopyFrom(node)
    del probe.input[:], probe.attribute[:]
    probe.attribute.extend(a for a in node.attribute
                           if a.name not in ("axes", "extrapolation_value"))
    probe.attribute.append(helper.make_attribute("axes", [0]))
    given = {}
    if "roi" in operands and operands["roi"].size:
        given["roi"] = operands["roi"].reshape(2, count)[:, k].astype(np.float32)
    for name in ("scales", "sizes"):
        if name in operands and operands[name].size:
            given[name] = operands[name].reshape(-1)[k:k + 1]
    probe.input.extend(["x", *(n if n in given else "" for n in ("roi", "scales", "sizes"))])
    while probe.input[-1] == "":
        del probe.input[-1]
    try:
        matrix = _reference_run(probe, 19, np.eye(size), given)
        probe.attribute.append(helper.make_attribute("extrapolation_value", 1.0))
        extrapolated = _reference_run(probe, 19, np.zeros((size, size)), given)[:, 0] == 1
    except Exception:  # noqa: BLE001 - the reference refuses it: left to the importer
        return None, np.zeros(0, bool)
    return matrix, extrapolated


def grid_sample_by_gathers(node: onnx.NodeProto, g: GraphEditor,
                           reflected: Callable[[GraphEditor, str, str, str], str]) -> bool:
    """GridSample that has no lowering (cubic mode; 3 or more spatial dims), as ONNX's
    reference computes it: each grid point denormalized (rounded half to even in nearest
    mode) and, outside the image, clamped or reflected into it; then the 1, 2 or 4 neighbours
    along each spatial dim (nearest, linear, cubic with a = -0.75), each neighbour's index
    read through the padding (zeros: weighing 0; border: clamped; reflection: reflected and
    truncated), gathered from the flattened image and summed with the product of the dims'
    weights. `reflected(g, x, low, high)` reflects into [low, high]."""
    x, grid = node.input[0], node.input[1]
    rank = g.rank(x)
    mode = {"bilinear": "linear", "bicubic": "cubic"}.get(attribute(node, "mode", "linear"),
                                                          attribute(node, "mode", "linear"))
    padding, align = attribute(node, "padding_mode", "zeros"), attribute(node, "align_corners", 0)
    if rank is None or rank < 3 or mode not in ("nearest", "linear", "cubic"):
        return False
    spatial = rank - 2
    dtype = helper.tensor_dtype_to_np_dtype(g.elem_type(grid))
    int64 = onnx.TensorProto.INT64

    def c(value) -> str:
        return g.const(value, dtype)

    shape = g.op("Shape", x)
    sizes = [g.op("Cast", g.op("Gather", shape, g.const(2 + d, np.int64)), to=g.elem_type(grid))
             for d in range(spatial)]
    lows = [c(0.0 if align else -0.5)] * spatial
    highs = [g.op("Sub", size, c(1.0 if align else 0.5)) for size in sizes]
    points = []
    for d in range(spatial):
        n = g.op("Gather", grid, g.const(spatial - 1 - d, np.int64), axis=-1)  # [N, *out]
        if align:
            p = g.op("Mul", g.op("Div", g.op("Add", n, c(1)), c(2)), g.op("Sub", sizes[d], c(1)))
        else:
            p = g.op("Div", g.op("Sub", g.op("Mul", g.op("Add", n, c(1)), sizes[d]), c(1)), c(2))
        if mode == "nearest":
            p = g.op("Round", p)
        if padding == "border":  # clamped only when past the borders, as the reference does
            clamped = g.op("Min", g.op("Max", p, c(0)), g.op("Sub", sizes[d], c(1)))
            past = g.op("Or", g.op("Less", p, lows[d]), g.op("Greater", p, highs[d]))
            p = g.op("Where", past, clamped, p)
        elif padding == "reflection":
            p = reflected(g, p, lows[d], highs[d])
        points.append(p)
    taps = {"nearest": [0], "linear": [0, 1], "cubic": [-1, 0, 1, 2]}[mode]
    reads = []  # per dim: [(index, weight or None)] per tap
    for d, p in enumerate(points):
        if mode == "nearest":
            base, weights = p, [None]
        else:
            base = g.op("Floor", p)
            t = g.op("Sub", p, base)
            weights = [g.op("Sub", c(1), t), t] if mode == "linear" else _keys_cubic(g, t, dtype)
        last = g.op("Sub", sizes[d], c(1))
        per_tap = []
        for offset, weight in zip(taps, weights, strict=True):
            i = g.op("Add", base, c(offset)) if offset else base
            if padding == "zeros":
                inside = g.op("And", g.op("GreaterOrEqual", i, c(0)), g.op("LessOrEqual", i, last))
                mask = g.op("Cast", inside, to=g.elem_type(grid))
                weight = mask if weight is None else g.op("Mul", weight, mask)
            elif padding == "reflection":
                i = reflected(g, i, lows[d], highs[d])
            i = g.op("Min", g.op("Max", i, c(0)), last)  # border; elsewhere only for safety
            per_tap.append((g.op("Cast", i, to=int64), weight))
        reads.append(per_tap)
    batch_channels = g.op("Slice", shape, g.const([0], np.int64), g.const([2], np.int64))
    flat = g.op("Reshape", x, g.op("Concat", batch_channels, g.const([-1], np.int64), axis=0))
    out_shape = g.op("Shape", points[0])  # [N, *out]
    rows = g.const([0, 1, -1], np.int64)  # [N, 1, points]
    channels = g.op("Concat", batch_channels, g.const([1], np.int64), axis=0)  # broadcast
    strides = [None] * spatial
    for d in reversed(range(spatial)):
        later = [g.op("Gather", shape, g.const(2 + e, np.int64)) for e in range(d + 1, spatial)]
        stride = later[0] if later else None
        for more in later[1:]:
            stride = g.op("Mul", stride, more)
        strides[d] = stride
    total = None
    for combination in itertools.product(*reads):
        index, weight = None, None
        for d, (i, w) in enumerate(combination):
            term = g.op("Mul", i, strides[d]) if strides[d] is not None else i
            index = term if index is None else g.op("Add", index, term)
            weight = w if weight is None else (weight if w is None else g.op("Mul", weight, w))
        where = g.op("Expand", g.op("Reshape", index, rows), channels)
        value = g.op("GatherElements", flat, where, axis=2)
        if weight is not None:
            value = g.op("Mul", value, g.op("Reshape", g.op("Cast", weight, to=g.elem_type(x)),
                                            rows))
        total = value if total is None else g.op("Add", total, value)
    out = g.op("Concat", batch_channels, g.op("Slice", out_shape, g.const([1], np.int64),
                                              g.const([1 + spatial], np.int64)), axis=0)
    g.op("Reshape", total, out, out=node.output[0])
    return True


def _keys_cubic(g: GraphEditor, t: str, dtype) -> list[str]:
    """The weights of the 4 cubic taps at offsets -1, 0, 1, 2 for a fraction `t` in [0, 1)
    (Keys' convolution, a = -0.75, as ONNX's GridSample reference writes them)."""
    a = -0.75

    def c(value: float) -> str:
        return g.const(value, dtype)

    def far(u: str) -> str:  # ((a u - 5a) u + 8a) u - 4a, for u in [1, 2]
        return g.op("Sub", g.op("Mul", g.op("Add", g.op("Mul", g.op("Sub", g.op("Mul", c(a), u),
                                                                      c(5 * a)), u), c(8 * a)), u),
                    c(4 * a))

    def near(u: str) -> str:  # ((a + 2) u - (a + 3)) u u + 1, for u in [0, 1]
        return g.op("Add", g.op("Mul", g.op("Mul", g.op("Sub", g.op("Mul", c(a + 2), u),
                                                         c(a + 3)), u), u), c(1))

    one_minus = g.op("Sub", c(1), t)
    return [far(g.op("Add", t, c(1))), near(t), near(one_minus),
            far(g.op("Add", one_minus, c(1)))]


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


def _tensor_scatter(node: onnx.NodeProto, g: GraphEditor) -> bool:
    """TensorScatter (a KV-cache update): a ScatterElements along the sequence axis, each
    batch's update written from its write index on (modulo the cache's length in circular
    mode), the indices broadcast to the update's shape."""
    cache, update = node.input[0], node.input[1]
    rank = g.rank(cache)
    if rank is None:
        return False
    axis = attribute(node, "axis", -2) % rank

    def along(at: int) -> str:
        return g.const([-1 if d == at else 1 for d in range(rank)], np.int64)

    steps = g.op("Reshape", g.op("Range", g.const(0, np.int64), g.size(update, axis),
                                 g.const(1, np.int64)), along(axis))
    if len(node.input) > 2 and node.input[2]:
        steps = g.op("Add", g.op("Reshape", node.input[2], along(0)), steps)
    if attribute(node, "mode", "linear") == "circular":
        steps = g.op("Mod", steps, g.size(cache, axis))
    g.op("ScatterElements", cache, g.op("Expand", steps, g.op("Shape", update)), update,
         axis=axis, out=node.output[0])
    return True


class _Runs:
    """Sorting helpers over vectors of one length `n` (a 1-D int64 shape), for `_unique`. Each
    sort is an ascending TopK, whose order among equal values is never relied on."""

    def __init__(self, g: GraphEditor, n: str):
        self.g, self.n = g, n
        self.count = g.squeeze(n, [0])

    def ascending(self, values: str) -> tuple[str, str]:
        out = (self.g.fresh("dync_sorted"), self.g.fresh("dync_order"))
        self.g.emitted.append(helper.make_node("TopK", [values, self.n], list(out), axis=0,
                                               largest=0, sorted=1))
        return out

    def starts(self, values: str) -> str:
        """Where each element differs from the one before it (the first always)."""
        g = self.g
        previous = g.op("Concat", g.op("Slice", values, g.const([0], np.int64),
                                       g.const([1], np.int64)), values, axis=0)
        head = g.op("Slice", previous, g.const([0], np.int64), self.n)
        first = g.op("Equal", self.positions(), g.const(0, np.int64))
        return g.op("Or", g.op("Not", g.op("Equal", values, head)), first)

    def positions(self) -> str:
        return self.g.op("Range", self.g.const(0, np.int64), self.count, self.g.const(1, np.int64))

    def zeros(self, shape: str) -> str:
        return self.g.op("ConstantOfShape", shape, value=helper.make_tensor(
            "zero", onnx.TensorProto.INT64, [1], [0]))

    def dense_ranks(self, keys: str) -> str:
        """Each element's rank among the distinct values of `keys`: the values sorted, each
        run numbered, the numbers scattered back through the sort's permutation."""
        g = self.g
        values, permutation = self.ascending(keys)
        run = g.op("Sub", g.op("CumSum", g.op("Cast", self.starts(values),
                                              to=onnx.TensorProto.INT64),
                               g.const(0, np.int64)), g.const(1, np.int64))
        return g.op("ScatterElements", self.zeros(self.n), permutation, run, axis=0)


def _unique(node: onnx.NodeProto, g: GraphEditor) -> bool:
    """Unique (IREE 3.13 fails to compile the lowering, and the one along an axis has a
    scatter IREE does not legalize). Each element's (slice's) dense rank among the distinct
    values is `inverse_indices`: along an axis, slices ranked lexicographically, column by
    column (`rank * n + column rank`, ranked again). Then the distinct keys `rank * n +
    position` sorted give each run its first position and its count. Unsorted output: the
    runs in the order their first positions are found (marked, then NonZero). An axis needs
    the slices' size known (one pair of sorts per element of a slice), at most 64."""
    x = node.input[0]
    axis = attribute(node, "axis")
    if axis is None:
        x = g.op("Reshape", x, g.const([-1], np.int64))
        axis = 0
        rows = x
    else:
        shape = named_shape(g.types.get(x))
        if shape is None:
            return False
        axis %= len(shape)
        others = [d for i, d in enumerate(shape) if i != axis]
        if not all(isinstance(d, int) for d in others) or not 1 <= math.prod(others) <= 64:
            return False
        order = [axis] + [i for i in range(len(shape)) if i != axis]
        rows = g.op("Reshape", g.op("Transpose", x, perm=order),
                    g.const([-1, math.prod(others)], np.int64))
    runs = _Runs(g, g.sizes(rows, 0, 1))

    def comparable(values: str) -> str:
        if g.elem_type(node.input[0]) in (onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16):
            return g.op("Cast", values, to=onnx.TensorProto.FLOAT)  # exact, order-keeping
        return values

    if rows == x:
        inverse = runs.dense_ranks(comparable(x))
    else:
        def column(c: int) -> str:
            return runs.dense_ranks(comparable(g.op("Gather", rows, g.const(c, np.int64),
                                                    axis=1)))
        inverse = column(0)
        for c in range(1, math.prod(others)):
            inverse = runs.dense_ranks(g.op("Add", g.op("Mul", inverse, runs.count), column(c)))
    n = runs.count
    distinct, _ = runs.ascending(g.op("Add", g.op("Mul", inverse, n), runs.positions()))
    first_of_run = g.squeeze(g.op("NonZero", runs.starts(g.op("Div", distinct, n))), [0])
    firsts = g.op("Mod", g.op("Gather", distinct, first_of_run), n)
    counts = g.op("Sub", g.op("Concat", g.op("Slice", first_of_run, g.const([1], np.int64),
                                             g.const([np.iinfo(np.int64).max], np.int64)),
                              runs.n, axis=0), first_of_run)
    outputs = list(node.output) + [""] * (4 - len(node.output))
    if attribute(node, "sorted", 1):
        results = (g.op("Gather", x, firsts, axis=axis), firsts, inverse, counts)
    else:
        # First occurrences in order of position: marked where they are, then found in order.
        marks = g.op("ScatterElements", runs.zeros(runs.n), firsts, g.op(
            "ConstantOfShape", g.op("Shape", firsts), value=helper.make_tensor(
                "one", onnx.TensorProto.INT64, [1], [1])), axis=0)
        reordered = g.squeeze(g.op("NonZero", marks), [0])
        rank_of_run = g.op("Gather", g.op("Sub", g.op("CumSum", marks, g.const(0, np.int64)),
                                          g.const(1, np.int64)), firsts)
        results = (g.op("Gather", x, reordered, axis=axis), reordered,
                   g.op("Gather", rank_of_run, inverse),
                   g.op("Gather", counts, g.op("Gather", inverse, reordered)))
    for value, name in zip(results, outputs, strict=True):
        if name:
            g.op("Identity", value, out=name)
    return True


def _lp_pool(node: onnx.NodeProto, g: GraphEditor) -> bool:
    """LpPool with dilations or a SAME auto_pad (not lowered): `|x|^p` summed over each window
    by a depthwise Conv of ones (which pads, strides and dilates as pooling does: zeros
    padded add nothing), then the p-th root. Needs the channel count known."""
    if attribute(node, "ceil_mode", 0) or not (
            attribute(node, "auto_pad", "NOTSET").startswith("SAME")
            or any(d > 1 for d in attribute(node, "dilations", []))):
        return False
    shape = named_shape(g.types.get(node.input[0]))
    if shape is None or not isinstance(shape[1], int):
        return False
    dtype = helper.tensor_dtype_to_np_dtype(g.elem_type(node.input[0]))
    kernel, p = attribute(node, "kernel_shape"), attribute(node, "p", 2)
    ones = g.const(np.ones([shape[1], 1, *kernel], dtype), dtype)
    powered = g.op("Pow", g.op("Abs", node.input[0]), g.const(p, dtype))
    conv = {a.name: helper.get_attribute_value(a) for a in node.attribute
            if a.name in ("auto_pad", "pads", "strides", "dilations", "kernel_shape")}
    summed = g.op("Conv", powered, ones, group=shape[1], **conv)
    g.op("Pow", summed, g.const(1.0 / p, dtype), out=node.output[0])
    return True


def _max_unpool(node: onnx.NodeProto, g: GraphEditor) -> bool:
    """MaxUnpool over static spatial sizes (IREE 3.13 does not legalize the lowering's
    `aten.max_unpool2d`; the importer lowers none with an output shape): each value scattered
    to its index (MaxPool's indices count over the whole tensor) in flat zeros of the shape
    the spec derives, `(in - 1) * stride + kernel - pads` along each spatial axis; with an
    output shape given, that result padded with zeros at the end of each axis up to it, as
    ONNX's reference does."""
    x, indices = node.input[:2]
    shape = named_shape(g.types.get(x))
    if shape is None or not all(isinstance(d, int) for d in shape[2:]):
        return False
    kernel = attribute(node, "kernel_shape")
    spatial = len(kernel)
    strides = attribute(node, "strides", [1] * spatial)
    pads = attribute(node, "pads", [0] * 2 * spatial)
    sizes = [(n - 1) * s + k - pads[i] - pads[spatial + i]
             for i, (n, s, k) in enumerate(zip(shape[2:], strides, kernel, strict=True))]
    leading = g.sizes(x, 0, 2)
    inferred = g.op("Concat", leading, g.const(sizes, np.int64), axis=0)
    flat = g.const([-1], np.int64)
    zero = numpy_helper.from_array(np.zeros(1, helper.tensor_dtype_to_np_dtype(g.elem_type(x))))
    zeros = g.op("Reshape", g.op("ConstantOfShape", inferred, value=zero), flat)
    scattered = g.op("ScatterElements", zeros, g.op("Reshape", indices, flat),
                     g.op("Reshape", x, flat), axis=0)
    if len(node.input) < 3 or not node.input[2]:
        g.op("Reshape", scattered, inferred, out=node.output[0])
        return True
    ends = g.op("Sub", node.input[2], inferred)
    g.op("Pad", g.op("Reshape", scattered, inferred),
         g.op("Concat", g.const([0] * (2 + spatial), np.int64), ends, axis=0),
         out=node.output[0])
    return True


def _roi_align(node: onnx.NodeProto, g: GraphEditor) -> bool:
    """RoiAlign with a fixed `sampling_ratio` (IREE 3.13 does not legalize the lowering's
    `torchvision.roi_align`): each ROI's sample points along y and x computed as ONNX's
    reference does (a point outside `[-1, size]` weighing 0, clamped at 0, the last row and
    column held), the four neighbours of every point gathered from its batch's plane and
    weighted, then averaged (or the greatest weighted neighbour taken, in max mode) over each
    bin's `sampling_ratio` x `sampling_ratio` points. An adaptive ratio (0: a count per ROI)
    is left to the importer."""
    ratio = attribute(node, "sampling_ratio", 0)
    dtype = helper.tensor_dtype_to_np_dtype(g.elem_type(node.input[0]))
    if ratio <= 0 or g.rank(node.input[0]) != 4 or dtype.kind != "f":
        return False
    x, rois, batches = node.input[:3]
    half = attribute(node, "coordinate_transformation_mode", "half_pixel") == "half_pixel"
    bins = (attribute(node, "output_height", 1), attribute(node, "output_width", 1))
    scale, offset = attribute(node, "spatial_scale", 1.0), 0.5 if half else 0.0

    def number(value: float) -> str:
        return g.const(value, dtype)

    def column(k: int) -> str:  # [R, 1]: the k-th coordinate of every ROI, scaled
        corner = g.op("Gather", rois, g.const([k], np.int64), axis=1)
        return g.op("Sub", g.op("Mul", corner, number(scale)), number(offset))

    def samples(axis: int, start: str, end: str, count: int):
        """Along one axis, [R, count * ratio]: each point's lower neighbour, the weights of
        its lower and upper neighbours (0 outside), and the neighbours' positions."""
        extent = g.op("Sub", end, start)
        if not half:
            extent = g.op("Max", extent, number(1.0))
        fractions = (np.arange(count * ratio) // ratio
                     + (np.arange(count * ratio) % ratio + 0.5) / ratio)
        at = g.op("Add", start, g.op("Mul", g.op("Div", extent, number(count)),
                                     g.const(fractions[None, :], dtype)))
        size = g.op("Cast", g.size(x, axis), to=g.elem_type(x))
        last = g.op("Sub", size, number(1.0))
        inside = g.op("Not", g.op("Or", g.op("Less", at, number(-1.0)),
                                  g.op("Greater", at, size)))
        at = g.op("Max", at, number(0.0))
        low = g.op("Floor", at)
        held = g.op("GreaterOrEqual", low, last)
        low = g.op("Where", held, last, low)
        high = g.op("Where", held, last, g.op("Add", low, number(1.0)))
        upper = g.op("Mul", g.op("Sub", g.op("Where", held, last, at), low),
                     g.op("Cast", inside, to=g.elem_type(x)))
        lower = g.op("Sub", g.op("Cast", inside, to=g.elem_type(x)), upper)
        return ([lower, upper],
                [g.op("Cast", v, to=onnx.TensorProto.INT64) for v in (low, high)])

    (wy, ys), (wx, xs) = (samples(2 + i, column(1 - i), column(3 - i), bins[i])
                          for i in range(2))
    width = g.size(x, 3)
    planes = g.op("Gather", g.op("Reshape", x, g.const([0, 0, -1], np.int64)),
                  g.op("Cast", batches, to=onnx.TensorProto.INT64), axis=0)  # [R, C, H*W]
    leading = g.sizes(planes, 0, 2)  # R, C
    every_channel = g.op("Concat", leading, g.const([1], np.int64), axis=0)
    terms = []
    for (weight_y, y), (weight_x, xx) in itertools.product(zip(wy, ys, strict=True),
                                                          zip(wx, xs, strict=True)):
        position = g.op("Add", g.op("Mul", g.unsqueeze(y, [2]), width), g.unsqueeze(xx, [1]))
        position = g.op("Expand", g.op("Reshape", position, g.const([0, 1, -1], np.int64)),
                        every_channel)
        value = g.op("GatherElements", planes, position, axis=2)
        weight = g.op("Reshape", g.op("Mul", g.unsqueeze(weight_y, [2]),
                                      g.unsqueeze(weight_x, [1])), g.const([0, 1, -1], np.int64))
        terms.append(g.op("Mul", value, weight))
    greatest = attribute(node, "mode", "avg") == "max"
    grid = g.op("Reshape", g.op("Max" if greatest else "Sum", *terms), g.op(
        "Concat", leading, g.const([bins[0], ratio, bins[1], ratio], np.int64), axis=0))
    reduce = "ReduceMax" if greatest else "ReduceMean"
    g.reduce(reduce, grid, [3, 5], keepdims=0, out=node.output[0])
    return True


def _conv_transpose_phases(node: onnx.NodeProto, g: GraphEditor) -> bool:
    """A 2-D ConvTranspose of equal strides past 1 and a constant weight as, per group, one
    Conv over its input, the `stride**2` phases of each output channel as outputs (taps
    `stride` apart, flipped, `ceil(k / stride)` a dim: the sub-pixel convolution the PyTorch
    frontend's `transposed_convolution` builds), phase-major as DepthToSpace's DCR order has
    it, then DepthToSpace, the groups concatenated and the pads sliced off. The importer's
    lowering convolves the input with zeros between its pixels: a 32->16 4x4/2 one over a
    dynamic 16x16 ran 468 µs."""
    w_shape = named_shape(g.types.get(node.input[1]))
    weight = g.constants.get(node.input[1])
    bias = g.constants.get(node.input[2]) if len(node.input) > 2 and node.input[2] else None
    strides = attribute(node, "strides", [1, 1])
    groups = attribute(node, "group", 1)
    if (weight is None or weight.ndim != 4 or g.opset < 11 or w_shape is None
            or weight.shape[0] % groups
            or len(set(strides)) != 1 or strides[0] < 2
            or attribute(node, "auto_pad", "NOTSET") != "NOTSET"
            or attribute(node, "output_shape") is not None
            or any(d != 1 for d in attribute(node, "dilations", [1, 1]))
            or len(node.input) > 2 and node.input[2] and bias is None):
        return False
    stride = strides[0]
    begin, end = (list(v) for v in np.reshape(attribute(node, "pads", [0] * 4), (2, 2)))
    extra = list(attribute(node, "output_padding", [0, 0]))
    in_channels, out_per_group, *kernel = weight.shape
    per_group = in_channels // groups
    taps = [-(-k // stride) for k in kernel]
    beyond = [-(-(kernel[d] + extra[d] - end[d]) // stride) - 1 for d in range(2)]

    def phases(x: str, w: np.ndarray, b: np.ndarray | None) -> str:
        """One group's output, interleaved: `w` is its `per_group x out_per_group x kernel`."""
        w = np.pad(w.transpose(1, 0, 2, 3), [(0, 0)] * 2 + [
            (0, t * stride - k) for t, k in zip(taps, kernel, strict=True)])
        w = w.reshape(out_per_group, per_group, taps[0], stride, taps[1], stride)
        w = w[:, :, ::-1, :, ::-1, :].transpose(3, 5, 0, 1, 2, 4).reshape(
            out_per_group * stride * stride, per_group, *taps)
        operands = [x, g.const(np.ascontiguousarray(w), weight.dtype)]
        if b is not None:
            operands.append(g.const(np.tile(b, stride * stride), b.dtype))
        y = g.op("Conv", *operands, kernel_shape=taps,
                 pads=[t - 1 for t in taps] + [max(v, 0) for v in beyond])
        if min(beyond) < 0:
            y = g.op("Slice", y, g.const([0, 0], np.int64),
                     g.const([v if v < 0 else np.iinfo(np.int64).max for v in beyond], np.int64),
                     g.const([2, 3], np.int64))
        return g.op("DepthToSpace", y, blocksize=stride)  # DCR: the lowering takes no other

    inputs = [node.input[0]] if groups == 1 else _split(g, node.input[0], 1, per_group, groups)
    parts = [phases(x, weight[k * per_group:(k + 1) * per_group],
                    None if bias is None else bias[k * out_per_group:(k + 1) * out_per_group])
             for k, x in enumerate(inputs)]
    y = parts[0] if groups == 1 else g.op("Concat", *parts, axis=1)
    # What the interleaved phases hold past the output's end, as the spec's sizes give it.
    past = [stride * (beyond[d] + 1) - kernel[d] - extra[d] + end[d] for d in range(2)]
    g.op("Slice", y, g.const(begin, np.int64),
         g.const([-p if p > 0 else np.iinfo(np.int64).max for p in past], np.int64),
         g.const([2, 3], np.int64), out=node.output[0])
    return True


def _conv_transpose(node: onnx.NodeProto, g: GraphEditor) -> bool:
    """ConvTranspose of equal strides and a constant weight: `_conv_transpose_phases`.
    ConvTranspose in groups (IREE 3.13 fails to compile the lowering: a collapse_shape of
    the wrong rank): one ConvTranspose per group of input channels, concatenated; with a SAME
    auto_pad (not lowered) over static spatial sizes: the pads the spec derives; with pads
    that differ at the two ends (not lowered): the smaller at both, the rest sliced off."""
    if _conv_transpose_phases(node, g):
        return True
    groups = attribute(node, "group", 1)
    auto_pad = attribute(node, "auto_pad", "NOTSET")
    pads = attribute(node, "pads")
    x_shape, w_shape = (named_shape(g.types.get(name)) for name in node.input[:2])
    if x_shape is None or w_shape is None or not all(isinstance(d, int) for d in w_shape):
        return False
    if auto_pad.startswith("SAME"):
        if pads is not None or not all(isinstance(d, int) for d in x_shape[2:]):
            return False
        pads = _same_transposed_pads(node, x_shape[2:], w_shape[2:], auto_pad == "SAME_UPPER")
        if min(pads) < 0:
            raise UnsupportedConstructError(
                f"ONNX ConvTranspose with auto_pad {auto_pad} and a stride longer than the "
                "kernel's extent",
                "the spec's output (input size × stride) is longer than the convolution's and "
                "ONNX shape inference gives the convolution's: give the pads explicitly",
                node_source(node))
    elif auto_pad != "NOTSET":
        return False
    spatial = len(w_shape) - 2
    pads = list(pads or [0] * 2 * spatial)
    both = [min(pads[i], pads[spatial + i]) for i in range(spatial)]
    if groups == 1 and pads == both + both:
        return False
    attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute
                  if a.name not in ("group", "auto_pad", "pads")}
    attributes["pads"] = both + both
    x, w = node.input[:2]
    bias = node.input[2] if len(node.input) > 2 and node.input[2] else None
    if groups == 1:
        result = g.op("ConvTranspose", x, w, **attributes)
    else:
        per_group = w_shape[0] // groups
        result = g.op("Concat", *[
            g.op("ConvTranspose", *operands, **attributes) for operands in zip(
                _split(g, x, 1, per_group, groups), _split(g, w, 0, per_group, groups),
                strict=True)], axis=1)
    if pads != both + both:
        ends = [pads[spatial + i] - both[i] for i in range(spatial)]
        result = g.op("Slice", result, g.const([pads[i] - both[i] for i in range(spatial)],
                                               np.int64),
                      g.const([-v if v else np.iinfo(np.int64).max for v in ends], np.int64),
                      g.const(list(range(2, 2 + spatial)), np.int64))
    if bias:
        result = g.op("Add", result, g.op("Reshape", bias,
                                          g.const([-1] + [1] * spatial, np.int64)))
    g.op("Identity", result, out=node.output[0])
    return True


def _split(g: GraphEditor, name: str, axis: int, size: int, parts: int) -> list[str]:
    """`name` split along `axis` into `parts` pieces of `size`."""
    outputs = [g.fresh(f"{name}_part") for _ in range(parts)]
    g.emitted.append(
        helper.make_node("Split", [name, g.const([size] * parts, np.int64)], outputs, axis=axis)
        if g.opset >= 13 else
        helper.make_node("Split", [name], outputs, axis=axis, split=[size] * parts))
    return outputs


def _same_transposed_pads(node: onnx.NodeProto, sizes: list[int], kernel: list[int],
                          upper: bool) -> list[int]:
    """The pads ConvTranspose's spec derives for a SAME auto_pad: an output `size * stride`
    long, the padding split with the odd one at the end (upper) or the start (lower)."""
    spatial = len(sizes)
    strides = attribute(node, "strides", [1] * spatial)
    dilations = attribute(node, "dilations", [1] * spatial)
    extra = attribute(node, "output_padding", [0] * spatial)
    begins, ends = [], []
    for size, k, stride, dilation, more in zip(sizes, kernel, strides, dilations, extra,
                                                strict=True):
        total = stride * (size - 1) + more + (k - 1) * dilation + 1 - size * stride
        small, large = total // 2, total - total // 2
        begins.append(small if upper else large)
        ends.append(large if upper else small)
    return begins + ends


def _col2im(node: onnx.NodeProto, g: GraphEditor) -> bool:
    """Col2Im (IREE 3.13 fails to compile the lowering) with its image and block shapes known
    (constants, or graph inputs fixed at the example's value): each column entry's output
    position found at compile time, the entries in the padding dropped by a Gather, the rest
    summed into place by an additive ScatterElements. Needs the channels known."""
    image, block = (g.constants.get(name) for name in node.input[1:3])
    shape = named_shape(g.types.get(node.input[0]))
    if image is None or block is None or shape is None or not isinstance(shape[1], int):
        return False
    image, block = [int(v) for v in image], [int(v) for v in block]
    k, kernel = len(block), math.prod(block)
    dilations = np.array(attribute(node, "dilations", [1] * k))
    pads = np.array(attribute(node, "pads", [0] * 2 * k))
    strides = np.array(attribute(node, "strides", [1] * k))
    counts = [(image[i] + pads[i] + pads[k + i] - dilations[i] * (block[i] - 1) - 1)
              // strides[i] + 1 for i in range(k)]
    offsets = np.indices(block).reshape(k, -1)[:, :, None]  # [k, kernel, 1]
    starts = np.indices(counts).reshape(k, -1)[:, None, :]  # [k, 1, blocks]
    coords = (starts * strides[:, None, None] - pads[:k, None, None]
              + offsets * dilations[:, None, None])  # [k, kernel, blocks]
    inside = np.all((coords >= 0) & (coords < np.array(image)[:, None, None]), axis=0)
    kept = np.flatnonzero(inside)
    targets = np.ravel_multi_index(tuple(c.ravel()[kept] for c in coords), image)
    channels = shape[1] // kernel
    columns = g.op("Reshape", node.input[0], g.const([0, channels, -1], np.int64))
    taken = g.op("Gather", columns, g.const(kept, np.int64), axis=2)
    batch_channels = g.sizes(taken, 0, 2)
    dtype = helper.tensor_dtype_to_np_dtype(g.elem_type(node.input[0]))
    zeros = g.op("ConstantOfShape", g.op("Concat", batch_channels,
                                         g.const([math.prod(image)], np.int64), axis=0),
                 value=numpy_helper.from_array(np.zeros([1], dtype), "zero"))
    where = g.op("Expand", g.const(targets.reshape(1, 1, -1), np.int64), g.op("Shape", taken))
    summed = g.op("ScatterElements", zeros, where, taken, axis=2, reduction="add")
    g.op("Reshape", summed, g.op("Concat", batch_channels, g.const(image, np.int64), axis=0),
         out=node.output[0])
    return True


RULES = {"ConvInteger": _conv_integer, "DequantizeLinear": _dequantize_linear,
         "QuantizeLinear": _quantize_linear,
         "ReverseSequence": _reverse_sequence, "NonMaxSuppression": _non_max_suppression,
         "CumProd": _cum_prod, "Compress": _compress, "Dropout": _dropout, "DFT": _dft,
         "AffineGrid": _affine_grid, "DeformConv": _deform_conv,
         "TensorScatter": _tensor_scatter, "Unique": _unique, "LpPool": _lp_pool,
         "RoiAlign": _roi_align,
         "MaxUnpool": _max_unpool,
         "ConvTranspose": _conv_transpose, "Col2Im": _col2im}
