"""Run the suite: compile each model with dync, check it (η, δ, paths) and time it against
eager PyTorch in the same run; optionally the tracing baseline; write BENCHMARKS.md."""

from __future__ import annotations

import copy
import math
import statistics
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch.utils import _pytree as pytree

import dync
from dync.passes import DEFAULT_PIPELINE

from . import tracing
from .models import SUITE, load


@dataclass
class Row:
    name: str
    description: str
    compile_s: float = float("nan")
    mode: str = "-"
    inputs: int = 0
    eta: float = float("nan")
    delta: float = float("nan")
    # δ of eager float32 against eager float64 (what float32 itself allows on these
    # outputs), and δ of dync against eager float64.
    float32_floor: float = float("nan")
    dync_vs_float64: float = float("nan")
    paths: int = 0
    eager_ms: float = float("nan")
    dync_ms: float = float("nan")
    traced_eta: float | None = None
    # dync's IR passes (issue 4): RDP's coverage, sub-DNNs, and the compiled module with the
    # default pipeline against the same compile without dync's passes.
    rdp: dict = field(default_factory=dict)
    subdnns: int = 0
    dispatches: int | None = None
    baseline_dispatches: int | None = None
    baseline_ms: float = float("nan")
    error: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def speedup(self) -> float:
        return self.eager_ms / self.dync_ms if self.dync_ms == self.dync_ms else float("nan")


# The pipeline without dync's own passes: only the housekeeping every compile needs.
BASELINE_PASSES = ("dync-canonicalize", "dync-verify")


def _median_ms(fns, inputs, repeats: int) -> list[float]:
    """Median latency of each of `fns` over `inputs`, the functions taking turns input by input
    (in reverse order every other round, so none always runs right after another) so that
    drift of the machine (clock, caches, other load) falls on all of them alike."""
    times: list[list[float]] = [[] for _ in fns]
    for round_ in range(repeats):
        order = list(enumerate(fns))
        for args in inputs:
            for k, fn in order if round_ % 2 == 0 else reversed(order):
                start = time.perf_counter()
                fn(*args)
                times[k].append((time.perf_counter() - start) * 1e3)
    return [statistics.median(t) for t in times]


def run_model(name: str, count: int = 100, *, timing_inputs: int = 30, repeats: int = 4,
              with_tracing: bool = False) -> Row:
    mod = load(name)
    row = Row(name, mod.DESCRIPTION)
    try:
        model, example, dynamic_shapes = mod.build()
        start = time.perf_counter()
        compiled = dync.compile(model, example, dynamic_shapes=dynamic_shapes)
        row.compile_s = time.perf_counter() - start
        row.mode = compiled.report.mode
        report = compiled.report
        row.notes = list(report.notes)
        here = str(Path.cwd()) + "/"
        row.notes += [f"on the host: {b['region']} ({b['source'].replace(here, '')}): {b['reason']}"
                      for b in report.graph_breaks]
        if report.mode == "host":
            row.notes.append("sub-DNNs: " + ", ".join(
                f"{d['callable']}({', '.join(d['inputs'])})" for d in report.subdnns))
        inputs = mod.inputs(count)
        check = dync.verify(model, compiled, inputs, decision=mod.decision)
        row.inputs, row.eta, row.delta = len(inputs), check.eta, check.delta
        with torch.no_grad():  # the model's own account of its control flow
            row.paths = len({mod.path(model, *args) for args in inputs})
        row.rdp, row.dispatches = dict(report.rdp), report.dispatches
        row.subdnns = len(report.subdnns)
        baseline = dync.compile(model, example, dynamic_shapes=dynamic_shapes,
                                passes=BASELINE_PASSES)
        row.baseline_dispatches = baseline.report.dispatches
        timed = inputs[:timing_inputs]
        with torch.no_grad():
            row.eager_ms, row.dync_ms, row.baseline_ms = _median_ms(
                (model, compiled, baseline), timed, repeats)
        row.float32_floor, row.dync_vs_float64 = _against_float64(model, compiled, inputs)
        if with_tracing:
            row.traced_eta = _traced_eta(mod, model, example, dynamic_shapes, inputs, row.notes)
    except Exception as e:  # a model that fails is reported, not fatal to the suite
        row.error = f"{type(e).__name__}: {' '.join(str(e).split())}"[:400]
        traceback.print_exc()
    return row


def _traced_eta(mod, model, example, dynamic_shapes, inputs, notes: list[str]) -> float:
    try:
        traced = tracing.trace_compile(model, example, dynamic_shapes)
    except dync.DyncError as e:
        notes.append("tracing baseline: the example's frozen path cannot be compiled either ("
                     + " ".join(str(e).split())[:120] + "…); traced η is torch.jit.trace's, "
                     "run by TorchScript")
        traced = tracing.torchscript_trace(model, example)
    wrong = 0
    with torch.no_grad():
        for args in inputs:
            try:
                same = mod.decision(traced(*args)) == mod.decision(model(*args))
            except (dync.DyncError, RuntimeError, IndexError, ValueError):
                same = False  # the frozen trace cannot even take this input
            wrong += not same
    return wrong / len(inputs)


