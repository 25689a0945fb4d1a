"""`dync-plan-execution`: independent branches are run one after the other, the compiled module
computes what eager does on every size, and IREE's measured peak falls with the order (the
lit file pins the order itself)."""

import sys
from pathlib import Path

import pytest
import torch
from torch import nn
from torch.export import Dim

import dync
from dync.passes import DEFAULT_PIPELINE
from dync.passes.plan_buffers import Peak, symbol_values

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.memory import measure_dync  # noqa: E402

WITHOUT = tuple(p for p in DEFAULT_PIPELINE if p != "dync-plan-execution")


class TwoBranches(nn.Module):
    """Two wide temporaries, each reduced to 8 features: written branch by branch in the
    source, but in the order torch.export gives (both wide projections first). 32 input
    features keep the products narrow for `dync-data-tiling`, whose packed copies would add
    buffers of their own to the peak measured here."""

    def __init__(self):
        super().__init__()
        self.up1, self.up2 = nn.Linear(32, 1024), nn.Linear(32, 1024)
        self.down1, self.down2 = nn.Linear(1024, 8), nn.Linear(1024, 8)

    def forward(self, x):
        a = self.up1(x)
        b = self.up2(x)
        return torch.cat([self.down1(torch.relu(a)), self.down2(torch.tanh(b))], 1)


@pytest.fixture(scope="module")
def compiled():
    torch.manual_seed(0)
    model = TwoBranches().eval()
    example = (torch.randn(16, 32),)
    shapes = {"x": {0: Dim("n", min=1, max=256)}}
    return model, {label: dync.compile(model, example, dynamic_shapes=shapes, passes=passes)
                   for label, passes in (("with", DEFAULT_PIPELINE), ("without", WITHOUT))}


def test_branches_are_reordered_and_compute_what_eager_does(compiled):
    model, modules = compiled
    assert modules["with"].report.execution["reordered"] == 1
    assert "reordered" not in modules["without"].report.execution
    for n in (1, 37, 256):
        x = torch.randn(n, 32)
        with torch.no_grad():
            expected = model(x)
        for module in modules.values():
            torch.testing.assert_close(torch.as_tensor(module(x)), expected, rtol=1e-5,
                                       atol=1e-5)


def test_measured_peak_falls_to_one_branch_and_matches_the_prediction(compiled):
    """Without the plan IREE keeps both [n, 1024] temporaries alive; with it, one."""
    _, modules = compiled
    x = torch.randn(200, 32)
    with_plan = measure_dync(modules["with"], (x,)).peak
    without = measure_dync(modules["without"], (x,)).peak
    one, both = 200 * 1024 * 4, 2 * 200 * 1024 * 4
    assert with_plan < both <= without
    assert with_plan >= one
    predicted = Peak.from_report(modules["with"].report.peak).evaluate_iree(
        symbol_values(modules["with"].signature, (x,)))
    assert abs(predicted - with_plan) <= 0.1 * with_plan
