"""Run-time helpers called by rewritten `forward` code (bound to the name `__dync__`).

Each helper decides at run time whether a predicate is static (a Python value, or a real
tensor in eager execution) or dynamic (a traced tensor while `torch.export` runs):

* static: plain Python semantics — the branch runs directly (and the decision is recorded
  when a branch trace is being collected);
* dynamic: the branch becomes `torch.cond`, the loop `torch.while_loop`, `and`/`or`/`not`
  become logical tensor ops, `.item()`/`float()`/`int()`/`bool()` keep the 0-d tensor.

So the rewritten program runs eagerly exactly like the original, and exports whole.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch._higher_order_ops.cond import cond_op
from torch._higher_order_ops.while_loop import while_loop_op
from torch.fx.experimental.proxy_tensor import disable_proxy_modes_tracing
from torch.fx.experimental.symbolic_shapes import statically_known_true

from ....errors import UnsupportedConstructError
from .lifting import bound_cells, recording_usage
from .lifting import lifted as _lifted


class _Undefined:
    """A variable not bound yet at this point of the program."""

    _instance = None

    def __new__(cls):
        cls._instance = cls._instance or super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "<undefined>"


UNDEFINED = _Undefined()
_NUMBERS = (bool, int, float, torch.SymInt, torch.SymFloat, torch.SymBool)

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


def _is_dynamic(value: Any) -> bool:
    return _tracing() and isinstance(value, torch.Tensor | torch.SymBool | torch.SymInt | torch.SymFloat)


def _as_pred(value: Any) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        if value.numel() != 1:
            raise RuntimeError(
                f"a condition must be a single value, got a tensor of shape {list(value.shape)}"
            )
        return value.reshape(()).to(torch.bool)
    return torch.scalar_tensor(value, dtype=torch.bool)


def state(frame_locals: dict, names: Sequence[str]) -> tuple:
    """The current values of `names` (UNDEFINED for those not bound yet)."""
    return tuple(frame_locals.get(n, UNDEFINED) for n in names)


def _static_decision(pred: Any, site: str) -> bool | None:
    """The branch to take when it is known now (a static predicate, or a replayed path),
    recorded in the branch trace; None when the predicate is traced (a HOP is needed)."""
    frozen = _replayed()
    if frozen is None and _is_dynamic(pred):
        return None
    decision = bool(pred) if frozen is None else frozen
    trace = _branch_trace.get()
    if trace is not None:
        trace.append((site, decision))
    return decision


# -- scalar conversions that keep tensors while exporting ------------------------------------
def item(value: Any) -> Any:
    if _is_dynamic(value):
        return value.reshape(())
    return value.item()


def to_bool(value: Any) -> Any:
    return _as_pred(value) if _is_dynamic(value) else bool(value)


def to_float(value: Any) -> Any:
    return value.reshape(()).to(torch.float32) if _is_dynamic(value) else float(value)


def to_int(value: Any) -> Any:
    return value.reshape(()).to(torch.int64) if _is_dynamic(value) else int(value)


# -- boolean operators -------------------------------------------------------------------------
def and_(*thunks: Callable[[], Any]) -> Any:
    """`a and b and ...` with Python short-circuiting while the operands are static."""
    result = thunks[0]()
    for thunk in thunks[1:]:
        if not _is_dynamic(result):
            if not result:
                return result
            result = thunk()
        else:
            result = torch.logical_and(_as_pred(result), _as_pred(thunk()))
    return result


def or_(*thunks: Callable[[], Any]) -> Any:
    result = thunks[0]()
    for thunk in thunks[1:]:
        if not _is_dynamic(result):
            if result:
                return result
            result = thunk()
        else:
            result = torch.logical_or(_as_pred(result), _as_pred(thunk()))
    return result


def not_(value: Any) -> Any:
    return torch.logical_not(_as_pred(value)) if _is_dynamic(value) else not value


# -- if ----------------------------------------------------------------------------------------
RETURNED, RETURN_VALUE = "__dync_returned", "__dync_return_value"


def if_(pred: Any, true_fn: Callable, false_fn: Callable, names: Sequence[str], values: tuple,
        site: str, returned_if_false: bool = False) -> tuple:
    """`if pred: ... else: ...` whose branches assign `names` (passed and returned in order).

    `returned_if_false` marks the guards the rewriter puts after a data-dependent `return`:
    their false branch is the path that has already returned.
    """
    decision = _static_decision(pred, site)
    if decision is not None:
        return (true_fn if decision else false_fn)(*values)
    return _cond(_as_pred(pred), true_fn, false_fn, names, values, site, returned_if_false)


def if_exp(pred: Any, true_fn: Callable[[], Any], false_fn: Callable[[], Any], site: str) -> Any:
    """`a if pred else b`."""
    decision = _static_decision(pred, site)
    if decision is not None:
        return true_fn() if decision else false_fn()
    (result,) = _cond(_as_pred(pred), lambda: (true_fn(),), lambda: (false_fn(),), ("<expr>",), (),
                      site)
    return result


def _cond(pred: torch.Tensor, true_fn, false_fn, names, values, site: str,
          returned_if_false: bool = False) -> tuple:
    # Look at what each branch produces without recording it, to decide which variables
    # cross the branch as tensors, which stay static, and which need a placeholder.
    containers = _Containers((true_fn, false_fn), values)
    with disable_proxy_modes_tracing(), recording_usage() as used:
        probe_true = tuple(true_fn(*values))
        containers.check(site, "if")
        probe_false = tuple(false_fn(*values))
        containers.check(site, "if")
    # After a return, every variable but the return value is dead: the live branch decides.
    live = [n in (RETURNED, RETURN_VALUE) for n in names]
    dead_true = _returns(names, probe_true)
    dead_false = returned_if_false or _returns(names, probe_false)
    mask_true = [dead_true and not dead_false and not keep for keep in live]
    mask_false = [dead_false and not dead_true and not keep for keep in live]
    probe_true = _mask(probe_true, mask_true, probe_false)
    probe_false = _mask(probe_false, mask_false, probe_true)
    kinds = [_output_kind(n, t, f, site) for n, t, f in zip(names, probe_true, probe_false, strict=True)]
    tensor_positions = [i for i, k in enumerate(kinds) if k is not None]

    def branch(fn, probe_other, dead):
        def run(*lifted_values):
            out = _mask(tuple(fn(*lifted_values)), dead, probe_other)
            return tuple(
                _as_output(out[i], probe_other[i]) for i in tensor_positions
            )

        return run

    results = _lifted(
        lambda run, operands: cond_op(
            pred,
            run(branch(true_fn, probe_false, mask_true)),
            run(branch(false_fn, probe_true, mask_false)),
            operands,
        ),
        (true_fn, false_fn),
        values,
        used,
    )
    merged = list(probe_true)  # static outputs are identical in both branches
    for i, value in zip(tensor_positions, results, strict=True):
        merged[i] = value
    return tuple(merged)


class _Containers:
    """Python lists/dicts/sets a branch can reach (variables and closure cells), to refuse
    a data-dependent branch that mutates one: its effect cannot follow a traced path, and
    probing the branch would already have applied it once."""

    def __init__(self, functions: Sequence[Callable], values: tuple):
        found = [v for v in values if isinstance(v, list | dict | set)]
        found += [c for _, c in bound_cells(functions) if isinstance(c, list | dict | set)]
        self.items = [(c, self._state(c)) for c in found]

    @staticmethod
    def _state(container) -> tuple:
        if isinstance(container, dict):
            return tuple((k, id(v)) for k, v in container.items())
        return tuple(id(v) for v in container)

    def check(self, site: str, what: str) -> None:
        for container, before in self.items:
            if self._state(container) != before:
                raise UnsupportedConstructError(
                    f"Python {type(container).__name__} changed inside a data-dependent {what}",
                    "a list/dict/set updated on a data-dependent path (e.g. tokens appended "
                    "until an end token) needs a bounded buffer or host mode, not available "
                    "yet; keep such state in tensors",
                    site,
                )


def _returns(names: Sequence[str], probe: tuple) -> bool:
    return RETURNED in names and probe[list(names).index(RETURNED)] is True


def _mask(outputs: tuple, dead: Sequence[bool], live: tuple) -> tuple:
    """Dead variables take the live branch's static value, or a tensor placeholder slot."""
    return tuple(
        (UNDEFINED if isinstance(v, torch.Tensor) else v) if is_dead else o
        for o, is_dead, v in zip(outputs, dead, live, strict=True)
    )


