"""ONNX's sub-byte integers (INT4, UINT4, INT2, UINT2) carried in bytes.

Neither torch-mlir's importer nor IREE's runtime takes them, and numpy keeps them (ml_dtypes)
one value per byte anyway. Before the import every such tensor becomes its byte twin (INT8,
UINT8) holding the same value: the graph's inputs, outputs and intermediate values, its
initializers and constants. The ops that make a narrow value from a wider one are given the
narrow type's arithmetic back:

- `Cast`/`CastLike` to a narrow type converts to INT64 (truncating a float, as the spec and
  ml_dtypes do) and wraps into the narrow range, two's complement for INT4/INT2
  (`((v + 2**(b-1)) & (2**b - 1)) - 2**(b-1)`), modulo 2**b for the unsigned ones;
- `QuantizeLinear` to a narrow type saturates to the byte type's range, then is clipped to the
  narrow range (the same value: saturation composes).

Other ops that read or write a narrow value are ones whose result does not depend on the width
(data movement, `DequantizeLinear`); any op outside that list is refused naming the node,
as before this step. The signature keeps the narrow dtypes: the runtime converts a narrow
argument to its byte twin and a byte result back (`dync.signature`).
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from ..errors import UnsupportedConstructError
from .onnx_graphs import GraphEditor, all_nodes, subgraphs

# Narrow element type -> (its byte twin, bits, signed, dync's dtype name).
NARROW = {
    TensorProto.INT4: (TensorProto.INT8, 4, True, "int4"),
    TensorProto.UINT4: (TensorProto.UINT8, 4, False, "uint4"),
    TensorProto.INT2: (TensorProto.INT8, 2, True, "int2"),
    TensorProto.UINT2: (TensorProto.UINT8, 2, False, "uint2"),
}
# Ops whose result on a narrow value carried in a byte is that byte's result.
_WIDTH_BLIND = frozenset({
    "Identity", "Reshape", "Transpose", "Squeeze", "Unsqueeze", "Flatten", "Concat", "Split",
    "Slice", "Gather", "GatherElements", "GatherND", "Expand", "Tile", "Shape", "Size",
    "Constant", "ConstantOfShape", "DequantizeLinear", "Where", "If", "Loop", "Scan", "Pad", "Cast", "CastLike",
    "QuantizeLinear", "Equal", "Max", "Min", "ReduceMax", "ReduceMin", "Compress",
})


def carry_narrow_ints(model: onnx.ModelProto) -> dict[str, str] | None:
    """Rewrite `model` (shape-inferred, in place) so that no value is of a narrow integer
    type; return {graph input or output name: its narrow dtype name} for the signature, or
    None when the model has no narrow integers (and is left as it is)."""
    graph = model.graph
    if not _has_narrow(graph):
        return None
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 21)
    _refuse_width_dependent(graph)
    declared = {v.name: NARROW[_elem(v)][3] for v in [*graph.input, *graph.output]
                if _elem(v) in NARROW}
    _rewrite_graph(graph, opset, {})
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


def _refuse_width_dependent(graph: onnx.GraphProto) -> None:
    narrow = _narrow_names(graph)
    for node in all_nodes(graph):
        if node.op_type in _WIDTH_BLIND or node.domain not in ("", "ai.onnx"):
            continue
        touched = [n for n in [*node.input, *node.output] if n in narrow]
        if touched:
            raise UnsupportedConstructError(
                f"ONNX {node.op_type} on {onnx.TensorProto.DataType.Name(narrow[touched[0]])}",
                f"node {node.name or node.op_type!r} computes on the sub-byte integer "
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


def _rewrite_graph(graph: onnx.GraphProto, opset: int, outer: dict[str, int]) -> None:
    types = {**outer, **{v.name: _elem(v) for v in [*graph.input, *graph.output,
                                                   *graph.value_info]},
             **{t.name: t.data_type for t in graph.initializer}}
    for value in [*graph.input, *graph.output, *graph.value_info]:
        if _elem(value) in NARROW:
            value.type.tensor_type.elem_type = NARROW[_elem(value)][0]
    for k, tensor in enumerate(graph.initializer):
        if tensor.data_type in NARROW:
            graph.initializer[k].CopyFrom(_carried(tensor))
    editor = GraphEditor(graph, opset, {})
    nodes = list(graph.node)
    del graph.node[:]
    for node in nodes:
        for attr in node.attribute:
            if attr.HasField("g"):
                _rewrite_graph(attr.g, opset, types)
            for sub in attr.graphs:
                _rewrite_graph(sub, opset, types)
        editor.emitted = []
        for replacement in _rewritten(node, types, editor):
            graph.node.append(replacement)


def _carried(tensor: onnx.TensorProto) -> onnx.TensorProto:
    byte = NARROW[tensor.data_type][0]
    values = numpy_helper.to_array(tensor).astype(helper.tensor_dtype_to_np_dtype(byte))
    return numpy_helper.from_array(values, tensor.name)


def _rewritten(node: onnx.NodeProto, types: dict[str, int],
               g: GraphEditor) -> list[onnx.NodeProto]:
    if node.op_type in ("Constant", "ConstantOfShape"):
        for attr in node.attribute:
            if attr.name == "value" and attr.t.data_type in NARROW:
                attr.t.CopyFrom(_carried(attr.t))
        return [node]
    narrow = _narrow_result(node, types)
    if narrow is None:
        return [node]
    byte, bits, signed, _ = NARROW[narrow]
    out = node.output[0]
    if node.op_type == "QuantizeLinear":
        for attr in node.attribute:
            if attr.name == "output_dtype":
                attr.i = byte
        node.output[0] = g.fresh(f"{out}_byte")
        low, high = (-(1 << bits - 1), (1 << bits - 1) - 1) if signed else (0, (1 << bits) - 1)
        dtype = helper.tensor_dtype_to_np_dtype(byte)
        g.op("Clip", node.output[0], g.const(low, dtype), g.const(high, dtype), out=out)
        return [node, *g.emitted]
    # Cast / CastLike: through INT64, wrapped into the narrow range.
    wide = g.op("Cast", node.input[0], to=TensorProto.INT64)
    mask = g.const((1 << bits) - 1, np.int64)
    if signed:
        half = g.const(1 << bits - 1, np.int64)
        wide = g.op("Sub", g.op("BitwiseAnd", g.op("Add", wide, half), mask), half)
    else:
        wide = g.op("BitwiseAnd", wide, mask)
    g.op("Cast", wide, to=byte, out=out)
    return list(g.emitted)


def _narrow_result(node: onnx.NodeProto, types: dict[str, int]) -> int | None:
    """The narrow type a Cast, CastLike or QuantizeLinear makes, else None."""
    if node.op_type == "Cast":
        target = _target(node)
    elif node.op_type == "CastLike" and len(node.input) > 1:
        target = types.get(node.input[1])
    elif node.op_type == "QuantizeLinear" and len(node.input) > 2:
        target = types.get(node.input[2])
    elif node.op_type == "QuantizeLinear":
        target = next((a.i for a in node.attribute if a.name == "output_dtype"), None)
    else:
        return None
    return target if target in NARROW else None
