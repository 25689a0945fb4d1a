"""Reads of a view that was just written, forwarded to what was written, in the decomposed graph.

Functionalization turns a write into a view (`y = x.sort()[0][:, :k]; y[mask] = v`, in
PointNet++'s ball query) into a `slice_scatter` of the new view into its base and a `slice`
reading the view back, and a whole-tensor write (`x[:] = y`, or the outer view of a nested
one) into a `slice_scatter` over the full range. The base then stays alive in
full even when only the view is read afterwards: here a sort of every element where the first
k were wanted (`dync-pack-sort-keys` takes a sort read only through its first k in k rounds).
This forwards
- `slice(x, d, 0, end, 1)` of all of `x` (`x[:, :k]` slices dim 0 too) to `x`,
- `slice(slice_scatter(base, src, d, s, e, t), d, s, e, t)` to `src`,
- `slice_scatter(base, src, d, 0, end, 1)` with `src` of `base`'s shape to `src`,
and drops what is left unused. A `copy` stays: one into `empty_strided` gives a value the
layout and the fresh sizes a loop carries (binding it where its source is bound made two
bindings of one value disagree).
"""

from __future__ import annotations

import torch

from .fx_graphs import rewrite_each_graph, same_shape
from .fx_graphs import tensor_meta as _val

_aten = torch.ops.aten
_INT64_MAX = 2**63 - 1
_WHOLE = (0, _INT64_MAX, 1)  # a slice's (start, end, step) over the whole dim


def forward_view_writes(graph_module: torch.fx.GraphModule) -> None:
    rewrite_each_graph(graph_module, _forward_in)


def _forward_in(graph: torch.fx.Graph) -> bool:
    changed = False
    for node in list(graph.nodes):
        forwarded = _forwarded(node)
        if forwarded is not None:
            node.replace_all_uses_with(forwarded)
            changed = True
    if changed:
        graph.eliminate_dead_code()
    return changed


def _forwarded(node: torch.fx.Node) -> torch.fx.Node | None:
    if node.op != "call_function":
        return None
    if node.target is _aten.slice.Tensor:
        written = node.args[0]
        if _range(node, 1)[1:] == _WHOLE and same_shape(_shape(node), _shape(written)):
            return written
        if (isinstance(written, torch.fx.Node) and written.target is _aten.slice_scatter.default
                and _range(written, 2) == _range(node, 1)
                and same_shape(_shape(node), _shape(written.args[1]))):
            return written.args[1]
    elif node.target is _aten.slice_scatter.default:
        if _range(node, 2)[1:] == _WHOLE and same_shape(_shape(node.args[0]), _shape(node.args[1])):
            return node.args[1]
    return None


def _range(node: torch.fx.Node, first: int) -> tuple:
    """A slice's (dim, start, end, step) from its arguments at `first` on: the dim counted
    from 0, the defaults filled in."""
    args = [*node.args[first:], *([None] * 4)][:4]
    for name, i in (("dim", 0), ("start", 1), ("end", 2), ("step", 3)):
        args[i] = node.kwargs.get(name, args[i])
    dim, start, end, step = args
    if isinstance(end, int) and end >= _INT64_MAX:
        end = _INT64_MAX
    rank = len(_shape(node.args[0]) or ())
    dim = (dim or 0) % rank if rank else 0
    return (dim, 0 if start is None else start, _INT64_MAX if end is None else end,
            1 if step is None else step)


def _shape(node) -> tuple | None:
    val = _val(node)
    return None if val is None else tuple(val.shape)
