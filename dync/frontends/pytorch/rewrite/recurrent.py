"""`nn.RNN`/`nn.LSTM`/`nn.GRU` as the ops torch-mlir lowers: one product for the input
projection of every time step, then the recurrence over the steps — unrolled for a short static
length, one `while_loop` per layer and direction otherwise, each trip of which runs
`STEPS_PER_TRIP` steps.

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

from . import packed

# A static length is unrolled (no loop, no condition read back per step) where the layers'
# cells over all steps, directions and layers are at most this many; beyond, or over a dynamic
# length, each layer and direction is a while_loop. Unrolled, a step runs ~2.5x faster, but
# compile time grows with the cells: a 2-layer bidirectional LSTM (d=256) over 32 steps, 128
# cells, compiled in 136 s unrolled against 6 s as loops (9.7 against 24.4 ms a call).
UNROLL_CELLS = 16
# Steps per trip of a loop: IREE 3.13 copies a loop's carried output whole on each trip (the
# carried tensors of an scf loop are not updated in place: `lit/upstream/`), and each trip
# costs a host round trip; a trip of several steps divides both (the last trip's steps past
# the end repeat the last step and change nothing).
STEPS_PER_TRIP = 8


def looped_forward(module: nn.Module) -> Callable | None:
    """A replacement `forward` for a recurrent layer, or None for layers left alone."""
    if type(module) not in (nn.RNN, nn.LSTM, nn.GRU):
        return None
    original = module.forward

    def forward(input: Any, hx: Any = None):
        if not torch.compiler.is_exporting() or module.training:
            return original(input, hx)
        mode = packed.active()
        padded = mode.padded(input) if mode is not None else None
        if padded is not None:
            return _packed_forward(module, mode, input, *padded, hx)
        if not isinstance(input, torch.Tensor):
            return original(input, hx)
        return _module_forward(module, input, hx)

    return forward


def _packed_forward(module: nn.Module, mode: packed.PackedSequences, input: Any,
                    padded: torch.Tensor, packing: packed.Packing, hx: Any):
    """The layer over a packed sequence kept padded (`packed.py`): (packed output, final
    state), as the module returns them."""
    lstm = module.mode == "LSTM"
    if hx is not None:
        hx = module.permute_hidden(hx, input.sorted_indices)
    with mode.reading():
        output, finals = _layers(module, padded, hx, lengths=packing.lengths)
    finals = module.permute_hidden(tuple(finals) if lstm else finals[0], input.unsorted_indices)
    return mode.packed(output, input), finals


def _module_forward(module: nn.Module, input: torch.Tensor, hx: Any):
    batched = input.dim() == 3
    x = input if batched else input.unsqueeze(1)
    if hx is not None and not batched:
        hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1)) if module.mode == "LSTM" else hx.unsqueeze(1)
    output, finals = _layers(module, x, hx, batch_first=module.batch_first)
    if not batched:
        output, finals = output.squeeze(1), [f.squeeze(1) for f in finals]
    return output, (tuple(finals) if module.mode == "LSTM" else finals[0])


def _layers(module: nn.Module, x: torch.Tensor, hx: Any, batch_first: bool = False,
            lengths: torch.Tensor | None = None) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """The module's layers over a batched `x` from `hx` (None: zeros): (output, [h_n(, c_n)])."""
    lstm = module.mode == "LSTM"
    batch = x.shape[0 if batch_first else 1]
    cells = module.num_layers * (2 if module.bidirectional else 1)
    shape = (cells, batch, getattr(module, "proj_size", 0) or module.hidden_size)
    if hx is None:
        hx = ((x.new_zeros(shape), x.new_zeros((cells, batch, module.hidden_size))) if lstm
              else x.new_zeros(shape))
    output, *finals = recurrent_layers(
        module.mode, x, list(hx) if lstm else [hx],
        [getattr(module, name) for name in module._flat_weights_names], module.bias,
        module.num_layers, module.bidirectional, batch_first, lengths)
    return output, finals


def recurrent_layers(mode: str, input: torch.Tensor, hx: Sequence[torch.Tensor],
                     params: Sequence[torch.Tensor], has_biases: bool, num_layers: int,
                     bidirectional: bool, batch_first: bool,
                     lengths: torch.Tensor | None = None):
    """The layers' (output, h_n[, c_n]) for a batched `input`, as the ATen op computes them:
    `hx` is [h_0] or [h_0, c_0] (LSTM), `params` each layer's and direction's weight_ih,
    weight_hh[, bias_ih, bias_hh][, weight_hr (an LSTM's `proj_size`)] in order (a module's
    `_flat_weights_names`); NotImplemented for any other layout. With `lengths` (batch,), as
    over a packed sequence: sequence b's steps from `lengths[b]` on keep its state (its final
    state is the one after its own last step; the output there is left unspecified), and a
    reverse direction runs it reversed within its length."""
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
        cells = [_Cell(*params[k * per_cell:(k + 1) * per_cell], projected=projections)
                 for k in range(layer * directions, (layer + 1) * directions)]
        first = layer * directions
        if unroll or directions == 1:
            outputs = []
            for reverse, cell in enumerate(cells):
                sequence = _reversed(x, lengths) if reverse else x
                out, *final = _recurrence(mode, linear(sequence, cell.w_ih, cell.b_ih),
                                          tuple(h[first + reverse] for h in hx),
                                          cell.recurrent, unroll, lengths)
                outputs.append(_reversed(out, lengths) if reverse else out)
                for kept, state in zip(finals, final, strict=True):
                    kept.append(state)
            x = torch.cat(outputs, dim=2) if directions == 2 else outputs[0]
            continue
        # Both directions in one loop: each trip steps them together, one batched product
        # for the two cells' recurrent weights (half the trips and products of two loops).
        forward, backward = cells
        projected = torch.stack([linear(x, forward.w_ih, forward.b_ih),
                                 linear(_reversed(x, lengths), backward.w_ih, backward.b_ih)],
                                dim=1)
        # (unsqueeze, then cat: a list of the parameters themselves would reach the importer
        # as Parameter objects, which it refuses)
        weights = tuple(None if a is None else torch.cat([a.unsqueeze(0), b.unsqueeze(0)])
                        for a, b in zip(forward.recurrent, backward.recurrent, strict=True))
        out, *final = _recurrence(mode, projected, tuple(h[first:first + 2] for h in hx),
                                  weights, unroll, lengths)
        x = torch.cat([out[:, 0], _reversed(out[:, 1], lengths)], dim=2)
        for kept, state in zip(finals, final, strict=True):
            kept.extend(state.unbind(0))
    output = x.transpose(0, 1) if batch_first else x
    return (output, *(torch.stack(f) for f in finals))