def _output_kind(name: str, a: Any, b: Any, site: str) -> str | None:
    """None: static (same object both ways); "tensor"; "number" (Python scalar, tensorized)."""
    if a is b and not isinstance(a, torch.Tensor):
        return None
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        for x, y in ((a, b), (b, a)):
            if isinstance(x, torch.Tensor) and not isinstance(y, torch.Tensor):
                if y is UNDEFINED or y is None:
                    return "tensor"  # the other branch gets a placeholder
                if isinstance(y, _NUMBERS) and x.dim() == 0:
                    return "tensor"  # the number becomes a 0-d tensor of x's dtype
                raise _mismatch(name, site, f"a tensor in one branch and {type(y).__name__} in the other")
        if a.dtype != b.dtype or a.dim() != b.dim():
            raise _mismatch(
                name, site, f"{a.dtype}{list(a.shape)} in one branch and {b.dtype}{list(b.shape)} in the other"
            )
        return "tensor"
    if all(isinstance(v, _NUMBERS) for v in (a, b)):
        return "number"
    if a is UNDEFINED or b is UNDEFINED:
        return None  # bound in one branch only and not a tensor: treated as branch-local
    if a == b:
        return None
    raise _mismatch(name, site, f"values {a!r} and {b!r} of a type that cannot cross a branch")


