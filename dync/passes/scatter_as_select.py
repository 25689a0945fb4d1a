"""`dync-scatter-as-select`: a scatter that writes one element per row is a select against a
position iota.

Reads: `torch.aten.scatter.value` and `torch.aten.scatter.src` (what `scatter_` becomes) whose
index has size 1 along the scattered dim (a static 1) and the table's size along every other
dim (static sizes or the same shape-binding expressions), whose index is proven to lie in
`[0, n)` along the scattered dim (`ValueRanges.within`: an `argmax`/`topk`/`sort` position, a
clamped coordinate, ...), and, for `scatter.src`, whose source has the index's shape; a
float table takes any scalar, an integer table an integer one (a cast float would be truncated).

Writes: for each, `where(index == iota, value, table)`: `iota` is `arange(n)` along the
scattered dim (unsqueezed to broadcast against the index, which broadcasts along it), the
select is `aten.where.ScalarSelf` for a scalar, `aten.where.self` for a source tensor; the
scatter's result is replaced (its type and shape binding move to the select).

Why: IREE 3.13 lowers a scatter to an index tensor of coordinates built by two copies (the
iota of the other dims, stacked with the index), a fill of the table and the scatter itself,
four or five dispatches that fuse with nothing; a select is elementwise and fuses with the
table's producer and every consumer (`zeros_like(x).scatter_(-1, x.argmax(-1, keepdim=True),
1.0)`, the one-hot of an argmax: the `ScatterGather` program written elsewhere, 10 dispatches
-> 5). Out-of-range indices are left to the scatter and `dync-check-indices`' check: the
select would drop them silently where eager raises. No paper section: a rewrite at the
boundary to IREE.
"""

from __future__ import annotations

from iree.compiler import ir

from ..analysis.value_ranges import ValueRanges, dim_size, tensor_dims
from ..dialects.symbolic import FLOAT_ELEMENTS, element_type, type_dims
from ..dialects.torch_ops import SCALAR_TYPES, TorchBuilder, bind_from, constant_int, vtensor_of
from ..dialects.walk import nested_ops
from .pipeline import Pass

_SCATTERS = ("torch.aten.scatter.value", "torch.aten.scatter.src")


def _one_per_row(op: ir.Operation, ranges: ValueRanges) -> int | None:
    """The scattered dim of `op` where it is a scatter this pass rewrites (see the module's
    docstring), else None."""
    table, index, written = op.operands[0], op.operands[2], op.operands[3]
    dims, index_dims = tensor_dims(table), tensor_dims(index)
    axis = constant_int(op.operands[1])
    if dims is None or index_dims is None or axis is None or len(dims) != len(index_dims) \
            or not dims:
        return None
    axis %= len(dims)
    if type_dims(index.type)[axis] != 1 or any(
            d is None or i is None or d != i
            for k, (d, i) in enumerate(zip(dims, index_dims, strict=True)) if k != axis):
        return None
    element = element_type(table.type)
    if op.name == "torch.aten.scatter.src":
        if tensor_dims(written) != index_dims or element_type(written.type) != element:
            return None
    elif not (element in FLOAT_ELEMENTS and str(written.type) in ("!torch.float", "!torch.int")
              or element in ("si64", "si32", "si16", "si8", "ui8")
              and str(written.type) == "!torch.int"):
        return None
    if not ranges.within(index, dim_size(table, axis)):
        return None
    return axis


class ScatterAsSelect(Pass):
    name = "dync-scatter-as-select"
    summary = "a scatter of one element per row into an in-range position as a select against an iota"

    def run(self, module: ir.Operation) -> None:
        ranges = ValueRanges(module)
        found = [(op, axis) for op in nested_ops(module) if op.name in _SCATTERS
                 and (axis := _one_per_row(op, ranges)) is not None]
        with module.context:
            for op, axis in found:
                _select(op, axis)


def _select(op: ir.Operation, axis: int) -> None:
    """Replace the scatter `op` along `axis` by a select against an iota along it."""
    b = TorchBuilder(op)
    table, index, written = op.operands[0], op.operands[2], op.operands[3]
    dims = type_dims(table.type)
    rank = len(dims)
    iota = b("torch.aten.arange", vtensor_of([dims[axis]], "si64"), b.size(table, axis),
             b.int(SCALAR_TYPES["si64"]), b.none, b.none, b.none)
    bind_from(iota, table, lambda e: [e[axis]], b.ip)
    for trailing in range(1, rank - axis):  # [n] -> [n, 1, ..., 1]: against the index's dims
        iota = b("torch.aten.unsqueeze", vtensor_of([dims[axis]] + [1] * trailing, "si64"),
                 iota, b.int(-1))
    hit = b("torch.aten.eq.Tensor", vtensor_of(dims, "i1"), index, iota)
    bind_from(hit, table, lambda e: e, b.ip)
    where = "torch.aten.where.self" if op.name == "torch.aten.scatter.src" \
        else "torch.aten.where.ScalarSelf"
    selected = b(where, op.results[0].type, hit, written, table)
    op.results[0].replace_all_uses_with(selected)
    op.erase()
