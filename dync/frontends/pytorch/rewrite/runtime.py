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

import math
import sys
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch._higher_order_ops.cond import cond_op
from torch._higher_order_ops.while_loop import while_loop_op
from torch.fx.experimental.proxy_tensor import disable_proxy_modes_tracing
from torch.utils._sympy.functions import TruncToInt
from torch.utils._sympy.symbol import SymT, symbol_is_type

from ....errors import UnsupportedConstructError
from ..shape_exprs import integral, size_range
from .crossing import (
    _NUMBERS,
    RETURN_VALUE,
    RETURNED,
    UNDEFINED,
    Containers,
    _as_output,
    _breaks,
    _capacity,
    _carry_in,
    _carry_out,
    _dense,
    _grown_lists,
    _mask,
    _output_kind,
    _Probe,
    _returns,
    _same_shape,
    _untraced,
)
from .decisions import _as_int, _as_pred, _is_dynamic, _recorder, _static_decision, _tracing
from .growing import growth
from .lifting import lifted as _lifted
from .lifting import record_returned, recording_usage
from .lists import TensorList, length, new_list  # noqa: F401  (called by rewritten code)
from .numbers import (
    as_number,
    dtype_kind,
    merged_kind,
    numbers_returned,  # noqa: F401  (called by the rewritten forward)
)
from .optionals import (
    as_optionals,
    is_none,  # noqa: F401  (called by rewritten code)
    is_not_none,  # noqa: F401  (called by rewritten code)
)
from .ratios import SizeRatio, exact_div  # noqa: F401  (called by rewritten code)
from .values import (  # noqa: F401  (called by rewritten code)
    _is_position,
    as_tensor,
    data_of,
    new_tensor,
    one_step,
    setitem,
    tensor,
)
from .values import getitem as _indexed


def state(frame_locals: dict, names: Sequence[str]) -> tuple:
    """The current values of `names` (UNDEFINED for those not bound yet)."""
    return tuple(frame_locals.get(n, UNDEFINED) for n in names)


# -- scalar conversions that keep tensors while exporting ------------------------------------
def item(value: Any) -> Any:
    if _is_dynamic(value):
        number = value.reshape(())
        return as_number(number, dtype_kind(number.dtype))
    return value.item()


def to_bool(value: Any) -> Any:
    return _as_pred(value) if _is_dynamic(value) else bool(value)


def to_float(value: Any) -> Any:
    """`float(value)`: of a size, the size as a symbolic float (`torch.sym_float`), which the
    export keeps where Python's `float()` would specialize it (`sym_floats.py`)."""
    if isinstance(value, torch.SymInt):
        return torch.sym_float(value)
    if isinstance(value, torch.SymFloat):
        return value
    return as_number(value.reshape(()).to(torch.float32), float) if _is_dynamic(value) \
        else float(value)


def to_int(value: Any) -> Any:
    """`int(value)`: of a size (`int(x.shape[1])`), the size itself, still symbolic; of float
    arithmetic affine in sizes (`int(x.shape[1] * 0.7)`, a capacity factor;
    `int(0.065 * t / 10 + 0.5)`), the size rounded toward zero as a symbolic int, which the
    export turns into integer arithmetic (`sym_floats.integer_rounding`) where Python's
    `int()` would specialize it to the example's."""
    if isinstance(value, torch.SymInt):
        return value
    if isinstance(value, SizeRatio):
        return math.trunc(value) if value.nonnegative() else to_int(value.value())
    if isinstance(value, torch.SymFloat):
        if _affine_in_sizes(value):
            return torch.sym_int(value)
        raise _size_arithmetic("int() of a float computed from a dynamic size",
                               "compute it with integer operations on the size (`//`, `%`; "
                               "a size times a constant is taken as it is)")
    return as_number(value.reshape(()).to(torch.int64), int) if _is_dynamic(value) else int(value)


