"""The other compilers a suite model is timed against, beside eager PyTorch and dync (issue 5):
`torch.compile(model, dynamic=True)` and ONNX Runtime on the model's ONNX export.

Each `prepare_*` function builds its contestant for one model, runs it on every input of the
model's input set and checks its decision against eager's (η, as dync's), and hands back a
`Contestant` whose `fn` the runner then times in the same interleaved loop as eager and dync. A
contestant that cannot be built keeps `fn=None` and a short `error`; it is shown as "—".

Neither is a dependency of dync: ONNX Runtime (and onnxscript, for the dynamo exporter) come
with the `bench` extra (`pip install -e '.[bench]'`); without them the ORT column says why.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import logging
import re
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch.utils import _pytree as pytree

from .timing import FAILED

# A contestant's callable returns `FAILED` instead of an output when it cannot run an input (a
# frozen trace given a shape it was not traced for): the timing loop drops that sample.


@dataclass
class Contestant:
    name: str
    fn: Callable | None = None
    eta: float = float("nan")
    # inputs (of the η set) it could not run at all; they count as wrong in η
    failed_inputs: int = 0
    ms: float = float("nan")
    # wall time to build it: export + session for ORT; for torch.compile the warm-up over every
    # input, which compiles each path and shape it meets
    setup_s: float = float("nan")
    error: str = ""
    # export froze the example's path (a TorchScript trace): it runs one path whatever the input
    frozen: bool = False
    stats: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def ran(self) -> bool:
        """Timed: it has a latency (its `fn` is dropped after timing)."""
        return self.ms == self.ms and not self.error


def short(e: BaseException, limit: int = 160) -> str:
    """One line naming an exception: its type and the first words of its message."""
    text = " ".join(str(e).split())
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)
    return f"{type(e).__name__}: {text[:limit]}{'…' if len(text) > limit else ''}"


def _guarded(fn: Callable) -> Callable:
    def call(*args):
        try:
            return fn(*args)
        except Exception:
            return FAILED
    return call


def _eta(fn: Callable, decision, inputs: Sequence[tuple], reference: Sequence) -> tuple[float, int]:
    """η of `fn` against eager's decisions `reference` over `inputs`, and how many of the inputs
    it could not run (counted as wrong)."""
    wrong = failed = 0
    for args, want in zip(inputs, reference, strict=True):
        out = fn(*args)
        if out is FAILED:
            failed += 1
            wrong += 1
            continue
        try:
            wrong += decision(out) != want
        except Exception:  # an output of the wrong shape or type for the model's decision
            wrong += 1
    return wrong / len(inputs), failed


# -- torch.compile -------------------------------------------------------------------------------

def prepare_torch_compile(model: torch.nn.Module, decision, inputs: Sequence[tuple],
                          reference: Sequence) -> Contestant:
    """`torch.compile(model, dynamic=True)` (inductor on the host CPU), warmed on every input:
    graph breaks put the data-dependent control flow back into Python, so it stays correct; every
    new path or shape it meets may compile again. Counts graphs, graph breaks, frames skipped
    and recompiles."""
    from torch._dynamo import utils as dynamo_utils

    c = Contestant("torch.compile")
    torch._dynamo.reset()
    dynamo_utils.counters.clear()
    dynamo_utils.set_compilation_metrics_limit(100_000)
    dynamo_utils.clear_compilation_metrics()
    try:
        compiled = torch.compile(model, dynamic=True)
        start = time.perf_counter()
        with torch.no_grad(), _quiet():
            first = compiled(*inputs[0])  # compile errors are raised here, not swallowed
            del first
            c.eta, c.failed_inputs = _eta(_guarded(compiled), decision, inputs, reference)
        c.setup_s = time.perf_counter() - start
    except Exception as e:
        c.error = short(e)
        torch._dynamo.reset()
        return c
    metrics = dynamo_utils.get_compilation_metrics()
    counters = dynamo_utils.counters
    c.stats = {
        "graphs": counters["stats"]["unique_graphs"],
        # breaks dynamo compiled past (the rest of the frame resumes in a new graph) ...
        "graph breaks": sum(counters["graph_break"].values()),
        # ... and frames it gave up on whole: their Python runs eagerly, the modules they call
        # are compiled frames of their own
        "frames skipped": counters["frames"]["total"] - counters["frames"]["ok"],
        "recompiles": sum(m.recompile_reason is not None for m in metrics),
    }
    reasons = sorted({k.split("\n")[0] for k in counters["unimplemented"]})
    if any("recompile limit" in r.lower() for r in reasons):
        c.notes.append(f"torch.compile hit dynamo's recompile limit "
                       f"({torch._dynamo.config.recompile_limit}): the frames past it run eagerly")
    if c.stats["frames skipped"] or c.stats["graph breaks"]:
        c.notes.append(f"torch.compile: {c.stats['graph breaks']} graph break(s), "
                       f"{c.stats['frames skipped']} frame(s) left to Python ("
                       + "; ".join(reasons) + ")")
    if c.failed_inputs:
        c.notes.append(f"torch.compile raised on {c.failed_inputs} of {len(inputs)} inputs")
    c.fn = _guarded(compiled)
    return c


# -- ONNX Runtime --------------------------------------------------------------------------------

def prepare_onnxruntime(model: torch.nn.Module, example: tuple, dynamic_shapes: Any, decision,
                        inputs: Sequence[tuple], reference: Sequence, *,
                        threads: int | None = None) -> Contestant:
    """ONNX Runtime (CPU execution provider, `threads` intra-op threads like eager's, no
    spinning between runs: its idle threads would take the cores from the contestant timed
    next) on the model's ONNX export. The dynamo exporter (torch.export: one graph, or nothing)
    is tried first; where it fails, the TorchScript exporter, which traces the example and so
    freezes its path: then η shows what the frozen path gets wrong."""
    c = Contestant("ORT")
    try:
        import onnxruntime as ort
    except ImportError:
        c.error = "onnxruntime not installed (pip install -e '.[bench]')"
        return c
    names = [f"input_{i}" for i in range(len(example))]
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="dync-bench-onnx-") as tmp:
        path = Path(tmp) / "model.onnx"
        exporter, dynamo_error = "dynamo", ""
        try:
            _export_dynamo(model, example, dynamic_shapes, names, path)
        except Exception as e:
            while e.__cause__ is not None:  # torch.export's own reason, under the exporter's
                e = e.__cause__
            dynamo_error = short(e, 90).split(" (unhinted")[0]
            exporter = "TorchScript trace"
            try:
                c.stats["trace warnings"] = _export_torchscript(model, example, dynamic_shapes,
                                                                 names, path)
            except Exception as e2:
                c.error = f"export failed: dynamo: {dynamo_error}; TorchScript: {short(e2, 120)}"
                return c
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or torch.get_num_threads()
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 4  # its errors on inputs a frozen trace cannot take: counted
        try:
            session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        except Exception as e:
            c.error = f"ORT session ({exporter} export): {short(e, 120)}"
            return c
    c.setup_s = time.perf_counter() - start
    c.stats["exporter"] = exporter
    feeds = [i.name for i in session.get_inputs()]
    positions = [names.index(n) if n in names else k for k, n in enumerate(feeds)]
    with torch.no_grad():
        template = pytree.tree_structure(model(*example))

    def run(*args):
        outs = session.run(None, {n: args[p].numpy() for n, p in zip(feeds, positions, strict=True)})
        tensors = [torch.from_numpy(o) for o in outs]
        return (pytree.tree_unflatten(tensors, template)
                if len(tensors) == template.num_leaves else tensors[0])

    c.fn = _guarded(run)
    c.eta, c.failed_inputs = _eta(c.fn, decision, inputs, reference)
    if exporter != "dynamo" and not c.stats["trace warnings"]:
        c.notes.append(f"ORT: the dynamo exporter fails ({dynamo_error}); the TorchScript "
                       "exporter's trace read no tensor value as a Python value")
    elif exporter != "dynamo":
        c.frozen = True
        c.notes.append(
            f"ORT: export froze a path (η={c.eta:.2f}): the dynamo exporter fails ({dynamo_error}), "
            "so the TorchScript exporter traced the example "
            f"({c.stats['trace warnings']} tensor values turned into Python values); its latency "
            "is that one path's, whatever the input")
    if c.failed_inputs:
        c.notes.append(f"ORT could not run {c.failed_inputs} of {len(inputs)} inputs "
                       "(shapes the frozen trace does not take); their timings are left out")
    return c


def _dim_name(dim, arg: int, axis: int) -> str:
    name = getattr(dim, "__name__", None) or f"input_{arg}_dim_{axis}"
    return re.sub(r"\W+", "_", str(name)).strip("_") or f"input_{arg}_dim_{axis}"


def _per_argument(model, dynamic_shapes, count: int) -> list:
    """torch.export's `dynamic_shapes` (a tuple per argument, or a dict by parameter name) as one
    spec per positional argument."""
    if dynamic_shapes is None:
        return [None] * count
    if isinstance(dynamic_shapes, dict):
        params = list(inspect.signature(model.forward).parameters)[:count]
        return [dynamic_shapes.get(p) for p in params]
    return list(dynamic_shapes) + [None] * (count - len(dynamic_shapes))


def _export_dynamo(model, example, dynamic_shapes, names, path: Path) -> None:
    try:
        import onnxscript  # noqa: F401  (the dynamo exporter's dependency)
    except ImportError as e:
        raise RuntimeError("onnxscript not installed") from e
    with _quiet():
        program = torch.onnx.export(model, example, dynamo=True, input_names=names,
                                    dynamic_shapes=dynamic_shapes, verbose=False, report=False,
                                    external_data=False)
        program.save(str(path))


def _export_torchscript(model, example, dynamic_shapes, names, path: Path) -> int:
    """The TorchScript exporter (`torch.jit.trace` underneath); the dims `dynamic_shapes` marks
    dynamic become dynamic axes. Returns the number of TracerWarnings: the places where the trace
    turned a tensor value into a Python value (a branch condition, a loop count, a size)."""
    axes = {}
    for i, spec in enumerate(_per_argument(model, dynamic_shapes, len(example))):
        if isinstance(spec, dict) and spec:
            axes[names[i]] = {int(a): _dim_name(d, i, a) for a, d in spec.items()}
    with _quiet(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.onnx.export(model, example, str(path), dynamo=False, input_names=names,
                          dynamic_axes=axes or None, do_constant_folding=True)
    return sum(issubclass(w.category, torch.jit.TracerWarning) for w in caught)


@contextlib.contextmanager
def _quiet():
    """Keep the exporters' and dynamo's progress lines, graph dumps and warnings off the
    benchmark's output (their failures are reported in one line)."""
    loggers = [logging.getLogger(n) for n in (
        "torch._dynamo", "torch._inductor", "torch.onnx", "torch.export", "torch._export",
        "torch.fx", "torch.fx.experimental.symbolic_shapes", "onnxscript", "onnx_ir")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.ERROR)
    try:
        with (warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()),
              contextlib.redirect_stderr(io.StringIO())):
            warnings.simplefilter("ignore")
            yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)
