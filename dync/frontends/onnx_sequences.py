"""ONNX sequences of a length known at compile time, replaced by their tensors.

IREE's importer lowers few sequence ops, and IREE's ABI passes no sequence. But a sequence
whose length follows from the model and its example inputs (a sequence input fixed by the
example, `SequenceConstruct`, `SplitToSequence` of a static dim, `SequenceInsert` at a
constant position, ...) is a list of tensor names at compile time: every sequence op is
evaluated on those lists here, `SequenceMap`'s body is inlined once per element, and a
sequence output becomes that many tensor outputs (``y.0``, ``y.1``, ...), nested back into a
list by the module's output tree. If any sequence value depends on run-time values (a
position or split computed by the graph, a sequence carried by a Loop or returned by an If),
the graph is left unchanged and the importer's error names the op.
"""

from __future__ import annotations

import json

import numpy as np
import onnx
from onnx import helper, numpy_helper

from .onnx_graphs import attribute, constant_values, fresh_name, value_types


class _Dynamic(Exception):
    """A sequence whose length or content is not known at compile time."""


class _Evaluator:
    def __init__(self, graph: onnx.GraphProto):
        self.graph = graph
        self.constants = constant_values(graph)
        self.types = value_types(graph)
        self.sequences: dict[str, list[str]] = {}
        self.taken = {v.name for v in [*graph.input, *graph.value_info, *graph.output]}
        self.taken |= {o for n in graph.node for o in n.output}
        self.nodes: list[onnx.NodeProto] = []

    def fresh(self, hint: str) -> str:
        return fresh_name(self.taken, hint)

    def emit(self, op: str, inputs: list[str], outputs: list[str] | None = None,
             **attributes) -> list[str]:
        outputs = outputs or [self.fresh(f"dync_{op.lower()}")]
        self.nodes.append(helper.make_node(op, inputs, outputs, **attributes))
        return outputs

    def constant(self, name: str) -> np.ndarray:
        if name not in self.constants:
            raise _Dynamic(f"{name!r} is computed at run time")
        return self.constants[name]

    def dim(self, name: str, axis: int) -> int:
        t = self.types.get(name)
        shape = t.tensor_type.shape if t is not None and t.WhichOneof("value") == "tensor_type" \
            else None
        if shape is None or not -len(shape.dim) <= axis < len(shape.dim):
            raise _Dynamic(f"the rank of {name!r} is unknown")
        d = shape.dim[axis]
        if not d.HasField("dim_value"):
            raise _Dynamic(f"dim {axis} of {name!r} is dynamic")
        return d.dim_value

    def sequence(self, name: str) -> list[str]:
        if name not in self.sequences:
            raise _Dynamic(f"sequence {name!r} comes from an op dync cannot evaluate")
        return self.sequences[name]


def _position(e: _Evaluator, node: onnx.NodeProto, index: int, length: int, default: int,
              insert: bool = False) -> int:
    if len(node.input) <= index or not node.input[index]:
        return default
    position = int(e.constant(node.input[index]))
    bound = length + (1 if insert else 0)
    if not -bound <= position < bound:
        raise _Dynamic(f"position {position} is outside a sequence of {length}")
    return position + length if position < 0 else position


