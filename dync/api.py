"""`dync.compile`: frontend -> dync IR -> passes -> IREE -> `CompiledModule`."""

from __future__ import annotations

import itertools
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iree.compiler import ir

from . import targets
from .backend import CompilerSession
from .cache import CompileCache, default_directory, model_key, module_key
from .dialects.assembly import module_text
from .dialects.attributes import BUCKET_ATTR
from .dialects.dync import COPIED_PADDING_ATTR, FLAGS_ATTR, read_flags, read_subdnns, set_backend
from .dialects.versions import read_versions, request_versions
from .errors import (
    CompilationError,
    DyncError,
    InputError,
    ModuleFormatError,
    OptionError,
    UnsupportedConstructError,
)
from .frontends.common import ImportedProgram
from .options import CompileOptions
from .passes import run_pipeline
from .passes.bucket import read_buckets
from .passes.plan_buffers import read_peak
from .passes.plan_execution import read_execution
from .passes.rdp import read_coverage
from .report import Report
from .runtime.manifest import TRANSFORM_SPEC, Manifest
from .runtime.module import CompiledModule, _to_numpy, from_parts
from .version import __version__


def compile(  # noqa: A001 - the public name is fixed by the design
    model: Any,
    args: Sequence[Any] | None = None,
    *,
    dynamic_shapes: Any = None,
    backend: str = "llvm-cpu",
    target: str | None = None,
    mode: str = "auto",
    passes: Sequence[str] | None = None,
    extra_flags: Sequence[str] = (),
    progress: bool | Callable[[str], None] = False,
    dump_ir: str | os.PathLike | None = None,
    trace_branches: bool = False,
    specialize: bool | Mapping[str, Sequence[int]] = False,
    buckets: Mapping[str, Sequence[int]] | None = None,
    cache: bool | str | os.PathLike = True,
    check_first_call: bool = True,
) -> CompiledModule:
    """Compile a PyTorch `nn.Module` or an ONNX model (path or `ModelProto`).

    Args:
      model: an `nn.Module` (then `args` are example inputs) or an ONNX model.
      args: example inputs for a PyTorch model (tuple of tensors); unused for ONNX.
      dynamic_shapes: `torch.export` convention (`torch.export.Dim`) for PyTorch; for ONNX,
        `{input: {axis: (name, min, max)}}` to name and bound `dim_param`s.
      backend: "llvm-cpu" (host, default), "cuda" or "arm".
      target: a preset of the backend (`dync.targets.presets(backend)`), e.g. "jetson-orin".
      mode: how control flow is captured. "graph" compiles the whole program into one
        module and refuses anything it cannot capture (with the source line). "host" runs
        the model's own Python on the host and compiles the submodule/method calls it makes
        that can be captured as sub-DNNs, entry points of one vmfb, falling back per call
        (PyTorch models; the result is a `dync.HostModule`). "auto" (default) compiles in
        graph mode and falls back to host mode when the program cannot be one graph; the
        report lists each fallback with its file, line and reason.
      passes: dync IR passes to run (names or upstream pipeline elements); default
        `dync.passes.DEFAULT_PIPELINE`.
      extra_flags: additional IREE compiler flags (process-wide LLVM options among them are
        parsed in a worker process that compiles the module; `dync.backend`).
      progress: True to print each stage to stderr, or a callable receiving stage messages.
      dump_ir: write the dync IR handed to IREE (after the passes) to this file.
      trace_branches: the compiled module also records the branch decisions it takes
        (`compiled.last_trace`, compared with eager's by `dync.verify`); PyTorch models in
        graph mode, without data-dependent `while` loops.
      specialize: shape-specialized versions (dync-specialize; Nimble, SoD²): besides the
        fully dynamic entry point, compile copies in which dynamic dims are constants, picked
        by the arguments' shapes at run time. A mapping {Dim name: [sizes]}: a version per
        combination of the listed sizes (at most 16; unlisted dims stay dynamic), e.g. the
        observed hot sizes of an earlier compile, `compiled.hot_sizes()`; True: one
        version at the example inputs' sizes; False (default): none. On IREE 3.13's CPU
        backend they did not pay off on the benchmark suite (see BENCHMARKS.md), hence off by
        default. Graph mode only.
      buckets: zero-padded static versions (dync-bucket, shape buckets): {Dim name:
        [largest sizes]}, a version per combination (at most 16). A call runs the smallest
        bucket holding all its dims, which zero-pads its arguments at the end of those dims
        itself (no host copy; a version over only some of an argument's dynamic dims takes
        it padded by the runtime), and the padding is cropped away wherever it could reach
        a true value (reductions, reshapes, windows that would read it): the results are
        exact. Calls beyond every bucket run the dynamic entry; dims not named stay dynamic
        in every version. E.g. `{"h32": [4, 6, 8, 10], "w32": [4, 6, 8, 10]}` for an image
        of 32*h32 x 32*w32 pixels. Graph mode, and host mode (there, for each sub-DNN with
        those dims).
      cache: reuse earlier results from the compile cache (`dync.cache`; default directory
        `~/.cache/dync`, or `$DYNC_CACHE_DIR`; `DYNC_CACHE=0` disables it): the whole
        compiled module for an unchanged PyTorch model (same classes, attributes, weights,
        example inputs, Dim specs, options and source files), else IREE's output for identical
        dync IR, flags and IREE version. False to always compile, or a directory.
      check_first_call: run the compiled module (or each sub-DNN) on the example inputs and
        compare with eager PyTorch before returning it (the last stage a failure of which
        `mode="auto"` falls back from; `mode="graph"` refuses). Off for a model whose
        results are random (sampling, dropout in training mode). Modules that cannot run on
        this machine (cross-compiled) are not checked; the report notes it.

    Compilation is a chain of stages, each of which may fail: import (rewrite and export),
    dync's passes, IREE, the first call. With `mode="auto"` a failure of the whole graph at
    any of them falls back to host mode, where a sub-DNN that fails runs as Python, and a
    model left with nothing compiled runs in eager PyTorch; `report.graph_breaks` and
    `report.explain()` list each fallback with its stage, the model's file:line, the
    construct and the internal reason.
    """
    options = CompileOptions.normalized(
        backend=backend, target=target, mode=mode, passes=passes, extra_flags=extra_flags,
        dump_ir=dump_ir, trace_branches=trace_branches, specialize=specialize, buckets=buckets,
        cache=cache, check_first_call=check_first_call, onnx=_is_onnx(model))
    args = None if args is None else _as_tuple(args)
    if _check_torch_model(model, args):
        from .frontends.pytorch.declared_shapes import DeclaredShapes

        dynamic_shapes = DeclaredShapes.of(model.forward, args, dynamic_shapes)
    job = _Job(model, args, dynamic_shapes, options,
               _progress_sink(progress), _cache(options.cache))
    front = None if options.dump_ir else _model_key(job)
    if front is not None:
        hit = _load_cached(job.store, front, model, job.report, job.say)
        if hit is not None:
            job.say("compile cache: hit for this model (import, passes and IREE skipped)")
            return hit
    compiled = _compile(job)
    if front is not None and compiled.report.mode != "eager":  # nothing compiled to keep
        job.store.put(front, compiled.vmfb, {"manifest": compiled.manifest.to_json()})
    return compiled


