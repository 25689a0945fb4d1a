"""From a job to a module: the compile cache first, then graph mode, then (under `auto`) host
mode where any stage of the graph fails."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from iree.compiler import ir

from ..cache import CompileCache, model_key
from ..errors import CompilationError, DyncError
from ..report import Report
from ..runtime.manifest import Manifest
from ..runtime.module import CompiledModule, from_parts
from .graph import _compile_graph
from .host import _compile_host
from .stages import _falls_back, _graph_slower_than_eager, _is_onnx, _Job, _one_line, _staged


def compiled_or_cached(job: _Job) -> CompiledModule:
    """The module for `job`: from the compile cache where it holds this model, else compiled
    (and kept there)."""
    front = None if job.options.dump_ir else _model_key(job)
    if front is not None:
        hit = _load_cached(job.store, front, job.model, job.report, job.say)
        if hit is not None:
            job.say("compile cache: hit for this model (import, passes and IREE skipped)")
            return hit
    compiled = _compile(job)
    if front is not None and compiled.report.mode != "eager":  # nothing compiled to keep
        job.store.put(front, compiled.vmfb, {"manifest": compiled.manifest.to_json()})
    return compiled


def _model_key(job: _Job) -> str | None:
    if job.store is None or job.args is None or _is_onnx(job.model):
        return None
    import torch

    if not isinstance(job.model, torch.nn.Module):
        return None
    return model_key(job.model, job.args, job.dynamic_shapes.specs, job.options.cache_key())


def _load_cached(store: CompileCache, key: str, model, report: Report,
                 say: Callable[[str], None]) -> CompiledModule | None:
    """The module cached for this model, or None (absent, or an entry that fails its checks
    or whose manifest does not parse: then it is removed, noted, and compiled again)."""
    entry = store.get(key)
    if isinstance(entry, tuple):
        vmfb, meta = entry
        try:
            manifest = Manifest.from_json(meta.get("manifest"), Path(store.directory) / key)
        except DyncError as e:
            store.discard(key)
            entry = f"damaged: {e}"
        else:
            manifest.report["cache"] = "hit (model)"
            return from_parts(vmfb, manifest, model)
    if isinstance(entry, str):
        say(f"compile cache: the entry for this model was {entry}; compiling again")
        report.notes.append(f"compile cache: the entry for this model was {entry}; rebuilt")
    return None


def _compile(job: _Job) -> CompiledModule:
    """Graph mode, then (`mode="auto"`, a PyTorch model) host mode when any stage of the
    graph fails: import, passes, IREE or the first call."""
    mode, graph_error = job.options.mode, None
    if mode != "host":
        try:
            compiled = _compile_graph(job)
            slower = None
            if mode == "auto" and not _is_onnx(job.model) and not job.options.trace_branches:
                slower = _graph_slower_than_eager(compiled, job)
            if slower is None:
                return compiled
            raise _staged(CompilationError(f"one graph, but {slower}"), "timing")
        except DyncError as e:
            onnx = _is_onnx(job.model)
            if not onnx and not getattr(e, "source", None):
                from ..frontends.pytorch.source import user_source_in

                e.source = user_source_in(str(e))  # the model's line IREE's diagnostics name
            if (mode == "graph" or onnx or job.options.trace_branches or not _falls_back(e)
                    or _flags_fail(e, job)):
                raise
            graph_error = e
            job.say(f"not one graph ({getattr(e, 'stage', '-')}: {_one_line(e)[:200]}): "
                    "falling back to host mode")
        seconds = job.report.stage_seconds
        job.report = job.fresh_report()
        job.report.stage_seconds = {f"graph {k}": v for k, v in seconds.items()}
    return _compile_host(job, graph_error)


# A module with nothing in it: IREE fails on it only for reasons that are not the program's.
_EMPTY_MODULE = "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n"


def _flags_fail(error: DyncError, job: _Job) -> bool:
    """Whether IREE's failure `error` is the call's flags' (`extra_flags`): IREE fails with
    them on a module with nothing in it too. Then no fallback would compile anything."""
    if getattr(error, "stage", "") != "iree" or not job.options.extra_flags:
        return False
    session = job.session()
    try:
        session.compile(ir.Module.parse(_EMPTY_MODULE, session.context))
    except CompilationError:
        return True
    finally:
        session.close()
    return False
