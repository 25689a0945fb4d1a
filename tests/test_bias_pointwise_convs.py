"""dync-bias-pointwise-convs: bias-less 1×1 convolutions (ResNet's and MobileNet's pointwise
ones, before a batch norm) reach IREE with a zero bias, and agree with eager — also under a
branch, over a dynamic batch, strided, and beside a transposed one (which the decompositions
make an ordinary 1×1 one over its input, 4 phases × 16 filters)."""

import torch
from torch import nn
from torch.export import Dim

import dync
from dync.passes import DEFAULT_PIPELINE


class Bottleneck(nn.Module):
    def __init__(self):
        super().__init__()
        self.reduce = nn.Conv2d(16, 4, 1, bias=False)
        self.bn = nn.BatchNorm2d(4)
        self.conv = nn.Conv2d(4, 4, 3, padding=1, bias=False)
        self.expand = nn.Conv2d(4, 16, 1, bias=False)
        self.down = nn.Conv2d(16, 8, 1, stride=2, bias=False)
        self.up = nn.ConvTranspose2d(8, 16, 1, stride=2, output_padding=1, bias=False)

    def forward(self, x):
        h = self.expand(torch.relu(self.conv(torch.relu(self.bn(self.reduce(x))))))
        if x.mean() > 0:
            return x + h
        return self.up(self.down(x + h))[:, :8]


def test_pointwise_convolutions_get_a_zero_bias_and_match_eager(tmp_path):
    torch.manual_seed(0)
    model = Bottleneck().eval()
    compiled = dync.compile(model, (torch.randn(2, 16, 8, 8),),
                            dynamic_shapes=({0: Dim("batch", min=1, max=8)},), mode="graph",
                            dump_ir=tmp_path / "ir.mlir")
    text = (tmp_path / "ir.mlir").read_text()
    # reduce, expand, down and the transposed one's phases; not the 3×3.
    assert text.count("dense<0.000000e+00> : tensor<") >= 4
    assert "dync-bias-pointwise-convs" in DEFAULT_PIPELINE
    paths = set()
    with torch.no_grad():
        for batch, shift in [(1, 0.0), (3, 3.0), (8, -3.0), (5, 0.5)]:
            x = torch.randn(batch, 16, 8, 8) + shift
            want = model(x)
            paths.add(want.shape[1])
            torch.testing.assert_close(compiled(x), want, rtol=1e-4, atol=1e-4)
    assert paths == {16, 8}, paths