@dataclass
class _Job:
    """One `dync.compile` call: the model, its example and options, and what the stages
    share (the progress sink, the compile cache, the report being written)."""

    model: Any
    args: tuple | None
    dynamic_shapes: Any  # a PyTorch model's are read once (`DeclaredShapes`); ONNX's as given
    options: CompileOptions
    say: Callable[[str], None]
    store: CompileCache | None
    report: Report = None  # type: ignore[assignment]

    def __post_init__(self):
        if self.report is None:
            self.report = self.fresh_report()

    @property
    def target(self) -> targets.Target:
        return self.options.resolved

    def fresh_report(self) -> Report:
        return Report(backend=self.target.backend, target=self.target.name,
                      passes=list(self.options.passes))

    def session(self) -> CompilerSession:
        return CompilerSession(self.target, self.options.extra_flags)


def _as_tuple(args) -> tuple:
    return tuple(args) if isinstance(args, tuple | list) else (args,)


def _check_torch_model(model, args: tuple | None) -> bool:
    """A PyTorch model's refusals that need no import (`frontends.pytorch.export`); whether
    `model` is a PyTorch model with example args."""
    if _is_onnx(model) or args is None or "torch" not in sys.modules:
        return False
    import torch

    if not isinstance(model, torch.nn.Module):
        return False
    from .frontends.pytorch.export import check_model

    check_model(model, args)
    return True


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
            return _compile_graph(job)
        except DyncError as e:
            onnx = _is_onnx(job.model)
            if not onnx and not getattr(e, "source", None):
                from .frontends.pytorch.source import user_source_in

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


