"""dync-im2col: convolutions with many input channels and few output pixels (a CNN's deep
layers) run as one matmul over their windows, and agree with eager — strided, dilated, with a
bias and a rectangular kernel, over a dynamic batch, under a branch, and with a filter too
large for dync to read (transformed by IREE at compile time)."""

import torch
from torch import nn
from torch.export import Dim

import dync
from dync.passes import DEFAULT_PIPELINE


class Deep(nn.Module):
    def __init__(self):
        super().__init__()
        self.strided = nn.Conv2d(64, 96, 3, stride=2, padding=1)
        self.dilated = nn.Conv2d(96, 96, (3, 5), padding=(2, 1), dilation=(2, 1), bias=False)
        self.large = nn.Conv2d(96, 1400, 3, padding=1, bias=False)  # 1.2 M weights
        self.wide = nn.Conv2d(64, 32, 3, padding=1)  # 64 output pixels, 32 filters: kept

    def forward(self, x):
        h = torch.relu(self.dilated(torch.relu(self.strided(x))))
        if x.mean() > 0:
            h = self.large(h)[:, :96]
        return h.sum((2, 3)), self.wide(x).sum((2, 3))


def test_deep_convolutions_run_as_matmuls_and_match_eager(tmp_path):
    torch.manual_seed(0)
    model = Deep().eval()
    compiled = dync.compile(model, (torch.randn(2, 64, 8, 8),),
                            dynamic_shapes=({0: Dim("batch", min=1, max=8)},), mode="graph",
                            dump_ir=tmp_path / "ir.mlir")
    text = (tmp_path / "ir.mlir").read_text()
    assert "dync-im2col" in DEFAULT_PIPELINE
    assert text.count("torch.aten.mm ") >= 3, "strided, dilated and large as matmuls"
    assert "!torch.vtensor<[864,1400],f32>" in text, "the large filter viewed as a matrix"
    convs = [line for line in text.splitlines()
             if "torch.aten.convolution " in line or "torch.aten.conv2d " in line]
    assert convs and all("[32,64,3,3]" in line for line in convs), "only the wide one kept"
    inputs = [torch.randn(batch, 64, 8, 8) + shift
              for batch, shift in [(1, 0.0), (3, 2.0), (8, -2.0), (5, 1.0)]]
    assert {bool(x.mean() > 0) for x in inputs} == {True, False}, "both paths"
    with torch.no_grad():
        for x in inputs:
            for got, expected in zip(compiled(x), model(x), strict=True):
                torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-3)
