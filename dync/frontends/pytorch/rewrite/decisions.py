"""Branch decisions of rewritten code: which way a static branch went (recorded for `dync.verify`,
or replayed from a frozen path: the tracing baseline), and the compiled module's own branch trace
(`trace_branches`), recorded while exporting.
"""

from __future__ import annotations

import contextvars
from collections.abc import Sequence
from typing import Any

import torch

from .lists import TensorList, new_list

# A list collecting (site, decision) of every static branch while it is set (dync.verify).
_branch_trace: contextvars.ContextVar[list | None] = contextvars.ContextVar("dync_trace", default=None)


class record_branches:
    """Context manager collecting the branch decisions of eager runs of rewritten code."""

    def __enter__(self) -> list[tuple[str, bool]]:
        self.trace: list[tuple[str, bool]] = []
        self._token = _branch_trace.set(self.trace)
        return self.trace

    def __exit__(self, *exc) -> None:
        _branch_trace.reset(self._token)


# Decisions to replay instead of evaluating predicates (the tracing baseline: one frozen path).
_replay: contextvars.ContextVar[list | None] = contextvars.ContextVar("dync_replay", default=None)


class replay_branches:
    """Context manager: every branch takes the next of `decisions`, whatever its predicate —
    what a tracing compiler does with the path of its example input."""

    def __init__(self, decisions: Sequence[bool]):
        self.decisions = list(decisions)

    def __enter__(self) -> None:
        self._token = _replay.set(self.decisions)

    def __exit__(self, *exc) -> None:
        _replay.reset(self._token)


def _replayed() -> bool | None:
    decisions = _replay.get()
    if decisions is None:
        return None
    if not decisions:
        raise RuntimeError("the replayed path is shorter than this execution")
    return decisions.pop(0)


def _tracing() -> bool:
    return torch.compiler.is_exporting()


def _as_int(value: Any) -> int | None:
    """`value` as a Python int when it is one or a symbolic int known to be constant."""
    if isinstance(value, torch.SymInt):
        return value.node.maybe_as_int()
    return int(value) if isinstance(value, int) else None


def _is_dynamic(value: Any) -> bool:
    """Whether `value` is only known when the program runs: a traced tensor or size, or a
    list whose length depends on the data (its truth is `len(v) > 0`)."""
    return _tracing() and (isinstance(value, torch.Tensor | torch.SymBool | torch.SymInt
                                      | torch.SymFloat)
                           or isinstance(value, TensorList) and value.bounded)


def _as_pred(value: Any) -> torch.Tensor:
    if isinstance(value, TensorList):  # `if v:` of a list of data-dependent length
        return value.length > 0
    if isinstance(value, torch.Tensor):
        if value.numel() != 1:
            raise RuntimeError(
                f"a condition must be a single value, got a tensor of shape {list(value.shape)}"
            )
        return value.reshape(()).to(torch.bool)
    return torch.scalar_tensor(value, dtype=torch.bool)


def _static_decision(pred: Any, site: str) -> bool | None:
    """The branch to take when it is known now (a static predicate, or a replayed path),
    recorded in the branch trace; None when the predicate is traced (a HOP is needed)."""
    frozen = _replayed()
    if frozen is None and _is_dynamic(pred):
        _record_compiled(site, pred)
        return None
    decision = bool(pred) if frozen is None else frozen
    trace = _branch_trace.get()
    if trace is not None:
        trace.append((site, decision))
    _record_compiled(site, decision)
    return decision


class BranchRecorder:
    """While exporting with `recording_compiled_branches`: every decision, static or traced,
    appended as `2 * site + taken` to a `TensorList` that the module returns — the compiled
    module's own branch trace, in the order the eager trace lists them."""

    def __init__(self):
        self.sites: list[str] = []
        self.codes = new_list("<branch trace>")

    def restart(self) -> None:
        """A new trace of the forward starts a new branch trace."""
        self.__init__()

    def append(self, site: str, taken: Any) -> None:
        if site not in self.sites:
            self.sites.append(site)
        code = 2 * self.sites.index(site)
        if _is_dynamic(taken):
            self.codes.append(_as_pred(taken).to(torch.int64) + code)
        else:
            self.codes.append(torch.scalar_tensor(code + bool(taken), dtype=torch.int64))

    def trace(self) -> torch.Tensor:
        if not self.codes.bounded and not list.__len__(self.codes):
            return torch.zeros((0,), dtype=torch.int64)
        return torch.stack(self.codes)


_recorder: contextvars.ContextVar[BranchRecorder | None] = contextvars.ContextVar(
    "dync_recorder", default=None
)


def active_recorder() -> BranchRecorder:
    recorder = _recorder.get()
    if recorder is None:
        raise RuntimeError("no branch recorder: trace inside recording_compiled_branches()")
    return recorder


class recording_compiled_branches:
    """Context manager for an export whose module also returns its branch trace."""

    def __enter__(self) -> BranchRecorder:
        self.recorder = BranchRecorder()
        self._token = _recorder.set(self.recorder)
        return self.recorder

    def __exit__(self, *exc) -> None:
        _recorder.reset(self._token)


def _record_compiled(site: str, taken: Any) -> None:
    recorder = _recorder.get()
    if recorder is not None and _tracing():
        recorder.append(site, taken)
