"""dync-patch-stages (patch-based inference): a CNN whose first convolutions make the peak
computes them strip by strip, agrees with eager, and needs less memory than the same model
compiled without the pass, as dync-plan-buffers predicts."""

import sys
from pathlib import Path

import pytest
import torch
from torch import nn

import dync
from dync.passes import DEFAULT_PIPELINE

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.memory import eager_peak_intermediates, measure_dync  # noqa: E402


class Stem(nn.Module):
    """Two stride-2 convolutions over a 32 x 32 image, then a small head: the stem's
    activations are the peak."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, stride=2, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, stride=2, padding=1)
        self.conv3 = nn.Conv2d(32, 32, 3, stride=2, padding=1)
        self.head = nn.Linear(32, 10)

    def forward(self, x):
        x = torch.relu(self.conv2(torch.relu(self.conv1(x))))
        return self.head(torch.relu(self.conv3(x)).mean((2, 3)))


@pytest.fixture(scope="module")
def stem():
    torch.manual_seed(0)
    model = Stem().eval()
    example = (torch.randn(1, 3, 32, 32),)
    patched = dync.compile(model, example, cache=False)
    whole = dync.compile(model, example, cache=False,
                         passes=tuple(p for p in DEFAULT_PIPELINE if p != "dync-patch-stages"))
    return model, patched, whole


def test_strips_agree_with_eager(stem):
    model, patched, _ = stem
    for seed in range(3):
        x = torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(seed))
        torch.testing.assert_close(patched(x), model(x), rtol=1e-5, atol=1e-5)


def test_strips_lower_the_measured_peak_below_eager_as_predicted(stem):
    model, patched, whole = stem
    x = (torch.randn(1, 3, 32, 32),)
    with_pass, without = measure_dync(patched, x).peak, measure_dync(whole, x).peak
    # Without the pass the NHWC copy of the input sits beside conv1's output, above eager.
    assert with_pass < without
    assert with_pass <= eager_peak_intermediates(model, x)
    predicted = int(patched.report.peak["iree"])
    assert abs(predicted - with_pass) <= 0.1 * with_pass
