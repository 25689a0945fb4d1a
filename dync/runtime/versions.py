"""Which compiled function runs a call: an entry function or one of its versions.

A call's arguments bind the symbols of the signature (`Signature.check_inputs`). A
shape-specialized version (`dync-specialize`) whose values all match runs it as is; else the
smallest bucket version (`dync-bucket`) that holds every value runs it, on the arguments as
they are (the version pads them itself; where its padded arguments keep a dynamic dim, they
are zero-padded here at the end of each bucketed dim) and the symbols' true values appended
as 0-d int64 arrays; else the fully dynamic entry. The choice and the padding are worked out
once per assignment of the symbols.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..signature import Signature, evaluate


@dataclass(frozen=True)
class Choice:
    function: str
    # A bucket's extra arguments: the true values of its symbols, as 0-d int64 arrays.
    sizes: tuple[np.ndarray, ...] = ()
    # Per argument, numpy.pad's widths, or None to pass it as it is: a bucket whose padded
    # arguments keep a dynamic dim is padded here (`dync-bucket`'s "host_padding").
    pads: tuple[tuple[tuple[int, int], ...] | None, ...] = ()

    def arguments(self, arrays: list[np.ndarray]) -> list[np.ndarray]:
        if self.pads:
            arrays = [a if pad is None else _padded(a, pad)
                      for a, pad in zip(arrays, self.pads, strict=True)]
        return [*arrays, *self.sizes] if self.sizes else arrays


def _padded(array: np.ndarray, pad: tuple[tuple[int, int], ...]) -> np.ndarray:
    """`array` padded with zeros by `pad` (before, after) per dim."""
    return np.pad(array, pad)


class Versions:
    """`choose(bound)`: the `Choice` for a call binding the symbols to `bound`."""

    def __init__(self, entry: str, versions: list[dict], signature: Signature):
        self.entry = entry
        self.exact = [v for v in versions if "sizes" not in v]
        # Smallest first: the first bucket holding a call is the one padding it least.
        self.buckets = sorted((v for v in versions if "sizes" in v),
                              key=lambda v: math.prod(v["symbols"].values()))
        self.signature = signature
        self._chosen: dict[tuple, Choice] = {}

    def choose(self, bound: dict[str, int]) -> Choice:
        key = tuple(sorted(bound.items()))
        choice = self._chosen.get(key)
        if choice is None:
            choice = self._chosen[key] = self._choose(bound)
        return choice

    def _choose(self, bound: dict[str, int]) -> Choice:
        for version in self.exact:
            if all(bound.get(k) == v for k, v in version["symbols"].items()):
                return Choice(version["function"])
        for version in self.buckets:
            if all(k in bound and bound[k] <= v for k, v in version["symbols"].items()):
                return self._bucket(version, bound)
        return Choice(self.entry)

    def _bucket(self, version: dict, bound: dict[str, int]) -> Choice:
        sizes = tuple(np.array(bound[name], dtype=np.int64) for name in version["sizes"])
        if not version.get("host_padding"):
            return Choice(version["function"], sizes)
        at_bucket = {**bound, **version["symbols"]}
        pads = []
        for spec in self.signature.inputs:
            widths = [(0, 0 if isinstance(d, int) else evaluate(d, at_bucket) - evaluate(d, bound))
                      for d in spec.shape]
            pads.append(tuple(widths) if any(w for _, w in widths) else None)
        return Choice(version["function"], sizes, tuple(pads))
