"""`dync.verify`: differential check of a compiled model against eager PyTorch (DyCL §6
metrics). The module is not named `verify`, so that importing it never hides the function.

The reference is the model exactly as the user wrote it. Per input: its outputs, the branch
trace of dync's rewritten `forward` (the decisions it takes, recorded while it runs eagerly)
and that forward's own outputs, the compiled outputs and — for a module compiled with
`trace_branches` — the compiled module's own branch trace, the raw error and the final
decision of each. Over all inputs: η, the rate of inputs whose decision differs, and δ, log10 of
the largest raw error (DyCL's δ = log10(max‖C(x) − V(x)‖ + 1e-10)); the same two for the
rewritten forward against the original, so that a rewrite bug and a compile bug are told
apart.
"""

from __future__ import annotations

import collections
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch.utils import _pytree as pytree

from .frontends.pytorch.rewrite import record_branches, rewritten
from .runtime.module import CompiledModule

EPSILON = 1e-10


@dataclass
class InputResult:
    error: float
    eager_decision: Any
    compiled_decision: Any
    path: tuple[tuple[str, bool], ...]
    # The compiled module's own branch trace (a module compiled with `trace_branches`).
    compiled_path: tuple[tuple[str, bool], ...] | None = None
    # The rewritten forward (what dync compiles) against the model as written: its largest
    # raw error and its decision, None where not measured.
    rewrite_error: float | None = None
    rewrite_decision: Any = None

    @property
    def agrees(self) -> bool:
        return self.eager_decision == self.compiled_decision

    @property
    def rewrite_agrees(self) -> bool | None:
        return None if self.rewrite_error is None else self.eager_decision == self.rewrite_decision

    @property
    def same_path(self) -> bool | None:
        return None if self.compiled_path is None else self.compiled_path == self.path


@dataclass
class Verification:
    results: list[InputResult] = field(default_factory=list)

    @property
    def eta(self) -> float:
        """Rate of inputs whose final decision differs between eager (the model as written)
        and compiled."""
        if not self.results:
            return 0.0
        return sum(not r.agrees for r in self.results) / len(self.results)

    @property
    def delta(self) -> float:
        """log10 of the largest raw output error over all inputs (-10 when bit-exact)."""
        worst = max((r.error for r in self.results), default=0.0)
        return math.log10(worst + EPSILON)

    @property
    def rewrite_eta(self) -> float | None:
        """η of dync's rewritten forward against the model as written: a rewrite bug shows
        here, a compile bug only in `eta` (None where not measured)."""
        checked = [r.rewrite_agrees for r in self.results if r.rewrite_agrees is not None]
        return sum(not a for a in checked) / len(checked) if checked else None

    @property
    def rewrite_delta(self) -> float | None:
        """δ of the rewritten forward against the model as written (None where not measured)."""
        errors = [r.rewrite_error for r in self.results if r.rewrite_error is not None]
        return math.log10(max(errors) + EPSILON) if errors else None

    @property
    def paths(self) -> int:
        """Distinct branch traces the eager program took over the inputs."""
        return len({tuple(d for _, d in r.path) for r in self.results})

    @property
    def path_mismatches(self) -> int | None:
        """Inputs whose compiled branch trace differs from eager's (None without traces)."""
        checked = [r.same_path for r in self.results if r.same_path is not None]
        return sum(not same for same in checked) if checked else None

    def __str__(self) -> str:
        text = (f"{len(self.results)} inputs: eta = {self.eta:.3f}, delta = {self.delta:.2f}, "
                f"{self.paths} distinct paths")
        if self.rewrite_eta is not None:
            text += (f"; rewritten forward against the original: eta = {self.rewrite_eta:.3f}, "
                     f"delta = {self.rewrite_delta:.2f}")
        if self.path_mismatches is not None:
            text += f", compiled branch trace differs on {self.path_mismatches}"
        return text


def default_decision(output: Any) -> Any:
    """argmax of the first floating output's last dim; the values of an integer output."""
    leaves = [torch.as_tensor(t) for t in pytree.tree_leaves(output)]
    for t in leaves:
        if t.is_floating_point():
            return tuple(t.argmax(-1).flatten().tolist()) if t.dim() else (round(float(t), 4),)
    return tuple(tuple(t.flatten().tolist()) for t in leaves)


#: How far a compiled result may be from eager's, relative to the largest magnitude of eager's
#: (dync.compile's first-call check, the fuzzer).
AGREEMENT_RTOL = 1e-3


