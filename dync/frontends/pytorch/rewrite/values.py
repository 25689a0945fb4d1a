"""What the rewritten program calls for statements that make or change a tensor inside its
data-dependent branches and loops (issue 32, items a, b and h). Each is exactly the original
statement on real tensors; while exporting, it is the functional form `torch.cond` and
`while_loop` accept:

- `h[i] = v` and `h[i] op= v` on a variable whose every value is a tensor the function made
  itself (the rewriter checks that, so no other variable sees the change) become
  `h = setitem(h, i, v)`: a copy with the items written, rebound to `h`; a branch may not
  change the tensors it was given, and a change it keeps must leave it as an output;
- `torch.tensor(data)` becomes `tensor(data)`: built from traced `full`s, since a constant
  tensor made while tracing a branch is a functional tensor that outlives its mode;
- `x[i]` where `i` may be a 0-d integer tensor (a loop index over a symbolic range, an
  `argmax()`) becomes `getitem(x, i)`: torch reads such an index as a Python number, a
  data-dependent value; `index_select` keeps it in the graph;
- `x[t:t + 1]` of a `for t in range(n)` loop's counter becomes `getitem(x, one_step(t))`: the
  one item at `t`, its dim kept (torch read `t:t + 1` of a 0-d tensor `t` as two numbers,
  a slice of a length it could not tell);
- `x.data` becomes `data_of(x)`: `detach()` on a tensor (the same values, without a constant
  that escapes the trace), the attribute of anything else (a `PackedSequence`).
"""

from __future__ import annotations

import operator
from typing import Any

import torch

from .lists import TensorList
from .numbers import number_kind

# Literals bigger than this stay constants (and a branch holding one falls back).
MAX_TRACED_LITERAL = 256


def _tracing() -> bool:
    return torch.compiler.is_exporting()


class Step:
    """`t:t + 1` of a loop counter `t` that is a 0-d tensor (never negative: `range`'s)."""

    __slots__ = ("position",)

    def __init__(self, position: torch.Tensor):
        self.position = position


def one_step(counter: Any) -> Any:
    """The slice `counter:counter + 1` (a `Step` where the counter is a tensor)."""
    return Step(counter) if _is_position(counter) else slice(counter, counter + 1)


def getitem(target: Any, index: Any) -> Any:
    """`target[index]`."""
    found = _tensor_position(target, index) if _tracing() else None
    if found is None:
        return target[_without_steps(index)]
    basic, dim, position = found
    view = target[basic]
    if isinstance(position, Step):  # one item, its dim kept; past the end an IndexError
        return view.index_select(dim, position.position.reshape(1))
    return view.index_select(dim, _from_end(position, view.shape[dim])).squeeze(dim)


def _without_steps(index: Any) -> Any:
    """`index` with each `Step` the slice it stands for (eager: its counter is a tensor)."""
    def plain(item: Any) -> Any:
        return slice(item.position, item.position + 1) if isinstance(item, Step) else item

    return tuple(map(plain, index)) if isinstance(index, tuple) else plain(index)


def setitem(target: Any, index: Any, value: Any, op: str | None = None) -> Any:
    """`target[index] = value`, or with `op` ("iadd", ...) `target[index] op= value`."""
    if not (_tracing() and isinstance(target, torch.Tensor)):
        if op is not None:
            value = getattr(operator, op)(target[index], value)
        target[index] = value
        return target
    if op is not None:  # out of place: `target[index]` may be a view of target
        value = getattr(operator, op.removeprefix("i"))(getitem(target, index), value)
    if not isinstance(value, torch.Tensor):
        # torch would wrap the number in a constant tensor, which a branch cannot hold
        value = torch.full((), value, dtype=target.dtype, device=target.device)
    out = target.clone()
    found = _tensor_position(target, index)
    if found is None:
        out[index] = value
        return out
    # One item along `dim`, written with `where` (elementwise) rather than a scatter: IREE
    # 3.13 fails on a one-element index_put inside a loop ("write affecting operations on
    # global resources are restricted to workgroup distributed contexts").
    basic, dim, position = found
    view = out[basic]
    shape = list(view.shape)
    del shape[dim]
    value = torch.broadcast_to(value.to(view.dtype), shape).unsqueeze(dim)
    rows = torch.arange(view.shape[dim], device=view.device)
    # through index_select, which dync-check-indices checks: a position outside [-n, n)
    # stops the call (IndexOutOfRangeError), as eager raises IndexError, not a wrong write
    picked = rows == rows.index_select(0, _from_end(position, view.shape[dim]))
    mask_shape = [1] * view.dim()
    mask_shape[dim] = -1
    written = torch.where(picked.reshape(mask_shape), value, view)
    if all(item == slice(None) for item in (basic if isinstance(basic, tuple) else (basic,))):
        return written
    out[basic] = written
    return out


def _from_end(position: torch.Tensor, n: Any) -> torch.Tensor:
    """The 0-d integer tensor `position` into a dim of `n` as a 1-element index: a negative
    one counted from the end (x[-1] is the last). One outside [-n, n) stays outside [0, n),
    where dync-check-indices stops the call as eager raises IndexError: not `position % n`,
    which would read or write a wrong element instead."""
    position = position.reshape(1)
    return torch.where(position < 0, position + n, position)


