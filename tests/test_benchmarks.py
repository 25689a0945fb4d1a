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
    # Sections other commands wrote survive the run; the suite's own are rewritten.
    (tmp_path / "B.md").write_text("# Benchmarks\n\n## Models\n\nstale list\n\n"
                                   "## Kernels\n\nthe kernel table\n")
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
    assert "## Kernels\n\nthe kernel table" in text and "stale list" not in text


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
    assert [(r.name, r.error) for r in rows if r.error] == []  # a model that stops compiling fails
    assert all(r.eta == 0 for r in rows)
    assert [(r.name, r.cache) for r in rows if r.cache != "hit (model)"] == []


def _cuda_results(rows):
    return {"device": "NVIDIA H100 80GB HBM3", "date": "2026-11-22", "torch": "2.11.0+cu130",
            "iree_runtime": "3.13.0", "dync": dync.__version__, "python": "3.12.3",
            "target": "h100", "inputs": 100, "timing_inputs": 30, "repeats": 4, "rows": rows}


def test_cuda_section_is_rendered_and_kept_in_benchmarks_md(tmp_path):
    from benchmarks import gpu

    rows = [{"name": "a", "mode": "in-graph", "eta": 0.0, "delta": -5.0, "eager_ms": 2.0,
             "eager_resident_ms": 1.5, "dync_ms": 1.0, "nopasses_ms": 1.2, "dispatches": 3,
             "nopasses_dispatches": 4, "eager_peak": 2048, "dync_peak": 1024},
            {"name": "b", "mode": "host", "eta": 0.0, "delta": -6.0, "eager_ms": 1.0,
             "eager_resident_ms": 0.8, "dync_ms": 2.0, "nopasses_ms": None, "dispatches": 2,
             "nopasses_dispatches": None},
            {"name": "c", "error": "does not compile for CUDA: failed to distribute"}]
    results = tmp_path / "cuda.json"
    results.write_text(__import__("json").dumps(_cuda_results(rows)))
    section = gpu.section(_cuda_results(rows))
    assert "| a | in-graph | 0.000 | -5.00 | 2.00 | 1.50 | 1.20 | 1.00 | 2.00× | 3 / 4 | 2.0 | 1.0 |" \
        in section
    assert "| b | host |" in section and "| c | fails: does not compile" in section
    assert "eager PyTorch on the same GPU" in section
    assert "eager PyTorch on the CPU (that torch had no CUDA" in gpu.section(
        {**_cuda_results(rows), "eager_device": "cpu"})
    assert "**1.00×**" in section  # geo-mean of 2× and 0.5× over the two that ran
    # A section names the commit it measured; one without, or older than the code, is stale.
    from benchmarks import provenance

    assert "**Stale**: measured on commit unrecorded" in section
    now = provenance.commit()
    current = gpu.section({**_cuda_results(rows), "commit": now})
    assert f"on commit {now} " in current
    assert ("**Stale**" in current) == now.endswith("+changes")  # a clean checkout: current
    host = "# Benchmarks\n\n## Latency\n\nx\n\n## Models\n\n- a\n"
    once = gpu.with_section(host, results)
    assert once.index("## Models") < once.index(gpu.SECTION)
    # Rendering again replaces the section instead of adding a second one, and a section
    # followed by another keeps what follows.
    assert gpu.with_section(once, results) == once
    moved = once.replace("## Models\n\n- a\n", "") + "\n## Later\n\nkept\n"
    again = gpu.with_section(moved, results)
    assert again.count(gpu.SECTION) == 1 and again.endswith("## Later\n\nkept\n")
    assert gpu.with_section(host, tmp_path / "none.json") == host


@pytest.mark.gpu
def test_gpu_benchmark_checks_a_suite_model_against_eager(tmp_path):
    """On the GPU, against eager on the GPU where torch has CUDA, else on the CPU."""
    from benchmarks import gpu

    gpu.compile_suite(tmp_path, "h100", ["shallow_deep"], say=lambda _: None)
    row = gpu.run_model(tmp_path, "shallow_deep", count=12, timing_inputs=4, repeats=1,
                        say=lambda _: None)
    assert "error" not in row, row
    assert row["eta"] == 0.0 and row["delta"] <= -4
    assert row["dync_ms"] > 0 and row["eager_ms"] > 0 and row["dync_peak"] > 0


def test_call_floor_benchmark_times_the_compiled_paths(monkeypatch):
    """`python -m benchmarks calls` on a few calls: each step runs in host mode through its
    sub-DNN (never the Python fallback: `measure` raises then) and in-graph, and the table has
    a positive figure per contestant."""
    from benchmarks import calls
    from benchmarks.models._calls import steps

    monkeypatch.setattr(calls, "CALLS", 50)
    monkeypatch.setattr(calls, "ROUNDS", 2)
    rows = calls.measure(say=lambda _: None)
    assert [r.step for r in rows] == list(steps())
    for row in rows:
        assert min(row.eager_us, row.host_us, row.graph_us, row.invoke_us) > 0, row
    text = calls.section(rows)
    assert text.startswith(calls.SECTION) and "LSTM cell" in text


def test_outside_programs_benchmark_checks_and_times_a_program(monkeypatch):
    """`python -m benchmarks outside` on one program: compiled in one graph, checked against
    eager at each listed size, timed, and put in the table with the geo-mean."""
    from benchmarks import outside

    monkeypatch.setattr(outside, "ROUNDS", 2)
    monkeypatch.setattr(outside, "ROUND_S", 0.002)
    rows = outside.measure(["CausalTriu"], say=lambda _: None)
    assert [(r.name, r.mode, r.correct) for r in rows] == [("CausalTriu", "in-graph", True)]
    assert rows[0].eager_us > 0 and rows[0].dync_us > 0
    text = outside.section(rows)
    assert text.startswith(outside.SECTION) and "| CausalTriu | in-graph | yes |" in text
