"""`dync-pointwise-matmuls`: on the CPU, a 1×1 convolution that no other convolution or pool
borders becomes a product of its filter by each image's channels, in NCHW.

Reads: 2-D convolutions (not transposed, one group) by a static ``[F, C, 1, 1]`` filter the
module can read, with stride 1 and no padding, over images of static size with at least
`MIN_PIXELS` pixels, in every function; the ops around each, through elementwise ops and
batch norms (operands and users alike), up to the next convolution, pool, block argument or
other op; the module's backend (only ``llvm-cpu``).
Writes: for each such convolution that meets no other convolution or pool that way, in its
place: ``W[F, C] @ x.flatten(2)`` (`torch.aten.matmul`, the filter broadcast over the batch),
its bias added as an ``[F, 1]`` column, viewed back to ``N x F x H x W``.

Why: IREE computes convolutions in NHWC (the channels-last preprocessing dync-channels-last
asks for, and IREE's own conversion), so a convolution among NCHW ops pays a transpose of its
input and one of its result, which cost as much as the product itself at narrow channels. In
NCHW a 1×1 convolution is, per image, the filter times a ``C x HW`` matrix, and needs neither.
Measured with a lone 1×1 convolution against the same product written as this matmul
(`dync.compile`, one thread, eager's oneDNN in the same process, GFLOP/s): on AVX2 (code for
x86-64-v3, eager held to AVX2) 64→64 at 56² batch 1 67.6 -> 94.9 (eager 98.3), batch 8 52.7 ->
65.2 (81.5); 64→256 at 56² batch 8 58.7 -> 80.1 (94.5); 144→24 at 56² batch 8 45.5 -> 50.2
(71.7). On AVX-512: 144→24 batch 8 36.7 -> 63.7 (64.1), 64→256 batch 8 101 -> 135, 512→128 at
28² batch 1 129 -> 205. Each image is a product of its own, narrow where images are small:
2048→512 at 7² batch 8 (49 pixels) fell 131 -> 67 (`python -m benchmarks ops`), 1024→256 at
14² (196 pixels) rose 111 -> 126; smaller images, and sizes only known at run time, keep the
convolution. Where convolutions border each other (a CNN's blocks) IREE's transposes
cancel between them and they stay convolutions. `dync-data-tiling` weighs the product by the
filter's dims, as it weighed the convolution. No paper section: a kernel choice at the
boundary to IREE (issue 33).
"""

from __future__ import annotations

from iree.compiler import ir

from ..analysis.layout import constant_window
from ..analysis.op_kinds import BATCH_NORMS, CONVOLUTIONS, ELEMENTWISE, POOLS
from ..dialects.literals import erase_if_unused, readable, transformed_literal
from ..dialects.symbolic import is_tensor, type_dims
from ..dialects.torch_ops import (
    TorchBuilder,
    bind_from,
    defining,
    int_list,
    users,
    vtensor_type,
)
from ..dialects.walk import nested_ops
from .pipeline import HostCpuPass

# Ops a layout passes through unchanged: IREE moves its NHWC transposes across them.
_NEUTRAL = ELEMENTWISE | BATCH_NORMS
# The fewest pixels per image a product is made for (see the docstring: 49 lost, 196 won).
MIN_PIXELS = 128
# The most values a walk looks at before it takes the convolution for a bordered one.
_REACH = 256


def _pointwise(op: ir.Operation) -> bool:
    """Whether `op` is a 1×1 convolution this pass may rewrite (see the module docstring)."""
    found = constant_window(op)
    if found is None or found.groups != 1 or found.stride != [1, 1] or any(found.padding):
        return False
    weight, (_, _, h, w) = type_dims(op.operands[1].type), type_dims(op.operands[0].type)
    if weight[2:] != (1, 1) or h is None or w is None or h * w < MIN_PIXELS:
        return False
    return readable(op.operands[1])


def _bordered(conv: ir.Operation) -> bool:
    """Whether another convolution or a pool is reached from `conv`'s input or result through
    layout-neutral ops (or the walk gives up)."""
    seen: set = set()
    todo = [conv.operands[0], conv.results[0]]
    while todo:
        value = todo.pop()
        if value in seen:
            continue
        seen.add(value)
        if len(seen) > _REACH:
            return True
        owner = value.owner
        ops = users(value) + ([] if isinstance(owner, ir.Block) else [owner])
        for op in (o.operation for o in ops):
            if op == conv.operation:
                continue
            if op.name in CONVOLUTIONS or op.name in POOLS:
                return True
            if op.name in _NEUTRAL:
                todo += [v for v in list(op.operands) + list(op.results) if is_tensor(v.type)]
    return False


def _as_matmul(conv: ir.Operation, made: dict) -> ir.Value:
    b = TorchBuilder(conv)
    x, weight, bias = conv.operands[0], conv.operands[1], conv.operands[2]
    like = conv.results[0].type
    n, c, h, w = type_dims(x.type)
    f = type_dims(weight.type)[0]
    hw = h * w

    def flattened(e):  # N x C x H x W -> N x C x HW
        return [e[0], e[1], e[2] * e[3]]

    flat = b("torch.aten.flatten.using_ints", vtensor_type(like, (n, c, hw)), x, b.int(2),
             b.int(3))
    bind_from(flat, x, flattened, b.ip)
    matrix = transformed_literal(weight, lambda a: a.reshape(f, c), made, before=conv)
    product = b("torch.aten.matmul", vtensor_type(like, (n, f, hw)), matrix, flat)
    bind_from(product, conv.results[0], flattened, b.ip)
    if defining(bias, "torch.constant.none") is None:
        column = b("torch.aten.view", vtensor_type(bias.type, (f, 1)), bias,
                   int_list([f, 1], b.ip, b.loc))
        product = b("torch.aten.add.Tensor", product.type, product, column, b.int(1))
        bind_from(product, conv.results[0], flattened, b.ip)
    shape = b.ints([b.size(x, 0), b.int(f), b.int(h), b.int(w)])
    result = b("torch.aten.view", like, product, shape)
    bind_from(result, conv.results[0], lambda e: e, b.ip)
    return result


class PointwiseMatmuls(HostCpuPass):
    name = "dync-pointwise-matmuls"
    summary = "1×1 convolutions no other convolution borders as matmuls in NCHW (CPU)"

    def run_on_cpu(self, module: ir.Operation) -> None:
        found = [op for op in nested_ops(module) if _pointwise(op) and not _bordered(op)]
        made: dict = {}
        with module.context, ir.Location.unknown():
            for conv in found:
                weight = conv.operands[1]
                conv.results[0].replace_all_uses_with(_as_matmul(conv, made))
                conv.erase()
                erase_if_unused(weight)
