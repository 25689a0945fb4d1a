"""Models for `python -m benchmarks calls`: the cost of one call into a compiled module.

`Repeat` calls its `step` (a captured sub-DNN, in host mode) as many times as its `times`
argument has elements; the Python around the call (a `.tolist()` read) keeps the model in host
mode, as the recursion of a tree model or a per-token driver does. `step` is a 32-wide linear
layer (one input, one output: tree_lstm's sizes), an LSTM cell (three inputs, two outputs), or
a softmax over attention scores of 512 tokens (a 3 MiB argument: what handing IREE a large
argument costs, copied or imported)."""

import torch
from torch import nn

WIDTH = 32


class Linear(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(WIDTH, WIDTH)

    def forward(self, x):
        return self.lin(x)


class Cell(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.LSTMCell(WIDTH // 2, WIDTH)

    def forward(self, x, h, c):
        return self.cell(x, (h, c))


class Softmax(nn.Module):
    def forward(self, x):
        return torch.softmax(x, -1)


class Repeat(nn.Module):
    def __init__(self, step: nn.Module):
        super().__init__()
        self.step = step

    def forward(self, times, *state):
        for _ in times.tolist():
            out = self.step(*state)
            state = (state[0], *out) if isinstance(out, tuple) else (out,)
        return state[-1]


def steps() -> dict[str, tuple[nn.Module, tuple[torch.Tensor, ...]]]:
    """name -> (step module, its example arguments)."""
    torch.manual_seed(0)
    return {
        "linear 32→32, 1 in / 1 out": (Linear().eval(), (torch.randn(1, WIDTH),)),
        "LSTM cell 16→32, 3 in / 2 out": (
            Cell().eval(),
            (torch.randn(1, WIDTH // 2), torch.randn(1, WIDTH), torch.randn(1, WIDTH)),
        ),
        "softmax 12×128×512, 3 MiB in / 3 MiB out": (Softmax().eval(),
                                                      (torch.randn(12, 128, 512),)),
    }
