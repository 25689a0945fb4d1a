"""Timing shared by the host and GPU benchmarks: medians of contestants taking turns, and
geo-means of ratios."""

from __future__ import annotations

import math
import random
import statistics
import time

# What a contestant's call returns when it cannot take an input (a frozen baseline).
FAILED = object()


def median_ms(fns, inputs, repeats: int) -> list[float]:
    """Median latency of each of `fns` over `inputs`, the functions taking turns input by input
    in a shuffled order (fixed seed), so that drift of the machine (clock, caches, other load)
    falls on all of them alike and none always runs right after another: eager PyTorch's
    OpenMP threads keep spinning for a while after a call, slowing whatever runs next. A call
    that returns `FAILED` (a baseline that cannot take that input) is left out."""
    times: list[list[float]] = [[] for _ in fns]
    order = list(enumerate(fns))
    shuffle = random.Random(0).shuffle
    for _ in range(repeats):
        for args in inputs:
            shuffle(order)
            for k, fn in order:
                start = time.perf_counter()
                out = fn(*args)
                elapsed = (time.perf_counter() - start) * 1e3
                if out is not FAILED:
                    times[k].append(elapsed)
    return [statistics.median(t) if t else float("nan") for t in times]


def geomean(values) -> float:
    """Geometric mean of the finite positive `values` (NaN if there are none)."""
    logs = [math.log(v) for v in values if v == v and 0 < v < math.inf]
    return math.exp(sum(logs) / len(logs)) if logs else float("nan")
