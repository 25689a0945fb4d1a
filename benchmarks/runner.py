"""Run the suite: compile each model with dync, check it (η, δ, paths) and time it against
eager PyTorch, IREE without dync's passes, `torch.compile(dynamic=True)` and ONNX Runtime in the
same run (the last two from `baselines`, each checked like dync); optionally the tracing
baseline; write BENCHMARKS.md (and a latency plot, `plot`)."""

from __future__ import annotations

import collections
import copy
import math
import os
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch.utils import _pytree as pytree

import dync
from dync.passes import DEFAULT_PIPELINE, LOW_MEMORY_PIPELINE, REQUIRED_PASSES
from dync.runtime.module import most_frequent_sizes

from . import baselines, tracing
from .baselines import Contestant
from .models import SUITE, compile_options, load
from .provenance import host_cpu, stamp
from .timing import geomean, median_ms

# The contestants `baselines` builds, in table order; `python -m benchmarks --no-baselines`
# runs none of them.
BASELINES: tuple[str, ...] = ("torch.compile", "ORT")


@dataclass
class Row:
    name: str
    description: str
    compile_s: float = float("nan")
    # The same compile again, right after: what the compile cache leaves of it, and how the
    # cache answered ("hit (model)" expected; anything else is reported in the table).
    cached_compile_s: float = float("nan")
    cache: str = ""
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
    # The other compilers (`baselines`), by name: each with its own η, latency, or error.
    contestants: dict[str, Contestant] = field(default_factory=dict)
    # Peak intermediate memory per call, bytes, the largest over `MEMORY_INPUTS` inputs: eager
    # PyTorch, dync measured (IREE's allocator), dync predicted (dync-plan-buffers' model of
    # IREE's packing, the worst path's), and the largest |predicted - measured| / measured,
    # measured being the largest over the inputs of the same dims.
    eager_peak: float = float("nan")
    dync_peak: float = float("nan")
    predicted_peak: float = float("nan")
    prediction_error: float = float("nan")
    # Ablation: dync's latency with one optimization off (`ABLATIONS` name -> ms), and for
    # `MEMORY_ABLATIONS` the measured peak (bytes) without it (with it: `OPT_IN`).
    ablation: dict[str, float] = field(default_factory=dict)
    ablation_peak: dict[str, float] = field(default_factory=dict)
    # The model's `COMPILE_OPTIONS` ask for shape-specialized versions: its `dync-specialize`
    # ablation compiles without them (a gain like the other passes'), not with hot sizes.
    specialized: bool = False
    error: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def speedup(self) -> float:
        return self.eager_ms / self.dync_ms if self.dync_ms == self.dync_ms else float("nan")

    def ms(self, contestant: str) -> float:
        """Median latency of one contestant: "eager", "dync", "no passes" or a `BASELINES`
        name (NaN where it did not run)."""
        fixed = {"eager": self.eager_ms, "dync": self.dync_ms, "no passes": self.baseline_ms}
        if contestant in fixed:
            return fixed[contestant]
        c = self.contestants.get(contestant)
        return c.ms if c is not None and c.ran else float("nan")

    def speedup_over(self, contestant: str) -> float:
        """dync's speedup over `contestant` (its latency / dync's)."""
        return self.ms(contestant) / self.dync_ms


# The pipeline without dync's optimizations: `dync.compile` adds the passes every module needs
# (`dync.passes.REQUIRED_PASSES`) to a list that leaves them out, an empty one included.
BASELINE_PASSES: tuple[str, ...] = ()

# The ablation: each of dync's optimizations off in turn (name -> `dync.compile` options), and
# the one that is off by default (shape-specialized versions) turned on, for the hottest sizes
# of the timed inputs.
ABLATIONS: dict[str, dict] = {
    name: {"passes": tuple(p for p in DEFAULT_PIPELINE if p != name)}
    for name in ("dync-rdp", "dync-sink-into-branches", "dync-split-subdnns", "dync-loop-batch",
                 "dync-pretranspose-weights", "dync-bias-pointwise-convs", "dync-channels-last",
                 "dync-plan-execution", "dync-patch-stages",
                 "dync-isolate-subdnns", "dync-check-indices")
}
# Passes outside the default pipeline, turned on instead (name -> `dync.compile` options).
OPT_IN: dict[str, dict] = {"dync-fuse-padding": {"passes": LOW_MEMORY_PIPELINE}}
# Ablations whose effect is on memory: their measured peak goes in the memory table too.
MEMORY_ABLATIONS = ("dync-sink-into-branches", "dync-loop-batch", "dync-plan-execution",
                    "dync-patch-stages", "dync-fuse-padding", "dync-isolate-subdnns")
