"""`pack_padded_sequence` → `nn.GRU`/`nn.LSTM`/`nn.RNN` → `pad_packed_sequence` while exporting:
the packed sequences stay padded, (time, batch, features), and the layers mask each sequence's
steps past its length.

Packing is the way RNN research code runs a batch of sequences of different lengths (the
chatbot and NMT encoders, taggers). torch.export cannot trace it: the packed data has as many
rows as the lengths sum to and `batch_sizes` is read back as Python numbers
(`int(batch_sizes[0])` sizes the initial state). Eager semantics kept here:

* the layer's output at step t of sequence b, for t < lengths[b], and its final state, the
  state after each sequence's own last step (each step past a sequence's end keeps its state;
  a reverse direction runs each sequence reversed within its length);
* `pad_packed_sequence` returns `max(lengths)` rows (an unbacked size), or `total_length`,
  with `padding_value` past each length, in the caller's batch order (the sorting that
  `enforce_sorted=False` does is torch's own code, unchanged);
* `batch_sizes` is computed as eager's (the number of sequences longer than each step).

The packed `data` is not eager's (it holds the padding), so any other use of it — an op on
`packed.data`, a functional `_VF.gru` over it — is refused while exporting, never computed
on the padded layout.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch
from torch.nn.utils.rnn import PackedSequence
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_leaves

from ....errors import UnsupportedConstructError
from ..source import user_frame_here

_PACK = torch._C._VariableFunctions._pack_padded_sequence
_PAD = torch._C._VariableFunctions._pad_packed_sequence


@dataclass(frozen=True)
class Packing:
    """One `pack_padded_sequence`: its lengths (batch,), and the `batch_sizes` it returned
    (kept alive: packings are found by its id)."""

    lengths: torch.Tensor
    batch_sizes: torch.Tensor


class PackedSequences(TorchFunctionMode):
    """While exporting: packs as padded data, pads back (see the module docstring), and
    refuses every other op on the data of a packed sequence."""

    def __init__(self):
        super().__init__()
        self._packings: dict[int, Packing] = {}  # id(batch_sizes) ->
        self._data: dict[int, torch.Tensor] = {}  # id(data) -> data (kept alive: ids stay unique)
        self._reading = 0  # inside `reading()`: dync's own ops on the padded data

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        """Within the block the padded data may be read (a recurrent layer over it)."""
        self._reading += 1
        try:
            yield
        finally:
            self._reading -= 1

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if not torch.compiler.is_exporting():
            return func(*args, **kwargs)
        if func is _PACK:
            return self._pack(*args, **kwargs)
        if func is _PAD:
            return self._pad(*args, **kwargs)
        if (self._data and not self._reading and _name(func) not in _METADATA
                and any(id(leaf) in self._data for leaf in tree_leaves((args, kwargs)))):
            raise UnsupportedConstructError(
                "PackedSequence data", "an op on the data of a packed sequence "
                f"({_name(func)}): dync keeps packed sequences padded while "
                "compiling, so only recurrent layers and pad_packed_sequence may read them",
                user_frame_here())
        return func(*args, **kwargs)

    def padded(self, sequence: Any) -> tuple[torch.Tensor, Packing] | None:
        """The padded data (time, batch, features) and packing of a sequence this mode
        packed (or a recurrent layer produced from one), else None."""
        if not isinstance(sequence, PackedSequence):
            return None
        packing = self._packings.get(id(sequence.batch_sizes))
        if packing is None or self._data.get(id(sequence.data)) is not sequence.data:
            return None
        return sequence.data, packing

    def packed(self, padded: torch.Tensor, like: PackedSequence) -> PackedSequence:
        """A recurrent layer's output (time, batch, features) as the packed sequence it
        returns for `like`."""
        self._data[id(padded)] = padded
        return PackedSequence(padded, like.batch_sizes, like.sorted_indices,
                              like.unsorted_indices)

    def _pack(self, input: torch.Tensor, lengths: torch.Tensor, batch_first: bool):
        padded = input.transpose(0, 1) if batch_first else input.view(input.shape)
        steps = padded.shape[0]
        longest = torch.ops.aten._local_scalar_dense(lengths.max())
        torch._check(longest >= 1)
        torch._check(longest <= steps)
        batch_sizes = (lengths.unsqueeze(0) > torch.arange(longest).unsqueeze(1)).sum(1)
        self._packings[id(batch_sizes)] = Packing(lengths, batch_sizes)
        self._data[id(padded)] = padded
        return padded, batch_sizes

    def _pad(self, data: torch.Tensor, batch_sizes: torch.Tensor, batch_first: bool,
             padding_value: float, total_length: Any):
        packing = self._packings.get(id(batch_sizes))
        if packing is None or self._data.get(id(data)) is not data:
            raise UnsupportedConstructError(
                "PackedSequence data", "pad_packed_sequence of a sequence that was not packed by "
                "pack_padded_sequence and recurrent layers (a PackedSequence built by hand)",
                user_frame_here())
        # `pad_packed_sequence` passes its `total_length`, or `batch_sizes.size(0)`: the
        # longest length.
        rows = torch.arange(total_length)
        picked = data.index_select(0, torch.clamp(rows, max=data.shape[0] - 1))
        inside = (rows.unsqueeze(1) < packing.lengths.unsqueeze(0))
        inside = inside.reshape(*inside.shape, *[1] * (data.dim() - 2))
        out = torch.where(inside, picked, torch.full((), padding_value, dtype=data.dtype))
        return (out.transpose(0, 1) if batch_first else out), packing.lengths


# What may be read of packed data: its metadata, not its values.
_METADATA = frozenset({"shape", "dtype", "device", "ndim", "layout", "requires_grad", "is_cuda",
                       "is_meta", "is_sparse", "is_quantized", "is_nested", "size", "dim",
                       "numel", "stride", "is_contiguous", "is_floating_point", "element_size",
                       "get_device", "__len__", "new_zeros", "new_ones", "new_empty",
                       "new_full"})


def _name(func: Any) -> str:
    """An op's name; a property's (`Tensor.shape.__get__`) is the property's."""
    name = getattr(func, "__name__", str(func))
    owner = getattr(func, "__self__", None)
    return getattr(owner, "__name__", name) if name == "__get__" else name


_ACTIVE: list[PackedSequences] = []


def active() -> PackedSequences | None:
    """The mode of the export in progress (see `rewritten`), if any."""
    return _ACTIVE[-1] if _ACTIVE else None


class packed_sequences:
    """Context: a `PackedSequences` mode, entered and made `active()`."""

    def __enter__(self) -> PackedSequences:
        self.mode = PackedSequences()
        self.mode.__enter__()
        _ACTIVE.append(self.mode)
        return self.mode

    def __exit__(self, *exc: Any) -> None:
        _ACTIVE.remove(self.mode)
        self.mode.__exit__(*exc)
