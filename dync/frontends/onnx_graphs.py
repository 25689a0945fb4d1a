"""Small helpers over ONNX graphs shared by the frontend's steps: fresh value names, the
subgraphs of a node, attribute values with defaults, value types, shapes and the constant values
a graph defines, renaming, and `GraphEditor`, which the rewrites of a graph's nodes emit their
replacement nodes with."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ..errors import UnsupportedConstructError


def fresh_name(taken: set[str], hint: str) -> str:
    """`hint`, or `hint_<n>` for the first n that makes it unused; recorded in `taken`."""
    name, n = hint, 0
    while name in taken:
        n += 1
        name = f"{hint}_{n}"
    taken.add(name)
    return name


def subgraphs(node: onnx.NodeProto) -> list[onnx.GraphProto]:
    """The graphs a node's attributes hold (an If's branches, a Loop's or Scan's body)."""
    return [g for a in node.attribute for g in ([a.g] if a.HasField("g") else []) + list(a.graphs)]


def copied(model: onnx.ModelProto) -> onnx.ModelProto:
    duplicate = onnx.ModelProto()
    duplicate.CopyFrom(model)
    return duplicate


def graph_arguments(graph: onnx.GraphProto) -> list[onnx.ValueInfoProto]:
    """The graph inputs that become arguments: initializers (old-style weights) excluded."""
    initialized = {t.name for t in graph.initializer}
    return [i for i in graph.input if i.name not in initialized]


def all_nodes(graph: onnx.GraphProto) -> Iterator[onnx.NodeProto]:
    """The nodes of `graph` and of its nodes' subgraphs, each node before its subgraphs'."""
    for node in graph.node:
        yield node
        for sub in subgraphs(node):
            yield from all_nodes(sub)


def attribute(node: onnx.NodeProto, name: str, default=None):
    """The value of `node`'s attribute `name` (a string decoded), or `default` when absent."""
    for a in node.attribute:
        if a.name == name:
            value = helper.get_attribute_value(a)
            return value.decode() if isinstance(value, bytes) else value
    return default


def value_types(graph: onnx.GraphProto) -> dict[str, onnx.TypeProto]:
    """The declared type of each input, output and `value_info` of `graph`."""
    return {v.name: v.type for v in [*graph.input, *graph.value_info, *graph.output]}


def constant_values(graph: onnx.GraphProto,
                    max_elements: int | None = None) -> dict[str, np.ndarray]:
    """The values `graph` defines at compile time: its initializers (weights, also those listed
    as inputs, which dync does not make arguments) and its `Constant` nodes; those of more than
    `max_elements` elements left out."""
    values = {t.name: numpy_helper.to_array(t) for t in graph.initializer
              if max_elements is None or np.prod(t.dims) <= max_elements}
    for node in graph.node:
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
            value = constant_value(node)
            if value is not None and (max_elements is None or value.size <= max_elements):
                values[node.output[0]] = value
    return values


def constant_value(node: onnx.NodeProto) -> np.ndarray | None:
    """The value of a `Constant` node; None for a string or sparse one (left to the importer)."""
    a = node.attribute[0] if len(node.attribute) == 1 else None
    if a is None:
        return None
    if a.name == "value":
        return numpy_helper.to_array(a.t)
    if a.name in ("value_int", "value_ints"):
        return np.array(helper.get_attribute_value(a), np.int64)
    if a.name in ("value_float", "value_floats"):
        return np.array(helper.get_attribute_value(a), np.float32)
    return None


def names_in(graph: onnx.GraphProto) -> set[str]:
    """Every value name `graph` and its subgraphs declare or define."""
    names = {v.name for v in [*graph.input, *graph.output, *graph.value_info]}
    names |= {t.name for t in graph.initializer}
    for node in graph.node:
        names.update(node.output)
        for sub in subgraphs(node):
            names |= names_in(sub)
    return names


def outer_reads(graph: onnx.GraphProto) -> set[str]:
    """The names `graph` (and its subgraphs) read but do not define."""
    defined = {v.name for v in graph.input} | {t.name for t in graph.initializer}
    defined |= {o for n in graph.node for o in n.output}
    reads = {i for n in graph.node for i in n.input if i}
    for node in graph.node:
        for sub in subgraphs(node):
            reads |= outer_reads(sub)
    reads |= {v.name for v in graph.output}
    return reads - defined


def renamed(graph: onnx.GraphProto, names: dict[str, str]) -> None:
    """Rename, in place, the uses of `names` in `graph` and its subgraphs."""
    for node in graph.node:
        node.input[:] = [names.get(i, i) for i in node.input]
        node.output[:] = [names.get(o, o) for o in node.output]
        for sub in subgraphs(node):
            renamed(sub, names)
    for value in [*graph.output, *graph.value_info]:
        value.name = names.get(value.name, value.name)


def named_shape(t: onnx.TypeProto | None) -> list[int | str] | None:
    """The dims of a tensor type, each a number or a `dim_param` name; None if a dim is
    neither, or the type has no shape."""
    if t is None or t.WhichOneof("value") != "tensor_type" or not t.tensor_type.HasField("shape"):
        return None
    dims = [d.dim_value if d.HasField("dim_value") else d.dim_param or None
            for d in t.tensor_type.shape.dim]
    return None if None in dims else dims