SPECIALIZE = "dync-specialize"
# Runs where a model's `COMPILE_OPTIONS` ask for buckets; the ablation compiles it without.
BUCKET = "dync-bucket"
HOT_SIZES = 3


def _hot_sizes(compiled, inputs) -> dict[str, list[int]]:
    """The symbol values of the `HOT_SIZES` most frequent input shapes (`specialize=`)."""
    seen = collections.Counter(
        tuple(sorted(compiled.signature.check_inputs(
            [a.numpy() for a in pytree.tree_leaves(args)]).items()))
        for args in inputs)
    return most_frequent_sizes(seen, HOT_SIZES)


def _prepare_baselines(mod, model, example, dynamic_shapes, inputs, wanted: Sequence[str],
                       say: Callable[[str], None]) -> dict[str, Contestant]:
    with torch.no_grad():
        reference = [mod.decision(model(*args)) for args in inputs]
    out = {}
    for name in wanted:
        start = time.perf_counter()
        try:
            if name == "torch.compile":
                c = baselines.prepare_torch_compile(model, mod.decision, inputs, reference)
            elif name == "ORT":
                c = baselines.prepare_onnxruntime(model, example, dynamic_shapes, mod.decision,
                                                  inputs, reference)
            else:
                raise ValueError(f"unknown baseline {name!r}; there are {', '.join(BASELINES)}")
        except Exception as e:  # a baseline that fails is reported, not fatal to the row
            c = Contestant(name, error=baselines.short(e))
        say(f"[bench]   {name}: " + (f"fails: {c.error}" if c.error else
            f"eta {c.eta:.2f}{' (frozen path)' if c.frozen else ''}, "
            f"ready in {time.perf_counter() - start:.1f} s"
            + "".join(f", {k} {v}" for k, v in c.stats.items())))
        out[name] = c
    return out


