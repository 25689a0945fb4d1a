"""A list grown on a data-dependent path (`rewrite/lists.py`) is a bounded buffer while
exporting: the list operations that read its Python items (it has none) are refused, never
answered from an empty list; `reverse()` reverses the valid prefix. Whole models over such
lists are in test_constructs.py (a Viterbi backtrace over `reversed(history)`)."""

from __future__ import annotations

import pytest
import torch

from dync.errors import UnsupportedConstructError
from dync.frontends.pytorch.rewrite.lists import new_list


def _bounded(length: int = 3, capacity: int = 5):
    items = new_list("model.py:7")
    items.set_bounded(torch.arange(capacity * 2.0).view(capacity, 2),
                      torch.scalar_tensor(length, dtype=torch.int64))
    return items


@pytest.mark.parametrize("use", [
    reversed, lambda v: v.pop(), lambda v: v.insert(0, torch.ones(2)), lambda v: v.index(0),
    lambda v: v.count(0), lambda v: v.copy(), lambda v: v.sort(), lambda v: v.clear(),
    lambda v: torch.ones(2) in v, lambda v: v + [torch.ones(2)], lambda v: v * 2,
    lambda v: v == [], lambda v: v.__setitem__(0, torch.ones(2)), lambda v: v.__delitem__(0),
    list, len,
])
def test_reading_the_python_items_is_refused(use):
    with pytest.raises(UnsupportedConstructError, match="model.py:7"):
        use(_bounded())


def test_reverse_reverses_the_valid_prefix():
    items = _bounded(length=3, capacity=5)
    items.reverse()
    assert items.buffer[:, 0].tolist() == [4.0, 2.0, 0.0, 6.0, 8.0]
    assert items.valid()[:, 1].tolist() == [5.0, 3.0, 1.0]


def test_an_unbounded_list_is_a_list():
    items = new_list("model.py:7", 1, 2, 3)
    items.reverse()
    assert list(reversed(items)) == [1, 2, 3] and items.pop() == 1 and items == [3, 2]
    assert 3 in items and items.index(2) == 1 and items + [0] == [3, 2, 0]
