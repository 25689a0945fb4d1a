"""What the rewrites of exported FX graphs share (`masked_updates`, `view_writes`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import torch
from torch.fx.experimental.symbolic_shapes import statically_known_true


def rewrite_each_graph(graph_module: torch.fx.GraphModule,
                       rewrite: Callable[[torch.fx.Graph], bool]) -> None:
    """`rewrite` on the graph of `graph_module` and of each submodule (the branches and loop
    bodies of control-flow ops); the module recompiled where it says it changed something."""
    for module in _graph_modules(graph_module):
        if rewrite(module.graph):
            module.recompile()


def _graph_modules(graph_module: torch.fx.GraphModule) -> Iterator[torch.fx.GraphModule]:
    for module in graph_module.modules():
        if isinstance(module, torch.fx.GraphModule):
            yield module


def tensor_meta(node) -> torch.Tensor | None:
    """The fake tensor a node computes (its `val`), None for another value or a non-node."""
    val = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    return val if isinstance(val, torch.Tensor) else None


def same_shape(a, b) -> bool:
    """Whether two shapes are equal for every value of their symbols (None: unknown)."""
    if a is None or b is None:
        return False
    return len(a) == len(b) and all(statically_known_true(p == q) for p, q in zip(a, b, strict=True))
