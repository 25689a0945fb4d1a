"""`dync-pointwise-conv1d`: on the CPU, a 1-D convolution with a kernel of one is a linear layer
over the channels-last view of its input.

Reads: `torch.aten.conv1d` and the generic `torch.aten.convolution` of a float rank-3 input
(N x C x L; batch and length may be dynamic) by a ``[F, C, 1]`` filter, not transposed, with
stride 1, no padding and one group, in every function; the module's backend (only
``llvm-cpu``).
Writes: in its place ``linear(x.transpose(1, 2), W.view(F, C), bias).transpose(1, 2)``, each
new tensor's shape bound from the convolution's input and result.

Why: IREE 3.13 computes a 1-D convolution as a generic contraction (`matmul_like`) with no
data tiling, at a fifth of the speed of the same product written as a matmul over rows.
PointNet's shared MLP (1×1 `Conv1d` 3→64→128→256 over the points, batch 2 x 1024 points, one
thread, measured beside another job): the 128→256 layer 23 ms as a convolution, 4.3 ms as
this linear layer (data-tiled); the model 58 -> 7.0 ms (eager 7.9). Point-wise 1-D convolutions are the shared MLPs of point
clouds, the 1×1 layers of temporal convolution nets and speech models. IREE cancels the
transposes between two such layers (through the elementwise ops and batch norms between
them) and against the model's own `transpose(1, 2)` before the first. No paper section: a
kernel choice at the boundary to IREE (issue 33).
"""

from __future__ import annotations

from iree.compiler import ir

from ..analysis.op_facts import window
from ..dialects.symbolic import FLOAT_ELEMENTS, element_type, type_dims
from ..dialects.torch_ops import (
    TorchBuilder,
    bind_from,
    constant_bool,
    constant_int,
    constant_int_list,
    int_list,
    vtensor_type,
)
from ..dialects.walk import nested_ops
from .pipeline import HostCpuPass

_CONV1D = ("torch.aten.conv1d", "torch.aten.convolution")


def _pointwise(op: ir.Operation) -> bool:
    """Whether `op` is a 1-D convolution this pass rewrites (see the module docstring)."""
    facts = window(op.name) if op.name in _CONV1D else None
    if facts is None or facts.groups is None:
        return False
    x, weight = (type_dims(v.type) for v in op.operands[:2])
    if x is None or weight is None or len(x) != 3 or len(weight) != 3 or weight[2] != 1 \
            or None in weight or element_type(op.operands[0].type) not in FLOAT_ELEMENTS \
            or type_dims(op.results[0].type) is None:
        return False
    if facts.transposed is not None and constant_bool(op.operands[facts.transposed]) is not False:
        return False
    return (constant_int(op.operands[facts.groups]) == 1
            and constant_int_list(op.operands[facts.stride]) == [1]
            and constant_int_list(op.operands[facts.padding]) == [0])


def _as_linear(conv: ir.Operation) -> ir.Value:
    b = TorchBuilder(conv)
    x, weight, bias = conv.operands[0], conv.operands[1], conv.operands[2]
    result = conv.results[0]
    n, c, length = type_dims(x.type)
    f = type_dims(weight.type)[0]

    def swapped(e):  # N x C x L <-> N x L x C
        return [e[0], e[2], e[1]]

    rows = b("torch.aten.transpose.int", vtensor_type(x.type, (n, length, c)), x, b.int(1),
             b.int(2))
    bind_from(rows, x, swapped, b.ip)
    matrix = b("torch.aten.view", vtensor_type(weight.type, (f, c)), weight,
               int_list([f, c], b.ip, b.loc))
    product = b("torch.aten.linear", vtensor_type(result.type, (n, length, f)), rows, matrix,
                bias)
    bind_from(product, result, swapped, b.ip)
    out = b("torch.aten.transpose.int", result.type, product, b.int(1), b.int(2))
    bind_from(out, result, lambda e: e, b.ip)
    return out


class PointwiseConv1d(HostCpuPass):
    name = "dync-pointwise-conv1d"
    summary = "1-D convolutions with a kernel of one as linear layers over channels-last rows (CPU)"

    def run_on_cpu(self, module: ir.Operation) -> None:
        found = [op for op in nested_ops(module) if _pointwise(op)]
        with module.context, ir.Location.unknown():
            for conv in found:
                conv.results[0].replace_all_uses_with(_as_linear(conv))
                conv.erase()
