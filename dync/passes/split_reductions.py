"""`dync-split-reductions`: on the CPU, a float sum or mean over many elements of several dims
is taken in two steps, the inner dims first.

Reads: `torch.aten.sum`, `torch.aten.mean` (no dtype), `torch.aten.sum.dim_IntList` and
`torch.aten.mean.dim` (no dtype) of a float tensor over two dims or more that hold
`LONG` elements or more at the largest sizes the symbols' declared ranges allow
(`ValueRanges.symbol_ranges` over the input's shape binding), a reduction without `keepdim`
over the merged dim of a flatten (`flatten.using_ints`, a `view` or `reshape` merging adjacent
dims: `h.flatten(1).mean(dim=1)`) as one over the dims it merges; the module's backend (only ``llvm-cpu``).

Writes: before each, the same reduction (`sum.dim_IntList` or `mean.dim`, with `keepdim`)
over its innermost reduced dims, taken inwards-out until their extent reaches the square root
of the whole (at least one, never all), its shape bound from the input's binding; the original op
then reads that partial result (its other reduced dims, and the now single ones; through a
flatten, the dims of the tensor flattened): its result, type and binding are unchanged. A mean of means over groups of one size is the mean.

Why: IREE 3.13 takes a reduction over several dims as one loop over their collapsed extent,
each vector lane adding its elements one after another, where PyTorch's CPU kernels sum in
a cascade: over 16 x 4 x 64 x 64 values of tanh, `x.sum()` was off by 0.14 (float64 as the
truth) against eager's 0.0012, and `(x - x.mean()).sum()`, zero up to rounding, by 0.14 too,
so `if h.sum() < 0.1` after `h = h - h.mean()` took the other branch than eager's (fuzz
seed 1122). In two steps each lane adds a square root as many: 0.0027 and 0.0003. It is
faster too: the inner step is a row reduction IREE tiles well (those two, a per-sample sum
and a mean over C, one module, one thread: 836 -> 425 us). No paper section: a kernel choice at the boundary to IREE.
"""

from __future__ import annotations

import math

from iree.compiler import ir

from ..analysis.value_ranges import ValueRanges, largest_dims, tensor_dims
from ..dialects.symbolic import FLOAT_ELEMENTS, element_type, merged_runs, type_dims
from ..dialects.torch_ops import (
    TorchBuilder,
    bind_from,
    constant_bool,
    constant_int,
    constant_int_list,
    defining,
    int_list,
    owner,
    vtensor_type,
)
from ..dialects.walk import nested_ops
from .pipeline import HostCpuPass

# op -> (the op of the inner step, index of its dims operand or None for all dims, index of
# its dtype operand)
_REDUCTIONS = {
    "torch.aten.sum": ("torch.aten.sum.dim_IntList", None, 1),
    "torch.aten.mean": ("torch.aten.mean.dim", None, 1),
    "torch.aten.sum.dim_IntList": ("torch.aten.sum.dim_IntList", 1, 3),
    "torch.aten.mean.dim": ("torch.aten.mean.dim", 1, 3),
}
# Reductions over fewer elements than this stay one step: the second costs a dispatch.
LONG = 16384
_FLATTENS = ("torch.aten.flatten.using_ints", "torch.aten.view", "torch.aten.reshape")


def _reduced_dims(op: ir.Operation) -> list[int] | None:
    """The dims `op` (one of `_REDUCTIONS`) reduces, ascending; None where it is not a float
    reduction without a dtype over constant dims."""
    _, dims_at, dtype_at = _REDUCTIONS[op.name]
    x = op.operands[0]
    dims = type_dims(x.type)
    if dims is None or element_type(x.type) not in FLOAT_ELEMENTS \
            or defining(op.operands[dtype_at], "torch.constant.none") is None:
        return None
    if dims_at is None or defining(op.operands[dims_at], "torch.constant.none") is not None:
        return list(range(len(dims)))
    axes = constant_int_list(op.operands[dims_at])
    return None if not axes else sorted({a % len(dims) for a in axes})


