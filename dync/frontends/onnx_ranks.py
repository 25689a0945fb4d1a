"""Ranks ONNX shape inference leaves out, completed before import.

ONNX shape inference gives up on a node whose output shape depends on a computed value it
cannot fold (a `Split` whose sizes are computed from `Shape`, say) and leaves the output, and
everything downstream, with an element type but no shape at all. IREE's ONNX importer reads a
missing shape as rank 0, and torch-mlir's lowering of several ops (`Split` among them) then
dereferences dims that are not there: SIGSEGV in the compiler. The rank alone is enough for
the lowering (the dims are refined later), and it follows from the inputs' ranks for most ops;
this module propagates it and writes `?` dims. A tensor whose rank still cannot be known is
reported by the caller before the importer sees it.
"""

from __future__ import annotations

from collections.abc import Callable

import onnx

from .onnx_graphs import attribute, subgraphs

# Ops whose output has the rank of their first input.
_SAME_RANK = frozenset({
    "Abs", "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Cast",
    "CastLike", "Ceil", "Celu", "Clip", "Cos", "Cosh", "CumSum", "DequantizeLinear", "Dropout",
    "Elu", "Erf", "Exp", "Floor", "Gelu", "HardSigmoid", "HardSwish", "Hardmax", "Identity",
    "InstanceNormalization", "IsInf", "IsNaN", "LRN", "LayerNormalization", "LeakyRelu", "Log",
    "LogSoftmax", "LpNormalization", "MeanVarianceNormalization", "Mish", "Neg", "Not", "PRelu",
    "Pad", "QuantizeLinear", "Reciprocal", "Relu", "Resize", "ReverseSequence", "Round", "Selu",
    "Shrink", "Sigmoid", "Sign", "Sin", "Sinh", "Slice", "Softmax", "Softplus", "Softsign",
    "Split", "Sqrt", "Tan", "Tanh", "ThresholdedRelu", "Tile", "TopK", "Transpose", "Trilu",
    "ScatterElements", "ScatterND", "GatherElements", "RMSNormalization",
})
# Ops whose output has the largest rank of their inputs (multidirectional broadcasting).
_BROADCAST = frozenset({
    "Add", "And", "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "Div", "Equal", "Greater",
    "GreaterOrEqual", "Less", "LessOrEqual", "Max", "Mean", "Min", "Mod", "Mul", "Or", "Pow",
    "Sub", "Sum", "Where", "Xor",
})


def _unsqueeze(node: onnx.NodeProto, ranks: list[int | None], lengths: list[int | None]) -> int | None:
    axes = attribute(node, "axes")
    added = len(axes) if axes is not None else (lengths[1] if len(lengths) > 1 else None)
    return None if ranks[0] is None or added is None else ranks[0] + added


def _squeeze(node: onnx.NodeProto, ranks: list[int | None], lengths: list[int | None]) -> int | None:
    axes = attribute(node, "axes")
    removed = len(axes) if axes is not None else (lengths[1] if len(lengths) > 1 else None)
    return None if ranks[0] is None or removed is None else ranks[0] - removed


def _reshape(node: onnx.NodeProto, ranks: list[int | None], lengths: list[int | None]) -> int | None:
    return lengths[1] if len(lengths) > 1 else None


def _constant_of_shape(node: onnx.NodeProto, ranks: list[int | None],
                       lengths: list[int | None]) -> int | None:
    return lengths[0] if lengths else None


def _expand(node: onnx.NodeProto, ranks: list[int | None],
            lengths: list[int | None]) -> int | None:
    size = lengths[1] if len(lengths) > 1 else None
    return None if ranks[0] is None or size is None else max(ranks[0], size)


def _gather(node: onnx.NodeProto, ranks: list[int | None], lengths: list[int | None]) -> int | None:
    data, indices = ranks[0], ranks[1] if len(ranks) > 1 else None
    return None if data is None or indices is None else data + indices - 1


def _matmul(node: onnx.NodeProto, ranks: list[int | None], lengths: list[int | None]) -> int | None:
    a, b = ranks[0], ranks[1] if len(ranks) > 1 else None
    if a is None or b is None:
        return None
    if a == 1 and b == 1:
        return 0
    return max(a, b) - (1 if min(a, b) == 1 else 0)