def _falls_back(error: DyncError) -> bool:
    """Whether `mode="auto"` goes on in host mode after `error`: a failure to compile the
    program, not a mistake in the call (options, inputs)."""
    return not isinstance(error, OptionError | InputError)


def _compile_graph(job: _Job) -> CompiledModule:
    options, report, say = job.options, job.report, job.say
    session = job.session()
    try:
        with _stage(report, "import", say):
            program = _import(job.model, job.args, job.dynamic_shapes, session,
                              options.trace_branches)
        report.frontend = program.frontend
        report.notes.extend(program.notes)
        report.rewritten = dict(program.rewritten)
        report.branch_sites = list(program.branch_sites)
        report.symbols = {k: [s.min, s.max] for k, s in program.signature.symbols.items()}
        request_versions(program.module, _versions(options.specialize, program.signature,
                                                   job.args))
        request_versions(program.module, _buckets(options.buckets, program.signature),
                         BUCKET_ATTR)
        set_backend(program.module, job.target.backend)
        with _stage(report, "passes", say):
            run_pipeline(program.module, options.passes)
        versions = _compiled_versions(program.module)
        report.versions = versions
        report.rdp = read_coverage(program.module)
        report.execution = read_execution(program.module)
        peak = read_peak(program.module)
        report.peak = {} if peak is None else {
            "formula": peak.formula, "iree": peak.iree, "arena": peak.arena,
            "min": peak.min, "max": peak.max, "versions": peak.versions}
        report.subdnns = read_subdnns(program.module)
        if options.dump_ir is not None:
            Path(options.dump_ir).write_text(module_text(program.module), encoding="utf-8")
        with _stage(report, "iree", say):
            vmfb = _compile_with_iree(session, program.module, report, job.store, say)
    finally:
        session.close()
    compiled = CompiledModule(vmfb, _manifest(vmfb, session, job.target, report,
                                              program.signature, versions=versions))
    if program.frontend == "pytorch" and not options.trace_branches and options.check_first_call:
        _check_first_call(compiled, job)
    return compiled


MAX_VERSIONS = 16


def _versions(specialize, signature, args) -> list[dict[str, int]]:
    """The symbol assignments to compile versions for (see `compile`'s `specialize`)."""
    if specialize is False or not signature.symbols:
        return []
    if specialize is True:
        if args is None:
            return []
        from torch.utils import _pytree as pytree

        flat = [_to_numpy(a) for a in pytree.tree_leaves(tuple(args))]
        return [signature.check_inputs(flat)]
    return _combinations("specialize", specialize, signature)


def _buckets(buckets, signature, check: bool = True) -> list[dict[str, int]]:
    """The bucket versions to compile (see `compile`'s `buckets`) over `signature`'s symbols;
    `check`: fail on a dim `signature` does not have (else leave it out)."""
    if not buckets:
        return []
    return _combinations("buckets", buckets, signature, check)


def _combinations(option: str, sizes: Mapping[str, Sequence[int]], signature,
                  check: bool = True) -> list[dict[str, int]]:
    """{symbol: value} per combination of `sizes` ({symbol: [value, ...]}) over the symbols
    of `signature`, checked: known names (unless not `check`), values in range, how many."""
    unknown = sorted(set(sizes) - set(signature.symbols))
    if unknown and check:
        raise OptionError(f"{option} names {', '.join(unknown)}, which are not dynamic dims of "
                        f"this model (its dims: {', '.join(sorted(signature.symbols))})")
    names = sorted(set(sizes) & set(signature.symbols))
    combos = list(itertools.product(*(sorted(set(sizes[n])) for n in names)))
    if len(combos) > MAX_VERSIONS:
        raise OptionError(f"{option} asks for {len(combos)} versions; at most {MAX_VERSIONS} "
                        "(each is a full copy of the program for IREE to compile)")
    for name in names:
        spec = signature.symbols[name]
        outside = [v for v in sizes[name] if not spec.min <= v <= spec.max]
        if outside:
            raise OptionError(f"{option}: {name} = {outside[0]} is outside its declared range "
                            f"[{spec.min}, {spec.max}]")
    return [dict(zip(names, combo, strict=True)) for combo in combos if combo]


