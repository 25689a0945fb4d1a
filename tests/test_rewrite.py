"""Unmodified forwards with data-dependent Python control flow compile whole (DyCL rewriting)."""

import collections

import pytest
import rewrite_models as rm
import torch
from torch.export import Dim

import dync
from dync.frontends.pytorch.rewrite import record_branches, rewritten

BATCH = Dim("batch", min=1, max=16)


def _compile(model, example=None, dynamic=True, mode="auto"):
    example = example if example is not None else torch.randn(2, 8)
    return dync.compile(model, (example,), dynamic_shapes=({0: BATCH},) if dynamic else None,
                        mode=mode)


def _paths(model, inputs):
    """The branch decisions eager execution of the rewritten forward takes per input."""
    paths = []
    with rewritten(model):
        for x in inputs:
            with record_branches() as trace:
                model(x)
            paths.append(tuple(decision for _, decision in trace))
    return paths


def _check(model, compiled, inputs):
    for x in inputs:
        got, want = compiled(x), model(x)
        got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
        for g, w in zip(got, want, strict=True):
            if not isinstance(w, torch.Tensor):  # a number the forward returns, as in eager
                assert type(g) is type(w) and g == pytest.approx(w, rel=1e-4), (g, w)
                continue
            torch.testing.assert_close(g.to(w.dtype), w, rtol=1e-4, atol=1e-5)


def _inputs(n, scales=(0.1, 0.5, 1.0, 3.0, -0.5, -3.0), batch=(1, 3, 8)):
    gen = torch.Generator().manual_seed(0)
    return [torch.randn(batch[i % len(batch)], 8, generator=gen) * scales[i % len(scales)]
            for i in range(n)]


@pytest.fixture(scope="module", params=["PlainIf", "TransposeInOneBranch", "EarlyExit", "GatedBlocks", "WhileNotDone",
                        "NestedIfs", "AppendInLoop", "StaticHelpers"])
def case(request):
    torch.manual_seed(0)
    model = getattr(rm, request.param)().eval()
    return request.param, model, _compile(model)


def test_rewritten_model_matches_eager_on_every_path(case):
    name, model, compiled = case
    inputs = _inputs(60)
    _check(model, compiled, inputs)
    paths = collections.Counter(_paths(model, inputs))
    assert len(paths) >= 2, f"{name}: inputs exercised only {paths}"
    assert compiled.report.rewritten, "the forward was rewritten"


def test_a_module_list_indexed_at_run_time_is_one_graph():
    """`experts[r.argmax().item()](x)`: a `cond` per expert in one graph (it ran in eager),
    every expert taken by some input, as eager."""
    torch.manual_seed(0)
    model = rm.RoutedToOneExpert().eval()
    compiled = _compile(model, mode="graph")
    inputs = [x * 3 for x in _inputs(40)]
    _check(model, compiled, inputs)
    assert {model(x)[1] for x in inputs} == {0, 1, 2, 3}


def test_early_exit_takes_every_exit():
    torch.manual_seed(0)
    model = rm.EarlyExit().eval()
    exits = set()
    with rewritten(model):
        for x in _inputs(60):
            with record_branches() as trace:
                model(x)
            exits.add(sum(1 for site, taken in trace if site.endswith(":34") and taken is False))
    assert len(exits) >= 3, exits


def test_rewritten_source_is_readable_and_kept():
    compiled = _compile(rm.PlainIf().eval())
    source = compiled.report.rewritten["PlainIf.forward"]
    assert "__dync__.if_(" in source and "def __dync_then_" in source


def test_growing_loop_names_the_source_line():
    with pytest.raises(dync.UnsupportedConstructError) as info:
        _compile(rm.GrowingLoop().eval(), mode="graph")
    assert info.value.source.endswith(f"rewrite_models.py:{_line_of('the line the error must name')}")
    assert "shape" in str(info.value)


def _line_of(marker: str) -> int:
    lines = open(rm.__file__).read().splitlines()
    return next(i + 1 for i, line in enumerate(lines) if marker in line)


