"""`dync-pack-sort-keys`: a sort carries each element's index inside its key.

Reads: `torch.aten.sort`, `sort.stable`, `argsort`, `argsort.stable`, `msort` and `topk` over
f32, f16, bf16, si32, si16, si8, i1, si64 or f64 tensors, along a constant dim.
Writes: in place of each, one `torch.aten.sort` of int64 keys, `order(x) * 2**32 + i` (with
`2**32 - 1 - i` when descending), where `order` maps each value to an int32 that sorts like
eager PyTorch's values: -0.0 ties with 0.0, and every NaN ties with every other above +inf.
The indices are the low 32 bits of the sorted keys (the first k for `topk`) and the values a
`gather` of the input at them: bit for bit eager's stable sort, for every input. The new
`sort.stable`, `argsort.stable` and `msort` lower in IREE, where the ops they replace did not.

Why: IREE 3.13 lowers a sort's indices to an iota that the sort overwrites in place. Two sorts
of the same shape whose iotas cannot be hoisted into a constant (a dynamic batch, or inside a
branch or a loop) get one iota: copy-on-write gives each sort a dispatch of its own, then CSE
merges the two dispatches again, and the second sort starts from the first one's permutation.
Its indices come out wrong, silently (`lit/upstream/iree-sort-shared-iota.mlir`): two top-k
routings over a dynamic batch, or two `topk` in one branch. A key sort needs no indices, so
what the shared iota holds no longer matters. int64 and float64 inputs leave no room for the
index in one key: they are sorted by two keys, the low 32 bits of their order first, then,
stably, the high 32 (a two-digit radix sort; IREE's own 64-bit sort also failed to compile
over a dynamic size when only its indices were used: "unbounded stack allocations"). Unsigned
inputs are left alone. No paper section: a workaround at the boundary to IREE.
"""

from __future__ import annotations

from dataclasses import dataclass

from iree.compiler import ir

from ..dialects.symbolic import element_type, type_dims
from ..dialects.torch_ops import (
    SCALAR_TYPES,
    TorchBuilder,
    constant_bool,
    constant_int,
    vtensor_of,
)
from ..dialects.walk import functions, nested_ops
from .pipeline import Pass

_LOW = 2 ** 32  # the index's room in the key
# Above every value's order (+inf is 0x7f800000), and times `_LOW` still an int64: 2**31
# overflowed to the least key, and NaNs sorted first.
_NAN_KEY = 2 ** 31 - 1
# A quiet NaN's bits: above +inf's, and exact as a float (torch-mlir fills through one: 2**63 - 1
# became 2**63, the least int64, and NaNs sorted first).
_NAN_KEY64 = 0x7FF8 << 48
_FLOATS = {"f32", "f16", "bf16"}
_INTS = {"si32", "si16", "si8", "i1"}
_WIDE = {"si64", "f64"}


@dataclass(frozen=True)
class _Sort:
    """Where a sorting op keeps its operands (`None`: a fixed value) and which results it has."""

    dim: int | None
    descending: int | None
    values: int | None
    indices: int | None
    k: int | None = None


_SORTS = {
    "torch.aten.sort": _Sort(dim=1, descending=2, values=0, indices=1),
    "torch.aten.sort.stable": _Sort(dim=2, descending=3, values=0, indices=1),
    "torch.aten.argsort": _Sort(dim=1, descending=2, values=None, indices=0),
    "torch.aten.argsort.stable": _Sort(dim=2, descending=3, values=None, indices=0),
    "torch.aten.msort": _Sort(dim=None, descending=None, values=0, indices=None),
    "torch.aten.topk": _Sort(dim=2, descending=3, values=0, indices=1, k=1),
}


def _op_name(op: ir.Operation) -> str:
    """An op's torch name, also when torch-mlir knows it only as a `torch.operator`."""
    if op.name == "torch.operator":
        return ir.StringAttr(op.attributes["name"]).value
    return op.name


class PackSortKeys(Pass):
    name = "dync-pack-sort-keys"
    summary = "sort int64 keys that carry each element's index (IREE shares sorts' index iotas)"

    def run(self, module: ir.Operation) -> None:
        for func in functions(module).values():
            for op in nested_ops(func):
                sort = _SORTS.get(_op_name(op))
                if sort is not None:
                    _rewrite(op, sort)


def _order(b: TorchBuilder, x: ir.Value) -> ir.Value:
    """Each element of `x` as an int64 that sorts like eager sorts the values."""
    dims, element = type_dims(x.type), element_type(x.type)
    if element not in _FLOATS:
        return b.convert(x, "si64")
    keys, flags = vtensor_of(dims, "si64"), vtensor_of(dims, "i1")
    floats = b.convert(x, "f32") if element != "f32" else x
    bits = b.convert(b("torch.aten.view.dtype", vtensor_of(dims, "si32"), floats, b.int(SCALAR_TYPES["si32"])),
                    "si64")
    # A negative float's bits, as an int, grow with its magnitude: its order is -magnitude,
    # which also puts -0.0 (bits -2**31) at 0, beside 0.0.
    negative = b("torch.aten.lt.Scalar", flags, bits, b.int(0))
    flipped = b("torch.aten.rsub.Scalar", keys, bits, b.int(-(2 ** 31)), b.int(1))
    order = b("torch.aten.where.self", keys, negative, flipped, bits)
    nan = b("torch.aten.isnan", flags, floats)
    return b("torch.aten.masked_fill.Scalar", keys, order, nan, b.int(_NAN_KEY))


