"""Unmodified PyTorch models with Python control flow on tensor values (for the rewriter)."""

import torch
from torch import nn


class PlainIf(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)

    def forward(self, x):
        h = self.a(x)
        if h.sum() > 0:
            y = torch.relu(h) * 2
        else:
            y = h - 1
        return y


class EarlyExit(nn.Module):
    """`return` inside a static loop over layers, `and` with `.item()`."""

    def __init__(self, threshold=0.45):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(8, 8) for _ in range(3)])
        self.exits = nn.ModuleList([nn.Linear(8, 4) for _ in range(3)])
        self.threshold = threshold

    def forward(self, x):
        for block, exit_head in zip(self.blocks, self.exits):
            x = torch.relu(block(x))
            out = exit_head(x)
            if out.softmax(-1).max() > self.threshold and x.mean().item() > -1.0:
                return out
        return out * 2


class GatedBlocks(nn.Module):
    """SkipNet-style gates; a Python counter crosses the data-dependent branches."""

    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(8, 8) for _ in range(4)])
        self.gates = nn.ModuleList([nn.Linear(8, 1) for _ in range(4)])

    def forward(self, x):
        executed = 0
        for block, gate in zip(self.blocks, self.gates):
            if bool(torch.sigmoid(gate(x)).mean() > 0.5) or not (x.abs().max() < 10).all():
                x = x + torch.tanh(block(x))
                executed += 1
        return x, executed


class WhileNotDone(nn.Module):
    """A data-dependent `while` with `break`, carried state keeps its shape."""

    def __init__(self):
        super().__init__()
        self.cell = nn.Linear(8, 8)

    def forward(self, x):
        steps = 0
        while steps < 10:
            x = x + torch.tanh(self.cell(x))
            steps += 1
            if x.norm() > 6.0:
                break
        return x, steps


class NestedIfs(nn.Module):
    def forward(self, x):
        s = x.sum()
        if s > 0:
            if x.max() > 2:
                y = x * 3
            elif x.min() < -1:
                y = x - 3
            else:
                y = x
        else:
            y = -x if x.mean() < -0.5 else x + 0.5
        return y


class StaticHelpers(nn.Module):
    """Branches on data inside a staticmethod and a classmethod, called through the instance,
    the class by name and `type(self)`."""

    scale = 2.0

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)

    @staticmethod
    def normalized(t):
        if t.abs().max() > 1.0:
            return t / t.abs().max()
        return t

    @classmethod
    def boosted(cls, t):
        if t.sum() > 0:
            return t * cls.scale
        return t - 1

    def forward(self, x):
        h = self.a(x)
        return self.normalized(h) + StaticHelpers.normalized(x) + type(self).boosted(h)


class RoutedToOneExpert(nn.Module):
    """Top-1 routing of the whole batch: a module list indexed by `.item()` of an argmax (and
    a negative position into an `nn.Sequential`), keyword arguments passed through."""

    def __init__(self):
        super().__init__()
        self.router = nn.Linear(8, 4)
        self.experts = nn.ModuleList([nn.Linear(8, 8), nn.Sequential(nn.Linear(8, 8), nn.Tanh()),
                                      nn.Identity(), nn.Linear(8, 8, bias=False)])
        self.heads = nn.Sequential(nn.Linear(8, 3), nn.Linear(8, 3))

    def forward(self, x):
        choice = self.router(x).mean(0).argmax().item()
        y = self.experts[choice](input=x)
        return self.heads[choice % 2 - 2](y), choice


class GrowingLoop(nn.Module):
    def forward(self, x):
        out = x
        while out.sum() < 100:  # the line the error must name
            out = torch.cat([out, out + 1], 0)
        return out


class AppendInLoop(nn.Module):
    """Greedy decoding that appends tokens to a Python list on data-dependent paths."""

    def __init__(self):
        super().__init__()
        self.step = nn.Linear(8, 8)

    def forward(self, x):
        tokens = []
        for _ in range(6):
            x = torch.tanh(self.step(x))
            if x.sum() > 0:
                tokens.append(x.argmax(-1))
        tokens.append(x.argmin(-1))
        return torch.stack(tokens), torch.cat(tokens), tokens[-1] + tokens[0], len(tokens)


