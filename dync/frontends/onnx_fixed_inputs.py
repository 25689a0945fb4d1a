"""ONNX graph inputs that IREE's importer needs as constants (axes, steps, pads, scales), fixed
at their example value.

IREE's importer needs at compile time the axes of a reduction, of a `Squeeze` or `Unsqueeze`,
the axis of a `CumSum`, the axes and steps of a `Slice` and the pads of an edge, reflect or
wrap `Pad`, the roi, scales and sizes of a `Resize` that dync rewrites
(`onnx_lowerings.nearest_resize`, `interpolating_resize`), a `Dropout`'s ratio and training
mode, a `DFT`'s length and axis, an `AffineGrid`'s size, a `Col2Im`'s image and block shapes
(they set the result's rank, which loops reduce, which dims a slice cuts and in which
direction, where a padding or a resize reads): given at run time, the lowering is left with ops
IREE cannot compile (`aten.sum.dim_IntList` over a list of run-time ints, a slice along a run-
time dim, a list of run-time pads), ONNX shape inference finds no rank, or — a `Slice`'s steps
— the lowering takes every step as positive, and a negative one would read the wrong elements.
The ONNX node tests, and some exporters, give them as graph inputs. Where the example inputs
give such an input's value, the nodes read that value as a constant instead. The input stays an
argument of the compiled module and its value is recorded in the signature
(`TensorSpec.value`): a call with another value is refused with an `InputError`
(`Signature.check_values`), never computed with the example's.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
from onnx import helper, numpy_helper

from .onnx_functions import DEFAULT_DOMAINS
from .onnx_graphs import all_nodes, attribute, copied, fresh_name, graph_arguments, names_in
from .onnx_lowerings import unlowered_interpolating_resize, unlowered_nearest_resize

# op type -> {index of an input IREE's importer needs as a constant: what it sets}.
FIXED_INPUTS: dict[str, dict[int, str]] = {op: {1: "axes"} for op in (
    "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
    "ReduceMin", "ReduceProd", "ReduceSum", "ReduceSumSquare", "Squeeze", "Unsqueeze",
    "CumSum", "CumProd")} | {"Slice": {3: "axes", 4: "steps"}, "Pad": {1: "pads"},
       "Dropout": {1: "ratio", 2: "training mode"}, "DFT": {1: "length", 2: "axis"},
       "AffineGrid": {1: "size"}, "Col2Im": {1: "image shape", 2: "block shape"}}
_MAX_ELEMENTS = 64


def fix_structural_inputs(model: onnx.ModelProto, args: Sequence | None
                    ) -> tuple[onnx.ModelProto, dict[str, np.ndarray], list[str]]:
    """`model` (a copy, when changed) with the nodes that read a graph input as one of the
    operands of `FIXED_INPUTS` reading its value in `args` (the example inputs, one per graph
    input) instead; returns it, the fixed values by input name and one note per input."""
    inputs = graph_arguments(model.graph)
    if args is None or len(args) != len(inputs):
        return model, {}, []  # sequence or optional inputs, or a count `structure_of` refuses
    example = {value.name: arg for value, arg in zip(inputs, args, strict=True)}
    readers: dict[str, list[str]] = {}
    for node in all_nodes(model.graph):
        for _, name, role in _fixed_operands(node):
            if name in example:
                readers.setdefault(name, []).append(f"the {role} of {node.name or node.op_type}")
    values = {name: value for name in readers
              if (value := _small_value(example[name])) is not None}
    if not values:
        return model, {}, []
    model = copied(model)
    taken = names_in(model.graph)
    constants = {name: fresh_name(taken, f"{name}_fixed") for name in values}
    for node in all_nodes(model.graph):
        for index, name, _ in _fixed_operands(node):
            if name in constants:
                node.input[index] = constants[name]
    front = [helper.make_node("Constant", [], [constants[name]],
                              value=numpy_helper.from_array(value, constants[name]))
             for name, value in values.items()]
    nodes = [*front, *model.graph.node]
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    notes = [f"ONNX input {name!r} sets {', '.join(sorted(set(readers[name])))}, "
             f"which IREE needs at compile time: fixed at the example's {value.tolist()} "
             "(a call with another value is refused)" for name, value in values.items()]
    return model, values, notes


def _fixed_operands(node: onnx.NodeProto) -> list[tuple[int, str, str]]:
    """(index, name, role) of each operand of `node` that IREE's importer needs as a
    constant."""
    if node.domain not in DEFAULT_DOMAINS or (
            node.op_type == "Pad" and attribute(node, "mode", "constant") == "constant"):
        return []  # constant padding lowers with run-time pads
    roles = FIXED_INPUTS.get(node.op_type, {})
    if unlowered_nearest_resize(node) or unlowered_interpolating_resize(node):
        # rewritten for the values at compile time
        roles = {1: "roi", 2: "scales", 3: "sizes"}
    return [(index, node.input[index], role) for index, role in roles.items()
            if index < len(node.input) and node.input[index]]


def _small_value(arg) -> np.ndarray | None:
    """The example's value of such an input: a small int or float array (scales), else None
    (left as it is)."""
    try:
        value = np.asarray(arg)
    except Exception:  # a sequence's list, an optional's None: not a tensor
        return None
    if value.dtype.kind not in "biuf" or value.ndim > 1 or value.size > _MAX_ELEMENTS:
        return None
    return np.array(value)  # a copy (ascontiguousarray would make a 0-d value 1-d)
