"""Special functions torch-mlir does not lower, decomposed by dync before import
(`frontends/pytorch/decompositions.py`), against eager PyTorch over a dynamic length, the
ends of their domain included."""

from __future__ import annotations

import torch
from torch.export import Dim

import dync


class InverseErf(torch.nn.Module):
    def forward(self, y):
        return torch.erfinv(y)


def test_erfinv_over_its_domain_and_beyond():
    """`erfinv` sent the whole model to eager; ±1 give ±inf, beyond them NaN, as eager."""
    length = Dim("length", min=2, max=4096)
    compiled = dync.compile(InverseErf().eval(), (torch.rand(16) * 2 - 1,),
                            dynamic_shapes=({0: length},), mode="graph", cache=False)
    ends = torch.tensor([-1.0, 1.0, 0.0, -0.0, 0.9999999, -0.99999994, 1e-30, 1.5, -2.0,
                         float("nan")])
    for y in (torch.linspace(-1, 1, 4001), ends, torch.rand(7) * 2 - 1):
        torch.testing.assert_close(compiled(y), torch.erfinv(y), rtol=1e-6, atol=5e-7,
                                   equal_nan=True)
