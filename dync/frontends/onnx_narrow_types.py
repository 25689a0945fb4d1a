"""ONNX's sub-byte integers and 8- and 4-bit floats carried in bytes.

Neither torch-mlir's importer nor IREE's runtime takes INT4, UINT4, INT2, UINT2, the FLOAT8
types or FLOAT4E2M1, and numpy keeps them (ml_dtypes) one value per byte anyway. Before the
import every such tensor becomes a byte tensor: a narrow integer its value in INT8/UINT8, a
narrow float its code (its bits) in UINT8 — the graph's inputs, outputs and intermediate
values, its initializers and constants. The ops that convert to or from them get the narrow
types' arithmetic as ONNX ops:

- to a narrow integer (`Cast`, `CastLike`): through INT64 (a float truncated), and 0 where
  that lies outside the type's range, as ml_dtypes 0.7 and ONNX's reference with it do (the
  spec leaves it open; ml_dtypes 0.6 wrapped);
- from a narrow float: its code looks up its value in a table of every code's value;
- to a narrow float: the float32 value rounded to the nearest of the format's values, ties to
  the even code, by counting the midpoints between consecutive values below it (with the
  format's overflow value past the largest: infinity or NaN, or the largest with `saturate`,
  the default, as the spec's `saturate_cast`), the sign and NaN chosen after. A negative zero
  or NaN becomes the positive one's code (the same value);
- `QuantizeLinear` to a narrow integer saturates to the byte type's range, then is clipped to
  the narrow range (the same value: saturation composes); to a narrow float, and
  `DequantizeLinear` from one, become that arithmetic on the values (per-tensor scales only).

Other ops may only move narrow values (and, for integers, compare them): anything else is
refused naming the node. The signature keeps the narrow dtypes: the runtime passes an integer
by value and a float by its code, and turns results back (`dync.signature`).
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from ..errors import UnsupportedConstructError
from .onnx_graphs import GraphEditor, all_nodes, names_in, subgraphs


@dataclass(frozen=True)
class Narrow:
    byte: int      # the element type it is carried in
    name: str      # dync's dtype name (ml_dtypes' numpy name)
    bits: int
    signed: bool = False
    floating: bool = False

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(getattr(ml_dtypes, self.name))


NARROW = {
    TensorProto.INT4: Narrow(TensorProto.INT8, "int4", 4, signed=True),
    TensorProto.UINT4: Narrow(TensorProto.UINT8, "uint4", 4),
    TensorProto.INT2: Narrow(TensorProto.INT8, "int2", 2, signed=True),
    TensorProto.UINT2: Narrow(TensorProto.UINT8, "uint2", 2),
    TensorProto.FLOAT8E4M3FN: Narrow(TensorProto.UINT8, "float8_e4m3fn", 8, floating=True),
    TensorProto.FLOAT8E4M3FNUZ: Narrow(TensorProto.UINT8, "float8_e4m3fnuz", 8, floating=True),
    TensorProto.FLOAT8E5M2: Narrow(TensorProto.UINT8, "float8_e5m2", 8, floating=True),
    TensorProto.FLOAT8E5M2FNUZ: Narrow(TensorProto.UINT8, "float8_e5m2fnuz", 8, floating=True),
    TensorProto.FLOAT4E2M1: Narrow(TensorProto.UINT8, "float4_e2m1fn", 4, floating=True),
}
# Ops whose result on narrow values carried in bytes is the bytes' result: they move values.
_MOVES = frozenset({
    "Identity", "Reshape", "Transpose", "Squeeze", "Unsqueeze", "Flatten", "Concat", "Split",
    "Slice", "Gather", "GatherElements", "GatherND", "Expand", "Tile", "Shape", "Size",
    "Constant", "ConstantOfShape", "Where", "If", "Loop", "Scan", "Pad", "Compress",
})
# ... and those whose result on a narrow integer's value is the byte's.
_INTEGER_SAFE = _MOVES | {"Equal", "Max", "Min", "ReduceMax", "ReduceMin"}
# Ops rewritten below.
_CONVERSIONS = frozenset({"Cast", "CastLike", "QuantizeLinear", "DequantizeLinear"})


def carry_narrow_types(model: onnx.ModelProto) -> dict[str, str] | None:
    """Rewrite `model` (shape-inferred, in place) so that no value is of a narrow type; return
    {graph input or output name: its narrow dtype name} for the signature, or None when the
    model has no narrow values (and is left as it is)."""
    graph = model.graph
    if not _has_narrow(graph):
        return None
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 21)
    _refuse_arithmetic(graph)
    declared = {v.name: NARROW[_elem(v)].name for v in [*graph.input, *graph.output]
                if _elem(v) in NARROW}
    _rewrite_graph(graph, opset, {}, names_in(graph))
    return declared


def _elem(value: onnx.ValueInfoProto) -> int:
    return value.type.tensor_type.elem_type if value.type.HasField("tensor_type") else 0


def _has_narrow(graph: onnx.GraphProto) -> bool:
    values = [*graph.input, *graph.output, *graph.value_info]
    if any(_elem(v) in NARROW for v in values) or any(
            t.data_type in NARROW for t in graph.initializer):
        return True
    return any(_has_narrow(sub) for node in graph.node for sub in subgraphs(node)) or any(
        _target(node) in NARROW for node in graph.node)


def _target(node: onnx.NodeProto) -> int | None:
    if node.op_type == "Cast":
        return next((a.i for a in node.attribute if a.name == "to"), None)
    if node.op_type in ("Constant", "ConstantOfShape"):
        value = next((a.t for a in node.attribute if a.name == "value"), None)
        return value.data_type if value is not None else None
    return None


def _refuse_arithmetic(graph: onnx.GraphProto) -> None:
    narrow = _narrow_names(graph)
    for node in all_nodes(graph):
        if node.op_type in _CONVERSIONS or node.domain not in ("", "ai.onnx"):
            continue
        touched = [n for n in [*node.input, *node.output] if n in narrow]
        safe = _INTEGER_SAFE if all(not NARROW[narrow[n]].floating for n in touched) else _MOVES
        if touched and node.op_type not in safe:
            raise UnsupportedConstructError(
                f"ONNX {node.op_type} on {onnx.TensorProto.DataType.Name(narrow[touched[0]])}",
                f"node {node.name or node.op_type!r} computes on the narrow-typed value "
                f"{touched[0]!r}; dync carries such values in bytes through casts, "
                "(de)quantization and data movement only")


def _narrow_names(graph: onnx.GraphProto) -> dict[str, int]:
    names = {v.name: _elem(v) for v in [*graph.input, *graph.output, *graph.value_info]
             if _elem(v) in NARROW}
    names.update({t.name: t.data_type for t in graph.initializer if t.data_type in NARROW})
    for node in graph.node:
        for sub in subgraphs(node):
            names.update(_narrow_names(sub))
    return names


def _rewrite_graph(graph: onnx.GraphProto, opset: int, outer: dict[str, int],
                   taken: set[str]) -> None:
    """Rewrite `graph` and its subgraphs; `taken`: every name of the model (one namespace: a
    subgraph's new names may not shadow the graph's)."""
    types = {**outer, **{v.name: _elem(v) for v in [*graph.input, *graph.output,
                                                   *graph.value_info]},
             **{t.name: t.data_type for t in graph.initializer}}
    for value in [*graph.input, *graph.output, *graph.value_info]:
        if _elem(value) in NARROW:
            value.type.tensor_type.elem_type = NARROW[_elem(value)].byte
    for k, tensor in enumerate(graph.initializer):
        if tensor.data_type in NARROW:
            graph.initializer[k].CopyFrom(_carried(tensor))
    editor = GraphEditor(graph, opset, {})
    editor.taken = taken
    nodes = list(graph.node)
    del graph.node[:]
    for node in nodes:
        for attr in node.attribute:
            if attr.HasField("g"):
                _rewrite_graph(attr.g, opset, types, taken)
            for sub in attr.graphs:
                _rewrite_graph(sub, opset, types, taken)
        editor.emitted = []
        graph.node.extend(_rewritten(node, types, editor))


def _carried(tensor: onnx.TensorProto) -> onnx.TensorProto:
    narrow = NARROW[tensor.data_type]
    values = numpy_helper.to_array(tensor)
    carried = values.view(np.uint8) if narrow.floating else values.astype(
        helper.tensor_dtype_to_np_dtype(narrow.byte))
    return numpy_helper.from_array(carried, tensor.name)


def _rewritten(node: onnx.NodeProto, types: dict[str, int],
               g: GraphEditor) -> list[onnx.NodeProto]:
    if node.op_type in ("Constant", "ConstantOfShape"):
        for attr in node.attribute:
            if attr.name == "value" and attr.t.data_type in NARROW:
                attr.t.CopyFrom(_carried(attr.t))
        return [node]
    if node.op_type == "DequantizeLinear" and types.get(node.input[0]) in NARROW:
        return _dequantized(node, types, g)
    source = NARROW.get(types.get(node.input[0])) if node.input else None
    target = _narrow_result(node, types)
    if node.op_type == "QuantizeLinear" and target in NARROW:
        return _quantized(node, NARROW[target], types, g)
    if node.op_type not in ("Cast", "CastLike") or (target is None and source is None):
        return [node]
    # A conversion: from the source's value (a narrow float's decoded) to the target.
    value = _decoded(g, node.input[0], source) if source is not None and source.floating \
        else node.input[0]
    if target is None:
        to = types.get(node.input[1]) if node.op_type == "CastLike" else _target(node)
        g.op("Cast", value, to=to, out=node.output[0])
    else:
        _converted(g, value, NARROW[target], _saturate(node), node.output[0])
    return list(g.emitted)


def _narrow_result(node: onnx.NodeProto, types: dict[str, int]) -> int | None:
    """The narrow type a Cast, CastLike or QuantizeLinear makes, else None."""
    if node.op_type == "Cast":
        target = _target(node)
    elif node.op_type == "CastLike" and len(node.input) > 1:
        target = types.get(node.input[1])
    elif node.op_type == "QuantizeLinear" and len(node.input) > 2 and node.input[2]:
        target = types.get(node.input[2])
    elif node.op_type == "QuantizeLinear":
        target = next((a.i for a in node.attribute if a.name == "output_dtype"), None)
    else:
        return None
    return target if target in NARROW else None


def _saturate(node: onnx.NodeProto) -> bool:
    return bool(next((a.i for a in node.attribute if a.name == "saturate"), 1))


def _converted(g: GraphEditor, x: str, narrow: Narrow, saturate: bool, out: str) -> None:
    """`x` (any numeric type) converted to `narrow` into `out`."""
    if narrow.floating:
        _encoded(g, g.op("Cast", x, to=TensorProto.FLOAT), narrow, saturate, out)
        return
    wide = g.op("Cast", x, to=TensorProto.INT64)
    info = ml_dtypes.iinfo(narrow.dtype)
    inside = g.op("And", g.op("GreaterOrEqual", wide, g.const(int(info.min), np.int64)),
                  g.op("LessOrEqual", wide, g.const(int(info.max), np.int64)))
    kept = g.op("Where", inside, wide, g.const(0, np.int64))
    g.op("Cast", kept, to=narrow.byte, out=out)


def _quantized(node: onnx.NodeProto, narrow: Narrow, types: dict[str, int],
               g: GraphEditor) -> list[onnx.NodeProto]:
    out = node.output[0]
    if not narrow.floating:  # the byte type's saturation, then the narrow range's
        for attr in node.attribute:
            if attr.name == "output_dtype":
                attr.i = narrow.byte
        node.output[0] = g.fresh(f"{out}_byte")
        info = ml_dtypes.iinfo(narrow.dtype)
        dtype = helper.tensor_dtype_to_np_dtype(narrow.byte)
        g.op("Clip", node.output[0], g.const(int(info.min), dtype),
             g.const(int(info.max), dtype), out=out)
        return [node, *g.emitted]
    scale, zero = _along_axis(node, g)
    x = g.op("Div", g.op("Cast", node.input[0], to=TensorProto.FLOAT),
             g.op("Cast", scale, to=TensorProto.FLOAT))
    if zero is not None:
        x = g.op("Add", x, _decoded(g, zero, narrow))
    _encoded(g, x, narrow, _saturate(node), out)
    return list(g.emitted)


def _dequantized(node: onnx.NodeProto, types: dict[str, int],
                 g: GraphEditor) -> list[onnx.NodeProto]:
    narrow = NARROW[types[node.input[0]]]
    if not narrow.floating:  # the byte's arithmetic is the narrow integer's
        return [node]
    scale, zero = _along_axis(node, g)
    x = _decoded(g, node.input[0], narrow)
    if zero is not None:
        x = g.op("Sub", x, _decoded(g, zero, narrow))
    scaled = g.op("Mul", x, g.op("Cast", scale, to=TensorProto.FLOAT))
    g.op("Cast", scaled, to=types.get(node.input[1], TensorProto.FLOAT), out=node.output[0])
    return list(g.emitted)


def _along_axis(node: onnx.NodeProto, g: GraphEditor) -> tuple[str, str | None]:
    """A (de)quantization's scale and zero point (None without one) shaped to broadcast
    against its input: as they are per tensor, along the node's axis per axis."""
    x_rank, scale_rank = g.rank(node.input[0]), g.rank(node.input[1])
    params = [node.input[1]] + [node.input[2]] if len(node.input) > 2 and node.input[2] else \
        [node.input[1]]
    if any(a.name == "block_size" and a.i for a in node.attribute) or scale_rank not in (
            0, 1) or (scale_rank == 1 and x_rank is None):
        raise UnsupportedConstructError(
            f"ONNX {node.op_type} by blocks to or from a narrow float",
            f"node {node.name or node.op_type!r} has a scale per block (or of unknown rank); "
            "dync (de)quantizes 8- and 4-bit floats per tensor or per axis")
    if scale_rank == 1:
        axis = next((a.i for a in node.attribute if a.name == "axis"), 1) % x_rank
        shape = g.const([-1] + [1] * (x_rank - axis - 1), np.int64)
        params = [g.op("Reshape", p, shape) for p in params]
    return params[0], params[1] if len(params) > 1 else None