def _compiled_versions(module) -> list[dict]:
    """The manifest's `versions`: dync-specialize's, then dync-bucket's."""
    return [{"function": name, "symbols": values}
            for name, values in read_versions(module.operation)] + read_buckets(module.operation)


def _add_counts(a: dict, b: dict) -> dict:
    return {k: _add_counts(a.get(k, {}), b.get(k, {})) if isinstance(a.get(k, b.get(k)), dict)
            else a.get(k, 0) + b.get(k, 0) for k in a.keys() | b.keys()}


def _manifest(vmfb: bytes, session: CompilerSession, tgt, report: Report, signature,
              **extra) -> Manifest:
    report.flags = list(session.flags)
    report.vmfb_bytes = len(vmfb)
    report.iree = dict(session.statistics)
    return Manifest(signature=signature, backend=tgt.backend, target=tgt.name, driver=tgt.driver,
                    flags=list(session.flags), dync_version=__version__,
                    report=report.to_json(), **extra)


def _compile_host(job: _Job, graph_error: DyncError | None) -> CompiledModule:
    """Host mode: the sub-DNNs of the model as entry points of one vmfb (see
    `dync.frontends.pytorch.host`). A sub-DNN that fails a later stage (dync's passes, IREE,
    its first call) runs as Python; under `auto`, a model left with none runs in eager."""
    from .frontends.pytorch.host import (
        HostPlan,
        capture_host,
        fallback,
        label,
        root_signature,
    )

    options, report, say, auto = job.options, job.report, job.say, job.options.mode == "auto"
    if job.args is None:
        raise OptionError("a PyTorch model needs example args: dync.compile(model, (x,), ...)")
    signature = root_signature(job.model, job.args, job.dynamic_shapes)
    _buckets(options.buckets, signature)  # the request is checked against the model's own dims
    root_error = graph_error or UnsupportedConstructError("forward", "mode='host' was asked for")
    session = job.session()
    try:
        try:
            with _stage(report, "host capture", say):
                plan = capture_host(job.model, job.args, job.dynamic_shapes, session.context,
                                    root_error, say)
        except DyncError as e:
            if not auto or not _falls_back(e):
                raise
            plan = HostPlan([], [fallback("forward", root_error), fallback("host mode", e)])
        report.frontend = "pytorch"
        with _stage(report, "passes", say):
            for sub in list(plan.subdnns):
                request_versions(sub.program.module,
                                 _buckets(options.buckets, sub.program.signature, check=False),
                                 BUCKET_ATTR)
                set_backend(sub.program.module, job.target.backend)
                try:
                    with _failures_of("passes"):
                        run_pipeline(sub.program.module, options.passes)
                except DyncError as e:
                    plan.subdnns.remove(sub)
                    plan.fallbacks.append(fallback(label(sub.key), e))
                    say(f"host mode: {label(sub.key)} runs as Python ({_one_line(e)[:200]})")
                    continue
                sub.versions = _compiled_versions(sub.program.module)
        vmfb = b""
        if plan.subdnns:
            with _stage(report, "iree", say):
                vmfb, session = _host_vmfb(plan, session, job)
    finally:
        session.close()
    if not plan.subdnns and not auto:
        raise DyncError(
            "host mode found nothing to compile: no submodule or method call made from the "
            "host code takes and returns tensors only, or each failed to compile\n  "
            + "\n  ".join(map(str, plan.fallbacks)))
    compiled = _host_module(job, vmfb, session, signature, plan)
    if plan.subdnns and options.check_first_call:
        failed = _check_subdnns(compiled, plan, job)
        if failed:
            for sub in failed:
                plan.subdnns.remove(sub)
            compiled = _host_module(job, vmfb if plan.subdnns else b"", session, signature,
                                    plan)
        compiled.manifest.report = report.to_json()
    if not plan.subdnns:
        say("nothing compiled: the model runs in eager PyTorch (report.explain() says why)")
    return compiled


