"""`dync-check-indices`: an index read from data is checked before it is used.

Reads: every op that reads a tensor at positions given by another tensor (or a run-time
int): `aten.embedding`, `index_select`, `gather`, the `scatter` family, `index.Tensor`,
`index_put` and `select.int`, in every function.
Writes: before each, a check that every index lies in its range — `[0, n)` where eager
PyTorch raises for negatives (embedding, index_select, gather, scatter), `[-n, n)` where it
wraps them (indexing, `select`) — as `torch.runtime.assert` over `any(idx < lo or idx >= n)`
(a `cf.assert` in IREE, which stops the call with the message); the message starts with
`INDEX_CHECK` and names the op and its `file:line`, which the runtime turns into
`dync.IndexOutOfRangeError`. An index that is a constant in range, or that dync's own
rewriting made in range by construction (a recurrent layer's time-step loop), is not
checked. Indices of `index_put` are also made non-negative (`remainder` by n):
torch-mlir's lowering in IREE 3.13 writes to the wrong rows for negative indices.

Without the check, IREE reads or writes outside the table: garbage results or a crash
(SIGSEGV), where eager raises `IndexError`. The check costs one reduction over the indices and
one read of its result by the host per op (an IREE readback: a sync point on a GPU); drop the
pass from `passes=` to trade safety for that (BENCHMARKS.md measures it). No paper section:
this is the "bad input gets a clear error" contract of the runtime.
"""

from __future__ import annotations

from dataclasses import dataclass

from iree.compiler import ir

from ..dialects.locations import made_by, where_in_model
from ..dialects.symbolic import element_type, type_dims
from ..dialects.torch_ops import (
    constant_int,
    constant_ints,
    create,
    defining,
    int_constant,
    none_set,
    vtensor_type,
)
from ..dialects.walk import functions, nested_ops
from ..errors import INDEX_CHECK
from .pipeline import Pass


@dataclass(frozen=True)
class _Reads:
    """Where an op takes its table (`table` operand), its index operand (`index`, or `list`:
    a list of optional index tensors, one per dim) and the dim indexed (a constant operand
    `dim`, else `fixed_dim`); `wraps`: negative indices count from the end."""

    table: int
    index: int
    dim: int | None = None
    fixed_dim: int = 0
    wraps: bool = False
    listed: bool = False


_READS = {
    "torch.aten.embedding": _Reads(table=0, index=1),
    "torch.aten.index_select": _Reads(table=0, index=2, dim=1),
    "torch.aten.gather": _Reads(table=0, index=2, dim=1),
    "torch.aten.scatter.src": _Reads(table=0, index=2, dim=1),
    "torch.aten.scatter.value": _Reads(table=0, index=2, dim=1),
    "torch.aten.scatter.reduce": _Reads(table=0, index=2, dim=1),
    "torch.aten.scatter.value_reduce": _Reads(table=0, index=2, dim=1),
    "torch.aten.scatter_add": _Reads(table=0, index=2, dim=1),
    "torch.aten.scatter_reduce.two": _Reads(table=0, index=2, dim=1),
    "torch.aten.select.int": _Reads(table=0, index=2, dim=1, wraps=True),
    "torch.aten.index.Tensor": _Reads(table=0, index=1, wraps=True, listed=True),
    "torch.aten.index.Tensor_hacked_twin": _Reads(table=0, index=1, wraps=True, listed=True),
    "torch.aten.index_put": _Reads(table=0, index=1, wraps=True, listed=True),
    "torch.aten.index_put.hacked_twin": _Reads(table=0, index=1, wraps=True, listed=True),
    "torch.aten._index_put_impl": _Reads(table=0, index=1, wraps=True, listed=True),
}
_NORMALIZED = {"torch.aten.index_put", "torch.aten.index_put.hacked_twin",
               "torch.aten._index_put_impl"}


# dync's own code whose indices are in range by construction: the time-step loop of a
# recurrent layer (`rewrite.recurrent`) indexes its sequence by a counter that runs from 0 to
# the sequence's length.
_IN_RANGE_BY_CONSTRUCTION = ("frontends/pytorch/rewrite/recurrent.py",)