def run_model(name: str, count: int = 100, *, timing_inputs: int = 30, repeats: int = 4,
              with_tracing: bool = False, with_baselines: Sequence[str] = (),
              with_ablation: bool = False, say: Callable[[str], None] = print) -> Row:
    mod = load(name)
    row = Row(name, mod.DESCRIPTION)
    try:
        model, example, dynamic_shapes = mod.build()
        options = compile_options(mod)
        start = time.perf_counter()
        compiled = dync.compile(model, example, dynamic_shapes=dynamic_shapes, **options)
        row.compile_s = time.perf_counter() - start
        start = time.perf_counter()  # the same compile again: the compile cache's hit
        cached = dync.compile(model, example, dynamic_shapes=dynamic_shapes, **options)
        row.cached_compile_s = time.perf_counter() - start
        row.cache = cached.report.cache
        row.mode = compiled.report.mode
        report = compiled.report
        row.notes = list(report.notes)
        if row.cache != "hit (model)":
            row.notes.append(f"second compile: cache {row.cache}, not a hit for the model")
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
        row.contestants = _prepare_baselines(mod, model, example, dynamic_shapes, inputs,
                                             with_baselines, say)
        others = [c for c in row.contestants.values() if c.fn is not None]
        ablated = {}
        timed = inputs[:timing_inputs]
        if with_ablation:
            variants = {f"without {off}": (off, {**options, **changed})
                        for off, changed in ABLATIONS.items()}
            variants.update({f"with {on}": (on, {**options, **changed})
                             for on, changed in OPT_IN.items()})
            if options.get("buckets"):
                variants[f"without {BUCKET}"] = (
                    BUCKET, {k: v for k, v in options.items() if k != "buckets"})
            hot = _hot_sizes(compiled, timed) if report.mode == "in-graph" else {}
            if options.get("specialize"):
                # The deployment's own versions (blockdrop): the ablation compiles without.
                variants[f"without {SPECIALIZE}"] = (
                    SPECIALIZE, {k: v for k, v in options.items() if k != "specialize"})
                row.specialized = True
            elif hot:
                variants[f"with {SPECIALIZE} {hot}"] = (SPECIALIZE,
                                                        {**options, "specialize": hot})
                row.notes.append(f"{SPECIALIZE} (ablation): versions for {hot}")
            for label, (name, variant) in variants.items():
                say(f"[bench]   {label} ...")
                try:
                    ablated[name] = dync.compile(model, example, dynamic_shapes=dynamic_shapes,
                                                 **variant)
                except dync.DyncError as e:  # a variant that fails is noted, not fatal
                    row.notes.append(f"ablation, {label}: fails: "
                                     + " ".join(str(e).split())[:300])
                    continue
                if ablated[name].report.mode != report.mode:  # fell back: not comparable
                    breaks = ablated.pop(name).report.graph_breaks
                    reason = breaks[0].get("reason", "") if breaks else ""
                    row.notes.append(f"ablation, {label}: compiles {report.mode} no more: "
                                     + " ".join(str(reason).split())[:300])
        with torch.no_grad():
            row.eager_ms, row.dync_ms, row.baseline_ms, *rest = median_ms(
                [model, compiled, baseline, *ablated.values(), *(c.fn for c in others)], timed,
                repeats)
        row.ablation = dict(zip(ablated, rest[:len(ablated)], strict=True))
        rest = rest[len(ablated):]
        for c, ms in zip(others, rest, strict=True):
            c.ms, c.fn = ms, None  # the compiled model or ORT session is not kept past here
            if ms != ms:
                c.error = "could not run any of the timed inputs"
        if "torch.compile" in row.contestants:
            torch._dynamo.reset()  # its compiled graphs and guards, before the next model
        row.notes += [n for c in row.contestants.values() for n in c.notes]
        row.float32_floor, row.dync_vs_float64 = _against_float64(model, compiled, inputs)
        # A deployment's own versions (row.specialized) are a memory optimization too.
        on_memory = MEMORY_ABLATIONS + ((SPECIALIZE,) if row.specialized else ())
        _measure_memory(row, model, compiled, inputs[:MEMORY_INPUTS],
                        {n: ablated[n] for n in on_memory if n in ablated})
        if with_tracing:
            row.traced_eta = _traced_eta(mod, model, example, dynamic_shapes, inputs, row.notes)
    except Exception as e:  # a model that fails is reported, not fatal to the suite
        row.error = f"{type(e).__name__}: {' '.join(str(e).split())}"[:400]
        traceback.print_exc()
    return row


MEMORY_INPUTS = 3


def _measure_memory(row: Row, model, compiled, inputs, ablated: dict | None = None) -> None:
    """Peak intermediate memory (`benchmarks.memory`): eager, and for a graph-mode module
    IREE's measured peak and dync-plan-buffers' prediction, on each of `inputs`; the same
    measured peak for each `ablated` module (name -> module compiled without that pass)."""
    from dync.passes.plan_buffers import Peak, symbol_values

    from . import memory

    eager, measured, predicted, errors = [], [], [], []
    peak = Peak.from_report(compiled.report.peak)
    # (function run, symbol values) -> measured peaks
    by_shape: dict[tuple[str, tuple], list[int]] = {}
    for args in inputs:
        eager.append(memory.eager_peak_intermediates(model, args))
        if compiled.report.mode == "host":
            measured.append(memory.host_peak_intermediates(compiled, args))
            continue
        run = memory.measure_dync(compiled, args)
        measured.append(run.peak)
        values = symbol_values(compiled.signature, args)
        by_shape.setdefault((run.function, tuple(sorted(values.items()))), []).append(run.peak)
    for (function, values), peaks in by_shape.items() if peak else ():
        # The formula is the worst path's peak at these dims (of the function the call ran: a
        # shape-specialized version has its own): compared with the largest measured over
        # the inputs of these dims (an early exit's run needs less).
        try:
            predicted.append(peak.evaluate_iree(dict(values), function=function))
        except KeyError:  # a symbol only the run knows (an unbacked count): no prediction
            continue
        errors.append(abs(predicted[-1] - max(peaks)) / max(max(peaks), 1))
    row.eager_peak = max(eager, default=float("nan"))
    row.dync_peak = max(measured, default=float("nan"))
    row.predicted_peak = max(predicted, default=float("nan"))
    row.prediction_error = max(errors, default=float("nan"))
    for name, module in (ablated or {}).items():
        row.ablation_peak[name] = max(memory.dync_peak(module, args) for args in inputs)


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


