"""Float arithmetic on sizes as 0-d float64 tensors, for the FX importer, which takes no
`torch.sym_float`: `torch.sym_float(s) * 0.5 - 0.5` scaling a tensor (torch's own
`grid_sampler_2d` decomposition un-normalizes coordinates so) becomes
`scalar_tensor(s) * scalar_tensor(0.5) - ...` in float64, Python's float arithmetic exactly,
multiplied into the tensor as before (a 0-d tensor does not promote a dimensioned one).
Only expressions whose every use is an elementwise tensor op taking a tensor there are
rewritten; sizes rounded back to ints (`export._scaled_size`) are left to that rule."""

from __future__ import annotations

import operator

import torch

_aten = torch.ops.aten
#: Float arithmetic on sizes, and the tensor op each becomes.
_ARITHMETIC = {operator.mul: _aten.mul.Tensor, operator.add: _aten.add.Tensor,
               operator.sub: _aten.sub.Tensor, operator.truediv: _aten.div.Tensor,
               operator.neg: _aten.neg.default, torch.sym_float: None}
#: Tensor ops that take the expression where a tensor may stand.
_CONSUMERS = {_aten.mul.Tensor, _aten.add.Tensor, _aten.sub.Tensor, _aten.div.Tensor}


def as_tensor_arithmetic(graph: torch.fx.Graph) -> None:
    """Rewrite, in place, the float size expressions of `graph` that only tensor ops use."""
    floats = {n for n in graph.nodes if n.op == "call_function" and n.target in _ARITHMETIC
              and isinstance(n.meta.get("val"), torch.SymFloat)}
    changed = True
    while changed:  # drop expressions with a use or an operand that stays a SymFloat
        changed = False
        for node in list(floats):
            used = all(u in floats or u.target in _CONSUMERS for u in node.users)
            fed = all(a in floats or not isinstance(a.meta.get("val"), torch.SymFloat)
                      for a in node.args if isinstance(a, torch.fx.Node))
            if not (used and fed and node.users):
                floats.discard(node)
                changed = True
    if not floats:
        return
    fake = next(n.meta["val"].fake_mode for n in graph.nodes
                if isinstance(n.meta.get("val"), torch._subclasses.FakeTensor))

    def scalar(value) -> torch.fx.Node:
        made = graph.call_function(_aten.scalar_tensor.default, (value,),
                                   {"dtype": torch.float64})
        with fake:
            made.meta["val"] = torch.empty((), dtype=torch.float64)
        return made

    for node in [n for n in graph.nodes if n in floats]:
        with graph.inserting_before(node):
            if node.target is torch.sym_float:
                tensor = scalar(node.args[0])
            else:
                operands = [a if a in floats else scalar(a) for a in node.args]
                tensor = graph.call_function(_ARITHMETIC[node.target], tuple(operands))
                with fake:
                    tensor.meta["val"] = torch.empty((), dtype=torch.float64)
        node.replace_all_uses_with(tensor)
        graph.erase_node(node)
        floats.discard(node)
        floats.add(tensor)
