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

import contextlib
import contextvars
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch._guards import detect_fake_mode
from torch._higher_order_ops.cond import cond_op
from torch._higher_order_ops.while_loop import while_loop_op
from torch.fx.experimental.proxy_tensor import disable_proxy_modes_tracing
from torch.fx.experimental.symbolic_shapes import statically_known_true

from ....errors import UnsupportedConstructError
from .lifting import bound_cells, recording_usage
from .lifting import lifted as _lifted
from .lists import TensorList, length, new_list  # noqa: F401  (called by rewritten code)
from .values import data_of, getitem, setitem, tensor  # noqa: F401  (called by rewritten code)


@contextlib.contextmanager
def _untraced():
    """Run code on the tracer's fake tensors without recording it (to probe a branch or a loop
    body). A data-dependent size it makes (`x[mask]`) is a fresh unbacked symbol that no graph
    node will bind: the shape environment is told it is discarded, or the next traced op
    would fail with "pending unbacked symbols"."""
    fake_mode = detect_fake_mode()
    shape_env = getattr(fake_mode, "shape_env", None)
    with contextlib.ExitStack() as stack:
        stack.enter_context(disable_proxy_modes_tracing())
        if shape_env is not None:
            stack.enter_context(shape_env.ignore_fresh_unbacked_symbols())
        yield


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
    probe = _Probe((true_fn, false_fn), values, site, "if")
    with _untraced(), recording_usage() as used:
        probe_true, after_true = probe.run(true_fn)
        probe_false, after_false = probe.run(false_fn)
        grown = _grown_lists(probe.lists, probe.before, after_true, after_false, site)
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
            buffers = [_dense(t) for tl, cap, like in grown for t in tl.as_buffer(cap, like)]
            return tuple(
                _as_output(out[i], probe_other[i]) for i in tensor_positions
            ) + tuple(buffers)

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
        probe.lists,
    )
    merged = list(probe_true)  # static outputs are identical in both branches
    for i, value in zip(tensor_positions, results, strict=False):  # the lists' buffers follow
        merged[i] = value
    buffers = results[len(tensor_positions):]
    for k, (tl, _, _) in enumerate(grown):
        tl.set_bounded(buffers[2 * k], buffers[2 * k + 1])
    return tuple(merged)


class _Probe:
    """Runs branches untraced (inside `disable_proxy_modes_tracing`) to see what they
    produce: refuses one that changes a Python container, and puts the `TensorList`s they
    reach back as they were after each, returning the lists' states it left."""

    def __init__(self, functions: Sequence[Callable], values: tuple, site: str, what: str):
        self.values, self.site, self.what = values, site, what
        self.containers = _Containers(functions, values)
        self.lists = _tensor_lists(functions, values)
        self.before = [tl.snapshot() for tl in self.lists]

    def run(self, fn: Callable) -> tuple[tuple, list]:
        result = tuple(fn(*self.values))
        self.containers.check(self.site, self.what)
        return result, _restore(self.lists, self.before)


def _tensor_lists(functions: Sequence[Callable], values: tuple) -> list[TensorList]:
    recorder = _recorder.get()
    found = [recorder.codes] if recorder is not None else []
    found += [v for v in values if isinstance(v, TensorList)]
    found += [c for _, c in bound_cells(functions) if isinstance(c, TensorList)]
    unique = {id(tl): tl for tl in found}
    return list(unique.values())


def _restore(lists: Sequence[TensorList], before: Sequence) -> list:
    """Each list's state after a probe; the lists are put back as they were."""
    after = [tl.snapshot() for tl in lists]
    for tl, snap in zip(lists, before, strict=True):
        tl.restore(snap)
    return after


def _grown_lists(lists, before, after_true, after_false, site: str) -> list[tuple]:
    """(list, capacity, item) of the lists a branch appended to: they leave the `cond` as
    bounded buffers of the larger branch's capacity."""
    grown = []
    for tl, *states in zip(lists, before, after_true, after_false, strict=True):
        if all(_same_state(states[0], s) for s in states[1:]):
            continue
        for state in states[1:]:
            if not _appended_to(states[0], state):
                raise UnsupportedConstructError(
                    "Python list changed inside a data-dependent if",
                    "only appending to a list is supported on a data-dependent path",
                    site,
                )
        items = [t for state in states for t in ([state[1][0]] if state[1] is not None else state[0])]
        like = next((t for t in items if isinstance(t, torch.Tensor)), None)
        if like is None:
            raise UnsupportedConstructError(
                "Python list changed inside a data-dependent if",
                "a list that grows on a data-dependent path must hold tensors",
                site,
            )
        capacity = max(_capacity(s) for s in states)
        grown.append((tl, capacity, like))
    return grown


