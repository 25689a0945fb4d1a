"""`dync-check-indices`: an index read from data is checked before it is used.

Reads: every op that reads a tensor at positions given by another tensor (or a run-time
int): `aten.embedding`, `index_select`, `gather`, the `scatter` family, `index.Tensor`,
`index_put` and `select.int`, in every function; the size of the dim indexed (static, or the
declared range of the symbols its shape binding names).
Writes: for each, a check that every index lies in its range — `[0, n)` where eager
PyTorch raises for negatives (embedding, index_select, gather, scatter), `[-n, n)` where it
wraps them (indexing, `select`) — as `torch.runtime.assert` over `any(idx < lo or idx >= n)`
(a `cf.assert` in IREE, which stops the call with the message); the message starts with
`INDEX_CHECK` and names the op and its `file:line`, which the runtime turns into
`dync.IndexOutOfRangeError`. Where the dim indexed can never be empty (a static size, or a
shape binding at least 1 over its symbols' declared ranges), the check is computed before the
op but read by the host only at the next point where the host reads or waits anyway (a read
of a tensor's value, an `scf` region op, a call, another assert, the block's end), and the
op meanwhile takes index 0 for a bad one, so that it never reads or writes outside the table;
checks meeting at one point are read as one int (the position of the first bad one) and
assert in program order, so the error names the first bad op as before. Elsewhere (a dim
that may be 0) the check is read right before the op. An index read again later in the same
block against a dim of the same size (the same symbol), computed the same way
(`computed_as`), is not checked again: the later op takes what the first check left. An
index that is a constant in range, or that dync's own rewriting made in range by construction
(a recurrent layer's time-step loop), is not checked; nor is one proven in range where it is made (`dync.analysis.value_ranges`:
the rows and columns `where`/`nonzero` find into a table as long as the dim they count, an
`argmax`/`topk`/`sort` position along as many entries as the table has, a coordinate clamped
into the table, sums and multiples of those — also across calls, branches and a decoding loop's
fed-back token): a MoE's per-expert gathers and `index_add_`, a greedy decoder's token
embedding. Indices of `index_put` are also made non-negative (`remainder` by n): torch-mlir's
lowering in IREE 3.13 writes to the wrong rows for negative indices.

Without the check, IREE reads or writes outside the table: garbage results or a crash
(SIGSEGV), where eager raises `IndexError`. The check costs one reduction over the indices,
and each read by the host stops IREE's queue until the device catches up (one thread, 2
threads for eager: the MoE's three lookups per expert, read before each, cost it 0.235 ms a
call against 0.173 without checks; read together at the end of each expert, 0.203-0.209
against 0.171-0.176; the captioner 0.149 -> 0.128-0.130, as without). Drop the pass from
`passes=` to trade safety for the rest (BENCHMARKS.md measures it). No paper section: this is
the "bad input gets a clear error" contract of the runtime.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy
from iree.compiler import ir

from ..analysis.op_kinds import HOST_READS
from ..analysis.value_ranges import ValueRanges, counted_from_end, dim_size
from ..dialects.locations import made_by, where_in_model
from ..dialects.symbolic import bounds, element_type, from_affine, narrow_range, type_dims
from ..dialects.torch_ops import (
    bindings,
    bool_constant,
    computed_as,
    constant_int,
    constant_ints,
    create,
    defining,
    int_constant,
    int_list,
    none_constant,
    none_set,
    vtensor_of,
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
# Ops at which the host waits for the device, besides reads and region ops.
_WAITS = ("func.call", "torch.runtime.assert")
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
        ranges = ValueRanges(module)
        for func in functions(module).values():
            checks = _Checks(ranges)
            for op in nested_ops(func):
                reads = _READS.get(op.name)
                if reads is not None and not any(made_by(op, path)
                                                 for path in _IN_RANGE_BY_CONSTRUCTION):
                    _check(op, reads, checks)
            _read_deferred(checks.deferred)


class _Checks:
    """The checks made in one function: those whose read is deferred, and each check by what
    it proves — the index (compared by how it is computed, so that `t[i]` and `u[i]` written
    apart share one) against a dim's size (its symbol: two tables of one size share it) — with
    its block and the index an op takes after it, so that a later read of the same index in
    the same block against the same size is not checked again (the loop body of a detector's
    NMS reads `boxes[i]`, `area[i]` and `boxes[i, 2:]`: one check, one wait of the host)."""

    def __init__(self, ranges: ValueRanges):
        self.ranges = ranges
        self.deferred: list[_Deferred] = []
        self.done: dict[tuple, tuple[ir.Block, ir.Value | None]] = {}

    def earlier(self, key: tuple, op: ir.Operation) -> tuple[bool, ir.Value | None]:
        """Whether an earlier op of `op`'s block checked `key`, and the index it takes."""
        found = self.done.get(key)
        if found is None or found[0] != op.operation.block:
            return False, None
        return True, found[1]


