"""Sequence and optional graph inputs, their structure fixed by the example inputs.

IREE's ABI passes tensors. A `sequence_type` input is fixed at the length of the example's
list (as `torch.export` fixes a list's length) and becomes that many tensor inputs, ``x.0``,
``x.1``, ..., rebuilt with `SequenceConstruct` (an empty one with `SequenceEmpty`); a call
passes the list, which the runtime flattens (a list of another length is an error that lists
the inputs it expects). An `optional_type` input is fixed as present (a tensor input
``x.value``) or absent (no input, a call passes None); `OptionalHasElement` of it becomes the
constant answer and `OptionalGetElement` the tensor. Any other use of an optional input is
refused. Without example inputs a model with such inputs is an `OptionError` naming them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ..errors import InputError, OptionError, UnsupportedConstructError
from .onnx_graphs import node_source

# Per structured input: the rank of each tensor of a sequence, or whether the optional is
# present.
Structure = dict[str, list[int] | bool]


def structured_inputs(inputs: Sequence[onnx.ValueInfoProto]) -> list[onnx.ValueInfoProto]:
    return [i for i in inputs if i.type.WhichOneof("value") in ("sequence_type", "optional_type")]


def structure_of(inputs: Sequence[onnx.ValueInfoProto], args: tuple | None) -> Structure:
    """The length of each sequence input and the presence of each optional one in `args`
    (the model's example inputs, in graph order)."""
    structured = structured_inputs(inputs)
    if not structured:
        return {}
    names = ", ".join(repr(i.name) for i in structured)
    if args is None:
        raise OptionError(
            f"ONNX input(s) {names} are sequences or optionals: pass example inputs "
            "(dync.compile(model, (x, ...))) to fix their length or presence, as torch.export "
            "fixes a list's")
    if len(args) != len(inputs):
        raise InputError(f"the ONNX model takes {len(inputs)} input(s), the example has "
                         f"{len(args)}")
    structure: Structure = {}
    for value, arg in zip(inputs, args, strict=True):
        kind = value.type.WhichOneof("value")
        if kind == "sequence_type":
            if not isinstance(arg, list | tuple):
                raise InputError(f"input {value.name!r} is a sequence: pass a list of tensors, "
                                 f"not {type(arg).__name__}")
            structure[value.name] = [np.ndim(item) for item in arg]
        elif kind == "optional_type":
            structure[value.name] = arg is not None
    return structure


def _element_type(value: onnx.ValueInfoProto) -> onnx.TypeProto:
    kind = value.type.WhichOneof("value")
    element = getattr(value.type, kind).elem_type
    if element.WhichOneof("value") != "tensor_type":
        raise UnsupportedConstructError(
            f"ONNX {kind} input", f"input {value.name!r} is a {kind} of "
            f"{element.WhichOneof('value') or 'unknown type'}s; dync takes them of tensors only")
    return element


def flatten_structured_inputs(graph: onnx.GraphProto, structure: Structure) -> list[str]:
    """Replace the sequence and optional inputs of `graph` by tensor inputs as `structure`
    says (in place); one note per input."""
    notes, front, inputs = [], [], []
    for value in graph.input:
        if value.name not in structure:
            inputs.append(value)
            continue
        element = _element_type(value)
        if value.type.WhichOneof("value") == "sequence_type":
            ranks = structure[value.name]
            length = len(ranks)
            parts = [_tensor_input(f"{value.name}.{i}", element, rank)
                     for i, rank in enumerate(ranks)]
            inputs += parts
            front.append(helper.make_node("SequenceConstruct", [p.name for p in parts],
                                          [value.name]) if parts else
                         helper.make_node("SequenceEmpty", [], [value.name],
                                          dtype=element.tensor_type.elem_type))
            notes.append(f"ONNX sequence input {value.name!r} fixed at {length} tensors")
        else:
            present = bool(structure[value.name])
            tensor = _tensor_input(f"{value.name}.value", element)
            if present:
                inputs.append(tensor)
            _resolve_optional(graph, value.name, tensor.name if present else None)
            notes.append(f"ONNX optional input {value.name!r} fixed as "
                         f"{'present' if present else 'absent'}")
    del graph.input[:]
    graph.input.extend(inputs)
    nodes = [*front, *graph.node]
    del graph.node[:]
    graph.node.extend(nodes)
    return notes


def _tensor_input(name: str, element: onnx.TypeProto, rank: int | None = None
                  ) -> onnx.ValueInfoProto:
    """A tensor input of the element type; of the example's rank (dims unnamed, so dynamic)
    when the type gives no shape."""
    value = onnx.ValueInfoProto(name=name)
    value.type.CopyFrom(element)
    for dim in value.type.tensor_type.shape.dim:
        # A sequence's tensors each have their own size where the element type names one.
        if dim.HasField("dim_param"):
            dim.ClearField("dim_param")
    if not value.type.tensor_type.HasField("shape") and rank is not None:
        value.type.tensor_type.shape.dim.extend(
            onnx.TensorShapeProto.Dimension() for _ in range(rank))
    return value


def _resolve_optional(graph: onnx.GraphProto, name: str, tensor: str | None) -> None:
    """Rewrite the uses of optional input `name` for a fixed presence (`tensor` its value,
    None when absent)."""
    for node in graph.node:
        if name not in node.input:
            continue
        if node.op_type == "OptionalHasElement":
            answer = numpy_helper.from_array(np.array(tensor is not None), "present")
            node.op_type = "Constant"
            del node.input[:]
            node.attribute.append(helper.make_attribute("value", answer))
        elif node.op_type == "OptionalGetElement" and tensor is not None:
            node.op_type = "Identity"
            node.input[0] = tensor
        else:
            why = "absent" if tensor is None else "used by an op other than OptionalHasElement "\
                "and OptionalGetElement"
            raise UnsupportedConstructError(
                f"ONNX {node.op_type} of an optional input",
                f"optional input {name!r} is {why} (node {node.name or node.op_type!r})",
                node_source(node))
    for output in graph.output:
        if output.name == name:
            raise UnsupportedConstructError(
                "ONNX optional output", f"optional input {name!r} is returned as is")