def _split(e: _Evaluator, node: onnx.NodeProto) -> list[str]:
    x = node.input[0]
    axis = attribute(node, "axis", 0)
    size = e.dim(x, axis)
    if len(node.input) > 1 and node.input[1]:
        split = np.atleast_1d(e.constant(node.input[1])).astype(np.int64)
        if split.size == 1 and e.constant(node.input[1]).ndim == 0:
            step = int(split[0])
            split = np.array([step] * (size // step) + ([size % step] if size % step else []))
        pieces = [e.fresh(f"{node.output[0]}.{i}") for i in range(len(split))]
        sizes = e.emit("Constant", [], value=numpy_helper.from_array(split, "split"))
        e.emit("Split", [x, *sizes], pieces, axis=axis)
        return pieces
    pieces = [e.fresh(f"{node.output[0]}.{i}") for i in range(size)]
    if attribute(node, "keepdims", 1):
        e.emit("Split", [x], pieces, axis=axis, num_outputs=size)
        return pieces
    kept = [e.fresh(f"{p}.kept") for p in pieces]
    e.emit("Split", [x], kept, axis=axis, num_outputs=size)
    axes = e.emit("Constant", [], value=numpy_helper.from_array(np.array([axis]), "axes"))
    for k, p in zip(kept, pieces, strict=True):
        e.emit("Squeeze", [k, *axes], [p])
    return pieces


def _sequence_map(e: _Evaluator, node: onnx.NodeProto) -> None:
    body = attribute(node, "body", None)
    count = len(e.sequence(node.input[0]))
    outputs: list[list[str]] = [[] for _ in node.output]
    for i in range(count):
        names: dict[str, str] = {}
        for formal, actual in zip(body.input, node.input, strict=True):
            names[formal.name] = (e.sequence(actual)[i] if actual in e.sequences else actual)
        for inner in body.node:
            if any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
                   for a in inner.attribute):
                raise _Dynamic("a SequenceMap body with subgraphs")
            copy = onnx.NodeProto()
            copy.CopyFrom(inner)
            copy.input[:] = [names.get(n, n) for n in inner.input]
            for j, out in enumerate(inner.output):
                names[out] = e.fresh(f"{node.name or 'map'}.{i}.{out}")
                copy.output[j] = names[out]
            e.nodes.append(copy)
        for j, formal in enumerate(body.output):
            outputs[j].append(names.get(formal.name, formal.name))
    for name, items in zip(node.output, outputs, strict=True):
        e.sequences[name] = items


def _always_true(e: _Evaluator, body: onnx.GraphProto, condition: str) -> bool:
    """Whether a Loop goes on every trip: its condition is a constant true and the body
    passes its condition input through (or yields a constant true)."""
    if condition and not bool(e.constant(condition)):
        return False
    out = body.output[0].name
    producer = next((n for n in body.node if out in n.output), None)
    if producer is None:
        return out == body.input[1].name
    if producer.op_type == "Identity":
        return producer.input[0] == body.input[1].name
    return producer.op_type == "Constant" and bool(
        numpy_helper.to_array(producer.attribute[0].t))


def _unroll(e: _Evaluator, node: onnx.NodeProto) -> None:
    """A Loop over sequences with a trip count known at compile time, unrolled: the body once
    per trip, its sequence ops evaluated, its carried values threaded through."""
    body = attribute(node, "body", None)
    trips = int(e.constant(node.input[0])) if node.input[0] else None
    if trips is None or not _always_true(e, body, node.input[1] if len(node.input) > 1 else ""):
        raise _Dynamic("a Loop over sequences whose trip count is computed at run time")
    if any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
           for n in body.node for a in n.attribute):
        raise _Dynamic("a Loop over sequences with nested subgraphs")
    carried = list(node.input[2:])
    scanned: list[list[str]] = [[] for _ in body.output[1 + len(carried):]]
    true = e.emit("Constant", [], value=numpy_helper.from_array(np.array(True), "true"))[0]
    for i in range(trips):
        names = {body.input[0].name: e.emit("Constant", [], value=numpy_helper.from_array(
            np.array(i, np.int64), "trip"))[0], body.input[1].name: true}
        e.constants[names[body.input[0].name]] = np.array(i, np.int64)
        for formal, actual in zip(body.input[2:], carried, strict=True):
            names[formal.name] = actual
        for inner in body.node:
            copy = onnx.NodeProto()
            copy.CopyFrom(inner)
            copy.input[:] = [names.get(n, n) for n in inner.input]
            for j, out in enumerate(inner.output):
                if out:
                    names[out] = e.fresh(f"{node.name or 'loop'}.{i}.{out}")
                    copy.output[j] = names[out]
            if copy.op_type == "Constant" and copy.attribute[0].name == "value":
                e.constants[copy.output[0]] = numpy_helper.to_array(copy.attribute[0].t)
            if not _evaluate(e, copy):
                e.nodes.append(copy)
        outs = [names.get(v.name, v.name) for v in body.output]
        carried = outs[1:1 + len(carried)]
        for j, name in enumerate(outs[1 + len(carried):]):
            scanned[j].append(name)
    for result, value in zip(node.output, carried, strict=False):
        if value in e.sequences:
            e.sequences[result] = e.sequences[value]
        else:
            e.emit("Identity", [value], [result])
    for result, items in zip(node.output[len(carried):], scanned, strict=True):
        if not items:
            raise _Dynamic("a Loop with scan outputs and no trips")
        axes = e.emit("Constant", [], value=numpy_helper.from_array(np.array([0]), "axes"))
        rows = [e.emit("Unsqueeze", [item, *axes])[0] for item in items]
        e.emit("Concat", rows, [result], axis=0)


def _sequence_loop(e: _Evaluator, node: onnx.NodeProto) -> bool:
    body = attribute(node, "body", None)
    return any(n in e.sequences for n in node.input) or any(
        inner.op_type.startswith("Sequence") for inner in body.node)


