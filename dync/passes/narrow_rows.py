"""`dync-narrow-rows`: a data-tiled product with a constant weight over a few rows runs as
products of static few rows.

Reads: a module that asks IREE for data tiling (``dync.iree_flags``, `dync-data-tiling`) on
``llvm-cpu``; its `torch.aten.linear`, `mm`, `matmul` and `addmm` whose weight (the right
operand) is a 2-D literal of at least `_LEAST_WEIGHT` elements, over floats, and whose rows (the left
operand's dims but the last) are one dynamic dim `d` times static ones, at most the largest
of `_NARROW_ROWS` rows over `d`'s whole declared range (`analysis.value_ranges` over its
shape binding: a dynamic batch of 1 to 8 through an LSTM cell's or a classifier's weights).

Writes: in place of each such product, versions of it over a static `d`: ``d == 1`` the
product of the operand cast to one row, then ``d <= v`` for each larger count `v` of
`_NARROW_ROWS` within the range, the operand padded with zero rows to `v`, the result sliced
back to `d`; the last version, at the range's largest value, taken without a test. More than
one version: a chain of `scf.if`s on `d` (a size the host knows), and IREE's
``convert-scf-to-cf`` preprocessing (the weight's packing is then hoisted out of the
branches, as `dync-data-tiling` has it).

Why: IREE 3.13's data tiling picks a tile per product when it compiles it; for a dynamic row
count that is 16 rows on AVX-512, so one row is computed as 16, where a static count of 1, 2,
4 or 8 gets a narrow tile of that height. A stack of 12 `Linear`s alternating 512 -> 2048 ->
512 (48 MiB of weights, one thread, Intel Xeon): 1, 2, 4, 8 rows 9.9 ms each over a dynamic
row count, 4.3, 5.4, 5.2, 7.0 over a static one (eager 4.5, 5.3, 5.9, 8.8). Only ranges that
are narrow throughout: a product of a wider range kept as it was behind the same chain cost
65-160 us more (the `scf.if`s end IREE's fusion of one product's unpacking into the next
one's packing, and each branch's result is a transient buffer of its own): the stack at 16
rows 9.3 -> 11.2 ms (`iree-benchmark-module`), a d=512 Transformer decoder over 32 tokens
12.2 -> 15.1 ms; a greedy decoder's prefix, 1 to 68 tokens, lost more on its long steps than
it won on its first eight. No paper section: a kernel choice at the boundary to IREE (issue
33), Nimble's shape buckets (digest-nimble-dali.md A.7) for one product.
"""

from __future__ import annotations

import math

from iree.compiler import ir

from ..analysis.value_ranges import ValueRanges, dim_size
from ..dialects.dync_ir import (
    DATA_TILING,
    GLOBAL_DATA_TILING,
    SCF_TO_CF,
    read_flags,
    request_preprocessing,
)
from ..dialects.symbolic import FLOAT_ELEMENTS, bounds, element_type, type_dims
from ..dialects.torch_ops import TorchBuilder, builtin_type, defining, vtensor_type
from ..dialects.walk import nested_ops
from .pipeline import HostCpuPass

# Contraction -> (index of its row operand, index of its weight).
_PRODUCTS = {"torch.aten.linear": (0, 1), "torch.aten.mm": (0, 1), "torch.aten.matmul": (0, 1),
             "torch.aten.addmm": (1, 2)}
# Row counts given a static version, each serving the counts above the previous one; a
# product over more rows than the last is left as it is.
_NARROW_ROWS = (1, 4, 8)
# A weight of fewer elements (512 KiB of f32) is not worth a command buffer split.
_LEAST_WEIGHT = 1 << 17


def _rows_axis(op: ir.Operation) -> tuple[int, int] | None:
    """(the axis of the row operand's one dynamic dim among its rows, the product of the
    static ones) where `op` is a product this pass narrows; None otherwise."""
    rows_at, weight_at = _PRODUCTS[op.name]
    x, weight = op.operands[rows_at], op.operands[weight_at]
    literal = defining(weight, "torch.vtensor.literal")
    dims, weight_dims = type_dims(x.type), type_dims(weight.type)
    if literal is None or not dims or len(dims) < 2 or weight_dims is None \
            or element_type(x.type) not in FLOAT_ELEMENTS \
            or len(weight_dims) != 2 or None in weight_dims \
            or math.prod(weight_dims) < _LEAST_WEIGHT or len(op.results) != 1:
        return None
    rows = dims[:-1]
    dynamic = [a for a, d in enumerate(rows) if d is None]
    if len(dynamic) != 1 or op.name in ("torch.aten.mm", "torch.aten.addmm") and len(dims) != 2:
        return None
    return dynamic[0], math.prod(d for d in rows if d is not None)


