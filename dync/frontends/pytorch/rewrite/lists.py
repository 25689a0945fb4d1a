"""Python lists of tensors that grow on data-dependent paths, as bounded buffers.

The rewriter turns `v = []` into `v = __dync__.new_list(site)` (and `v = [a, b]` into
`v = __dync__.new_list(site, a, b)`): a `TensorList`, which is a plain list in eager
execution. While exporting, when a data-dependent branch appends to it (a decoder appending a
token until END), its length stops being a Python int: the list becomes a bounded
buffer — `buffer`, the items stacked to a static capacity (the most appends any path can make),
and `length`, a 0-d int64 tensor — that crosses `cond` as two tensors. Later appends write at
`length`; `torch.cat`/`torch.stack` of the list take `buffer[:length]` (an unbacked size);
`len(v)` gives `length`; `v[-1]`/`v[i]` read the buffer.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from typing import Any

import torch
from torch.overrides import TorchFunctionMode, _get_current_function_mode_stack

from ....errors import UnsupportedConstructError
from .numbers import as_number

Snapshot = tuple[list, torch.Tensor | None, torch.Tensor | None]


class TensorList(list):
    """A list the rewriter saw created empty; see the module docstring."""

    buffer: torch.Tensor | None = None
    length: torch.Tensor | None = None
    site: str = "<unknown>"

    @property
    def bounded(self) -> bool:
        return self.buffer is not None

    # -- state, for probing branches and lifting -------------------------------------------
    def snapshot(self) -> Snapshot:
        return list(list.__iter__(self)), self.buffer, self.length

    def restore(self, snap: Snapshot) -> None:
        list.clear(self)
        list.extend(self, snap[0])
        self.buffer, self.length = snap[1], snap[2]

    def tensors(self) -> list[torch.Tensor]:
        items, buffer, length = self.snapshot()
        state = [buffer, length] if buffer is not None else []
        return state + [t for t in items if isinstance(t, torch.Tensor)]

    def replace_tensors(self, tensors: Iterable[torch.Tensor]) -> None:
        """Put `tensors` (in `tensors()` order) in place of the current ones."""
        new = iter(tensors)
        if self.bounded:
            self.buffer, self.length = next(new), next(new)
        items = [next(new) if isinstance(t, torch.Tensor) else t for t in list.__iter__(self)]
        list.clear(self)
        list.extend(self, items)

    def as_buffer(self, capacity: int, like: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(buffer padded to `capacity`, length) of the current state."""
        if self.bounded:
            buffer, length = self.buffer, self.length
        else:
            items = list(list.__iter__(self))
            for item in items:
                _check_item(item, like, self.site)
            buffer = torch.stack(items) if items else torch.zeros((0, *like.shape), dtype=like.dtype)
            length = torch.scalar_tensor(len(items), dtype=torch.int64)
        pad = capacity - buffer.shape[0]
        if pad:
            buffer = torch.cat([buffer, buffer.new_zeros((pad, *buffer.shape[1:]))])
        return buffer, length

    def set_bounded(self, buffer: torch.Tensor, length: torch.Tensor) -> None:
        list.clear(self)
        self.buffer, self.length = buffer, length

    # -- list operations -------------------------------------------------------------------
    def append(self, value: Any) -> None:
        if not self.bounded:
            list.append(self, value)
            return
        _check_item(value, self.buffer[0], self.site)
        grown = torch.cat([self.buffer, value.unsqueeze(0)])
        at = torch.arange(grown.shape[0]) == self.length
        self.buffer = torch.where(at.view(-1, *[1] * value.dim()), value.unsqueeze(0), grown)
        self.length = self.length + 1

    def extend(self, values: Iterable) -> None:
        for v in values:
            self.append(v)

    def __len__(self) -> int:
        if self.bounded:
            raise self._unsupported("len() as a Python int")
        return list.__len__(self)

    def __iter__(self):
        if self.bounded:
            raise self._unsupported("iteration")
        return list.__iter__(self)

    def __getitem__(self, index):
        if not self.bounded:
            return list.__getitem__(self, index)
        if not isinstance(index, int):
            raise self._unsupported(f"indexing with {type(index).__name__}")
        at = self.length + index if index < 0 else torch.scalar_tensor(index, dtype=torch.int64)
        # Past the items appended (or before the first): the buffer's capacity instead, an
        # index dync-check-indices stops the call at (IndexOutOfRangeError), as eager raises
        # IndexError; the buffer's rows past the length hold no item.
        capacity = self.buffer.shape[0]
        at = torch.where((at >= 0) & (at < self.length), at, capacity)
        return self.buffer.index_select(0, at.reshape(1)).squeeze(0)

    def __reversed__(self):
        # list's own reversed() reads the Python items, which a bounded list has none of: a
        # loop over `reversed(v)` (a Viterbi backtrace) ran no step at all
        if self.bounded:
            raise self._unsupported("reversed() outside a for loop")
        return list.__reversed__(self)

    def reverse(self) -> None:
        if not self.bounded:
            list.reverse(self)
            return
        at = torch.arange(self.buffer.shape[0])
        self.buffer = self.buffer.index_select(
            0, torch.where(at < self.length, self.length - 1 - at, at))

    def valid(self) -> torch.Tensor:
        """The items as one tensor (length, *item), of a data-dependent length."""
        n = self.length.item()
        torch._check(n >= 0)
        torch._check(n <= self.buffer.shape[0])
        return self.buffer[:n]

    def _unsupported(self, what: str) -> UnsupportedConstructError:
        return UnsupportedConstructError(
            f"{what} of a list whose length depends on the data",
            "a list appended on a data-dependent path is a bounded buffer while exporting: "
            "torch.cat/torch.stack of it, len(), v[i], v[-i], v.reverse() and a for loop over "
            "it or reversed(it) are supported",
            self.site,
        )