def sqrt(value: Any) -> Any:
    """`math.sqrt(value)`: of a size, a symbolic float (`torch._sym_sqrt`), which tensor ops
    take as a 0-d tensor (`sym_floats.py`), where `math.sqrt` would specialize the size."""
    if isinstance(value, torch.SymInt | torch.SymFloat):
        return torch._sym_sqrt(torch.sym_float(value))
    return math.sqrt(value)


def _affine_in_sizes(value: torch.SymFloat) -> bool:
    """Whether `value` is affine in sizes with constants near small fractions: what
    `shape_exprs.integral` rounds in integers."""
    return not integral(TruncToInt(value.node.expr)).has(TruncToInt)


def _size_arithmetic(construct: str, fix: str) -> UnsupportedConstructError:
    """Floating-point arithmetic on a size, which torch.export specializes to the example's
    value; named at the line of the model that wrote it (two frames up)."""
    caller = sys._getframe(2)
    return UnsupportedConstructError(
        construct, f"torch.export would specialize the size to the example's; {fix}",
        f"{caller.f_code.co_filename}:{caller.f_lineno}")


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


def if_(pred: Any, true_fn: Callable, false_fn: Callable, names: Sequence[str], values: tuple,
        site: str, returned_if_false: bool = False,
        breaks: tuple[tuple[str, tuple[str, ...]], ...] = ()) -> tuple:
    """`if pred: ... else: ...` whose branches assign `names` (passed and returned in order).

    `returned_if_false` marks the guards the rewriter puts after a data-dependent `return`:
    their false branch is the path that has already returned. `breaks` gives, for each flag
    of a `break` the branches may set, the names live after that loop: a branch that sets it
    leaves the loop, and the others are dead on it.
    """
    decision = _static_decision(pred, site)
    if decision is not None:
        return (true_fn if decision else false_fn)(*values)
    return _cond(_as_pred(pred), true_fn, false_fn, names, values, site, returned_if_false,
                 breaks)


def if_exp(pred: Any, true_fn: Callable[[], Any], false_fn: Callable[[], Any], site: str) -> Any:
    """`a if pred else b`."""
    decision = _static_decision(pred, site)
    if decision is not None:
        return true_fn() if decision else false_fn()
    (result,) = _cond(_as_pred(pred), lambda: (true_fn(),), lambda: (false_fn(),), ("<expr>",), (),
                      site)
    return result


def getitem(target: Any, index: Any) -> Any:
    """`target[index]` (`values.getitem`, `_indexed` here); of modules (`nn.ModuleList`, `nn.Sequential`, a
    list) at a position known only when the program runs (`self.experts[r.argmax().item()]`,
    top-1 routing), the module to call there: `_Chosen`."""
    if isinstance(target, torch.nn.ModuleList | torch.nn.Sequential | list | tuple) \
            and _is_dynamic(index) and _is_position(index) and len(target) > 0 \
            and all(isinstance(m, torch.nn.Module) for m in target):
        caller = sys._getframe(1)
        return _Chosen(list(target), index, f"{caller.f_code.co_filename}:{caller.f_lineno}")
    return _indexed(target, index)


class _Chosen:
    """The module of `modules` at the run-time position `index`: called, a `cond` per module
    (as Python's indexing would, a negative position counts from the end)."""

    def __init__(self, modules: list, index: torch.Tensor, site: str):
        n = len(modules)
        self.modules, self.site = modules, site
        self.index = torch.where(index < 0, index + n, index)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _chosen_call(self.modules, self.index, args, kwargs, self.site)


def _chosen_call(modules: list, index: torch.Tensor, args: tuple, kwargs: dict, site: str,
                 k: int = 0) -> Any:
    # The branches hold the tensors they read in their own closure cells (not behind an
    # object), where `cond` finds them to lift.
    module = modules[k]
    if k == len(modules) - 1:
        return module(*args, **kwargs)
    return if_exp(index == k, lambda: module(*args, **kwargs),
                  lambda: _chosen_call(modules, index, args, kwargs, site, k + 1), site)