def _row_counts(x: ir.Value, axis: int, static: int,
                ranges: dict[str, tuple[int, int]]) -> list[int]:
    """The values of dim `axis` of `x` that get a static version, ascending, the last its
    largest value: each count of `_NARROW_ROWS` (divided by `static`, the rows' static
    factor) within the dim's declared range; none unless that range is known and its largest
    value, times `static`, is at most the largest count."""
    expr = dim_size(x, axis)
    found = None if expr is None else bounds(expr, ranges)
    if found is None or found[1] * static > _NARROW_ROWS[-1]:
        return []
    low, high = max(found[0], 1), found[1]
    counts = [rows // static for rows in _NARROW_ROWS
              if rows % static == 0 and low <= rows // static < high]
    return [*counts, high]


def _narrow(op: ir.Operation, axis: int, counts: list[int]) -> None:
    """`op`'s uses read its versions over its row count instead (module docstring)."""
    x = op.operands[_PRODUCTS[op.name][0]]
    b = TorchBuilder(op)
    op.results[0].replace_all_uses_with(_versions(b, op, axis, counts, b.size(x, axis)))


def _versions(b: TorchBuilder, op: ir.Operation, axis: int, counts: list[int],
              length: ir.Value) -> ir.Value:
    """`op`'s result from the version of the least of `counts` at least `length` (the last
    taken without a test)."""
    if len(counts) == 1:
        return _version(b, op, axis, counts[0], length, exact=False)
    result = op.results[0].type
    builtin = builtin_type(result, dynamic=True)
    test = "torch.aten.eq.int" if counts[0] == 1 else "torch.aten.le.int"
    flag = b(test, ir.Type.parse("!torch.bool"), length, b.int(counts[0]))
    choice = ir.Operation.create(
        "scf.if", results=[builtin], regions=2, loc=b.loc, ip=b.ip,
        operands=[b("torch_c.to_i1", ir.IntegerType.get_signless(1), flag)])
    chosen = (lambda inner: _version(inner, op, axis, counts[0], length, exact=counts[0] == 1),
              lambda inner: _versions(inner, op, axis, counts[1:], length))
    for region, build in zip(choice.regions, chosen, strict=True):
        end = ir.Operation.create("scf.yield", operands=[], loc=b.loc,
                                  ip=ir.InsertionPoint(region.blocks.append()))
        inner = TorchBuilder(end)
        value = inner("torch_c.to_builtin_tensor", builtin, build(inner))
        ir.Operation.create("scf.yield", operands=[value], loc=b.loc, ip=inner.ip)
        end.erase()
    return b("torch_c.from_builtin_tensor", result, choice.results[0])


def _version(b: TorchBuilder, op: ir.Operation, axis: int, count: int, length: ir.Value,
             exact: bool) -> ir.Value:
    """`op` over its row operand padded with zero rows to `count` along `axis` (only cast to
    it where `exact`: `length` is `count`), the result sliced back to `length`."""
    rows_at = _PRODUCTS[op.name][0]
    x, result = op.operands[rows_at], op.results[0].type
    static_x = vtensor_type(x.type, _static(type_dims(x.type), axis, count))
    operands = list(op.operands)
    operands[rows_at] = b("torch.tensor_static_info_cast", static_x,
                          x if exact else _padded(b, x, axis, count, length))
    narrow = ir.Operation.create(
        op.name, results=[vtensor_type(result, _static(type_dims(result), axis, count))],
        operands=operands, loc=op.location, ip=b.ip).results[0]
    if exact:
        return b("torch.tensor_static_info_cast", result, narrow)
    return b("torch.aten.slice.Tensor", result, narrow, b.int(axis), b.int(0), length, b.int(1))


def _static(dims: tuple, axis: int, count: int) -> list:
    return [count if a == axis else d for a, d in enumerate(dims)]


def _padded(b: TorchBuilder, x: ir.Value, axis: int, count: int, length: ir.Value) -> ir.Value:
    """`x` with zero rows after its `length` ones along `axis`, to `count` (still typed with
    that dim dynamic)."""
    dims = type_dims(x.type)
    pads = [b.int(0)] * (2 * (len(dims) - 1 - axis))
    pads += [b.int(0), b("torch.aten.sub.int", ir.Type.parse("!torch.int"), b.int(count), length)]
    return b("torch.aten.constant_pad_nd", x.type, x, b.ints(pads), b.float(0.0))


class NarrowRows(HostCpuPass):
    name = "dync-narrow-rows"
    summary = "a data-tiled product with a constant weight runs few rows as few rows (CPU)"

    def run_on_cpu(self, module: ir.Operation) -> None:
        flags = read_flags(module)
        if DATA_TILING not in flags and GLOBAL_DATA_TILING not in flags:
            return
        ranges = ValueRanges(module).symbol_ranges
        branched = False
        for op in nested_ops(module):
            if op.name not in _PRODUCTS:
                continue
            found = _rows_axis(op)
            if found is None:
                continue
            axis, static = found
            counts = _row_counts(op.operands[_PRODUCTS[op.name][0]], axis, static, ranges)
            if not counts:
                continue
            _narrow(op, axis, counts)
            op.erase()
            branched |= len(counts) > 1
        if branched:
            with module.context:
                request_preprocessing(module, [SCF_TO_CF])
