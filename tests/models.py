"""Small PyTorch models for the tests, with input generators that take every branch."""

import torch
import torch.nn.functional as F
from torch import nn
from torch.export import Dim

BATCH = Dim("batch", min=1, max=64)
SIZES = (1, 7, 33)


class CondNet(nn.Module):
    """`torch.cond` on a data-dependent predicate; both branches use parameters."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 8)

    def forward(self, x):
        return torch.cond(
            x.sum() > 0,
            lambda x: self.a(x).relu(),
            lambda x: torch.sigmoid(self.b(x)) - 1.0,
            (x,),
        )


def cond_inputs(batch: int, positive: bool) -> torch.Tensor:
    x = torch.rand(batch, 8) + 0.05
    return x if positive else -x


class LoopNet(nn.Module):
    """`torch.while_loop` whose body uses module parameters; trip count depends on the data."""

    def __init__(self):
        super().__init__()
        self.cell = nn.Linear(8, 8)

    def forward(self, x):
        def cond(i, h):
            return (i < 8) & (h.abs().mean() < 2.0)

        def body(i, h):
            return i + 1, h + torch.tanh(self.cell(h))

        steps, h = torch._higher_order_ops.while_loop(
            cond, body, (torch.zeros((), dtype=torch.int64), x)
        )
        return h, steps


class PythonIf(nn.Module):
    """A plain Python `if` on a tensor value: torch.export alone refuses it."""

    def forward(self, x):
        if x.sum() > 0:
            return x * 2
        return x - 1


def seeded(cls):
    torch.manual_seed(0)
    return cls().eval()


class SharedAndDerived(nn.Module):
    """Two inputs tied by a derived dim: y has 2*n rows when x has n."""

    def forward(self, x, y):
        return torch.cat([x, x], 0) + y, x.sum()


class ConvPool(nn.Module):
    """Output height/width are floor-division expressions of dynamic input H/W."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, stride=2, padding=1)

    def forward(self, x):
        return nn.functional.max_pool2d(self.conv(x).relu(), 2)


def assert_loop_matches(model, compiled, batch: int, scale: float) -> int:
    """LoopNet eager and compiled on one seeded input agree; returns the trip count."""
    torch.manual_seed(batch)
    x = torch.randn(batch, 8) * scale
    h, steps = compiled(x)
    h_ref, steps_ref = model(x)
    assert int(steps) == int(steps_ref)
    torch.testing.assert_close(h, h_ref, rtol=1e-4, atol=1e-5)
    return int(steps)