@dataclass(frozen=True)
class Column:
    """One column of a table: its header, its cell for a row, and its cell in the closing
    geo-mean row. Other measurements (peak memory) add columns to `LATENCY_COLUMNS`."""
    header: str
    cell: Callable[[Row], str]
    total: Callable[[list[Row]], str] = lambda rows: ""


# The contestants of the latency table, in order: (name for `Row.ms`, column header).
CONTESTANTS: tuple[tuple[str, str], ...] = (
    ("eager", "eager"),
    ("torch.compile", "torch.compile"),
    ("ORT", "ORT"),
    ("no passes", "IREE w/o dync's passes"),
    ("dync", "dync"),
)
FROZEN = "†"


def _ms_cell(contestant: str) -> Callable[[Row], str]:
    def cell(r: Row) -> str:
        ms = r.ms(contestant)
        if ms != ms:
            return "—"
        c = r.contestants.get(contestant)
        return f"{ms:.2f}" + (FROZEN if c is not None and c.frozen else "")
    return cell


def _speedup_cell(contestant: str) -> Callable[[Row], str]:
    def cell(r: Row) -> str:
        x = r.speedup_over(contestant)
        return "—" if x != x else f"{x:.2f}×"
    return cell


def _speedup_total(contestant: str) -> Callable[[list[Row]], str]:
    def total(rows: list[Row]) -> str:
        ran = [x for x in (r.speedup_over(contestant) for r in rows) if x == x]
        return f"**{geomean(ran):.2f}×** ({len(ran)})" if ran else "—"
    return total


def latency_columns(contestants: Sequence[str]) -> list[Column]:
    """The latency table's columns for the `CONTESTANTS` named in `contestants`; further
    measurements (peak memory) are appended here."""
    shown = [(n, h) for n, h in CONTESTANTS if n in contestants]
    return (
        [Column("model", lambda r: r.name, lambda rows: "**geo-mean** (models)")]
        + [Column(f"{header} ms", _ms_cell(name)) for name, header in shown]
        + [Column(f"dync vs {header}", _speedup_cell(name), _speedup_total(name))
           for name, header in shown if name != "dync"]
    )


