"""`mode="auto"` never gives up on a program that runs in eager: a failure injected at each stage
(export, dync's passes, IREE, the first call) of the whole graph falls back to host mode, of a
sub-DNN to running it as Python, of everything to eager PyTorch; each is in the report with
its stage and reason, and the results stay those of eager PyTorch on every path."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn
from torch.export import Dim

import dync
from dync import api
from dync.backend import CompilerSession
from dync.dialects.dync_ir import read_flags
from dync.errors import CompilationError
from dync.frontends.pytorch import export
from dync.frontends.pytorch.rewrite import runtime


class Gated(nn.Module):
    """Two linear layers with a data-dependent branch between them (in-graph: a cond)."""

    def __init__(self):
        super().__init__()
        self.body = nn.Linear(8, 8)
        self.head = nn.Linear(8, 4)

    def forward(self, x):
        h = torch.relu(self.body(x))
        if h.mean() > 0.3:
            h = h * 2.0
        return self.head(h)


class Stepper(nn.Module):
    """A branch inside a submodule: host mode captures `step` as a sub-DNN with a cond."""

    def forward(self, h):
        if h.sum() > 0:
            return h * 2.0
        return h - 1.0


class Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(8, 8)
        self.step = Stepper()

    def forward(self, x):
        return self.step(self.body(x))


def _model(cls=Gated) -> nn.Module:
    torch.manual_seed(0)
    return cls().eval()


def _inputs() -> list[torch.Tensor]:
    torch.manual_seed(1)
    return [scale * torch.randn(batch, 8) for batch in (2, 5) for scale in (0.1, 3.0, -3.0)]


def _compile(model, **options):
    options.setdefault("eager_if_faster", False)  # tiny sub-DNNs stay compiled
    return dync.compile(model, (torch.randn(4, 8),),
                        dynamic_shapes=({0: torch.export.Dim("batch", min=1, max=64)},),
                        cache=False, **options)


def _assert_matches_eager(model, compiled) -> None:
    taken = set()
    for x in _inputs():
        with torch.no_grad():
            want = model(x)
            taken.add(bool(torch.relu(model.body(x)).mean() > 0.3)
                      if isinstance(model, Gated) else bool(model.body(x).sum() > 0))
        torch.testing.assert_close(compiled(x), want, rtol=1e-4, atol=1e-5)
    assert taken == {True, False}, "the inputs must take both branches"


def _break(compiled, region: str) -> dict:
    breaks = {b["region"]: b for b in compiled.report.graph_breaks}
    assert region in breaks, compiled.report.explain()
    return breaks[region]


def _is_main(module) -> bool:
    return "func.func @main(" in str(module)


def _names(name: str):
    return lambda module: f"func.func @{name}(" in str(module)


# --- injected failures -------------------------------------------------------------------------

def _fail_export(monkeypatch, fails) -> None:
    original = export._quiet_export

    def quiet_export(model, args, dynamic_shapes):
        if fails(model):
            raise RuntimeError("injected failure in torch.export")
        return original(model, args, dynamic_shapes)

    monkeypatch.setattr(export, "_quiet_export", quiet_export)


def _fail_passes(monkeypatch, fails) -> None:
    original = api.graph.run_pipeline

    def run_pipeline(module, steps):
        if fails(module):
            raise KeyError("injected failure in a dync pass")  # an internal bug, not a dync error
        return original(module, steps)

    for stage in (api.graph, api.host):   # where dync.compile runs the pass pipeline
        monkeypatch.setattr(stage, "run_pipeline", run_pipeline)


def _fail_iree(monkeypatch, fails) -> None:
    original = CompilerSession.compile

    def compile(self, module):
        if fails(module):
            raise CompilationError("IREE compilation failed: injected",
                                   [f'loc("{__file__}":1:1): error: injected failure in IREE'])
        return original(self, module)

    monkeypatch.setattr(CompilerSession, "compile", compile)


def _swap_branches(monkeypatch) -> None:
    """Each rewritten `if` takes its other branch: a compiled module that is wrong."""
    original_if = runtime.if_

    def negated(pred, true_fn, false_fn, names, values, site, returned_if_false=False):
        if returned_if_false:
            return original_if(pred, true_fn, false_fn, names, values, site, True)
        return original_if(pred, false_fn, true_fn, names, values, site)

    monkeypatch.setattr(runtime, "if_", negated)


# --- the whole graph falls back to host mode ---------------------------------------------------

def _inject(monkeypatch, stage: str, fails) -> None:
    """A failure at `stage` of the modules (or, at import, the models) `fails` picks; at the
    first call, a wrong result (every rewritten `if` swapped)."""
    {"import": _fail_export, "passes": _fail_passes, "iree": _fail_iree,
     "first call": lambda monkeypatch, _: _swap_branches(monkeypatch)}[stage](monkeypatch, fails)


@pytest.mark.parametrize("stage", ["import", "passes", "iree", "first call"])
def test_a_failing_graph_falls_back_to_host_mode(monkeypatch, stage):
    model = _model()
    _inject(monkeypatch, stage, (lambda m: isinstance(m, Gated)) if stage == "import" else _is_main)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compiled = _compile(model)
    assert compiled.report.mode == "host", compiled.report.explain()
    # What dync accepted and then failed on is said at once; an unsupported construct is not.
    said = [w for w in caught if issubclass(w.category, RuntimeWarning)
            and str(w.message).startswith("dync: forward")]
    assert len(said) == (stage != "import"), [str(w.message) for w in said]
    if said:
        assert f"failed at stage {stage} and runs in eager PyTorch (mode host)" \
            in str(said[0].message)
        assert said[0].filename == __file__  # points at the dync.compile call
    graph_break = _break(compiled, "forward")
    assert graph_break["stage"] == stage
    assert {"import": "torch.export", "passes": "KeyError", "iree": "injected",
            "first call": "disagrees with eager"}[stage] in graph_break["reason"]
    _assert_matches_eager(model, compiled)
    assert all(stats["compiled"] > 0 for stats in compiled.stats.values()), compiled.stats
    text = compiled.report.explain()
    assert f"stage:     {stage}" in text and "forward runs as Python" in text


@pytest.mark.parametrize("stage", ["import", "passes", "iree"])
def test_graph_mode_refuses_naming_the_stage(monkeypatch, stage):
    _inject(monkeypatch, stage, (lambda m: True) if stage == "import" else _is_main)
    with pytest.raises(dync.DyncError) as info:
        _compile(_model(), mode="graph")
    assert info.value.stage == stage


def test_a_wrong_graph_is_refused_in_graph_mode(monkeypatch):
    _swap_branches(monkeypatch)
    with pytest.raises(CompilationError, match="disagrees with eager PyTorch on the example"):
        _compile(_model(), mode="graph")


# --- a sub-DNN falls back to Python ------------------------------------------------------------

@pytest.mark.parametrize("stage", ["passes", "iree", "first call"])
def test_a_failing_subdnn_runs_as_python(monkeypatch, stage):
    model = _model(Outer)
    _inject(monkeypatch, stage, _names("subdnn_1"))  # body is captured first, then step
    compiled = _compile(model, mode="host")
    assert compiled.report.mode == "host"
    graph_break = _break(compiled, "step")
    assert graph_break["stage"] == stage
    assert [d["callable"] for d in compiled.report.subdnns] == ["body"]
    _assert_matches_eager(model, compiled)
    assert [s["compiled"] > 0 for s in compiled.stats.values()] == [True]


def test_with_nothing_left_to_compile_the_model_runs_in_eager(monkeypatch, tmp_path: Path):
    model = _model()
    _fail_export(monkeypatch, lambda m: True)
    compiled = _compile(model)
    assert compiled.report.mode == "eager"
    assert {b["region"] for b in compiled.report.graph_breaks} == {"forward", "body", "head"}
    assert "compiled: nothing: the model runs in eager PyTorch" in compiled.report.explain()
    _assert_matches_eager(model, compiled)
    with pytest.raises(dync.DyncError, match="nothing was compiled"):
        compiled.save(tmp_path / "m.vmfb")
    with pytest.raises(dync.DyncError, match="host mode found nothing to compile"):
        _compile(model, mode="host")


class HalfPrecisionHead(nn.Module):
    def forward(self, x):
        return x.to(torch.bfloat16) * 3, x.half()


def test_in_eager_numpy_calls_take_and_give_sixteen_bit_floats(monkeypatch):
    """Called with numpy arrays, a model in eager (or host mode) gives numpy arrays back, as
    graph mode does: a bfloat16 result as ml_dtypes' bfloat16 (`Tensor.numpy()` refuses it).
    Before, the arrays reached the model's own code, which failed on them."""
    import ml_dtypes

    _fail_export(monkeypatch, lambda m: True)
    compiled = dync.compile(HalfPrecisionHead(), (torch.randn(4, 8),), cache=False)
    assert compiled.report.mode == "eager"
    x = torch.randn(4, 8)
    brain, half = compiled(x.numpy())
    assert brain.dtype == ml_dtypes.bfloat16 and half.dtype == np.float16
    want = x.to(torch.bfloat16) * 3
    assert np.array_equal(brain.view(np.uint16), want.view(torch.uint16).numpy())
    with pytest.raises(dync.InputError, match="expected dtype float32, got bfloat16"):
        compiled(x.numpy().astype(ml_dtypes.bfloat16))


