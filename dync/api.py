"""`dync.compile`: frontend -> dync IR -> passes -> IREE -> `CompiledModule`."""

from __future__ import annotations

import itertools
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from . import __version__, targets
from .backend import CompilerSession
from .cache import CompileCache, default_directory, model_key, module_key
from .dialects.dync import COPIED_PADDING_ATTR, FLAGS_ATTR, read_flags, set_backend
from .errors import CompilationError, DyncError, UnsupportedConstructError
from .frontends.common import ImportedProgram
from .passes import DEFAULT_PIPELINE, run_pipeline
from .passes.bucket import REQUEST_ATTR as BUCKET_REQUEST
from .passes.bucket import read_buckets
from .passes.plan_buffers import read_peak
from .passes.plan_execution import module_text, read_execution
from .passes.rdp import read_coverage
from .passes.specialize import read_versions, request_versions
from .passes.split_subdnns import read_subdnns
from .report import Report
from .runtime.manifest import TRANSFORM_SPEC, Manifest
from .runtime.module import CompiledModule, _to_numpy, from_parts

MODES = ("auto", "graph", "host")


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
    """
    if mode not in MODES:
        raise DyncError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    if mode == "host" and _is_onnx(model):
        raise DyncError("mode='host' runs a PyTorch model's own Python; an ONNX model is one graph")
    tgt = targets.resolve(backend, target)
    _check_torch_model(model, args)
    say = _progress_sink(progress)
    steps = tuple(DEFAULT_PIPELINE if passes is None else passes)
    report = Report(backend=tgt.backend, target=tgt.name, passes=list(steps))
    store = _cache(cache)
    options = {"backend": tgt.backend, "target": tgt.name, "mode": mode, "passes": list(steps),
               "extra_flags": list(extra_flags), "trace_branches": trace_branches,
               "specialize": specialize if isinstance(specialize, bool)
               else {k: sorted(v) for k, v in specialize.items()},
               "buckets": None if buckets is None else {k: sorted(v) for k, v in buckets.items()}}
    front = None if dump_ir else _model_key(store, model, args, dynamic_shapes, options)
    if front is not None:
        hit = _load_cached(store, front, model, report, say)
        if hit is not None:
            say("compile cache: hit for this model (import, passes and IREE skipped)")
            return hit
    compiled = _compile(model, args, dynamic_shapes, tgt, mode, steps, report, say, extra_flags,
                        dump_ir, trace_branches, store, specialize, buckets)
    if front is not None:
        store.put(front, compiled.vmfb, {"manifest": compiled.manifest.to_json()})
    return compiled


def _check_torch_model(model, args) -> None:
    """A PyTorch model's refusals that need no import (`frontends.pytorch.export`)."""
    if _is_onnx(model) or args is None or "torch" not in sys.modules:
        return
    import torch

    if isinstance(model, torch.nn.Module):
        from .frontends.pytorch.export import check_model

        check_model(model, args if isinstance(args, tuple | list) else (args,))


def _model_key(store: CompileCache | None, model, args, dynamic_shapes, options) -> str | None:
    if store is None or args is None or _is_onnx(model):
        return None
    import torch

    if not isinstance(model, torch.nn.Module):
        return None
    return model_key(model, tuple(args) if isinstance(args, tuple | list) else (args,),
                     dynamic_shapes, options)


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


