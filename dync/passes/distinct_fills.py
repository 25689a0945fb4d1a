"""`dync-distinct-fills`: every tensor made from nothing but its shape is made from a value of
its own.

Reads: fills (`torch.aten.zeros`, `ones`, `full`, their `_like` and `new_` forms,
`fill.Scalar`, a `torch.vtensor.literal` broadcast: ONNX's `ConstantOfShape`) and aranges (`arange`, `arange.start`, `arange.start_step`) whose result has a
dynamic dim and is written in place (the first operand of `index_put`, `scatter*`,
`select_scatter`, `slice_scatter`, ... directly or through ops of one tensor operand: a dtype
conversion, a view), or, for fills of zero, read as an operand of a product (`MATMULS`), in
every function.
Writes: for each write (and each product's operand), a copy of its fill (and of the ops
between) of its own, placed before the write, whose value (0 or 1 made explicit: `zeros`
becomes `full`, `zeros_like` becomes `full_like`, `new_zeros` becomes `new_full`) is read
through a `util.optimization_barrier` of its own (between `torch_c` casts; a broadcast
literal itself, after the literal); an arange copy gets a barrier's 0 added. A barrier sits where its scalar is defined (the constants the pass makes:
at the function's entry), not beside the fill: a host-side barrier between two device ops
splits IREE's stream into two submissions there. A fill written twice becomes two fills. Originals no one reads any more
are erased. A scatter's updates (`index_put`'s values, `scatter_add`'s source) of a dynamic
shape, a fill or whatever op makes them (not a function argument), are read by the scatter
through a fence of the tensor (IREE's `iree_tensor_ext.compute_barrier.start`, which keeps
the two apart without the host's wait an optimization barrier costs:
`lit/upstream/iree-optimization-barrier-host-wait.mlir`; SegmentMeanPool's two
`scatter_add`s, 20.0 -> 15.9 us a call). Values, dtypes and shapes are unchanged.

Why: IREE 3.13 merges two fills (or aranges) of the same shape into one when it cannot make
them constants, which it does not for dynamic shapes, and then writes both tensors' in-place
updates into that one buffer (copy-on-write gives each its own producer, and the CSE after it
merges them again). `a = torch.zeros_like(x); a[:, 0] = u; b = torch.zeros_like(x);
b[:, 0] = v` returned `a` with both writes and `b` all zeros; two `scatter_add` into
`zeros_like`, two `index_put` into `arange(n)` the same (`lit/upstream/iree-shared-fill.mlir`).
A barrier is never merged, so neither are the fills it feeds. The cost: IREE no longer sees
the fill's value as a constant (it cannot fold a zero fill into what reads it). Static fills
are constants, which copy-on-write copies correctly, and are left alone; so are fills nothing
writes into: those cannot be merged into trouble, and a barrier'd fill feeding a `cat` of a
list left by a loop made IREE fail at run time ("indirect buffer reference slot 0 is out of
range", fuzz seed 101). No paper section: a workaround at the boundary to IREE, like
`dync-pack-sort-keys` for the sorts' index iotas. The updates: IREE 3.13 fuses a fill into
the scatter's dispatch and holds it on the stack at its dim's upper bound, "exceeded stack
allocation limit" (a GCN's degrees, `zeros(n).index_add_(0, dst, ones(E))` with E up to
100000: 400000 bytes), and fused gathers (a GCN's messages, `h[src] * norm`) gave "unbounded
stack allocations"; behind the fence the updates are a dispatch of their own.

A zero fill of a dynamic shape that a product (`mm`, `matmul`, `linear`, `addmm`, ...) reads
as an operand gets the same private copy: IREE 3.13 merges it with the product's own zero
accumulator and, for x86-64-v3 (AVX2) code, writes the product wrong from 64 rows on:
`h0 = x.new_zeros(n, 8); x + h0 @ W.t()` (an `nn.RNN`'s first step from its zero state)
came back garbage for n >= 64 and right for n = 63 (`lit/upstream/iree-zero-fill-matmul.mlir`).
"""

from __future__ import annotations

from iree.compiler import ir

from ..analysis.op_kinds import MATMULS, SCATTERS
from ..dialects.symbolic import element_type, is_tensor, type_dims
from ..dialects.torch_ops import (
    bindings,
    constant_number,
    create,
    float_constant,
    int_constant,
    owner,
    scalar_through_barrier,
    through_barrier,
    through_fence,
    users,
)
from ..dialects.walk import function_argument, functions, nested_ops
from .pipeline import Pass