class CheckIndices(Pass):
    name = "dync-check-indices"
    summary = "check indices read from data against their table's size (IndexError, not garbage)"

    def run(self, module: ir.Operation) -> None:
        for func in functions(module).values():
            for op in nested_ops(func):
                reads = _READS.get(op.name)
                if reads is not None and not any(made_by(op, path)
                                                 for path in _IN_RANGE_BY_CONSTRUCTION):
                    _check(op, reads)


def _check(op: ir.Operation, reads: _Reads) -> None:
    table = op.operands[reads.table]
    rank = len(type_dims(table.type) or ())
    if reads.listed:
        listed = defining(op.operands[reads.index], "torch.prim.ListConstruct")
        if listed is None:
            return
        indices = list(listed.operands)
        checked = [_check_one(op, table, axis, index, reads) for axis, index in enumerate(indices)]
        if op.name in _NORMALIZED and any(v is not None for v in checked):
            new = [v if v is not None else index for v, index in zip(checked, indices, strict=True)]
            op.operands[reads.index] = create("torch.prim.ListConstruct", listed.result.type,
                                              ir.InsertionPoint(op), op.location, operands=new)
        return
    axis = reads.fixed_dim
    if reads.dim is not None:
        axis = constant_int(op.operands[reads.dim])
        if axis is None or rank == 0:
            return
        axis %= rank
    _check_one(op, table, axis, op.operands[reads.index], reads)


def _check_one(op: ir.Operation, table: ir.Value, axis: int, index: ir.Value,
               reads: _Reads) -> ir.Value | None:
    """Insert the check of `index` into dim `axis` of `table` before `op`; for `index_put`,
    return the index made non-negative."""
    element = element_type(index.type)
    is_tensor = element is not None
    if is_tensor and (element == "i1" or not element.startswith(("si", "ui", "i"))):
        return None  # a boolean mask, or no index at all (`none` in an index list)
    if not is_tensor and str(index.type) != "!torch.int":
        return None
    dims = type_dims(table.type) or ()
    size = dims[axis] if axis < len(dims) else None
    if size is not None and _constant_in_range(index, size, reads.wraps):
        return None
    ip, loc = ir.InsertionPoint(op), op.location
    n = int_constant(size, ip, loc) if size is not None else create(
        "torch.aten.size.int", "!torch.int", ip, loc, operands=[table, int_constant(axis, ip, loc)])
    low = create("torch.aten.neg.int", "!torch.int", ip, loc, operands=[n]) if reads.wraps \
        else int_constant(0, ip, loc)
    if is_tensor:
        flags = vtensor_type(ir.Type.parse(str(index.type).replace(element, "i1")),
                             type_dims(index.type))
        below = create("torch.aten.lt.Scalar", flags, ip, loc, operands=[index, low])
        above = create("torch.aten.ge.Scalar", flags, ip, loc, operands=[index, n])
        bad = create("torch.aten.logical_or", flags, ip, loc, operands=[below, above])
        ok = none_set(bad, ip, loc)
    else:
        ok = create("torch.aten.__and__.bool", "!torch.bool", ip, loc, operands=[
            create("torch.aten.ge.int", "!torch.bool", ip, loc, operands=[index, low]),
            create("torch.aten.lt.int", "!torch.bool", ip, loc, operands=[index, n])])
    where = where_in_model(op) or "an unknown line"
    extent = f"{size}" if size is not None else "size"
    bounds = f"[-{extent}, {extent})" if reads.wraps else f"[0, {extent})"
    ir.Operation.create("torch.runtime.assert", operands=[ok], loc=loc, ip=ip, attributes={
        "message": ir.StringAttr.get(
            f"{INDEX_CHECK} {op.name.removeprefix('torch.aten.')} at {where} reads an index "
            f"outside {bounds} (dim {axis} of its input)")})
    if op.name in _NORMALIZED and is_tensor:
        return create("torch.aten.remainder.Scalar", index.type, ip, loc, operands=[index, n])
    return None


def _constant_in_range(index: ir.Value, size: int, wraps: bool) -> bool:
    """Whether `index` is a constant (an int, or a dense integer literal) whose values all lie
    in range."""
    values = constant_ints(index)
    return values is not None and all((-size if wraps else 0) <= v < size for v in values)
