"""The IREE stage: the compile cache, IREE's compile, and the retries when IREE rejects what
dync's passes asked of it (flags dropped, branch functions inlined).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from ..backend import CompilerSession
from ..cache import CompileCache, default_directory, module_key
from ..dialects.dync_ir import COPIED_PADDING_ATTR, FLAGS_ATTR, read_flags
from ..errors import CompilationError
from ..passes import run_pipeline
from ..report import Report
from ..runtime.manifest import TRANSFORM_SPEC

# IREE 3.13 leaves a `func.call` inside an `scf.if`/`scf.while` region unconverted when its own
# inliner declines the callee. Inlining every branch function beforehand avoids that, but is not
# the default: on some nested-if programs the pre-inlined module fails at run time ("indirect
# buffer reference slot 0 is out range"). So it is the retry for the first failure only.
_UNCONVERTED_CALL = "does not reference a valid function"


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