def _host_module(job: _Job, vmfb: bytes, session: CompilerSession, signature, plan):
    """The HostModule of `plan`'s sub-DNNs (none: the model runs in eager PyTorch)."""
    from .frontends.pytorch.host import label
    from .runtime.host import HostModule

    report = job.report
    report.mode = "host" if plan.subdnns else "eager"
    report.graph_breaks = [vars(f) for f in plan.fallbacks]
    report.subdnns = [
        {"name": s.name, "callable": label(s.key), "calls": s.calls,
         "inputs": [t.shape_str() for t in s.program.signature.inputs]}
        for s in plan.subdnns
    ]
    report.rdp, report.execution, report.notes = {}, {}, list(report.notes)
    report.rewritten = {}
    for sub in plan.subdnns:
        report.notes.extend(n for n in sub.program.notes if n not in report.notes)
        report.rewritten.update(sub.program.rewritten)
        if sub.pass_counts:
            report.rdp = _add_counts(report.rdp, sub.pass_counts[0])
            report.execution = _add_counts(report.execution, sub.pass_counts[1])
    manifest = _manifest(vmfb, session, job.target, report, signature, entry="",
                         subdnns=[{"name": s.name, "callable": list(s.key),
                                   "signature": s.program.signature.to_json(),
                                   "versions": s.versions}
                                  for s in plan.subdnns])
    return HostModule(job.model, vmfb, manifest)


def _host_vmfb(plan, session: CompilerSession, job: _Job) -> tuple[bytes, CompilerSession]:
    """The vmfb of `plan`'s sub-DNNs linked into one module, and the session that compiled
    it. Where IREE fails on the linked module, each sub-DNN is compiled alone (each in a
    session of its own: the IREE options one asks for must not reach the others) to find
    those IREE cannot compile; they run as Python and the rest are linked again."""
    from .frontends.common import link
    from .frontends.pytorch.host import fallback, label

    report, store, say = job.report, job.store, job.say
    for sub in plan.subdnns:
        sub.pass_counts = (read_coverage(sub.program.module),
                           read_execution(sub.program.module))
    pristine = {s.name: s.program.module.operation.clone() for s in plan.subdnns}
    linked = link({s.name: s.program.module for s in plan.subdnns}, session.context)
    if job.options.dump_ir is not None:
        Path(job.options.dump_ir).write_text(module_text(linked), encoding="utf-8")
    try:
        return _compile_with_iree(session, linked, report, store, say), session
    except DyncError as e:
        linked_error = e
    # Before their context goes; in the form IREE's parser reads back (`module_text`).
    texts = {name: module_text(op, debug_info=True) for name, op in pristine.items()}
    session.close()
    for sub in list(plan.subdnns):
        alone = job.session()
        try:
            module = ir.Module.parse(texts[sub.name], alone.context)
            _compile_with_iree(alone, link({sub.name: module}, alone.context), Report(),
                               store, lambda _: None)
        except DyncError as e:
            plan.subdnns.remove(sub)
            plan.fallbacks.append(fallback(label(sub.key), _staged(e, "iree")))
            say(f"host mode: IREE cannot compile {label(sub.key)}; it runs as Python")
        finally:
            alone.close()
    session = job.session()
    if not plan.subdnns:
        return b"", session
    modules = {s.name: ir.Module.parse(texts[s.name], session.context) for s in plan.subdnns}
    try:
        return _compile_with_iree(session, link(modules, session.context), report, store,
                                  say), session
    except DyncError:  # each compiles alone, not together: all run as Python
        for sub in plan.subdnns:
            plan.fallbacks.append(fallback(label(sub.key), _staged(linked_error, "iree")))
        plan.subdnns.clear()
        return b"", session


