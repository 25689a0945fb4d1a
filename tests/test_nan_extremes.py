"""dync-nan-extremes: `torch.maximum`/`torch.minimum` of floats are NaN where either input is,
and clamps (`clamp`, `clamp_min`, `relu6`, `hardtanh`) where theirs is, as in eager
(torch-mlir's lowering kept only the second input's NaN, and clamped NaN to a bound),
broadcast too; and the mend stays when a `passes=` list leaves it out (a required pass)."""

import math

import torch
from torch import nn

import dync
from dync.passes import REQUIRED_PASSES


class Extremes(nn.Module):
    def forward(self, a, b, row):
        return (torch.maximum(a, b), torch.minimum(a, b), torch.maximum(row, a),
                torch.clamp(a, -1, 1), a.clamp_min(0.5), nn.functional.relu6(b),
                nn.functional.hardtanh(a))


def test_maximum_and_minimum_keep_both_inputs_nans():
    assert "dync-nan-extremes" in REQUIRED_PASSES
    a, b, row = torch.randn(4, 16), torch.randn(4, 16), torch.randn(16)
    a[0, 3] = b[1, 5] = row[7] = math.nan
    a[2, 9] = b[2, 9] = math.nan
    for passes in (None, ()):
        compiled = dync.compile(Extremes(), (a, b, row), mode="graph", cache=False, passes=passes)
        for got, want in zip(compiled(a, b, row), Extremes()(a, b, row), strict=True):
            torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)