def _same_nesting(a: pytree.TreeSpec, b: pytree.TreeSpec) -> bool:
    """Whether two output trees nest alike: namedtuples alike by name and fields (a class
    made in `forward` is a new one on every call)."""
    if a == b:
        return True
    if a.type is not b.type or a.num_children != b.num_children:
        return False
    if a.type is collections.namedtuple:
        if (a.context.__qualname__, a.context._fields) != (b.context.__qualname__,
                                                            b.context._fields):
            return False
    elif a.context != b.context:
        return False
    return all(map(_same_nesting, a.children(), b.children()))


def disagreement(got: Any, want: Any, rtol: float = AGREEMENT_RTOL) -> str | None:
    """What differs between compiled results `got` and eager's `want` (structure, shape,
    dtype, values beyond `rtol`), or None."""
    got_leaves, got_tree = pytree.tree_flatten(got)
    want_leaves, want_tree = pytree.tree_flatten(want)
    if not _same_nesting(got_tree, want_tree):
        return f"results nested as {got_tree}, eager's as {want_tree}"
    for i, (g, w) in enumerate(zip(got_leaves, want_leaves, strict=True)):
        if not isinstance(w, torch.Tensor):
            if g != w:
                return f"result {i} is {g!r}, eager's {w!r}"
            continue
        g = torch.as_tensor(g)
        if tuple(g.shape) != tuple(w.shape) or g.dtype != w.dtype:
            return (f"result {i} is {g.dtype}{list(g.shape)}, eager's "
                    f"{w.dtype}{list(w.shape)}")
        if not w.numel():
            continue
        g64, w64 = g.detach().double(), w.detach().double()
        same_nan = torch.isnan(g64) == torch.isnan(w64)
        if not bool(same_nan.all()):
            return f"result {i} has NaNs where eager's has none, or the other way"
        infinite = torch.isinf(g64) | torch.isinf(w64)
        if not bool((g64[infinite] == w64[infinite]).all()):
            return f"result {i} has infinities where eager's has none, or of the other sign"
        finite = torch.isfinite(g64) & torch.isfinite(w64)
        error = float((g64 - w64)[finite].abs().max()) if bool(finite.any()) else 0.0
        scale = float(w64[finite].abs().max()) if bool(finite.any()) else 0.0
        if not error <= rtol * max(1.0, scale):
            return f"result {i} differs by up to {error:.3g} (eager's largest value {scale:.3g})"
    return None


def _max_error(got: Any, want: Any) -> float:
    got_leaves, want_leaves = pytree.tree_leaves(got), pytree.tree_leaves(want)
    if len(got_leaves) != len(want_leaves):
        return math.inf
    worst = 0.0
    for g, w in zip(got_leaves, want_leaves, strict=True):
        g = np.asarray(torch.as_tensor(g).detach().to(torch.float64))
        w = np.asarray(torch.as_tensor(w).detach().to(torch.float64))
        if g.shape != w.shape:
            return math.inf
        if g.size:
            g, w = g.reshape(-1), w.reshape(-1)
            diff = np.abs(g - w)
            diff[np.isnan(g) & np.isnan(w)] = 0.0  # NaN where eager has NaN agrees
            if np.isnan(diff).any():  # a NaN on one side only is as wrong as it gets
                return math.inf
            worst = max(worst, float(np.max(diff)))
    return worst


def verify(
    model: torch.nn.Module,
    compiled: CompiledModule | Callable,
    inputs: Iterable[Sequence[Any] | torch.Tensor],
    *,
    decision: Callable[[Any], Any] = default_decision,
) -> Verification:
    """Run `model` exactly as written and `compiled` on every input; return η, δ and branch
    traces. dync's rewritten forward (what it compiles) runs too, for the branch trace and to
    tell a rewrite bug (`rewrite_eta`, `rewrite_delta`) from a compile bug."""
    cases = [(args,) if isinstance(args, torch.Tensor) else tuple(args) for args in inputs]
    with torch.no_grad():
        wanted = [model(*args) for args in cases]
        traces, rewritten_outputs = [], []
        with rewritten(model):
            for args in cases:
                with record_branches() as trace:
                    rewritten_outputs.append(model(*args))
                traces.append(tuple(trace))
        verification = Verification()
        for args, want, trace, again in zip(cases, wanted, traces, rewritten_outputs,
                                            strict=True):
            got = compiled(*args)
            compiled_trace = getattr(compiled, "last_trace", None)
            verification.results.append(InputResult(
                error=_max_error(got, want),
                eager_decision=decision(want),
                compiled_decision=decision(got),
                path=trace,
                compiled_path=None if compiled_trace is None else tuple(compiled_trace),
                rewrite_error=_max_error(again, want),
                rewrite_decision=decision(again),
            ))
    return verification
