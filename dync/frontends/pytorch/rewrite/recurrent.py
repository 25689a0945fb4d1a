"""`nn.RNN`/`nn.LSTM`/`nn.GRU` as the ops torch-mlir lowers: one product for the input
projection of every time step, then the recurrence over the steps — unrolled for a short static
length, one `while_loop` per layer and direction otherwise.

Exported as they are, these layers are `aten.gru.input` / `aten.lstm.input` /
`aten.rnn_*.input`, which torch-mlir (as bundled in IREE 3.13) cannot lower ("Heterogeneous
lists are not supported"), and torch's own decomposition unrolls every step in Python, which
specializes a dynamic sequence length to the example's (an export error). While exporting, the
rewriter runs the modules through `recurrent_layers` instead; the same function is the
decomposition of the ATen ops (`decompositions.py`) for layers called functionally. Eager runs
and training use the module's own forward.

The input projection `x_t W_ihᵀ + b_ih` does not depend on the state, so it is computed for
all steps as one (time·batch)×input by input×gates product before the recurrence, as cuDNN and
oneDNN do; each step is then one batch×hidden product and the gates' elementwise ops.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import nn
from torch._higher_order_ops.while_loop import while_loop_op

# A static length is unrolled (no loop, no condition read back per step) where the layers'
# cells over all steps, directions and layers are at most this many; beyond, or over a dynamic
# length, each layer and direction is a while_loop. Unrolled, a step runs ~2.5x faster, but
# compile time grows with the cells: a 2-layer bidirectional LSTM (d=256) over 32 steps, 128
# cells, compiled in 136 s unrolled against 6 s as loops (9.7 against 24.4 ms a call).
UNROLL_CELLS = 16


def looped_forward(module: nn.Module) -> Callable | None:
    """A replacement `forward` for a recurrent layer, or None for layers left alone."""
    if type(module) not in (nn.RNN, nn.LSTM, nn.GRU):
        return None
    original = module.forward

    def forward(input: Any, hx: Any = None):
        if (not torch.compiler.is_exporting() or module.training
                or not isinstance(input, torch.Tensor)):
            return original(input, hx)
        return _module_forward(module, input, hx)

    return forward


def _module_forward(module: nn.Module, input: torch.Tensor, hx: Any):
    lstm = module.mode == "LSTM"
    batched = input.dim() == 3
    x = input if batched else input.unsqueeze(1)
    batch = x.shape[0 if module.batch_first else 1]
    directions = 2 if module.bidirectional else 1
    cells = module.num_layers * directions
    shape = (cells, batch, getattr(module, "proj_size", 0) or module.hidden_size)
    if hx is None:
        hx = ((x.new_zeros(shape), x.new_zeros((cells, batch, module.hidden_size))) if lstm
              else x.new_zeros(shape))
    elif not batched:
        hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1)) if lstm else hx.unsqueeze(1)
    output, *finals = recurrent_layers(
        module.mode, x, list(hx) if lstm else [hx],
        [getattr(module, name) for name in module._flat_weights_names], module.bias,
        module.num_layers, module.bidirectional, module.batch_first)
    if not batched:
        output, finals = output.squeeze(1), [f.squeeze(1) for f in finals]
    return output, (tuple(finals) if lstm else finals[0])


def recurrent_layers(mode: str, input: torch.Tensor, hx: Sequence[torch.Tensor],
                     params: Sequence[torch.Tensor], has_biases: bool, num_layers: int,
                     bidirectional: bool, batch_first: bool):
    """The layers' (output, h_n[, c_n]) for a batched `input`, as the ATen op computes them:
    `hx` is [h_0] or [h_0, c_0] (LSTM), `params` each layer's and direction's weight_ih,
    weight_hh[, bias_ih, bias_hh][, weight_hr (an LSTM's `proj_size`)] in order (a module's
    `_flat_weights_names`); NotImplemented for any other layout."""
    x = input.transpose(0, 1) if batch_first else input  # (time, batch, features)
    directions = 2 if bidirectional else 1
    per_cell = 4 if has_biases else 2
    projections = len(params) == num_layers * directions * (per_cell + 1) and mode == "LSTM"
    if len(params) != num_layers * directions * (per_cell + projections):
        return NotImplemented
    per_cell += projections  # an LSTM with `proj_size`: weight_hr last
    steps = x.shape[0]
    unroll = isinstance(steps, int) and steps * num_layers * directions <= UNROLL_CELLS
    finals: list[list[torch.Tensor]] = [[] for _ in hx]
    for layer in range(num_layers):
        outputs = []
        for reverse in range(directions):
            k = layer * directions + reverse
            w_ih, w_hh, *rest = params[k * per_cell:(k + 1) * per_cell]
            w_hr = rest.pop() if projections else None
            b_ih, b_hh = rest if rest else (None, None)
            sequence = x.flip(0) if reverse else x
            projected = linear(sequence, w_ih, b_ih)
            out, *final = _recurrence(mode, projected, tuple(h[k] for h in hx),
                                      (w_hh, b_hh, w_hr), unroll)
            outputs.append(out.flip(0) if reverse else out)
            for kept, state in zip(finals, final, strict=True):
                kept.append(state)
        x = torch.cat(outputs, dim=2) if directions == 2 else outputs[0]
    output = x.transpose(0, 1) if batch_first else x
    return (output, *(torch.stack(f) for f in finals))


def linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    out = x @ weight.t()
    return out + bias if bias is not None else out


def step(mode: str, projected: torch.Tensor, state: tuple, w_hh: torch.Tensor,
         b_hh: torch.Tensor | None, w_hr: torch.Tensor | None = None) -> tuple:
    """One time step of a cell ("GRU", "LSTM", "RNN_TANH", "RNN_RELU") from the step's input
    projection `x W_ihᵀ + b_ih`: the new state, (h,) or (h, c); `w_hr` projects an LSTM's h."""
    h = state[0]
    recurrent = linear(h, w_hh, b_hh)
    if mode == "GRU":
        i_r, i_z, i_n = projected.chunk(3, -1)
        h_r, h_z, h_n = recurrent.chunk(3, -1)
        r, z = torch.sigmoid(i_r + h_r), torch.sigmoid(i_z + h_z)
        n = torch.tanh(i_n + r * h_n)
        return ((1 - z) * n + z * h,)
    if mode == "LSTM":
        i, f, g, o = (projected + recurrent).chunk(4, -1)
        c = torch.sigmoid(f) * state[1] + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return (h if w_hr is None else linear(h, w_hr, None), c)
    pre = projected + recurrent
    return (torch.tanh(pre) if mode == "RNN_TANH" else torch.relu(pre),)


def _recurrence(mode: str, projected: torch.Tensor, state: tuple, weights: tuple,
                unroll: bool) -> tuple:
    """The steps over `projected` (time, batch, gates) from `state` with the recurrent
    `weights` (w_hh, b_hh or None, w_hr or None), unrolled or as a loop: (outputs (time, batch,
    hidden), *final state)."""
    steps = projected.shape[0]
    if unroll:
        outputs = []
        for t in range(steps):
            state = step(mode, projected[t], state, *weights)
            outputs.append(state[0])
        if not outputs:
            return (projected.new_zeros((0, *state[0].shape)), *state)
        return (torch.stack(outputs), *state)
    n, present = len(state), [w is not None for w in weights]

    def cond(i, out, *rest):
        return i < rest[n].shape[0]

    def body(i, out, *rest):
        hidden, inputs, given = rest[:n], rest[n], iter(rest[n + 1:])
        step_input = inputs.index_select(0, i.reshape(1)).squeeze(0)
        new = step(mode, step_input, hidden, *(next(given) if p else None for p in present))
        out = out.index_put((i.reshape(1),), new[0].unsqueeze(0))
        return (i + 1, out, *new)

    out = projected.new_zeros((steps, *state[0].shape))
    start = torch.zeros((), dtype=torch.int64)
    carried = (start, out, *(s.clone() for s in state))
    invariant = (projected, *(w for w in weights if w is not None))
    _, out, *final = while_loop_op(cond, body, carried, invariant)
    return (out, *final)
