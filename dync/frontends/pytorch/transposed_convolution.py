"""Transposed convolutions as one ordinary convolution over their input (sub-pixel convolution).

Output position `o` of a transposed convolution with `o + padding = q * stride + r` takes
`sum_j x[q - j] * w[r + stride * j]`: phase `r` is a correlation of `x` with every stride-th
tap from `r`, flipped, and the `stride**d` phases of every output channel are the outputs of one
convolution with `ceil(k / stride)` taps a dim (taps past the kernel are zeros), stride 1, over
the input itself; the phases are then interleaved and the padding cropped. torch-mlir lowers the
op as a convolution over the input with zeros inserted between its pixels: `stride**d` times the
multiplications, and over a dynamic height and width a kernel IREE ran ~100x slower than eager
(ConvTranspose2d 32->16, k4 s2, 16x16: 7.3 ms against 83 µs; so, 67 µs).

Used by the ATen decompositions (`aten.conv_transposeNd`, a transposed `aten.convolution`,
`decompositions.py`): the weight is traced, so its phase filter is ops on the parameter, which
`dync-fold-literal-layouts` makes one literal (as ops, `dync-im2col` left the convolution to
IREE's direct code: a static 64->32 4x4/2 one at 64x64 ran 6.6 ms against eager's 1.5; as a
literal, 1.7).
"""

from __future__ import annotations

import math

import torch

_aten = torch.ops.aten


def per_dim(value, spatial: int) -> list:
    """A convolution's stride, padding or dilation as one value per spatial dim."""
    return [value] * spatial if isinstance(value, int) else list(value) * (
        spatial if len(value) == 1 else 1)


def phase_weight(weight: torch.Tensor, stride: list[int], dilation: list[int],
                 groups: int) -> torch.Tensor:
    """The ordinary convolution's filter (`groups * out * prod(stride)` x `in / groups` x taps)
    of a transposed convolution's `weight` (`in` x `out / groups` x kernel)."""
    spatial = weight.dim() - 2
    in_channels, out_per_group, *kernel = weight.shape
    w = weight.reshape(groups, in_channels // groups, out_per_group, *kernel).transpose(1, 2)
    for d in range(spatial):
        if dilation[d] > 1:
            axis = 3 + d
            w = _aten.constant_pad_nd(w.unsqueeze(axis + 1), [0, 0] * (spatial - d - 1) + [
                0, dilation[d] - 1], 0.0).flatten(axis, axis + 1)
            w = _aten.slice(w, axis, 0, (kernel[d] - 1) * dilation[d] + 1)
    kernel = list(w.shape[3:])
    taps = [-(-k // s) for k, s in zip(kernel, stride, strict=True)]
    w = _aten.constant_pad_nd(w, [p for d in reversed(range(spatial))
                                  for p in (0, taps[d] * stride[d] - kernel[d])], 0.0)
    w = w.reshape(groups, out_per_group, in_channels // groups,
                  *(n for d in range(spatial) for n in (taps[d], stride[d])))
    w = w.flip([3 + 2 * d for d in range(spatial)])
    w = w.permute(0, 1, *(4 + 2 * d for d in range(spatial)), 2,
                  *(3 + 2 * d for d in range(spatial)))
    return w.reshape(groups * out_per_group * math.prod(stride), in_channels // groups, *taps)


def phase_bias(bias: torch.Tensor | None, stride: list[int]) -> torch.Tensor | None:
    return None if bias is None else bias.reshape(-1, *[1] * len(stride)).expand(
        bias.shape[0], *stride).reshape(-1)


def transposed_convolution(x, weight, bias, stride, padding, output_padding, groups, dilation):
    """`x` (batched) through the transposed convolution, as one ordinary convolution with the
    filter `phase_weight` and bias `phase_bias` make, its phases interleaved; NotImplemented
    for what it does not cover (a number of groups that is a size, more than 3 spatial dims, a
    dynamic kernel)."""
    spatial = x.dim() - 2
    if not isinstance(groups, int) or spatial not in (1, 2, 3):
        return NotImplemented
    stride, padding, extra, dilation = (per_dim(v, spatial) for v in (
        stride, padding, output_padding, dilation))
    kernel = [(k - 1) * dl + 1 for k, dl in zip(weight.shape[2:], dilation, strict=True)]
    if not all(isinstance(k, int) for k in kernel) or not isinstance(weight.shape[1], int):
        return NotImplemented
    w, b = phase_weight(weight, stride, dilation, groups), phase_bias(bias, stride)
    taps = list(w.shape[2:])
    sizes = x.shape[2:]
    # Phase length past the input's: the output's last position, as a phase index, less L.
    beyond = [-(-(kernel[d] + extra[d] - padding[d]) // stride[d]) - 1 for d in range(spatial)]
    padded = _aten.constant_pad_nd(x, [p for d in reversed(range(spatial))
                                       for p in (taps[d] - 1, max(beyond[d], 0))], 0.0)
    y = _aten.convolution.default(padded, w, b, [1] * spatial, [0] * spatial, [1] * spatial,
                                  False, [0] * spatial, groups)
    for d in range(spatial):
        if beyond[d] < 0:
            y = y.narrow(2 + d, 0, sizes[d] + beyond[d])
    phases_shape = y.shape[2:]
    out_channels = y.shape[1] // math.prod(stride)
    y = y.reshape(x.shape[0], out_channels, *stride, *phases_shape)
    y = y.permute(0, 1, *(n for d in range(spatial) for n in (2 + spatial + d, 2 + d)))
    y = y.reshape(x.shape[0], out_channels,
                  *(phases_shape[d] * stride[d] for d in range(spatial)))
    for d in range(spatial):
        length = (sizes[d] - 1) * stride[d] - 2 * padding[d] + kernel[d] + extra[d]
        y = y.narrow(2 + d, padding[d], length)
    return y
