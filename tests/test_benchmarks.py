"""The benchmark runner and the tracing baseline, on small cases (the full suite is
`python -m benchmarks`, marked slow here)."""

import sys
from pathlib import Path

import pytest
import rewrite_models as rm
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import dync  # noqa: E402
from benchmarks import runner, tracing  # noqa: E402


def test_runner_row_and_markdown(tmp_path):
    rows = runner.run(["resnet_static"], count=3, with_tracing=False, output=tmp_path / "B.md",
                      say=lambda _: None)
    (row,) = rows
    assert not row.error, row.error
    assert row.eta == 0.0 and row.delta <= -4 and row.paths == 1 and row.mode == "in-graph"
    assert row.eager_ms > 0 and row.dync_ms > 0
    assert row.rdp["unknown"] == 0 and row.rdp["static"] > 0 and row.rdp["symbolic"] > 0
    assert row.dispatches > 0 and row.baseline_dispatches > 0 and row.baseline_ms > 0
    text = (tmp_path / "B.md").read_text()
    assert "| resnet_static | in-graph |" in text
    assert "## dync's passes" in text and "| resnet_static | " in text.split("## dync's passes")[1]


def test_tracing_freezes_one_path_and_gets_decisions_wrong():
    """What dync removes: the traced module is wrong on inputs taking another exit."""
    torch.manual_seed(0)
    model = rm.EarlyExit().eval()
    gen = torch.Generator().manual_seed(1)
    inputs = [torch.randn(1, 8, generator=gen) * s for s in (0.1, 3.0) * 20]
    traced = tracing.trace_compile(model, (inputs[0],))
    assert dync.verify(model, traced, inputs).eta > 0
    compiled = dync.compile(model, (inputs[0],))
    assert dync.verify(model, compiled, inputs).eta == 0


@pytest.mark.slow
def test_whole_suite(tmp_path):
    rows = runner.run(count=100, output=tmp_path / "BENCHMARKS.md")
    assert all(r.eta == 0 for r in rows if not r.error)
