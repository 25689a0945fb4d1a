"""`dync-data-tiling`: on the CPU, a module whose matmuls are mostly wide is compiled with IREE's
data tiling.

Reads: the contractions IREE may data-tile — `torch.aten.mm`, `matmul`, `bmm`, `linear`,
`addmm`, and 1×1 convolutions (IREE computes those as matmuls) — with static contraction
and output widths (``K`` and ``N``), in every function; the module's backend (only
``llvm-cpu``).
Writes: when the contractions with ``N`` and ``K`` both at least `WIDE` (128 on AVX-512 and
AVX2, `WIDE_BY_ISA`; 256 elsewhere) do at least half of their work (``M*N*K``, a dynamic dim of
``M`` counted at the middle of its declared range), the module attribute ``dync.iree_flags``
gets ``--iree-opt-data-tiling``: IREE then packs each matmul's operands
into tiles the CPU's registers take whole (weights packed at compile time) and runs the
tiled product (``linalg.mmt4d``). When the module has branches or loops (`scf.if`,
`scf.while`), ``dync.iree_preprocessing`` also gets ``convert-scf-to-cf``: IREE hoists the
packing of a weight only where the weight and its reader are in one region (its
constant-expression analysis takes a constant read inside an ``scf`` region for an operand of
the region op), so a matmul inside a branch re-packed its weight at every call; with the
branches as blocks of one region, the packing is done at compile time. An early-exit
BERT-base, one thread, 16 tokens: 2 layers (the second inside a branch) 8.4 -> 4.6 ms (eager
9.2). A module with a contraction records both works and whether a product has dynamic
rows (``dync.tiling_work``): host mode links its sub-DNNs into one module, which asks for
data tiling where their wide work together outweighs their narrow work, as one module's
would (`dync_ir.linked_flags`): an early-exit CNN's 10-class head (narrow) had held it back
from every stage. A module with no contraction at all (nothing the flag changes: convolutions
with kernels larger than 1×1 IREE leaves direct, tiled or not) records no work, and weighs
nothing there: an embedding's or a norm's sub-DNN had held back data tiling from the layers
beside it, a CNN's stem (a 7×7 convolution and a max pool) from every stage of an early-exit
ResNet-50: on an AVX2 EPYC, one thread, its third stage at batch 2 ran 152.6 ms in host mode
against 104.5 ms compiled alone (eager 98.8); the stem alone ran 14.8 ms untiled, 15.1 tiled
(the same dispatches).

Where a matrix product (not a 1×1 convolution) has a dynamic number of rows, the flag is
``--iree-global-opt-data-tiling``, data tiling started in global optimization instead of
dispatch creation: dispatch creation's path left rows of such products unwritten (attention's
softmax into a matmul, `dync-decompose-softmax`; DynamicViT's token pruning, two MLPs over
`x[:, 1:]` and `x[:, 1:int(N * 0.7) + 1]`, wrong by up to 0.8 at most token counts).

Why: IREE 3.13 leaves data tiling off on the CPU, and its untiled matmul code reaches a third
of eager's speed on large weights. On an AVX2 host (AMD EPYC, one thread, same process):
BERT-base's FFN 128×768→3072 19.2 -> 46.2 GFLOP/s (eager 51.7), 3072→768 19.4 -> 41.0, its
projections 768→768 23.0 -> 32.2, 1024³ 17.8 -> 43.2, the 1×1 convolutions 1024→256 at
14×14 19.6 -> 39.8 and 2048→512 at 7×7 15.5 -> 31.4 (`python -m benchmarks ops --flags=
--iree-opt-data-tiling`); a BERT-base encoder layer over 32 tokens 30.3 -> 10.6 ms (eager
12.7). Narrow products lose: 3136×64×64 20.2 -> 17.3, 3136×576×64 35.9 -> 28.0; on AVX2
products 128 wide gain, `dync-im2col`'s 3×3 convolutions most (`WIDE_BY_ISA`). The flag is
module-wide (IREE has no per-op switch), so the pass weighs the two. No paper section: a kernel choice at the boundary to IREE (issue 33).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from iree.compiler import ir

from ..analysis.op_kinds import CONVOLUTIONS_2D
from ..analysis.value_ranges import ValueRanges, dim_size
from ..dialects.dync_ir import (
    DATA_TILING,
    GLOBAL_DATA_TILING,
    SCF_TO_CF,
    read_vector_isa,
    record_tiling_work,
    request_flags,
    request_preprocessing,
)
from ..dialects.symbolic import bounds, type_dims
from ..dialects.walk import nested_ops
from .pipeline import HostCpuPass

# The narrowest N and K of a contraction that data tiling speeds up (see the docstring), by
# the CPU's vector extension. Measured one thread, an AVX-512 Xeon at 2.1 GHz, untiled ->
# tiled GFLOP/s: 64x128->384 26 -> 32, 512x128->128 33 -> 38, 784x512->128 37 -> 45,
# 196x192->192 58 -> 90, 1x1 convolutions 128->512 at 28x28 24 -> 39, 512->128 30 -> 54,
# 256->128 at 56x56 42 -> 50 (64->256 at 56x56 62 -> 53 stays narrow); a Transformer encoder
# layer at d=128 over 64 tokens 668 -> 314 us (eager 423).
# On AVX2 (an AMD EPYC of 2 cores, one thread, eager in the same process; untiled -> tiled
# against eager): 784x512->128 0.71 -> 0.88x, 784x128->128 0.68 -> 0.85x, 6272x128->128
# 0.67 -> 0.83x, 784x128->512 0.68 -> 0.87x, 196x1152->128 0.65 -> 0.74x; the 3x3
# convolutions dync-im2col makes products of K = 9 * 128: 128->128 at 28x28 batch 1 0.54 ->
# 0.83x, 128->128 at 56x56 stride 2 batch 8 0.52 -> 0.73x, over a dynamic batch (global
# optimization's tiling) at 28x28 batch 8 0.49 -> 0.61x; with dynamic rows, Linears are even
# (784x128->128 0.70 -> 0.67x, 784x512->128 0.70 -> 0.74x, 3136x128->512 0.69 -> 0.67x).
# Still narrow there: 3x3 64->64 at 56x56 batch 8 (K = 576, N = 64) 0.65 -> 0.59x, the
# pointwise product 96->576 at 14x14 batch 8 0.78 -> 0.61x.
WIDE, WIDE_BY_ISA = 256, {"avx512": 128, "avx2": 128}
# The same for a matrix product with dynamic rows, tiled from global optimization: on
# AVX-512 (AMD Zen 4, one thread, eager in the same process) untiled -> tiled against eager,
# rows 3136: 64->64 0.34 -> 0.81x, 96->96 0.37 -> 0.74x, 384->96 0.55 -> 0.86x, 64->256
# 0.26 -> 0.52x; Swin's MLP (96->384->96, GELU) 0.46 -> 1.08x.
WIDE_DYNAMIC_ROWS_BY_ISA = {"avx512": 64}
# Contraction -> the operand whose last dim is K.
_CONTRACTIONS = {"torch.aten.mm": 0, "torch.aten.matmul": 0, "torch.aten.bmm": 0,
                 "torch.aten.linear": 0, "torch.aten.addmm": 1}


def _shape(op: ir.Operation, size: Callable[[ir.Value, int], int]) -> tuple[int, int, int] | None:
    """(M, N, K) of a contraction IREE may data-tile, a dynamic dim of M taken as
    `size(result, axis)`; None otherwise."""
    out = type_dims(op.results[0].type) if len(op.results) == 1 else None
    if op.name in _CONTRACTIONS:
        lhs = type_dims(op.operands[_CONTRACTIONS[op.name]].type)
        if out is None or lhs is None or len(out) < 2 or not lhs:
            return None
        if op.name == "torch.aten.matmul" and len(type_dims(op.operands[1].type) or ()) < 2:
            return None  # a matrix times a vector: its output's last dim is not N
        rhs = type_dims(op.operands[1].type) or ()
        if op.name == "torch.aten.matmul" and len(lhs) == 2 and len(rhs) >= 3:
            # One matrix times a batch of them (dync-pointwise-matmuls' 1×1 convolutions):
            # weighed as the transposed product, the matrix's dims as N and K.
            m, n, k = [*range(len(out) - 2), len(out) - 1], lhs[0], lhs[1]
        else:
            m, n, k = range(len(out) - 1), out[-1], lhs[-1]
    elif op.name in CONVOLUTIONS_2D:
        weight = type_dims(op.operands[1].type)
        if out is None or weight is None or len(out) != 4 or len(weight) != 4 \
                or tuple(weight[2:]) != (1, 1):
            return None
        m, n, k = (0, 2, 3), weight[0], weight[1]
    else:
        return None
    if n is None or k is None:
        return None
    return math.prod(out[a] if out[a] is not None else size(op.results[0], a) for a in m), n, k


def _rows_dynamic(op: ir.Operation) -> bool:
    """Whether a matrix product's result has a dynamic dim besides its last (N); not counting
    one matrix times a batch of them (dync-pointwise-matmuls' 1×1 convolutions)."""
    lhs, rhs = (len(type_dims(v.type) or ()) for v in list(op.operands)[:2])
    if op.name == "torch.aten.matmul" and lhs == 2 and rhs >= 3:
        return False
    out = type_dims(op.results[0].type) or ()
    return any(d is None for d in out[:-1])


def _typical_size(ranges: dict[str, tuple[int, int]]) -> Callable[[ir.Value, int], int]:
    """A dynamic dim taken at the middle of its declared range (from its shape binding; 1
    where unknown): a sequence's input projection, with M = the length, outweighs the
    products of the steps over it (M = the batch), as it does when it runs."""
    def size(value: ir.Value, axis: int) -> int:
        expr = dim_size(value, axis)
        found = None if expr is None else bounds(expr, ranges)
        return 1 if found is None else max(1, (found[0] + found[1]) // 2)

    return size


class DataTiling(HostCpuPass):
    name = "dync-data-tiling"
    summary = "IREE's data tiling for a module whose matmuls are mostly wide (CPU)"

    def run_on_cpu(self, module: ir.Operation) -> None:
        isa = read_vector_isa(module)
        least = WIDE_BY_ISA.get(isa, WIDE)
        least_dynamic = WIDE_DYNAMIC_ROWS_BY_ISA.get(isa, least)
        size = _typical_size(ValueRanges(module).symbol_ranges)
        wide = narrow = 0
        dynamic_rows = False
        for op in nested_ops(module):
            found = _shape(op, size)
            if found is None:
                continue
            m, n, k = found
            rows_dynamic = op.name in _CONTRACTIONS and _rows_dynamic(op)
            threshold = least_dynamic if rows_dynamic else least
            if n >= threshold and k >= threshold:
                wide += m * n * k
            else:
                narrow += m * n * k
            dynamic_rows |= rows_dynamic
        with module.context:
            record_tiling_work(module, wide, narrow, dynamic_rows)
        if wide and wide >= narrow:
            with module.context:
                request_flags(module, [GLOBAL_DATA_TILING if dynamic_rows else DATA_TILING])
                if any(op.name in ("scf.if", "scf.while") for op in nested_ops(module)):
                    request_preprocessing(module, [SCF_TO_CF])
