"""What every stage of `dync.compile` shares: the job (model, options, report, progress), the
stage context that names a failure's stage, importing, the first-call check against eager.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any

from .. import targets
from ..backend import CompilerSession
from ..cache import CompileCache
from ..errors import CompilationError, DyncError, InputError, ModuleFormatError, OptionError
from ..frontends.common import ImportedProgram
from ..options import CompileOptions
from ..passes import lower_control_flow
from ..report import Report
from ..runtime.manifest import Manifest
from ..runtime.module import CompiledModule
from ..version import __version__


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

    @property
    def parameters(self) -> list[str]:
        """The names a call may give the model's inputs by (a PyTorch model's
        `DeclaredShapes.keywords`); empty for an ONNX model."""
        return list(getattr(self.dynamic_shapes, "keywords", ()))

    def fresh_report(self) -> Report:
        return Report(backend=self.target.backend, target=self.target.name,
                      passes=list(self.options.passes))

    def session(self) -> CompilerSession:
        return CompilerSession(self.target, self.options.extra_flags)


def _falls_back(error: DyncError) -> bool:
    """Whether `mode="auto"` goes on in host mode after `error`: a failure to compile the
    program, not a mistake in the call (options, inputs)."""
    return not isinstance(error, OptionError | InputError)


def _add_counts(a: dict, b: dict) -> dict:
    return {k: _add_counts(a.get(k, {}), b.get(k, {})) if isinstance(a.get(k, b.get(k)), dict)
            else a.get(k, 0) + b.get(k, 0) for k in a.keys() | b.keys()}


def _manifest(vmfb: bytes, session: CompilerSession, tgt, report: Report, signature,
              **extra) -> Manifest:
    report.flags = list(session.flags)
    report.vmfb_bytes = len(vmfb)
    report.iree = dict(session.statistics)
    writes = session.argument_writes
    report.arguments = ("imported" if writes == "" else "copied" if writes is None
                        else f"copied: {writes}")
    return Manifest(signature=signature, backend=tgt.backend, target=tgt.name, driver=tgt.driver,
                    flags=list(session.flags), dync_version=__version__,
                    report=report.to_json(), reads_arguments_only=writes == "",
                    cpu_features=list(tgt.cpu_features), **extra)


def _check_first_call(compiled: CompiledModule, job: _Job) -> None:
    """Run `compiled` on the example inputs and compare with eager PyTorch; raise a
    CompilationError (stage "first call") when they disagree, the call fails, or it wrote
    into arguments it was handed without a copy. Where they
    disagree, eager runs again with its sorts stable (`stable_sorts`): among equal values
    its own sorts order positions as their kernels leave them, dync's stably."""
    import torch

    from ..differential import disagreement
    from ..frontends.pytorch.host import buffers_restored, copied
    from ..frontends.pytorch.stable_sorts import stable_sorts

    model, args, report, say = job.model, job.args, job.report, job.say

    def eager(stable: bool) -> tuple[Any, Any]:
        # On a copy: the caller's example stays as it was, and the inputs a forward writes
        # in place are compared as written.
        theirs = copied(args)
        with buffers_restored(model), torch.no_grad(), \
                stable_sorts() if stable else nullcontext():
            return model(*theirs), theirs

    def difference(want: tuple[Any, Any]) -> str | None:
        problem = disagreement(got, want[0])
        if not problem and compiled.signature.input_writes:
            problem = disagreement(mine, want[1])
            problem = problem and f"the inputs it writes in place: {problem}"
        return problem

    want = eager(stable=False)
    with _stage(report, "first call", say):
        if not _runs_here(compiled, None, report):
            return
        mine = copied(args)
        got = compiled(*mine)
        problem = difference(want)
        if problem and not difference(eager(stable=True)):
            problem = None
        if not problem and compiled.manifest.reads_arguments_only \
                and not compiled.signature.input_writes and disagreement(mine, args, rtol=0):
            # IREE was handed these tensors themselves (`iree_mends.argument_writes`)
            problem = ("it wrote into its arguments, which dync's reading of IREE's stream "
                       "phase found it does not (a dync bug: please report it)")
        if problem:
            raise CompilationError("the compiled module disagrees with eager PyTorch on the "
                                   f"example inputs: {problem}")
    compiled.manifest.report = report.to_json()


# Timing compiled code against eager: at least MIN_ROUNDS rounds over its example calls, more
# while under TIMING_BUDGET_S; compiled must not be slower than eager by more than SLACK.
MIN_ROUNDS, MAX_ROUNDS, TIMING_BUDGET_S, SLACK = 3, 50, 0.25, 1.1
#: Calls for which eager takes at least this long are compared without SLACK, which is there
#: for the few µs any compiled call costs and that vary from run to run: at milliseconds a
#: compiled part slower on the example is a kernel slower at that size. With SLACK, a stage
#: of the early-exit ResNet-50 10% slower compiled at batch 2 (an AVX-512 Xeon, one thread)
#: stayed compiled and ran 35% slower than eager at batch 4.
EXACT_FROM_S = 1e-3