class PaddedConvNet(nn.Module):
    """Convolutions over a dynamic H x W, for dync-bucket: a stride-2 convolution of the input
    (for an odd H it reads the row past the last: the zero padding), batch norm with a shift
    (the padded rows stop being zeros), a stride-2 convolution of that (for an odd height it
    would read a padded row: cropped), a 2x2 max-pool, and a mean scaled by the input's
    height (a size of a padded axis)."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.c2 = nn.Conv2d(8, 8, 3, stride=2, padding=1)
        with torch.no_grad():
            self.bn.running_mean.uniform_(-1, 1)
            self.bn.running_var.uniform_(0.5, 2)
            self.bn.bias.uniform_(-1, 1)

    def forward(self, x):
        y = nn.functional.leaky_relu(self.bn(self.c1(x)), 0.1)
        y = nn.functional.max_pool2d(self.c2(y).relu(), 2)
        return y, y.mean((2, 3)) * x.size(2)


class GatedConvBlocks(nn.Module):
    """SkipNet in small: after a stem, each of three residual conv blocks runs only if a gate (a
    padded stride-2 convolution of the same activation, pooled to one logit) says so. The
    gate's and the block's first convolution pad the same tensor: IREE, once the sub-DNNs are
    inlined, would share that padded copy across the branch (dync-isolate-subdnns)."""

    def __init__(self, width: int = 16):
        super().__init__()
        self.stem = nn.Conv2d(3, width, 3, padding=1)
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.Conv2d(width, width, 3, padding=1), nn.ReLU(),
                          nn.Conv2d(width, width, 3, padding=1)) for _ in range(3))
        self.gates = nn.ModuleList(nn.Conv2d(width, 1, 3, stride=2, padding=1) for _ in range(3))

    @torch.no_grad()
    def calibrate(self, inputs: list[torch.Tensor]) -> None:
        """Shift each gate's bias so that it opens on about half of `inputs`, halfway between
        two of them (no input sits on the threshold)."""
        xs = [self.stem(x).relu() for x in inputs]
        for block, gate in zip(self.blocks, self.gates, strict=True):
            means = sorted(float(gate(x).mean()) for x in xs)
            gate.bias -= (means[len(means) // 2 - 1] + means[len(means) // 2]) / 2
            xs = [(x + block(x)).relu() if gate(x).mean() > 0 else x for x in xs]

    def forward(self, x):
        x = self.stem(x).relu()
        for block, gate in zip(self.blocks, self.gates):  # noqa: B905 (as users write it)
            if gate(x).mean() > 0:
                x = (x + block(x)).relu()
        return x.mean((2, 3))


class SmallResNet(nn.Module):
    """A stem, two residual conv blocks, a global pool and a classifier over a dynamic batch:
    every sample independent (`dync-loop-batch`). With `couple`, the stem's output has the
    batch mean taken out, which ties the samples together."""

    def __init__(self, couple: bool = False):
        super().__init__()
        self.couple = couple
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                          nn.Conv2d(8, 8, 3, padding=1)) for _ in range(2))
        self.down = nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.fc = nn.Linear(16, 5)

    def forward(self, x):
        x = self.stem(x).relu()
        if self.couple:
            x = x - x.mean(0, keepdim=True)
        for block in self.blocks:
            x = (x + block(x)).relu()
        x = self.down(x).relu()
        return self.fc(nn.functional.adaptive_avg_pool2d(x, 1).flatten(1))


class PolicyGatedBlocks(nn.Module):
    """BlockDrop in small: a policy reads the (pooled) input and decides, for each of two
    residual blocks, whether the batch runs it; the stem's output is read by the first block
    only, the policy by both. The policy's decision is per sample (masked), the skip per
    batch."""

    def __init__(self, blocks: int = 2):
        super().__init__()
        self.policy = nn.Linear(3, blocks)
        self.stem = nn.Conv2d(3, 16, 3, padding=1)
        self.blocks = nn.ModuleList(nn.Conv2d(16, 16, 3, padding=1) for _ in range(blocks))

    def forward(self, x):
        keep = (torch.sigmoid(self.policy(F.avg_pool2d(x, 32).flatten(1))) > 0.5).float()
        x = self.stem(x).relu()
        for i, block in enumerate(self.blocks):
            action = keep[:, i]
            if action.sum() == 0:
                continue
            mask = action.view(-1, 1, 1, 1)
            x = block(x).relu() * mask + x * (1 - mask)
        return x.mean(dim=(2, 3))


def assert_every_path_matches(model, modules, inputs, path) -> None:
    """Each of `modules` computes what eager `model` does on each of `inputs`, and between
    them the inputs take both sides of every gate (`path(model, x)`: which gates open)."""
    paths = set()
    for x in inputs:
        with torch.no_grad():
            expected = model(x)
            paths.add(path(model, x))
        for module in modules:
            torch.testing.assert_close(torch.as_tensor(module(x)), expected, rtol=1e-4, atol=1e-4)
    gates = len(next(iter(paths)))
    assert all({p[i] for p in paths} == {True, False} for i in range(gates)), paths


class FloatLiterals(nn.Module):
    """Python floats that are no float32: eager rounds each to the nearest one."""

    def forward(self, x):  # one op each: a multiply-add may be fused, rounding once
        return x * 0.1, x + 43758.5453, x * (1 / 3), x - 0.7
