"""Torch functions torch.export cannot trace when their result's size depends on data, traced
as their definition instead, while dync exports a model: `repeat_interleave` by a tensor of
counts (MoE dispatch writes `torch.repeat_interleave(experts, counts)`; torch's meta function
needs the output size and export fails with "Cannot cast FakeTensor to number"). The result's
length is then an unbacked size, the counts' sum, as `nonzero`'s count is."""

from __future__ import annotations

import torch
from torch.fx.experimental.symbolic_shapes import statically_known_true
from torch.overrides import TorchFunctionMode

from .decompositions import repeat_index


class DataDependentOps(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in (torch.repeat_interleave, torch.Tensor.repeat_interleave):
            result = _repeat_interleave(*args, **kwargs)
            if result is not NotImplemented:
                return result
        return func(*args, **kwargs)


def _repeat_interleave(x, repeats=None, dim=None, *, output_size=None):
    """`x` repeated `repeats[i]` times along `dim`, or `repeat_interleave(counts)` (the
    indices); NotImplemented for a count that is a number or a one-element tensor (torch
    traces those)."""
    if repeats is None:  # repeat_interleave(counts): each index repeated
        return repeat_index(x, output_size) if x.dim() == 1 else NotImplemented
    if not isinstance(repeats, torch.Tensor) or repeats.dim() != 1:
        return NotImplemented
    if dim is None:
        x, dim = x.reshape(-1), 0
    if statically_known_true(repeats.shape[0] == 1):  # one count for every element
        repeats = repeats.expand(x.shape[dim])
    return x.index_select(dim, repeat_index(repeats, output_size))
