"""dync-pointwise-matmuls: a 1×1 convolution no other convolution borders (a detection head
read through a reshape, a projection among NCHW elementwise ops) runs as its filter times each
image's channels, in NCHW, and agrees with eager — over a dynamic batch of 12×12 images, with
and without a bias, under a branch; one that a 3×3 convolution feeds stays a convolution."""

import torch
from torch import nn
from torch.export import Dim

import dync
from dync.passes import DEFAULT_PIPELINE


class Heads(nn.Module):
    def __init__(self):
        super().__init__()
        self.project = nn.Conv2d(12, 24, 1)  # lone: reads the input, read by a reshape
        self.gate = nn.Conv2d(12, 12, 1, bias=False)  # lone, under the branch
        self.body = nn.Conv2d(12, 12, 3, padding=1)
        self.after_body = nn.Conv2d(12, 20, 1)  # bordered by `body`: stays a convolution

    def forward(self, x):
        tokens = self.project(x * 0.5).flatten(2).transpose(1, 2)
        if x.mean() > 0:
            x = x * torch.sigmoid(self.gate(x))
        pooled = self.after_body(torch.relu(self.body(x))).mean((2, 3))
        return tokens, pooled


def test_lone_pointwise_convolutions_run_as_matmuls_and_match_eager(tmp_path):
    torch.manual_seed(0)
    model = Heads().eval()
    compiled = dync.compile(model, (torch.randn(2, 12, 12, 12),),
                            dynamic_shapes=({0: Dim("batch", min=1, max=8)},),
                            mode="graph", dump_ir=tmp_path / "ir.mlir")
    text = (tmp_path / "ir.mlir").read_text()
    assert "dync-pointwise-matmuls" in DEFAULT_PIPELINE
    products = [line for line in text.splitlines() if "torch.aten.matmul " in line]
    assert any("!torch.vtensor<[24,12],f32>" in line for line in products), "project"
    assert any("!torch.vtensor<[12,12],f32>" in line for line in products), "gate"
    convs = [line for line in text.splitlines()
             if "torch.aten.convolution " in line or "torch.aten.conv2d " in line]
    assert any("[20,12,1,1]" in line for line in convs), "after_body stays"
    assert not any("[24,12,1,1]" in line or "[12,12,1,1]" in line for line in convs), convs
    paths = set()
    with torch.no_grad():
        for batch, shift in [(1, 0.0), (3, 2.0), (8, -2.0), (5, 1.0)]:
            x = torch.randn(batch, 12, 12, 12) + shift
            paths.add(bool(x.mean() > 0))
            for got, want in zip(compiled(x), model(x), strict=True):
                torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    assert paths == {True, False}