def test_verify_reports_eta_delta_and_paths():
    torch.manual_seed(0)
    model = rm.EarlyExit().eval()
    compiled = _compile(model)
    report = dync.verify(model, compiled, _inputs(40))
    assert report.eta == 0.0 and report.delta <= -4
    assert report.paths >= 3
    assert len(report.results) == 40 and all(r.path for r in report.results)
    assert "eta = 0.000" in str(report)


def test_verify_detects_a_frozen_path():
    """A compiled module that always takes one exit disagrees on inputs taking another."""
    torch.manual_seed(0)
    model = rm.EarlyExit().eval()
    frozen = lambda x: model.exits[0](torch.relu(model.blocks[0](x)))  # noqa: E731
    report = dync.verify(model, frozen, _inputs(40))
    assert report.eta > 0 and report.delta > -4


def test_verify_counts_a_nan_on_one_side_as_an_infinite_error():
    """NaN compares false with everything: a compiled module that returns NaN must not pass
    as exact (δ = -10)."""
    torch.manual_seed(0)
    model = rm.EarlyExit().eval()
    nan = lambda x: torch.full_like(model(x), float("nan"))  # noqa: E731
    report = dync.verify(model, nan, _inputs(4))
    assert report.delta == float("inf")
    broken = rm.EarlyExit().eval()
    for p in broken.parameters():
        p.data.fill_(float("nan"))
    assert dync.verify(broken, nan, _inputs(4)).delta == -10  # NaN where eager has NaN


def test_list_appended_in_a_data_dependent_while_is_refused_with_its_line():
    with pytest.raises(dync.UnsupportedConstructError, match="list appended in a data-dependent while") as info:
        _compile(rm.AppendInWhile().eval(), mode="graph")
    assert info.value.source.endswith(f"rewrite_models.py:{_line_of('the list error must name')}")
    assert "while i < n: ...; i += 1" in str(info.value)  # the bound it can be given


# Trips of the first four inputs: a break at the first trip, a later one (CountedWhileToASize's
# bound for one row is 4 trips: it runs to it), to the bound (6; 8 of 19 for 16 rows).
@pytest.mark.parametrize("name, trips", [("CountedWhile", [1, 5, 6, 6]),
                                         ("CountedWhileToASize", [1, 4, 6, 8])])
def test_a_list_appended_in_a_counted_while_is_a_bounded_buffer(name, trips):
    """`while steps < limit` with `steps += 1` on every trip bounds a loop that breaks on
    data: one graph, right where it breaks at the first trip, later, or runs to the bound."""
    torch.manual_seed(0)
    model = getattr(rm, name)().eval()
    compiled = _compile(model, mode="graph")
    inputs = [torch.randn(b, 8) * 0.1 + mean for b, mean in
              [(2, 1.6), (1, -10.0), (3, -100.0), (16, -100.0), (5, 0.0), (1, -1000.0)]]
    _check(model, compiled, inputs)
    assert [model(x).shape[1] for x in inputs[:4]] == trips


def test_a_tensor_grown_in_a_counted_while_is_a_bounded_buffer():
    """`ys = torch.cat([ys, token], 1)` in a counted `while` (it had been refused: a loop that
    grows a tensor needs a bound): equal to eager where it ends at the first trip, later, and
    at the bound (7 columns)."""
    torch.manual_seed(5)  # weights under which decodes end at all three
    model = rm.CountedWhileGrowsATensor().eval()
    compiled = _compile(model, mode="graph")
    gen = torch.Generator().manual_seed(0)
    inputs = [torch.randn(1 + i % 3, 8, generator=gen) * (0.3 + i / 10) for i in range(40)]
    for x in inputs:
        torch.testing.assert_close(compiled(x), model(x), rtol=0, atol=0)
    assert {model(x).shape[1] for x in inputs} == {2, 5, 7}


def test_a_continue_in_a_counted_while_leaves_it_unbounded():
    with pytest.raises(dync.UnsupportedConstructError, match="list appended in a data-dependent while") as info:
        _compile(rm.CountedWhileWithContinue().eval(), mode="graph")
    assert info.value.source.endswith(
        f"rewrite_models.py:{_line_of('the counted-loop error must name')}")


