"""Tensors a data-dependent loop grows along one dim, as bounded buffers.

A greedy decoder keeps its output in a tensor and grows it each step
(``ys = torch.cat([ys, token], dim=1)``) until an end token, in a `for` over a range whose
bound is symbolic (``range(src.size(1) + 4)``): a `while_loop`, whose carried tensors must
keep their shapes. When one probed iteration leaves a carried tensor `step` longer along one
dim (a static amount) and the same elsewhere, and the loop's trips are bounded, the tensor is
carried as `buffer` — padded with zeros along that dim to the most it can hold, its start
plus `trips * step` — and `length`, a 0-d int64 tensor. Each iteration reads
``buffer.narrow(dim, 0, length)`` (a data-dependent size), and its result, `step` longer,
is written back padded; after the loop the variable is the buffer's valid prefix. The same
scheme as `TensorList` for a list appended to (lists.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch.fx.experimental.symbolic_shapes import statically_known_true

from ....errors import UnsupportedConstructError
from ..shape_exprs import size_range
from .decisions import _as_int


@dataclass(frozen=True)
class Growth:
    """How a carried tensor grows: `step` more along `dim` each iteration, to `capacity`."""

    name: str
    dim: int
    step: int
    least: int  # the length it starts from, at least (it only grows)
    capacity: int
    site: str

    def buffer(self, value: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(buffer, length) holding `value`, the tensor before the loop."""
        shape = list(value.shape)
        shape[self.dim] = self.capacity
        length = torch.scalar_tensor(value.shape[self.dim], dtype=torch.int64)
        return self._written(value.new_zeros(shape), value), length

    def view(self, buffer: torch.Tensor, length: torch.Tensor, room: int = 0) -> torch.Tensor:
        """The valid prefix of `buffer`; `room` more must fit (an iteration's growth)."""
        n = length.item()
        torch._check(n >= self.least)
        torch._check(n + room <= self.capacity)
        return buffer.narrow(self.dim, 0, n)

    def store(self, grown: torch.Tensor, buffer: torch.Tensor, before: torch.Tensor,
              length: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """`buffer` and `length` holding `grown`, an iteration's result for `before` (the
        `view` of `buffer` and `length`)."""
        expected = before.shape[self.dim] + self.step
        if _grown_dim(before, grown) != self.dim \
                or not statically_known_true(grown.shape[self.dim] == expected):
            raise UnsupportedConstructError(
                f"variable {self.name!r} in a data-dependent loop",
                f"it grew by {self.step} along dim {self.dim} in the first iteration but not "
                "so in every iteration; a growing tensor must grow by the same static amount "
                "each time (as torch.cat with a tensor of fixed size does)",
                self.site,
            )
        return self._written(buffer, grown), length + self.step

    def _written(self, buffer: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
        """`buffer` with `value` written at its start along `dim` (a size read from the data
        sizes only the written region: a zero tail of such a size, IREE cannot dispatch)."""
        size = value.shape[self.dim]
        torch._check(size <= self.capacity)
        return buffer.slice_scatter(value, self.dim, 0, size)


def growth(name: str, before: torch.Tensor, after: torch.Tensor, trips: int | None,
           site: str) -> Growth | None:
    """How `after` (one probed iteration's value) grows `before`, when it grows along one dim
    by a static positive amount and `trips` bounds the loop; else None."""
    dim = _grown_dim(before, after)
    if trips is None or before.dtype != after.dtype or dim is None:
        return None
    step = _as_int(after.shape[dim] - before.shape[dim])
    least, most = _range(before.shape[dim])
    if step is None or step <= 0 or most is None:
        return None
    return Growth(name, dim, step, least, most + trips * step, site)


def _grown_dim(before: torch.Tensor, after: torch.Tensor) -> int | None:
    """The one dim in which `after`'s shape may differ from `before`'s (of the same rank),
    else None."""
    if before.dim() != after.dim():
        return None
    differ = [d for d, (a, b) in enumerate(zip(before.shape, after.shape, strict=True))
              if not statically_known_true(a == b)]
    return differ[0] if len(differ) == 1 else None


def _range(size) -> tuple[int, int | None]:
    """The least and the largest value (None: unbounded) `size` can take, an int or a backed
    symbolic size. The shape environment assumes a dynamic size is 2 or more; one declared
    from 1 may be 1, so a symbolic size is taken to be at least 1 (a size of 0 fails a
    run-time check of the compiled module)."""
    if not isinstance(size, torch.SymInt):
        return int(size), int(size)
    least, most = size_range(size)
    return min(least, 1), most
