"""The IREE stage: the compile cache, IREE's compile, and the retries when IREE rejects what
dync's passes asked of it (flags dropped, branch functions inlined).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from ..backend import CompilerSession
from ..cache import CompileCache, default_directory, module_key
from ..dialects.dync_ir import COPIED_PADDING_ATTR, FLAGS_ATTR, read_flags, request_flags
from ..errors import CompilationError
from ..passes import run_pipeline
from ..report import Report
from ..runtime.manifest import TRANSFORM_SPEC

# IREE 3.13 leaves a `func.call` inside an `scf.if`/`scf.while` region unconverted when its own
# inliner declines the callee. Inlining every branch function beforehand avoids that, but is not
# the default: on some nested-if programs the pre-inlined module fails at run time ("indirect
# buffer reference slot 0 is out range"). So it is the retry for the first failure only.
_UNCONVERTED_CALL = "does not reference a valid function"
# Options another way of asking for the same optimization can stand in for. IREE 3.13's data
# tiling from dispatch creation (what --iree-opt-data-tiling picks) fails to generate code
# for a direct strided convolution over a dynamic batch packed for the next matmul in one
# dispatch ("'affine.delinearize_index' op no basis element may be statically non-positive",
# ResNet-50); started in global optimization it compiles (and ran ResNet-50's stages 1-4 at
# batch 2 in 124 ms, against 153 without data tiling).
_ALTERNATIVES = {"--iree-opt-data-tiling": "--iree-global-opt-data-tiling"}


INLINE_BRANCHES = ("inline", "symbol-dce", "dync-canonicalize", "dync-check-ir")


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
    key = module_key(module, session.flags, session.target.cpu_features)
    entry = store.get(key)
    if isinstance(entry, tuple):
        vmfb, meta = entry
        session.statistics = meta.get("statistics", {})
        session.recall_argument_writes(meta.get("argument_writes"))
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
    store.put(key, vmfb, {"statistics": session.statistics,
                          "argument_writes": session.argument_writes, "notes": report.notes[notes:],
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
    inlined = pristine.clone()
    try:
        return session.compile(pristine)
    except CompilationError as e:
        # The inlined module may meet what the first attempt never reached (an early-exit
        # ResNet-50 over a dynamic batch: data tiling beside a direct strided convolution).
        return _without_requested_flags(session, inlined, report, e)


def _without_requested_flags(session: CompilerSession, module, report: Report,
                             error: CompilationError) -> bytes:
    """`module` compiled without the IREE options dync's passes asked for that IREE fails on
    (pad fusion, for dync-fuse-padding; data tiling): they are optimizations, and IREE 3.13's
    code generation fails on some of them for some models and CPUs (fused padding on AVX2, or
    beside data tiling: "'memref.alloca' op all stack allocations need to be hoisted"). The
    newest requests go first, one at a time, so that an earlier one survives a later one's
    failure (ResNet-50: data tiling kept, pad fusion dropped); an option with another way to
    ask for the same (`_ALTERNATIVES`) is tried that way before it goes. Re-raises `error`
    where nothing was requested or the session cannot drop them."""
    asked = read_flags(module)
    spec = [f for f in session.flags if f.startswith(TRANSFORM_SPEC)]
    ordered = [f for f in asked if f in session.flags]
    if not ordered and not spec:
        raise error
    attempts = []  # (options asked for, options dropped)
    for keep in range(len(ordered) - 1, -1, -1) if ordered else [0]:
        if ordered and ordered[keep] in _ALTERNATIVES:
            attempts.append(([*ordered[:keep], _ALTERNATIVES[ordered[keep]]], ordered[keep:]))
        attempts.append((ordered[:keep], ordered[keep:]))
    failure = error
    for requested, dropped in attempts:
        if not session.drop_requested_flags([*dropped, *spec, *_ALTERNATIVES.values()]):
            raise error
        candidate = module.clone()  # IREE rewrites the module it compiles in place
        with candidate.context:
            for attr in (FLAGS_ATTR, COPIED_PADDING_ATTR):
                if attr in candidate.attributes:
                    del candidate.attributes[attr]
            request_flags(candidate, requested)
        try:
            vmfb = session.compile(candidate)
        except CompilationError as e:
            failure = e
            continue
        kept = f" (kept {', '.join(requested)})" if requested else ""
        report.notes.append(
            f"IREE failed with the options dync's passes asked for ({', '.join(ordered + spec)}):"
            f" {_first(failure)}; compiled without {', '.join([*dropped, *spec])}{kept} (where "
            "padding is copied, dync-plan-buffers' prediction assumed it was not)")
        return vmfb
    raise failure


def _first(error: CompilationError) -> str:
    return error.diagnostics[0] if error.diagnostics else str(error)