def _check_subdnns(compiled, plan, job: _Job) -> list:
    """The sub-DNNs of `plan` whose compiled function disagrees with the calls the example
    made (or fails on them): each gets a fallback at the first call."""
    from .differential import disagreement
    from .frontends.pytorch.host import fallback, label

    failed, report, say = [], job.report, job.say
    with _stage(report, "first call", say):
        for sub in plan.subdnns:
            for arguments, want in sub.examples:
                try:
                    if not _runs_here(compiled, sub.name, report):
                        return failed
                    problem = disagreement(compiled.call_subdnn(sub.name, *arguments), want)
                except InputError:
                    continue  # a call outside the signature runs as Python anyway
                except DyncError as e:
                    problem = f"it fails: {_one_line(e)}"
                if problem:
                    error = CompilationError(f"its first call disagrees with eager PyTorch on "
                                             f"a call the example made: {problem}")
                    plan.fallbacks.append(fallback(label(sub.key), _staged(error, "first call")))
                    say(f"host mode: {label(sub.key)} disagrees with eager; it runs as Python")
                    failed.append(sub)
                    break
    return failed


def _check_first_call(compiled: CompiledModule, job: _Job) -> None:
    """Run `compiled` on the example inputs and compare with eager PyTorch; raise a
    CompilationError (stage "first call") when they disagree or the call fails."""
    import torch

    from .differential import disagreement
    from .frontends.pytorch.host import buffers_restored

    model, args, report, say = job.model, job.args, job.report, job.say
    with buffers_restored(model), torch.no_grad():
        want = model(*args)
    with _stage(report, "first call", say):
        if not _runs_here(compiled, None, report):
            return
        got = compiled(*args)
        problem = disagreement(got, want)
        if problem:
            raise CompilationError("the compiled module disagrees with eager PyTorch on the "
                                   f"example inputs: {problem}")
    compiled.manifest.report = report.to_json()


def _runs_here(compiled: CompiledModule, function: str | None, report: Report) -> bool:
    """Whether `compiled` can run on this machine (a cross-compiled module cannot: then its
    first call is not checked, and the report says so)."""
    try:
        compiled._function(function)
    except ModuleFormatError:
        raise
    except DyncError as e:
        note = f"the first call was not checked: {_one_line(e)[:200]}"
        if note not in report.notes:
            report.notes.append(note)
        return False
    return True


def _staged(error: DyncError, stage: str) -> DyncError:
    if not getattr(error, "stage", None):
        error.stage = stage
    return error


def _one_line(error: Exception) -> str:
    return " ".join(str(error).split())


# IREE 3.13 leaves a `func.call` inside an `scf.if`/`scf.while` region unconverted when its own
# inliner declines the callee. Inlining every branch function beforehand avoids that, but is not
# the default: on some nested-if programs the pre-inlined module fails at run time ("indirect
# buffer reference slot 0 is out range"). So it is the retry for the first failure only.
_UNCONVERTED_CALL = "does not reference a valid function"
INLINE_BRANCHES = ("inline", "symbol-dce", "dync-canonicalize", "dync-verify")


def _cache(cache: bool | str | os.PathLike) -> CompileCache | None:
    if cache is False:
        return None
    directory = default_directory() if cache is True else Path(cache)
    return None if directory is None else CompileCache(directory)


def _compile_with_iree(session: CompilerSession, module, report: Report,
                       store: CompileCache | None, say: Callable[[str], None]) -> bytes:
    """IREE's vmfb for `module`, from the compile cache when it has this exact IR."""
    session.add_module_flags(module)
    if store is None:
        report.cache = "off"
        return _run_iree(session, module, report)
    key = module_key(module, session.flags)
    entry = store.get(key)
    if isinstance(entry, tuple):
        vmfb, meta = entry
        session.statistics = meta.get("statistics", {})
        report.notes.extend(meta.get("notes", []))
        report.passes.extend(meta.get("passes", []))
        report.cache = "hit"
        return vmfb
    if isinstance(entry, str):
        say(f"compile cache: the entry for this module was {entry}; compiling again")
        report.cache = f"rebuilt (the entry was {entry})"
    else:
        report.cache = "miss"
    notes, passes = len(report.notes), len(report.passes)
    vmfb = _run_iree(session, module, report)
    store.put(key, vmfb, {"statistics": session.statistics, "notes": report.notes[notes:],
                          "passes": report.passes[passes:]})
    return vmfb