# op -> (the op it becomes, where its fill value goes, the value made explicit); a fill that
# has a value already keeps its name and has None as the value.
_FILLS = {
    "torch.aten.zeros": ("torch.aten.full", 1, 0),
    "torch.aten.ones": ("torch.aten.full", 1, 1),
    "torch.aten.zeros_like": ("torch.aten.full_like", 1, 0),
    "torch.aten.ones_like": ("torch.aten.full_like", 1, 1),
    "torch.aten.new_zeros": ("torch.aten.new_full", 2, 0),
    "torch.aten.new_ones": ("torch.aten.new_full", 2, 1),
    "torch.aten.full": ("torch.aten.full", 1, None),
    "torch.aten.full_like": ("torch.aten.full_like", 1, None),
    "torch.aten.new_full": ("torch.aten.new_full", 2, None),
    "torch.aten.fill.Scalar": ("torch.aten.fill.Scalar", 1, None),
}
_ARANGES = ("torch.aten.arange", "torch.aten.arange.start", "torch.aten.arange.start_step")
# A constant broadcast to a dynamic shape is a fill too (ONNX's ConstantOfShape imports so).
_BROADCASTS = ("torch.aten.broadcast_to", "torch.aten.expand")
_LITERAL = "torch.vtensor.literal"
_REACH = 8  # ops between a fill and the write into it
# scatters IREE lowers to `iree_linalg_ext.scatter` -> the operand holding the updates
_UPDATES = {"torch.aten.index_put": 2, "torch.aten.index_put.hacked_twin": 2,
            "torch.aten._index_put_impl": 2, "torch.aten.scatter.src": 3,
            "torch.aten.scatter_add": 3, "torch.aten.scatter_reduce.two": 3}


class DistinctFills(Pass):
    name = "dync-distinct-fills"
    summary = "fills and aranges of dynamic shape read a value of their own (IREE merges them)"

    def run(self, module: ir.Operation) -> None:
        with module.context, ir.Location.unknown():
            for func in functions(module).values():
                self._run(func)

    def _run(self, func: ir.Operation) -> None:
        replaced: list[ir.Operation] = []  # the original chains' ops, the last first
        # IREE lowers a scatter to a write into its operand 0's buffer (a fill read by
        # anything else, a `cat` for one, is not merged into trouble and keeps its value).
        for write in [op for op in nested_ops(func) if op.name in SCATTERS]:
            chain = _chain(write.operands[0])
            if chain is None:
                continue
            dims = type_dims(chain[0].results[0].type)
            if dims is None or None not in dims:
                continue  # static: IREE makes it a constant
            write.operands[0] = _private_copy(chain, ir.InsertionPoint(write), func)
            replaced += [op for op in reversed(chain) if op not in replaced]
        for product in [op for op in nested_ops(func) if op.name in MATMULS]:
            for i, operand in enumerate(product.operands):
                chain = _chain(operand) if is_tensor(operand.type) else None
                if chain is None or not _zero_fill(chain[0]):
                    continue
                dims = type_dims(chain[0].results[0].type)
                if dims is not None and None in dims:
                    product.operands[i] = _private_copy(chain, ir.InsertionPoint(product), func)
                    replaced += [op for op in reversed(chain) if op not in replaced]
        for write in [op for op in nested_ops(func) if op.name in _UPDATES]:
            updates = write.operands[_UPDATES[write.name]]
            dims = type_dims(updates.type) if is_tensor(updates.type) else None
            if dims is not None and None in dims and owner(updates) is not None:
                write.operands[_UPDATES[write.name]] = through_fence(
                    updates, ir.InsertionPoint(write), write.location)
        while dead := [op for op in replaced if not users(op.results[0])]:
            for op in dead:  # those no one reads any more, the last of a chain first
                replaced.remove(op)
                for bind in bindings(op.results[0]):
                    bind.erase()
                op.erase()


def _chain(value: ir.Value) -> list[ir.Operation] | None:
    """The fill or arange `value` is computed from and the ops of one tensor operand between
    (a dtype conversion, a view, a scalar multiple), in order; else None."""
    chain: list[ir.Operation] = []
    for _ in range(_REACH):
        op = owner(value)
        if op is None:
            return None
        chain.insert(0, op)
        if op.name in _FILLS or op.name in _ARANGES or _broadcast_constant(op):
            return chain
        tensors = [v for v in op.operands if is_tensor(v.type)]
        if len(op.results) != 1 or len(tensors) != 1:
            return None
        value = tensors[0]
    return None