def _as_output(value: Any, other: Any) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        return value.clone()  # cond outputs may not alias its inputs (pass-through values)
    if value is UNDEFINED or value is None:  # placeholder on the path that lacks the value
        if isinstance(other, torch.Tensor):
            return torch.zeros(other.shape, dtype=other.dtype)
        return torch.scalar_tensor(0, dtype=_scalar_dtype(other, other))
    dtype = other.dtype if isinstance(other, torch.Tensor) else _scalar_dtype(value, other)
    return torch.scalar_tensor(value, dtype=dtype)


def _scalar_dtype(a: Any, b: Any) -> torch.dtype:
    kinds = {type(v) for v in (a, b)}
    if kinds & {float, torch.SymFloat}:
        return torch.float32
    if kinds <= {bool, torch.SymBool}:
        return torch.bool
    return torch.int64


def _mismatch(name: str, site: str, what: str) -> UnsupportedConstructError:
    return UnsupportedConstructError(
        f"variable {name!r} across a data-dependent if",
        f"it is {what}; both branches must give it the same type, dtype and rank",
        site,
    )


# -- while -------------------------------------------------------------------------------------
def while_(cond_fn: Callable, body_fn: Callable, names: Sequence[str], values: tuple,
           site: str) -> tuple:
    """`while cond: body` where the body assigns `names` (passed and returned in order)."""
    values = tuple(values)
    while True:
        decision = _static_decision(cond_fn(*values), site)
        if decision is None:
            return _while_loop(cond_fn, body_fn, names, values, site)
        if not decision:
            return values
        values = tuple(body_fn(*values))


def _while_loop(cond_fn, body_fn, names, values, site: str) -> tuple:
    containers = _Containers((cond_fn, body_fn), values)
    with disable_proxy_modes_tracing(), recording_usage() as used:
        probe = tuple(body_fn(*values))
        containers.check(site, "loop")
        cond_fn(*probe)
    carried = []
    for i, (name, before, after) in enumerate(zip(names, values, probe, strict=True)):
        if before is after and not isinstance(before, torch.Tensor):
            continue  # not changed by the loop
        if isinstance(before, bool | int | float) and isinstance(after, _NUMBERS + (torch.Tensor,)):
            carried.append(i)
        elif isinstance(before, torch.Tensor) and isinstance(after, torch.Tensor):
            if before.dtype != after.dtype or not _same_shape(before, after):
                raise UnsupportedConstructError(
                    f"variable {name!r} in a data-dependent loop",
                    f"it changes shape from {before.dtype}{list(before.shape)} to "
                    f"{after.dtype}{list(after.shape)} in one iteration; a data-dependent loop "
                    "must keep its carried tensors' shapes (growing sequences need a bounded "
                    "buffer or host mode, not available yet)",
                    site,
                )
            carried.append(i)
        elif before is UNDEFINED:
            continue  # bound inside the body only: local to one iteration
        else:
            raise UnsupportedConstructError(
                f"variable {name!r} in a data-dependent loop",
                f"a {type(before).__name__} that the loop changes cannot be carried",
                site,
            )
    # Fresh carried values: they may not alias the loop's other operands.
    initial = tuple(_carry_in(values[i], probe[i]).clone() for i in carried)
    values = tuple(UNDEFINED if i in carried else v for i, v in enumerate(values))

    def full(carry, local):
        merged = list(local)
        for i, v in zip(carried, carry, strict=True):
            merged[i] = v
        return merged

    def cond(*args):
        carry, local = args[: len(carried)], args[len(carried):]
        return _as_pred(cond_fn(*full(carry, local)))

    def body(*args):
        carry, local = args[: len(carried)], args[len(carried):]
        out = body_fn(*full(carry, local))
        return tuple(_carry_out(out[i], carry[k]) for k, i in enumerate(carried))

    try:
        results = _lifted(
            lambda run, operands: while_loop_op(
                run(cond, len(carried)), run(body, len(carried)), initial, operands
            ),
            (cond_fn, body_fn),
            values,
            used,
        )
    except UnsupportedConstructError:
        raise
    except Exception as e:
        if "shape" in str(e).lower() or "metadata" in str(e).lower():
            raise UnsupportedConstructError(
                "loop that changes a tensor's shape",
                "data-dependent loops must keep every carried tensor's shape (a growing "
                f"sequence needs a bounded buffer or host mode): {str(e).splitlines()[0]}",
                site,
            ) from e
        raise
    merged = list(values)
    for i, v in zip(carried, results, strict=True):
        merged[i] = v
    return tuple(merged)


def _same_shape(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.dim() == b.dim() and all(
        statically_known_true(x == y) for x, y in zip(a.shape, b.shape, strict=True)
    )


def _carry_in(value: Any, after: Any) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        return value
    return torch.scalar_tensor(value, dtype=_scalar_dtype(value, after))


def _carry_out(value: Any, like: torch.Tensor) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        return value.to(like.dtype).clone()  # loop outputs may not alias its inputs
    return torch.scalar_tensor(value, dtype=like.dtype)