def _same_state(a, b) -> bool:
    return (a[1] is b[1] and a[2] is b[2] and len(a[0]) == len(b[0])
            and all(x is y for x, y in zip(a[0], b[0], strict=True)))


def _appended_to(before, after) -> bool:
    if before[1] is not None:  # bounded: only appends can have changed it
        return after[1] is not None
    if after[1] is not None:
        return True  # a nested data-dependent append made it bounded
    return len(after[0]) >= len(before[0]) and all(
        x is y for x, y in zip(before[0], after[0], strict=False)
    )


def _capacity(state) -> int:
    return state[1].shape[0] if state[1] is not None else len(state[0])


class _Containers:
    """Python lists/dicts/sets a branch can reach (variables and closure cells), to refuse
    a data-dependent branch that mutates one: its effect cannot follow a traced path, and
    probing the branch would already have applied it once."""

    def __init__(self, functions: Sequence[Callable], values: tuple):
        found = [v for v in values if _plain_container(v)]
        found += [c for _, c in bound_cells(functions) if _plain_container(c)]
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
                    "on a data-dependent path a list created empty in the function may be "
                    "appended to (it becomes a bounded buffer); other list/dict/set updates "
                    "cannot follow a traced path: keep such state in tensors",
                    site,
                )


def _plain_container(value: Any) -> bool:
    return isinstance(value, list | dict | set) and not isinstance(value, TensorList)


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
        # cond outputs may not alias its inputs (pass-through values), and both branches'
        # must give the same strides: a transposed view in one branch is a fresh tensor in
        # the other (the values are what the program means; strides are not)
        return _dense(value)
    if value is UNDEFINED or value is None:  # placeholder on the path that lacks the value
        if isinstance(other, torch.Tensor):
            return _dense(torch.zeros(other.shape, dtype=other.dtype))
        return torch.scalar_tensor(0, dtype=_scalar_dtype(other, other))
    dtype = other.dtype if isinstance(other, torch.Tensor) else _scalar_dtype(value, other)
    return torch.scalar_tensor(value, dtype=dtype)


def _dense(value: torch.Tensor) -> torch.Tensor:
    """A copy of `value` whose strides are the plain products of its sizes. A contiguous
    tensor's strides are products of max(size, 1); where a size is a floor division of a dim
    (`max_pool2d` over a dynamic H) or an unbacked symbol (a nested early exit's sequence), the
    symbolic `Max(1, s)` does not simplify, and `cond` cannot match it with the other branch's
    sizes and refuses the output."""
    copy = value.clone(memory_format=torch.contiguous_format)
    strides, step = [], 1
    for size in reversed(value.shape):
        strides.append(step)
        step = step * size
    strides.reverse()
    if all(_expr(a) == _expr(b) for a, b in zip(copy.stride(), strides, strict=True)):
        return copy  # the usual case (`cond` compares the expressions): a plain clone
    out = torch.empty_strided(value.shape, tuple(strides), dtype=value.dtype, device=value.device)
    return out.copy_(value)


def _expr(size: Any) -> Any:
    return size.node.expr if isinstance(size, torch.SymInt) else size


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
            if _recorder.get() is not None:
                raise UnsupportedConstructError(
                    "branch trace through a data-dependent while loop",
                    "its decisions have no bound known when compiling; verify this model "
                    "without compiled branch traces",
                    site,
                )
            return _while_loop(cond_fn, body_fn, names, values, site)
        if not decision:
            return values
        values = tuple(body_fn(*values))


