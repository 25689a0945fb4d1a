"""`dync-decompose-softmax`: on the CPU, a float32 softmax computed as its max, exponentials,
sum and a product with the sum's reciprocal.

Reads: `torch.aten.softmax.int` (no result dtype asked for) and `torch.aten._softmax` (not
half to float) over any dim of an f32 tensor, in every function; the module's backend (only
``llvm-cpu``) and its IREE flags (``dync.iree_flags``: whether `dync-data-tiling`, which runs
before this pass, asked for data tiling).

Writes: in place of each, ``e = exp(x - amax(x, dim, keepdim))`` and ``e * reciprocal(sum(e,
dim, keepdim))`` (`torch.aten.amax`, `sub.Tensor`, `exp`, `sum.dim_IntList`, `reciprocal`,
`mul.Tensor`): the same arithmetic as the op's own definition, the division done once per
row. The new tensors' shapes are bound from the input's binding (the reduced dim 1), for
memory planning. In a module that asks for data tiling (``--iree-opt-data-tiling``), once a
softmax whose probabilities reach a matmul (through views and elementwise ops: attention) is
decomposed, the request becomes ``--iree-global-opt-data-tiling`` (below).
Softmaxes of other element types are left to `dync-softmax-row-blocks`, which
runs after this pass, and so are log-softmaxes (not measured).

Why: IREE 3.13 compiles `linalg.softmax` on the CPU as one dispatch whose code runs several
times slower than the same computation written as reductions and elementwise ops, which it
vectorizes (and, with the reciprocal, divides once per row instead of once per element: with a
division per element the decomposed form was as slow as the op). One thread, AVX-512, dync
against dync with this pass: attention scores ``1 x 12 x s x s`` over 512 tokens (dynamic)
9.9 -> 6.6 ms (eager 1.4; `dync-softmax-row-blocks` alone: 58 ms without it), ``12 x 512 x
512`` static 4.8 -> 3.3, ``12 x s x 128`` (dynamic rows) 1.30 -> 0.64, small rows (8 x 1000,
64 x 30) equal.

Beside data tiling, IREE 3.13's default path to it (started in dispatch creation, what
``--iree-opt-data-tiling`` picks) leaves rows of the product of the decomposed probabilities
and the values unwritten when the keys are not a multiple of its tile (16): the dispatch that
packs the probabilities for the second matmul covers 3 of 4 heads
(`lit/upstream/iree-data-tiling-softmax-rows-unwritten.mlir`; an
`nn.TransformerEncoderLayer(256, 4, 512)` over 12 tokens differed from eager by 0.38). Data
tiling started in global optimization (``--iree-global-opt-data-tiling``) computes it right,
as fast (that layer over 64 tokens: 0.370 ms on dispatch creation's path, 0.362 on global
optimization's, 0.703 without data tiling; `iree-benchmark-module`), so the pass asks for that
one instead where the probabilities reach a matmul. Only there: on convolutions global
optimization's path is the slower one (the early-exit ResNet-50, whose exits' softmaxes feed
no matmul, 2 threads, batch 1: 39 -> 49 ms on it). No paper section: a kernel choice at the
boundary to IREE (issue 33).
"""

from __future__ import annotations

from iree.compiler import ir

from ..analysis.op_kinds import ELEMENTWISE, MATMULS, SOFTMAXES, VIEWS
from ..dialects.dync_ir import DATA_TILING, GLOBAL_DATA_TILING, replace_flag
from ..dialects.symbolic import element_type, type_dims
from ..dialects.torch_ops import (
    TorchBuilder,
    bind_from,
    constant_bool,
    constant_int,
    users,
    vtensor_type,
)
from ..dialects.walk import nested_ops
from .pipeline import HostCpuPass

_SOFTMAX = "torch.aten.softmax.int"


def _reduced_dim(op: ir.Operation) -> int | None:
    """The dim (non-negative) of a softmax this pass decomposes, else None."""
    if op.name not in SOFTMAXES or len(op.operands) != 3:
        return None
    x = op.operands[0]
    dims, dim = type_dims(x.type), constant_int(op.operands[1])
    if dims is None or not dims or dim is None or not -len(dims) <= dim < len(dims):
        return None
    if element_type(x.type) != "f32" or element_type(op.results[0].type) != "f32":
        return None
    option = op.operands[2]
    if op.name == _SOFTMAX:
        if str(option.type) != "!torch.none":
            return None
    elif constant_bool(option) is not False:
        return None
    return dim % len(dims)


def _decompose(op: ir.Operation, dim: int) -> ir.Value:
    b = TorchBuilder(op)
    x = op.operands[0]
    dims = type_dims(x.type)
    reduced = vtensor_type(x.type, [1 if i == dim else d for i, d in enumerate(dims)])
    dim_list = b.ints([b.int(dim)])
    keep = b.bool(True)
    one = b.int(1)
    peak = b("torch.aten.amax", reduced, x, dim_list, keep)
    shifted = b("torch.aten.sub.Tensor", x.type, x, peak, one)
    exps = b("torch.aten.exp", x.type, shifted)
    total = b("torch.aten.sum.dim_IntList", reduced, exps, dim_list, keep, b.none)
    inverse = b("torch.aten.reciprocal", reduced, total)
    result = b("torch.aten.mul.Tensor", op.results[0].type, exps, inverse)

    def keep_dim(exprs: list) -> list:
        return [1 if i == dim else e for i, e in enumerate(exprs)]

    for value in (peak, total, inverse):
        bind_from(value, x, keep_dim, b.ip)
    for value in (shifted, exps):
        bind_from(value, x, list, b.ip)
    return result


def _feeds_product(value: ir.Value, depth: int = 8) -> bool:
    """Whether `value` reaches an operand of a matmul through views and elementwise ops."""
    for op in users(value):
        if op.name in MATMULS:
            return True
        if depth and (op.name in VIEWS or op.name in ELEMENTWISE) and any(
                _feeds_product(result, depth - 1) for result in op.results):
            return True
    return False


class DecomposeSoftmax(HostCpuPass):
    name = "dync-decompose-softmax"
    summary = "an f32 softmax as max, exp, sum and a reciprocal product (CPU)"

    def run_on_cpu(self, module: ir.Operation) -> None:
        found = [(op, dim) for op in nested_ops(module)
                 if (dim := _reduced_dim(op)) is not None]
        if any(_feeds_product(op.results[0]) for op, _ in found):
            # dispatch creation's data tiling drops rows after it: see the docstring
            replace_flag(module, DATA_TILING, GLOBAL_DATA_TILING)
        with module.context, ir.Location.unknown():
            for op, dim in found:
                result = _decompose(op, dim)
                op.results[0].replace_all_uses_with(result)  # with its binding: the op's shape
                op.erase()