def _compile(model, args, dynamic_shapes, tgt, mode, steps, report: Report, say, extra_flags,
             dump_ir, trace_branches, store, specialize, buckets) -> CompiledModule:
    session = CompilerSession(tgt, tuple(extra_flags))
    try:
        with _stage(report, "import", say):
            program, graph_error = None, None
            try:
                if mode != "host":
                    program = _import(model, args, dynamic_shapes, session, trace_branches)
            except UnsupportedConstructError as e:
                if mode == "graph" or _is_onnx(model) or trace_branches:
                    raise
                graph_error = e
                say(f"not one graph ({e.construct} at {e.source or '-'}): falling back to host mode")
        if program is None:
            return _compile_host(model, args, dynamic_shapes, session, steps, report, say,
                                 graph_error, tgt, dump_ir, store, buckets)
        report.frontend = program.frontend
        report.notes.extend(program.notes)
        report.rewritten = dict(program.rewritten)
        report.branch_sites = list(program.branch_sites)
        report.symbols = {k: [s.min, s.max] for k, s in program.signature.symbols.items()}
        request_versions(program.module, _versions(specialize, program.signature, args))
        request_versions(program.module, _buckets(buckets, program.signature), BUCKET_REQUEST)
        set_backend(program.module, tgt.backend)
        with _stage(report, "passes", say):
            run_pipeline(program.module, steps)
        versions = _compiled_versions(program.module)
        report.versions = versions
        report.rdp = read_coverage(program.module)
        report.execution = read_execution(program.module)
        peak = read_peak(program.module)
        report.peak = {} if peak is None else {
            "formula": peak.formula, "iree": peak.iree, "arena": peak.arena,
            "min": peak.min, "max": peak.max, "versions": peak.versions}
        report.subdnns = read_subdnns(program.module)
        if dump_ir is not None:
            Path(dump_ir).write_text(module_text(program.module), encoding="utf-8")
        with _stage(report, "iree", say):
            vmfb = _compile_with_iree(session, program.module, report, store, say)
    finally:
        session.close()
    return CompiledModule(vmfb, _manifest(vmfb, session, tgt, report, program.signature,
                                          versions=versions))


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
        raise DyncError(f"{option} names {', '.join(unknown)}, which are not dynamic dims of "
                        f"this model (its dims: {', '.join(sorted(signature.symbols))})")
    names = sorted(set(sizes) & set(signature.symbols))
    combos = list(itertools.product(*(sorted(set(sizes[n])) for n in names)))
    if len(combos) > MAX_VERSIONS:
        raise DyncError(f"{option} asks for {len(combos)} versions; at most {MAX_VERSIONS} "
                        "(each is a full copy of the program for IREE to compile)")
    for name in names:
        spec = signature.symbols[name]
        outside = [v for v in sizes[name] if not spec.min <= v <= spec.max]
        if outside:
            raise DyncError(f"{option}: {name} = {outside[0]} is outside its declared range "
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


def _compile_host(model, args, dynamic_shapes, session: CompilerSession, steps, report: Report,
                  say, graph_error, tgt, dump_ir, store, buckets) -> CompiledModule:
    """Host mode: the sub-DNNs of `model` as entry points of one vmfb (see
    `dync.frontends.pytorch.host`)."""
    from .frontends.common import link
    from .frontends.pytorch.host import capture_host, label, root_signature
    from .runtime.host import HostModule

    if args is None:
        raise DyncError("a PyTorch model needs example args: dync.compile(model, (x,), ...)")
    args = tuple(args) if isinstance(args, tuple | list) else (args,)
    signature = root_signature(model, args, dynamic_shapes)
    _buckets(buckets, signature)  # the request is checked against the model's own dims
    root_error = graph_error or UnsupportedConstructError("forward", "mode='host' was asked for")
    with _stage(report, "host capture", say):
        plan = capture_host(model, args, dynamic_shapes, session.context, root_error, say)
    if not plan.subdnns:
        if graph_error is not None:  # auto: host mode would not compile anything either
            raise graph_error
        raise DyncError(
            "host mode found nothing to compile: no submodule or method call made from the "
            "host code takes and returns tensors only\n  " + "\n  ".join(map(str, plan.fallbacks))
        )
    report.frontend, report.mode = "pytorch", "host"
    report.graph_breaks = [vars(f) for f in plan.fallbacks]
    report.subdnns = [
        {"name": s.name, "callable": label(s.key), "calls": s.calls,
         "inputs": [t.shape_str() for t in s.program.signature.inputs]}
        for s in plan.subdnns
    ]
    for sub in plan.subdnns:
        report.notes.extend(sub.program.notes)
        report.rewritten.update(sub.program.rewritten)
    with _stage(report, "passes", say):
        for sub in plan.subdnns:
            request_versions(sub.program.module,
                             _buckets(buckets, sub.program.signature, check=False), BUCKET_REQUEST)
            set_backend(sub.program.module, tgt.backend)
            run_pipeline(sub.program.module, steps)
            sub.versions = _compiled_versions(sub.program.module)
            report.rdp = _add_counts(report.rdp, read_coverage(sub.program.module))
            report.execution = _add_counts(report.execution, read_execution(sub.program.module))
    linked = link({s.name: s.program.module for s in plan.subdnns}, session.context)
    if dump_ir is not None:
        Path(dump_ir).write_text(module_text(linked), encoding="utf-8")
    with _stage(report, "iree", say):
        vmfb = _compile_with_iree(session, linked, report, store, say)
    manifest = _manifest(vmfb, session, tgt, report, signature, entry="",
                         subdnns=[{"name": s.name, "callable": list(s.key),
                                   "signature": s.program.signature.to_json(),
                                   "versions": s.versions}
                                  for s in plan.subdnns])
    return HostModule(model, vmfb, manifest)


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
            raise DyncError("trace_branches records the branches of a PyTorch forward")
        from .frontends.onnx import import_onnx

        return import_onnx(model, session.context, dynamic_shapes=dynamic_shapes)
    import torch

    if isinstance(model, torch.nn.Module):
        if args is None:
            raise DyncError("a PyTorch model needs example args: dync.compile(model, (x,), ...)")
        from .frontends.pytorch.export import import_module

        return import_module(model, args if isinstance(args, tuple | list) else (args,),
                             dynamic_shapes, session.context, trace_branches=trace_branches)
    raise DyncError(
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
    say(f"{name} ...")
    start = time.perf_counter()
    yield
    report.stage_seconds[name] = round(time.perf_counter() - start, 3)
    say(f"{name} done in {report.stage_seconds[name]:.2f}s")
