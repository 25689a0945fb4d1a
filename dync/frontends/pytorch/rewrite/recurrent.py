"""`nn.RNN`/`nn.LSTM`/`nn.GRU` over a sequence of dynamic length: one `while_loop` per layer
and direction.

torch's decomposition of these layers unrolls the time steps in Python, which specializes the
sequence length to the example's (an export error for a dynamic dim). While exporting, and
only when the length is symbolic, the rewriter runs them as loops over the time steps with
the layer's own cell op (`aten.gru_cell`, `aten.lstm_cell`, `aten.rnn_*_cell`) instead.
Eager runs and static lengths use the module's own forward.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import nn
from torch._higher_order_ops.while_loop import while_loop_op

_CELLS = {
    "GRU": torch.ops.aten.gru_cell.default,
    "LSTM": torch.ops.aten.lstm_cell.default,
    "RNN_TANH": torch.ops.aten.rnn_tanh_cell.default,
    "RNN_RELU": torch.ops.aten.rnn_relu_cell.default,
}


def looped_forward(module: nn.Module) -> Callable | None:
    """A replacement `forward` for a recurrent layer, or None for layers left alone."""
    if type(module) not in (nn.RNN, nn.LSTM, nn.GRU) or getattr(module, "proj_size", 0):
        return None
    original = module.forward

    def forward(input: Any, hx: Any = None):
        if (not torch.compiler.is_exporting() or module.training
                or not isinstance(input, torch.Tensor)):
            return original(input, hx)
        time_dim = 1 if module.batch_first and input.dim() == 3 else 0
        if isinstance(input.shape[time_dim], int):
            return original(input, hx)
        return _run(module, input, hx)

    return forward


def _run(module: nn.Module, input: torch.Tensor, hx: Any):
    lstm = module.mode == "LSTM"
    batched = input.dim() == 3
    x = input if batched else input.unsqueeze(1)
    if module.batch_first and batched:
        x = x.transpose(0, 1)  # (time, batch, features)
    directions = 2 if module.bidirectional else 1
    shape = (module.num_layers * directions, x.shape[1], module.hidden_size)
    if hx is None:
        h0 = x.new_zeros(shape)
        c0 = x.new_zeros(shape) if lstm else None
    else:
        h0, c0 = hx if lstm else (hx, None)
        if not batched:
            h0, c0 = h0.unsqueeze(1), (c0.unsqueeze(1) if lstm else None)
    finals_h, finals_c = [], []
    layer_input = x
    for layer in range(module.num_layers):
        outputs = []
        for reverse in range(directions):
            k = layer * directions + reverse
            suffix = f"_l{layer}" + ("_reverse" if reverse else "")
            weights = [getattr(module, f"{w}{suffix}") for w in ("weight_ih", "weight_hh")]
            if module.bias:
                weights += [getattr(module, f"{b}{suffix}") for b in ("bias_ih", "bias_hh")]
            sequence = layer_input.flip(0) if reverse else layer_input
            state = (h0[k], c0[k]) if lstm else (h0[k],)
            out, *final = _scan(module.mode, sequence, state, weights)
            outputs.append(out.flip(0) if reverse else out)
            finals_h.append(final[0])
            if lstm:
                finals_c.append(final[1])
        layer_input = torch.cat(outputs, dim=2) if directions == 2 else outputs[0]
    output = layer_input
    if module.batch_first and batched:
        output = output.transpose(0, 1)
    h_n = torch.stack(finals_h)
    c_n = torch.stack(finals_c) if lstm else None
    if not batched:
        output, h_n = output.squeeze(1), h_n.squeeze(1)
        c_n = c_n.squeeze(1) if lstm else None
    return output, ((h_n, c_n) if lstm else h_n)


def _scan(mode: str, sequence: torch.Tensor, state: tuple, weights: list) -> tuple:
    """Run the cell over the time steps of `sequence` (time, batch, features) from `state`:
    (outputs (time, batch, hidden), *final state)."""
    cell, lstm, n = _CELLS[mode], mode == "LSTM", len(state)

    def cond(i, out, *rest):
        return i < rest[n].shape[0]

    def body(i, out, *rest):
        hidden, (seq, *w) = rest[:n], rest[n:]
        x_t = seq.index_select(0, i.reshape(1)).squeeze(0)
        biases = (w[2], w[3]) if len(w) == 4 else (None, None)
        new = cell(x_t, list(hidden) if lstm else hidden[0], w[0], w[1], *biases)
        new = tuple(new) if lstm else (new,)
        out = out.index_put((i.reshape(1),), new[0].unsqueeze(0))
        return (i + 1, out, *new)

    out = sequence.new_zeros((sequence.shape[0], *state[0].shape))
    start = torch.zeros((), dtype=torch.int64)
    carried = (start, out, *(s.clone() for s in state))
    _, out, *final = while_loop_op(cond, body, carried, (sequence, *weights))
    return (out, *final)