def _cond(pred: torch.Tensor, true_fn, false_fn, names, values, site: str,
          returned_if_false: bool = False, breaks=()) -> tuple:
    # Look at what each branch produces without recording it, to decide which variables
    # cross the branch as tensors, which stay static, and which need a placeholder.
    probe = _Probe((true_fn, false_fn), values, site, "if")
    with _untraced(), recording_usage() as used:
        probe_true, after_true = probe.run(true_fn)
        probe_false, after_false = probe.run(false_fn)
        record_returned((probe_true, probe_false))
        grown = _grown_lists(probe.lists, probe.before, after_true, after_false, site)
    # After a return, every variable but the return value is dead: the live branch decides.
    live = [n in (RETURNED, RETURN_VALUE) for n in names]
    dead_true = _returns(names, probe_true)
    dead_false = returned_if_false or _returns(names, probe_false)
    mask_true = [dead_true and not dead_false and not keep for keep in live]
    mask_false = [dead_false and not dead_true and not keep for keep in live]
    for flag, after_loop in breaks:
        # Only one branch leaves the loop: what it hands on is what is read after the loop
        # (and the flags the loop machinery reads); the others' values come from the branch
        # that stays, as after a return. (A tensor flag: the probe cannot tell, nothing dies.)
        left = [_breaks(names, probe, flag) for probe in (probe_true, probe_false)]
        if left[0] != left[1]:
            dead = [n not in after_loop and not n.startswith("__dync_") for n in names]
            mask = mask_true if left[0] else mask_false
            mask[:] = [m or d for m, d in zip(mask, dead, strict=True)]
    probe_true = _mask(probe_true, mask_true, probe_false)
    probe_false = _mask(probe_false, mask_false, probe_true)
    # None on one side and a tensor on the other: a tensor and a presence flag
    probe_true, probe_false = (as_optionals(probe_true, probe_false, names, (RETURN_VALUE,)),
                               as_optionals(probe_false, probe_true, names, (RETURN_VALUE,)))
    # Tuples and lists cross item by item: the masks above are per variable, the rest per item.
    containers = Containers(probe_true, probe_false)
    flat_true = containers.placeholders(probe_true, containers.flatten(probe_false))
    flat_false = containers.placeholders(probe_false, containers.flatten(probe_true))
    kinds = [_output_kind(n, t, f, site) for n, t, f in
             zip(containers.flatten(probe_true, names), flat_true, flat_false, strict=True)]
    tensor_positions = [i for i, k in enumerate(kinds) if k is not None]

    def branch(fn, probe_other, flat_other, dead):
        def run(*lifted_values):
            out = _mask(tuple(fn(*lifted_values)), dead, probe_other)
            out = as_optionals(out, probe_other, names, (RETURN_VALUE,))
            out = containers.placeholders(out, flat_other)
            buffers = [_dense(t) for tl, cap, like in grown for t in tl.as_buffer(cap, like)]
            return tuple(
                _as_output(out[i], flat_other[i]) for i in tensor_positions
            ) + tuple(buffers)

        return run

    results = _lifted(
        lambda run, operands: cond_op(
            pred,
            run(branch(true_fn, probe_false, flat_false, mask_true)),
            run(branch(false_fn, probe_true, flat_true, mask_false)),
            operands,
        ),
        (true_fn, false_fn),
        values,
        used,
        probe.lists,
    )
    merged = list(flat_true)  # static outputs are identical in both branches
    for i, value in zip(tensor_positions, results, strict=False):  # the lists' buffers follow
        merged[i] = value
        if (kind := merged_kind(flat_true[i], flat_false[i])) is not None:
            as_number(value, kind)
        _keep_sizes(value, flat_true[i], flat_false[i])
    buffers = results[len(tensor_positions):]
    for k, (tl, _, _) in enumerate(grown):
        tl.set_bounded(buffers[2 * k], buffers[2 * k + 1])
    return containers.unflatten(merged)