def _table(columns: Sequence[Column], rows: list[Row], *, total: bool = False) -> list[str]:
    lines = ["| " + " | ".join(c.header for c in columns) + " |",
             "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(c.cell(r) for c in columns) + " |" for r in rows]
    if total:
        lines.append("| " + " | ".join(c.total(rows) for c in columns) + " |")
    return lines


def _latency_table(rows: list[Row], plot_link: str | None = None) -> list[str]:
    ran = {"eager", "no passes", "dync"} | {n for r in rows for n in r.contestants}
    lines = ["", "## Latency against other compilers", ""]
    if plot_link:
        lines += [f"![median latency per model and contestant]({plot_link})", ""]
    about = ["Median latency (ms) on the host CPU over the same inputs, all contestants taking "
             "turns input by input in the same loop."]
    if "torch.compile" in ran:
        about.append("torch.compile is `torch.compile(model, dynamic=True)` (inductor), warmed "
                     "on every input of the model's set (each path or shape it meets may compile "
                     "again).")
    if "ORT" in ran:
        about.append("ORT is ONNX Runtime (CPU, as many intra-op threads as eager, idle threads "
                     "not spinning) on the model's ONNX export: the dynamo exporter where "
                     "torch.export takes the model, else the TorchScript exporter, which traces "
                     f"the example and freezes its path ({FROZEN}: a latency of one path, and "
                     "wrong decisions on other inputs; see η in the next table).")
    about.append("IREE w/o dync's passes is the same dync compile with only the housekeeping "
                 "passes. The last row: geo-means of dync's per-model speedups over each "
                 "contestant where it ran (how many models in parentheses); — where it did not "
                 "run.")
    lines += [" ".join(about), ""]
    lines += _table(latency_columns(sorted(ran)), rows, total=True)
    faithful = [r.speedup_over("ORT") for r in rows
                if "ORT" in r.contestants and r.contestants["ORT"].ran
                and not r.contestants["ORT"].frozen]
    frozen = [r.name for r in rows if r.contestants.get("ORT") and r.contestants["ORT"].frozen]
    if frozen:
        lines += ["", f"{FROZEN} ORT export froze a path on {', '.join(frozen)}. Geo-mean of dync "
                  f"vs ORT over the exports that kept every path: "
                  + (f"{geomean(faithful):.2f}× ({len(faithful)})" if faithful else "— (none)")
                  + "."]
    return lines


def _eta_cell(name: str) -> Callable[[Row], str]:
    def cell(r: Row) -> str:
        c = r.contestants.get(name)
        return "—" if c is None or c.error or c.eta != c.eta else f"{c.eta:.2f}"
    return cell


def _stat_cell(name: str, key: str, spec: str = "") -> Callable[[Row], str]:
    def cell(r: Row) -> str:
        c = r.contestants.get(name)
        if c is None or c.error:
            return "—"
        value = c.setup_s if key == "setup s" else c.stats.get(key)
        return "—" if value is None or value != value else format(value, spec)
    return cell


BASELINE_COLUMNS: list[Column] = [
    Column("model", lambda r: r.name),
    Column("dync η", lambda r: _fmt(r.eta, ".2f")),
    Column("torch.compile η", _eta_cell("torch.compile")),
    Column("warm-up s", _stat_cell("torch.compile", "setup s", ".1f")),
    Column("graphs", _stat_cell("torch.compile", "graphs")),
    Column("graph breaks", _stat_cell("torch.compile", "graph breaks")),
    Column("frames skipped", _stat_cell("torch.compile", "frames skipped")),
    Column("recompiles", _stat_cell("torch.compile", "recompiles")),
    Column("ORT export", _stat_cell("ORT", "exporter")),
    Column("ORT η", _eta_cell("ORT")),
    Column("export s", _stat_cell("ORT", "setup s", ".1f")),
]


def _baselines_table(rows: list[Row]) -> list[str]:
    lines = ["", "## The baselines, checked", "",
             "Each baseline's η against eager over the model's whole input set, as dync's: the "
             "fraction of inputs whose final decision differs (an input it cannot run counts as "
             "wrong). torch.compile: warm-up time over every input, and in that warm-up dynamo's "
             "graphs, graph breaks (the frame goes on in a new graph), frames skipped (dynamo "
             "gave up on the whole frame: its Python runs eagerly, the modules it calls are "
             "compiled on their own) and recompiles. ORT: which exporter made the ONNX model, and export "
             "+ session time.", ""]
    lines += _table(BASELINE_COLUMNS, rows)
    failed = [(r.name, c) for r in rows for c in r.contestants.values() if c.error]
    if failed:
        lines += [""] + [f"- **{name}**: {c.name} fails: {c.error}" for name, c in failed]
    return lines


def markdown(rows: list[Row], header: str, plot_link: str | None = None) -> str:
    lines = [
        "# Benchmarks", "", header, "",
        "| model | mode | compile s | cached s | inputs | paths | η | δ | δ f64: eager f32 / dync "
        "| traced η | eager ms | dync ms | speedup |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        traced = "-" if r.traced_eta is None else f"{r.traced_eta:.2f}"
        if r.error:
            lines.append(f"| {r.name} | fails | | | | | | | | | | | |")
            continue
        lines.append(
            f"| {r.name} | {r.mode} | {_fmt(r.compile_s, '.1f')} | "
            f"{'' if r.cache == 'hit (model)' else f'{r.cache.upper()}: '}"
            f"{_fmt(r.cached_compile_s, '.2f')} ({_fmt(100 * r.cached_compile_s / r.compile_s, '.1f')}%)"
            f" | {r.inputs} | {r.paths} | "
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
    lines += _latency_table(ok, plot_link)
    if any(r.contestants for r in ok):
        lines += _baselines_table(ok)
    lines += _passes_table(ok)
    lines += _memory_table(ok)
    if any(r.ablation for r in ok):
        lines += _ablation_table(ok)
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
             "the same compile with only `" + ", ".join(REQUIRED_PASSES) + "`: IREE's dispatch "
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


def _kib(value: float) -> str:
    return _fmt(value / 1024, ".1f")


def _memory_table(rows: list[Row]) -> list[str]:
    ablated = [n for n in (*MEMORY_ABLATIONS, SPECIALIZE)
               if any(n in r.ablation_peak for r in rows)]
    lines = ["", "## Peak intermediate memory", "",
             "Bytes of tensors created during one call and alive at the same time (SoD²'s "
             "intermediate memory: results included, arguments and weights excluded), the "
             f"largest over the first {MEMORY_INPUTS} inputs, in KiB. Eager: every storage an "
             "aten op creates, from creation to release (a `TorchDispatchMode`). dync measured: "
             "IREE's allocator statistics (`device_bytes_peak`) around one call, in a fresh "
             "process; in host mode, the tensors the model's Python creates (counted as eager's "
             "are) plus, during each sub-DNN call, its own rise in IREE's allocator peak and the "
             "host copies the call made (an argument padded to a size bucket). Predicted: "
             "`dync-plan-buffers`' formula for IREE's packing "
             "(`report.peak['iree']`) at the call's dims, the worst path's; its error is the "
             "largest |predicted - measured| / measured, measured being the largest over the "
             "inputs with the same dims (a run that exits early needs less than the worst "
             "path; — where a symbol is known only at run time, e.g. a `nonzero` count, or in "
             "host mode). With the ablation, "
             "the measured peak of the module compiled without each pass whose gain is in "
             f"memory, and with {', '.join(f'`{n}`' for n in OPT_IN)} (not in the default "
             "pipeline).", "",
             "| model | eager KiB | dync measured KiB | dync / eager | dync predicted KiB "
             "| prediction error |" + "".join(
                 f" {'with' if n in OPT_IN else 'without'} {n} KiB |" for n in ablated),
             "|---|---|---|---|---|---|" + "---|" * len(ablated)]
    for r in rows:
        lines.append(f"| {r.name} | {_kib(r.eager_peak)} | {_kib(r.dync_peak)} | "
                     f"{_fmt(r.dync_peak / r.eager_peak, '.2f')} | {_kib(r.predicted_peak)} | "
                     f"{_fmt(100 * r.prediction_error, '.1f')}% |"
                     + "".join(f" {_kib(r.ablation_peak.get(n, float('nan')))} |"
                               for n in ablated))
    return lines


def _gain(r: Row, name: str) -> float:
    """An optimization's own gain on `r`: latency without it / with it."""
    ms = r.ablation.get(name, float("nan"))
    turned_on = name in OPT_IN or (name == SPECIALIZE and not r.specialized)
    return r.dync_ms / ms if turned_on else ms / r.dync_ms


def _ablation_table(rows: list[Row]) -> list[str]:
    names = [*ABLATIONS, *OPT_IN, BUCKET, SPECIALIZE]
    lines = ["", "## Ablation: each optimization off in turn", "",
             "dync's median latency (ms) with the default pipeline, and with one pass left out "
             f"of it; `{BUCKET}` runs only where a model's deployment asks for size buckets "
             "(`COMPILE_OPTIONS`: yolo_nms), and is left out by compiling without them; "
             f"{', '.join(f'`{n}`' for n in OPT_IN)}, not in the default pipeline, is "
             "added to it (`dync.passes.LOW_MEMORY_PIPELINE`); "
             f"`{SPECIALIZE}`, off by default in graph mode, is turned on instead, with versions "
             f"for the {HOT_SIZES} most frequent input shapes of the timed inputs (graph mode "
             "only; the sizes are in the notes; host mode's default versions of small sub-DNNs "
             "stay in every column), except where a model's deployment asks for versions "
             "itself (`COMPILE_OPTIONS`: blockdrop), which is compiled without them. All timed "
             "in the same loop as the tables above. Each "
             "cell: ms, and in parentheses that optimization's own gain (latency without it / "
             "with it; above 1 means it helps). The last row: geo-means of the gains.", "",
             "| model | dync ms | " + " | ".join(
                 f"with {n}" if n == SPECIALIZE or n in OPT_IN else f"without {n}"
                 for n in names) + " |",
             "|" + "---|" * (len(names) + 2)]
    for r in rows:
        cells = [f"{_fmt(r.ablation.get(n, float('nan')), '.2f')} ({_fmt(_gain(r, n), '.2f')}×)"
                 for n in names]
        lines.append(f"| {r.name} | {_fmt(r.dync_ms, '.2f')} | " + " | ".join(cells) + " |")
    gains = [geomean(_gain(r, n) for r in rows) for n in names]
    lines.append("| **geo-mean gain** | | " + " | ".join(f"**{_fmt(g, '.2f')}×**" for g in gains)
                 + " |")
    return lines


def _run_one(name: str, count: int, cache: str, say, **options) -> Row:
    say(f"[bench] {name} ...")
    previous = os.environ.get("DYNC_CACHE_DIR")
    os.environ["DYNC_CACHE_DIR"] = cache
    try:
        row = run_model(name, count, say=say, **options)
    finally:
        if previous is None:
            del os.environ["DYNC_CACHE_DIR"]
        else:
            os.environ["DYNC_CACHE_DIR"] = previous
    say(f"[bench] {name}: " + (row.error or
        f"eta {row.eta:.3f} delta {row.delta:.2f} paths {row.paths} "
        f"eager {row.eager_ms:.2f} ms dync {row.dync_ms:.2f} ms"
        + "".join(f" {c.name} {c.ms:.2f} ms" for c in row.contestants.values() if c.ran)
        + ("" if row.traced_eta is None else f" traced eta {row.traced_eta:.2f}")))
    return row


# The sections a run of the suite writes (those its options leave out go with the rest).
SECTIONS = frozenset({"## Latency against other compilers", "## The baselines, checked",
                      "## Notes", "## Models that do not compile yet", "## Models",
                      "## dync's passes", "## Peak intermediate memory",
                      "## Ablation: each optimization off in turn"})


def run(names: list[str] | None = None, count: int = 100, *, with_tracing: bool = True,
        with_baselines: Sequence[str] = BASELINES, with_ablation: bool = False,
        timing_inputs: int = 30, repeats: int = 4,
        output: Path | None = Path("BENCHMARKS.md"), plot: Path | None = None,
        say=print) -> list[Row]:
    """Benchmark `names` (default: the whole suite) and write `output` (markdown) and, if
    `plot` is given, the latency plot there (linked from `output`)."""
    rows = []
    # A compile cache of this run only: "compile s" is a first compile, "cached s" its hit.
    with tempfile.TemporaryDirectory(prefix="dync-bench-cache-") as cache:
        for name in names or SUITE:
            rows.append(_run_one(name, count, cache, say, with_tracing=with_tracing,
                                 with_baselines=with_baselines, with_ablation=with_ablation,
                                 timing_inputs=timing_inputs, repeats=repeats))
    if output is None:
        return rows

    contestants = ", ".join(["eager", "dync", "dync without its passes", *with_baselines]
                            + (["the ablation's variants"] if with_ablation else []))
    header = (f"Measured on {stamp()}. Host CPU: {host_cpu()}; torch {torch.__version__}, {torch.get_num_threads()} torch threads, "
              f"dync {dync.__version__}; `python -m benchmarks` (η, δ and paths over each "
              f"model's input set; latencies are medians over the same {timing_inputs} inputs "
              f"× {repeats} rounds, {contestants} taking turns input by input, in a shuffled "
              "order; compile s: a first compile, with a compile cache of this run only; cached s: "
              "the same compile right after, from the cache). δ is dync against eager float32; the next column measures both against "
              "eager float64 on the inputs that take the same path in all three (the error "
              "float32 itself makes, and dync's).")
    link = None
    if plot is not None:
        from . import plot as plotting
        try:
            plotting.latency_plot(rows, plot)
        except ImportError as e:  # matplotlib is in the bench extra only
            say(f"[bench] no plot: {e}")
        else:
            link = Path(os.path.relpath(plot.resolve(), output.resolve().parent)).as_posix()
    # The sections measured apart are kept: CUDA (on a GPU machine), the fuzzing campaign, and
    # what other commands wrote (kernels, realistic sizes, ONNX conformance, an AVX2 machine).
    from .fuzz.report import with_section as with_fuzzing
    from .gpu import with_section
    from .provenance import with_sections_kept

    old = output.read_text(encoding="utf-8") if output.exists() else ""
    text = with_fuzzing(with_section(markdown(rows, header, link)))
    output.write_text(with_sections_kept(text, old, SECTIONS), encoding="utf-8")
    return rows
