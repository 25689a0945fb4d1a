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

from ..errors import DyncError
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
        piece_job = _Job(job.model, args, job.dynamic_shapes, job.options, job.say, job.store)
        try:
            piece = compiled_or_cached(piece_job)
        except DyncError as e:
            notes.append(f"{spec.name} = {size}: not compiled ({_one_line(e)[:200]}); such "
                         "calls run in eager PyTorch")
            return
        got = piece.signature.symbols.get(spec.name)
        if piece.report.mode != "in-graph" or got is None or not got.min <= size <= got.max:
            notes.append(f"{spec.name} = {size}: its trace is not one graph over that size; "
                         "such calls run in eager PyTorch")
            return
        compiled.pieces.append(piece)
        covered.append((got.min, got.max))
        notes.append(f"{spec.name} in [{got.min}, {got.max}]: a second trace (at {spec.name} = "
                     f"{size}) compiled as compiled.pieces[{len(compiled.pieces) - 1}], which "
                     "runs such calls; save() keeps only the first module")


def _first_uncovered(declared: tuple[int, int], covered: list[tuple[int, int]]) -> int | None:
    """The size in `declared` outside every range of `covered` closest to one of them (the
    first beyond a range's end, or the last before its start), None where all are covered."""
    low, high = declared
    candidates = sorted({v for a, b in covered for v in (a - 1, b + 1) if low <= v <= high})
    for v in candidates:
        if not any(a <= v <= b for a, b in covered):
            return v
    return None