def _keep_sizes(result: Any, one: Any, other: Any) -> None:
    """Tell the shape environment that a dim of `cond`'s `result` is the size both branches
    gave it: torch makes a fresh data-dependent size for an output whose size is one (the
    rows a mask kept) even when both branches keep it, and a loop carrying the result would
    then not keep its shape."""
    if not all(isinstance(t, torch.Tensor) for t in (result, one, other)) \
            or not result.dim() == one.dim() == other.dim():
        return
    with disable_proxy_modes_tracing():
        for got, a, b in zip(result.shape, one.shape, other.shape, strict=True):
            if isinstance(got, torch.SymInt) and isinstance(a, torch.SymInt) \
                    and isinstance(b, torch.SymInt) and a.node.expr == b.node.expr \
                    and got.node.expr != a.node.expr \
                    and got.node.expr.is_symbol \
                    and symbol_is_type(got.node.expr, SymT.UNBACKED_INT):
                torch._check(got == a)


# -- while -------------------------------------------------------------------------------------
def while_(cond_fn: Callable, body_fn: Callable, names: Sequence[str], values: tuple,
           site: str, counter: tuple[str, int, bool] | None = None,
           limit: Callable[[], Any] | None = None) -> tuple:
    """`while cond: body` where the body assigns `names` (passed and returned in order).
    `counter` (name, step, inclusive) and `limit`: the condition compares that variable with
    `limit()`, and the body steps it on every trip (`counted.py`): what bounds the trips."""
    values = tuple(values)
    entry, made = _counter_at_entry(counter, limit, names, values), 0
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
            trips = None if entry is None else _counted_trips(counter, *entry, site)
            return _while_loop(cond_fn, body_fn, names, values, site,
                               None if trips is None else max(trips - made, 0))
        if not decision:
            return values
        values = tuple(body_fn(*values))
        made += 1


def _counter_at_entry(counter: tuple[str, int, bool] | None, limit: Callable[[], Any] | None,
                      names: Sequence[str], values: tuple) -> tuple[Any, Any] | None:
    """A counted loop's (counter, limit) where it starts (`while_`): the trips it makes in
    Python before its condition turns on data (the counter then a tensor, merged from a
    branch that breaks) count against the bound from there."""
    if counter is None or limit is None:
        return None
    try:
        return values[names.index(counter[0])], limit()
    except Exception:  # noqa: BLE001 - a limit the condition itself may never evaluate
        return None


