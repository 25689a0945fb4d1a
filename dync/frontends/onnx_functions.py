"""ONNX ops defined by a function: a node replaced by its op's function body from the ONNX
schema, as ONNX's `_expanded` node tests spell them out.

Two uses. The rewrites (`onnx_rewrites`) expand a node whose lowering in IREE's importer gives
other values than the spec. And the frontend expands every op IREE's importer has no lowering
for at all, where the schema defines one (`Attention`, `RMSNormalization`, `RotaryEmbedding`,
`Swish`, `AffineGrid`, ...): the import is retried with those op types in `expand`, so dync
follows whatever the installed importer lowers. A body's own nodes of a type in `expand` (a
`SwiGLU` body's `Swish`) are expanded in turn.

A body's names are made fresh in the graph it goes into, its subgraphs' too (a Scan body
reads the values the function defines before the Scan: `LinearAttention`'s did, under names
the inlined body no longer had). A body a rewrite expands goes back to the rewrites, its
values typed and its constants known (`GraphEditor.expanded`).
"""

from __future__ import annotations

from collections.abc import Callable

import onnx
from onnx import helper

from .onnx_graphs import GraphEditor, constant_value, subgraphs

DEFAULT_DOMAINS = ("", "ai.onnx")


def op_key(node: onnx.NodeProto) -> tuple[str, str]:
    """(domain, op type) of `node`, the default domain spelled ""."""
    return ("" if node.domain in DEFAULT_DOMAINS else node.domain, node.op_type)


def has_function(domain: str, op_type: str, opset: int) -> bool:
    """Whether the schema of `op_type` in the default ONNX domain at `opset` defines a function
    body (plain or built from the node's types and attributes)."""
    if domain not in DEFAULT_DOMAINS:
        return False  # other domains' versions are not the graph's opset
    try:
        schema = onnx.defs.get_schema(op_type, opset, domain)
    except onnx.defs.SchemaError:
        return False
    return _function_version(schema, opset) is not None


def expand(node: onnx.NodeProto, g: GraphEditor,
           expand_types: frozenset[tuple[str, str]] = frozenset()) -> bool:
    """Put `node`'s function body in its place (its body's nodes of a type in `expand_types`
    expanded too) into `g.expanded`, whose nodes the caller rewrites in turn (their types
    inferred into `g.types` for the rules); False, doing nothing, when there is no body to
    expand it into."""
    nodes = _expanded(node, g, expand_types)
    if nodes is None:
        return False
    types, inferred = _inferred(nodes, g)
    g.types.update(types)
    for inner in inferred:  # a rule reads an axis or a step from a Constant
        value = constant_value(inner) if inner.op_type == "Constant" else None
        if value is not None:
            g.constants[inner.output[0]] = value
    g.expanded.extend(inferred)
    return True


def expand_all(graph: onnx.GraphProto, opset: int, expand_types: frozenset[tuple[str, str]],
               outer: dict[str, onnx.TypeProto] | None = None) -> None:
    """Replace, in place, every node of `graph` and its subgraphs whose (domain, op type) is
    in `expand_types` by its function body (expanded in turn)."""
    g = GraphEditor(graph, opset, outer or {})
    for node in graph.node:
        if op_key(node) in expand_types and expand(node, g, expand_types):
            g.emitted.extend(g.expanded)
            g.expanded.clear()
            continue
        for sub in subgraphs(node):
            expand_all(sub, opset, expand_types, g.types)
        g.emitted.append(node)
    del graph.node[:]
    graph.node.extend(g.emitted)


def _expanded(node: onnx.NodeProto, g: GraphEditor,
              expand_types: frozenset[tuple[str, str]]) -> list[onnx.NodeProto] | None:
    body = _function_body(node, g)
    if body is None:
        return None
    names = dict(zip(body.input, node.input, strict=False))
    names.update((f, a) for f, a in zip(body.output, node.output, strict=False) if a)

    def rename(name: str) -> str:
        if name and name not in names:
            names[name] = g.fresh(f"{node.name or node.op_type}_{name}")
        return names.get(name, name)

    for inner in body.node:
        inner.input[:] = [rename(n) for n in inner.input]
        for sub in subgraphs(inner):  # a Scan or Loop body reads the function's values
            _rename_subgraph(sub, names, lambda name: g.fresh(f"{node.name or node.op_type}_{name}"))
        inner.output[:] = [rename(n) for n in inner.output]
    if not any(op_key(inner) in expand_types for inner in body.node):
        return list(body.node)
    g.types.update(_inferred(list(body.node), g)[0])  # a body builder reads its inputs' types
    nodes: list[onnx.NodeProto] = []
    for inner in body.node:
        inner_nodes = _expanded(inner, g, expand_types) if op_key(inner) in expand_types else None
        nodes.extend(inner_nodes if inner_nodes is not None else [inner])
    return nodes