class DecodeUntilEnd(nn.Module):
    """A GRU over a variable-length sequence, then decoding for `length + 2` steps (a
    symbolic range) with `break` on an end token, appending to a list."""

    def __init__(self):
        super().__init__()
        self.encoder = nn.GRU(8, 8, batch_first=True)
        self.cell = nn.GRUCell(8, 8)
        self.out = nn.Linear(8, 5)

    def forward(self, x):
        _, h = self.encoder(x)
        h = h[0]
        decoded = []
        for _ in range(x.size(1) + 2):
            h = self.cell(torch.tanh(h), h)
            token = self.out(h).argmax(-1)
            decoded.append(token)
            if token[0].item() == 0:
                break
        return torch.cat(decoded)


class DecodeOverAConstantRange(nn.Module):
    """Decoding for a constant `steps` (a Python int) with `break` on an end token, the
    states summed."""

    def __init__(self, steps: int):
        super().__init__()
        self.cell = nn.GRUCell(8, 8)
        self.out = nn.Linear(8, 5)
        self.steps = steps

    def forward(self, h):
        total = torch.zeros_like(h)
        for _ in range(self.steps):
            h = self.cell(torch.tanh(h), h)
            total = total + h
            if self.out(h).argmax(-1)[0].item() == 0:
                break
        return total


class DecodeIntoTensor(DecodeUntilEnd):
    """DecodeUntilEnd's loop keeping the tokens in a tensor grown by `torch.cat`, the whole
    prefix read at each step, as the PyTorch translation tutorial's greedy decoder does."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(5, 8)

    def forward(self, x):
        _, h = self.encoder(x)
        ys = torch.full((1, 1), 1, dtype=torch.long)
        for _ in range(x.size(1) + 2):
            context = torch.tanh(self.embed(ys).mean(1) + h[0])
            token = self.out(context).argmax(-1, keepdim=True)
            ys = torch.cat([ys, token], dim=1)
            if token.item() == 0:
                break
        return ys


class AppendInWhile(nn.Module):
    """A list appended in a data-dependent `while`: no bound, so no bounded buffer."""

    def forward(self, x):
        steps = []
        while x.sum() > 0:  # the line the list error must name
            x = x - 1.0
            steps.append(x)
        return x, len(steps)


class CountedWhile(nn.Module):
    """A list appended in a `while` on a counter (`steps < self.max_len`, `steps += 1`) that
    `break`s on data: the counter bounds the trips, so the list is a bounded buffer. Each trip
    moves the row means halfway to 2, and the loop stops once their mean passes 1.5: at the
    first trip from a mean of 1.6, at the fifth from -10, never (all six) from -100."""

    max_len = 6

    def __init__(self):
        super().__init__()
        self.out = nn.Linear(8, 8)

    def forward(self, x):
        ys = []
        steps = 0
        while steps < self.max_len:
            x = x * 0.5 + 1.0
            ys.append(self.out(x))
            if x.mean() > 1.5:
                break
            steps += 1
        return torch.stack(ys, 1)


class CountedWhileToASize(CountedWhile):
    """The same to a bound read from the input's size, inclusive, written `n >= steps`."""

    def forward(self, x):
        ys = []
        steps, h = 1, x
        while x.size(0) + 3 >= steps:
            h = h * 0.5 + 1.0
            ys.append(self.out(h))
            if h.mean() > 1.5:
                break
            steps = steps + 1
        return torch.stack(ys, 1)


class CountedWhileWithContinue(CountedWhile):
    """A `continue` may skip the step: no bound (refused in one graph)."""

    def forward(self, x):
        ys, steps = [], 0
        while steps < self.max_len:  # the counted-loop error must name this line
            x = self.out(x * 0.5 + 1.0)
            ys.append(x)
            if x.mean() > 1.5:
                continue
            steps += 1
        return torch.stack(ys, 1)


class CountedWhileGrowsATensor(nn.Module):
    """A tensor grown by `torch.cat` in a counted `while` that breaks on data (the translation
    tutorial's greedy decoder, written with a counter): carried as a bounded buffer."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(5, 8)
        self.out = nn.Linear(8, 5)

    def forward(self, x):
        ys = torch.full((x.size(0), 1), 1, dtype=torch.long)
        steps = 0
        while steps < 6:
            context = torch.tanh(self.embed(ys).mean(1) + x)
            token = self.out(context).argmax(-1, keepdim=True)
            ys = torch.cat([ys, token], dim=1)
            if (token == 0).all():
                break
            steps += 1
        return ys


class TransposeInOneBranch(PlainIf):
    """One branch gives a transposed view, the other a fresh tensor: the same values with
    different strides (torch.cond itself refuses that)."""

    def forward(self, x):
        h = self.a(x)
        if h.sum() > 0:
            y = h.t()
        else:
            y = torch.ones(h.shape[1], h.shape[0]) - h.t()
        return y * 2
