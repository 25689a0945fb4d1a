"""What a forward returns besides tensors, made something the compiled function can return.

An exported program's outputs may be numbers — a size (`x.shape[0]`), arithmetic on sizes
(`n / 2`), an `.item()` — and constants (`return y, 3`, `return y, None`). IREE's functions
return tensors only, and the importer refuses the rest, which used to send the whole model
to eager PyTorch. Here a number becomes a 0-d tensor (`aten.scalar_tensor`: int64, float64
or bool, so that its value survives exactly) returned in its place, and a constant leaves the
graph; `leaf_kinds` says which leaf was which, and the output tree (`dync.output_tree`)
rebuilds the Python int, float, bool, None or constant at each call.
"""

from __future__ import annotations

from typing import Any

import torch
from torch._guards import detect_fake_mode

from ...output_tree import CONSTANT_NODE, CONSTANT_TYPES, NONE_NODE, SCALAR_NODE
from .rewrite.numbers import NUMBER_DTYPES, number_kind

#: The leaf kind of a tensor the compiled function returns as it is.
TENSOR = None


def scalar_outputs_as_tensors(ep: torch.export.ExportedProgram) -> list[tuple[str | None, Any]]:
    """Rewrite `ep`'s output node so that it returns tensors only; for each of its original
    outputs (in order) the leaf kind and what the tree needs: (TENSOR, None) for a tensor
    (or anything else, which the signature refuses), (SCALAR_NODE, "int"/"float"/"bool") for a
    number now returned as a 0-d tensor, (NONE_NODE, None) and (CONSTANT_NODE, value) for
    values no longer returned."""
    graph = ep.graph
    output_node = next(n for n in graph.nodes if n.op == "output")
    kinds, kept = [], []
    fake_mode = None
    for out in output_node.args[0]:
        if out is None:
            kinds.append((NONE_NODE, None))
            continue
        if isinstance(out, CONSTANT_TYPES):
            kinds.append((CONSTANT_NODE, out))
            continue
        val = out.meta.get("val") if isinstance(out, torch.fx.Node) else None
        number = None if isinstance(val, torch.Tensor) else number_kind(val)
        if number is None:
            kinds.append((TENSOR, None))
            kept.append(out)
            continue
        if fake_mode is None:
            fake_mode = detect_fake_mode([n.meta.get("val") for n in graph.nodes
                                          if n.op == "placeholder"])
        kinds.append((SCALAR_NODE, number.__name__))
        kept.append(_as_tensor(graph, output_node, out, NUMBER_DTYPES[number], fake_mode))
    output_node.args = (tuple(kept),)
    return kinds


def _as_tensor(graph: torch.fx.Graph, before: torch.fx.Node, number: torch.fx.Node,
               dtype: torch.dtype, fake_mode) -> torch.fx.Node:
    with graph.inserting_before(before):
        node = graph.call_function(torch.ops.aten.scalar_tensor.default, (number,),
                                   {"dtype": dtype})
    node.meta.update(number.meta)
    with fake_mode:
        node.meta["val"] = torch.ops.aten.scalar_tensor.default(number.meta["val"], dtype=dtype)
    return node
