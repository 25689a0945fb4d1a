"""1-D convolutions as linear layers over windows (dync-conv1d-linear), against eager: every
kernel, stride, padding and dilation form the pass rewrites, over a dynamic batch and length,
in one compiled module; a grouped one (left to IREE) beside them."""

import pytest
import torch
from torch import nn
from torch.export import Dim


class Conv1dForms(nn.Module):
    def __init__(self):
        super().__init__()
        self.front = nn.Conv1d(6, 16, 5, padding=2)  # a speech front end: same length
        self.strided = nn.Conv1d(16, 16, 3, stride=2, padding=1)
        self.dilated = nn.Conv1d(16, 12, 3, dilation=3, padding=3, bias=False)
        self.valid = nn.Conv1d(12, 8, 4)  # no padding: L - 3 steps
        self.grouped = nn.Conv1d(8, 8, 3, padding=1, groups=2)
        self.pointwise = nn.Conv1d(8, 4, 1)

    def forward(self, x):
        h = torch.relu(self.front(x))
        h = torch.relu(self.strided(h))
        h = torch.tanh(self.dilated(h))
        h = self.valid(h)
        return self.pointwise(self.grouped(h) + h)


@pytest.fixture(scope="module")
def compiled():
    import dync

    torch.manual_seed(0)
    model = Conv1dForms().eval()
    spec = ({0: Dim("batch", min=1, max=8), 2: Dim("length", min=16, max=512)},)
    return model, dync.compile(model, (torch.randn(2, 6, 40),), dynamic_shapes=spec, cache=False)


@pytest.mark.parametrize("batch,length", [(2, 40), (1, 16), (3, 17), (8, 512), (5, 101)])
def test_every_form_matches_eager(compiled, batch, length):
    model, module = compiled
    torch.manual_seed(batch * 1000 + length)
    x = torch.randn(batch, 6, length)
    with torch.no_grad():
        want = model(x)
    got = module(x)
    assert got.shape == want.shape
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    assert module.report.mode == "in-graph", module.report.explain()