def _runs(flat: ir.Operation, x: ir.Value) -> list[tuple[int, int]] | None:
    """For each dim of the flatten `flat` makes of `x`, the (first, last) dims of `x` it
    merges; None where they are not known to be such runs."""
    if flat.name == "torch.aten.flatten.using_ints":
        rank = len(type_dims(x.type) or ())
        start, end = constant_int(flat.operands[1]), constant_int(flat.operands[2])
        if rank == 0 or start is None or end is None:
            return None
        start, end = start % rank, end % rank
        return [(d, d) for d in range(start)] + [(start, end)] \
            + [(d, d) for d in range(end + 1, rank)]
    before, after = tensor_dims(x), tensor_dims(flat.results[0])
    if before is None or after is None or None in before or None in after:
        return None
    return merged_runs(before, after)


def _unflattened(op: ir.Operation, reduced: list[int]) -> tuple[ir.Value, list[int]] | None:
    """Where `op` reduces a flatten (`flatten.using_ints`, or a `view`/`reshape` that merges
    one run of adjacent dims) over the merged dim (and maybe others) without keeping dims: the
    tensor flattened and the dims of it the same reduction takes; else None."""
    flat = owner(op.operands[0])
    dims_at = _REDUCTIONS[op.name][1]
    if flat is None or flat.name not in _FLATTENS \
            or (dims_at is not None and constant_bool(op.operands[2]) is not False):
        return None
    x = flat.operands[0]
    runs = _runs(flat, x)
    merged = [k for k, (first, last) in enumerate(runs or ()) if last > first]
    if len(merged) != 1 or merged[0] not in reduced:
        return None
    return x, [d for k in reduced for d in range(runs[k][0], runs[k][1] + 1)]


def inner_step(reduced: list[int], largest: list[int]) -> list[int]:
    """The innermost of the `reduced` dims, taken from the last until their extents
    (`largest`) multiply to the square root of all of theirs or more: at least one, never
    all."""
    root = math.sqrt(math.prod(largest[d] for d in reduced))
    inner: list[int] = []
    for d in reversed(reduced[1:]):
        inner.insert(0, d)
        if math.prod(largest[i] for i in inner) >= root:
            break
    return inner


class SplitReductions(HostCpuPass):
    name = "dync-split-reductions"
    summary = "float sums and means over many elements of several dims in two steps, inner dims first (CPU)"

    def run_on_cpu(self, module: ir.Operation) -> None:
        ranges = ValueRanges(module).symbol_ranges
        found = []
        for op in nested_ops(module):
            reduced = _reduced_dims(op) if op.name in _REDUCTIONS else None
            if reduced is None:
                continue
            x, unflattened = op.operands[0], _unflattened(op, reduced)
            if unflattened is not None:
                x, reduced = unflattened
            largest = largest_dims(x, ranges) if len(reduced) >= 2 else None
            if largest is not None and math.prod(largest[d] for d in reduced) >= LONG:
                found.append((op, x, reduced, inner_step(reduced, largest)))
        with module.context:
            for op, x, reduced, inner in found:
                _split(op, x, reduced, inner)


def _split(op: ir.Operation, x: ir.Value, reduced: list[int], inner: list[int]) -> None:
    """Reduce `x` (`op`'s input, or the tensor it flattens) over `inner` first (keeping those
    dims), and `op` the rest of `reduced`."""
    b = TorchBuilder(op)
    dims = type_dims(x.type)
    keep = b.bool(True)
    partial = b(_REDUCTIONS[op.name][0],
                vtensor_type(x.type, [1 if i in inner else d for i, d in enumerate(dims)]),
                x, int_list(inner, b.ip, b.loc), keep, b.none)
    bind_from(partial, x, lambda e: [1 if i in inner else d for i, d in enumerate(e)], b.ip)
    dims_at = _REDUCTIONS[op.name][1]
    if x != op.operands[0] and dims_at is not None:
        op.operands[dims_at] = int_list(reduced, b.ip, b.loc)
    op.operands[0] = partial