class _Cell:
    """One layer's and direction's weights, as `_flat_weights_names` lists them."""

    def __init__(self, w_ih: torch.Tensor, w_hh: torch.Tensor, *rest: torch.Tensor,
                 projected: bool):
        rest = list(rest)
        self.w_hr = rest.pop() if projected else None
        self.b_ih, self.b_hh = rest if rest else (None, None)
        self.w_ih, self.w_hh = w_ih, w_hh

    @property
    def recurrent(self) -> tuple:
        """(w_hh, b_hh or None, w_hr or None): what each step reads."""
        return (self.w_hh, self.b_hh, self.w_hr)


def linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    """`x Wᵀ + b`; a stack of weights (d, out, in) and biases (d, out) applies the d-th to
    `x[d]` (d, batch, in)."""
    out = x @ weight.transpose(-1, -2)
    if bias is None:
        return out
    return out + (bias.unsqueeze(-2) if bias.dim() == 2 else bias)


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


def _reversed(x: torch.Tensor, lengths: torch.Tensor | None) -> torch.Tensor:
    """`x` (time, batch, ...) reversed in time; with `lengths`, each sequence reversed within
    its own length (the steps past it stay where they are)."""
    if lengths is None:
        return x.flip(0)
    t = torch.arange(x.shape[0]).unsqueeze(1)
    rows = torch.where(t < lengths, lengths - 1 - t, t)  # (time, batch)
    return x.gather(0, rows.reshape(*rows.shape, *[1] * (x.dim() - 2)).expand(x.shape))


def _recurrence(mode: str, projected: torch.Tensor, state: tuple, weights: tuple,
                unroll: bool, lengths: torch.Tensor | None = None) -> tuple:
    """The steps over `projected` (time, batch, gates) from `state` with the recurrent
    `weights` (w_hh, b_hh or None, w_hr or None), unrolled or as a loop of `STEPS_PER_TRIP`
    steps a trip: (outputs (time, batch, hidden), *final state). With `lengths` (batch,), a
    sequence's steps from its length on keep its state."""
    steps = projected.shape[0]
    if unroll:
        outputs = []
        for t in range(steps):
            new = step(mode, projected[t], state, *weights)
            state = new if lengths is None else _kept(t < lengths, new, state)
            outputs.append(state[0])
        if not outputs:
            return (projected.new_zeros((0, *state[0].shape)), *state)
        return (torch.stack(outputs), *state)
    n, present = len(state), [w is not None for w in weights]

    def cond(i, out, *rest):
        return i < rest[n].shape[0]

    def body(i, out, *rest):
        hidden, inputs, given = rest[:n], rest[n], iter(rest[n + 1:])
        recurrent = tuple(next(given) if p else None for p in present)
        # The chunk's steps i .. i + STEPS_PER_TRIP - 1; those past the end repeat the last
        # (reading its input, keeping the state, writing the same row again).
        trip = i + torch.arange(STEPS_PER_TRIP)
        rows = torch.clamp(trip, max=inputs.shape[0] - 1)
        valid = trip < inputs.shape[0] if lengths is None else trip.unsqueeze(1) < next(given)
        chunk = inputs.index_select(0, rows)
        written = []
        for j in range(STEPS_PER_TRIP):
            new = step(mode, chunk[j], hidden, *recurrent)
            hidden = _kept(valid[j], new, hidden)
            written.append(hidden[0])
        out = out.index_put((rows,), torch.stack(written))
        return (i + STEPS_PER_TRIP, out, *hidden)

    out = projected.new_zeros((steps, *state[0].shape))
    start = torch.zeros((), dtype=torch.int64)
    carried = (start, out, *(s.clone() for s in state))
    invariant = (projected, *(w for w in weights if w is not None),
                 *(() if lengths is None else (lengths,)))
    _, out, *final = while_loop_op(cond, body, carried, invariant)
    return (out, *final)


def _kept(valid: torch.Tensor, new: tuple, old: tuple) -> tuple:
    """The state `new` where `valid` (0-d, or (batch,) per sequence), else `old`."""
    if valid.dim():
        valid = valid.unsqueeze(-1)
    return tuple(torch.where(valid, a, b) for a, b in zip(new, old, strict=True))