def _refused_when_bounded(name: str):
    def method(self, *args, **kwargs):
        if self.bounded:
            raise self._unsupported(f".{name}()" if name.isidentifier() else name)
        return getattr(list, name)(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    return method


# list's other methods read or write the Python items, which a bounded list has none of
for _name in ("pop", "insert", "remove", "index", "count", "copy", "sort", "clear",
              "__contains__", "__add__", "__iadd__", "__mul__", "__imul__", "__rmul__",
              "__setitem__", "__delitem__", "__eq__", "__ne__"):
    setattr(TensorList, _name, _refused_when_bounded(_name))
del _name


def new_list(site: str, *items: Any) -> TensorList:
    result = TensorList(items)
    result.site = site
    return result


def length(value: Any) -> Any:
    """`len(value)`: a 0-d tensor for a list of data-dependent length, the symbolic size of a
    tensor's first dim while exporting."""
    if isinstance(value, TensorList) and value.bounded:
        return as_number(value.length, int)
    if isinstance(value, torch.Tensor) and torch.compiler.is_exporting():
        return value.shape[0]  # a symbolic size stays symbolic (len() would specialize it)
    return len(value)


def _check_item(item: Any, like: torch.Tensor, site: str) -> None:
    if not isinstance(item, torch.Tensor) or item.dtype != like.dtype or item.dim() != like.dim():
        got = f"{item.dtype}{list(item.shape)}" if isinstance(item, torch.Tensor) else type(item).__name__
        raise UnsupportedConstructError(
            "list of mixed items appended on a data-dependent path",
            f"its items must be tensors of one dtype and shape (like {like.dtype}"
            f"{list(like.shape)}), got {got}",
            site,
        )


_CONCATS = {torch.cat, torch.concat, torch.concatenate}


class BoundedListMode(TorchFunctionMode):
    """`torch.cat`/`torch.stack` of a bounded `TensorList` read its valid prefix."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if (func in _CONCATS or func is torch.stack) and args and isinstance(args[0], TensorList) \
                and args[0].bounded:
            items = args[0].valid()
            # eager refuses an empty list ("expected a non-empty list of Tensors")
            torch._check(items.shape[0] >= 1)
            dim = args[1] if len(args) > 1 else kwargs.get("dim", 0)
            if func is torch.stack:
                return items.movedim(0, dim % items.dim())
            d = dim % (items.dim() - 1)
            moved = items.movedim(0, d)  # (*item[:d], n, *item[d:])
            shape = (*moved.shape[:d], moved.shape[d] * moved.shape[d + 1], *moved.shape[d + 2:])
            return moved.reshape(shape)
        return func(*args, **kwargs)


@contextlib.contextmanager
def list_mode_active():
    """`BoundedListMode` on the torch-function mode stack for the duration: `torch.cond` and
    `while_loop` trace their branches with the modes outside them set aside, and a branch
    reading a bounded list (a loop left by `break` inside an `if` on data) needs it there."""
    if any(isinstance(m, BoundedListMode) for m in _get_current_function_mode_stack()):
        yield
        return
    with BoundedListMode():
        yield