@dataclass
class _Deferred:
    """A check whose read by the host waits for the next point where the host reads anyway:
    the op checked, a 0-d `i1` tensor set when an index is bad, and the check's message."""

    op: ir.Operation
    bad: ir.Value
    message: str


def _check(op: ir.Operation, reads: _Reads, checks: _Checks) -> None:
    table = op.operands[reads.table]
    rank = len(type_dims(table.type) or ())
    if reads.listed:
        listed = defining(op.operands[reads.index], "torch.prim.ListConstruct")
        if listed is None:
            return
        indices = list(listed.operands)
        checked = [_check_one(op, table, axis, index, reads, checks)
                   for axis, index in enumerate(indices)]
        if any(v is not None for v in checked):
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
    replaced = _check_one(op, table, axis, op.operands[reads.index], reads, checks)
    if replaced is not None:
        op.operands[reads.index] = replaced


def _check_one(op: ir.Operation, table: ir.Value, axis: int, index: ir.Value, reads: _Reads,
               checks: _Checks) -> ir.Value | None:
    """Insert the check of `index` into dim `axis` of `table` before `op`, or, where the table
    can never be empty, compute it there and add its read to `checks.deferred` (`op` then takes
    0 for a bad index: it reads inside the table until the host sees the check fail), unless an
    earlier op of the block checked the same; return the index `op` should take instead, if
    any."""
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
    extent_expr = dim_size(table, axis)
    if checks.ranges.within(index, extent_expr):
        return None  # in range wherever it comes from: no check, nothing to normalize
    ip, loc = ir.InsertionPoint(op), op.location
    key = (computed_as(index), extent_expr if extent_expr is not None else (table, axis),
           reads.wraps)
    seen, replaced = checks.earlier(key, op)
    if not seen:
        replaced = _new_check(op, table, axis, size, index, reads, checks.deferred)
        checks.done[key] = (op.operation.block, replaced)
    if op.name in _NORMALIZED and is_tensor:
        return create("torch.aten.remainder.Scalar", index.type, ip, loc,
                      operands=[replaced or index, _extent(table, axis, size, ip, loc)])
    return replaced


def _extent(table: ir.Value, axis: int, size: int | None, ip: ir.InsertionPoint,
            loc: ir.Location) -> ir.Value:
    """Dim `axis` of `table` as a `!torch.int`: `size` where static."""
    if size is not None:
        return int_constant(size, ip, loc)
    return create("torch.aten.size.int", "!torch.int", ip, loc,
                  operands=[table, int_constant(axis, ip, loc)])


def _new_check(op: ir.Operation, table: ir.Value, axis: int, size: int | None, index: ir.Value,
               reads: _Reads, deferred: list[_Deferred]) -> ir.Value | None:
    """The check of `_check_one`, made; returns the index `op` takes after it, if another."""
    element = element_type(index.type)
    ip, loc = ir.InsertionPoint(op), op.location
    n = _extent(table, axis, size, ip, loc)
    low = create("torch.aten.neg.int", "!torch.int", ip, loc, operands=[n]) if reads.wraps \
        else int_constant(0, ip, loc)
    where = where_in_model(op) or "an unknown line"
    extent = f"{size}" if size is not None else "size"
    # a Python index counted from the end (`counted_from_end`) is read as in range [-n, n)
    from_end = reads.wraps or counted_from_end(index)
    bounds = f"[-{extent}, {extent})" if from_end else f"[0, {extent})"
    message = (f"{INDEX_CHECK} {op.name.removeprefix('torch.aten.')} at {where} reads an index "
               f"outside {bounds} (dim {axis} of its input)")
    replaced = None
    if element is not None:
        # An expanded index (a gather's `idx.unsqueeze(-1).expand(-1, -1, C)`) is checked
        # before the expand: C times less work, and IREE 3.13 held the expanded flags of a
        # dynamic size on the stack ("exceeded stack allocation limit": DynamicViT's pruning).
        expand = defining(index, "torch.aten.expand")
        source = expand.operands[0] if expand is not None else index
        flags = vtensor_type(ir.Type.parse(str(source.type).replace(element, "i1")),
                             type_dims(source.type))
        below = create("torch.aten.lt.Scalar", flags, ip, loc, operands=[source, low])
        above = create("torch.aten.ge.Scalar", flags, ip, loc, operands=[source, n])
        bad = create("torch.aten.logical_or", flags, ip, loc, operands=[below, above])
        if _never_empty(table, axis, size):
            deferred.append(_Deferred(op, create("torch.aten.any", vtensor_type(flags, ()), ip,
                                                 loc, operands=[bad]), message))
            replaced = create("torch.aten.where.ScalarSelf", source.type, ip, loc,
                              operands=[bad, int_constant(0, ip, loc), source])
            if expand is not None:
                replaced = create("torch.aten.expand", index.type, ip, loc,
                                  operands=[replaced, *list(expand.operands)[1:]])
        else:
            _assert(none_set(bad, ip, loc), message, ip, loc)
    else:
        _assert(create("torch.aten.__and__.bool", "!torch.bool", ip, loc, operands=[
            create("torch.aten.ge.int", "!torch.bool", ip, loc, operands=[index, low]),
            create("torch.aten.lt.int", "!torch.bool", ip, loc, operands=[index, n])]),
            message, ip, loc)
    return replaced


