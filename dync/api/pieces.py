"""Modules for the parts of a dim's declared range that the first trace does not hold for.

torch.export traces a branch on a size (`if x.shape[0] > 32:`) or arithmetic on it
(`max(1, n // 2)`) for the example's side only, and `frontends.pytorch.guards` finds the
range of the dim where that trace holds. Under `mode="auto"` the rest of the declared range
is compiled too: a trace at a size there (the example's values repeated along the dim) gives
a second module, and so on while some part is left (`MAX_PIECES`); the first module runs a
call outside its range in the piece that takes its sizes (`CompiledModule.pieces`), and in
eager PyTorch only where none does. Only one narrowed dim is handled: several would leave a
part of their box that is not an interval.
"""

from __future__ import annotations

import numpy as np

from ..errors import DyncError, InputError
from ..output_tree import leaves
from ..runtime import CompiledModule
from .build import compiled_or_cached
from .stages import _Job, _one_line

# Modules compiled besides the first, at most.
MAX_PIECES = 3


def add_pieces(compiled: CompiledModule, job: _Job) -> None:
    """Give `compiled` (a PyTorch model's, in-graph) a module for each other part of its one
    narrowed dim's declared range; notes in its report."""
    if compiled.report.mode != "in-graph" or job.args is None \
            or not isinstance(compiled, CompiledModule):
        return
    narrowed = [s for s in compiled.signature.symbols.values() if s.declared is not None]
    if len(narrowed) != 1:
        return
    from ..frontends.pytorch.guards import example_at

    spec = narrowed[0]
    covered = [(spec.min, spec.max)]
    notes = compiled.manifest.report.setdefault("notes", [])
    while len(compiled.pieces) < MAX_PIECES:
        size = _first_uncovered(spec.declared, covered)
        if size is None:
            return
        args = example_at(job.dynamic_shapes, job.args, spec.name, size)
        if args is None:
            return
        job.say(f"{spec.name} = {size} lies outside the range the trace holds for: "
                "tracing there")
        try:
            piece, span = _piece_at(job, spec.name, size, args)
        except DyncError as e:
            notes.append(f"{spec.name} = {size}: not compiled ({_one_line(e)[:200]}); such "
                         "calls run in eager PyTorch")
            return
        if span is None:
            notes.append(f"{spec.name} = {size}: its trace is not one graph over that size; "
                         "such calls run in eager PyTorch")
            return
        compiled.pieces.append(piece)
        covered.append(span)
        where = f"in [{span[0]}, {span[1]}]" if span[0] < span[1] else f"= {size}"
        notes.append(f"{spec.name} {where}: a second trace (at {spec.name} = {size}) compiled "
                     f"as compiled.pieces[{len(compiled.pieces) - 1}], which runs such calls; "
                     "save() keeps only the first module")


def _piece_at(job: _Job, name: str, size: int, args: tuple
              ) -> tuple[CompiledModule, tuple[int, int] | None]:
    """The module traced on `args` (where dim `name` is `size` long) and the range of `name`
    it takes, None where that range misses `size`. Traced with the declared dims first; then,
    where that fails, with `name` static: torch fixes a size where a guard of broadcasting
    holds at every other one (`n - 1 != 1` at n = 2, "specialized it to be a constant"),
    and that size alone is a piece too."""
    from ..frontends.pytorch.guards import with_static

    piece = compiled_or_cached(_Job(job.model, args, job.dynamic_shapes, job.options, job.say,
                                    job.store))
    span = _span(piece, name, args, size)
    if span is None or not span[0] <= size <= span[1]:
        piece = compiled_or_cached(_Job(job.model, args, with_static(job.dynamic_shapes, name),
                                        job.options, job.say, job.store))
        span = _span(piece, name, args, size)
    return piece, span if span is not None and span[0] <= size <= span[1] else None


def _span(piece: CompiledModule, name: str, args: tuple, size: int) -> tuple[int, int] | None:
    """The sizes of dim `name` that `piece` (compiled in one graph, traced on `args`, where
    the dim is `size` long) takes: its symbol's range, or `size` alone where the dim is
    static there; None where it is not one graph or does not take `args`."""
    if piece.report.mode != "in-graph":
        return None
    got = piece.signature.symbols.get(name)
    if got is not None:
        return got.min, got.max
    try:
        piece.signature.check_inputs([np.asarray(a) for a in leaves(args)])
    except InputError:
        return None
    return size, size


def _first_uncovered(declared: tuple[int, int], covered: list[tuple[int, int]]) -> int | None:
    """The size in `declared` outside every range of `covered` closest to one of them (the
    first beyond a range's end, or the last before its start), None where all are covered."""
    low, high = declared
    candidates = sorted({v for a, b in covered for v in (a - 1, b + 1) if low <= v <= high})
    for v in candidates:
        if not any(a <= v <= b for a, b in covered):
            return v
    return None