def test_the_first_call_check_leaves_the_model_unchanged():
    """Checking the first call runs the model in eager: a BatchNorm in training mode keeps its
    running statistics as they were."""
    model = nn.Sequential(nn.Linear(8, 8), nn.BatchNorm1d(8)).train()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    with pytest.warns(RuntimeWarning, match="in training mode: call model.eval()"):
        dync.compile(model, (torch.randn(4, 8),), cache=False)
    for key, value in model.state_dict().items():
        torch.testing.assert_close(value, before[key], rtol=0, atol=0)


class CountsItsCalls(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("calls", torch.zeros(()))

    def forward(self, x):
        self.calls += 1
        return x + self.calls


def test_an_in_place_write_of_a_buffer_is_refused():
    """torch.export returns the new value of a buffer written in place beside the results;
    the compiled module, which holds buffers as constants, cannot keep it. It is refused,
    naming the buffer; under auto the model runs in eager, writing as eager writes, and
    compiling leaves the example as it was (host mode's example call and the first-call
    check take copies)."""
    model = CountsItsCalls
    with pytest.raises(dync.UnsupportedConstructError, match="writes the buffer 'calls' in place"):
        dync.compile(model(), (torch.randn(4, 8),), mode="graph", cache=False)
    example = torch.randn(4, 8)
    before = example.clone()
    compiled = dync.compile(model(), (example,), cache=False)
    torch.testing.assert_close(example, before, rtol=0, atol=0)  # compiling writes nothing
    assert compiled.report.mode == "eager"
    assert compiled.report.graph_breaks[0]["construct"] == "in-place write of an input or buffer"
    x, reference = torch.randn(4, 8), model()
    twin = x.clone()
    torch.testing.assert_close(compiled(x), reference(twin))
    torch.testing.assert_close(x, twin)


class DecaysItsWeight(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(8))

    def forward(self, x):
        with torch.no_grad():
            self.weight.mul_(0.5)
        return x * self.weight


def test_an_in_place_write_of_a_parameter_is_refused():
    """As a buffer's: the compiled module returned the new weight in place of the result
    (the first-call check caught it)."""
    with pytest.raises(dync.UnsupportedConstructError,
                       match="writes the parameter 'weight' in place"):
        dync.compile(DecaysItsWeight(), (torch.randn(4, 8),), mode="graph", cache=False)
    model, reference = DecaysItsWeight(), DecaysItsWeight()
    compiled = dync.compile(model, (torch.randn(4, 8),), cache=False)
    assert compiled.report.graph_breaks[0]["construct"] == "in-place write of an input or buffer"
    x = torch.randn(4, 8)
    reference(x)  # the example call's write
    for _ in range(3):
        with torch.no_grad():
            torch.testing.assert_close(compiled(x), reference(x))


class ClampsItsSecondInput(nn.Module):
    def forward(self, x, y):
        y.clamp_(min=0)
        x.mul_(2)
        return x + y, (y * 3).sum()


def test_an_input_written_in_place_is_written_back(tmp_path):
    """A forward that writes its inputs in place (`y.clamp_(min=0)`, `x.mul_(2)`) compiles in
    one graph: the new values come first among the module's results, and after each call the
    runtime writes them into the caller's tensors (or arrays), as eager leaves them; so does a
    saved and loaded module. Compiling leaves the example as it was."""
    model = ClampsItsSecondInput()
    example = (torch.randn(3, 8), torch.randn(3, 8))
    before = [t.clone() for t in example]
    batch = Dim("batch", min=1, max=16)
    compiled = dync.compile(model, example, dynamic_shapes=({0: batch}, {0: batch}), cache=False)
    assert compiled.report.mode == "in-graph"
    assert sorted(i for _, i in compiled.signature.input_writes) == [0, 1]
    for kept, was in zip(example, before, strict=True):
        torch.testing.assert_close(kept, was, rtol=0, atol=0)
    path = compiled.save(tmp_path / "writes.vmfb")
    loaded = dync.load(path)
    for module in (compiled, loaded):
        for rows in (1, 5):
            args = (torch.randn(rows, 8), torch.randn(rows, 8))
            twins = [a.clone() for a in args]
            got, want = module(*args), model(*twins)
            torch.testing.assert_close(got, want)
            for written, eager in zip(args, twins, strict=True):
                torch.testing.assert_close(written, eager)
            arrays = [a.numpy().copy() for a in twins]
            got = module(*arrays)
            np.testing.assert_allclose(got[0], model(*twins)[0].numpy(), rtol=1e-6)
            for written, eager in zip(arrays, twins, strict=True):
                np.testing.assert_allclose(written, eager.numpy(), rtol=1e-6)
    frozen = np.zeros((2, 8), np.float32)
    frozen.flags.writeable = False
    with pytest.raises(dync.InputError, match="cannot be written"):
        compiled(np.zeros((2, 8), np.float32), frozen)


class WritesItsInputThenBranches(nn.Module):
    def __init__(self, write_in_branch: bool = False):
        super().__init__()
        self.write_in_branch = write_in_branch

    def forward(self, x):
        x.mul_(2)
        x += 1
        if x.sum() > 0:  # a branch on data: the import rewrites this forward
            if self.write_in_branch:
                x.add_(1)
            return x * 3
        return x - 1


@pytest.mark.parametrize("write_in_branch", [False, True])
def test_an_input_written_before_a_branch_is_written_back(write_in_branch):
    """Where the import rewrites a forward (a branch on data), its in-place statements outside
    the branch still write the caller's tensor, as eager does. One inside the branch is made
    on the branch's own value: the first-call check finds the caller's tensor would differ
    from eager's, and `auto` leaves the model to eager, which writes it."""
    model = WritesItsInputThenBranches(write_in_branch)
    compiled = dync.compile(model, (torch.ones(3, 4),), cache=False,
                            dynamic_shapes=({0: Dim("batch", min=1, max=8)},))
    assert compiled.report.mode == ("eager" if write_in_branch else "in-graph")
    for sign in (1.0, -1.0):
        x = torch.full((5, 4), sign)
        twin = x.clone()
        torch.testing.assert_close(compiled(x), model(twin))
        torch.testing.assert_close(x, twin)


@pytest.mark.parametrize("writes", [[[2, 0]], [[0, 0], [1, 0]], [[0]], "x", [[0, 1.5]]])
def test_malformed_input_writes_in_a_manifest_are_refused(writes):
    from dync.signature import Signature

    spec = {"name": "x", "dtype": "float32", "shape": [2]}
    data = {"inputs": [spec, {**spec, "name": "y"}], "outputs": [{**spec, "name": "o"}] * 2,
            "symbols": {}, "input_writes": writes}
    with pytest.raises(dync.ModuleFormatError):
        Signature.from_json(data)


class Noisy(nn.Module):
    def forward(self, x):
        return x + torch.rand_like(x)


def test_a_random_model_warns_that_its_first_call_cannot_be_checked():
    """A model whose results are random fails the first-call check: it runs in eager, and the
    warning names the option that compiles it."""
    with pytest.warns(RuntimeWarning, match="failed at stage first call.*check_first_call=False"):
        compiled = dync.compile(Noisy(), (torch.randn(4, 8),), cache=False)
    assert compiled.report.mode == "eager"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compiled = dync.compile(Noisy(), (torch.randn(4, 8),), cache=False,
                                check_first_call=False)
    assert compiled.report.mode == "in-graph"


class InfiniteResults(nn.Module):
    """Results with infinities where eager's are (a log of zero, a masked score)."""

    def forward(self, x):
        return torch.log(torch.relu(x)), x.masked_fill(x > 0.5, float("-inf"))


def test_the_first_call_check_takes_infinities_where_eager_has_them():
    """inf - inf is NaN: the check took equal infinities for a disagreement, and graph mode
    refused a right module."""
    model = InfiniteResults().eval()
    x = torch.randn(4, 8)
    compiled = dync.compile(model, (x,), mode="graph", cache=False)
    for got, want in zip(compiled(x), model(x), strict=True):
        torch.testing.assert_close(got, want)
    from dync.differential import disagreement

    got = [g.clone() for g in compiled(x)]
    got[0][x > 0] = float("-inf")
    assert "infinities" in disagreement(tuple(got), model(x))


def test_dync_explain_prints_each_graph_break(tmp_path: Path, capsys):
    source = tmp_path / "printing.py"
    source.write_text(
        "import torch\n"
        "class M(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.lin = torch.nn.Linear(8, 4)\n"
        "    def forward(self, x):\n"
        "        print('rows', x.shape[0])\n"
        "        return self.lin(x)\n"
        "def build():\n"
        "    return M().eval(), (torch.randn(2, 8),)\n")
    from dync import cli

    assert cli.main(["explain", f"{source}:build", "-q", "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "dync explain: mode " in out  # host, or eager: the Linear may be faster there
    assert "graph break 1: forward runs as Python" in out
    assert f"where:     {source}:7" in out
    assert "stage:     import" in out


# --- a later call fails in IREE ----------------------------------------------------------------

def _fail_at_run_time(monkeypatch, batch: int) -> None:
    """IREE fails every call on a batch of `batch` rows (the example has 4), as the VM bug of
    lit/upstream/iree-vm-branch-repeated-ref.mlir did on the inputs that took one path."""
    from dync.runtime.invoke import Function

    invoke, tensor_runner = Function._invoke, Function.tensor_runner

    def fail_on(values):
        if values and values[0].shape[:1] == (batch,):
            raise RuntimeError("injected: ref is null; while invoking native function "
                               "hal.buffer_view.create")

    def failing(self, arrays):
        fail_on(arrays)
        return invoke(self, arrays)

    def failing_runner(self, arrays, lock, count, nest, to_array, error):
        # The runtime's path for tensors of a shape seen before: IREE's error as it raises it.
        run = tensor_runner(self, arrays, lock, count, nest, to_array, error)

        def failing_run(tensors):
            try:
                fail_on(tensors)
            except RuntimeError as e:
                raise error(e) from e
            return run(tensors)

        return None if run is None else failing_run

    monkeypatch.setattr(Function, "_invoke", failing)
    monkeypatch.setattr(Function, "tensor_runner", failing_runner)


@pytest.mark.parametrize("host", [False, True], ids=["in-graph", "host"])
def test_a_call_failing_in_iree_runs_in_eager_under_auto(monkeypatch, host):
    model = _model(Outer if host else Gated)
    if host:
        _inject(monkeypatch, "iree", _is_main)
    compiled = _compile(model)
    assert compiled.report.mode == ("host" if host else "in-graph")
    _fail_at_run_time(monkeypatch, 5)
    with pytest.warns(RuntimeWarning, match="inputs of shape 5x8 ran in eager PyTorch.*injected"):
        _assert_matches_eager(model, compiled)
    assert compiled.run_time_fallbacks == 3  # the three batch-5 inputs
    assert sum("ran in eager PyTorch" in n for n in compiled.report.notes) == 3
    x = torch.randn(5, 8).numpy()  # numpy in, numpy out, as the module answers
    if not host:
        np.testing.assert_allclose(compiled(x), model(torch.from_numpy(x)).detach().numpy(),
                                   rtol=1e-4, atol=1e-5)


def test_a_call_failing_in_iree_raises_in_graph_mode(monkeypatch):
    compiled = _compile(_model(), mode="graph")
    _fail_at_run_time(monkeypatch, 5)
    compiled(torch.randn(4, 8))
    with pytest.raises(dync.ModuleRunError, match="failed at run time: injected"):
        compiled(torch.randn(5, 8))


class StackKept(nn.Module):
    """`torch.stack` of a list appended on a data-dependent path: a bounded buffer in the
    graph; eager refuses an empty list, and the graph asserts it is not empty."""

    def forward(self, x):
        kept = []
        for i in range(x.shape[0]):
            if x[i] > 0:
                kept.append(x[i] * 2)
        return torch.stack(kept) + 1


def test_a_broken_trace_assumption_runs_in_eager_without_a_warning():
    model = StackKept()
    compiled = dync.compile(model, (torch.tensor([1.0, -2.0, 3.0]),),
                            dynamic_shapes=({0: torch.export.Dim("n", min=1, max=16)},))
    assert compiled.report.mode == "in-graph"
    for values in ([1.0, -2.0, 3.0], [4.0], [-1.0, 5.0, 6.0, 7.0]):
        x = torch.tensor(values)
        torch.testing.assert_close(compiled(x), model(x))
    empty = torch.tensor([-1.0, -2.0])
    with pytest.raises(RuntimeError, match="non-empty"):  # what eager raises
        model(empty)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "please report it": no IREE failure
        with pytest.raises(RuntimeError, match="non-empty"):
            compiled(empty)
    assert compiled.run_time_fallbacks == 1
    assert "assumption of torch.export's trace" in compiled.report.notes[-1]
    compiled.fallback = None  # as under mode="graph"
    with pytest.raises(dync.TraceAssumptionError, match=r"u\d+ >= 1"):
        compiled(empty)


# --- IREE fails on one of the options dync's passes asked for -----------------------------------

class PaddedConvThenWideLinear(nn.Module):
    """A padded convolution over a static image (dync-fuse-padding, in the low-memory pipeline,
    asks for pad fusion) and a
    wide linear layer doing most of the work (dync-data-tiling asks for data tiling)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.head = nn.Linear(8 * 16 * 16, 512)

    def forward(self, x):
        return self.head(torch.relu(self.conv(x)).flatten(1))


def test_only_the_option_iree_fails_on_is_dropped(monkeypatch):
    """IREE failing with pad fusion (as it does beside data tiling on ResNet-50) costs pad
    fusion, not data tiling, which dync-data-tiling asked for first."""
    _fail_iree(monkeypatch, lambda module: any("fuse-padding" in f for f in read_flags(module)))
    torch.manual_seed(0)
    model = PaddedConvThenWideLinear().eval()
    x = torch.randn(1, 3, 16, 16)
    compiled = dync.compile(model, (x,), cache=False, passes=dync.passes.LOW_MEMORY_PIPELINE)
    flags = compiled.report.flags
    assert "--iree-opt-data-tiling" in flags and not any("fuse-padding" in f for f in flags)
    (note,) = [n for n in compiled.report.notes if "options dync's passes asked for" in n]
    assert "injected" in note and "kept --iree-opt-data-tiling" in note, note
    torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)


def test_options_are_dropped_after_branch_functions_are_inlined(monkeypatch):
    """IREE failing first on a call to a branch function, then, inlined, on an option dync
    asked for: the option is dropped as it would have been on the first attempt, data tiling
    asked for from global optimization instead."""
    calls = []

    def fails(module):
        calls.append(read_flags(module))
        if len(calls) == 1:
            raise CompilationError("IREE compilation failed: injected",
                                   ['error: "branch_0" does not reference a valid function'])
        return "--iree-opt-data-tiling" in read_flags(module)

    _fail_iree(monkeypatch, fails)
    torch.manual_seed(0)
    model = PaddedConvThenWideLinear().eval()
    x = torch.randn(1, 3, 16, 16)
    compiled = dync.compile(model, (x,), cache=False)
    notes = compiled.report.notes
    assert any("branch functions inlined" in n for n in notes), notes
    assert any("options dync's passes asked for" in n for n in notes), notes
    assert "--iree-opt-data-tiling" not in compiled.report.flags
    assert "--iree-global-opt-data-tiling" in compiled.report.flags
    torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)


def test_data_tiling_failing_from_dispatch_creation_is_asked_from_global_optimization(
        monkeypatch):
    _fail_iree(monkeypatch, lambda module: "--iree-opt-data-tiling" in read_flags(module))
    torch.manual_seed(0)
    model = PaddedConvThenWideLinear().eval()
    x = torch.randn(1, 3, 16, 16)
    compiled = dync.compile(model, (x,), cache=False)
    (note,) = [n for n in compiled.report.notes if "options dync's passes asked for" in n]
    assert "kept --iree-global-opt-data-tiling" in note, note
    torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)