def slower_than(compiled: Callable, eager: Callable, examples: list[tuple], model: Any,
                eager_floor_s: float = 0.0, slack: float = SLACK) -> str | None:
    """Why `compiled` should give way to `eager`: its calls on `examples` (already checked)
    take longer, by more than `slack` (at all where eager takes EXACT_FROM_S or more a call);
    None where they do not, or where eager takes less than
    `eager_floor_s` a call. Each contestant's time is the least over interleaved rounds;
    `model`'s buffers are restored after."""
    import torch

    from ..frontends.pytorch.host import buffers_restored

    contestants = [compiled, eager]
    best = [float("inf")] * len(contestants)
    start = time.perf_counter()
    with buffers_restored(model), torch.no_grad():
        for rounds in range(1, MAX_ROUNDS + 1):
            for k, run in enumerate(contestants):
                began = time.perf_counter()
                for arguments in examples:
                    run(*arguments)
                best[k] = min(best[k], time.perf_counter() - began)
            if rounds >= MIN_ROUNDS and time.perf_counter() - start > TIMING_BUDGET_S:
                break
    mine, theirs = (t / len(examples) * 1e6 for t in best)
    if theirs >= EXACT_FROM_S * 1e6:
        slack = min(slack, 1.0)
    if mine <= theirs * slack or theirs < eager_floor_s * 1e6:
        return None
    return (f"eager PyTorch is faster on the example's calls: {theirs:.1f} µs a call against "
            f"{mine:.1f} µs compiled")


#: Under `mode="auto"`, one graph gives way only where eager takes at least this long a call
#: on the example: the sizes where kernels decide. Below it the graph is kept: calls differ
#: by fixed costs that vary from run to run and with the machine's load. EAGER_PROBES calls
#: come first, and the rounds only where their least reaches the floor; the rounds' least
#: must reach it too (on a loaded machine torch's threads wait for each other, and a 0.1 ms
#: call took over 10 ms three times in a row).
GRAPH_TIMING_FLOOR_S, EAGER_PROBES = 10e-3, 3
#: One graph gives way when slower than eager at all, not by SLACK: what takes its place is
#: host mode, which keeps compiled each part that is not slower. Measured on an AVX2 EPYC, one
#: thread: the early-exit ResNet-50 of `python -m benchmarks realistic` as one graph, 3-9%
#: slower than eager on its example, ran 0.84-1.13x eager; in host mode (its stem compiled,
#: its stages in eager) 1.02-1.33x.
GRAPH_SLACK = 1.0


def _graph_slower_than_eager(compiled: CompiledModule, job: _Job) -> str | None:
    """Why one graph should give way to host mode under `mode="auto"`: eager PyTorch runs the
    example faster (`slower_than`); None where it does not, where eager takes under
    GRAPH_TIMING_FLOOR_S a call, or where `eager_if_faster` or the first-call check is off."""
    import torch

    from ..frontends.pytorch.host import buffers_restored, copied

    options, model, args = job.options, job.model, job.args
    if not (options.eager_if_faster and options.check_first_call) or args is None \
            or not _runs_here(compiled, None, job.report):
        return None
    args = copied(args)  # a forward may write its inputs in place: not the caller's example
    with buffers_restored(model), torch.no_grad():
        least = float("inf")
        for _ in range(EAGER_PROBES):
            began = time.perf_counter()
            model(*args)
            least = min(least, time.perf_counter() - began)
            if least < GRAPH_TIMING_FLOOR_S:
                return None
    return slower_than(compiled, model, [args], model, GRAPH_TIMING_FLOOR_S, GRAPH_SLACK)


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


def _import(model: Any, args, dynamic_shapes, session: CompilerSession,
            trace_branches: bool = False) -> ImportedProgram:
    if _is_onnx(model):
        if trace_branches:
            raise OptionError("trace_branches records the branches of a PyTorch forward")
        from ..frontends.onnx import import_onnx

        return import_onnx(model, session.context, lower=lower_control_flow,
                           dynamic_shapes=dynamic_shapes, args=args)
    import torch

    if isinstance(model, torch.nn.Module):
        if args is None:
            raise OptionError("a PyTorch model needs example args: dync.compile(model, (x,), ...)")
        from ..frontends.pytorch.export import import_module

        return import_module(model, args if isinstance(args, tuple | list) else (args,),
                             dynamic_shapes, session.context, lower=lower_control_flow,
                             trace_branches=trace_branches, input_writes=True)
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
