"""`dync-tie-region-shapes`: give the tensors that leave a branch or a loop the dims of the
function's own arguments.

Reads: `scf.if`/`scf.while` results (through `torch_c.from_builtin_tensor`) and their
`torch.bind_symbolic_shape` bindings; the bindings of the function's arguments.
Writes: after each such tensor whose bound dims are computed from symbols the arguments have
(a dim of an argument bound to the plain symbol) — the symbols themselves, or sums, products,
floor and ceiling divisions of them (a strided convolution's or a pooling's output size) — a
`flow.tensor.tie_shape` of it (between `torch_c` casts) to those same sizes, read with
`torch.aten.size.int` from the arguments and computed at the function's entry (after the
arguments' bindings); the tensor's later uses read the tied tensor, which is bound like the
tensor.

Why: IREE 3.13 gives each dynamic dim that leaves an `scf.if` an SSA value of its own. A
dispatch that meets such a tensor and sizes read from the arguments (a `view` to
`x.size(0), n, x.size(2), x.size(3)` after a loop, then a reduction added to the loop's
tensor) gets one dim under two workload ordinals, and its workgroup count covers half the
output: the rest is left unwritten (`lit/upstream/iree-region-dims-two-ordinals.mlir`). The
tie states the dims with the arguments' values, and the dispatch sees one value per dim. (A
`torch.aten.view` to those sizes did the same, but IREE computed some views of a list's
bounded buffer wrong once H or W passed 32: lists left by break around an early return.)
A dim computed from the symbols meets the same bug (a loop over a strided convolution's output
left half unwritten), so it is computed from the arguments too.
No paper section: a workaround at the boundary to IREE, run last.
"""

from __future__ import annotations

import sympy
from iree.compiler import ir

from ..dialects.symbolic import bound_dims
from ..dialects.torch_ops import (
    BIND,
    bindings,
    builtin_type,
    create,
    int_constant,
    int_expression,
    is_int_expression,
    leaves_region,
    owner,
    type_dims,
)
from ..dialects.walk import functions, ops_named
from .pipeline import Pass


def _argument_dims(func: ir.Operation) -> dict[str, tuple[ir.Value, int]]:
    """Symbol name -> an argument of `func` and the axis bound to that plain symbol."""
    found: dict[str, tuple[ir.Value, int]] = {}
    for arg in func.regions[0].blocks[0].arguments:
        for bind in bindings(arg):
            for axis, dim in enumerate(bound_dims(bind)):
                if dim.is_Symbol:
                    found.setdefault(dim.name, (arg, axis))
    return found


def _region_tensors(func: ir.Operation) -> list[ir.Operation]:
    """The bindings of tensors that leave an `scf.if` or `scf.while` of `func`."""
    return [bind for bind in ops_named(func, BIND) if leaves_region(bind.operands[0])]


class TieRegionShapes(Pass):
    name = "dync-tie-region-shapes"
    summary = ("tie the dims of the tensors leaving scf.if/scf.while to sizes read from the "
               "function's arguments, so that IREE sees one value per dim")

    def run(self, module: ir.Operation) -> None:
        for func in functions(module).values():
            tensors = _region_tensors(func)
            if not tensors:
                continue
            sizes = _EntrySizes(func)
            for bind in tensors:
                dims = bound_dims(bind)
                if all(d.is_Integer for d in dims) or not all(sizes.can_compute(d) for d in dims):
                    continue
                _tie(bind, dims, sizes)


class _EntrySizes:
    """The sizes a function's bindings state, computed once each at its entry from its
    arguments' sizes."""

    def __init__(self, func: ir.Operation):
        self.anchors = _argument_dims(func)
        self.values: dict[sympy.Expr, ir.Value] = {}
        block = func.regions[0].blocks[0]
        # After the arguments' bindings (IREE ties each argument to its sizes at its binding,
        # and a read of it before that no longer sees it), which come first (dync-canonicalize)
        # but for what passes put at the entry since (`dync-distinct-fills`' barriers). Not
        # after later symbols: a data-dependent size's comes where it is computed.
        bound = [op for op in block.operations if op.name == BIND and owner(op.operands[0]) is None]
        if bound:
            self.ip, self.loc = ir.InsertionPoint.after(bound[-1]), bound[-1].location
        else:
            first = next(op for op in block.operations
                         if op.name not in ("torch.symbolic_int", BIND))
            self.ip, self.loc = ir.InsertionPoint(first), first.location

    def can_compute(self, dim: sympy.Expr) -> bool:
        return is_int_expression(dim) and all(s.name in self.anchors for s in dim.free_symbols)

    def of(self, dim: sympy.Expr) -> ir.Value:
        return int_expression(dim, self._size, self.ip, self.loc, self.values)

    def _size(self, name: str) -> ir.Value:
        arg, axis = self.anchors[name]
        return create("torch.aten.size.int", "!torch.int", self.ip, self.loc,
                      operands=[arg, int_constant(axis, self.ip, self.loc)])


def _tie(bind: ir.Operation, dims: tuple[sympy.Expr, ...], sizes: _EntrySizes) -> None:
    value, ip, loc = bind.operands[0], ir.InsertionPoint(bind), bind.location
    builtin = builtin_type(value.type, dynamic=True)
    if builtin is None:
        return
    value.context.dialects["flow"]  # registered lazily: see `torch_ops.through_barrier`
    index = ir.IndexType.get()
    to = create("torch_c.to_builtin_tensor", builtin, ip, loc, operands=[value])
    tied_dims = []
    for dim, static in zip(dims, type_dims(value.type), strict=True):
        if static is None:
            size = int_constant(int(dim), ip, loc) if dim.is_Integer else sizes.of(dim)
            raw = create("torch_c.to_i64", "i64", ip, loc, operands=[size])
            tied_dims.append(create("arith.index_cast", index, ip, loc, operands=[raw]))
    tied = create("flow.tensor.tie_shape", builtin, ip, loc, operands=[to, *tied_dims])
    back = create("torch_c.from_builtin_tensor", value.type, ip, loc, operands=[tied])
    ir.Operation.create(BIND, operands=[back, *list(bind.operands)[1:]],
                        attributes={"shape_expressions": bind.attributes["shape_expressions"]},
                        loc=loc, ip=ip)
    value.replace_all_uses_except(back, [op.operation for op in (to.owner, *bindings(value))])
    # The tensor's own binding stays before its first use, the cast (IREE rewrites the uses
    # after a binding; dync-canonicalize).
    bind.move_before(to.owner.operation)