def _counted_trips(counter: tuple[str, int, bool], start: Any, limit: Any, site: str) -> int | None:
    """The most trips of a loop whose counter (`while_`) goes from `start` by its step while
    under `limit`; None where either is not a Python int or a size."""
    _, step, inclusive = counter
    if type(start) is not int or not isinstance(limit, int | torch.SymInt) or isinstance(limit, bool):
        return None
    return _most_trips(start, limit + 1 if inclusive else limit, step, site)


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
        record_returned(probe)
        grown = _grown_lists(probe_of.lists, probe_of.before, after, after, site)
    if grown and trips is None:
        raise UnsupportedConstructError(
            "list appended in a data-dependent while loop",
            "the loop has no bound known when compiling, so the list cannot become a bounded "
            "buffer (a `for` over a range has one, as has a `while` on a counter stepped each "
            "trip and compared with a limit the loop leaves alone: `while i < n: ...; i += 1`); "
            "bound the loop so, or keep such state in tensors",
            site,
        )
    # Each grown list is carried as (buffer, length), sized for every iteration's appends.
    buffers = []
    for tl, capacity_after_one, like in grown:
        start = _capacity(tl.snapshot())
        capacity = start + trips * (capacity_after_one - start)
        buffers.append((tl, capacity))
        tl.set_bounded(*tl.as_buffer(capacity, like))
    carried, growing = [], []
    for i, (name, before, after) in enumerate(zip(names, values, probe, strict=True)):
        if before is after and not isinstance(before, torch.Tensor):
            continue  # not changed by the loop
        if isinstance(before, bool | int | float) and isinstance(after, _NUMBERS + (torch.Tensor,)):
            carried.append(i)
        elif isinstance(before, torch.Tensor) and isinstance(after, torch.Tensor):
            if before.dtype == after.dtype and _same_shape(before, after):
                carried.append(i)
            elif grows := growth(name, before, after, trips, site):
                growing.append((i, grows))
            else:
                raise UnsupportedConstructError(
                    f"variable {name!r} in a data-dependent loop",
                    f"it changes shape from {before.dtype}{list(before.shape)} to "
                    f"{after.dtype}{list(after.shape)} in one iteration; a data-dependent loop "
                    "must keep its carried tensors' shapes, or grow one along a dim by the same "
                    "static amount each iteration in a loop with a bound: a `for` over a range, "
                    "or a `while` on a counter stepped each trip (`while i < n: ...; i += 1`)",
                    site,
                )
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
    # The state: carried values, (buffer, length) of each growing tensor, then of each list.
    grown_at = {i for i, _ in growing}
    numbers = {k: kind for k, i in enumerate(carried)  # they stay numbers
               if (kind := merged_kind(values[i], probe[i])) is not None}
    initial = tuple(_dense(_carry_in(values[i], probe[i])) for i in carried)
    initial += tuple(_dense(t) for i, g in growing for t in g.buffer(values[i]))
    initial += tuple(_dense(t) for tl, _ in buffers for t in (tl.buffer, tl.length))
    values = tuple(UNDEFINED if i in carried or i in grown_at else v
                   for i, v in enumerate(values))
    n = len(carried) + 2 * len(growing) + 2 * len(buffers)

    def full(carry, local, room: int = 0):
        merged = list(local)
        for i, v in zip(carried, carry, strict=False):
            merged[i] = v
        state = carry[len(carried):]
        for k, (i, g) in enumerate(growing):
            merged[i] = g.view(state[2 * k], state[2 * k + 1], room * g.step)
        state = state[2 * len(growing):]
        for k, (tl, _) in enumerate(buffers):
            tl.set_bounded(state[2 * k], state[2 * k + 1])
        return merged

    def cond(*args):
        return _as_pred(cond_fn(*full(args[:n], args[n:])))

    def body(*args):
        carry, local = args[:n], args[n:]
        before = full(carry, local, room=1)
        out = body_fn(*before)
        new = tuple(_carry_out(out[i], carry[k]) for k, i in enumerate(carried))
        at = len(carried)
        new += tuple(_dense(t) for k, (i, g) in enumerate(growing) for t in g.store(
            out[i], carry[at + 2 * k], before[i], carry[at + 2 * k + 1]))
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
    for k, kind in numbers.items():
        as_number(results[k], kind)
    return tuple(full(results, values))   # the loop's results over the values it began with


# Trips over which a loop over a constant range is exported as a loop, not unrolled: the
# unrolled trace of farthest point sampling's 512 samples took IREE 420 s to compile.
LONG_LOOP = 64


def for_range(bounds: tuple, body_fn: Callable, names: Sequence[str], values: tuple,
              site: str, stops: Sequence[str] = ()) -> tuple:
    """`for v in range(*bounds): body` where the body assigns `names`. A Python loop (unrolled
    by tracing) unless a bound is symbolic while exporting, or the range is constant and longer
    than `LONG_LOOP` trips and its state can be carried: then a `while_loop` whose trip
    count is at most the bound's largest value. `stops` names the flags a `break` or `return`
    in the body sets (the body is guarded by them): the loop ends when one is set, and the
    `while_loop`'s body sees them False, so that what the guard covers is traced once, not as
    a `cond` (whose branches could not differ in shape: a sequence grown before `break`)."""
    values = tuple(values)
    stop_at = [names.index(f) for f in stops]
    if any(_is_dynamic(b) and _as_int(b) is None for b in bounds):
        return _range_loop(bounds, body_fn, names, values, site, stop_at)
    trips = range(*bounds)
    if _tracing() and len(trips) > LONG_LOOP:
        try:
            return _range_loop(bounds, body_fn, names, values, site, stop_at)
        except Exception:  # noqa: BLE001
            pass  # state a loop cannot carry: unrolled, as it runs
    return _python_loop(trips, body_fn, values, stop_at)


