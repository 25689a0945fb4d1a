"""Unsigned integers through the ops IREE computes as signed: the last step of every import.

IREE lowers division, remainder, absolute value, sorting and reductions (`op_facts.SIGNED_ONLY`)
with signed arithmetic whatever the element type, so a `ui8`/`ui16`/`ui32` value with its top bit
set would come out as a negative number's result. Each such op gets its unsigned tensor operands
zero-extended to `si64` (exact: every value fits), computes there, and has each unsigned result
truncated back (exact modulo 2**N, as the model's own arithmetic wraps). `ui64` has no wider
type: its remainder is computed in signed 64-bit ops on the same bits (`_remainder_64`), any
other such op on it is an `UnsupportedConstructError` naming the op and the model's line or node.
"""

from __future__ import annotations

from iree.compiler import ir

from ..analysis import op_facts
from ..dialects.locations import where_in_model
from ..dialects.symbolic import element_type, type_dims
from ..dialects.torch_ops import (
    SCALAR_TYPES,
    TorchBuilder,
    builtin_type,
    constant_int,
    vtensor_of,
)
from ..dialects.walk import nested_ops
from ..errors import UnsupportedConstructError

SIGNED_ONLY_OPS = op_facts.with_trait(op_facts.SIGNED_ONLY)
# Reductions whose last operand is the dtype to compute in (none: the input's).
_DTYPE_LAST = {"torch.aten.sum", "torch.aten.sum.dim_IntList", "torch.aten.mean",
               "torch.aten.mean.dim", "torch.aten.prod", "torch.aten.prod.dim_int"}
_REMAINDERS = {"torch.aten.remainder.Tensor", "torch.aten.remainder.Scalar",
               "torch.aten.fmod.Tensor", "torch.aten.fmod.Scalar"}


def widen_unsigned(module: ir.Module) -> None:
    """Compute every signed-only op of `module` that reads an unsigned tensor in `si64`."""
    with module.context:
        for op in list(nested_ops(module.operation)):
            if op.name in SIGNED_ONLY_OPS and (unsigned := _unsigned_types(op.operands)):
                _widen(op, unsigned)


def _is_unsigned(t: ir.Type) -> bool:
    return (element_type(t) or "").startswith("ui")


def _unsigned_types(values) -> list[str]:
    return [element_type(v.type) for v in values if _is_unsigned(v.type)]


def _widen(op: ir.Operation, unsigned: list[str]) -> None:
    if "ui64" in unsigned and op.name in _REMAINDERS and op.operands[1].type in (
            op.operands[0].type, ir.Type.parse("!torch.int")):
        _replace(op, _remainder_64(TorchBuilder(op), op.operands[0], op.operands[1]))
        return
    if "ui64" in unsigned or _unsigned_dtype_operand(op):
        raise UnsupportedConstructError(
            f"{op.name.removeprefix('torch.aten.')} on {unsigned[0]}",
            "IREE computes it as signed, so its results would differ from the model's for "
            "values with the top bit set, and there is no wider type to compute it in; "
            "convert the tensor to a signed type first",
            where_in_model(op))
    b = TorchBuilder(op)
    operands = [b.convert(v, "si64") if _is_unsigned(v.type) else v for v in op.operands]
    results = [vtensor_of(type_dims(r.type), "si64") if _is_unsigned(r.type) else r.type
               for r in op.results]
    wide = ir.Operation.create(op.name, results=results, operands=operands,
                               attributes={a.name: a.attr for a in op.attributes},
                               loc=op.location, ip=b.ip)
    after = TorchBuilder(op)
    for old, new in zip(op.results, wide.results, strict=True):
        old.replace_all_uses_with(narrowed(after, new, old.type) if new.type != old.type else new)
    op.erase()


def narrowed(b: TorchBuilder, wide: ir.Value, unsigned: ir.Type) -> ir.Value:
    """`wide` (si64) truncated to `unsigned`'s type: to the signed type of the same width,
    then reinterpreted (torch-mlir aborts on a conversion to `ui16`: "unhandled type for
    getTypeForScalarType")."""
    element = element_type(unsigned)
    return _reinterpret(b, b.convert(wide, "s" + element.removeprefix("u")), element)


def _replace(op: ir.Operation, value: ir.Value) -> None:
    op.results[0].replace_all_uses_with(value)
    op.erase()


def _remainder_64(b: TorchBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    """`x mod y` for the `ui64` tensor `x` and the `ui64` tensor (or int) `y`, in signed
    64-bit ops on the same bits: as Hacker's Delight's unsigned division, halve `x` so that
    a signed remainder is exact, then correct the doubled remainder by one subtraction."""
    dims = type_dims(x.type)
    flags, wide = vtensor_of(dims, "i1"), vtensor_of(dims, "si64")
    x = _reinterpret(b, x, "si64")
    y = _reinterpret(b, y, "si64") if str(y.type) != "!torch.int" else \
        b("torch.prim.NumToTensor.Scalar", vtensor_of((), "si64"), y)
    y_flags = vtensor_of(type_dims(y.type), "i1")
    low = b.int(-2 ** 63)  # adding it maps unsigned order onto signed order
    h = b("torch.aten.__rshift__.Scalar", wide, x, b.int(1))  # arithmetic: x's top bit kept
    half = b("torch.aten.where.self", wide, b("torch.aten.lt.Scalar", flags, x, b.int(0)),
             b("torch.aten.add.Scalar", wide, h, low, b.int(1)), h)  # x >> 1, logical
    bit = b("torch.aten.sub.Tensor", wide, x, b("torch.aten.add.Tensor", wide, h, h, b.int(1)),
            b.int(1))
    y_top = b("torch.aten.lt.Scalar", y_flags, y, b.int(0))  # y >= 2**63: at most one y in x
    divisor = b("torch.aten.masked_fill.Scalar", y.type, y, y_top, b.int(1))
    r = b("torch.aten.remainder.Tensor", wide, half, divisor)
    doubled = b("torch.aten.add.Tensor", wide, b("torch.aten.add.Tensor", wide, r, r, b.int(1)),
                bit, b.int(1))  # < 2y: one subtraction of y at most
    a = b("torch.aten.where.self", wide, y_top, x, doubled)
    over = b("torch.aten.ge.Tensor", flags, b("torch.aten.add.Scalar", wide, a, low, b.int(1)),
             b("torch.aten.add.Scalar", y.type, y, low, b.int(1)))
    result = b("torch.aten.where.self", wide, over,
               b("torch.aten.sub.Tensor", wide, a, y, b.int(1)), a)
    return _reinterpret(b, result, "ui64")


def _reinterpret(b: TorchBuilder, x: ir.Value, element: str) -> ir.Value:
    """The integer tensor `x` as `element`, a type of the same width, bit for bit."""
    dims = type_dims(x.type)
    signed = vtensor_of(dims, "s" + element.removeprefix("u").removeprefix("s"))
    builtin = b("torch_c.to_builtin_tensor", builtin_type(signed, dynamic=True), x)
    return b("torch_c.from_builtin_tensor", vtensor_of(dims, element), builtin)


def _unsigned_dtype_operand(op: ir.Operation) -> bool:
    """Whether `op` is a reduction told to compute in an unsigned type."""
    if op.name not in _DTYPE_LAST:
        return False
    code = constant_int(op.operands[-1])
    return code in {SCALAR_TYPES[t] for t in ("ui8", "ui16", "ui32", "ui64")}