def _concat(node: onnx.NodeProto, ranks: list[int | None], lengths: list[int | None]) -> int | None:
    return next((r for r in ranks if r is not None), None)


# Rules read the inputs' ranks and, for 1-D inputs of static size, their lengths.
Rule = Callable[[onnx.NodeProto, list[int | None], list[int | None]], int | None]
_RULES: dict[str, Rule] = {
    "Unsqueeze": _unsqueeze,
    "ConstantOfShape": _constant_of_shape,
    "Expand": _expand,
    "Range": lambda node, ranks, lengths: 1,
    "Squeeze": _squeeze,
    "Reshape": _reshape,
    "Gather": _gather,
    "MatMul": _matmul,
    "Concat": _concat,
}


def _rank_of(node: onnx.NodeProto, ranks: list[int | None], lengths: list[int | None]) -> int | None:
    if node.op_type in _SAME_RANK:
        return ranks[0] if ranks else None
    if node.op_type in _BROADCAST:
        return None if not ranks or None in ranks else max(ranks)
    rule = _RULES.get(node.op_type)
    return rule(node, ranks, lengths) if rule else None


def _shape_length(node: onnx.NodeProto, rank: int) -> int:
    """The length of `Shape`'s output (its `start`/`end` clamp like Python slices)."""
    start = next((a.i for a in node.attribute if a.name == "start"), 0)
    end = next((a.i for a in node.attribute if a.name == "end"), rank)
    return len(range(rank)[slice(start, end)])


def _known_lengths(values) -> dict[str, int]:
    return {
        v.name: v.type.tensor_type.shape.dim[0].dim_value
        for v in values
        if v.type.WhichOneof("value") == "tensor_type"
        and len(v.type.tensor_type.shape.dim) == 1
        and v.type.tensor_type.shape.dim[0].HasField("dim_value")
    }


def _known_ranks(values) -> dict[str, int]:
    return {
        v.name: len(v.type.tensor_type.shape.dim)
        for v in values
        if v.type.WhichOneof("value") == "tensor_type" and v.type.tensor_type.HasField("shape")
    }


def _subgraphs(node: onnx.NodeProto) -> dict[str, onnx.GraphProto]:
    return {a.name: a.g for a in node.attribute if a.HasField("g")}


def _shapeless(values) -> dict[str, onnx.ValueInfoProto]:
    return {v.name: v for v in values if v.type.WhichOneof("value") == "tensor_type"
            and not v.type.tensor_type.HasField("shape")}


def _give_rank(value: onnx.ValueInfoProto, rank: int) -> None:
    value.type.tensor_type.shape.dim.extend(onnx.TensorShapeProto.Dimension() for _ in range(rank))


def _give_length(value: onnx.ValueInfoProto | None, length: int) -> None:
    """Make the unknown length of a 1-D `value` (a `Shape` of a tensor whose rank inference
    left out) `length`: the importer reads a `Reshape` to a shape of unknown length as one to
    rank 0."""
    if value is None or value.type.WhichOneof("value") != "tensor_type":
        return
    dims = value.type.tensor_type.shape.dim
    if len(dims) == 1 and not dims[0].HasField("dim_value"):
        dims[0].Clear()
        dims[0].dim_value = length


def _seed_body(node: onnx.NodeProto, body: onnx.GraphProto, ranks: dict[str, int]) -> None:
    """Give a Loop or Scan body's shapeless inputs the ranks the node's inputs imply: a Loop's
    carried values (after the trip count and condition) have their initial values' ranks, a
    Scan's states theirs and its scan inputs one less."""
    if node.op_type == "Loop":
        pairs = [(v, ranks.get(a)) for v, a in zip(body.input[2:], node.input[2:], strict=False)]
    else:  # Scan (opset 9 and later: no batch axis)
        scans = next((a.i for a in node.attribute if a.name == "num_scan_inputs"), 0)
        states = len(node.input) - scans
        pairs = [(v, ranks.get(a) if i < states or ranks.get(a) is None else ranks[a] - 1)
                 for i, (v, a) in enumerate(zip(body.input, node.input, strict=False))]
    for value, rank in pairs:
        if rank is not None and value.name in _shapeless([value]):
            _give_rank(value, rank)


