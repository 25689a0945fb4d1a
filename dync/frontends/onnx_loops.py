"""ONNX loops reshaped for IREE's importer, before import.

- A `Loop`'s scan outputs (which the importer does not lower) become loop-carried
  accumulators: each starts empty, `[0, *shape]`, and every trip concatenates its value;
  `relax_growing` then undoes the static first dim shape inference gives them.
- A `Scan` body's state outputs are typed like its state inputs (the importer's loop needs the
  two types equal); one with a scan output of unknown shape is refused (the lowering writes
  past that output's buffer).
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper

from .onnx_graphs import GraphEditor, attribute, named_shape, refuse_wrong_values, subgraphs


def _dim_sources(g: GraphEditor) -> dict[str, tuple[str, int]]:
    """For each `dim_param` of a value of `g` (its scope included): a value and axis that has
    it, to read its size from at run time."""
    sources: dict[str, tuple[str, int]] = {}
    for name, t in g.types.items():
        for axis, dim in enumerate(named_shape(t) or []):
            if isinstance(dim, str):
                sources.setdefault(dim, (name, axis))
    return sources


def _empty_rows(g: GraphEditor, shape: list[int | str], dtype) -> str | None:
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


def _loop_scan_outputs(node: onnx.NodeProto, g: GraphEditor) -> bool:
    """A Loop's scan outputs become loop-carried accumulators (IREE's importer lowers no scan
    output): each starts empty, [0, *shape], and every trip concatenates its value, unsqueezed.
    Needs each scanned value's dims static or named (`dim_param`) like a dim of a value outside
    the Loop, which gives its size; else the Loop is left to the importer's error."""
    body = next(a.g for a in node.attribute if a.name == "body")
    carried = len(node.input) - 2
    scanned = body.output[1 + carried:]
    if not scanned:
        return False
    inner = GraphEditor(body, g.opset, g.types)
    shapes = [named_shape(inner.types.get(v.name)) for v in scanned]
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


def _scan_state_types(node: onnx.NodeProto, g: GraphEditor) -> bool:
    """A Scan body's state outputs typed like its state inputs, when inference left them
    without a shape: IREE's importer makes the loop carry the state with the input's type and
    the yielded value's type, which must be equal. States keep their shape from step to step
    (a state that changes it fails shape inference, at import). A scan output of unknown
    shape is refused: the lowering corrupts memory with it."""
    body = next(a.g for a in node.attribute if a.name == "body")
    states = len(node.input) - attribute(node, "num_scan_inputs", 0)
    typed = {returned.name: given.type for given, returned in
             zip(body.input[:states], body.output[:states], strict=True)
             if named_shape(given.type) is not None and named_shape(returned.type) is None}
    for value in [*body.output, *body.value_info]:  # the ranks completed before, too
        if value.name in typed:
            value.type.CopyFrom(typed[value.name])
    unshaped = [v.name for v in body.output[states:] if named_shape(v.type) is None]
    if unshaped:
        refuse_wrong_values(node, "with a scan output of unknown shape", f"the lowering writes {unshaped[0]!r} "
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


RULES = {"Loop": _loop_scan_outputs, "Scan": _scan_state_types}
