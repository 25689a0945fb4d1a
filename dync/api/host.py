"""Host mode: the model's Python on the host, its captured calls compiled as sub-DNN entry points
of one module; a sub-DNN that fails a stage runs as Python (a graph break in the report).
"""

from __future__ import annotations

from pathlib import Path

from iree.compiler import ir

from ..backend import CompilerSession
from ..dialects.assembly import module_text
from ..dialects.attributes import BUCKET_ATTR
from ..dialects.dync_ir import set_backend
from ..dialects.versions import request_versions
from ..dialects.walk import nested_ops
from ..errors import CompilationError, DyncError, InputError, OptionError, UnsupportedConstructError
from ..passes import lower_control_flow, run_pipeline
from ..passes.plan_execution import read_execution
from ..passes.rdp import read_coverage
from ..report import Report
from ..runtime.module import CompiledModule
from .graph import MAX_VERSIONS, _buckets, _combinations, _compiled_versions
from .iree import _compile_with_iree
from .stages import (
    _add_counts,
    _failures_of,
    _falls_back,
    _Job,
    _manifest,
    _one_line,
    _runs_here,
    _stage,
    _staged,
    slower_than,
)


def _compile_host(job: _Job, graph_error: DyncError | None) -> CompiledModule:
    """Host mode: the sub-DNNs of the model as entry points of one vmfb (see
    `dync.frontends.pytorch.host`). A sub-DNN that fails a later stage (dync's passes, IREE,
    its first call) runs as Python; under `auto`, a model left with none runs in eager."""
    from ..frontends.pytorch.host import (
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
                                    root_error, lower_control_flow, say)
        except DyncError as e:
            if not auto or not _falls_back(e):
                raise
            plan = HostPlan([], [fallback("forward", root_error), fallback("host mode", e)])
        report.frontend = "pytorch"
        with _stage(report, "passes", say):
            for sub in list(plan.subdnns):
                request_versions(sub.program.module, _specialized(options.specialize, sub))
                request_versions(sub.program.module,
                                 _buckets(options.buckets, sub.program.signature, check=False),
                                 BUCKET_ATTR)
                set_backend(sub.program.module, job.target.backend,
                            job.target.vector_isa)
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


# `specialize=None` (the default) in host mode: a small sub-DNN (at most AUTO_OPS torch ops)
# the example calls at least AUTO_CALLS times gets a version at each size it was called with
# at least twice, the AUTO_VERSIONS most frequent. A static version's command buffer is
# recorded once (IREE memoizes it) instead of on every call: tree_lstm's node_forward (20 ops,
# 7 small dispatches) 6.7 -> 4.3 us an invoke, the whole model 0.49 -> 0.44 ms a tree. A
# larger sub-DNN spends its calls computing, and each version is another compile of it; a
# size seen once (a decoder's growing length) is no hot size.
AUTO_CALLS, AUTO_VERSIONS, AUTO_OPS = 3, 4, 64


def _specialized(specialize, sub) -> list[dict[str, int]]:
    """The versions of host-mode sub-DNN `sub` that `specialize` (`compile`'s) asks for:
    None: for a small sub-DNN the example called repeatedly, the sizes it called it with
    twice or more (see AUTO_CALLS); True: each size it was called with (at most
    MAX_VERSIONS); a mapping: the combinations of the listed sizes of its own dims."""
    if specialize is None:
        if sub.calls < AUTO_CALLS or _torch_ops(sub.program.module) > AUTO_OPS:
            return []
        return [sizes for sizes, count in sub.sizes if count >= 2][:AUTO_VERSIONS]
    if specialize is True:
        return [sizes for sizes, _ in sub.sizes][:MAX_VERSIONS]
    if not specialize:
        return []
    return _combinations("specialize", specialize, sub.program.signature, check=False)


def _torch_ops(module) -> int:
    return sum(1 for op in nested_ops(module.operation) if op.name.startswith("torch.aten."))


def _host_module(job: _Job, vmfb: bytes, session: CompilerSession, signature, plan):
    """The HostModule of `plan`'s sub-DNNs (none: the model runs in eager PyTorch)."""
    from ..frontends.pytorch.host import label
    from ..runtime.host import HostModule

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
                         parameters=job.parameters,
                         subdnns=[{"name": s.name, "callable": list(s.key),
                                   "signature": s.program.signature.to_json(),
                                   "versions": s.versions,
                                   **({"keywords": s.keywords.to_json()} if s.keywords else {})}
                                  for s in plan.subdnns])
    return HostModule(job.model, vmfb, manifest)


