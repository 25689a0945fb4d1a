"""Fresh value names for the nodes dync adds to an ONNX graph."""

from __future__ import annotations


def fresh_name(taken: set[str], hint: str) -> str:
    """`hint`, or `hint_<n>` for the first n that makes it unused; recorded in `taken`."""
    name, n = hint, 0
    while name in taken:
        n += 1
        name = f"{hint}_{n}"
    taken.add(name)
    return name


def subgraphs(node) -> list:
    """The graphs a node's attributes hold (an If's branches, a Loop's or Scan's body)."""
    return [g for a in node.attribute for g in ([a.g] if a.HasField("g") else []) + list(a.graphs)]
