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

# The default pipeline with dync-im2col's strips left out, on every CPU: on AVX2 they turn the
# stem's 16- and 32-channel convolutions into matmuls before dync-patch-stages sees them (on
# AVX-512 they leave them direct), and what is tested here is the strips of convolutions.
PIPELINE = tuple("dync-im2col-within-filter" if p == "dync-im2col" else p
                 for p in DEFAULT_PIPELINE)
WITHOUT = tuple(p for p in PIPELINE if p != "dync-patch-stages")


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
    patched = dync.compile(model, example, cache=False, passes=PIPELINE)
    whole = dync.compile(model, example, cache=False, passes=WITHOUT)
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


def test_a_bucket_gathers_its_strips_from_the_unpadded_argument(tmp_path):
    """A size bucket pads its argument itself; the strips read the argument's rows directly
    (zeros past its true size: on a 16-row image, the last strip lies wholly in the
    padding), so neither the padded image nor a host copy exists, and the call peaks below
    the same bucket without strips. Sides are multiples of 8, so that no convolution of the
    stage reads a padded row and the padding lasts through it."""
    from torch.export import Dim

    torch.manual_seed(0)
    model = Stem().eval()
    h8, w8 = Dim("h8", min=2, max=4), Dim("w8", min=2, max=4)
    options = dict(dynamic_shapes=({2: 8 * h8, 3: 8 * w8},), buckets={"h8": [4], "w8": [4]},
                   cache=False)
    example = (torch.randn(1, 3, 24, 24),)
    dump = tmp_path / "ir.mlir"
    patched = dync.compile(model, example, dump_ir=dump, passes=PIPELINE, **options)
    whole = dync.compile(model, example, passes=WITHOUT, **options)
    assert "torch.aten.index.Tensor_hacked_twin" in dump.read_text()
    for h, w in [(16, 16), (16, 24), (24, 32), (32, 32)]:
        x = (torch.randn(1, 3, h, w, generator=torch.Generator().manual_seed(h * w)),)
        chosen = patched.versions.choose(patched.signature.check_inputs([x[0].numpy()]))
        assert chosen.function == "main__bucket__h8_4__w8_4"
        torch.testing.assert_close(patched(*x), model(*x), rtol=1e-5, atol=1e-5)
    x = (torch.randn(1, 3, 24, 32),)
    assert measure_dync(patched, x).peak < measure_dync(whole, x).peak