class GraphEditor:
    """One graph being rewritten: fresh names, the element type, rank and constant value of
    every value, the nodes emitted in place of the one being rewritten."""

    def __init__(self, graph: onnx.GraphProto, opset: int, outer: dict[str, onnx.TypeProto]):
        self.opset = opset
        self.types = {**outer, **value_types(graph)}
        # Values defined before any node of this graph: the scope's, the inputs, initializers.
        self.given = set(outer) | {v.name for v in graph.input} | {
            t.name for t in graph.initializer}
        for tensor in graph.initializer:
            self.types[tensor.name] = helper.make_tensor_type_proto(tensor.data_type, tensor.dims)
        self.constants = constant_values(graph)
        self.taken = set(self.types) | {o for n in graph.node for o in n.output}
        self.emitted: list[onnx.NodeProto] = []
        self.pending: list[onnx.NodeProto] = []  # nodes that go after the one being rewritten
        # A function body that replaces the node being rewritten: its nodes are rewritten next.
        self.expanded: list[onnx.NodeProto] = []
        self.declared: list[onnx.ValueInfoProto] = []  # types of new values, for inference

    def defined(self) -> set[str]:
        """The values defined so far: given, or made by the nodes emitted."""
        return self.given | {o for n in self.emitted for o in n.output}

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

    def unsqueeze(self, x: str, axes: list[int], out: str | None = None) -> str:
        if self.opset >= 13:
            return self.op("Unsqueeze", x, self.const(axes, np.int64), out=out)
        return self.op("Unsqueeze", x, axes=axes, out=out)

    def sizes(self, x: str, start: int, end: int) -> str:
        """`x`'s sizes from axis `start` up to `end`, a 1-D int64 value."""
        if self.opset >= 15:
            return self.op("Shape", x, start=start, end=end)
        return self.op("Slice", self.op("Shape", x), self.const([start], np.int64),
                       self.const([end], np.int64))

    def reduce(self, op_type: str, x: str, axes: list[int], keepdims: int,
               out: str | None = None) -> str:
        """`op_type` (ReduceSum, ReduceMax, ...) of `x` over `axes`: an input from the opset
        that made it one (13 for ReduceSum, 18 for the others), else an attribute."""
        if self.opset >= (13 if op_type == "ReduceSum" else 18):
            return self.op(op_type, x, self.const(axes, np.int64), keepdims=keepdims, out=out)
        return self.op(op_type, x, axes=axes, keepdims=keepdims, out=out)

    def size(self, x: str, axis: int) -> str:
        """`x`'s size along `axis`, a 0-d int64 value."""
        return self.squeeze(self.op("Gather", self.op("Shape", x),
                                    self.const([axis], np.int64)), [0])

    def rank(self, name: str) -> int | None:
        t = self.types.get(name)
        if t is None or not t.tensor_type.HasField("shape"):
            return None
        return len(t.tensor_type.shape.dim)


def padded_with(g: GraphEditor, x: str, pads: list[int], rank: int, fill: str) -> str:
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


def reversed_along(g: GraphEditor, x: str, axis: int, size: int | None = None) -> str:
    """`x` reversed along `axis`: a Gather of `n - 1, ..., 0`, constant where the size is
    known (a Slice with step -1 is not lowered right, see `onnx_rewrites`)."""
    if size is not None:
        indices = g.const(np.arange(size - 1, -1, -1), np.int64)
    else:
        minus_one = g.const(-1, np.int64)
        indices = g.op("Range", g.op("Add", g.size(x, axis), minus_one), minus_one, minus_one)
    return g.op("Gather", x, indices, axis=axis)


def reversed_within(g: GraphEditor, x: str, lengths: str, time_axis: int, batch_axis: int,
                    rank: int, out: str | None = None) -> str:
    """`x` reversed along `time_axis` within each batch's length (`lengths`, int64, along
    `batch_axis`), as ONNX's ReverseSequence: a GatherElements at `len - 1 - t` below the
    length, `t` from it on."""
    def along(axis: int) -> str:
        return g.const([-1 if d == axis else 1 for d in range(rank)], np.int64)

    shape = g.op("Shape", x)
    t = g.op("Reshape", g.op("Range", g.const(0, np.int64), g.size(x, time_axis),
                             g.const(1, np.int64)), along(time_axis))
    length = g.op("Reshape", lengths, along(batch_axis))
    reversed_t = g.op("Sub", g.op("Sub", length, g.const(1, np.int64)), t)
    index = g.op("Where", g.op("Less", t, length), reversed_t, t)
    return g.op("GatherElements", x, g.op("Expand", index, shape), axis=time_axis, out=out)


def node_source(node: onnx.NodeProto) -> str | None:
    """Where an error about `node` points: its name, if it has one."""
    return f"node {node.name!r}" if node.name else None


def gathered_along(g: GraphEditor, x: str, gathers: list[tuple[int, np.ndarray]],
                   out: str) -> None:
    """`x` gathered along each (axis, constant indices) of `gathers` in turn, into `out`."""
    for k, (axis, indices) in enumerate(gathers):
        x = g.op("Gather", x, g.const(indices, np.int64), axis=axis,
                 out=out if k == len(gathers) - 1 else None)
    if not gathers:
        g.op("Identity", x, out=out)


def static_result(g: GraphEditor, x: str, out: str) -> None:
    """`x` as `out`, reshaped to the static shape shape inference gave `out` where it has one:
    the importer keeps that type, and a Gather of run-time indices is dynamic."""
    shape = named_shape(g.types.get(out))
    if shape is not None and all(isinstance(d, int) for d in shape):
        g.op("Reshape", x, g.const(shape, np.int64), out=out)
    else:
        g.op("Identity", x, out=out)


def refuse_wrong_values(node: onnx.NodeProto, what: str, why: str) -> None:
    """Refuse `node`: IREE would lower it (`what` is the attribute or case) to wrong values."""
    raise UnsupportedConstructError(
        f"ONNX {node.op_type} {what}".rstrip(),
        f"IREE's lowering of ONNX {node.op_type} {what} gives other values than the ONNX spec: "
        f"{why}".replace("  ", " "),
        node_source(node))
