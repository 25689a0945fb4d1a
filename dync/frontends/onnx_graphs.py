"""Small helpers over ONNX graphs shared by the frontend's steps: fresh value names, the
subgraphs of a node, attribute values with defaults."""

from __future__ import annotations

import onnx
from onnx import helper


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


def attribute(node: onnx.NodeProto, name: str, default=None):
    """The value of `node`'s attribute `name` (a string decoded), or `default` when absent."""
    for a in node.attribute:
        if a.name == name:
            value = helper.get_attribute_value(a)
            return value.decode() if isinstance(value, bytes) else value
    return default
