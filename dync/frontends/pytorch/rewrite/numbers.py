"""Python numbers of the model's code that the rewrite keeps as 0-d tensors (`.item()`,
`int(t)`, `len` of a list of data-dependent length, a counter a branch or a loop changed):
marked as such, so that the forward returns them as numbers, as in eager.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.overrides import TorchFunctionMode
from torch.utils import _pytree as pytree

#: The attribute marking a 0-d tensor that stands for a Python number of the model's code
#: (`.item()`, `int(t)`, a counter a branch or a loop changed): its Python type.
_NUMBER = "_dync_number"
#: The dtype a 0-d tensor standing for a number of each kind has (its value exact).
NUMBER_DTYPES = {int: torch.int64, float: torch.float64, bool: torch.bool}
_KINDS = ((bool | torch.SymBool, bool), (int | torch.SymInt, int), (float | torch.SymFloat, float))


def as_number(tensor: Any, kind: type) -> Any:
    """`tensor`, a 0-d tensor the rewrite made of a Python `kind` (int, float or bool), marked
    so that the forward's result gives it back as one (`numbers_returned`)."""
    if isinstance(tensor, torch.Tensor) and tensor.dim() == 0:
        setattr(tensor, _NUMBER, kind)
    return tensor


def number_kind(value: Any) -> type | None:
    """int, float or bool where `value` is such a number (symbolic or not) or a tensor standing
    for one; else None."""
    for kinds, kind in _KINDS:
        if isinstance(value, kinds):
            return kind
    return getattr(value, _NUMBER, None) if isinstance(value, torch.Tensor) else None


def merged_kind(one: Any, other: Any) -> type | None:
    """The number kind of what two paths give one variable (a branch's two sides, a loop's
    before and after), where either is a number and the other a number or a 0-d tensor of the
    kind's dtypes (`n + 1` of a number `n` kept as a tensor: arithmetic drops the mark)."""
    kinds = [number_kind(v) for v in (one, other)]
    if kinds[0] is None and kinds[1] is None:
        return None
    if None in kinds:
        kind = kinds[0] or kinds[1]
        tensor = other if kinds[1] is None else one
        return kind if isinstance(tensor, torch.Tensor) and tensor.dim() == 0 \
            and dtype_kind(tensor.dtype) is kind else None
    if kinds[0] is kinds[1]:
        return kinds[0]
    return float if float in kinds else int


def dtype_kind(dtype: torch.dtype) -> type:
    """The Python number type a 0-d tensor of `dtype` stands for."""
    return bool if dtype == torch.bool else float if dtype.is_floating_point else int


def numbers_returned(result: Any) -> Any:
    """The forward's `result`, each marked 0-d tensor (`as_number`) the Python number the
    model returns there in eager (an early exit's index: `return logits, i`); the export makes
    it a number output again (`scalar_outputs`)."""
    def number(leaf: Any) -> Any:
        kind = getattr(leaf, _NUMBER, None) if isinstance(leaf, torch.Tensor) else None
        if kind is bool:
            # `.item()` of a bool tensor is a SymBool torch writes as `sym_ite` over an int,
            # which the importer does not take: the comparison of that int instead
            return leaf.to(torch.int64).item() != 0
        return leaf if kind is None else leaf.to(NUMBER_DTYPES[kind]).item()

    return pytree.tree_map(number, result)


def _same_kind(kinds: list[type]) -> type:
    return float if float in kinds else int


def _logical(kinds: list[type]) -> type:
    return bool if all(k is bool for k in kinds) else int


_TB, _T = torch._C.TensorBase, torch.Tensor
#: The tensor methods Python's number operators call, and the kind of number each gives.
_ARITHMETIC = {
    **dict.fromkeys((_TB.add, _TB.sub, _TB.mul, _TB.remainder, _TB.pow, _TB.neg, _TB.abs,
                     _T.__rsub__, _T.__floordiv__, _T.__rfloordiv__, _T.__rmod__, _T.__pow__,
                     _T.__rpow__), _same_kind),
    **dict.fromkeys((_TB.div, _T.__rdiv__), lambda kinds: float),
    **dict.fromkeys((_TB.gt, _TB.lt, _TB.ge, _TB.le, _TB.eq, _TB.ne, _TB.__eq__, _TB.__ne__,
                     _TB.__gt__, _TB.__lt__, _TB.__ge__, _TB.__le__), lambda kinds: bool),
    **dict.fromkeys((_TB.__and__, _TB.__or__, _TB.__xor__), _logical),
}


class NumberArithmetic(TorchFunctionMode):
    """Python arithmetic of numbers the rewrite keeps as 0-d tensors, with each other or with
    Python numbers (`n + 1`, `n / 2`, `n > 3` of an `n = t.item()`), gives a number of the
    kind Python's gives, marked as such: the forward returns it as a number, as eager does
    (it came back a 0-d tensor)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        kind_of = _ARITHMETIC.get(func)
        if kind_of is None or kwargs or not isinstance(result, torch.Tensor) or result.dim():
            return result
        kinds = [number_kind(a) for a in args]
        if None not in kinds and any(isinstance(a, torch.Tensor) for a in args):
            as_number(result, kind_of(kinds))
        return result
