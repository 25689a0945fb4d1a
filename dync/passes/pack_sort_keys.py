"""`dync-pack-sort-keys`: a sort carries each element's index inside its key.

Reads: `torch.aten.sort`, `sort.stable`, `argsort`, `argsort.stable`, `msort` and `topk` over
f32, f16, bf16, si32, si16, si8 or i1 tensors, along a constant dim.
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
what the shared iota holds no longer matters. int64, float64 and unsigned inputs have no room
for the index in the key and are left alone. No paper section: a workaround at the boundary to
IREE.
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
_FLOATS = {"f32", "f16", "bf16"}
_INTS = {"si32", "si16", "si8", "i1"}


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
    if not packable and op.name != "torch.operator":
        return  # IREE lowers it: keep it
    b = TorchBuilder(op)
    if packable:
        keys_type = vtensor_of(dims, "si64")
        keys = b("torch.aten.add.Tensor", keys_type,
                 b("torch.aten.mul.Scalar", keys_type, _order(b, x), b.int(_LOW)),
                 _positions(b, x, dim, descending), b.int(1))
        picked, _ = b.sort(keys, dim, descending)
        if sort.k is not None:
            picked = b("torch.aten.slice.Tensor", op.results[sort.indices].type, picked,
                       b.int(dim), b.int(0), op.operands[sort.k], b.int(1))
        indices = b("torch.aten.remainder.Scalar", picked.type, picked, b.int(_LOW))
        if descending:
            indices = b("torch.aten.rsub.Scalar", indices.type, indices, b.int(_LOW - 1), b.int(1))
        values = None
    else:  # 64 bits leave no room for the index: IREE's own sort, which it lowers
        values, indices = b.sort(x, dim, descending)
    if sort.values is not None:
        result = op.results[sort.values]
        if values is None:
            values = b("torch.aten.gather", result.type, x, b.int(dim), indices, b.bool(False))
        result.replace_all_uses_with(values)
    if sort.indices is not None:
        op.results[sort.indices].replace_all_uses_with(indices)
    op.erase()
