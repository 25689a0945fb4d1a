"""Timing compiled code against eager PyTorch, where `eager_if_faster` lets eager take over:
one graph under `mode="auto"` (`graph_slower_than_eager`), host mode's sub-DNNs
(`slower_than`). The graph is timed on the example and on the example grown along its
dynamic dims (`grown_example`): IREE's kernels and eager's scale differently with the batch,
and a graph no slower at the example's batch of 2 ran 0.76x eager at 4.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from ..errors import DyncError, InputError
from ..runtime.module import CompiledModule
from ..signature import Signature, evaluate
from .stages import _Job, _one_line, _runs_here

# Timing compiled code against eager: at least MIN_ROUNDS rounds over its example calls, more
# while under TIMING_BUDGET_S; compiled must not be slower than eager by more than SLACK.
MIN_ROUNDS, MAX_ROUNDS, TIMING_BUDGET_S, SLACK = 3, 50, 0.25, 1.1


def slower_than(compiled: Callable, eager: Callable, examples: list[tuple], model: Any,
                eager_floor_s: float = 0.0, slack: float = SLACK,
                calls: str = "the example's calls") -> str | None:
    """Why `compiled` should give way to `eager`: its calls on `examples` (already checked)
    take longer, by more than `slack`; None where they do not, or where eager takes less than
    `eager_floor_s` a call. Each contestant's time is the least over interleaved rounds;
    `model`'s buffers are restored after. `calls` names the examples in the reason."""
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
    if mine <= theirs * slack or theirs < eager_floor_s * 1e6:
        return None
    return (f"eager PyTorch is faster on {calls}: {theirs:.1f} µs a call against "
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
#: The graph is timed again on the example grown GROWTH times along its dynamic dims (up to
#: their declared maximum), where eager's call would take at most GROWN_BUDGET_S; not where
#: that leaves under MIN_GROWTH. Measured on an AVX2 EPYC, one thread: ResNet-50 with its
#: exits as one graph, example batch 2, no slower than eager there, ran 0.76x eager at 4;
#: its third stage alone 0.83x at 2 and 0.62x at 8.
GROWTH, MIN_GROWTH, GROWN_BUDGET_S = 4.0, 2.0, 2.0


def graph_slower_than_eager(compiled: CompiledModule, job: _Job) -> str | None:
    """Why one graph should give way to host mode under `mode="auto"`: eager PyTorch runs the
    example faster, or the example grown along its dynamic dims (`slower_than`); None where
    it does not, where eager takes under GRAPH_TIMING_FLOOR_S a call, or where
    `eager_if_faster` or the first-call check is off."""
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
    slower = slower_than(compiled, model, [args], model, GRAPH_TIMING_FLOOR_S, GRAPH_SLACK)
    grown = None if slower else _grown(args, compiled.signature, least)
    if grown is None:
        return slower
    try:
        with buffers_restored(model), torch.no_grad():
            model(*copied(grown[0]))
    except Exception:  # noqa: BLE001 - eager cannot run the grown example: nothing to time
        return None
    try:
        return slower_than(compiled, model, [grown[0]], model, 0.0, GRAPH_SLACK,
                           f"the example grown to {grown[1]}")
    except DyncError as e:
        job.report.notes.append(f"one graph was not timed on the example grown to {grown[1]}: "
                                f"{_one_line(e)[:200]}")
        return None


def grown_subdnn_calls(job: _Job, plan: Any, signature: Signature
                       ) -> tuple[dict[str, list[tuple]], str]:
    """Host mode: the calls of each of `plan`'s sub-DNNs in a run on the example grown along
    its dynamic dims (`signature`: the model's, as declared), where their sizes differ from
    the example's calls, and the grown sizes; ({}, "") where nothing grows, where eager
    takes under GRAPH_TIMING_FLOOR_S a call on the example (as for one graph) or
    `eager_if_faster` is off."""
    import torch

    from ..frontends.pytorch.host import buffers_restored, calls_on, copied

    model, args = job.model, job.args
    if not job.options.eager_if_faster or args is None or not signature.symbols:
        return {}, ""
    with buffers_restored(model), torch.no_grad():
        began = time.perf_counter()
        model(*copied(args))
        least = time.perf_counter() - began
    grown = _grown(args, signature, least) if least >= GRAPH_TIMING_FLOOR_S else None
    if grown is None:
        return {}, ""
    examples = {sub.name: [_shapes(a) for a, _ in sub.examples] for sub in plan.subdnns}
    calls = {name: found for name, found in calls_on(model, grown[0], plan).items()
             if found and [_shapes(a) for a in found] != examples[name]}
    return calls, grown[1]


def _shapes(arguments: tuple) -> list:
    from torch.utils import _pytree as pytree

    return [tuple(getattr(a, "shape", ())) for a in pytree.tree_leaves(arguments)]


def _grown(args: tuple, signature: Signature, least: float) -> tuple[tuple, str] | None:
    """The example grown (`grown_example`) as far as eager's call on it, `least` seconds,
    lets it (GROWTH, GROWN_BUDGET_S, MIN_GROWTH), and its sizes as text ("batch=8")."""
    growth = min(GROWTH, GROWN_BUDGET_S / max(least, 1e-9))
    grown = grown_example(args, signature, growth) if growth >= MIN_GROWTH else None
    if grown is None:
        return None
    return grown[0], ", ".join(f"{name}={value}" for name, value in sorted(grown[1].items()))


def grown_example(args: tuple, signature: Signature, growth: float
                  ) -> tuple[tuple, dict[str, int]] | None:
    """`args` grown along their dynamic dims, and the symbols' values there: each symbol an
    input's dim binds grows by the same ratio (their product's `growth`, as far as each
    symbol's maximum lets it), each tensor is tiled along the dims that grow (its values
    repeat: a batch's samples, a sequence's tokens). None where nothing grows, a leaf is not
    a tensor, or the grown tensors fall outside `signature`."""
    import torch
    from torch.utils import _pytree as pytree

    flat, spec = pytree.tree_flatten(args)
    tensors = [leaf for leaf in flat if leaf is not None]
    if not all(isinstance(t, torch.Tensor) for t in tensors):
        return None
    try:
        bound = signature.check_inputs(tensors)
    except InputError:
        return None
    free = [name for name, value in bound.items()
            if 0 < value < signature.symbols[name].max]
    if not free:
        return None
    ratio = growth ** (1 / len(free))
    values = dict(bound)
    for name in free:
        values[name] = min(signature.symbols[name].max, math.ceil(bound[name] * ratio))
    grown = iter([_tiled(t, s.shape, values) for t, s in zip(tensors, signature.inputs,
                                                              strict=True)])
    flat = [None if leaf is None else next(grown) for leaf in flat]
    if any(leaf is False for leaf in flat):
        return None
    result = pytree.tree_unflatten(flat, spec)
    try:
        signature.check_inputs([leaf for leaf in flat if leaf is not None])
    except InputError:
        return None
    return result, {name: values[name] for name in free}


def _tiled(tensor: Any, shape: tuple, values: dict[str, int]) -> Any:
    """`tensor` tiled along each dim whose size `values` grows (False where the tensor is
    empty along it)."""
    import torch

    for axis, dim in enumerate(shape):
        if isinstance(dim, int):
            continue
        size, old = evaluate(dim, values), tensor.shape[axis]
        if size is None:  # a dim of no symbol an input binds: none of them grew
            continue
        if old == 0 and size != 0:
            return False
        if size != old:
            rows = torch.arange(size, device=tensor.device) % old
            tensor = tensor.index_select(axis, rows)
    return tensor