def _evaluate(e: _Evaluator, node: onnx.NodeProto) -> bool:
    """Evaluate `node` if it is a sequence op (True), else False."""
    op = node.op_type
    if op == "SequenceConstruct":
        e.sequences[node.output[0]] = list(node.input)
    elif op == "SequenceEmpty":
        e.sequences[node.output[0]] = []
    elif op == "SequenceInsert":
        items = list(e.sequence(node.input[0]))
        items.insert(_position(e, node, 2, len(items), len(items), insert=True), node.input[1])
        e.sequences[node.output[0]] = items
    elif op == "SequenceErase":
        items = list(e.sequence(node.input[0]))
        if not items:
            raise _Dynamic("erasing from an empty sequence")
        del items[_position(e, node, 1, len(items), len(items) - 1)]
        e.sequences[node.output[0]] = items
    elif op == "SequenceAt":
        items = e.sequence(node.input[0])
        e.emit("Identity", [items[_position(e, node, 1, len(items), -1)]], [node.output[0]])
    elif op == "SequenceLength":
        count = np.array(len(e.sequence(node.input[0])), np.int64)
        e.emit("Constant", [], [node.output[0]], value=numpy_helper.from_array(count, "length"))
        e.constants[node.output[0]] = count
    elif op == "ConcatFromSequence":
        items = e.sequence(node.input[0])
        if not items:
            raise _Dynamic("concatenating an empty sequence")
        axis = attribute(node, "axis", 0)
        if attribute(node, "new_axis", 0):
            axes = e.emit("Constant", [], value=numpy_helper.from_array(np.array([axis]), "a"))
            items = [e.emit("Unsqueeze", [item, *axes])[0] for item in items]
        e.emit("Concat", items, [node.output[0]], axis=axis)
    elif op == "SplitToSequence":
        e.sequences[node.output[0]] = _split(e, node)
    elif op == "SequenceMap":
        _sequence_map(e, node)
    elif op == "Loop" and _sequence_loop(e, node):
        _unroll(e, node)
    elif op in ("Identity", "OptionalGetElement") and node.input[0] in e.sequences:
        e.sequences[node.output[0]] = e.sequences[node.input[0]]
    else:
        if any(name in e.sequences for name in node.input):
            raise _Dynamic(f"{op} takes a sequence")
        return False
    return True


def _uses_sequences(graph: onnx.GraphProto) -> bool:
    values = [*graph.input, *graph.output, *graph.value_info]
    return any(v.type.WhichOneof("value") == "sequence_type" for v in values) or any(
        n.op_type.startswith("Sequence") or n.op_type in ("SplitToSequence", "ConcatFromSequence")
        for n in graph.node)


def eliminate_sequences(graph: onnx.GraphProto) -> tuple[list[str], list[int | None] | None]:
    """Replace the sequences of `graph` (in place) by their tensors when all are known at
    compile time. Returns notes and, per graph output, the length of a sequence output (None
    for a tensor), or ([], None) when nothing changed."""
    if not _uses_sequences(graph):
        return [], None
    e = _Evaluator(graph)
    try:
        for node in graph.node:
            if not _evaluate(e, node):
                e.nodes.append(node)
        outputs, groups = [], []
        for output in graph.output:
            if output.type.WhichOneof("value") != "sequence_type":
                outputs.append(output)
                groups.append(None)
                continue
            items = e.sequence(output.name)
            element = output.type.sequence_type.elem_type
            for i, item in enumerate(items):
                name = e.fresh(f"{output.name}.{i}")
                e.emit("Identity", [item], [name])
                value = onnx.ValueInfoProto(name=name)
                value.type.CopyFrom(element)
                outputs.append(value)
            groups.append(len(items))
    except _Dynamic:
        return [], None
    del graph.node[:]
    graph.node.extend(e.nodes)
    del graph.output[:]
    graph.output.extend(outputs)
    kept = [v for v in graph.value_info if v.type.WhichOneof("value") != "sequence_type"]
    del graph.value_info[:]
    graph.value_info.extend(kept)
    return ["ONNX sequences evaluated at compile time (their lengths are fixed)"], groups


def output_tree(groups: list[int | None]) -> str:
    """A pytree spec (the JSON `torch.utils._pytree.treespec_dumps` writes) of a list whose
    items are tensors (None) or lists of that many tensors."""
    leaf = {"type": None, "context": None, "children_spec": []}

    def container(children: list) -> dict:
        return {"type": "builtins.list", "context": "null", "children_spec": children}

    root = container([leaf if g is None else container([leaf] * g) for g in groups])
    return json.dumps([1, root])
