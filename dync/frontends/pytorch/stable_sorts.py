"""`stable_sorts()`: eager PyTorch with every sort stable, the reference a compiled sort meets.

Among equal values eager's `sort`/`argsort` (not `stable=True`) and `topk` return the positions
in whatever order their kernels leave them: on the CPU, rows longer than 16 come back in an
order other than the stable one. dync sorts stably (`dync-pack-sort-keys`), an order eager
could return as well, so a first-call check against eager alone found "mismatches" in the
indices of any example with ties (argsort of rounded scores, of ReLU outputs full of zeros)
and fell back. Under this mode `sort` is `sort(stable=True)` and `topk` the first k of a
stable sort (the lowest position first among equal values, for the largest as for the
smallest), which is what dync computes.
"""

from __future__ import annotations

import torch
from torch.utils._python_dispatch import TorchDispatchMode

_aten = torch.ops.aten


class stable_sorts(TorchDispatchMode):  # noqa: N801 -- used as a context manager
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func is _aten.sort.default:
            x, dim, descending = _bound(args, kwargs, ("dim", -1), ("descending", False))
            return _aten.sort.stable(x, stable=True, dim=dim, descending=descending)
        if func is _aten.sort.stable:
            kwargs["stable"] = True
            return func(*args, **kwargs)
        if func is _aten.topk.default:
            x, k, dim, largest = _bound(args, kwargs, ("k", None), ("dim", -1), ("largest", True))
            values, indices = _aten.sort.stable(x, stable=True, dim=dim, descending=largest)
            return values.narrow(dim, 0, k), indices.narrow(dim, 0, k)
        return func(*args, **kwargs)


def _bound(args: tuple, kwargs: dict, *params: tuple[str, object]) -> list:
    """The op's first argument and then each of `params` (name, default), positional or by
    keyword."""
    values = [args[0]]
    for i, (name, default) in enumerate(params, 1):
        values.append(args[i] if i < len(args) else kwargs.get(name, default))
    return values
