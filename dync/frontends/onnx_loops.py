"""ONNX loops reshaped for IREE's importer, before import.

- A `Loop`'s scan outputs (which the importer does not lower) become loop-carried
  accumulators: each starts empty, `[0, *shape]`, and every trip concatenates its value;
  `relax_growing` then undoes the static first dim shape inference gives them.
- A `Scan` body's state outputs are typed like its state inputs (the importer's loop needs the
  two types equal); one with a scan output of unknown shape is refused (the lowering writes
  past that output's buffer). A `Scan` with scan outputs over a dynamic length (which the
  importer sizes by the length at import, writing the other rows past the buffer) becomes a
  `Loop` over the length, each scanned element read by Gather.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper

from .onnx_graphs import (
    GraphEditor,
    attribute,
    named_shape,
    refuse_wrong_values,
    reversed_along,
    subgraphs,
)


def _dim_sources(g: GraphEditor) -> dict[str, tuple[str, int]]:
    """For each `dim_param` of a value of `g` defined so far (its scope included): a value and
    axis that has it, to read its size from at run time."""
    sources: dict[str, tuple[str, int]] = {}
    defined = g.defined()
    for name, t in g.types.items():
        if name not in defined:
            continue
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


def _nested(body: onnx.GraphProto, g: GraphEditor) -> GraphEditor:
    """An editor of `body`, a subgraph of `g`'s graph, whose fresh names are fresh in both: a
    subgraph's names may not shadow its graph's (the new nodes of `g` included)."""
    inner = GraphEditor(body, g.opset, g.types)
    g.taken |= inner.taken
    inner.taken = g.taken
    return inner


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
    inner = _nested(body, g)
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
        item = inner.unsqueeze(value.name, [0])
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


def scan(node: onnx.NodeProto, g: GraphEditor) -> bool:
    """A Scan for IREE's importer. Over a length the Scan's inputs give statically: its body's
    state outputs typed like its state inputs, when inference left them without a shape (the
    importer's loop carries the state with the input's type and the yielded value's, which must
    be equal; states keep their shape from step to step). Over a dynamic length with scan
    outputs: the importer sizes each scan output by the length at import (1), and writes the
    other rows past its buffer; rewritten as a Loop over the length whose body gathers each
    scanned element (`_scan_as_loop`), refused where it cannot be. A scan output of unknown
    shape is refused: the lowering writes past its buffer. Returns True: `node`, or what
    replaces it, is emitted."""
    body = next(a.g for a in node.attribute if a.name == "body")
    scanned_inputs = attribute(node, "num_scan_inputs", 0)
    states = len(node.input) - scanned_inputs
    typed = {returned.name: given.type for given, returned in
             zip(body.input[:states], body.output[:states], strict=True)
             if named_shape(given.type) is not None and named_shape(returned.type) is None}
    for value in [*body.output, *body.value_info]:  # the ranks completed before, too
        if value.name in typed:
            value.type.CopyFrom(typed[value.name])
    inferred = {v.name: v.type for v in body.value_info if named_shape(v.type) is not None}
    for value in body.output:  # a function body's Scan: inference typed its values only
        if named_shape(value.type) is None and value.name in inferred:
            value.type.CopyFrom(inferred[value.name])
    unshaped = [v.name for v in body.output[states:] if named_shape(v.type) is None]
    if unshaped:
        refuse_wrong_values(node, "with a scan output of unknown shape", f"the lowering writes {unshaped[0]!r} "
                "past its buffer (memory corruption at run time)")
    first = node.input[states]
    axis = (attribute(node, "scan_input_axes") or [0])[0]
    shape = named_shape(g.types.get(first))
    if len(body.output) == states or (shape is not None and isinstance(shape[axis], int)):
        g.emitted.append(node)
        return True
    if not _scan_as_loop(node, body, states, g):
        refuse_wrong_values(node, "with scan outputs over a dynamic length", "the lowering "
                            "sizes them by the length at import (one row) and writes the others "
                            "past the buffer; give the scanned inputs a known rank and the scan "
                            "outputs static or named dims")
    return True


def _scan_as_loop(node: onnx.NodeProto, body: onnx.GraphProto, states: int,
                  g: GraphEditor) -> bool:
    """Scan as `Loop(length, true, states...)`: trip i reads element i (length - 1 - i for
    a reversed scan input) of each scanned input along its axis by Gather, the body's scan
    outputs become the Loop's (`_loop_scan_outputs`), then are reversed and moved to their
    axis. False where it cannot be (a scanned input of unknown rank, a scan output whose dims
    are neither static nor named)."""
    rank_of = {name: g.rank(name) for name in node.input[states:]}
    if None in rank_of.values():
        return False
    count = len(node.input) - states
    in_axes = attribute(node, "scan_input_axes") or [0] * count
    in_reversed = attribute(node, "scan_input_directions") or [0] * count
    outputs = len(body.output) - states
    out_axes = attribute(node, "scan_output_axes") or [0] * outputs
    out_reversed = attribute(node, "scan_output_directions") or [0] * outputs
    first = node.input[states]
    length = g.size(first, in_axes[0] % rank_of[first])
    inner = _nested(body, g)
    trip, cond = inner.fresh("dync_scan_trip"), inner.fresh("dync_scan_cond")
    last = None
    for k, (value, element) in enumerate(zip(node.input[states:], body.input[states:],
                                             strict=True)):
        index = trip
        if in_reversed[k]:
            last = last or inner.op("Sub", length, inner.const(1, np.int64))
            index = inner.op("Sub", last, trip)
        inner.op("Gather", value, index, axis=in_axes[k] % rank_of[value], out=element.name)
    loop_body = onnx.GraphProto()
    loop_body.CopyFrom(body)
    del loop_body.input[:], loop_body.node[:], loop_body.output[:]
    loop_body.input.extend([helper.make_tensor_value_info(trip, onnx.TensorProto.INT64, []),
                            helper.make_tensor_value_info(cond, onnx.TensorProto.BOOL, []),
                            *body.input[:states]])
    loop_body.node.extend([*inner.emitted, *body.node])
    cond_out = inner.fresh("dync_scan_cond_out")
    loop_body.node.append(helper.make_node("Identity", [cond], [cond_out]))
    loop_body.output.extend([helper.make_tensor_value_info(cond_out, onnx.TensorProto.BOOL, []),
                             *body.output])
    stacked = [g.fresh(f"{name or 'dync_scan'}_stacked") for name in node.output[states:]]
    loop = helper.make_node("Loop", [length, g.const(True, np.bool_), *node.input[:states]],
                            [*node.output[:states], *stacked], body=loop_body)
    if not _loop_scan_outputs(loop, g):
        return False
    # Typed like the body's states: ONNX's inference of a Loop's state outputs drops their shape.
    for name, state in zip(node.output[:states], body.input[:states], strict=True):
        if name and named_shape(state.type) is not None:
            g.declared.append(helper.make_value_info(name, state.type))
    for k, (value, name) in enumerate(zip(stacked, node.output[states:], strict=True)):
        rank = len(named_shape(body.output[states + k].type)) + 1
        if out_reversed[k]:
            value = reversed_along(g, value, 0)
        axis = out_axes[k] % rank
        perm = list(range(1, axis + 1)) + [0] + list(range(axis + 1, rank))
        g.op("Transpose", value, perm=perm, out=name) if axis else g.op("Identity", value, out=name)
    return True


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


RULES = {"Loop": _loop_scan_outputs, "Scan": scan}
