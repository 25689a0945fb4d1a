"""Each tensor value's dims and byte size in one function, as sympy expressions over the
symbols: static types, the `torch.bind_symbolic_shape` facts `dync-rdp` left, ``dync.dims``
for the non-affine ones, and the dims of values known to have the same shape (casts between
torch and builtin tensors, an `scf.if`'s results and its yields, a loop's carried values)."""

from __future__ import annotations

import sympy
from iree.compiler import ir

from ..dialects import dync_ir
from ..dialects.attributes import DIMS_ATTR
from ..dialects.symbolic import bound_dims, is_tensor, parse_dim, type_dims
from ..dialects.torch_ops import BIND, owner
from ..dialects.walk import nested_ops
from .op_kinds import element_bytes

_SAME_SHAPE = ("torch_c.to_builtin_tensor", "torch_c.from_builtin_tensor",
               "torch.tensor_static_info_cast", "tensor.cast")


class TensorSizes:
    """Dims and bytes of the tensor values of `func`. `unknown` counts the sizes asked for
    that nothing determines (taken as 0 bytes)."""

    def __init__(self, func: ir.Operation):
        self.binds = {op.operands[0]: bound_dims(op) for op in nested_ops(func)
                      if op.name == BIND}
        self.unknown = 0
        self._dims: dict[ir.Value, tuple | None] = {}

    def dims(self, value: ir.Value, seen: frozenset = frozenset()) -> tuple | None:
        if value in self._dims:
            return self._dims[value]
        found = self.direct_dims(value)
        if found is None and value not in seen:
            seen = seen | {value}
            for other in equivalents(value):
                found = self.dims(other, seen)
                if found is not None:
                    break
        if not seen or found is not None:
            self._dims[value] = found
        return found

    def set_dims(self, value: ir.Value, dims: tuple) -> None:
        """Dims known from outside the function's own ops (a callee's results, the entry's
        declared result shapes)."""
        self._dims[value] = dims

    def direct_dims(self, value: ir.Value) -> tuple | None:
        """The dims `value`'s own type, binding or defining op give."""
        tdims = type_dims(value.type)
        if tdims is None:
            return None
        if None not in tdims:
            return tuple(sympy.Integer(d) for d in tdims)
        bound = self.binds.get(value)
        if bound is not None and len(bound) == len(tdims):
            return bound
        op = owner(value)
        if op is not None and DIMS_ATTR in op.attributes:
            dims = dync_ir.to_python(op.attributes[DIMS_ATTR])
            index = ir.OpResult(value).result_number
            if index < len(dims) and len(dims[index]) == len(tdims):
                return tuple(parse_dim(str(d)) for d in dims[index])
        return None

    def size(self, value: ir.Value) -> sympy.Expr:
        """`value`'s bytes (0, counted in `unknown`, when its dims are not known)."""
        dims = self.dims(value)
        nbytes = element_bytes(value.type)
        if dims is None:
            self.unknown += 1
            return sympy.Integer(0)
        return sympy.expand(sympy.Mul(*dims) * nbytes) if dims else sympy.Integer(nbytes)

    def read_entry_results(self, func: ir.Operation) -> None:
        """The entry function's ``dync.shape`` result attributes give its results' dims."""
        if dync_ir.ENTRY_ATTR not in func.attributes or "res_attrs" not in func.attributes:
            return
        term = terminator(func.regions[0].blocks[0])
        for v, attrs in zip(term.operands, ir.ArrayAttr(func.attributes["res_attrs"]),
                            strict=False):
            attrs = ir.DictAttr(attrs)
            if not is_tensor(v.type) or dync_ir.SHAPE_ATTR not in attrs or self.dims(v):
                continue
            self._dims[v] = tuple(sympy.Integer(d) if isinstance(d, int) else parse_dim(d)
                                  for d in dync_ir.read_shape(attrs[dync_ir.SHAPE_ATTR]))


def equivalents(value: ir.Value) -> list[ir.Value]:
    """Values with the same dims as `value`: casts between torch and builtin tensors, the
    results of `scf.if` and their yields, the results of a loop and its carried values."""
    out: list[ir.Value] = []
    op = owner(value)
    for use in value.uses:
        user = use.owner.operation if hasattr(use.owner, "operation") else use.owner
        if user.name in _SAME_SHAPE:
            out.append(user.results[0])
    if op is not None:
        if op.name in _SAME_SHAPE:
            out.append(op.operands[0])
        elif op.name == "scf.if":
            i = ir.OpResult(value).result_number
            for region in op.regions:
                for block in region.blocks:
                    term = terminator(block)
                    if i < len(term.operands):
                        out.append(term.operands[i])
        elif op.name == "scf.while":
            i = ir.OpResult(value).result_number
            cond = terminator(op.regions[0].blocks[0])
            if i + 1 < len(cond.operands):
                out.append(cond.operands[i + 1])
    else:
        block = value.owner
        parent = block.owner.operation if block.owner is not None else None
        if parent is not None and parent.name == "scf.while":
            i = ir.BlockArgument(value).arg_number
            if block == parent.regions[0].blocks[0]:
                out.append(parent.operands[i])
            else:
                cond = terminator(parent.regions[0].blocks[0])
                out.append(cond.operands[i + 1])
    return out


def terminator(block: ir.Block) -> ir.Operation:
    return list(block.operations)[-1].operation
