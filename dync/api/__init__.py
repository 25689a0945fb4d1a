"""`dync.compile`: frontend -> dync IR -> passes -> IREE -> `CompiledModule`."""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..options import CompileOptions
from ..runtime.module import CompiledModule
from .build import compiled_or_cached
from .iree import _cache
from .pieces import add_pieces
from .stages import _is_onnx, _Job, _progress_sink


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
    specialize: bool | Mapping[str, Sequence[int]] | None = None,
    buckets: Mapping[str, Sequence[int]] | None = None,
    cache: bool | str | os.PathLike = True,
    check_first_call: bool = True,
    eager_if_faster: bool = True,
    threads: int = 1,
) -> CompiledModule:
    """Compile a PyTorch `nn.Module` or an ONNX model (path or `ModelProto`).

    Args:
      model: an `nn.Module` (then `args` are example inputs) or an ONNX model.
      args: example inputs for a PyTorch model (tuple of tensors). For ONNX, optional unless
        the model has sequence or optional inputs: the example's list lengths and present
        optionals fix them (calls must match; a list for a sequence, None for an absent
        optional), and sequence ops then run at compile time.
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
        `dync.passes.DEFAULT_PIPELINE`. `dync.passes.LOW_MEMORY_PIPELINE` trades speed for
        memory: convolutions read their zero padding in place (`dync-fuse-padding`). The
        passes every module needs for right answers (`dync.passes.REQUIRED_PASSES`: lowerings
        IREE lacks, mends of its miscompilations, the IR checks) are added where a list
        leaves them out (`dync.passes.with_required_passes`), so `passes=()` is the pipeline
        without dync's optimizations; the IR after a prefix of the pipeline alone is
        `dync.passes.run_pipeline`'s (or `dync-opt`'s) to show.
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
        version at the example inputs' sizes (host mode: for each sub-DNN, one at each size
        the example called it with, at most 16); False: none. None (default): none in graph
        mode, where on IREE 3.13's CPU backend they did not pay off on the benchmark suite
        (see BENCHMARKS.md); in host mode, a small sub-DNN (64 torch ops at most) the example
        calls 3 times or more gets versions at the sizes it was called with twice or more
        (the 4 most frequent): a static version's IREE command buffer is recorded once, not
        on every call (a small sub-DNN's invoke 6.7 -> 4.3 us). In
        host mode a mapping names the sub-DNNs' own dims (the report's sub-DNN signatures).
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
      eager_if_faster: host mode: with the first call checked, each sub-DNN is also timed
        against eager PyTorch on the calls the example made (interleaved, the least of
        several rounds), and again with its dynamic dims twice as long (within their ranges,
        the example's values repeated), and one that runs slower compiled at either (by more
        than 10%, or at all where eager takes 1 ms or more a call) runs as Python,
        a graph break of stage "timing" with both times (a one-layer call on one row costs a
        few µs in eager, ~10 in any compiled module's call). Under mode="auto" one graph is
        timed the same way where eager takes at least 10 ms a call on the example
        (`GRAPH_TIMING_FLOOR_S`), and one slower than eager gives way to host mode (IREE's
        full sort, 8 x 2048 rows: 19 ms against eager's 1). False keeps every graph and
        sub-DNN that compiles.
      threads: CPU threads the module runs on (llvm-cpu). 1 (default): IREE's local-sync
        device, code for one thread. More: IREE's local-task device (its workers, one per
        core by default) with each dispatch's code distributed for that many threads; the
        module's driver is recorded in its manifest. It pays on some modules and not others
        with IREE 3.13 (2 cores: an early-exit ResNet-50's first exit over 4 images 55.7 ->
        37.9 ms, BERT-base over 512 tokens 628 -> 661 ms; BENCHMARKS.md "Realistic sizes,
        2 threads"), hence one by default.

    Compilation is a chain of stages, each of which may fail: import (rewrite and export),
    dync's passes, IREE, the first call. With `mode="auto"` a failure of the whole graph at
    any of them falls back to host mode, where a sub-DNN that fails runs as Python, and a
    model left with nothing compiled runs in eager PyTorch; `report.graph_breaks` and
    `report.explain()` list each fallback with its stage, the model's file:line, the
    construct and the internal reason. Where the trace holds for only part of a dim's
    declared range (a branch on a size), `mode="auto"` also compiles the rest as further
    traces (`CompiledModule.pieces`, `dync.api.pieces`).
    """
    options = CompileOptions.normalized(
        backend=backend, target=target, mode=mode, passes=passes, extra_flags=extra_flags,
        dump_ir=dump_ir, trace_branches=trace_branches, specialize=specialize, buckets=buckets,
        cache=cache, check_first_call=check_first_call, eager_if_faster=eager_if_faster,
        threads=threads,
        onnx=_is_onnx(model))
    args = None if args is None else _as_tuple(args)
    if _check_torch_model(model, args):
        from ..frontends.pytorch.declared_shapes import DeclaredShapes

        dynamic_shapes = DeclaredShapes.of(model.forward, args, dynamic_shapes)
    job = _Job(model, args, dynamic_shapes, options,
               _progress_sink(progress), _cache(options.cache))
    compiled = compiled_or_cached(job)
    if options.mode == "auto":
        add_pieces(compiled, job)
        _warn_of_failures(compiled.report, model)
    return _with_eager_fallback(compiled, model, options.mode)


