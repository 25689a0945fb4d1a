"""dync-max-pool-slices: on the CPU a 2-D max pool runs as the maximum of strided slices of its
NHWC input, and agrees with eager exactly — padded, strided, dilated, rectangular, in ceil
mode, over negative values and NaN, over a dynamic batch, and after a convolution (the
layout IREE computes it in)."""

import math

import torch
import torch.nn.functional as F
from torch import nn
from torch.export import Dim

import dync
from dync.passes import DEFAULT_PIPELINE


class Pools(nn.Module):
    def forward(self, x):
        return (F.max_pool2d(x, 3, 2, 1),                      # a ResNet stem's
                F.max_pool2d(x, 2),                            # VGG's, odd sizes cut
                F.max_pool2d(x, 3, 2, 1, ceil_mode=True),
                F.max_pool2d(x, (2, 3), (1, 2), (1, 1)),
                F.max_pool2d(x, 2, 1, 0, dilation=2),
                F.max_pool2d(x, 3, 3, ceil_mode=True))


class Stem(nn.Module):
    """A ResNet stem: its pool reads the convolution's NHWC result and returns NCHW."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 7, stride=2, padding=3, bias=False)
        self.bn = nn.BatchNorm2d(16)
        self.pool = nn.MaxPool2d(3, 2, 1)

    def forward(self, x):
        return self.pool(torch.relu(self.bn(self.conv(x))))


def test_max_pools_as_slices_match_eager_exactly(tmp_path):
    assert "dync-max-pool-slices" in DEFAULT_PIPELINE
    batch = ({0: Dim("batch", min=1, max=8)},)
    compiled = dync.compile(Pools(), (torch.randn(2, 5, 15, 17),), dynamic_shapes=batch,
                            mode="graph", cache=False, dump_ir=tmp_path / "ir.mlir")
    text = (tmp_path / "ir.mlir").read_text()
    assert "torch.aten.max_pool2d" not in text and "torch.aten.maximum" in text
    negative = -torch.rand(3, 5, 15, 17) - 1.0  # -inf padding must never win
    with_nan = torch.randn(1, 5, 15, 17)
    with_nan[0, 2, 4, 6] = math.nan
    for x in (torch.randn(1, 5, 15, 17), negative, with_nan, torch.randn(8, 5, 15, 17)):
        for got, want in zip(compiled(x), Pools()(x), strict=True):
            torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)


def test_a_stems_pool_after_its_convolution_matches_eager():
    torch.manual_seed(0)
    model = Stem().eval()
    batch = ({0: Dim("batch", min=1, max=8)},)
    compiled = dync.compile(model, (torch.randn(2, 3, 64, 48),), dynamic_shapes=batch,
                            mode="graph", cache=False)
    with torch.no_grad():
        for n in (1, 5):
            x = torch.randn(n, 3, 64, 48)
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-5, atol=1e-5)
