"""A view's inferred size (`-1`) written out where it and another of its sizes are dynamic.

`x.masked_select(m).view(-1, x.shape[1])` (rows picked by a mask, research code's habit)
views a tensor of a data-dependent length as `(-1, n)`: torch-mlir keeps the `-1` as a
size when another size is dynamic too, and IREE refuses the module once a dispatch reads
the view ("expected sizes to be non-negative, but got -1";
`lit/upstream/torch-view-inferred-size-of-dynamic-input.mlir`). Here the `-1` of such a view
becomes the input's element count divided by the other sizes, arithmetic on sizes the
importer lowers (`aten.size.int`, `floordiv.int`). A `-1` that stands for a static size, or
beside static sizes only, is left to torch-mlir, which computes those.
"""

from __future__ import annotations

import functools
import operator

import torch

from .fx_graphs import rewrite_each_graph
from .fx_graphs import tensor_meta as _val

_aten = torch.ops.aten
_VIEWS = (_aten.view.default, _aten._unsafe_view.default, _aten.reshape.default)


def explicit_inferred_view_sizes(graph_module: torch.fx.GraphModule) -> None:
    rewrite_each_graph(graph_module, _explicit_in)


def _explicit_in(graph: torch.fx.Graph) -> bool:
    changed = False
    for node in list(graph.nodes):
        if node.op == "call_function" and node.target in _VIEWS and _left_to_iree_as_minus_one(node):
            _write_out(graph, node)
            changed = True
    return changed


def _left_to_iree_as_minus_one(node: torch.fx.Node) -> bool:
    source, sizes = node.args[:2]
    result = _val(node)
    if not isinstance(sizes, list | tuple) or -1 not in sizes or _val(source) is None \
            or result is None:
        return False
    return not isinstance(result.shape[sizes.index(-1)], int) and any(
        isinstance(size, torch.fx.Node) for size in sizes)


def _write_out(graph: torch.fx.Graph, node: torch.fx.Node) -> None:
    source, sizes = node.args[:2]
    shape = _val(source).shape
    inferred = sizes.index(-1)

    def op(target, *operands, val):
        made = graph.call_function(target, operands)
        made.meta["val"] = val
        return made

    def size(k: int):
        return shape[k] if isinstance(shape[k], int) else op(
            _aten.sym_size.int, source, k, val=shape[k])

    def product(factors):
        return functools.reduce(lambda a, b: a * b if isinstance(a, int) and isinstance(b, int)
                                else op(operator.mul, a, b, val=_meta(a) * _meta(b)), factors, 1)

    with graph.inserting_before(node):
        count = product(size(k) for k in range(len(shape)))
        others = product(s for k, s in enumerate(sizes) if k != inferred)
        written = op(operator.floordiv, count, others,
                     val=_val(node).shape[inferred])
    node.args = (source, [written if k == inferred else s for k, s in enumerate(sizes)],
                 *node.args[2:])


def _meta(value):
    return value.meta["val"] if isinstance(value, torch.fx.Node) else value