def _rename_subgraph(graph: onnx.GraphProto, outer: dict[str, str],
                     fresh: Callable[[str], str]) -> None:
    """Rename, in place, the values `graph` reads from the function's scope as `outer` maps
    them, and give those it defines fresh names: the graph it is inlined into may use them."""
    local = dict(outer)
    for value in (*graph.input, *graph.initializer, *graph.sparse_initializer):
        name = value.values.name if isinstance(value, onnx.SparseTensorProto) else value.name
        local[name] = fresh(name)
    for node in graph.node:
        for name in node.output:
            if name:
                local[name] = fresh(name)
    for node in graph.node:
        node.input[:] = [local.get(n, n) for n in node.input]
        node.output[:] = [local.get(n, n) for n in node.output]
        for sub in subgraphs(node):
            _rename_subgraph(sub, local, fresh)
    for value in (*graph.input, *graph.output, *graph.value_info):
        value.name = local.get(value.name, value.name)
    for tensor in graph.initializer:
        tensor.name = local.get(tensor.name, tensor.name)
    for sparse in graph.sparse_initializer:
        sparse.values.name = local.get(sparse.values.name, sparse.values.name)


def _inferred(nodes: list[onnx.NodeProto], g: GraphEditor
              ) -> tuple[dict[str, onnx.TypeProto], list[onnx.NodeProto]]:
    """The types ONNX shape inference gives the values `nodes` define, from the known types
    of the values they read, and `nodes` with their subgraphs' types inferred (no types and
    `nodes` themselves, where inference fails)."""
    defined = {o for n in nodes for o in n.output}
    read = dict.fromkeys(i for n in nodes for i in n.input if i and i not in defined)
    graph = helper.make_graph(
        nodes, "body", [helper.make_value_info(name, g.types[name]) for name in read
                        if name in g.types], [])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", g.opset)])
    try:
        inferred = onnx.shape_inference.infer_shapes(model, data_prop=True)
    except Exception:  # an InferenceError: the inner bodies are then not built
        return {}, nodes
    return {v.name: v.type for v in inferred.graph.value_info}, list(inferred.graph.node)


def _function_body(node: onnx.NodeProto, g: GraphEditor) -> onnx.FunctionProto | None:
    """`node`'s function body at the graph's opset, its attribute references resolved; None
    when its schema has none (or cannot build one from what is known of the inputs)."""
    if node.domain not in DEFAULT_DOMAINS:
        return None
    try:
        schema = onnx.defs.get_schema(node.op_type, g.opset, node.domain)
    except onnx.defs.SchemaError:
        return None
    version = _function_version(schema, g.opset)
    if version is None:
        return None
    # The body builder reads absent attributes as empty, not as their defaults: fill them in.
    node_with_defaults = onnx.NodeProto()
    node_with_defaults.CopyFrom(node)
    present = {a.name for a in node.attribute}
    node_with_defaults.attribute.extend(
        a.default_value for name, a in schema.attributes.items()
        if name not in present and a.default_value.type != onnx.AttributeProto.UNDEFINED)
    try:
        if version in schema.context_dependent_function_opset_versions:
            types = [g.types.get(name, onnx.TypeProto()).SerializeToString()
                     for name in node.input]
            serialized = schema.get_context_dependent_function_with_opset_version(
                version, node_with_defaults.SerializeToString(), types)
        else:
            serialized = schema.get_function_with_opset_version(version)
        body = onnx.FunctionProto.FromString(serialized)
    except Exception:  # the builder needs input types inference did not give
        return None
    attributes = {a.name: a for a in node_with_defaults.attribute}
    for inner in body.node:  # before any upgrade: the version converter drops references
        resolved = [_resolved(a, attributes) for a in inner.attribute]
        del inner.attribute[:]
        inner.attribute.extend(a for a in resolved if a is not None)
    body_opset = next((o.version for o in body.opset_import if o.domain in DEFAULT_DOMAINS),
                      version)
    return _upgraded(body, body_opset, g.opset) if body_opset != g.opset else body


def _function_version(schema: onnx.defs.OpSchema, opset: int) -> int | None:
    versions = [v for v in (*schema.function_opset_versions,
                            *schema.context_dependent_function_opset_versions) if v <= opset]
    return max(versions, default=None)


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
