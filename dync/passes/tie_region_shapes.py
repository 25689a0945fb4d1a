"""`dync-tie-region-shapes`: give the tensors that leave a branch or a loop the dims of the
function's own arguments.

Reads: `scf.if`/`scf.while` results (through `torch_c.from_builtin_tensor`) and their
`torch.bind_symbolic_shape` bindings; the bindings of the function's arguments.
Writes: after each such tensor whose bound dims are constants or symbols the arguments have
(a dim of an argument bound to the plain symbol), a `torch.aten.view` of it to those same
sizes, read with `torch.aten.size.int` from the arguments; the tensor's later uses read the
view, which is bound like the tensor.

Why: IREE 3.13 gives each dynamic dim that leaves an `scf.if` an SSA value of its own. A
dispatch that meets such a tensor and sizes read from the arguments (a `view` to
`x.size(0), n, x.size(2), x.size(3)` after a loop, then a reduction added to the loop's
tensor) gets one dim under two workload ordinals, and its workgroup count covers half the
output: the rest is left unwritten (`lit/upstream/iree-region-dims-two-ordinals.mlir`). The
view states the dims with the arguments' values, and the dispatch sees one value per dim.
No paper section: a workaround at the boundary to IREE, run last.
"""

from __future__ import annotations

from iree.compiler import ir

from ..dialects.symbolic import bound_dims
from ..dialects.torch_ops import BIND, bindings, create, int_constant, owner
from ..dialects.walk import functions, ops_named
from .pipeline import Pass

_REGION_OPS = ("scf.if", "scf.while")


def _dims(bind: ir.Operation) -> list[int | str] | None:
    """The dims a binding states: ints, or symbol names where a dim is a plain symbol;
    None when a dim is any other expression."""
    dims = list(bound_dims(bind))
    if not all(d.is_Integer or d.is_Symbol for d in dims):
        return None
    return [int(d) if d.is_Integer else d.name for d in dims]


def _argument_dims(func: ir.Operation) -> dict[str, tuple[ir.Value, int]]:
    """Symbol name -> an argument of `func` and the axis bound to that plain symbol."""
    found: dict[str, tuple[ir.Value, int]] = {}
    for arg in func.regions[0].blocks[0].arguments:
        for bind in bindings(arg):
            for axis, dim in enumerate(_dims(bind) or []):
                if isinstance(dim, str):
                    found.setdefault(dim, (arg, axis))
    return found


def _region_tensors(func: ir.Operation) -> list[ir.Operation]:
    """The bindings of tensors that leave an `scf.if` or `scf.while` of `func`."""
    found = []
    for bind in ops_named(func, BIND):
        cast = owner(bind.operands[0])
        if cast is None or cast.name != "torch_c.from_builtin_tensor":
            continue
        source = owner(cast.operands[0])
        if source is not None and source.name in _REGION_OPS:
            found.append(bind)
    return found


class TieRegionShapes(Pass):
    name = "dync-tie-region-shapes"
    summary = ("view the tensors leaving scf.if/scf.while to sizes read from the function's "
               "arguments, so that IREE sees one value per dim")

    def run(self, module: ir.Operation) -> None:
        for func in functions(module).values():
            tensors = _region_tensors(func)
            if not tensors:
                continue
            anchors = _argument_dims(func)
            sizes: dict[str, ir.Value] = {}
            for bind in tensors:
                dims = _dims(bind)
                if dims is None or not any(isinstance(d, str) for d in dims) \
                        or any(isinstance(d, str) and d not in anchors for d in dims):
                    continue
                for dim in dims:
                    if isinstance(dim, str) and dim not in sizes:
                        sizes[dim] = _size_of(func, *anchors[dim])
                _tie(bind, dims, sizes)


def _size_of(func: ir.Operation, arg: ir.Value, axis: int) -> ir.Value:
    """`torch.aten.size.int` of `arg` at `axis`, after the entry block's bindings (which come
    first there; dync-canonicalize)."""
    block = func.regions[0].blocks[0]
    first = next(op for op in block.operations
                 if op.name not in ("torch.symbolic_int", BIND))
    ip, loc = ir.InsertionPoint(first), first.location
    return create("torch.aten.size.int", "!torch.int", ip, loc,
                  operands=[arg, int_constant(axis, ip, loc)])


def _tie(bind: ir.Operation, dims: list[int | str], sizes: dict[str, ir.Value]) -> None:
    value, ip, loc = bind.operands[0], ir.InsertionPoint(bind), bind.location
    listed = [sizes[d] if isinstance(d, str) else int_constant(d, ip, loc) for d in dims]
    shape = create("torch.prim.ListConstruct", "!torch.list<int>", ip, loc, operands=listed)
    view = create("torch.aten.view", value.type, ip, loc, operands=[value, shape])
    ir.Operation.create(BIND, operands=[view, *list(bind.operands)[1:]],
                        attributes={"shape_expressions": bind.attributes["shape_expressions"]},
                        loc=loc, ip=ip)
    value.replace_all_uses_except(view, [op.operation for op in (view.owner, *bindings(value))])
    # The tensor's own binding stays before its first use, the view (IREE rewrites the uses
    # after a binding; dync-canonicalize).
    bind.move_before(shape.owner.operation)
