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
