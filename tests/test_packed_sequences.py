"""`pack_padded_sequence` → recurrent layer → `pad_packed_sequence` in one graph over a dynamic
batch and sequence length (`frontends/pytorch/rewrite/packed.py`), checked against eager on
lengths that end every sequence at a different step, the longest shorter than the padding."""

import pytest
import torch
from torch import nn
from torch.export import Dim
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

import dync
from dync.errors import UnsupportedConstructError

FEATURES = 5


class PackedLayer(nn.Module):
    def __init__(self, layer: nn.Module, enforce_sorted=True, total_length=False,
                 padding_value=0.0, given_state=False):
        super().__init__()
        self.layer = layer
        self.enforce_sorted, self.total_length = enforce_sorted, total_length
        self.padding_value, self.given_state = padding_value, given_state

    def forward(self, x, lengths):
        batch_first = self.layer.batch_first
        packed = pack_padded_sequence(x, lengths, batch_first=batch_first,
                                      enforce_sorted=self.enforce_sorted)
        state = None
        if self.given_state:  # a state that differs per sequence
            batch = x.shape[0 if batch_first else 1]
            cells = self.layer.num_layers * (2 if self.layer.bidirectional else 1)
            h = torch.arange(batch, dtype=x.dtype).reshape(1, -1, 1) * 0.1 + torch.zeros(
                cells, batch, self.layer.hidden_size)
            state = (h, h * 2) if isinstance(self.layer, nn.LSTM) else h
        out, final = self.layer(packed, state)
        total = x.shape[1 if batch_first else 0] if self.total_length else None
        padded, out_lengths = pad_packed_sequence(out, batch_first=batch_first,
                                                  padding_value=self.padding_value,
                                                  total_length=total)
        finals = final if isinstance(final, tuple) else (final,)
        return (padded, out_lengths, *finals)


CASES = {
    # the chatbot tutorial's encoder: time-major, sorted lengths, max(lengths) rows back
    "GRU, 2 bidirectional layers":
        lambda: PackedLayer(nn.GRU(FEATURES, 6, num_layers=2, bidirectional=True)),
    "LSTM, bidirectional, batch first, unsorted, given state, total_length":
        lambda: PackedLayer(nn.LSTM(FEATURES, 4, bidirectional=True, batch_first=True),
                            enforce_sorted=False, total_length=True, given_state=True),
    "RNN, 2 layers, batch first, unsorted, padding value":
        lambda: PackedLayer(nn.RNN(FEATURES, 6, num_layers=2, batch_first=True),
                            enforce_sorted=False, padding_value=-1.0),
    "LSTM with proj_size":
        lambda: PackedLayer(nn.LSTM(FEATURES, 6, proj_size=3)),
}


def _inputs(layer: nn.Module, sorted_: bool):
    """(x, lengths) for several batches and paddings: lengths of 1 and of the whole padding,
    and batches whose longest sequence is shorter than the padding."""
    gen = torch.Generator().manual_seed(0)
    out = []
    for batch, steps, lengths in [(3, 6, [6, 4, 1]), (5, 9, [7, 7, 3, 2, 1]), (1, 4, [2]),
                                  (4, 2, [2, 2, 2, 1]), (2, 11, [11, 5])]:
        lengths = torch.tensor(lengths)
        if not sorted_:
            lengths = lengths[torch.randperm(batch, generator=gen)]
        shape = (batch, steps, FEATURES) if layer.batch_first else (steps, batch, FEATURES)
        out.append((torch.randn(*shape, generator=gen), lengths))
    return out


def _compile(model: PackedLayer, **options):
    batch, steps = Dim("batch", min=1, max=16), Dim("steps", min=2, max=32)
    x = {0: batch, 1: steps} if model.layer.batch_first else {0: steps, 1: batch}
    example = _inputs(model.layer, model.enforce_sorted)[0]
    return dync.compile(model, example, dynamic_shapes=(x, {0: batch}), cache=False, **options)


@pytest.mark.parametrize("name", sorted(CASES))
def test_packed_layer_in_one_graph(name):
    torch.manual_seed(0)
    model = CASES[name]().eval()
    compiled = _compile(model, mode="graph")
    with torch.no_grad():
        for x, lengths in _inputs(model.layer, model.enforce_sorted):
            expected = model(x, lengths)
            got = compiled(x, lengths)
            assert len(got) == len(expected)
            for e, g in zip(expected, got, strict=True):
                assert g.shape == e.shape, (x.shape, lengths)
                torch.testing.assert_close(g, e, rtol=1e-4, atol=1e-5)


class DataUsedDirectly(nn.Module):
    """Research code that runs a layer on a packed sequence's `data` (its rows are eager's
    packing, which dync does not build): refused in graph mode, right in host mode."""

    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(FEATURES, 4)
        self.scale = nn.Linear(4, 4)

    def forward(self, x, lengths):
        out, _ = self.gru(pack_padded_sequence(x, lengths))
        return self.scale(out.data).sum(0)


def test_an_op_on_packed_data_is_refused_with_its_line():
    model = DataUsedDirectly().eval()
    steps, batch = Dim("steps", min=2, max=32), Dim("batch", min=1, max=16)
    example = (torch.randn(6, 3, FEATURES), torch.tensor([6, 4, 1]))
    with pytest.raises(UnsupportedConstructError) as caught:
        dync.compile(model, example, dynamic_shapes=({0: steps, 1: batch}, {0: batch}),
                     mode="graph", cache=False)
    assert "packed sequence" in str(caught.value)
    assert caught.value.source and caught.value.source.endswith(
        f"test_packed_sequences.py:{DataUsedDirectly.forward.__code__.co_firstlineno + 2}")
    compiled = dync.compile(model, example, dynamic_shapes=({0: steps, 1: batch}, {0: batch}),
                            cache=False)
    with torch.no_grad():
        for x, lengths in [example, (torch.randn(5, 2, FEATURES), torch.tensor([5, 2]))]:
            torch.testing.assert_close(compiled(x, lengths), model(x, lengths))
