"""`dync-sums-as-matvecs`: on the CPU, a float32 sum or mean over a dynamic last dim is a
product with a vector of ones.

Reads: `torch.aten.sum.dim_IntList` and `torch.aten.mean.dim` (no dtype) of an f32 tensor
over its last dim alone, which is dynamic and not declared at most 64 long
(`analysis.value_ranges`), in every function; the module's backend (only
``llvm-cpu``) and its IREE flags (``dync.iree_flags``: whether `dync-data-tiling`, which runs
before this pass, asked for data tiling, where a product's rows would be packed: a copy of
the whole input).

Writes: in place of each, ``matmul(x, ones(n))`` (`torch.aten.ones`, `torch.aten.matmul`: the
rows' sums, the last dim gone), divided by n for a mean (`torch.aten.div.Scalar`, as a mean
lowers), the last dim put back as 1 with ``keepdim`` (`torch.aten.unsqueeze`). The new
tensors' shapes are bound from the input's binding, for memory planning. `dync-decompose-
softmax` runs first: a softmax's sum of exponentials over a dynamic last dim (attention over a
dynamic number of keys) is one of these.

Why: IREE 3.13's CPU code masks the last vector of a reduction over a dynamic dim, and its
masked reduction (`llvm.vp.reduce.fadd`) adds the 16 lanes of every vector into the row's
scalar one after another: `x.sum(-1)` over 64 x 4096 floats took 0.105 ms with a dynamic
length against 0.013 static. A product (a named op, not a `linalg.generic`) is peeled where
its reduced dim is dynamic, each lane summing on its own: 0.028 ms (`iree-benchmark-module`;
`lit/upstream/iree-cpu-dynamic-row-sum.mlir`). No paper section: a kernel choice at the
boundary to IREE (issue 33).
"""

from __future__ import annotations

import functools
import math
import operator

import sympy
from iree.compiler import ir

from ..analysis.value_ranges import ValueRanges, dim_size
from ..dialects.dync_ir import data_tiled
from ..dialects.symbolic import element_type, nonpositive_at_each, type_dims
from ..dialects.torch_ops import (
    SCALAR_TYPES,
    TorchBuilder,
    bind_from,
    bindings,
    constant_bool,
    constant_int_list,
    defining,
    vtensor_type,
)
from ..dialects.walk import nested_ops
from .pipeline import HostCpuPass

_REDUCTIONS = ("torch.aten.sum.dim_IntList", "torch.aten.mean.dim")
# Rows declared at most this long stay reductions: four AVX-512 vectors, whose masked steps
# cost less than the product's own dispatch (a softmax's exponentials are no longer computed
# in its sum's dispatch): attention over at most 32 or 48 keys (ALiBi, causal masks) was
# 17.9 -> 21.1 us a call as products.
_SHORT_ROW = 64
_FEW_VALUES = 256  # symbol values `_short` tries one by one


def _row_sum(op: ir.Operation) -> bool:
    """Whether `op` is an f32 sum or mean, no dtype, over the last dim alone, a dynamic one."""
    if op.name not in _REDUCTIONS or len(op.operands) != 4:
        return False
    x = op.operands[0]
    dims = type_dims(x.type)
    axes = constant_int_list(op.operands[1])
    return bool(dims) and element_type(x.type) == "f32" and dims[-1] is None \
        and axes is not None and [a % len(dims) for a in axes] == [len(dims) - 1] \
        and constant_bool(op.operands[2]) is not None \
        and defining(op.operands[3], "torch.constant.none") is not None


class SumsAsMatvecs(HostCpuPass):
    name = "dync-sums-as-matvecs"
    summary = "f32 sums and means over a dynamic last dim as products with ones (CPU)"

    def run_on_cpu(self, module: ir.Operation) -> None:
        if data_tiled(module):
            return
        found = [op for op in nested_ops(module) if _row_sum(op)]
        if found:
            ranges = ValueRanges(module)
            found = [op for op in found if not _short(ranges, op.operands[0])]
        with module.context:
            for op in found:
                _as_matvec(op)


def _short(ranges: ValueRanges, x: ir.Value) -> bool:
    """Whether the declared ranges keep the last dim of `x` at most `_SHORT_ROW` long: proven
    symbolically, or at each value of its symbols where they take few (a window's length
    `(n + pad) // ((n + pad) // 4)`, whose floors and remainders no bound sees through)."""
    size = dim_size(x, -1)
    if size is None:
        return False
    if ranges.at_most(size, sympy.Integer(_SHORT_ROW)):
        return True
    return nonpositive_at_each(size - _SHORT_ROW, ranges.symbol_ranges, _FEW_VALUES)


def _as_matvec(op: ir.Operation) -> None:
    b = TorchBuilder(op)
    x = op.operands[0]
    dims = type_dims(x.type)
    rank = len(dims)
    n = b.size(x, rank - 1)
    # torch-mlir lowers a product with a vector for a matrix only: the rows as one dim.
    if rank == 1:
        flat = b("torch.aten.unsqueeze", vtensor_type(x.type, [1, None]), x, b.int(0))
        bind_from(flat, x, lambda e: [1, *e], b.ip)
    elif rank == 2:
        flat = x
    else:
        rows = math.prod(dims[:-1]) if None not in dims[:-1] else None
        flat = b("torch.aten.flatten.using_ints", vtensor_type(x.type, [rows, None]), x,
                 b.int(0), b.int(rank - 2))
        bind_from(flat, x, lambda e: [functools.reduce(operator.mul, e[:-1]), e[-1]], b.ip)
    ones = b("torch.aten.ones", vtensor_type(x.type, [None]), b.ints([n]),
             b.int(SCALAR_TYPES["f32"]), b.none, b.none, b.none)
    bind_from(ones, x, lambda e: e[-1:], b.ip)
    total = b("torch.aten.matmul", vtensor_type(x.type, type_dims(flat.type)[:1]), flat, ones)
    bind_from(total, flat, lambda e: e[:1], b.ip)
    if rank != 2:
        total = b("torch.aten.view", vtensor_type(x.type, dims[:-1]), total,
                  b.ints([b.size(x, i) for i in range(rank - 1)]))
        bind_from(total, x, lambda e: e[:-1], b.ip)
    if op.name == "torch.aten.mean.dim":
        total = b("torch.aten.div.Scalar", total.type, total, n)
        bind_from(total, x, lambda e: e[:-1], b.ip)
    if constant_bool(op.operands[2]):
        total = b("torch.aten.unsqueeze", op.results[0].type, total, b.int(rank - 1))
        bind_from(total, x, lambda e: [*e[:-1], 1], b.ip)
    for binding in bindings(op.results[0]):
        binding.erase()
    op.results[0].replace_all_uses_with(total)
    op.erase()