def _decoded(g: GraphEditor, code: str, narrow: Narrow) -> str:
    """The float32 value of each narrow-float code in `code`."""
    codes = np.arange(1 << narrow.bits, dtype=np.uint8)
    table = g.const(codes.view(narrow.dtype).astype(np.float32), np.float32)
    return g.op("Gather", table, g.op("Cast", code, to=TensorProto.INT64))


def _encoded(g: GraphEditor, x: str, narrow: Narrow, saturate: bool, out: str) -> None:
    """The code of the `narrow` float nearest each float32 in `x`, ties to the even code, into
    `out` (as ml_dtypes' conversion, after the spec's saturation when `saturate`)."""
    grid = _grid(narrow)
    magnitude = g.op("Abs", x)
    if saturate:
        magnitude = g.op("Min", magnitude, g.const(grid.largest, np.float32))
    column = g.unsqueeze(magnitude, [-1])
    above = g.op("Or", g.op("Greater", column, g.const(grid.midpoints, np.float32)),
                 g.op("And", g.op("Equal", column, g.const(grid.midpoints, np.float32)),
                      g.const(grid.tie_up, np.bool_)))
    index = g.reduce("ReduceSum", g.op("Cast", above, to=TensorProto.INT64), [-1], keepdims=0)
    positive = g.op("Gather", g.const(grid.positive, np.uint8), index)
    negative = g.op("Gather", g.const(grid.negative, np.uint8), index)
    signed = g.op("Where", g.op("Less", x, g.const(0.0, np.float32)), negative, positive)
    g.op("Where", g.op("IsNaN", x), g.const(grid.nan, np.uint8), signed, out=out)