def _host_vmfb(plan, session: CompilerSession, job: _Job) -> tuple[bytes, CompilerSession]:
    """The vmfb of `plan`'s sub-DNNs linked into one module, and the session that compiled
    it. Where IREE fails on the linked module, each sub-DNN is compiled alone (each in a
    session of its own: the IREE options one asks for must not reach the others) to find
    those IREE cannot compile; they run as Python and the rest are linked again."""
    from ..frontends.common import link
    from ..frontends.pytorch.host import fallback, label

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
    made (or fails on them), each with a fallback at the first call, and those that agree
    but run slower than eager on those calls (`_slower_than_eager`), each with one at
    "timing"."""
    import torch

    from ..differential import disagreement
    from ..frontends.pytorch.host import (
        buffers_restored,
        copied,
        eager_call,
        fallback,
        label,
        source_line,
    )
    from ..frontends.pytorch.stable_sorts import stable_sorts

    failed, report, say = [], job.report, job.say
    with _stage(report, "first call", say):
        for sub in plan.subdnns:
            ran = []
            for arguments, want in sub.examples:
                try:
                    if not _runs_here(compiled, sub.name, report):
                        return failed
                    got = compiled.call_subdnn(sub.name, *arguments)
                    problem = disagreement(got, want)
                    if problem:  # eager's sorts order ties as they come, dync's stably
                        with buffers_restored(job.model), torch.no_grad(), stable_sorts():
                            stable = eager_call(job.model, sub)(*copied(arguments))
                        problem = problem if disagreement(got, stable) else None
                    ran.append(arguments)
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
            else:
                slower = _slower_than_eager(compiled, sub, ran, job) if ran else None
                if slower:
                    plan.fallbacks.append(fallback(label(sub.key), _staged(
                        CompilationError(slower), "timing"), source_line(job.model, sub.key)))
                    say(f"host mode: {label(sub.key)} runs as Python ({slower})")
                    failed.append(sub)
    return failed


def _slower_than_eager(compiled, sub, examples: list[tuple], job: _Job) -> str | None:
    """Why sub-DNN `sub` should run as Python: its compiled calls on `examples` (the
    example's, already checked) take longer than eager PyTorch's (`stages.slower_than`);
    None where they do not or `eager_if_faster` is off."""
    from ..frontends.pytorch.host import eager_call

    if not job.options.eager_if_faster:
        return None
    mine, theirs = (lambda *a: compiled.call_subdnn(sub.name, *a)), eager_call(job.model, sub)
    why = slower_than(mine, theirs, examples, job.model)
    if why:
        return why
    larger = at_a_larger_size(examples, compiled.subdnn_signature(sub.name))
    if not larger:
        return None
    try:
        why = slower_than(mine, theirs, larger, job.model)
    except Exception:  # noqa: BLE001 - sizes it was not traced for: the example's verdict
        return None
    return why and f"at twice the example's dynamic sizes, {why}"


def at_a_larger_size(examples: list[tuple], signature) -> list[tuple]:
    """`examples` with every dim that `signature` binds to a symbol alone made twice as long
    (within the symbol's range; the example's values repeated along it, as
    `guards.example_at` does for a model's inputs); empty where no symbol can grow or a dim
    ties symbols into an expression (its size would not follow)."""
    out = []
    for arguments in examples:
        larger = _twice(arguments, signature)
        if larger is None:
            return []
        out.append(larger)
    return out


def _twice(arguments: tuple, signature) -> tuple | None:
    import torch

    from ..frontends.pytorch.guards import repeated_to

    tensors = [(k, spec, value) for k, (spec, value) in
               enumerate(zip(signature.inputs, arguments, strict=False))
               if isinstance(value, torch.Tensor) and value.dim() == len(spec.shape)]
    sizes: dict[str, int] = {}
    for _, spec, value in tensors:
        for dim, size in zip(spec.shape, value.shape, strict=True):
            if isinstance(dim, str):
                if dim not in signature.symbols:
                    return None  # an expression of symbols
                sizes[dim] = size
    grown = {name: min(signature.symbols[name].max, 2 * size) for name, size in sizes.items()}
    if grown == sizes:
        return None
    larger = list(arguments)
    for k, spec, value in tensors:
        for axis, dim in enumerate(spec.shape):
            if isinstance(dim, str) and value.shape[axis] and grown[dim] != value.shape[axis]:
                value = repeated_to(value, axis, grown[dim])
        larger[k] = value.contiguous()
    return tuple(larger)
