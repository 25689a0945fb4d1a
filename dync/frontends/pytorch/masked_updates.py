"""Masked updates from values gathered by the same mask as a `where`, in the exported graph.

`x[mask] = y[mask]` (farthest point sampling's `distance[mask] = dist[mask]`, a ball query's
`group_idx[mask] = group_first[mask]`), and `x[mask] = f(y[mask], z[mask], 2.0)` with `f`
element-wise, writes `f(y, z, 2.0)` where the mask is true and keeps `x` elsewhere. Written
so, it is `where(mask, f(y, z, 2.0), x)`: no `nonzero`, no data-dependent size, no scatter.
torch.export keeps the gathers (`aten.index.Tensor`, an unbacked size each) and the
`index_put`, which IREE computes as a scatter of gathered rows; this rewrite runs on the
exported graph, before the decompositions.

It applies when every gather has the mask as its only index, gathers from a tensor of x's
shape, and the mask has the shape of x's leading dims (what eager requires of the mask). The
element-wise ops between the gathers and the update are computed on every element, so only
those that cannot fail on the elements the mask drops are taken (no integer division), none
that writes its operand and none that draws random numbers.
"""

from __future__ import annotations

import torch

from .fx_graphs import rewrite_each_graph, same_shape
from .fx_graphs import tensor_meta as _val

_aten = torch.ops.aten
_INDEX_PUTS = (_aten.index_put_.default, _aten.index_put.default)
_SIZE_CHECKS = {_aten.sym_size.int, _aten._assert_scalar.default,
                _aten.sym_constrain_range_for_size.default, _aten.sym_constrain_range.default}


def masked_updates_as_where(graph_module: torch.fx.GraphModule) -> None:
    rewrite_each_graph(graph_module, _rewrite_graph)


def _rewrite_graph(graph: torch.fx.Graph) -> bool:
    changed = False
    for node in list(graph.nodes):
        if node.op == "call_function" and node.target in _INDEX_PUTS:
            changed |= _rewrite(graph, node)
    return changed


def _rewrite(graph: torch.fx.Graph, put: torch.fx.Node) -> bool:
    x, indices, values, *rest = (*put.args, *put.kwargs.values())
    if rest and rest[0] or len(indices) != 1 or not isinstance(indices[0], torch.fx.Node):
        return False
    (mask,) = indices
    x_val, mask_val = _val(x), _val(mask)
    if x_val is None or mask_val is None or mask_val.dtype != torch.bool:
        return False
    if not same_shape(mask_val.shape, x_val.shape[:mask_val.dim()]):
        return False
    if _val(values) is None or _val(values).dtype != x_val.dtype:
        return False  # eager refuses it: "Index put requires the source and destination dtypes match"
    tree = _gathered_tree(values, mask, x_val.shape)
    if tree is None:
        return False
    with graph.inserting_before(put):
        full = _full_values(graph, values, tree, put.meta)
        wide = mask
        for _ in range(x_val.dim() - mask_val.dim()):
            wide = _call(graph, _aten.unsqueeze.default, (wide, -1), mask.meta)
        where = _call(graph, _aten.where.self, (wide, full, x), put.meta)
        if put.target is _aten.index_put_.default:
            where = _call(graph, _aten.copy_.default, (x, where), put.meta)
    put.replace_all_uses_with(where)
    graph.erase_node(put)
    for node in reversed(tree):
        _erase_with_size_checks(graph, node)
    return True


def _gathered_tree(values, mask, shape) -> list[torch.fx.Node] | None:
    """The nodes from the gathers by `mask` to `values`, in graph order, when every leaf is such
    a gather (of a tensor of `shape`), a number or a 0-d tensor, and every other node an
    element-wise op that cannot fail; else None."""
    tree: list[torch.fx.Node] = []
    gathers = 0

    def visit(arg) -> bool:
        nonlocal gathers
        if not isinstance(arg, torch.fx.Node):
            return isinstance(arg, int | float | bool)
        val = _val(arg)
        if val is None:
            return False
        if arg.target is _aten.index.Tensor:
            source, index = arg.args
            if len(index) != 1 or index[0] is not mask or _val(source) is None:
                return False
            if not same_shape(_val(source).shape, shape):
                return False
            gathers += 1
        elif val.dim() == 0 and arg not in tree:
            return True
        elif not _safe_pointwise(arg) or not all(
                visit(a) for a in (*arg.args, *arg.kwargs.values())):
            return False
        if arg not in tree:
            tree.append(arg)
        return True

    if not visit(values) or not gathers:
        return None
    order = {n: i for i, n in enumerate(values.graph.nodes)}
    return sorted(tree, key=order.__getitem__)


def _safe_pointwise(node: torch.fx.Node) -> bool:
    target = node.target
    if node.op != "call_function" or not isinstance(target, torch._ops.OpOverload):
        return False
    # Computed on every element: no op that writes its operand (it would write into the
    # tensor gathered from) or draws random numbers (eager draws one per selected element).
    if torch.Tag.pointwise not in target.tags or target.is_view or target._schema.is_mutable:
        return False
    if torch.Tag.nondeterministic_seeded in target.tags:
        return False
    name = target.overloadpacket.__name__
    integral = not _val(node).dtype.is_floating_point and not _val(node).dtype.is_complex
    return not (integral and any(w in name for w in ("div", "remainder", "fmod")))


def _full_values(graph, values, tree, meta) -> torch.fx.Node:
    """The element-wise computation of `tree` on the tensors gathered from."""
    copies: dict[torch.fx.Node, torch.fx.Node] = {}

    def mapped(arg):
        return copies.get(arg, arg) if isinstance(arg, torch.fx.Node) else arg

    for node in tree:
        if node.target is _aten.index.Tensor:
            copies[node] = node.args[0]
        else:
            args = tuple(mapped(a) for a in node.args)
            kwargs = {k: mapped(v) for k, v in node.kwargs.items()}
            copies[node] = _call(graph, node.target, args, meta, **kwargs)
    return copies[values]


def _erase_with_size_checks(graph: torch.fx.Graph, node: torch.fx.Node) -> None:
    """Erase `node` when nothing but checks on its sizes use it (torch.export asserts an
    unbacked size non-negative), with those checks."""
    users, frontier = [], list(node.users)
    while frontier:
        user = frontier.pop()
        if user in users:
            continue
        if user.target not in _SIZE_CHECKS and not _is_scalar(user):
            return
        users.append(user)
        frontier.extend(user.users)
    order = {n: i for i, n in enumerate(graph.nodes)}
    for user in sorted(users, key=order.__getitem__, reverse=True):
        graph.erase_node(user)
    graph.erase_node(node)


def _is_scalar(node: torch.fx.Node) -> bool:
    return isinstance(node.meta.get("val"), torch.SymInt | torch.SymBool | int | bool)


def _call(graph, target, args, meta, **kwargs) -> torch.fx.Node:
    made = graph.call_function(target, args, kwargs)
    made.meta = dict(meta)
    return made
