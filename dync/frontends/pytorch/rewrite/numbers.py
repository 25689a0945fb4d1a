"""Python numbers of the model's code that the rewrite keeps as 0-d tensors (`.item()`,
`int(t)`, `len` of a list of data-dependent length, a counter a branch or a loop changed):
marked as such, so that the forward returns them as numbers, as in eager.
"""

from __future__ import annotations

from typing import Any

import torch
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
        return leaf if kind is None else leaf.to(NUMBER_DTYPES[kind]).item()

    return pytree.tree_map(number, result)