def _broadcast_constant(op: ir.Operation) -> bool:
    literal = owner(op.operands[0]) if op.name in _BROADCASTS else None
    return literal is not None and literal.name == _LITERAL


def _zero_fill(op: ir.Operation) -> bool:
    """Whether `op` is a fill (not an arange) of a constant zero."""
    if op.name not in _FILLS:
        return False
    _, at, explicit = _FILLS[op.name]
    if explicit is not None:
        return explicit == 0
    return constant_number(op.operands[at]) == 0


def _private_copy(chain: list[ir.Operation], ip: ir.InsertionPoint,
                  func: ir.Operation) -> ir.Value:
    """A copy of `chain` at `ip`, from a fill (or arange) whose value passes a barrier of its
    own: one per write, also when one fill is written twice (two writes into one fill are the
    same merge inside IREE). The barrier goes where its value is defined (`_barrier_ip`)."""
    root = chain[0].clone(ip=ip)
    if root.name in _FILLS:
        value = _refill(root, *_FILLS[root.name], func)
    elif root.name in _BROADCASTS:
        literal = owner(root.operands[0])
        root.operands[0] = through_barrier(literal.results[0], ir.InsertionPoint.after(literal),
                                           literal.location)
        value = root.results[0]
    else:
        value = _offset(root, func)
    for op in chain[1:]:
        copy = op.clone(ip=ip)
        for i, operand in enumerate(copy.operands):
            if is_tensor(operand.type):
                copy.operands[i] = value
        value = copy.results[0]
    return value


def _scalar_kind(result: ir.Type) -> str:
    """The kind of scalar a fill of `result` takes: a boolean tensor's fill value is an int
    (torch's fills take no `!torch.bool`: `ones_like(x, dtype=torch.bool)` made explicit as
    `full_like(x, true)` failed to verify)."""
    element = element_type(result) or "f32"
    return "!torch.float" if element.startswith(("f", "bf")) else "!torch.int"


def _constant(kind: str, value: int, ip: ir.InsertionPoint, loc: ir.Location) -> ir.Value:
    if kind == "!torch.float":
        return float_constant(float(value), ip, loc)
    return int_constant(value, ip, loc)


def _barrier_ip(value: ir.Value, func: ir.Operation, at: ir.InsertionPoint) -> ir.InsertionPoint:
    """Where a barrier of the scalar `value` goes: right after the op defining it, or at the
    start of `func` for one of its arguments; `at` (the fill) for a region's argument. A
    scalar barrier between two device ops splits IREE's stream there into two submissions
    (ScatterGather's module: 3 `stream.cmd.execute` -> 1, 18 -> 15.5 µs a call, when its
    barriers of constants were moved to the entry by hand)."""
    defining = owner(value)
    if defining is not None:
        return ir.InsertionPoint.after(defining)
    if function_argument(value) is not None:
        return _entry(func)
    return at


def _entry(func: ir.Operation) -> ir.InsertionPoint:
    return ir.InsertionPoint.at_block_begin(func.regions[0].blocks[0])


def _refill(op: ir.Operation, name: str, at: int, explicit: int | None,
            func: ir.Operation) -> ir.Value:
    """`op` (a fill) rebuilt from its value behind a barrier; the new fill."""
    ip, loc = ir.InsertionPoint(op), op.location
    operands = list(op.operands)
    if explicit is None:
        value = scalar_through_barrier(operands[at], _barrier_ip(operands[at], func, ip), loc)
        if value is None:
            return op.results[0]
        operands[at] = value
    else:
        entry = _entry(func)
        value = _constant(_scalar_kind(op.results[0].type), explicit, entry, loc)
        operands.insert(at, scalar_through_barrier(value, entry, loc))
    fill = create(name, op.results[0].type, ip, loc, operands=operands)
    op.results[0].replace_all_uses_with(fill)
    op.erase()
    return fill


def _offset(op: ir.Operation, func: ir.Operation) -> ir.Value:
    """`op` (an arange) plus a barrier's 0; the sum."""
    result = op.results[0]
    if element_type(result.type) == "i1":
        return result
    kind = _scalar_kind(result.type)
    ip, loc, entry = ir.InsertionPoint.after(op), op.location, _entry(func)
    zero = scalar_through_barrier(_constant(kind, 0, entry, loc), entry, loc)
    one = int_constant(1, ip, loc)
    shifted = create("torch.aten.add.Scalar", result.type, ip, loc, operands=[result, zero, one])
    result.replace_all_uses_except(shifted, shifted.owner.operation)
    return shifted
