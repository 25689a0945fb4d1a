"""The buffers of `dync-plan-buffers`' plan (a tensor's bytes, lifetime and place in the arena;
a function's plan), and IREE 3.13's allocation model they are compared with.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import sympy
from iree.compiler import ir

from ...analysis.sampling import Sampler, dominant, max_of

# Buffers that hold no value of the program: a call's frame, IREE's padded and transposed
# copies of an op's input. Nothing writes over them in place, and they never escape.
SCRATCH = ("frame", "pad", "transpose")


@dataclass(eq=False)
class Buffer:
    size: sympy.Expr
    start: int
    end: int
    op: ir.Operation | None
    result: int = 0                 # which result of `op` (carried: which carried value)
    kind: str = "result"            # "result", "carried" (a loop's), "frame" (a call's), "pad",
                                    # "transpose" (IREE's NHWC copy of a convolution's input)
    in_place: list = field(default_factory=list)  # (op, result) that reuse this buffer
    offset: sympy.Expr | None = None
    size_v: np.ndarray | None = None
    offset_v: np.ndarray | None = None
    into: Buffer | None = None      # the buffer this one was merged into (in place)
    escapes: bool = False           # outlives its execution segment (IREE: an external alloca)
    iree: sympy.Expr | None = None  # its size in IREE's allocation model (a frame's differs)
    iree_v: np.ndarray | None = None
    padded: bool = False            # holds a windowed op's zero-padded input


def _find(b: Buffer) -> Buffer:
    while b.into is not None:
        b = b.into
    return b


@dataclass
class FunctionPlan:
    name: str
    buffers: list[Buffer]
    peak: sympy.Expr                # live bytes at the worst point, results included
    arena: sympy.Expr               # the plan's arena size (>= peak)
    inner: sympy.Expr               # the peak less the results: a call's frame
    iree: sympy.Expr                # the peak IREE's allocator reaches (see `_iree_model`)
    iree_inner: sympy.Expr          # the same in IREE's model
    params: list[tuple | None]      # each argument's dims (None: not a tensor / unknown)
    results: list[tuple | None]     # each result's dims
    returns_argument: list[int | None]  # results that are (views of) an argument
    unknown: int
    aliases: int


def _int64(value) -> int:
    """`value` as an i64 attribute can hold it (symbols with unbounded ranges give huge
    extremes)."""
    return max(-(2**63), min(2**63 - 1, int(value)))


def _expand(e: sympy.Expr) -> sympy.Expr:
    return e if e.has(sympy.Max, sympy.Min) else sympy.expand(e)


def _substitute(e: sympy.Expr, mapping: Mapping[sympy.Symbol, sympy.Expr]) -> sympy.Expr:
    if not mapping or not (e.free_symbols & set(mapping)):
        return e
    if e.has(sympy.Max, sympy.Min):
        with sympy.evaluate(False):
            return e.xreplace(dict(mapping))
    return sympy.expand(e.xreplace(dict(mapping)))


def _live_max(buffers: list[Buffer], positions: tuple[int, int], sampler: Sampler,
              iree: bool = False) -> sympy.Expr:
    """The max over `positions` (first, last) of the bytes of the buffers live there (their
    sizes in IREE's model when `iree`)."""
    lo, hi = positions
    buffers = [b for b in buffers if b.start <= hi and b.end >= lo]
    if not buffers:
        return sympy.Integer(0)
    delta = np.zeros((hi - lo + 2, len(sampler.points)))
    for b in buffers:
        v = b.iree_v if iree else b.size_v
        delta[max(b.start, lo) - lo] += v
        delta[min(b.end, hi) - lo + 1] -= v
    live = np.cumsum(delta, axis=0)[: hi - lo + 1]
    rows, first = np.unique(live, axis=0, return_index=True)
    terms = []
    for k in dominant(rows):
        p = int(first[k]) + lo
        terms.append(sympy.Add(*[b.iree if iree else b.size
                                 for b in buffers if b.start <= p <= b.end]))
    return max_of(terms, sampler)


def _align(n: int, to: int = 64) -> int:
    return (n + to - 1) // to * to


def _greedy_slab(slices: list[tuple[int, int, int]]) -> int:
    """The slab IREE's `--iree-stream-layout-slices` packs static slices (start, end, bytes)
    into: in order of their first use (the order IREE lists them), each goes into the
    tightest gap below a reservation whose lifetime overlaps its own, else on top of all of
    them. Greedy strip packing leaves holes, so the slab can exceed the most bytes live at
    once: the two agree only when lifetimes nest."""
    placed: list[tuple[int, int, int, int]] = []   # (offset, bytes, start, end) by offset
    top = 0
    for start, end, size in sorted(slices, key=lambda s: s[0]):   # stable: ties keep order
        size = _align(size)
        best, best_fit, current = None, None, 0
        for offset, taken, s, e in placed:
            if e < start or end < s:
                continue
            aligned = _align(current)
            # The fit tested from the aligned offset but recorded from the unaligned one, as
            # IREE's packStaticSlicesGreedily does (a near-tie between gaps goes its way).
            if aligned + size <= offset and (best_fit is None or offset - aligned < best_fit):
                best, best_fit = aligned, offset - current
            current = max(current, offset + taken)
        if best is None:
            best = _align(current)
        placed.append((best, size, start, end))
        placed.sort(key=lambda r: r[0])
        top = max(top, best + size)
    return _align(top)


def _overlap(lives: list[tuple[int, int]]) -> int:
    """The most intervals [start, end] that hold one point."""
    events = sorted([(s, 0) for s, _ in lives] + [(e, 1) for _, e in lives])
    most = now = 0
    for _, kind in events:
        now += 1 if kind == 0 else -1
        most = max(most, now)
    return most