def _order64(b: TorchBuilder, x: ir.Value) -> ir.Value:
    """`_order` of a 64-bit tensor: int64 itself, float64's bits ordered as its values."""
    if element_type(x.type) == "si64":
        return x
    dims = type_dims(x.type)
    keys, flags = vtensor_of(dims, "si64"), vtensor_of(dims, "i1")
    bits = b("torch.aten.view.dtype", keys, x, b.int(SCALAR_TYPES["si64"]))
    negative = b("torch.aten.lt.Scalar", flags, bits, b.int(0))
    flipped = b("torch.aten.rsub.Scalar", keys, bits, b.int(-(2 ** 63)), b.int(1))
    order = b("torch.aten.where.self", keys, negative, flipped, bits)
    nan = b("torch.aten.isnan", flags, x)
    return b("torch.aten.masked_fill.Scalar", keys, order, nan, b.int(_NAN_KEY64))


def _digits(b: TorchBuilder, order: ir.Value) -> tuple[ir.Value, ir.Value]:
    """An int64 tensor's high and low 32-bit digits, each an int64 in int32's range that
    sorts as the digit does (the high one signed, the low one unsigned)."""
    high = b("torch.aten.floor_divide.Scalar", order.type, order, b.int(_LOW))
    low = b("torch.aten.sub.Tensor", order.type, order,
            b("torch.aten.mul.Scalar", order.type, high, b.int(_LOW)), b.int(1))
    return high, b("torch.aten.sub.Scalar", order.type, low, b.int(2 ** 31), b.int(1))


def _sorted_positions(b: TorchBuilder, order: ir.Value, x: ir.Value, dim: int,
                      descending: bool) -> ir.Value:
    """The positions along `dim` that stably sort `order` (int64 in int32's range, the shape
    of `x`): one sort of keys `order * 2**32 + position`."""
    keys_type = order.type
    keys = b("torch.aten.add.Tensor", keys_type,
             b("torch.aten.mul.Scalar", keys_type, order, b.int(_LOW)),
             _positions(b, x, dim, descending), b.int(1))
    picked, _ = b.sort(keys, dim, descending)
    indices = b("torch.aten.remainder.Scalar", picked.type, picked, b.int(_LOW))
    if descending:
        indices = b("torch.aten.rsub.Scalar", indices.type, indices, b.int(_LOW - 1), b.int(1))
    return indices


def _positions(b: TorchBuilder, x: ir.Value, dim: int, descending: bool) -> ir.Value:
    """0, 1, ... along `dim` of `x` (n - 1 - i from the top when `descending`: among equal
    values the lower index gets the larger key), shaped to broadcast against `x`."""
    dims = type_dims(x.type)
    n = dims[dim]
    length = b.size(x, dim)
    iota = b("torch.aten.arange", vtensor_of([n], "si64"), length, b.int(SCALAR_TYPES["si64"]), b.none, b.none,
             b.none)
    along = [1] * len(dims)
    along[dim] = n
    shape = b.ints([b.int(d) if d is not None else length for d in along])
    iota = b("torch.aten.view", vtensor_of(along, "si64"), iota, shape)
    if descending:
        iota = b("torch.aten.rsub.Scalar", iota.type, iota, b.int(_LOW - 1), b.int(1))
    return iota


def _rewrite(op: ir.Operation, sort: _Sort) -> None:
    x = op.operands[0]
    dims, element = type_dims(x.type), element_type(x.type)
    dim = 0 if sort.dim is None else constant_int(op.operands[sort.dim])
    descending = False if sort.descending is None else constant_bool(op.operands[sort.descending])
    if not dims or dim is None or descending is None:
        return
    dim %= len(dims)
    packable = element in _FLOATS | _INTS
    if not packable and element not in _WIDE and op.name != "torch.operator":
        return  # IREE lowers it: keep it
    b = TorchBuilder(op)
    if packable:
        indices = _sorted_positions(b, _order(b, x), x, dim, descending)
        values = None
    elif element in _WIDE:
        # 64 bits leave no room for the index: two sorts of 32-bit digits, the low digit
        # first, then (stably: the keys carry the positions of the first sort) the high one.
        high, low = _digits(b, _order64(b, x))
        first = _sorted_positions(b, low, x, dim, descending)
        second = _sorted_positions(b, b("torch.aten.gather", high.type, high, b.int(dim), first,
                                        b.bool(False)), x, dim, descending)
        indices = b("torch.aten.gather", first.type, first, b.int(dim), second, b.bool(False))
        values = None
    else:  # IREE's own sort, which it lowers
        values, indices = b.sort(x, dim, descending)
        if sort.k is not None:
            values = None  # the first k, gathered below
    if sort.k is not None:
        indices = b("torch.aten.slice.Tensor", op.results[sort.indices].type, indices,
                    b.int(dim), b.int(0), op.operands[sort.k], b.int(1))
    if sort.values is not None:
        result = op.results[sort.values]
        if values is None:
            values = b("torch.aten.gather", result.type, x, b.int(dim), indices, b.bool(False))
        result.replace_all_uses_with(values)
    if sort.indices is not None:
        op.results[sort.indices].replace_all_uses_with(indices)
    op.erase()
