"""Graph mode: the whole program as one module (import, dync's passes, IREE), with the
shape-specialized versions and size buckets asked for.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..dialects.assembly import module_text
from ..dialects.attributes import BUCKET_ATTR
from ..dialects.dync_ir import read_subdnns, set_backend
from ..dialects.versions import read_versions, request_versions
from ..errors import OptionError
from ..passes import run_pipeline
from ..passes.bucket import read_buckets
from ..passes.plan_buffers import read_peak
from ..passes.plan_execution import read_execution
from ..passes.rdp import read_coverage
from ..runtime.module import CompiledModule, _to_numpy
from .iree import _compile_with_iree
from .stages import _check_first_call, _import, _Job, _manifest, _stage


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
        set_backend(program.module, job.target.backend, job.target.vector_isa)
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
                                              program.signature, versions=versions,
                                              parameters=job.parameters))
    if program.frontend == "pytorch" and not options.trace_branches and options.check_first_call:
        _check_first_call(compiled, job)
        compiled.manifest.report = report.to_json()  # with the first call's seconds and notes
    return compiled


MAX_VERSIONS = 16


def _versions(specialize, signature, args) -> list[dict[str, int]]:
    """The symbol assignments to compile versions for (see `compile`'s `specialize`)."""
    if specialize is None or specialize is False or not signature.symbols:
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
