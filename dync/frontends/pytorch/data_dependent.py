"""Torch functions torch.export cannot trace when their result's size depends on data, traced
as their definition instead, while dync exports a model: `repeat_interleave` by a tensor of
counts (MoE dispatch writes `torch.repeat_interleave(experts, counts)`; torch's meta function
needs the output size and export fails with "Cannot cast FakeTensor to number"). The result's
length is then an unbacked size, the counts' sum, as `nonzero`'s count is."""

from __future__ import annotations

import torch
from torch.overrides import TorchFunctionMode

from .decompositions import repeat_interleave


class DataDependentOps(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in (torch.repeat_interleave, torch.Tensor.repeat_interleave):
            result = repeat_interleave(*args, **kwargs)
            if result is not NotImplemented:
                return result
        return func(*args, **kwargs)