# Stages whose failure is dync's or IREE's, not the model's: what reached them was accepted.
FAILING_STAGES = ("passes", "iree", "first call")


def _warn_of_failures(report, model: Any) -> None:
    """Under `auto`, code that dync accepted but then failed to compile or run right (at
    its passes, IREE or the first-call check) runs as Python: correct, but slower than asked
    for, so say it (an unsupported construct or a timing choice is only in the report, unless
    the model is in training mode, which the warning names)."""
    training = _trains(model)  # any fallback may come of it (a batch norm's statistics' update)
    failed = [b for b in report.graph_breaks if b.get("stage") in FAILING_STAGES or training]
    if not failed:
        return
    first = failed[0]
    reason = " ".join(str(first.get("reason", "")).split())[:300]
    where = f" ({first['source']})" if first.get("source") not in (None, "", "-") else ""
    if training:
        hint = "The model is in training mode: call model.eval() before dync.compile"
    elif first["stage"] == "first call":
        hint = ("A model whose results are random needs check_first_call=False; otherwise "
                "please report it")
    else:
        hint = "Please report it"
    others = f" and {len(failed) - 1} more" if len(failed) > 1 else ""
    warnings.warn(
        f"dync: {first['region']}{where}{others} failed at stage {first['stage']} and "
        f"run{'s' if not others else ''} in eager PyTorch (mode {report.mode}): {reason}. "
        f"{hint}. report.explain() lists every fallback; mode='graph' "
        "raises instead.", RuntimeWarning, stacklevel=3)


def _trains(model: Any) -> bool:
    """Whether `model` has a module in training mode that runs otherwise at inference: a
    batch norm (its statistics' update) or a dropout (its random draws)."""
    if "torch" not in sys.modules:
        return False
    import torch

    if not isinstance(model, torch.nn.Module):
        return False
    kinds = (torch.nn.modules.batchnorm._BatchNorm, torch.nn.modules.dropout._DropoutNd)
    return any(m.training and isinstance(m, kinds) for m in model.modules())


def _with_eager_fallback(compiled, model, mode: str):
    """Under `auto`, a PyTorch model's compiled module runs a call IREE fails on (a
    `ModuleRunError` on inputs the first-call check did not see) in eager PyTorch, with a
    warning and a note in its report."""
    if mode == "auto" and "torch" in sys.modules and hasattr(compiled, "fallback"):
        import torch

        if isinstance(model, torch.nn.Module):
            compiled.fallback = _eager(model)
            for piece in getattr(compiled, "pieces", ()):
                piece.fallback = compiled.fallback
    return compiled


def _eager(model):
    """`model` called as the compiled module is: torch tensors, or numpy arrays in and out."""
    import torch

    from ..runtime.host import with_numpy_arrays

    def run(*args):
        with torch.no_grad():
            return with_numpy_arrays(model, args)

    return run


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
    from ..frontends.pytorch.export import check_model

    check_model(model, args)
    return True