def _run_iree(session: CompilerSession, module, report: Report) -> bytes:
    pristine = module.operation.clone()  # IREE rewrites the module it compiles in place
    try:
        return session.compile(module)
    except CompilationError as e:
        if not any(_UNCONVERTED_CALL in d for d in e.diagnostics):
            return _without_requested_flags(session, pristine, report, e)
    run_pipeline(pristine, INLINE_BRANCHES)
    report.passes.extend(INLINE_BRANCHES)
    report.notes.append(
        "IREE could not convert a call to a branch function; compiled again with the branch "
        "functions inlined (" + ", ".join(INLINE_BRANCHES) + ")"
    )
    return session.compile(pristine)


def _without_requested_flags(session: CompilerSession, module, report: Report,
                             error: CompilationError) -> bytes:
    """`module` compiled without the IREE options dync's passes asked for (pad fusion, for
    dync-fuse-padding): they are optimizations, and IREE 3.13's code generation fails on some
    of them for some CPUs (fused padding on AVX2: "'memref.alloca' op all stack allocations
    need to be hoisted"). Re-raises `error` where nothing was requested or the session cannot
    drop them."""
    asked = set(read_flags(module))
    requested = [f for f in session.flags if f in asked or f.startswith(TRANSFORM_SPEC)]
    if not requested or not session.drop_requested_flags(requested):
        raise error
    with module.context:
        for attr in (FLAGS_ATTR, COPIED_PADDING_ATTR):
            if attr in module.attributes:
                del module.attributes[attr]
    vmfb = session.compile(module)
    report.notes.append(
        f"IREE failed with the options dync's passes asked for ({', '.join(requested)}): "
        f"{error.diagnostics[0] if error.diagnostics else error}; compiled without them "
        "(padding is copied, and dync-plan-buffers' prediction assumed it was not)")
    return vmfb


def _import(model: Any, args, dynamic_shapes, session: CompilerSession,
            trace_branches: bool = False) -> ImportedProgram:
    if _is_onnx(model):
        if trace_branches:
            raise OptionError("trace_branches records the branches of a PyTorch forward")
        from .frontends.onnx import import_onnx

        return import_onnx(model, session.context, dynamic_shapes=dynamic_shapes)
    import torch

    if isinstance(model, torch.nn.Module):
        if args is None:
            raise OptionError("a PyTorch model needs example args: dync.compile(model, (x,), ...)")
        from .frontends.pytorch.export import import_module

        return import_module(model, args if isinstance(args, tuple | list) else (args,),
                             dynamic_shapes, session.context, trace_branches=trace_branches)
    raise OptionError(
        f"dync.compile takes an nn.Module, an ONNX ModelProto or a path to a .onnx file, "
        f"got {type(model).__name__}"
    )


def _is_onnx(model: Any) -> bool:
    if isinstance(model, str | os.PathLike):
        return True
    return type(model).__name__ == "ModelProto" and type(model).__module__.startswith("onnx")


def _progress_sink(progress: bool | Callable[[str], None]) -> Callable[[str], None]:
    if callable(progress):
        return progress
    if progress:
        return lambda msg: print(f"[dync] {msg}", file=sys.stderr, flush=True)
    return lambda msg: None


@contextmanager
def _stage(report: Report, name: str, say: Callable[[str], None]):
    """Time stage `name`; its errors carry the stage (`_failures_of`)."""
    say(f"{name} ...")
    start = time.perf_counter()
    with _failures_of(name):
        yield
    report.stage_seconds[name] = round(time.perf_counter() - start, 3)
    say(f"{name} done in {report.stage_seconds[name]:.2f}s")


@contextmanager
def _failures_of(stage: str):
    """A dync error raised in the block carries `stage` (`error.stage`); any other exception
    is an internal error of dync's, raised as a CompilationError that carries it too, so that
    `mode="auto"` can fall back past it."""
    try:
        yield
    except DyncError as e:
        _staged(e, stage)
        raise
    except Exception as e:
        error = CompilationError(
            f"dync's {stage} stage failed with an internal error ({type(e).__name__}: "
            f"{_one_line(e)[:300]}); please report it with the model")
        raise _staged(error, stage) from e
