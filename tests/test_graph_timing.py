"""mode="auto" times one graph against eager on its example and on the example grown along
its dynamic dims (`dync.api.timing`)."""

import pytest
import torch
from torch import nn
from torch.export import Dim

import dync
from dync.api import timing
from dync.api.timing import grown_example
from dync.signature import Signature, SymbolSpec, TensorSpec


def _signature(inputs, **symbols):
    return Signature(inputs=[TensorSpec(n, d, s) for n, d, s in inputs], outputs=[],
                     symbols={k: SymbolSpec(k, lo, hi) for k, (lo, hi) in symbols.items()})


def test_a_batch_grows_by_tiling_its_samples_within_its_maximum():
    signature = _signature([("x", "float32", ("b", 3)), ("ids", "int64", ("b", "2*s"))],
                           b=(1, 64), s=(1, 1))
    x, ids = torch.randn(2, 3), torch.arange(4).reshape(2, 2)
    (gx, gids), sizes = grown_example((x, ids), signature, 4.0)
    assert sizes == {"b": 8}
    assert gx.shape == (8, 3) and gids.shape == (8, 2)
    torch.testing.assert_close(gx, x.repeat(4, 1))
    torch.testing.assert_close(gids, ids.repeat(4, 1))
    signature.symbols["b"] = SymbolSpec("b", 1, 5)
    (gx, _), sizes = grown_example((x, ids), signature, 4.0)
    assert sizes == {"b": 5} and gx.shape == (5, 3)
    torch.testing.assert_close(gx[4], x[0])


def test_several_symbols_share_the_growth_and_derived_dims_follow():
    signature = _signature([("tokens", "int64", ("b", "s")), ("pairs", "float32", ("2*s", 4))],
                           b=(1, 16), s=(2, 512))
    tokens, pairs = torch.arange(6).reshape(1, 6), torch.randn(12, 4)
    grown, sizes = grown_example(({"tokens": tokens, "skip": None}, pairs), signature, 4.0)
    assert sizes == {"b": 2, "s": 12}
    assert grown[0]["skip"] is None
    assert grown[0]["tokens"].shape == (2, 12) and grown[1].shape == (24, 4)
    torch.testing.assert_close(grown[0]["tokens"][1, 6:], tokens[0])


@pytest.mark.parametrize("args, signature", [
    ((torch.randn(2, 3),), _signature([("x", "float32", (2, 3))])),
    ((torch.randn(64, 3),), _signature([("x", "float32", ("b", 3))], b=(1, 64))),
    ((torch.randn(2, 3), 4), _signature([("x", "float32", ("b", 3)), ("n", "int64", ())],
                                        b=(1, 64))),
    ((torch.randn(2, 4),), _signature([("x", "float32", ("b", 3))], b=(1, 64))),
], ids=["static", "at-its-maximum", "a-number-argument", "outside-the-signature"])
def test_nothing_grows(args, signature):
    assert grown_example(args, signature, 4.0) is None


class Scaled(nn.Module):
    def forward(self, x):
        return torch.tanh(x @ x.transpose(-1, -2)).sum(-1) * 2


def _timed_calls(monkeypatch, slower_on_grown: bool):
    """The shapes of each example `slower_than` times under dync.compile. Each timing runs,
    but its verdict is set: not slower on the example, slower on the grown one or not."""
    calls, real = [], timing.slower_than

    def spy(compiled, eager, examples, model, *rest):
        calls.append([tuple(a.shape for a in args) for args in examples])
        real(compiled, eager, examples, model, *rest)
        grown = len(calls) > 1
        return "eager PyTorch is faster on the example grown" if grown and slower_on_grown \
            else None

    monkeypatch.setattr(timing, "GRAPH_TIMING_FLOOR_S", 0.0)
    monkeypatch.setattr(timing, "slower_than", spy)
    return calls


@pytest.mark.parametrize("slower_on_grown", [False, True])
def test_one_graph_is_timed_on_its_example_grown_and_gives_way_where_slower_there(
        monkeypatch, slower_on_grown):
    """The graph is timed on the example (batch 2), then on it grown 4 times (batch 8, the
    declared maximum 6 caps it): slower there, it gives way to host mode, a graph break of
    stage "timing" naming the grown sizes; either way its outputs match eager."""
    calls = _timed_calls(monkeypatch, slower_on_grown)
    model, x = Scaled(), torch.randn(2, 16, 32)
    batch = Dim("batch", min=1, max=6)
    compiled = dync.compile(model, (x,), dynamic_shapes=({0: batch},), cache=False)
    assert calls[:2] == [[((2, 16, 32),)], [((6, 16, 32),)]]
    timed = [b for b in compiled.report.graph_breaks if b["stage"] == "timing"]
    assert bool(timed) == slower_on_grown
    assert (compiled.report.mode in ("host", "eager")) == slower_on_grown
    if timed:
        assert "grown" in timed[0]["reason"]
    for n in (1, 2, 5):
        y = torch.randn(n, 16, 32)
        torch.testing.assert_close(compiled(y), model(y), rtol=1e-4, atol=1e-4)


class Gated(nn.Module):
    """Host code (a branch on a value read back) between two calls of one block."""

    def __init__(self):
        super().__init__()
        self.block = nn.Sequential(nn.Linear(32, 64), nn.Tanh(), nn.Linear(64, 32))

    def forward(self, x):
        h = self.block(x)
        if h.sum().item() > 1e9:
            return h
        return self.block(h * 2)


@pytest.mark.parametrize("slower_on_grown", [False, True])
def test_host_mode_times_each_subdnn_on_its_calls_in_the_example_grown(
        monkeypatch, slower_on_grown):
    """Host mode times a sub-DNN on the calls the example made (batch 2), then (where eager
    takes GRAPH_TIMING_FLOOR_S a call, lowered here) on its calls in a run on the example
    grown (batch 6, the declared maximum): slower there, it runs as Python, a fallback of
    stage "timing" naming the grown sizes."""
    from dync.api import host

    calls, real = [], host.slower_than

    def spy(compiled, eager, examples, model, *rest, **named):
        calls.append([tuple(a.shape for a in args) for args in examples])
        real(compiled, eager, examples, model, *rest, **named)
        grown = "grown" in named.get("calls", "")
        return "eager PyTorch is faster on its calls grown" if grown and slower_on_grown \
            else None

    monkeypatch.setattr(host, "slower_than", spy)
    monkeypatch.setattr(timing, "GRAPH_TIMING_FLOOR_S", 0.0)
    torch.manual_seed(0)
    model, x = Gated().eval(), torch.randn(2, 32)
    compiled = dync.compile(model, (x,), dynamic_shapes=({0: Dim("batch", min=1, max=6)},),
                            mode="host", cache=False)
    assert calls == [[((2, 32),), ((2, 32),)], [((6, 32),), ((6, 32),)]]
    timed = [b for b in compiled.report.graph_breaks if b["stage"] == "timing"]
    assert bool(timed) == slower_on_grown, compiled.report.explain()
    assert not timed or "grown" in timed[0]["reason"]
    with torch.no_grad():
        for n in (1, 6):
            y = torch.randn(n, 32)
            torch.testing.assert_close(compiled(y), model(y), rtol=1e-4, atol=1e-5)