def _while_loop(cond_fn, body_fn, names, values, site: str, trips: int | None = None) -> tuple:
    """`trips`: the most iterations the loop can make, when known (a `for` over a symbolic
    range); lists the body appends to become bounded buffers sized by it."""

    def iteration(*state):  # one probed trip: the body, then the condition on its result
        out = tuple(body_fn(*state))
        cond_fn(*out)
        return out

    probe_of = _Probe((cond_fn, body_fn), values, site, "loop")
    with _untraced(), recording_usage() as used:
        probe, after = probe_of.run(iteration)
        grown = _grown_lists(probe_of.lists, probe_of.before, after, after, site)
    if grown and trips is None:
        raise UnsupportedConstructError(
            "list appended in a data-dependent while loop",
            "the loop has no bound known when compiling, so the list cannot become a bounded "
            "buffer (a `for` over a range has one); keep such state in tensors",
            site,
        )
    # Each grown list is carried as (buffer, length), sized for every iteration's appends.
    buffers = []
    for tl, capacity_after_one, like in grown:
        start = _capacity(tl.snapshot())
        capacity = start + trips * (capacity_after_one - start)
        buffers.append((tl, capacity))
        tl.set_bounded(*tl.as_buffer(capacity, like))
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
                    "must keep its carried tensors' shapes (append the items to a list "
                    "instead, in a `for` over a range, which bounds it)",
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
    # Fresh carried values: they may not alias the loop's other operands, and their strides
    # are the plain products of their sizes, as the body's outputs' are (see `_dense`).
    initial = tuple(_dense(_carry_in(values[i], probe[i])) for i in carried)
    initial += tuple(_dense(t) for tl, _ in buffers for t in (tl.buffer, tl.length))
    values = tuple(UNDEFINED if i in carried else v for i, v in enumerate(values))
    n = len(carried) + 2 * len(buffers)

    def full(carry, local):
        merged = list(local)
        for i, v in zip(carried, carry, strict=False):
            merged[i] = v
        state = carry[len(carried):]
        for k, (tl, _) in enumerate(buffers):
            tl.set_bounded(state[2 * k], state[2 * k + 1])
        return merged

    def cond(*args):
        return _as_pred(cond_fn(*full(args[:n], args[n:])))

    def body(*args):
        carry, local = args[:n], args[n:]
        out = body_fn(*full(carry, local))
        new = tuple(_carry_out(out[i], carry[k]) for k, i in enumerate(carried))
        # An append grew the buffer by one slot past the bound: never a valid one, cut it.
        return new + tuple(_dense(t) for tl, cap in buffers for t in (tl.buffer[:cap], tl.length))

    saved = [tl.snapshot() for tl, _ in buffers]
    try:
        results = _lifted(
            lambda run, operands: while_loop_op(run(cond, n), run(body, n), initial, operands),
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
    finally:
        for (tl, _), snap in zip(buffers, saved, strict=True):
            tl.restore(snap)
    merged = list(values)
    for i, v in zip(carried, results, strict=False):
        merged[i] = v
    state = results[len(carried):]
    for k, (tl, _) in enumerate(buffers):
        tl.set_bounded(state[2 * k], state[2 * k + 1])
    return tuple(merged)


def for_range(bounds: tuple, body_fn: Callable, names: Sequence[str], values: tuple,
              site: str) -> tuple:
    """`for v in range(*bounds): body` where the body assigns `names`. A Python loop (unrolled
    by tracing) unless a bound is symbolic while exporting: then a `while_loop` whose trip
    count is at most the bound's largest value."""
    values = tuple(values)
    if not any(_is_dynamic(b) and _as_int(b) is None for b in bounds):
        for v in range(*bounds):
            values = tuple(body_fn(v, *values))
        return values
    start, stop, step = (0, bounds[0], 1) if len(bounds) == 1 else (*bounds, 1)[:3]
    if _as_int(step) is None or _as_int(step) <= 0:
        raise UnsupportedConstructError(
            "for loop over a range with a symbolic or non-positive step", "use a constant step", site
        )
    trips = _upper_bound(-(-(stop - start) // step), site)
    stop_t = torch.scalar_tensor(stop, dtype=torch.int64)
    first = torch.scalar_tensor(start, dtype=torch.int64)

    def cond(*args):
        return args[-1] < stop_t

    def body(*args):
        return (*body_fn(args[-1], *args[:-1]), args[-1] + step)

    return _while_loop(cond, body, (*names, "<loop index>"), (*values, first), site, trips)[:-1]


def _as_int(value: Any) -> int | None:
    if isinstance(value, torch.SymInt):
        return value.node.maybe_as_int()
    return int(value) if isinstance(value, int) else None


def _upper_bound(count: Any, site: str) -> int | None:
    if isinstance(count, int):
        return max(count, 0)
    if not isinstance(count, torch.SymInt):
        return None  # a count read from tensor data: no bound
    upper = count.node.shape_env.bound_sympy(count.node.expr).upper
    if not upper.is_finite:
        raise UnsupportedConstructError(
            "for loop over a range without an upper bound",
            "give the dims it depends on a max (Dim(..., max=N))",
            site,
        )
    return max(int(upper), 0)


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
        return _dense(value.to(like.dtype))  # loop outputs may not alias its inputs
    return torch.scalar_tensor(value, dtype=like.dtype)