def _is_position(value: Any) -> bool:
    return isinstance(value, Step) or (
        isinstance(value, torch.Tensor) and value.dim() == 0
        and not value.dtype.is_floating_point and value.dtype != torch.bool)


def _tensor_position(target: Any, index: Any) -> tuple[Any, int, torch.Tensor] | None:
    """For a tensor index holding exactly one 0-d integer tensor `t` beside basic indices
    (ints, slices, None, ...): the index with `t` replaced by `:`, the dim `t` then picks
    from, and `t`; else None."""
    if not isinstance(target, torch.Tensor):
        return None
    items = index if isinstance(index, tuple) else (index,)
    positions = [k for k, item in enumerate(items) if _is_position(item)]
    if len(positions) != 1 or any(isinstance(item, torch.Tensor | list) for k, item in
                                  enumerate(items) if k != positions[0]):
        return None
    (k,) = positions
    consumed = sum(1 for item in items if item is not None and item is not Ellipsis)
    dim = 0
    for item in items[:k]:
        if item is Ellipsis:
            dim += target.dim() - consumed
        elif not isinstance(item, int | torch.SymInt):
            dim += 1  # a slice keeps its dim, None adds one
    return _replaced(index, slice(None)), dim, items[k]


def _replaced(index: Any, new: Any) -> Any:
    """`index` with its one 0-d integer tensor replaced by `new`."""
    if not isinstance(index, tuple):
        return new
    return tuple(new if _is_position(item) else item for item in index)


def tensor(data: Any, *args: Any, **kwargs: Any) -> torch.Tensor:
    """`torch.tensor(data, ...)`; of a list of numbers appended on a data-dependent path
    (its bounded buffer, `lists.TensorList`), the numbers appended."""
    if isinstance(data, TensorList) and data.bounded and data.buffer.dim() == 1 and not args \
            and set(kwargs) <= {"dtype", "device", "requires_grad"}:
        items = data.valid()
        dtype = kwargs.get("dtype") or items.dtype
        return items.to(dtype=dtype, device=kwargs.get("device"))
    if not _tracing() or args or isinstance(data, torch.Tensor):
        return torch.tensor(data, *args, **kwargs)
    items, shape = _flatten(data)
    if items is None or len(items) > MAX_TRACED_LITERAL:
        return torch.tensor(data, **kwargs)
    dtype = kwargs.pop("dtype", None) or _dtype_of(items)
    kwargs.pop("requires_grad", None)
    device = kwargs.pop("device", None)
    if kwargs:  # pin_memory and the like: leave them to torch
        return torch.tensor(data, dtype=dtype, device=device, **kwargs)
    if not items:
        return torch.empty(shape, dtype=dtype, device=device)
    parts = [item.reshape(()).to(dtype=dtype, device=device) if isinstance(item, torch.Tensor)
             else torch.full((), item, dtype=dtype, device=device) for item in items]
    return torch.stack(parts).reshape(shape)


def as_tensor(data: Any, *args: Any, **kwargs: Any) -> torch.Tensor:
    """`torch.as_tensor(data, ...)`: a tensor as it is; a list of numbers as `tensor` makes
    it (`torch.as_tensor([x.mean().item(), x.std().item()])`)."""
    if isinstance(data, torch.Tensor) or not _tracing():
        return torch.as_tensor(data, *args, **kwargs)
    return tensor(data, *args, **kwargs)


def new_tensor(like: Any, data: Any, *args: Any, **kwargs: Any) -> Any:
    """`like.new_tensor(data, ...)`: of a tensor `like` and a list of numbers, as `tensor`
    makes it, in `like`'s dtype and device unless given."""
    if not isinstance(like, torch.Tensor) or isinstance(data, torch.Tensor) or args \
            or not _tracing():
        return like.new_tensor(data, *args, **kwargs)
    return tensor(data, **{"dtype": like.dtype, "device": like.device, **kwargs})


def _flatten(data: Any) -> tuple[list | None, tuple[int, ...]]:
    """The numbers of a nested list literal, row-major, and its shape (None when ragged or not
    numbers)."""
    if number_kind(data) is not None:  # also a number the rewrite keeps as a 0-d tensor
        return [data], ()
    if not isinstance(data, list | tuple):
        return None, ()
    parts = [_flatten(item) for item in data]
    if any(items is None for items, _ in parts) or len({shape for _, shape in parts}) > 1:
        return None, ()
    inner = parts[0][1] if parts else ()
    return [x for items, _ in parts for x in items], (len(data), *inner)


def _dtype_of(items: list) -> torch.dtype:
    """The dtype torch.tensor infers for these Python numbers (or numbers kept as 0-d
    tensors: the kind they stand for)."""
    kinds = {number_kind(x) for x in items}
    if kinds == {bool}:
        return torch.bool
    if float in kinds:
        return torch.get_default_dtype()
    return torch.int64


def data_of(value: Any) -> Any:
    """`value.data`."""
    if isinstance(value, torch.Tensor) and _tracing():
        return value.detach()
    return value.data
