"""Variables a data-dependent branch leaves None on one path and a tensor on the other.

`out = None`, set by the early exit that fires, then `if out is None: out = self.final(x)`
after the loop; an auxiliary output computed on one path only. A `cond`'s outputs are tensors
on both sides, so such a variable crosses as a `MaybeTensor`: the tensor (zeros on the path
that left it None) and `present`, a 0-d bool tensor. `x is None` and `x is not None` of it
are predicates on `present` (the rewrite turns each `is None` test into `is_none` /
`is_not_none`), and the output tree gives None back where the model returns it absent
(`dync.output_tree`'s optional node). Anything else reads it as its tensor, as eager code can
only where it is not None.
"""

from __future__ import annotations

import collections
from collections.abc import Sequence
from typing import Any

import torch
from torch.utils import _pytree as pytree


class MaybeTensor:
    """A tensor, or None where `present` (a 0-d bool tensor) is False."""

    __slots__ = ("value", "present")

    def __init__(self, value: Any, present: Any):
        self.value, self.present = value, present

    def __getattr__(self, name: str) -> Any:
        # not its slots (unset while a copy is made) nor protocols (`__deepcopy__`), which
        # would answer for the tensor alone
        if name in MaybeTensor.__slots__ or name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.value, name)

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        args, kwargs = pytree.tree_map(_tensor_of, (args, kwargs or {}), is_leaf=_is_maybe)
        return func(*args, **kwargs)

    def __repr__(self) -> str:
        return f"MaybeTensor({self.value!r}, present={self.present!r})"


def _is_maybe(value: Any) -> bool:
    return isinstance(value, MaybeTensor)


def _tensor_of(value: Any) -> Any:
    return value.value if isinstance(value, MaybeTensor) else value


def _delegated(name: str):
    def method(self, *args):
        return getattr(self.value, name)(*args)

    method.__name__ = name
    return method


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
              "__truediv__", "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__",
              "__matmul__", "__rmatmul__", "__pow__", "__rpow__", "__neg__", "__abs__",
              "__getitem__", "__lt__", "__le__", "__gt__", "__ge__", "__and__", "__or__",
              "__invert__", "__len__", "__iter__", "__bool__", "__float__", "__int__"):
    setattr(MaybeTensor, _name, _delegated(_name))
del _name

pytree.register_pytree_node(
    MaybeTensor,
    lambda m: ([m.value, m.present], None),
    lambda children, _: MaybeTensor(*children),
    serialized_type_name=f"{__name__}.MaybeTensor",
    flatten_with_keys_fn=lambda m: ([(pytree.GetAttrKey("value"), m.value),
                                     (pytree.GetAttrKey("present"), m.present)], None),
)


def is_none(value: Any) -> Any:
    """`value is None`: a predicate where `value` is a `MaybeTensor`."""
    if isinstance(value, MaybeTensor):
        return torch.logical_not(value.present)
    return value is None


def is_not_none(value: Any) -> Any:
    """`value is not None`: a predicate where `value` is a `MaybeTensor`."""
    if isinstance(value, MaybeTensor):
        return value.present
    return value is not None


def as_optionals(values: tuple, other: tuple, names: Sequence[str],
                 placeholders: Sequence[str] = ()) -> tuple:
    """What one side of a branch gives its variables (`values`; `other`: the other side's),
    each None or tensor whose counterpart is the other of the two a `MaybeTensor`, also
    inside tuples, lists and dicts of one structure (`return logits, None` against `return
    logits, aux`). `placeholders` are names whose None only stands for "not set on this
    path" (a return value before the `return`), which a flag beside them decides."""
    return tuple(value if name in placeholders and (value is None or theirs is None)
                 else _wrapped(value, theirs)
                 for name, value, theirs in zip(names, values, other, strict=True))


def _wrapped(value: Any, other: Any) -> Any:
    if _crosses_as_optional(value, other):
        if isinstance(value, torch.Tensor):
            return MaybeTensor(value, torch.ones((), dtype=torch.bool))
        if value is None:
            like = _tensor_of(other)
            return MaybeTensor(torch.zeros(like.shape, dtype=like.dtype, device=like.device),
                               torch.zeros((), dtype=torch.bool))
        return value
    if type(value) is not type(other) or not plain_container(value):
        return value  # a `TensorList` among others: lists of data-dependent length stay as they are
    if isinstance(value, dict):
        if list(value) != list(other):
            return value
        items = {k: _wrapped(v, other[k]) for k, v in value.items()}
        changed = any(items[k] is not v for k, v in value.items())
        return type(value)(items) if changed else value
    if len(value) != len(other):
        return value
    items = [_wrapped(a, b) for a, b in zip(value, other, strict=True)]
    if all(a is b for a, b in zip(items, value, strict=True)):
        return value
    return type(value)(*items) if _named(value) else type(value)(items)


def plain_container(value: Any) -> bool:
    """A tuple (named or not), a plain list or a dict: not a `TensorList` (a list subclass)."""
    return type(value) in _CONTAINERS or _named(value)


_CONTAINERS = (tuple, list, dict, collections.OrderedDict)


def _named(value: Any) -> bool:
    return isinstance(value, tuple) and hasattr(value, "_fields")


def _crosses_as_optional(a: Any, b: Any) -> bool:
    """None against a tensor or a `MaybeTensor`, or a `MaybeTensor` against a tensor."""
    def tensor_like(value: Any) -> bool:
        return isinstance(value, torch.Tensor | MaybeTensor)

    return ((a is None and tensor_like(b)) or (b is None and tensor_like(a))
            or (_is_maybe(a) and isinstance(b, torch.Tensor))
            or (_is_maybe(b) and isinstance(a, torch.Tensor)))
