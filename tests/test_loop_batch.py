"""`dync-loop-batch`: a CNN whose samples are independent runs one sample at a time and
computes what eager does at every batch size, its peak no longer grows with the batch; one
whose samples meet keeps the whole batch (the lit file pins the IR itself)."""

import sys
from pathlib import Path

import pytest
import torch
from torch.export import Dim

import dync
from dync.passes import DEFAULT_PIPELINE

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.memory import measure_dync  # noqa: E402
from tests.models import SmallResNet  # noqa: E402

WITHOUT = tuple(p for p in DEFAULT_PIPELINE if p != "dync-loop-batch")
BATCHES = (1, 2, 3, 4)


def _compile(couple: bool, passes=None, cache=True):
    torch.manual_seed(0)
    model = SmallResNet(couple).eval()
    batch = Dim("batch", min=1, max=8)
    return model, dync.compile(model, (torch.randn(2, 3, 16, 16),),
                               dynamic_shapes=({0: batch},), passes=passes, cache=cache)


@pytest.fixture(scope="module")
def independent():
    model, looped = _compile(False)
    _, whole = _compile(False, WITHOUT)
    return model, looped, whole


def _x(batch: int) -> torch.Tensor:
    return torch.randn(batch, 3, 16, 16, generator=torch.Generator().manual_seed(batch))


def test_runs_per_sample_and_matches_eager(independent):
    model, looped, whole = independent
    assert [s.get("per_sample") for s in looped.report.subdnns] == ["batch"]
    assert "per sample of batch" in str(looped.report)
    for batch in BATCHES:
        with torch.no_grad():
            expected = model(_x(batch))
        for module in (looped, whole):
            torch.testing.assert_close(module(_x(batch)), expected, rtol=1e-4, atol=1e-5)


def test_peak_does_not_grow_with_the_batch(independent):
    _, looped, whole = independent
    peaks = {b: measure_dync(looped, (_x(b),)).peak for b in (1, 4)}
    # the results (5 floats a sample) are all that grows
    assert peaks[4] - peaks[1] < 1024, peaks
    assert peaks[4] < measure_dync(whole, (_x(4),)).peak / 2


def _keeps_the_batch_and_matches_eager(model, compiled) -> None:
    assert not any(s.get("per_sample") for s in compiled.report.subdnns)
    for batch in (1, 3):
        with torch.no_grad():
            expected = model(_x(batch))
        torch.testing.assert_close(compiled(_x(batch)), expected, rtol=1e-4, atol=1e-5)


def test_samples_that_meet_keep_the_batch():
    _keeps_the_batch_and_matches_eager(*_compile(True))


def test_a_sub_dnn_with_large_weights_keeps_the_batch(monkeypatch):
    from dync.passes import loop_batch

    weights = sum(p.numel() * 4 for p in SmallResNet(False).parameters())
    monkeypatch.setattr(loop_batch, "MAX_WEIGHT_BYTES", weights // 2)
    # not from the compile cache: the same model was compiled under the default limit
    _keeps_the_batch_and_matches_eager(*_compile(False, cache=False))
