"""The benchmark runner and the tracing baseline, on small cases (the full suite is
`python -m benchmarks`, marked slow here)."""

import sys
from pathlib import Path

import pytest
import rewrite_models as rm
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import dync  # noqa: E402
from benchmarks import baselines, runner, tracing  # noqa: E402


def test_runner_row_and_markdown(tmp_path):
    rows = runner.run(["resnet_static"], count=3, with_tracing=False, with_baselines=(),
                      output=tmp_path / "B.md", plot=None, say=lambda _: None)
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


def _early_exit_and_inputs():
    """Small inputs leave at the last exit, large ones at the first (threshold 0.3)."""
    torch.manual_seed(0)
    model = rm.EarlyExit(threshold=0.3).eval()
    gen = torch.Generator().manual_seed(1)
    inputs = [(torch.randn(1, 8, generator=gen) * s,) for s in (0.1, 3.0) * 5]
    with torch.no_grad():
        reference = [_decision(model(*a)) for a in inputs]
    return model, inputs, reference


def _decision(output):
    """The outputs to 2 decimals: another exit gives other values (often the same argmax)."""
    return tuple(round(v, 2) for v in output.flatten().tolist())


def test_torch_compile_baseline_stays_correct_through_graph_breaks():
    model, inputs, reference = _early_exit_and_inputs()
    contestant = baselines.prepare_torch_compile(model, _decision, inputs, reference)
    assert not contestant.error, contestant.error
    assert contestant.eta == 0.0 and contestant.fn is not None


def test_onnxruntime_baseline_says_when_the_export_froze_a_path():
    """The TorchScript exporter traces one exit; ORT then answers wrongly on the other."""
    model, inputs, reference = _early_exit_and_inputs()
    contestant = baselines.prepare_onnxruntime(model, inputs[0], None, _decision, inputs,
                                               reference, threads=1)
    assert not contestant.error, contestant.error
    assert contestant.frozen and 0 < contestant.eta < 1


@pytest.mark.slow
def test_whole_suite(tmp_path):
    rows = runner.run(count=100, output=tmp_path / "BENCHMARKS.md")
    assert all(r.eta == 0 for r in rows if not r.error)
