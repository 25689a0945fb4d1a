"""`dync-copy-within`: a part of a tensor written into the same tensor (a shift in place) is read
through a barrier first.

Reads: `slice_scatter` and `select_scatter` whose source is a view of their destination: the
source reached from the destination through views alone (`slice`, `select`, `copy`'s source,
`clone`, `view`, `reshape`, `unsqueeze`, `squeeze`, `expand`, `alias`, `detach`, a dtype
conversion), in every function.
Writes: that source through a `util.optimization_barrier` of its own, right before the write.
Values, dtypes and shapes are unchanged.

Why: IREE 3.13 copies such a source into its destination in place, forward, as the write's own
copy: `r[..., 1:] = r[..., :-1].clone()` (the shift nucleus sampling writes to keep the first
token past the threshold, `remove[..., 1:] = remove[..., :-1].clone()`) came back as the first
column repeated along the row (`lit/upstream/iree-overlapping-slice-copy.mlir`). Behind the
barrier the source is a tensor of its own, copied out before the write. A source computed from
the destination by anything else (`r[..., 1:] = r[..., :-1] * 2`) is a dispatch's result and
was right. No paper section: a workaround at the boundary to IREE, like `dync-distinct-fills`.
"""

from __future__ import annotations

from iree.compiler import ir

from ..dialects.torch_ops import owner, through_barrier
from ..dialects.walk import functions, nested_ops
from .pipeline import Pass

# write -> the operand holding what it writes (its destination is operand 0)
_WRITES = {"torch.aten.slice_scatter": 1, "torch.aten.select_scatter": 1}
# view-like op -> the operand whose values its result holds
_VIEWS = {
    "torch.aten.slice.Tensor": 0, "torch.aten.select.int": 0, "torch.aten.copy": 1,
    "torch.aten.clone": 0, "torch.aten.view": 0, "torch.aten.reshape": 0,
    "torch.aten._unsafe_view": 0, "torch.aten.unsqueeze": 0, "torch.aten.squeeze.dim": 0,
    "torch.aten.squeeze": 0, "torch.aten.expand": 0, "torch.aten.alias": 0,
    "torch.aten.detach": 0, "torch.aten.to.dtype": 0, "torch.aten._to_copy": 0,
}
_REACH = 16  # views between the destination and the source


class CopyWithin(Pass):
    name = "dync-copy-within"
    summary = "a view of a tensor written into that tensor is read through a barrier (IREE copies it in place)"

    def run(self, module: ir.Operation) -> None:
        with module.context, ir.Location.unknown():
            for func in functions(module).values():
                for write in [op for op in nested_ops(func) if op.name in _WRITES]:
                    at = _WRITES[write.name]
                    source = write.operands[at]
                    if _views_of(source, write.operands[0]):
                        write.operands[at] = through_barrier(
                            source, ir.InsertionPoint(write), write.location)


def _views_of(value: ir.Value, destination: ir.Value) -> bool:
    """Whether `value` is reached from `destination` through views alone."""
    for _ in range(_REACH):
        if value == destination:
            return True
        op = owner(value)
        if op is None or op.name not in _VIEWS or len(op.operands) <= _VIEWS[op.name]:
            return False
        value = op.operands[_VIEWS[op.name]]
    return False