def _output_rank(graph: onnx.GraphProto, index: int) -> int | None:
    if index >= len(graph.output):
        return None
    return _known_ranks([graph.output[index]]).get(graph.output[index].name)


def _region_ranks(node: onnx.NodeProto, ranks: list[int | None]) -> list[int | None]:
    """Output ranks of If, Loop and Scan, from their (completed) subgraphs."""
    graphs = _subgraphs(node)
    count = len(node.output)
    if node.op_type == "If":
        then, other = (_ranks_of_outputs(graphs.get(b), count)
                       for b in ("then_branch", "else_branch"))
        return [t if t == e else None for t, e in zip(then, other, strict=True)]
    body = graphs.get("body")
    if body is None:
        return [None] * count
    if node.op_type == "Loop":
        carried = len(node.input) - 2
        skip = 1  # the body's first output is the condition
    else:
        scans = next((a.i for a in node.attribute if a.name == "num_scan_inputs"), 0)
        carried, skip = len(node.input) - scans, 0
    out: list[int | None] = []
    for i in range(count):
        rank = _output_rank(body, skip + i)
        out.append(rank if i < carried or rank is None else rank + 1)  # scan outputs stack
    return out


def _ranks_of_outputs(graph: onnx.GraphProto | None, count: int) -> list[int | None]:
    return [_output_rank(graph, i) if graph is not None else None for i in range(count)]


def complete_ranks(graph: onnx.GraphProto, outer: dict[str, int] | None = None,
                   outer_lengths: dict[str, int] | None = None) -> None:
    """Give every tensor of `graph` (value_info and, in a subgraph, outputs) that has an
    element type but no shape the rank its producer implies (dims unknown), in place;
    subgraphs first, seeing the outer ranks."""
    ranks = dict(outer or {})
    ranks.update(_known_ranks(graph.input))
    ranks.update({t.name: len(t.dims) for t in graph.initializer})
    ranks.update(_known_ranks(graph.value_info))
    ranks.update(_known_ranks(graph.output))
    lengths = dict(outer_lengths or {})
    for values in (graph.input, graph.value_info, graph.output):
        lengths.update(_known_lengths(values))
    lengths.update({t.name: t.dims[0] for t in graph.initializer if len(t.dims) == 1})
    shapeless = _shapeless(graph.value_info)
    outputs = _shapeless(graph.output)
    declared = {v.name: v for v in (*graph.value_info, *graph.output)}
    for node in graph.node:  # topological order: one sweep
        if node.op_type == "Constant":
            value = next((a.t for a in node.attribute if a.name == "value"), None)
            if value is not None:
                ranks.setdefault(node.output[0], len(value.dims))
                if len(value.dims) == 1:
                    lengths.setdefault(node.output[0], value.dims[0])
            continue
        inputs = [ranks.get(name) if name else None for name in node.input]
        if node.op_type == "Shape" and inputs and inputs[0] is not None:
            lengths[node.output[0]] = _shape_length(node, inputs[0])
            _give_length(declared.get(node.output[0]), lengths[node.output[0]])
        for name, sub in _subgraphs(node).items():
            if node.op_type in ("Loop", "Scan") and name == "body":
                _seed_body(node, sub, ranks)
            complete_ranks(sub, ranks, lengths)
        if node.op_type in ("If", "Loop", "Scan"):
            out_ranks = _region_ranks(node, inputs)
        else:
            sizes = [lengths.get(name) if name else None for name in node.input]
            missing = (shapeless.keys() | outputs.keys()) & set(node.output)
            rank = _rank_of(node, inputs, sizes) if missing else None
            out_ranks = [rank] * len(node.output)
        for name, rank in zip(node.output, out_ranks, strict=True):
            if rank is None or name in ranks:
                continue
            for pending in (shapeless, outputs):
                if name in pending:
                    _give_rank(pending.pop(name), rank)
            ranks[name] = rank


def rankless(graph: onnx.GraphProto) -> list[tuple[onnx.NodeProto, str]]:
    """(producer, value) of every node output with an element type and no rank, subgraphs
    included: what IREE's importer would misread as a scalar."""
    shapeless = set(_shapeless(graph.value_info))
    found = [(node, name) for node in graph.node for name in node.output if name in shapeless]
    for node in graph.node:
        for sub in subgraphs(node):
            found += rankless(sub)
    return found
