"""ONNX nodes whose lowering in IREE's importer gives other values than the ONNX spec, or
none at all where the op is expressible in ops it does lower.

Found by the ONNX node tests (`python -m benchmarks conformance`); a wrong value returned
silently is the worst a compiler can do, so before import each such node is either rewritten
into ONNX ops whose lowerings are right, or refused with the op, the attribute and the node:

- `GridSample`, padding "zeros" (the default): torch-mlir's `aten.grid_sampler` lowering reads
  outside the input for a sample point outside it and returns whatever memory holds there; in
  "nearest" mode it also rounds halves away from zero (ONNX: to even). Rewritten: the input is
  padded with zeros and the sample points clamped into the padding (rounded first, with ONNX's
  `Round`, in "nearest" mode), so every read is in bounds and every outside read is a zero.
- `BitShift` by a negative amount or by the width of the type or more: ONNX defines 0 (left) and
  the sign fill (right); the lowering shifts by the amount modulo the width for 8-bit types.
- `Div`, `Mod` and `TopK` of uint8, computed by IREE as signed: computed in int32 (other
  unsigned widths cannot be cast back by the importer: refused by name at import).
- `LpNormalization` of an all-zero slice: ONNX gives 0, the lowering 0/0 = NaN.
- `SoftmaxCrossEntropyLoss` with weights and mean reduction (the lowering returns inf) and
  `SpaceToDepth` in CRD mode (the lowering ignores the mode): replaced by the op's own function
  body from the ONNX schema, as ONNX's `_expanded` tests do.
- `Det`: the lowering eliminates without pivoting (NaN for any matrix with a zero leading
  minor); rewritten as elimination with partial pivoting unrolled over the static size.
- `Resize` in linear or cubic mode with `align_corners` (wrong when downsampling): rewritten as
  per-axis Gathers of the neighbours, weighted as ONNX's reference does.
- Not lowered at all, rewritten into ops that are: `ConvInteger` with pads or a per-channel
  weight zero point, `DequantizeLinear` of 16-bit integers, `ReverseSequence` (its lowering
  does not compile in IREE 3.13).
- `Scan`: its body's state outputs typed like its state inputs (the importer's loop needs the
  two types equal); one with a scan output of unknown shape is refused (the lowering writes
  past that output's buffer).
- Refused: `Det` of a dynamic size, `LSTM` with peepholes (ignored), `QLinearMatMul` of rank
  above 2, `AveragePool` with `ceil_mode`, `count_include_pad` and a dilation above 1.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ..errors import UnsupportedConstructError
from .onnx_graphs import attribute, fresh_name, subgraphs


class _Graph:
    """One graph being rewritten: fresh names, the element type and rank of every value."""

    def __init__(self, graph: onnx.GraphProto, opset: int, outer: dict[str, onnx.TypeProto]):
        self.opset = opset
        self.types = dict(outer)
        for value in [*graph.input, *graph.value_info, *graph.output]:
            self.types[value.name] = value.type
        for tensor in graph.initializer:
            self.types[tensor.name] = helper.make_tensor_type_proto(tensor.data_type, tensor.dims)
        self.constants = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
        for node in graph.node:
            if node.op_type == "Constant" and node.attribute and node.attribute[0].name == "value":
                self.constants[node.output[0]] = numpy_helper.to_array(node.attribute[0].t)
        self.taken = set(self.types) | {o for n in graph.node for o in n.output}
        self.emitted: list[onnx.NodeProto] = []
        self.pending: list[onnx.NodeProto] = []  # nodes that go after the one being rewritten
        self.declared: list[onnx.ValueInfoProto] = []  # types of new values, for inference

    def fresh(self, hint: str) -> str:
        return fresh_name(self.taken, hint)

    def op(self, op_type: str, *inputs: str, out: str | None = None, **attributes) -> str:
        output = out or self.fresh(f"dync_{op_type.lower()}")
        self.emitted.append(helper.make_node(op_type, list(inputs), [output], **attributes))
        return output

    def const(self, value, dtype) -> str:
        name = self.fresh("dync_const")
        return self.op("Constant", out=name, value=numpy_helper.from_array(
            np.asarray(value, dtype=dtype), name))

    def elem_type(self, name: str) -> int:
        t = self.types.get(name)
        return t.tensor_type.elem_type if t is not None else 0

    def squeeze(self, x: str, axes: list[int], out: str | None = None) -> str:
        if self.opset >= 13:
            return self.op("Squeeze", x, self.const(axes, np.int64), out=out)
        return self.op("Squeeze", x, axes=axes, out=out)

    def rank(self, name: str) -> int | None:
        t = self.types.get(name)
        if t is None or not t.tensor_type.HasField("shape"):
            return None
        return len(t.tensor_type.shape.dim)


def _refuse(node: onnx.NodeProto, what: str, why: str) -> None:
    raise UnsupportedConstructError(
        f"ONNX {node.op_type} {what}".rstrip(),
        f"IREE's lowering of ONNX {node.op_type} {what} gives other values than the ONNX spec: "
        f"{why}".replace("  ", " "),
        f"node {node.name!r}" if node.name else None)


# --------------------------------------------------------------------------- rewrites


def _grid_sample(node: onnx.NodeProto, g: _Graph) -> bool:
    mode = attribute(node, "mode", "linear")
    if attribute(node, "padding_mode", "zeros") != "zeros" or mode not in (
            "linear", "bilinear", "nearest") or g.rank(node.input[0]) != 4:
        return False  # other modes and ranks have no lowering: the importer names them
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
    margin = g.const(1.5, dtype)
    low = g.op("Neg", margin)
    high = g.op("Add", g.op("Sub", sizes, one), margin)
    pixel = g.op("Min", g.op("Max", pixel, low), high)
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
    g.emitted.append(rewritten)
    return True


def _bit_shift(node: onnx.NodeProto, g: _Graph) -> bool:
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


# An unsigned type and a signed one that holds all its values. Only uint8: IREE's importer
# casts to none of int16, uint16, uint32 (no torch dtype), so no other width comes back.
_WIDER = {onnx.TensorProto.UINT8: onnx.TensorProto.INT32}


def _widened(node: onnx.NodeProto, g: _Graph) -> bool:
    """Div, Mod and TopK of uint8, which IREE computes as signed (wrong from 128 up), computed
    in int32 and cast back."""
    elem = g.elem_type(node.input[0])
    wider = _WIDER.get(elem)
    if wider is None:
        return False  # the import refuses the op by name on other unsigned types
    operands = list(node.input)
    for i in ([0, 1] if node.op_type in ("Div", "Mod") else [0]):
        operands[i] = g.op("Cast", operands[i], to=wider)
    widened = onnx.NodeProto()
    widened.CopyFrom(node)
    widened.input[:] = operands
    widened.output[0] = g.fresh(f"{node.output[0]}_wide")
    g.emitted.append(widened)
    g.op("Cast", widened.output[0], to=elem, out=node.output[0])
    return True


def _conv_integer(node: onnx.NodeProto, g: _Graph) -> bool:
    """ConvInteger with pads or with a zero point per output channel, which the importer does
    not lower. Pads: the input padded first with its zero point (ONNX pads `x - x_zero_point`
    with zeros), by Concat, since Pad before opset 11 takes its value as an attribute. A weight
    zero point `z` per channel: conv(x', w - z) = conv(x', w) - z * conv(x', ones), in int32."""
    pads = attribute(node, "pads", [])
    rank, w_shape = g.rank(node.input[0]), _named_shape(g.types.get(node.input[1]))
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
        x = _padded_with(g, x, pads, rank, x_zero or g.const(0, x_dtype))
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


def _padded_with(g: _Graph, x: str, pads: list[int], rank: int, fill: str) -> str:
    """`x` with its spatial axes (2 on) padded by `pads` (ONNX order) copies of `fill`."""
    spatial = rank - 2
    for i in range(spatial):
        axis = 2 + i
        shape = g.op("Shape", x)
        blocks = []
        for width in (pads[i], pads[spatial + i]):
            if not width:
                blocks.append(None)
                continue
            block_shape = g.op("Concat", g.op("Slice", shape, g.const([0], np.int64),
                                              g.const([axis], np.int64)),
                               g.const([width], np.int64),
                               g.op("Slice", shape, g.const([axis + 1], np.int64),
                                    g.const([rank], np.int64)), axis=0)
            blocks.append(g.op("Expand", fill, block_shape))
        if any(blocks):
            x = g.op("Concat", *(b for b in (blocks[0], x, blocks[1]) if b), axis=axis)
    return x


def _reverse_sequence(node: onnx.NodeProto, g: _Graph) -> bool:
    """ReverseSequence, whose lowering IREE 3.13 fails to compile (a vector.gather left
    unconverted): a GatherElements along the time axis at `len - 1 - t` below each batch's
    length, `t` from it on."""
    x, lengths = node.input
    rank = g.rank(x)
    if rank is None:
        return False
    time_axis, batch_axis = attribute(node, "time_axis", 0), attribute(node, "batch_axis", 1)

    def along(axis: int) -> str:
        return g.const([-1 if d == axis else 1 for d in range(rank)], np.int64)

    shape = g.op("Shape", x)
    steps = g.op("Range", g.const(0, np.int64), g.squeeze(g.op(
        "Gather", shape, g.const([time_axis], np.int64)), [0]), g.const(1, np.int64))
    t = g.op("Reshape", steps, along(time_axis))
    length = g.op("Reshape", g.op("Cast", lengths, to=onnx.TensorProto.INT64), along(batch_axis))
    reversed_t = g.op("Sub", g.op("Sub", length, g.const(1, np.int64)), t)
    index = g.op("Where", g.op("Less", t, length), reversed_t, t)
    g.op("GatherElements", x, g.op("Expand", index, shape), axis=time_axis, out=node.output[0])
    return True


def _non_max_suppression(node: onnx.NodeProto, g: _Graph) -> bool:
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


def _dequantize_linear(node: onnx.NodeProto, g: _Graph) -> bool:
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


def _lp_normalization(node: onnx.NodeProto, g: _Graph) -> bool:
    x = node.input[0]
    axis, p = attribute(node, "axis", -1), attribute(node, "p", 2)
    if p not in (1, 2):
        return False
    reduce = "ReduceL2" if p == 2 else "ReduceL1"
    if g.opset >= 18:
        norm = g.op(reduce, x, g.const([axis], np.int64), keepdims=1)
    else:
        norm = g.op(reduce, x, axes=[axis], keepdims=1)
    dtype = helper.tensor_dtype_to_np_dtype(g.elem_type(x))
    zero = g.op("Equal", norm, g.const(0, dtype))
    g.op("Div", x, g.op("Where", zero, g.const(1, dtype), norm), out=node.output[0])
    return True


def _expand(node: onnx.NodeProto, g: _Graph) -> bool:
    """Replace `node` by its function body from the ONNX schema."""
    schema = onnx.defs.get_schema(node.op_type, g.opset, node.domain)
    types = [g.types.get(name, onnx.TypeProto()).SerializeToString() for name in node.input]
    version = max(v for v in schema.context_dependent_function_opset_versions if v <= g.opset)
    # The body builder reads absent attributes as empty, not as their defaults: fill them in.
    node_with_defaults = onnx.NodeProto()
    node_with_defaults.CopyFrom(node)
    present = {a.name for a in node.attribute}
    node_with_defaults.attribute.extend(
        a.default_value for name, a in schema.attributes.items()
        if name not in present and a.default_value.type != onnx.AttributeProto.UNDEFINED)
    body = onnx.FunctionProto.FromString(
        schema.get_context_dependent_function_with_opset_version(
            version, node_with_defaults.SerializeToString(), types))
    attributes = {a.name: a for a in node_with_defaults.attribute}
    for inner in body.node:  # before any upgrade: the version converter drops references
        resolved = [_resolved(a, attributes) for a in inner.attribute]
        del inner.attribute[:]
        inner.attribute.extend(a for a in resolved if a is not None)
    if version != g.opset:
        body = _upgraded(body, version, g.opset)
    names = dict(zip(body.input, node.input, strict=False))
    names.update((f, a) for f, a in zip(body.output, node.output, strict=False) if a)

    def rename(name: str) -> str:
        if name and name not in names:
            names[name] = g.fresh(f"{node.name or node.op_type}_{name}")
        return names.get(name, name)

    for inner in body.node:
        inner.input[:] = [rename(n) for n in inner.input]
        inner.output[:] = [rename(n) for n in inner.output]
        g.emitted.append(inner)
    return True


def _resolved(attribute: onnx.AttributeProto,
              given: dict[str, onnx.AttributeProto]) -> onnx.AttributeProto | None:
    """A function body's attribute with a reference to the node's attribute resolved (None when
    the node does not give it: the inner op's default then applies)."""
    if attribute.ref_attr_name and attribute.ref_attr_name not in given:
        return None
    resolved = onnx.AttributeProto()  # a copy: the caller clears the list `attribute` is in
    resolved.CopyFrom(given[attribute.ref_attr_name] if attribute.ref_attr_name else attribute)
    resolved.name = attribute.name
    return resolved


def _upgraded(body: onnx.FunctionProto, version: int, opset: int) -> onnx.FunctionProto:
    """`body`, written at `version`, with its ops converted to the model's `opset`."""
    graph = helper.make_graph(
        list(body.node), "body", [helper.make_empty_tensor_value_info(n) for n in body.input],
        [helper.make_empty_tensor_value_info(n) for n in body.output
         if any(n in inner.output for inner in body.node)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", version)])
    converted = onnx.version_converter.convert_version(model, opset).graph
    upgraded = onnx.FunctionProto()
    upgraded.CopyFrom(body)
    del upgraded.node[:]
    upgraded.node.extend(converted.node)
    return upgraded


def _named_shape(t: onnx.TypeProto | None) -> list[int | str] | None:
    """The dims of a tensor type, each a number or a `dim_param` name; None if a dim is
    neither, or the type has no shape."""
    if t is None or t.WhichOneof("value") != "tensor_type" or not t.tensor_type.HasField("shape"):
        return None
    dims = [d.dim_value if d.HasField("dim_value") else d.dim_param or None
            for d in t.tensor_type.shape.dim]
    return None if None in dims else dims


def _dim_sources(g: _Graph) -> dict[str, tuple[str, int]]:
    """For each `dim_param` of a value of `g` (its scope included): a value and axis that has
    it, to read its size from at run time."""
    sources: dict[str, tuple[str, int]] = {}
    for name, t in g.types.items():
        for axis, dim in enumerate(_named_shape(t) or []):
            if isinstance(dim, str):
                sources.setdefault(dim, (name, axis))
    return sources


def _empty_rows(g: _Graph, shape: list[int | str], dtype) -> str | None:
    """A tensor of shape [0, *shape]: from a constant when `shape` is static; else from the
    sizes of the values whose named dims it uses (None when one has no such value)."""
    zero = g.const([0], np.int64)
    if all(isinstance(d, int) for d in shape):
        # An empty slice of a zero row, not a constant: its lowering keeps the dynamic type.
        row = g.const(np.zeros([1, *shape], dtype), dtype)
        return g.op("Slice", row, zero, zero, out=g.fresh(f"{GROWING}_start"))
    sources = _dim_sources(g)
    if any(isinstance(d, str) and d not in sources for d in shape):
        return None
    sizes = [zero]
    for dim in shape:
        if isinstance(dim, int):
            sizes.append(g.const([dim], np.int64))
        else:
            value, axis = sources[dim]
            sizes.append(g.op("Shape", value, start=axis, end=axis + 1))
    fill = numpy_helper.from_array(np.zeros([1], dtype), "fill")
    return g.op("ConstantOfShape", g.op("Concat", *sizes, axis=0), value=fill,
                out=g.fresh(f"{GROWING}_start"))


# Values whose first dim grows trip by trip: named with this prefix so that `relax_growing`
# can undo what shape inference, run again after the rewrites, concludes from a static trip
# count or an empty start.
GROWING = "dync_growing"


def _loop_scan_outputs(node: onnx.NodeProto, g: _Graph) -> bool:
    """A Loop's scan outputs become loop-carried accumulators (IREE's importer lowers no scan
    output): each starts empty, [0, *shape], and every trip concatenates its value, unsqueezed.
    Needs each scanned value's dims static or named (`dim_param`) like a dim of a value outside
    the Loop, which gives its size; else the Loop is left to the importer's error."""
    body = next(a.g for a in node.attribute if a.name == "body")
    carried = len(node.input) - 2
    scanned = body.output[1 + carried:]
    if not scanned:
        return False
    inner = _Graph(body, g.opset, g.types)
    shapes = [_named_shape(inner.types.get(v.name)) for v in scanned]
    if any(shape is None for shape in shapes):
        return False
    emitted = len(g.emitted)
    starts, results, outputs = [], [], []
    for value, shape in zip(scanned, shapes, strict=True):
        dtype = helper.tensor_dtype_to_np_dtype(inner.elem_type(value.name))
        starts.append(_empty_rows(g, shape, dtype))
    if None in starts:
        del g.emitted[emitted:]
        return False
    for i, (value, shape) in enumerate(zip(scanned, shapes, strict=True)):
        elem_type = inner.elem_type(value.name)
        accumulated = inner.fresh(f"{GROWING}_{value.name}")
        body.input.append(helper.make_tensor_value_info(accumulated, elem_type, [None, *shape]))
        axis = inner.const([0], np.int64)
        item = (inner.op("Unsqueeze", value.name, axis) if g.opset >= 13
                else inner.op("Unsqueeze", value.name, axes=[0]))
        grown = inner.op("Concat", accumulated, item, axis=0,
                         out=inner.fresh(f"{GROWING}_{value.name}_grown"))
        outputs.append(helper.make_tensor_value_info(grown, elem_type, [None, *shape]))
        # The Loop's result is dynamic; the model's name gets it through an Identity.
        results.append(g.fresh(f"{GROWING}_{node.output[carried + i]}"))
        g.declared.extend(helper.make_tensor_value_info(name, elem_type, [None, *shape])
                          for name in (starts[-1], results[-1]))
        g.pending.append(helper.make_node("Identity", [results[-1]], [node.output[carried + i]]))
    body.node.extend(inner.emitted)
    del body.output[1 + carried:]
    body.output.extend(outputs)
    rewritten = onnx.NodeProto()
    rewritten.CopyFrom(node)  # after the body's changes: CopyFrom copies the subgraph
    rewritten.input.extend(starts)
    rewritten.output[carried:] = results
    g.emitted.append(rewritten)
    g.emitted.extend(g.pending)
    g.pending.clear()
    return True


def _scan_state_types(node: onnx.NodeProto, g: _Graph) -> bool:
    """A Scan body's state outputs typed like its state inputs, when inference left them
    without a shape: IREE's importer makes the loop carry the state with the input's type and
    the yielded value's type, which must be equal. States keep their shape from step to step
    (a state that changes it fails shape inference, at import). A scan output of unknown
    shape is refused: the lowering corrupts memory with it."""
    body = next(a.g for a in node.attribute if a.name == "body")
    states = len(node.input) - attribute(node, "num_scan_inputs", 0)
    typed = {returned.name: given.type for given, returned in
             zip(body.input[:states], body.output[:states], strict=True)
             if _named_shape(given.type) is not None and _named_shape(returned.type) is None}
    for value in [*body.output, *body.value_info]:  # the ranks completed before, too
        if value.name in typed:
            value.type.CopyFrom(typed[value.name])
    unshaped = [v.name for v in body.output[states:] if _named_shape(v.type) is None]
    if unshaped:
        _refuse(node, "with a scan output of unknown shape", f"the lowering writes {unshaped[0]!r} "
                "past its buffer (memory corruption at run time)")
    return False  # the node itself stays


def relax_growing(graph: onnx.GraphProto) -> None:
    """Make the first dim of every `GROWING` value unknown again (after shape inference), in
    `graph` and its subgraphs."""
    for values in (graph.input, graph.output, graph.value_info):
        for value in values:
            if value.name.startswith(GROWING) and value.type.tensor_type.shape.dim:
                first = value.type.tensor_type.shape.dim[0]
                first.Clear()
    for node in graph.node:
        for sub in subgraphs(node):
            relax_growing(sub)


def _softmax_cross_entropy(node: onnx.NodeProto, g: _Graph) -> bool:
    weighted = len(node.input) > 2 and node.input[2]
    return bool(weighted and attribute(node, "reduction", "mean") == "mean") and _expand(node, g)


def _space_to_depth(node: onnx.NodeProto, g: _Graph) -> bool:
    return attribute(node, "mode", "DCR") == "CRD" and _expand(node, g)


def _det(node: onnx.NodeProto, g: _Graph) -> bool:
    """Det by Gaussian elimination with partial pivoting (numpy's LU), unrolled over the
    static matrix size: IREE's lowering does not pivot."""
    shape = _named_shape(g.types.get(node.input[0]))
    size = shape[-1] if shape and len(shape) >= 2 else None
    if not isinstance(size, int) or size < 1 or shape[-2] != size:
        _refuse(node, "of a matrix of dynamic size", "it eliminates without pivoting, so any "
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


def _resize(node: onnx.NodeProto, g: _Graph) -> bool:
    """Resize in linear or cubic mode with align_corners, which IREE's lowering gets wrong when
    downsampling: interpolated axis by axis with Gathers of the neighbours (clamped to the
    edge, as ONNX pads) weighted as in ONNX's reference, including its output width of
    `scale * size` (not the rounded size) in the coordinate transform."""
    mode = attribute(node, "mode", "nearest")
    if attribute(node, "coordinate_transformation_mode") != "align_corners" or mode == "nearest":
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
        _refuse(node, f"in {mode} mode with coordinate_transformation_mode align_corners and "
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


def _cubic_weights(g: _Graph, ratio: str, a: float, dtype) -> dict[int, str]:
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


def _lstm(node: onnx.NodeProto, g: _Graph) -> bool:
    if len(node.input) > 7 and node.input[7]:
        _refuse(node, "with peepholes (input P)", "the peephole weights are ignored")
    return False


def _qlinear_matmul(node: onnx.NodeProto, g: _Graph) -> bool:
    ranks = [g.rank(node.input[0]), g.rank(node.input[3])]
    if any(r is None or r > 2 for r in ranks):
        _refuse(node, f"of rank {max((r or 3) for r in ranks)}",
                "batched (rank above 2) quantized matmuls come out wrong")
    return False


def _average_pool(node: onnx.NodeProto, g: _Graph) -> bool:
    """AveragePool with ceil_mode, count_include_pad and a dilation, whose lowering averages the
    windows that end in the padding over the wrong count: the zeros padded explicitly first,
    then averaged as input (count_include_pad then has nothing left to count). Only where
    that keeps ONNX's output size: ceil mode drops a last window that starts in the end pads."""
    rank = g.rank(node.input[0])
    if rank is None or not (attribute(node, "ceil_mode", 0) and attribute(node, "count_include_pad", 0)
            and any(d > 1 for d in attribute(node, "dilations", []))):
        return False
    if not _same_ceil_windows(node, _named_shape(g.types.get(node.input[0]))):
        _refuse(node, "with ceil_mode, count_include_pad and dilations",
                "the windows that end in the padding are averaged over the wrong count")
    dtype = helper.tensor_dtype_to_np_dtype(g.elem_type(node.input[0]))
    pads = attribute(node, "pads", [0] * 2 * (rank - 2))
    padded = _padded_with(g, node.input[0], pads, rank, g.const(0, dtype))
    attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute
                  if a.name not in ("pads", "count_include_pad")}
    g.op("AveragePool", padded, out=node.output[0], **attributes)
    return True


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


_RULES: dict[str, Callable[[onnx.NodeProto, _Graph], bool]] = {
    "GridSample": _grid_sample,
    "Loop": _loop_scan_outputs,
    "Scan": _scan_state_types,
    "BitShift": _bit_shift,
    "Div": _widened,
    "Mod": _widened,
    "TopK": _widened,
    "LpNormalization": _lp_normalization,
    "SoftmaxCrossEntropyLoss": _softmax_cross_entropy,
    "SpaceToDepth": _space_to_depth,
    "Det": _det,
    "LSTM": _lstm,
    "QLinearMatMul": _qlinear_matmul,
    "Resize": _resize,
    "ConvInteger": _conv_integer,
    "DequantizeLinear": _dequantize_linear,
    "ReverseSequence": _reverse_sequence,
    "NonMaxSuppression": _non_max_suppression,
    "AveragePool": _average_pool,
}


def rewrite_for_iree(graph: onnx.GraphProto, opset: int,
                     outer: dict[str, onnx.TypeProto] | None = None) -> list[str]:
    """Rewrite (in place) or refuse the nodes of `graph` and its subgraphs that IREE's importer
    would lower to other values than ONNX's; returns one note per rewritten op type."""
    g = _Graph(graph, opset, outer or {})
    rewritten: set[str] = set()
    for node in graph.node:
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
    if rewritten:
        del graph.node[:]
        graph.node.extend(g.emitted)
        graph.value_info.extend(g.declared)
    return sorted(rewritten)
