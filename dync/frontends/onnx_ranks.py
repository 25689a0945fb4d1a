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


def _attribute_ints(node: onnx.NodeProto, name: str) -> list[int] | None:
    return next((list(a.ints) for a in node.attribute if a.name == name), None)


def _unsqueeze(node: onnx.NodeProto, ranks: list[int | None], lengths: list[int | None]) -> int | None:
    axes = _attribute_ints(node, "axes")
    added = len(axes) if axes is not None else (lengths[1] if len(lengths) > 1 else None)
    return None if ranks[0] is None or added is None else ranks[0] + added


def _squeeze(node: onnx.NodeProto, ranks: list[int | None], lengths: list[int | None]) -> int | None:
    axes = _attribute_ints(node, "axes")
    removed = len(axes) if axes is not None else (lengths[1] if len(lengths) > 1 else None)
    return None if ranks[0] is None or removed is None else ranks[0] - removed


def _reshape(node: onnx.NodeProto, ranks: list[int | None], lengths: list[int | None]) -> int | None:
    return lengths[1] if len(lengths) > 1 else None


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


def complete_ranks(graph: onnx.GraphProto, outer: dict[str, int] | None = None,
                   outer_lengths: dict[str, int] | None = None) -> None:
    """Give every tensor in `graph.value_info` that has an element type but no shape the rank
    its producer implies (dims unknown), in place; subgraphs too, seeing the outer ranks."""
    ranks = dict(outer or {})
    ranks.update(_known_ranks(graph.input))
    ranks.update({t.name: len(t.dims) for t in graph.initializer})
    ranks.update(_known_ranks(graph.value_info))
    ranks.update(_known_ranks(graph.output))
    lengths = dict(outer_lengths or {})
    for values in (graph.input, graph.value_info, graph.output):
        lengths.update(_known_lengths(values))
    lengths.update({t.name: t.dims[0] for t in graph.initializer if len(t.dims) == 1})
    shapeless = {
        v.name: v for v in graph.value_info
        if v.type.WhichOneof("value") == "tensor_type" and not v.type.tensor_type.HasField("shape")
    }
    for node in graph.node:  # topological order: one sweep
        if node.op_type == "Constant":
            continue
        inputs = [ranks.get(name) if name else None for name in node.input]
        if node.op_type == "Shape" and inputs and inputs[0] is not None:
            lengths[node.output[0]] = _shape_length(node, inputs[0])
        sizes = [lengths.get(name) if name else None for name in node.input]
        rank = _rank_of(node, inputs, sizes) if shapeless.keys() & set(node.output) else None
        for name in node.output:
            if rank is not None and name in shapeless:
                shapeless.pop(name).type.tensor_type.shape.dim.extend(
                    onnx.TensorShapeProto.Dimension() for _ in range(rank))
                ranks[name] = rank
        for attribute in node.attribute:
            for sub in ([attribute.g] if attribute.HasField("g") else []) + list(attribute.graphs):
                complete_ranks(sub, ranks, lengths)


def rankless(graph: onnx.GraphProto) -> list[tuple[onnx.NodeProto, str]]:
    """(producer, value) of every node output with an element type and no rank, subgraphs
    included: what IREE's importer would misread as a scalar."""
    shapeless = {
        v.name for v in graph.value_info
        if v.type.WhichOneof("value") == "tensor_type" and not v.type.tensor_type.HasField("shape")
    }
    found = [(node, name) for node in graph.node for name in node.output if name in shapeless]
    for node in graph.node:
        for attribute in node.attribute:
            for sub in ([attribute.g] if attribute.HasField("g") else []) + list(attribute.graphs):
                found += rankless(sub)
    return found