def _range_loop(bounds: tuple, body_fn: Callable, names: Sequence[str], values: tuple,
                site: str, stop_at: list[int]) -> tuple:
    """`for_range` as a `while_loop` over the loop index."""
    start, stop, step = (0, bounds[0], 1) if len(bounds) == 1 else (*bounds, 1)[:3]
    if _as_int(step) is None or _as_int(step) <= 0:
        raise UnsupportedConstructError(
            "for loop over a range with a symbolic or non-positive step", "use a constant step", site
        )
    trips = _most_trips(start, stop, step, site)
    stop_t = torch.scalar_tensor(stop, dtype=torch.int64)
    first = torch.scalar_tensor(start, dtype=torch.int64)

    def cond(*args):
        going = args[-1] < stop_t
        for k in stop_at:
            going = going & ~_as_pred(args[k]) if isinstance(args[k], torch.Tensor) \
                else going & (not args[k])
        return going

    def body(*args):
        state = [False if k in stop_at else v for k, v in enumerate(args[:-1])]
        return (*body_fn(args[-1], *state), args[-1] + step)

    return _while_loop(cond, body, (*names, "<loop index>"), (*values, first), site, trips)[:-1]


def for_each(items: Any, body_fn: Callable, names: Sequence[str], values: tuple, site: str,
             stops: Sequence[str] = (), enumerated: bool = False) -> tuple:
    """`for v in items: body` (`for i, v in enumerate(items)` where `enumerated`): over a
    tensor, `for_range` over its rows (a `while_loop` when their number is a symbolic size, as
    a time-major sequence's: iterating would fix it to the example's), as over the items of a
    list of data-dependent length (a bounded buffer's valid rows); over anything else a
    Python loop."""
    if isinstance(items, TensorList) and items.bounded:
        items = items.valid()
    if isinstance(items, torch.Tensor) and items.dim():
        if enumerated:
            def body(i, *state):
                return body_fn(i, getitem(items, i), *state)
        else:
            def body(i, *state):
                return body_fn(getitem(items, i), *state)
        return for_range((items.shape[0],), body, names, values, site, stops)
    if enumerated:
        items = enumerate(items)
        body_fn = _unpacked(body_fn)
    return _python_loop(items, body_fn, tuple(values), [names.index(f) for f in stops])


def _unpacked(body_fn: Callable) -> Callable:
    def body(pair: tuple, *state: Any) -> Any:
        return body_fn(*pair, *state)

    return body


def reversed_items(items: Any) -> Any:
    """What `for v in reversed(items)` iterates, as `for_each` takes it: a tensor's rows and a
    list of data-dependent length's items are those of the rows flipped."""
    if isinstance(items, TensorList) and items.bounded:
        items = items.valid()
    if isinstance(items, torch.Tensor) and items.dim():
        return items.flip(0)
    return reversed(items)


def unbound(x: Any, dim: Any = 0) -> Any:
    """What `for v in x.unbind(dim)` iterates, as `for_each` takes it: a tensor's rows along
    `dim` are those of its view with `dim` moved first (each `x.select(dim, i)`)."""
    if isinstance(x, torch.Tensor):
        return x.movedim(dim, 0)
    return x.unbind(dim)


def _python_loop(items: Any, body_fn: Callable, values: tuple, stop_at: list[int]) -> tuple:
    """The loop run by Python (unrolled when traced), ended by a set stop flag."""
    for v in items:
        if any(values[k] is True for k in stop_at):
            break
        values = tuple(body_fn(v, *values))
    return values


def _most_trips(start: Any, stop: Any, step: int, site: str) -> int | None:
    """The most trips of a loop from `start` while under `stop` by `step` (> 0): of
    `range(start, stop, step)`, at the largest values sizes among them can take."""
    return _upper_bound(-(-(stop - start) // step), site)


def _upper_bound(count: Any, site: str) -> int | None:
    if isinstance(count, int):
        return max(count, 0)
    if not isinstance(count, torch.SymInt):
        return None  # a count read from tensor data: no bound
    upper = size_range(count)[1]
    if upper is None:
        raise UnsupportedConstructError(
            "for loop over a range without an upper bound",
            "give the dims it depends on a max (Dim(..., max=N))",
            site,
        )
    return max(upper, 0)


