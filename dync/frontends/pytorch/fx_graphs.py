"""What the rewrites of exported FX graphs share (`masked_updates`, `view_writes`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import torch


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
    """Whether two shapes are written alike: the same ints and the same expressions of the
    same symbols (None: unknown). Not sizes merely known equal: a value with unbacked sizes
    replaced by one of other symbols gets two bindings that disagree (a `while` after
    branches of two sizes)."""
    if a is None or b is None or len(a) != len(b):
        return False
    return all(_expr(p) == _expr(q) for p, q in zip(a, b, strict=True))


def _expr(size):
    return size.node.expr if isinstance(size, torch.SymInt) else size