def test_decoding_over_a_symbolic_range_with_a_gru_encoder():
    """A GRU over a dynamic sequence length runs as a loop; `for _ in range(len + 2)` with
    `break` is a bounded `while_loop`; the decoded list is a bounded buffer."""
    torch.manual_seed(5)  # weights under which some decodes end early, others run to the bound
    model = rm.DecodeUntilEnd().eval()
    seq = Dim("seq", min=1, max=12)
    compiled = dync.compile(model, (torch.randn(1, 5, 8),), dynamic_shapes=({1: seq},))
    gen = torch.Generator().manual_seed(0)
    inputs = [torch.randn(1, t, 8, generator=gen) * s for t in (1, 4, 12) for s in (0.3, 1.0, 3.0)]
    lengths = {len(model(x)) for x in inputs}
    assert 1 in lengths and 14 in lengths, lengths  # ended on the token, and at the bound
    _check(model, compiled, inputs)


def test_a_long_loop_over_a_constant_range_is_exported_as_a_loop():
    """`for _ in range(self.steps)` with `break` and a constant 100 steps is one `while_loop`
    (unrolled, it was a 100-deep chain of branches: host mode, 70 s to compile); at
    `LONG_LOOP` steps or fewer the trace unrolls it, as before."""
    from dync.frontends.pytorch.rewrite.runtime import LONG_LOOP

    for steps, loops in ((100, 1), (LONG_LOOP, 0)):
        model = rm.DecodeOverAConstantRange(steps).eval()
        with torch.no_grad(), rewritten(model):
            program = torch.export.export(model, (torch.randn(2, 8),),
                                          dynamic_shapes=({0: BATCH},))
        found = [n for n in program.graph.nodes if n.target is torch.ops.higher_order.while_loop]
        assert len(found) == loops, (steps, program.graph)


def test_decoding_into_a_growing_tensor_is_one_graph():
    """The tokens kept in a tensor that `torch.cat` grows by one each step, in a `for` over a
    symbolic range with `break`: one graph, the tensor a bounded buffer; decodes end on the
    token, in the middle, and at the bound."""
    torch.manual_seed(26)  # weights under which decodes end at each of those
    model = rm.DecodeIntoTensor().eval()
    seq = Dim("seq", min=1, max=12)
    compiled = dync.compile(model, (torch.randn(1, 5, 8),), dynamic_shapes=({1: seq},),
                            mode="graph")
    gen = torch.Generator().manual_seed(0)
    inputs = [torch.randn(1, t, 8, generator=gen) * s for t in (1, 4, 12) for s in (0.3, 1.0, 3.0)]
    with torch.no_grad():
        lengths = {model(x).shape[1] for x in inputs}
    assert {2, 3, 4, 15} <= lengths, lengths
    _check(model, compiled, inputs)
    assert compiled.report.mode == "in-graph"


@pytest.mark.parametrize("name", ["EarlyExit", "GatedBlocks", "AppendInLoop"])
def test_compiled_branch_trace_matches_eager(name):
    """`trace_branches=True`: the compiled module reports the decisions it took; verify puts
    them beside eager's, input by input."""
    torch.manual_seed(0)
    model = getattr(rm, name)().eval()
    compiled = dync.compile(model, (torch.randn(2, 8),), dynamic_shapes=({0: BATCH},),
                            trace_branches=True)
    report = dync.verify(model, compiled, _inputs(30))
    assert report.eta == 0 and report.path_mismatches == 0, report
    assert all(r.compiled_path for r in report.results)
    assert "compiled branch trace differs on 0" in str(report)


def test_compiled_branch_trace_exposes_a_frozen_path():
    """The same trace from a module whose path was frozen (the tracing baseline) differs from
    eager's on the inputs that take another exit: the check can fail."""
    from dync.frontends.pytorch.rewrite import replay_branches

    torch.manual_seed(0)
    model = rm.EarlyExit().eval()
    example = torch.randn(2, 8) * 0.1
    with torch.no_grad(), rewritten(model), record_branches() as trace:
        model(example)
    with replay_branches([taken for _, taken in trace]):
        frozen = dync.compile(model, (example,), dynamic_shapes=({0: BATCH},), mode="graph",
                              trace_branches=True)
    report = dync.verify(model, frozen, _inputs(30))
    assert report.path_mismatches > 0
