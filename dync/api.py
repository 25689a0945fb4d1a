"""`dync.compile`: frontend -> dync IR -> passes -> IREE -> `CompiledModule`."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from . import __version__, targets
from .backend import CompilerSession
from .errors import CompilationError, DyncError
from .frontends.common import ImportedProgram
from .passes import DEFAULT_PIPELINE, run_pipeline
from .report import Report
from .runtime.manifest import Manifest
from .runtime.module import CompiledModule

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
        module and refuses anything it cannot capture (with the source line); "auto" is the
        same today and will fall back to host mode per region; "host" is not available yet.
      passes: dync IR passes to run (names or upstream pipeline elements); default
        `dync.passes.DEFAULT_PIPELINE`.
      extra_flags: additional IREE compiler flags.
      progress: True to print each stage to stderr, or a callable receiving stage messages.
      dump_ir: write the dync IR handed to IREE (after the passes) to this file.
    """
    if mode not in MODES:
        raise DyncError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    if mode == "host":
        raise DyncError(
            "mode='host' (sub-DNNs driven from Python) is not available in this version; "
            "use mode='auto' or 'graph', which capture the whole program in one module"
        )
    tgt = targets.resolve(backend, target)
    say = _progress_sink(progress)
    steps = tuple(DEFAULT_PIPELINE if passes is None else passes)
    report = Report(backend=tgt.backend, target=tgt.name, passes=list(steps))
    session = CompilerSession(tgt, tuple(extra_flags))
    try:
        with _stage(report, "import", say):
            program = _import(model, args, dynamic_shapes, session)
        report.frontend = program.frontend
        report.notes.extend(program.notes)
        report.rewritten = dict(program.rewritten)
        report.symbols = {k: [s.min, s.max] for k, s in program.signature.symbols.items()}
        with _stage(report, "passes", say):
            run_pipeline(program.module, steps)
        if dump_ir is not None:
            Path(dump_ir).write_text(program.module.operation.get_asm(), encoding="utf-8")
        with _stage(report, "iree", say):
            vmfb = _compile_with_iree(session, program.module, report)
    finally:
        session.close()
    report.flags = list(session.flags)
    report.vmfb_bytes = len(vmfb)
    manifest = Manifest(
        signature=program.signature,
        backend=tgt.backend,
        target=tgt.name,
        driver=tgt.driver,
        flags=list(session.flags),
        dync_version=__version__,
        report=report.to_json(),
    )
    return CompiledModule(vmfb, manifest)


# IREE 3.13 leaves a `func.call` inside an `scf.if`/`scf.while` region unconverted when its own
# inliner declines the callee. Inlining every branch function beforehand avoids that, but is not
# the default: on some nested-if programs the pre-inlined module fails at run time ("indirect
# buffer reference slot 0 is out range"). So it is the retry for the first failure only.
_UNCONVERTED_CALL = "does not reference a valid function"
INLINE_BRANCHES = ("inline", "symbol-dce", "dync-canonicalize", "dync-verify")


def _compile_with_iree(session: CompilerSession, module, report: Report) -> bytes:
    pristine = module.operation.clone()  # IREE rewrites the module it compiles in place
    try:
        return session.compile(module)
    except CompilationError as e:
        if not any(_UNCONVERTED_CALL in d for d in e.diagnostics):
            raise
    run_pipeline(pristine, INLINE_BRANCHES)
    report.passes.extend(INLINE_BRANCHES)
    report.notes.append(
        "IREE could not convert a call to a branch function; compiled again with the branch "
        "functions inlined (" + ", ".join(INLINE_BRANCHES) + ")"
    )
    return session.compile(pristine)


def _import(model: Any, args, dynamic_shapes, session: CompilerSession) -> ImportedProgram:
    if _is_onnx(model):
        from .frontends.onnx import import_onnx

        return import_onnx(model, session.context, dynamic_shapes=dynamic_shapes)
    import torch

    if isinstance(model, torch.nn.Module):
        if args is None:
            raise DyncError("a PyTorch model needs example args: dync.compile(model, (x,), ...)")
        from .frontends.pytorch import import_module

        return import_module(model, args if isinstance(args, tuple | list) else (args,),
                             dynamic_shapes, session.context)
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
