"""ONNX graph inputs that set a node's axes, fixed at their example value.

IREE's importer needs at compile time the axes of a reduction, of a `Squeeze` or `Unsqueeze`
and the axis of a `CumSum` (they set the result's rank and which loops reduce): given at run
time, the lowering is left with ops IREE cannot compile (`aten.sum.dim_IntList` over a list of
run-time ints) or ONNX shape inference finds no rank. The ONNX node tests, and some
exporters, give them as graph inputs. Where the example inputs give such an input's value,
the nodes read that value as a constant instead. The input stays an argument of the compiled
module and its value is recorded in the signature (`TensorSpec.value`): a call with another
value is refused with an `InputError` (`Signature.check_values`), never computed with the
example's axes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
from onnx import helper, numpy_helper

from .onnx_functions import DEFAULT_DOMAINS
from .onnx_graphs import all_nodes, copied, fresh_name, graph_arguments, names_in

# op type -> the index of its axes input.
AXES_INPUT = {op: 1 for op in (
    "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
    "ReduceMin", "ReduceProd", "ReduceSum", "ReduceSumSquare", "Squeeze", "Unsqueeze",
    "CumSum", "CumProd")}
_MAX_AXES = 64


def fix_axes_inputs(model: onnx.ModelProto, args: Sequence | None
                    ) -> tuple[onnx.ModelProto, dict[str, np.ndarray], list[str]]:
    """`model` (a copy, when changed) with the nodes that read a graph input as their axes
    reading its value in `args` (the example inputs, one per graph input) instead; returns it,
    the fixed values by input name and one note per input."""
    inputs = graph_arguments(model.graph)
    if args is None or len(args) != len(inputs):
        return model, {}, []  # sequence or optional inputs, or a count `structure_of` refuses
    example = {value.name: arg for value, arg in zip(inputs, args, strict=True)}
    readers: dict[str, list[str]] = {}
    for node in all_nodes(model.graph):
        if (axes := _axes_operand(node)) is not None and axes in example:
            readers.setdefault(axes, []).append(node.name or node.op_type)
    values = {name: value for name in readers
              if (value := _axes_value(example[name])) is not None}
    if not values:
        return model, {}, []
    model = copied(model)
    taken = names_in(model.graph)
    constants = {name: fresh_name(taken, f"{name}_fixed") for name in values}
    for node in all_nodes(model.graph):
        if (axes := _axes_operand(node)) is not None and axes in constants:
            node.input[AXES_INPUT[node.op_type]] = constants[axes]
    front = [helper.make_node("Constant", [], [constants[name]],
                              value=numpy_helper.from_array(value, constants[name]))
             for name, value in values.items()]
    nodes = [*front, *model.graph.node]
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    notes = [f"ONNX input {name!r} sets the axes of {', '.join(sorted(set(readers[name])))}, "
             f"which IREE needs at compile time: fixed at the example's {value.tolist()} "
             "(a call with another value is refused)" for name, value in values.items()]
    return model, values, notes


def _axes_operand(node: onnx.NodeProto) -> str | None:
    """The name of the value `node` reads as its axes, if it has an axes operand."""
    index = AXES_INPUT.get(node.op_type)
    if node.domain in DEFAULT_DOMAINS and index is not None and len(node.input) > index:
        return node.input[index] or None
    return None


def _axes_value(arg) -> np.ndarray | None:
    """The example's value of an axes input: a small int array, else None (left as it is)."""
    try:
        value = np.asarray(arg)
    except Exception:  # a sequence's list, an optional's None: not a tensor
        return None
    if value.dtype.kind not in "iu" or value.ndim > 1 or value.size > _MAX_AXES:
        return None
    return np.array(value)  # a copy (ascontiguousarray would make a 0-d value 1-d)
