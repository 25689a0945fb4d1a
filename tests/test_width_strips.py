"""dync-width-strips: convolutions over a dynamic width (a resolution-adaptive CNN's) run over
strips of 8 output columns folded into the batch, and agree with eager at every width —
narrower than a strip, a multiple of it or not — over a dynamic batch, more than 64 rows
(where a view of the strips over several dynamic dims came out wrong), strided, dilated,
1×1, rectangular and padded kernels, under an early exit taken both ways."""

import re

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.export import Dim

import dync
from dync.passes import DEFAULT_PIPELINE


class AnyResolution(nn.Module):
    """Every kind of convolution the pass rewrites, and a depthwise one it leaves, over an
    image of any size; an early exit on the input's mean."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.pointwise = nn.Conv2d(8, 16, 1)
        self.dilated = nn.Conv2d(16, 16, 3, padding=2, dilation=2)
        self.rectangular = nn.Conv2d(16, 8, (3, 5), padding=(1, 2), bias=False)
        self.depthwise = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.wide = nn.Conv2d(8, 8, 7, stride=3)
        self.early, self.late = nn.Linear(8, 4), nn.Linear(8, 4)

    def forward(self, x):
        h = torch.relu(self.stem(x))
        h = torch.relu(self.dilated(torch.relu(self.pointwise(h))))
        h = self.depthwise(torch.relu(self.rectangular(h)))
        if x.mean() > 0:
            return self.early(h.mean((2, 3)))
        return self.late(F.adaptive_avg_pool2d(torch.relu(self.wide(h)), 1).flatten(1))


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    torch.manual_seed(0)
    model = AnyResolution().eval()
    ir = tmp_path_factory.mktemp("width_strips") / "ir.mlir"
    compiled = dync.compile(
        model, (torch.randn(2, 3, 40, 48),), mode="graph", dump_ir=ir,
        dynamic_shapes=({0: Dim("n", min=1, max=4), 2: Dim("h", min=19, max=160),
                         3: Dim("w", min=19, max=160)},))
    return model, compiled, ir.read_text()


def test_every_convolution_of_one_group_runs_over_static_width_strips(compiled):
    _, _, text = compiled
    assert "dync-width-strips" in DEFAULT_PIPELINE
    results = re.findall(r"torch\.aten\.conv(?:2d|olution) .*-> !torch\.vtensor<\[([^\]]*)\]",
                         text)
    widths = [dims.split(",")[-1] for dims in results]
    # The depthwise one is a linalg convolution in NHWC by then (dync-depthwise-nhwc); the
    # first stage is in both branches.
    assert len(widths) >= 5 and set(widths) == {"8"}


# Output widths of the 7×7 stride-3 convolution from 2 (narrower than a strip) up, of the
# others from 10; rows past 64 with a batch of 3 and 4.
SIZES = [(1, 19, 19, 0.5), (2, 40, 48, -0.5), (1, 21, 23, 0.5), (3, 65, 40, -0.5),
         (4, 100, 33, 0.5), (2, 160, 160, -0.5), (1, 131, 19, 0.5), (4, 27, 97, -0.5)]


def _input(n, h, w, shift):
    torch.manual_seed(n * h + w)
    return torch.randn(n, 3, h, w) + shift


@pytest.mark.parametrize("n, h, w, shift", SIZES)
def test_matches_eager_at_every_size(compiled, n, h, w, shift):
    model, module, _ = compiled
    x = _input(n, h, w, shift)
    with torch.no_grad():
        torch.testing.assert_close(module(x), model(x), rtol=1e-4, atol=1e-4)


def test_the_sizes_take_both_exits():
    assert {bool(_input(*size).mean() > 0) for size in SIZES} == {True, False}