def _against_float64(model, compiled, inputs) -> tuple[float, float]:
    """δ of eager float32 and of dync against eager float64, on the inputs that take the same
    path in all three: how far float32 arithmetic itself is from exact, and dync with it."""
    model64 = copy.deepcopy(model).double()
    worst = [0.0, 0.0]
    default = torch.get_default_dtype()
    try:
        with torch.no_grad():
            for args in inputs:
                ours = pytree.tree_leaves(model(*args))
                theirs = pytree.tree_leaves(compiled(*args))
                torch.set_default_dtype(torch.float64)  # tensors the forward creates, too
                try:
                    ref = pytree.tree_leaves(model64(*(a.double() if a.is_floating_point() else a
                                                       for a in args)))
                finally:
                    torch.set_default_dtype(default)
                shapes = [[t.shape for t in leaves] for leaves in (ours, theirs, ref)]
                if shapes[0] != shapes[2] or shapes[1] != shapes[2]:
                    continue
                for k, leaves in enumerate((ours, theirs)):
                    for o, r in zip(leaves, ref, strict=True):
                        if o.numel():
                            worst[k] = max(worst[k], (o.double() - r.double()).abs().max().item())
    except RuntimeError:  # a forward that pins float32 somewhere: no float64 reference
        return float("nan"), float("nan")
    return math.log10(worst[0] + 1e-10), math.log10(worst[1] + 1e-10)


def _fmt(value: float, spec: str) -> str:
    return "-" if value != value else format(value, spec)


def markdown(rows: list[Row], header: str) -> str:
    lines = [
        "# Benchmarks", "", header, "",
        "| model | mode | compile s | inputs | paths | η | δ | δ f64: eager f32 / dync | traced η "
        "| eager ms | dync ms | speedup |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        traced = "-" if r.traced_eta is None else f"{r.traced_eta:.2f}"
        if r.error:
            lines.append(f"| {r.name} | fails | | | | | | | | | | |")
            continue
        lines.append(
            f"| {r.name} | {r.mode} | {_fmt(r.compile_s, '.1f')} | {r.inputs} | {r.paths} | "
            f"{_fmt(r.eta, '.3f')} | {_fmt(r.delta, '.2f')} | {_fmt(r.float32_floor, '.2f')} / "
            f"{_fmt(r.dync_vs_float64, '.2f')} | "
            f"{traced} | {_fmt(r.eager_ms, '.2f')} | "
            f"{_fmt(r.dync_ms, '.2f')} | {_fmt(r.speedup, '.2f')}× |"
        )
    ok = [r for r in rows if not r.error]
    lines += ["", f"{len(ok)} of {len(rows)} models compile: "
              f"{sum(r.mode == 'in-graph' for r in ok)} fully in-graph, "
              f"{sum(r.mode == 'host' for r in ok)} in host mode (the model's Python driving "
              "compiled sub-DNNs; see each model's notes)."]
    lines += _passes_table(ok)
    noted = [r for r in ok if r.notes]
    if noted:
        lines += ["", "## Notes", ""]
        lines += [f"- **{r.name}**: {n}" for r in noted for n in r.notes]
    failures = [r for r in rows if r.error]
    if failures:
        lines += ["", "## Models that do not compile yet", ""]
        here = str(Path.cwd()) + "/"
        lines += [f"- **{r.name}**: {r.error.replace(here, '')}" for r in failures]
    lines += ["", "## Models", ""] + [f"- **{r.name}**: {r.description}" for r in rows]
    return "\n".join(lines) + "\n"


def _passes_table(rows: list[Row]) -> list[str]:
    lines = ["", "## dync's passes", "",
             "RDP coverage over all tensor dims of each module after `dync-rdp` (host mode: "
             "summed over its sub-DNNs), the sub-DNNs of the module, and the compiled module with "
             "the default pipeline (`" + ", ".join(DEFAULT_PIPELINE) + "`) against "
             "the same compile with only `" + ", ".join(BASELINE_PASSES) + "`: IREE's dispatch "
             "count and the median latency over the same inputs, in the same run.", "",
             "| model | static dims | symbolic dims | unknown dims | unknown % | sub-DNNs "
             "| dispatches: passes / none | dync ms: passes / none |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        total = sum(r.rdp.get(k, 0) for k in ("static", "symbolic", "unknown"))
        unknown = 100 * r.rdp.get("unknown", 0) / total if total else float("nan")
        lines.append(
            f"| {r.name} | {r.rdp.get('static', '-')} | {r.rdp.get('symbolic', '-')} | "
            f"{r.rdp.get('unknown', '-')} | {_fmt(unknown, '.1f')} | {r.subdnns} | "
            f"{r.dispatches if r.dispatches is not None else '-'} / "
            f"{r.baseline_dispatches if r.baseline_dispatches is not None else '-'} | "
            f"{_fmt(r.dync_ms, '.2f')} / {_fmt(r.baseline_ms, '.2f')} |")
    return lines


def run(names: list[str] | None = None, count: int = 100, *, with_tracing: bool = True,
        output: Path | None = Path("BENCHMARKS.md"), say=print) -> list[Row]:
    rows = []
    for name in names or SUITE:
        say(f"[bench] {name} ...")
        row = run_model(name, count, with_tracing=with_tracing)
        say(f"[bench] {name}: " + (row.error or
            f"eta {row.eta:.3f} delta {row.delta:.2f} paths {row.paths} "
            f"eager {row.eager_ms:.2f} ms dync {row.dync_ms:.2f} ms"
            + ("" if row.traced_eta is None else f" traced eta {row.traced_eta:.2f}")))
        rows.append(row)
    if output is not None:
        header = (f"Host CPU, torch {torch.__version__}, {torch.get_num_threads()} torch threads, "
                  f"dync {dync.__version__}; `python -m benchmarks` (η, δ and paths over each "
                  f"model's input set; latencies are medians over the same 30 inputs × 4 rounds, eager, dync and "
                  f"dync without its passes taking turns input by input, in alternating order). δ is dync "
                  f"against eager float32; the next column measures both against eager float64 "
                  f"on the inputs that take the same path in all three (the error float32 "
                  f"itself makes, and dync's).")
        output.write_text(markdown(rows, header), encoding="utf-8")
    return rows