def _assert(ok: ir.Value, message: str, ip: ir.InsertionPoint, loc: ir.Location) -> None:
    ir.Operation.create("torch.runtime.assert", operands=[ok], loc=loc, ip=ip,
                        attributes={"message": ir.StringAttr.get(message)})


def _read_deferred(deferred: list[_Deferred]) -> None:
    """Read the deferred checks where the host reads anyway, the checks meeting at one point
    read together: the first bad one's position (`len(checks)` when none is), one int read by
    the host, and each check asserting that it is not that one, in program order."""
    groups: list[tuple[ir.Operation, list[_Deferred]]] = []
    for check in deferred:
        point = _next_host_read(check.op)
        if groups and groups[-1][0].operation == point.operation:
            groups[-1][1].append(check)
        else:
            groups.append((point, [check]))
    for point, checks in groups:
        ip, loc = ir.InsertionPoint(point), checks[0].op.location
        if len(checks) == 1:
            fine = create("torch.aten.logical_not", checks[0].bad.type, ip, loc,
                          operands=[checks[0].bad])
            _assert(create("torch.aten.Bool.Tensor", "!torch.bool", ip, loc, operands=[fine]),
                    checks[0].message, ip, loc)
            continue
        k = len(checks)
        none = none_constant(ip, loc)
        listed = create("torch.prim.ListConstruct", "!torch.list<vtensor>", ip, loc,
                        operands=[c.bad for c in checks])
        stacked = create("torch.aten.stack", vtensor_of([k], "i1"), ip, loc,
                         operands=[listed, int_constant(0, ip, loc)])
        positions = create("torch.aten.arange", vtensor_of([k], "si64"), ip, loc,
                           operands=[int_constant(k, ip, loc), none, none, none, none])
        marked = create("torch.aten.where.ScalarOther", vtensor_of([k], "si64"), ip, loc,
                        operands=[stacked, positions, int_constant(k, ip, loc)])
        first = create("torch.aten.amin", vtensor_of([], "si64"), ip, loc, operands=[
            marked, int_list([0], ip, loc), bool_constant(False, ip, loc)])
        first_bad = create("torch.aten.Int.Tensor", "!torch.int", ip, loc, operands=[first])
        for i, check in enumerate(checks):
            _assert(create("torch.aten.ne.int", "!torch.bool", ip, loc,
                           operands=[first_bad, int_constant(i, ip, loc)]), check.message, ip,
                    check.op.location)


def _never_empty(table: ir.Value, axis: int, size: int | None) -> bool:
    """Whether dim `axis` of `table` has at least one element for every input: a static size,
    or one whose shape binding is at least 1 over the declared ranges of its symbols (so that
    index 0 is always readable)."""
    if size is not None:
        return size >= 1
    found = bindings(table)[:1]
    if not found:
        return False
    exprs = ir.AffineMapAttr(found[0].attributes["shape_expressions"]).value.results
    if axis >= len(exprs):
        return False
    symbols, ranges = [], {}
    for operand in list(found[0].operands)[1:]:
        owner = operand.owner
        if isinstance(owner, ir.Block) or owner.name != "torch.symbolic_int":
            return False
        symbols.append(sympy.Symbol(ir.StringAttr(owner.attributes["symbol_name"]).value))
        narrow_range(ranges, owner)
    expr = from_affine(exprs[axis], symbols)
    if expr.has(sympy.Mod):
        return False  # not monotone: its least value need not lie at a corner of the ranges
    least = bounds(expr, ranges)
    return least is not None and least[0] >= 1


def _next_host_read(op: ir.Operation) -> ir.Operation:
    """The first op after `op` in its block where the host reads or waits anyway: a read of a
    tensor's value, an op with regions, a call, an assert, or the block's terminator."""
    ops = list(op.operation.block.operations)
    at = next(i for i, o in enumerate(ops) if o.operation == op.operation)
    for later in ops[at + 1:]:
        if later.name in HOST_READS or len(later.regions) or later.name in _WAITS:
            return later
    return ops[-1]


def _constant_in_range(index: ir.Value, size: int, wraps: bool) -> bool:
    """Whether `index` is a constant (an int, or a dense integer literal) whose values all lie
    in range."""
    values = constant_ints(index)
    return values is not None and all((-size if wraps else 0) <= v < size for v in values)
