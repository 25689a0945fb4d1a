"""The tensors the FX importer turns into ``dense_resource`` literals, remembered as the data of
those literals (`dync.dialects.literals.hold_resource_data`): passes that transform weights
(pre-transposed, channels-last, as matmuls) then read them at numpy speed instead of one C
call per element (a BERT-base's 768 x 768 weights took 0.7 s each).

A tensor is held weakly and with its version counter: once it is freed or written in place,
its literal is read from the blob again.
"""

from __future__ import annotations

import weakref

import numpy as np
import torch
from iree.compiler import ir
from iree.compiler.extras.fx_importer import RefMapping, RefTracker

from ...dialects.literals import hold_resource_data


class HeldWeights(RefTracker):
    """A `py_attr_tracker` for `FxImporter` that remembers which tensor each literal it makes
    comes from; `hold` then registers them."""

    def __init__(self) -> None:
        super().__init__()
        self._tracked: list[tuple[torch.Tensor, RefMapping]] = []

    def track(self, referrent) -> RefMapping:
        mapping = super().track(referrent)
        if isinstance(referrent, torch.Tensor) and mapping.is_empty:  # not seen before
            self._tracked.append((referrent, mapping))
        return mapping

    def hold(self) -> None:
        """Register the tensors whose literals are ``dense_resource`` blobs, and forget them."""
        for tensor, mapping in self._tracked:
            if isinstance(mapping.value, ir.DenseResourceElementsAttr):
                source = _source(tensor)
                if source is not None:
                    hold_resource_data(mapping.value, source)
        self._tracked.clear()


def _source(tensor: torch.Tensor):
    """A function returning `tensor`'s data as a flat numpy array while `tensor` lives unwritten
    (None after), or None where its data cannot be read so."""
    if tensor.is_meta or tensor.layout != torch.strided or tensor.device.type != "cpu" \
            or tensor.is_conj() or tensor.is_neg():
        return None
    try:
        version = tensor._version  # inference tensors have none
    except RuntimeError:
        return None
    ref = weakref.ref(tensor)

    def data() -> np.ndarray | None:
        live = ref()
        if live is None or live._version != version:
            return None
        try:
            return live.detach().contiguous().reshape(-1).numpy()
        except (RuntimeError, TypeError):  # a tensor subclass without plain storage
            return None

    return data