@dataclass(frozen=True)
class _Grid:
    """A narrow float format's non-negative finite values, ascending, as rounding sees them."""
    largest: float
    midpoints: np.ndarray  # between consecutive values, then past the largest (overflow)
    tie_up: np.ndarray     # a value at a midpoint rounds up (the upper code is even)
    positive: np.ndarray   # the code of each value, then of overflow (+inf)
    negative: np.ndarray   # the code of each value negated, then of -inf
    nan: int


def _grid(narrow: Narrow) -> _Grid:
    codes = np.arange(1 << narrow.bits, dtype=np.uint8)
    values = codes.view(narrow.dtype).astype(np.float64)
    kept = np.isfinite(values) & ~np.signbit(values)
    order = np.argsort(values[kept], kind="stable")
    value, code = values[kept][order], codes[kept][order]

    def code_of(v: float) -> int:
        return int(np.array([v]).astype(narrow.dtype).view(np.uint8)[0])

    beyond = value[-1] + (value[-1] - value[-2])  # where the next value would be
    upper = np.append(code[1:], code[-1] + 1)
    return _Grid(
        largest=float(value[-1]),
        midpoints=np.append(value[1:], beyond) / 2 + value / 2,
        tie_up=upper % 2 == 0,
        positive=np.append(code, code_of(np.inf)),
        negative=np.array([code_of(-v) for v in value] + [code_of(-np.inf)], np.uint8),
        nan=code_of(np.nan))
