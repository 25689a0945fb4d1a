"""`dync-conv1d-linear`: on the CPU, a 1-D convolution is a matrix product: a point-wise one a
linear layer over the channels-last view of its input, any other the filter times its input's
windows.

Reads: `torch.aten.conv1d` and the generic `torch.aten.convolution` of a float rank-3 input
(N x C x L; batch and length may be dynamic) by a static ``[F, C, k]`` filter, not transposed,
with one group and constant stride, padding and dilation, in every function; the module's
backend (only ``llvm-cpu``).
Writes: in its place, for a kernel of one (stride one, no padding)
``linear(x.transpose(1, 2), W.view(F, C), bias).transpose(1, 2)``; otherwise the input
zero-padded along L, one strided slice per kernel offset (ends counted from the input's end,
so no size is computed) concatenated over the channels into N x k·C x L' windows, and
``matmul(W', windows) + bias.view(F, 1)`` with the filter permuted to the same (offset,
channel) order as the F x k·C matrix W'. Each new tensor's shape is bound from the
convolution's input and result (the result keeps the convolution's own binding).

Why: IREE 3.13 computes a 1-D convolution as a generic contraction (`matmul_like`) with no
data tiling, far from the machine's speed. One thread, one sample over 200 steps: 40→96
channels with a kernel of 5 (a speech model's front end) 1.6 ms against eager's 0.11;
256→256 with a kernel of 3 (a temporal convolution net's layer) 18.5 ms against 0.95 (a 2-D
convolution of height one was no better, 5.8 ms); as products 0.15 and 0.96 ms, over a
dynamic length 0.081 and 0.44 ms against 0.077 and 0.50. A temporal convolution net (4
residual blocks of dilated causal convolutions, 64 channels) 44.7 -> 3.6 ms, eager 3.3. The
windows in the channels-last form of point-wise ones (the transposes around a linear layer)
made that net 5.8 ms. Point-wise ones are the shared MLPs of point clouds: PointNet (1×1
`Conv1d` 3→64→128→256 over the points, batch 2 x 1024 points, one thread) 58 -> 7.0 ms
(eager 7.9); IREE cancels the transposes between two such layers (through the elementwise
ops and batch norms between them) and against the model's own `transpose(1, 2)` before the
first. Windows cost k times the input's memory. No paper section: a kernel choice at the
boundary to IREE (issue 33).
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
    float_constant,
    int_list,
    vtensor_type,
)
from ..dialects.walk import nested_ops
from .pipeline import HostCpuPass

_CONV1D = ("torch.aten.conv1d", "torch.aten.convolution")


def _window(op: ir.Operation) -> tuple[int, int, int, int] | None:
    """Kernel, stride, padding and dilation of a 1-D convolution this pass rewrites (see the
    module docstring); None for any other op."""
    facts = window(op.name) if op.name in _CONV1D else None
    if facts is None or facts.groups is None:
        return None
    x, weight = (type_dims(v.type) for v in op.operands[:2])
    if x is None or weight is None or len(x) != 3 or len(weight) != 3 or None in weight \
            or element_type(op.operands[0].type) not in FLOAT_ELEMENTS \
            or type_dims(op.results[0].type) is None:
        return None
    if facts.transposed is not None and constant_bool(op.operands[facts.transposed]) is not False:
        return None
    stride, padding = (constant_int_list(op.operands[i]) for i in (facts.stride, facts.padding))
    dilation = constant_int_list(op.operands[facts.dilation]) if facts.dilation is not None \
        else [1]
    if constant_int(op.operands[facts.groups]) != 1 or None in (stride, padding, dilation) \
            or len(stride) != 1 or len(padding) != 1 or len(dilation) != 1:
        return None
    return weight[2], stride[0], padding[0], dilation[0]


def _as_linear(conv: ir.Operation, k: int, stride: int, padding: int, dilation: int) -> ir.Value:
    if k == 1 and stride == 1 and padding == 0:
        return _over_rows(conv)
    return _over_windows(conv, k, stride, padding, dilation)


def _over_rows(conv: ir.Operation) -> ir.Value:
    """A point-wise convolution as a linear layer over the N x L x C rows."""
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
    return b("torch.aten.transpose.int", result.type, product, b.int(1), b.int(2))


def _over_windows(conv: ir.Operation, k: int, stride: int, padding: int,
                  dilation: int) -> ir.Value:
    """The filter as an F x k·C matrix times the N x k·C x L' windows: one strided slice of
    the padded input per kernel offset (the last ending the input: negative ends, no size
    computed), concatenated over the channels in the matrix's (offset, channel) order."""
    b = TorchBuilder(conv)
    x, weight, bias = conv.operands[0], conv.operands[1], conv.operands[2]
    result = conv.results[0]
    n, c, length = type_dims(x.type)
    f, steps = type_dims(weight.type)[0], type_dims(result.type)[2]
    if padding:
        padded = None if length is None else length + 2 * padding
        x_padded = b("torch.aten.constant_pad_nd", vtensor_type(x.type, (n, c, padded)), x,
                     int_list([padding, padding], b.ip, b.loc), float_constant(0.0, b.ip, b.loc))
        bind_from(x_padded, x, lambda e: [e[0], e[1], e[2] + 2 * padding], b.ip)
        x = x_padded
    span = (k - 1) * dilation
    taps = []
    for i in range(k):
        end = i * dilation - span if i * dilation < span else _END
        tap = b("torch.aten.slice.Tensor", vtensor_type(x.type, (n, c, steps)), x, b.int(2),
                b.int(i * dilation), b.int(end), b.int(stride))
        bind_from(tap, result, lambda e: [e[0], c, e[2]], b.ip)
        taps.append(tap)
    windows = taps[0] if k == 1 else b(
        "torch.aten.cat", vtensor_type(x.type, (n, k * c, steps)), b.tensors(taps), b.int(1))
    bind_from(windows, result, lambda e: [e[0], k * c, e[2]], b.ip)
    matrix = b("torch.aten.permute", vtensor_type(weight.type, (f, k, c)), weight,
               int_list([0, 2, 1], b.ip, b.loc))
    matrix = b("torch.aten.reshape", vtensor_type(weight.type, (f, k * c)), matrix,
               int_list([f, k * c], b.ip, b.loc))
    out = b("torch.aten.matmul", result.type, matrix, windows)
    if str(bias.type) == "!torch.none":
        return out
    bind_from(out, result, lambda e: e, b.ip)
    column = b("torch.aten.view", vtensor_type(bias.type, (f, 1)), bias,
               int_list([f, 1], b.ip, b.loc))
    return b("torch.aten.add.Tensor", result.type, out, column, b.int(1))


_END = 2 ** 63 - 1


class Conv1dLinear(HostCpuPass):
    name = "dync-conv1d-linear"
    summary = "1-D convolutions as matrix products: over channels-last rows or windows (CPU)"

    def run_on_cpu(self, module: ir.Operation) -> None:
        found = [(op, w) for op in nested_ops(module) if (w := _window(op)) is not None]
        with module.context, ir.Location.unknown():
            for conv, (k, stride, padding, dilation) in found:
                conv.results[0].replace_all_uses_with(
                    _as_linear(conv, k, stride, padding, dilation))
                conv.erase()
