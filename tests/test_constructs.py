"""Constructs of dynamic-network code written elsewhere (issue 32's list), each compiled with the
defaults and compared with eager on inputs that take each path. Those marked captured must
come out as one graph (the module `mode="graph"` gives); the others must still be correct
under `auto` (a fallback in the report), never an error or a wrong answer."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.export import Dim


class HelperRecursion(nn.Module):
    """A helper method that recurses while the data says so (Python int depth bound)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        return self._refine(self.lin(x), 4)

    def _refine(self, h, depth):
        if depth == 0 or h.abs().mean() < 0.3:
            return h
        return self._refine(torch.tanh(h) * 0.8, depth - 1)


class HelperBranch(nn.Module):
    """A branch on data inside a helper method that forward calls."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        return self._gate(self.lin(x)) + 1.0

    def _gate(self, h):
        if h.mean() > 0:
            return h * 2.0
        return h - 1.0


class ReplacedForward(nn.Module):
    """`model.forward = model.early_exit`, as research code does for evaluation (issue 32, h)."""

    def __init__(self):
        super().__init__()
        self.a, self.b, self.c = nn.Linear(8, 8), nn.Linear(8, 4), nn.Linear(8, 4)

    def forward(self, x):
        return self.b(self.a(x))

    def early_exit(self, x):
        h = self.a(x)
        if h.mean() > 0:
            return self.b(h)
        return self.c(h)


def replaced_forward() -> nn.Module:
    model = ReplacedForward()
    model.forward = model.early_exit
    return model


class LenOfBatch(nn.Module):
    """`len(x)` of a tensor stays symbolic (issue 32, h)."""

    def forward(self, x):
        scale = len(x)
        if x.mean() > 0:
            return x * scale
        return x / scale


class DeadAfterBranch(nn.Module):
    """A temporary whose shape differs between the branches and is dead after them (c)."""

    def forward(self, x):
        t = x
        if x.mean() > 0:
            t = torch.cat([x, x], dim=1)
            y = t.sum(dim=1, keepdim=True)
        else:
            y = x.mean(dim=1, keepdim=True)
        return x * y


class MaskedAssignmentInBranch(nn.Module):
    """`h[h < 0] = 0` inside a data-dependent branch (a)."""

    def forward(self, x):
        h = x.clone()
        if h.mean() > 0:
            h[h < 0] = 0.0
        return h * 2.0


class MaskedAssignment(nn.Module):
    """`h[h < t] = 0` and `h[rows] = 0` (a mask over the leading dim), where the masks may
    select nothing: IREE 3.13's lowering of a masked index_put wrote element 0 then."""

    def forward(self, x):
        h = x.clone()
        h[h < -0.5] = 0.0
        h[h.sum(dim=1) > 100.0] = -1.0
        if h.mean() > 0:
            return h * 2.0
        return h


class SubscriptAssignmentInBranch(nn.Module):
    """`h[:, 0] = v` inside a data-dependent branch (a)."""

    def forward(self, x):
        h = x.clone()
        if h.mean() > 0:
            h[:, 0] = h[:, 1] * 2.0
        return h + 1.0


class LiteralInBranch(nn.Module):
    """Tensor literals and factories made inside a branch (b)."""

    def forward(self, x):
        if x.mean() > 0:
            return x + torch.tensor([1.0])
        return x + torch.zeros(x.shape[0], 1)


class PoolInBranch(nn.Module):
    """Pooling over a dynamic H x W in one branch only: the branches' shapes differ (e)."""

    def forward(self, x):
        if x.mean() > 0:
            x = F.max_pool2d(x, 2)
        return x.mean(dim=(2, 3))


class StridedConvInBranch(nn.Module):
    """A strided convolution over a dynamic H x W in one branch (e)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3, stride=2, padding=1)

    def forward(self, x):
        if x.mean() > 0:
            x = self.conv(x)
        return x.mean(dim=(2, 3))


class StemWithPaddedPool(nn.Module):
    """A ResNet stem in small: a convolution, then a max pool with padding, over a dynamic
    batch (IREE's channels-last preprocessing failed on the pool's padding,
    lit/upstream/iree-channels-last-pad-dynamic-batch.mlir); a branch after it."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.pool = nn.MaxPool2d(3, stride=2, padding=1)

    def forward(self, x):
        y = self.pool(self.conv(x).relu())
        if x.mean() > 0:
            y = y * 2.0
        return y.mean(dim=(2, 3))


class SpatialReductionsOverBatch(nn.Module):
    """Global pools of a residual block over a dynamic batch, as the heads of CNNs write them
    (an adaptive average pool, a mean over [-1, -2], a sum and a max over H and W, with and
    without keepdim): dync-spatial-reductions takes each in two steps."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, padding=1)
        self.bn = nn.BatchNorm2d(16)
        self.head = nn.Linear(16, 16)

    def forward(self, x):
        y = self.bn(self.conv(x)).relu() + self.conv(x)
        pooled = torch.flatten(nn.functional.adaptive_avg_pool2d(y, 1), 1)
        peak = torch.amax(y, dim=(2, 3), keepdim=True).flatten(1)
        out = self.head(pooled) + y.mean(dim=(-1, -2)) + y.sum(dim=(2, 3)) / 256.0 + peak
        if out.mean() > 0.1:
            out = out * 2.0
        return out


class DepthwiseBlock(nn.Module):
    """MobileNet's inverted residual in small: a 1x1 expansion, depthwise 3x3 convolutions
    (one dilated, one strided with a channel multiplier of 2 and no bias), a 1x1 projection,
    a branch after them; dync-depthwise-nhwc runs the depthwise ones in NHWC (in NCHW over a
    dynamic batch IREE did not compile the first)."""

    def __init__(self):
        super().__init__()
        self.expand = nn.Conv2d(3, 8, 1)
        self.bn = nn.BatchNorm2d(8)
        self.dilated = nn.Conv2d(8, 8, 3, padding=2, dilation=2, groups=8)
        self.down = nn.Conv2d(8, 16, 3, stride=2, padding=1, groups=8, bias=False)
        self.project = nn.Conv2d(16, 4, 1)

    def forward(self, x):
        y = torch.relu(self.bn(self.expand(x)))
        y = torch.relu(self.dilated(y)) + y
        y = self.down(y)
        if y.mean() > 0.2:
            y = y * 2.0
        return self.project(y)


class ExplicitPadAfterConv(nn.Module):
    """A convolution, then its output zero-padded by hand (`F.pad`) before the next one, over
    a dynamic batch: the same IREE failure as the padded max pool's."""

    def __init__(self):
        super().__init__()
        self.first = nn.Conv2d(3, 8, 1)
        self.second = nn.Conv2d(8, 8, 3)

    def forward(self, x):
        y = nn.functional.pad(self.first(x).relu(), (1, 1, 1, 1))
        if x.mean() > 0:
            y = y * 2.0
        return self.second(y).mean(dim=(2, 3))


class ResamplingOverImage(nn.Module):
    """A segmentation or super-resolution head over a dynamic H x W: reflection and circular
    padding, bilinear, bicubic and nearest upsampling by a factor and to a size, with and
    without `align_corners`, downsampling by 0.5 (a size computed with `sym_float`), then
    upsampling to the size before it (a ratio of two dynamic sizes), and `F.unfold`. IREE
    failed on torch-mlir's lowerings of the first three over a dynamic size; `unfold` had
    none; torch's own decompositions of `align_corners=True` and bicubic compute with
    `sym_float`, which the importer does not take."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)

    def forward(self, x):
        interpolate = nn.functional.interpolate
        y = self.conv(nn.functional.pad(x, (1, 1, 2, 0), mode="reflect"))
        y = nn.functional.pad(y, (2, 1, 1, 1), mode="circular")
        up = interpolate(y, scale_factor=2, mode="bilinear", align_corners=False)
        up = up + interpolate(y, size=(2 * y.shape[2], 2 * y.shape[3]), mode="bilinear",
                              align_corners=True)
        up = up + interpolate(y, scale_factor=2, mode="bicubic") - interpolate(
            y, scale_factor=2, mode="nearest")
        down = interpolate(y, scale_factor=0.5, mode="bilinear")
        back = interpolate(down, size=y.shape[2:], mode="bicubic", align_corners=True)
        patches = nn.functional.unfold(up, 3, padding=1)
        return up.mean(dim=(2, 3)) + patches.mean(dim=2)[:, :4] + (back - y).abs().mean((2, 3))


class GreedyEarlyReturn(nn.Module):
    """An early `return` inside a `for` loop that grows a sequence with `torch.cat`, as a
    greedy decoder with a maximum length does (d): each exit has another length."""

    def __init__(self):
        super().__init__()
        self.step = nn.Linear(8, 8)

    def forward(self, x):
        out = x
        for _ in range(4):
            h = torch.tanh(self.step(out[:, -8:]))
            out = torch.cat([out, h], dim=1)
            if h.mean() > 0.2:
                return out
        return out


class GrowFromInput(nn.Module):
    """A sequence that starts as the input (of a dynamic size) and grows by one row per step
    of a `for` over a range bounded by that size, left by `break` on a value read with
    `.item()`: carried as a bounded buffer (g)."""

    def forward(self, x):
        seq = x
        for _ in range(x.size(0)):
            nxt = seq[-1:] * 0.5 + seq.mean(0, keepdim=True)
            seq = torch.cat([seq, nxt], 0)
            if nxt.sum().item() > 4.0:
                break
        return seq


class MaskedSelectionInBranch(nn.Module):
    """A boolean-mask selection and a `nonzero` inside a branch: sizes known only from the
    data, dead after the branch (f)."""

    def forward(self, x):
        h = x
        if h.mean() > 0:
            picked = h[h.mean(dim=1) > 0]
            rows = torch.nonzero(h.sum(dim=1) > 0).squeeze(1)
            h = h + picked.sum(dim=0, keepdim=True) + h.index_select(0, rows).sum(dim=0)
        return h


class RoutingByTupleNonzero(nn.Module):
    """Top-1 routing written as research code writes it: each expert's rows found with
    `nonzero(as_tuple=True)` (ATen's `nonzero_numpy`), an expert that gets none skipped, the
    results written back with a subscript assignment."""

    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(8, 3)
        self.experts = nn.ModuleList(nn.Linear(8, 8) for _ in range(3))

    def forward(self, x):
        weight, choice = torch.softmax(self.gate(x), -1).max(-1)
        out = torch.zeros_like(x)
        for i, expert in enumerate(self.experts):
            rows = (choice == i).nonzero(as_tuple=True)[0]
            if rows.numel() == 0:
                continue
            out[rows] = expert(x[rows]) * weight[rows, None]
        return out + x


class RankChangeAfterBreak(nn.Module):
    """A greedy loop (the chatbot tutorial's decoder): the state is reshaped for the next
    step only on the path that does not `break`, so the two paths of the data-dependent if
    give it different ranks. It is dead after the loop: the breaking path need not hand it on."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        h = x[:1]
        outs = []
        for _ in range(4):
            h = torch.tanh(self.lin(h)).sum(0)
            outs.append(h)
            if h.sum() > 0.5:
                break
            h = h.unsqueeze(0)
        return torch.stack(outs).sum(0) + x


class RecurrentOverStaticLength(nn.Module):
    """Stacked bidirectional GRU and a ReLU RNN over a static number of steps, the batch
    dynamic (a decoder's step, a fixed-window encoder): torch exports them as `aten.gru.input`
    and `aten.rnn_relu.input`, which torch-mlir cannot lower."""

    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(8, 6, num_layers=2, bidirectional=True)
        self.rnn = nn.RNN(12, 8, nonlinearity="relu", batch_first=True)

    def forward(self, x):
        steps = torch.stack([x, x * 0.5, -x])  # (3, batch, 8)
        out, h = self.gru(steps)
        out, _ = self.rnn(out.transpose(0, 1))
        return out.sum(1) + h.sum(0).repeat(1, 2)[:, :8]


class AdaptiveComputation(nn.Module):
    """ACT (Graves 2016): a recurrent cell ponders the input until the accumulated halting
    probability of every row reaches 1 - eps or a step bound; the input, concatenated with a
    first-step flag, is read by every step."""

    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(9, 8)
        self.halt = nn.Linear(8, 1)

    def forward(self, x):
        h, acc, total = torch.zeros_like(x), torch.zeros_like(x), torch.zeros(x.shape[0], 1)
        first, n = torch.ones(x.shape[0], 1), 0
        while n < 6 and bool((total < 0.99).any()):
            h = self.cell(torch.cat([x, first], 1), h)
            first = torch.zeros_like(first)
            p = torch.minimum(torch.sigmoid(self.halt(h)), 1 - total) * (total < 0.99).float()
            acc, total, n = acc + p * h, total + p, n + 1
        return acc + total


class _SubclassedLSTM(nn.LSTM):
    def forward(self, x):
        return super().forward(x)[0].relu()


class SubclassedLSTMOverStaticLength(nn.Module):
    """A subclass of nn.LSTM whose forward calls nn.LSTM's: the layer reaches the exported
    graph as `aten.lstm.input`, decomposed like the modules dync rewrites (over 20 steps, more
    than are unrolled: a loop)."""

    def __init__(self):
        super().__init__()
        self.lstm = _SubclassedLSTM(8, 8, batch_first=True)

    def forward(self, x):
        steps = x.unsqueeze(1) * torch.linspace(-1.0, 1.0, 20).reshape(1, 20, 1)
        return self.lstm(steps).sum(1)


class StackedRecurrentOverDynamicLength(nn.Module):
    """A two-layer bidirectional LSTM over a sequence of dynamic length (the rows): each layer
    a loop over what the previous loop produced, projected before it."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 5, num_layers=2, bidirectional=True)
        self.out = nn.Linear(10, 8)

    def forward(self, x):
        out, (h, c) = self.lstm(x.unsqueeze(1))
        return self.out(out.squeeze(1)) + (h.sum(0) + c.sum(0)).sum()


class ProjectedLSTMOverDynamicLength(nn.Module):
    """An LSTM with `proj_size` (its h projected to fewer features each step) over a sequence
    of dynamic length."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 6, proj_size=4)
        self.out = nn.Linear(4, 8)

    def forward(self, x):
        out, (h, c) = self.lstm(x.unsqueeze(1))
        return self.out(out.squeeze(1)) + h.sum() + c.sum()


class LoopOverRows(nn.Module):
    """`for x in xs` over the rows of a sequence of dynamic length, as time-major RNN code
    iterates its steps: a cell per row, a branch on data inside, the outputs collected and
    concatenated (iterating fixed the length to the example's)."""

    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(8, 8)
        self.out = nn.Linear(8, 8)

    def forward(self, xs):
        h = torch.zeros(1, 8)
        outs = []
        for x in xs:
            h = self.cell(x.unsqueeze(0), h)
            if h.abs().mean() > 0.3:
                h = h * 0.7
            outs.append(self.out(h))
        return torch.cat(outs) + h.sum()


class UnbindSteps(nn.Module):
    """`for x_t in x.unbind(1)` over the steps of a batch-major sequence of dynamic length
    (research RNN code's loop): a cell per step, the outputs stacked (iterating the unbind's
    tuple fixed the length to the example's; it ran in host mode)."""

    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(16, 8)
        self.out = nn.Linear(8, 4)

    def forward(self, x):
        h = x.new_zeros(x.size(0), 8)
        outs = []
        for x_t in x.unbind(1):
            h = self.cell(x_t, h)
            outs.append(h)
        return self.out(torch.stack(outs, 1))


class EnumeratedSteps(nn.Module):
    """`for t, x_t in enumerate(torch.unbind(x, dim=1))`: the step's number in a branch and in
    arithmetic."""

    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(16, 8)

    def forward(self, x):
        h = x.new_zeros(x.size(0), 8)
        total = torch.zeros_like(h)
        for t, x_t in enumerate(torch.unbind(x, dim=1)):
            if t == 0:
                h = torch.tanh(x_t[:, :8])
            else:
                h = self.cell(x_t, h)
            total = total + h * (t + 1)
        return total


class EnumeratedRows(nn.Module):
    """`for i, row in enumerate(xs)` over the rows of a dynamic batch, the index scaling each."""

    def forward(self, xs):
        out = []
        for i, row in enumerate(xs):
            out.append(row.cumsum(0) * i)
        return torch.stack(out)


class PonderOverSteps(nn.Module):
    """Adaptive computation time over a sequence (Graves 2016, as PyTorch ports write it): a
    ponder `while` on data inside the loop over the steps of a dynamic length, its halting
    weights summing the states. The loop body, a function of its own, had its own value of
    the batch size, which IREE could not tell equal to the caller's: its stream conversion
    of the ponder loop failed ("failed to legalize unresolved target materialization from
    ('index')") and the model ran in Python."""

    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(17, 16)
        self.halt = nn.Linear(16, 1)
        self.out = nn.Linear(16, 4)

    def forward(self, xs):
        b = xs.shape[0]
        h = torch.zeros(b, 16)
        outs = []
        steps = xs.transpose(0, 1)
        for x in steps:
            halting, n, acc = torch.zeros(b), torch.zeros(b), torch.zeros_like(h)
            flag = torch.cat([x, torch.ones(b, 1)], 1)
            while ((halting < 0.99) & (n < 4)).any():
                still = ((halting < 0.99) & (n < 4)).float()
                h = self.cell(flag, h)
                p = torch.sigmoid(self.halt(h)).squeeze(1) * still
                halting, n = halting + p, n + still
                acc = acc + p.unsqueeze(1) * h
                flag = torch.cat([x, torch.zeros(b, 1)], 1)
            h = acc / halting.unsqueeze(1)
            outs.append(self.out(h) * n.unsqueeze(1))
        return torch.stack(outs, 1)


class EarlyReturnInNestedBranch(nn.Module):
    """An early return from a branch nested in another, after a selection that picks no row
    for negative inputs: the inner branch's two results share one IREE allocation, which the
    VM passes twice on one edge (an IREE bug, `dync/iree_mends.py`; fuzz seed 664)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, h):
        if h.abs().mean() > 0.2:
            if h.sum() < 0.1:
                picked = h[h.mean(dim=1) > 0.6]
                h = h + 0.1 * picked.sum(dim=0, keepdim=True)
                return self.lin(h)
            h = h * 2
        return self.lin(h)


class TemporaryInWhile(nn.Module):
    """A temporary of another shape inside a `while` on data, dead at the loop's head (c)."""

    def forward(self, x):
        h = x
        while h.abs().mean() > 0.5:
            t = torch.cat([h, h], dim=1)
            h = t[:, : h.shape[1]] * 0.5 + t[:, h.shape[1]:] * 0.25
        return h


class LoopOverBatch(nn.Module):
    """`h[i] += f(x[i])` in a `for` over a dynamic size: the loop index is a tensor (a)."""

    def forward(self, x):
        h = torch.zeros(x.shape[0], x.shape[1])
        for i in range(x.shape[0]):
            h[i] += x[i] * 2.0
            h[i, 0] = x[i].sum()
        return h


class RoutedRow(nn.Module):
    """`x[t.argmax()]`: a row picked by a 0-d tensor index."""

    def forward(self, x):
        return x + 0.5 * x[x.sum(dim=1).argmax()]


class TwoRoutings(nn.Module):
    """Two top-k routings over a dynamic batch (a mixture of experts two layers deep): IREE
    gave both sorts one index iota, and the second one's indices were wrong
    (dync-pack-sort-keys)."""

    def __init__(self):
        super().__init__()
        self.gates = nn.ModuleList([nn.Linear(8, 8), nn.Linear(8, 8)])

    def forward(self, x):
        for gate in self.gates:
            weights, chosen = torch.topk(gate(x), k=3, dim=1)
            x = x + (torch.softmax(weights, dim=1) * x.gather(1, chosen)).sum(1, keepdim=True)
        return x


class SortsInBranch(nn.Module):
    """Two top-k of the same shape inside one branch, picking columns (fuzz seed 805)."""

    def forward(self, x):
        if x.mean() > 0:
            for _ in range(2):
                top = torch.topk(x.sum(dim=0), k=3).indices
                x = x + x[:, top].mean(dim=1, keepdim=True)
            return x
        return x * 2.0


class FreshTensorsWrittenInPlace(nn.Module):
    """Two tensors of zeros (or two aranges) of the input's dynamic shape, each written in
    place: IREE merged the two fills and both writes landed in one buffer
    (dync-distinct-fills)."""

    def forward(self, x):
        a = torch.zeros_like(x)
        a[:, 0] = x[:, 1]
        b = torch.zeros_like(x)
        b[:, 0] = x[:, 2] * 3.0
        chosen = (x > x.mean()).long()
        c = torch.zeros_like(x).scatter_add(1, chosen, x)
        d = torch.zeros_like(x).scatter_add(1, 1 - chosen, x * 2.0)
        n = torch.arange(x.shape[0]).float()
        n[0] = x[0, 1]
        m = torch.arange(x.shape[0]).float()
        m[-1] = x[-1, 2]
        e = torch.zeros_like(x)  # one fill, two out-of-place writes
        f = e.scatter_add(1, chosen, x) - e.scatter_add(1, 1 - chosen, x * 3.0)
        return a + 10 * b + c + 100 * d + n[:, None] + 1000 * m[:, None] + f


class CollapseRepeats(nn.Module):
    """Greedy CTC decoding's collapse of repeats and blanks: a boolean mask made with
    `ones_like(..., dtype=torch.bool)`, written through a slice, then a selection
    (dync-distinct-fills made the mask's value explicit as a boolean, which torch's fills do
    not take)."""

    def forward(self, x):
        best = (x * 3.0).long().flatten()  # a label per frame, 0 the blank
        keep = torch.ones_like(best, dtype=torch.bool)
        keep[1:] = best[1:] != best[:-1]
        keep &= best != 0
        return x.flatten()[keep] * 2.0


class PointwiseConv1dOverPoints(nn.Module):
    """PointNet's shared MLP: 1×1 `Conv1d`s with batch norms over a dynamic number of points
    given channels-last, a max over the points, a classifier wide enough for data tiling
    (dync-conv1d-linear, dync-fence-reductions)."""

    def __init__(self):
        super().__init__()
        self.mlp = nn.Sequential(nn.Conv1d(3, 16, 1), nn.BatchNorm1d(16), nn.ReLU(),
                                 nn.Conv1d(16, 128, 1, bias=False), nn.ReLU())
        self.head = nn.Sequential(nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 4))

    def forward(self, points):
        return self.head(self.mlp(points.transpose(1, 2)).amax(2))


class AttentionOverBatchAndLength(nn.Module):
    """`nn.TransformerEncoderLayer` and `nn.MultiheadAttention` with a key padding mask over a
    dynamic batch and a dynamic length: attention merges its heads back with a view of
    `[s, b, heads, e]` to `[s*b, heads*e]`, which torch-mlir lowered as if the batch were 1
    (dync-collapse-views)."""

    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True)
        self.attention = nn.MultiheadAttention(16, 4, batch_first=True)

    def forward(self, x):
        h = self.layer(x)
        n = x.shape[1]
        padded = (torch.arange(n) >= n - 1)[None, :].expand(x.shape[0], n)
        return self.attention(h, h, h, key_padding_mask=padded, need_weights=False)[0]


class AttentionOverLongSequences(AttentionOverBatchAndLength):
    """The same over 128 tokens of width 128 (data tiling on AVX-512): IREE computed the
    scores of the heads split after a transpose, and the padding mask merged with the heads
    and split again, wrong from about 100 tokens on (dync-collapse-views)."""

    def __init__(self):
        nn.Module.__init__(self)
        self.layer = nn.TransformerEncoderLayer(128, 4, 256, dropout=0.0, batch_first=True)
        self.attention = nn.MultiheadAttention(128, 4, batch_first=True)


class StableSorts(nn.Module):
    """`sort(stable=True)`, `argsort(stable=True)`, `msort`: ops IREE does not lower."""

    def forward(self, x):
        values, order = torch.sort(x, dim=1, descending=True, stable=True)
        rank = torch.argsort(order, dim=1, stable=True)
        return values + rank.float() + torch.msort(x)


class AliasedWriteInBranch(nn.Module):
    """A write through a second name of a tensor inside a branch: eager changes both names,
    so dync must not write on a copy (it runs the branch as Python)."""

    def forward(self, x):
        y = x * 1.0
        h = y
        if h.mean() > 0:
            h[:, 0] = 5.0
        return y + h


class AliasOfAFreshTensor(nn.Module):
    """`keep = h` after `h = x.clone()`, then a write into `h` in a branch: eager's write
    changes `keep` too, so the write must not be made on a copy."""

    def forward(self, x):
        h = x.clone()
        keep = h
        if h.mean() > 0.3:  # not on the example: the first-call check cannot see it
            h[:, 0] = 5.0
        return keep * 2.0 + h


class WhileOverImage(nn.Module):
    """A `while` on data carrying a tensor with three dynamic dims (batch, H, W), between
    convolutions (g): IREE refused the sub-DNN split's permuted shape bindings."""

    def __init__(self):
        super().__init__()
        self.conv0, self.conv1 = nn.Conv2d(3, 3, 3, padding=1), nn.Conv2d(3, 3, 3, padding=1)

    def forward(self, x):
        h = torch.tanh(self.conv0(x))
        steps = 0
        while h.abs().max() > 0.3 and steps < 6:
            h = h * 0.5
            steps += 1
        return torch.tanh(self.conv1(h)).mean(dim=(2, 3))


class ListLeftByBreakOverImage(nn.Module):
    """A list grown in a loop left by `break` over an image of dynamic H x W, read beside the
    loop's tensor (j). IREE 3.13 gave the dims leaving the loop's `scf.if`s values of their
    own, and the dispatch adding `h` to the mean of the cat then covered half of H x W (the
    rest unwritten); dync-tie-region-shapes views them to the arguments' sizes."""

    def forward(self, x):
        h = x
        outs = []
        for _ in range(3):
            h = torch.tanh(h + 0.1)
            outs.append(h.mean(dim=1, keepdim=True))
            if h.sum() > 0.6:
                break
        return h + torch.cat(outs, dim=1).mean(dim=1, keepdim=True)


class _Downsampling(nn.Module):
    """A model with a stride-2 convolution, `self.down`."""

    def __init__(self):
        super().__init__()
        self.down = nn.Conv2d(3, 3, 3, stride=2, padding=1)


class ListLeftByBreakAfterStridedConv(_Downsampling):
    """Lists grown in loops left by `break` over the output of a strided convolution, whose
    H x W are floor divisions of the input's (fuzz seeds 87, 212, 362): the region dims IREE
    mis-covers (above) were expressions of the arguments' symbols, which
    dync-tie-region-shapes left alone, and the result was silently wrong."""

    def forward(self, x):
        h = torch.relu(self.down(x))
        for limit in (0.2, 0.7):
            outs = []
            for _ in range(4):
                h = torch.tanh(h + 0.1)
                outs.append(h.mean(dim=1, keepdim=True))
                if h.max() > limit:
                    break
            h = h + torch.cat(outs, dim=1).mean(dim=1, keepdim=True)
        return h.mean(dim=(2, 3))


class ListLeftByBreakAfterPooling(nn.Module):
    """A list grown in a loop left by `break` over a pooled image: its buffer's strides are
    products of `Max(1, H // 2)`, which `cond` could not match between the branches (a
    stride error at export, so host mode)."""

    def forward(self, x):
        h = F.avg_pool2d(x, 2)
        outs = [h.mean(dim=1, keepdim=True)]
        for _ in range(3):
            if h.max() > 0.2:
                break
            h = torch.tanh(h + 0.1)
            outs.append(h.amax(dim=1, keepdim=True))
        return (h * torch.cat(outs, dim=1).mean(dim=1, keepdim=True)).mean(dim=(2, 3))


class MaskedAssignmentAfterPoolingInBranch(_Downsampling):
    """`h[h < t] = 0` on a pooled image inside a branch, a strided convolution after it (fuzz
    seed 56): torch.export checks the pooled sizes with `a & b` of symbolic bools, which the
    FX importer did not know ("Unsupported builtin function for symbolic types: and_")."""

    def forward(self, x):
        h = x
        if h.mean() > 0.2:
            h = F.max_pool2d(h, 2) + torch.tensor([0.25, -0.25, 0.5]).view(1, -1, 1, 1)
            h = h.clone()
            h[h < 0.4] = 0.0
        return torch.relu(self.down(h)).mean(dim=(2, 3))


class EarlyReturnBeforePooling(nn.Module):
    """An early `return` in a branch, and pooling on the path that goes on (fuzz seed 62):
    the returning path's placeholder for `h` had strides of `Max(1, H // 2)`, which `cond`
    could not match with the pooled tensor's (a stride error at export, so host mode)."""

    def forward(self, x):
        h = x
        if h.sum() > 0:
            if h.sum() > 1500:  # a batch of 5 positive images, not one of 2
                return (h * 0.5).mean(dim=(2, 3))
            h = F.max_pool2d(torch.tanh(h), 2)
        return (h + 1.0).mean(dim=(2, 3))


class WhileAfterBranchesOfTwoSizes(nn.Module):
    """A `while` on data over a tensor whose H x W depend on the path a branch took (pooled in
    one branch only; fuzz seeds 720 and nine others): the loop's carried tensor had strides of
    `Max(1, u)` going in and plain ones coming out of the body, and `while_loop` refused it
    ("Expected carried_inputs and body_output to have same metadata")."""

    def forward(self, x):
        h = x
        if h.sum() > 0:
            h = F.max_pool2d(h, 2)
        steps = 0
        while h.abs().max() > 0.3 and steps < 5:
            h = h * 0.5
            steps += 1
        return h.mean(dim=(2, 3))


class PoolingAfterBranchesOfTwoSizes(_Downsampling):
    """Pooling over a tensor whose H x W depend on the path a branch took (a strided
    convolution in one branch; fuzz seed 158): torch.export checks the pooled size with
    `torch.sym_not`, which the FX importer did not know."""

    def forward(self, x):
        h = x
        if h.sum() > 0:
            h = torch.relu(self.down(h))
        return F.max_pool2d(h, 2).mean(dim=(2, 3))


class ListsLeftByBreakAroundAnEarlyReturn(nn.Module):
    """Lists grown in loops left by `break` before and on both sides of an early `return`, a
    mask selection and a convolution in a branch between them (fuzz seed 267, reduced): IREE
    sliced the early-return branch's list with the length its first iteration left, and the
    result silently lost the later items; dync-fence-region-reads fences the lengths."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3, padding=1)

    def forward(self, x):
        h = self._grown(x, 1.0, steps=4)
        if h.mean() < -0.1:
            picked = h[h.flatten(1).mean(dim=1) > 0.05]
            h = torch.tanh(self.conv(h + 0.1 * picked.sum(dim=0, keepdim=True)))
        if h.mean() > 0.05:
            return self._grown(h, 0.7).mean(dim=(2, 3))
        if h.mean() > -0.5:
            h = torch.tanh(h) * 0.9
        return self._grown(h, 0.3).mean(dim=(2, 3))

    def _grown(self, h, limit, steps=2):
        outs = []
        for _ in range(steps):
            h = torch.tanh(h + 0.1)
            outs.append(h.mean(dim=1, keepdim=True))
            if h.mean() < limit:
                break
        return h + torch.cat(outs, dim=1).mean(dim=1, keepdim=True)


class ListLeftByBreakInBranch(nn.Module):
    """A list grown in a loop left by `break`, inside an `if` on data (c, d). `torch.cond`
    traces a branch with the torch-function modes set aside, so `torch.cat` of the list's
    bounded buffer saw an empty list ("cat expects at least one tensor"): 49 of the first
    300 generated programs fell back to host mode on it."""

    def forward(self, x):
        h = x
        if h.sum() < -0.5:
            outs = []
            for _ in range(2):
                h = torch.tanh(h + 0.1)
                outs.append(h.mean(dim=1, keepdim=True))
                if h.mean() > 0.6:
                    break
            h = h + torch.cat(outs, dim=1).mean(dim=1, keepdim=True)
        return h


class WriteIntoInputInBranch(nn.Module):
    """A write into the model's own input inside a branch, directly and through `h = x` (a).
    Done on a copy: the results are eager's; the caller's tensor is left as it was."""

    def forward(self, x):
        h = x
        if h.sum() > 0:
            h[h < 0.5] = 0.0
        else:
            h[:, 0] = h[:, 1] * 2.0
        return h * 2.0


class SubmoduleWritesIntoItsArgument(nn.Module):
    """A submodule writes into the tensor its caller passed and still reads: eager's write
    reaches the caller, so it stays in place (not one graph), and the result is eager's."""

    def __init__(self):
        super().__init__()
        self.inner = _ZeroFirstColumnIfPositive()

    def forward(self, x):
        kept = x * 1.0
        y = self.inner(kept)
        return y + kept


class _ZeroFirstColumnIfPositive(nn.Module):
    def forward(self, v):
        if v.sum() > 0:
            v[:, 0] = 0.0
        return v * 2.0


class DataAttribute(nn.Module):
    """`.data` inside forward (h)."""

    def forward(self, x):
        return x.data * 2.0 + x


class HalfTheTokensByTopK(nn.Module):
    """Mixture-of-depths routing: `k = max(1, s // 2)` of the tokens by a score. Python's
    `max` on the size makes torch.export assume `k != 1` (a contiguity check's guard), and
    with the declared `Dim`s it refused the whole export (so host mode); then it compiled the
    lengths from 4 on, the others as a second trace; now one trace, the guard being one of
    layout (`guards._values_hold`)."""

    def forward(self, x):
        k = max(1, x.shape[1] // 2)
        score, picked = torch.topk(x.sum(dim=-1), k, dim=1)
        rows = torch.gather(x, 1, picked[..., None].expand(-1, -1, x.shape[2]))
        return rows * torch.sigmoid(score)[..., None]


class BranchOnADynamicSize(nn.Module):
    """`if x.shape[1] > 16: x = x[:, :16]`, as models that cap a sequence's length write it:
    compiled for the lengths the example's path holds for, the others as a second trace
    (`compiled.pieces`)."""

    def forward(self, x):
        if x.shape[1] > 16:
            x = x[:, :16]
        return torch.tanh(x).cumsum(dim=1)


class PadToAMultipleOfASize(nn.Module):
    """A sequence zero-padded to a multiple of 8 computed from its length with Python's `%`,
    `(-length) % 8` as window partitions write it: the FX importer takes `%` of ints for
    `fmod`, which IREE cannot lower (so eager), and aten's `remainder.int` lowers to a
    truncating remainder (-1 for a length of 17: a wrong shape)."""

    def forward(self, x):
        pad = (-x.shape[1]) % 8
        windows = F.pad(x, (0, 0, 0, pad)).reshape(x.shape[0], -1, 8, x.shape[2])
        return windows.softmax(dim=2).sum(dim=2)


class WindowsOfAPaddedSequenceCroppedBack(nn.Module):
    """Local attention as Longformer-style code writes it: the sequence padded to whole
    windows of 4, viewed as windows, attention within each, then cropped back (`[:, :n]`).
    torch.export traced it assuming the pad is not 0 and there is more than one window (the
    crop's and the view's strides), so it held for lengths 5-7 only (eager)."""

    def __init__(self, dim=16):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, c = x.shape
        xp = F.pad(x, (0, 0, 0, (4 - n % 4) % 4))
        win = xp.view(b, -1, 4, c)
        att = (win @ win.transpose(-1, -2) / c).softmax(-1) @ self.proj(win)
        return att.reshape(b, -1, c)[:, :n]


class ChunksOfAPaddedSequenceOverTheBatch(nn.Module):
    """DPRNN's chunking as written: the length padded to a multiple of 4, then
    `reshape(-1, 4, C)` merging it with the batch. torch states the 4 as `(b*t)//((b*t)//4)`
    and torch-mlir lowered the view wrong: a run-time failure (dync-collapse-views)."""

    def forward(self, x):
        b, n, c = x.shape
        chunks = F.pad(x, (0, 0, 0, (4 - n % 4) % 4)).reshape(-1, 4, c)
        mixed = chunks.softmax(dim=1) * chunks
        return mixed.reshape(b, -1, c)[:, :n]


class WindowsOfAPaddedImageOverTheBatch(nn.Module):
    """Swin's windows the short way: the channels-last map padded to whole 4x4 windows,
    `reshape(-1, 16, C)` over the batch, and `view(B, Hp, Wp, C)` back. The module wrote out
    of bounds before it failed, corrupting the process's heap (dync-collapse-views)."""

    def forward(self, x):
        x = x.permute(0, 2, 3, 1)
        B, H, W, C = x.shape
        x = F.pad(x, (0, 0, 0, (4 - W % 4) % 4, 0, (4 - H % 4) % 4))
        Hp, Wp = x.shape[1], x.shape[2]
        windows = x.reshape(-1, 16, C)
        windows = windows - windows.mean(dim=1, keepdim=True)
        y = windows.view(B, Hp, Wp, C)[:, :H, :W]
        return y.permute(0, 3, 1, 2).contiguous()


class WindowRoundTripMadeContiguous(nn.Module):
    """Swin's `window_partition` and `window_reverse` around a pad to whole 4x4 windows,
    ending in `x[:, :H, :W].contiguous()`: torch.export asked whether the crop was contiguous
    already, a guard tying h and w, and the whole model ran in eager."""

    def forward(self, x):
        x = x.permute(0, 2, 3, 1)
        B, H, W, C = x.shape
        x = F.pad(x, (0, 0, 0, (4 - W % 4) % 4, 0, (4 - H % 4) % 4))
        Hp, Wp = x.shape[1], x.shape[2]
        win = x.view(B, Hp // 4, 4, Wp // 4, 4, C).permute(0, 1, 3, 2, 4, 5).reshape(-1, 16, C)
        win = win.softmax(dim=1)
        batch = int(win.shape[0] / (Hp * Wp / 16))
        y = win.view(batch, Hp // 4, Wp // 4, 4, 4, -1).permute(0, 1, 3, 2, 4, 5)
        return y.reshape(batch, Hp, Wp, -1)[:, :H, :W].contiguous()


class EncoderDecoderCroppedToTheInput(nn.Module):
    """A U-Net level as written: the image padded to even sizes (`(-h) % 2`, reflect), a
    stride-2 convolution, a transposed one back up, cropped to the input's size and
    concatenated with it. torch crashed suggesting `Dim`s for the trace ("Cannot create Dim
    with inconsistent min"), and its layout guards (the crop contiguous exactly when nothing
    was padded) held for even sizes only (Python)."""

    def __init__(self):
        super().__init__()
        self.down = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.up = nn.ConvTranspose2d(8, 8, 2, stride=2)
        self.out = nn.Conv2d(11, 4, 1)

    def forward(self, x):
        h, w = x.shape[-2:]
        xp = F.pad(x, (0, (-w) % 2, 0, (-h) % 2), mode="reflect")
        y = self.up(F.relu(self.down(xp)))[..., :h, :w]
        return self.out(torch.cat([x, y], 1))


class ShiftInPlace(nn.Module):
    """Nucleus (top-p) filtering as sampling code writes it: the sorted tokens past the
    threshold are removed, shifted right in place to keep the first of them
    (`remove[..., 1:] = remove[..., :-1].clone()`), scattered back. IREE copied such a source,
    a view of the tensor written, in place and forward: the row came back as its first value
    repeated (so eager, by the first call's check); also a float row shifted so."""

    def forward(self, x):
        logits = x.mean(-1) * 4
        sorted_logits, idx = logits.sort(-1, descending=True)
        remove = sorted_logits.softmax(-1).cumsum(-1) > 0.9
        remove[..., 1:] = remove[..., :-1].clone()
        remove[..., 0] = False
        shifted = x * 2
        shifted[:, 1:] = shifted[:, :-1].clone()
        return logits.masked_fill(remove.scatter(-1, idx, remove), -1e9).softmax(-1), shifted


class GreedyNonMaximumSuppression(nn.Module):
    """Greedy NMS as detectors write it: the rows a score threshold keeps, sorted, then a
    `for` over them that skips suppressed boxes (`continue`), appends each kept index to a
    Python list and suppresses its overlaps; `torch.tensor(chosen)` picks the boxes. The
    `cond` in the loop gave the suppression mask a fresh size (torch cannot see that both
    branches keep the rows' count), so the loop did not keep its shape, and
    `torch.tensor` of the list was refused (host mode)."""

    def forward(self, x):
        scores = x[:, 4]
        boxes = torch.cat([x[:, :2] * 4, x[:, :2] * 4 + x[:, 2:4].abs() + 0.5], dim=1)
        keep = scores > 0.3
        boxes, scores = boxes[keep], scores[keep]
        order = scores.argsort(descending=True)
        boxes, scores = boxes[order], scores[order]
        chosen = []
        alive = torch.ones(len(scores), dtype=torch.bool)
        for i in range(len(scores)):
            if not alive[i]:
                continue
            chosen.append(i)
            lt = torch.maximum(boxes[i, :2], boxes[:, :2])
            rb = torch.minimum(boxes[i, 2:], boxes[:, 2:])
            inter = (rb - lt).clamp(min=0).prod(1)
            area = (boxes[:, 2:] - boxes[:, :2]).prod(1)
            alive &= inter / (area[i] + area - inter) <= 0.5
        picked = torch.tensor(chosen, dtype=torch.long)
        return boxes[picked], scores[picked]


class IntOfASize(nn.Module):
    """`int(x.shape[0])` in a forward the rewriter rewrites (it has a branch on data): the
    size stays symbolic. It failed with "'SymInt' object has no attribute 'reshape'" (eager)."""

    def forward(self, x):
        n = int(x.shape[0])
        h = x.reshape(n, x.shape[1], 1).tanh()
        if h.mean() > 0:
            h = h * 2.0
        return h.sum(dim=2) + n


class FloatArithmeticOnSizes(nn.Module):
    """Float arithmetic on a dynamic length, as research code writes it: `float()` of the
    length and `math.sqrt` of it scaling tensors, a step `torch.tensor([2.0 / (n - 1)])`, a
    `torch.full` of `1.0 / n` (times an integer tensor), `int()` of an affine float of the
    length and `math.ceil` of one (wav2vec2's mask spans, a kept fraction). Each specialized
    the length to the example's (or the importer met `sym_float`): the model ran in eager."""

    def forward(self, x):
        n = x.shape[1]
        mean = x.sum(1) / float(n)
        scaled = x / math.sqrt(n)
        step = torch.tensor([2.0 / (n - 1)])
        grid = torch.arange(n, dtype=x.dtype) * step - 1.0
        weights = torch.full((n,), 1.0 / n) * torch.arange(n)
        spans = int(0.25 * n / 2 + 0.5)
        keep = math.ceil(n * 0.3)
        tail = x[:, :keep].mean(1) + spans
        return mean + tail, scaled + grid[None, :, None], weights


class PoolBySegmentsCountedFromData(nn.Module):
    """Global mean pooling by segment ids, the number of segments read from them as graph
    libraries do (`size = int(batch.max()) + 1`) and used as a size: `new_zeros`, `zeros`,
    `one_hot`. `int()` of a traced tensor stays a tensor; torch read it as a Python int (a
    data-dependent guard), and the model ran in eager."""

    def forward(self, x):
        batch = (x[:, 0] > 0).long().cumsum(0)
        size = int(batch.max()) + 1
        sums = x.new_zeros(size, x.shape[1])
        sums.index_add_(0, batch, x)
        counts = torch.zeros(size).index_add(0, batch, torch.ones(x.shape[0]))
        return sums / counts.clamp(min=1)[:, None], F.one_hot(batch, size).sum(0)


class EntropyExitThroughDistributions(nn.Module):
    """An early exit on the entropy of `torch.distributions.Categorical(logits=...)`: the
    distribution checks its arguments, a Python bool of data that ended the graph."""

    def __init__(self):
        super().__init__()
        self.body, self.exit, self.head = nn.Linear(8, 8), nn.Linear(8, 4), nn.Linear(8, 4)

    def forward(self, x):
        h = torch.relu(self.body(x))
        logits = self.exit(h)
        if (torch.distributions.Categorical(logits=logits * 10).entropy() < 1.0).all():
            return logits
        return self.head(h)


class ParametersChosenByABranch(nn.Module):
    """A branch on data that picks a parameter or a buffer as it is (a weight, a scale): no op
    reads it in the branch, and torch.cond met it unlifted ("Attempting to use
    FunctionalTensor on its own"): eager before."""

    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(8, 8), nn.Linear(8, 8)
        self.register_buffer("up", torch.linspace(0.5, 2.0, 8))
        self.register_buffer("down", torch.linspace(-1.0, 1.0, 8))

    def forward(self, x):
        w = self.a.weight if x.mean() > 0 else self.b.weight
        if x.sum() > 0:
            scale = self.up
        else:
            scale = self.down
        return (x @ w.t()) * scale


class RefineWhileNormAndCounter(nn.Module):
    """`while h.norm() > 1 and i < 10`: a loop carrying a tensor of a dynamic shape and a
    Python counter. IREE crashed on the loop (dync-rotate-while orders its values)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        i = 0
        h, acc = x, torch.zeros_like(x)
        while h.norm() > 1.0 and i < 10:
            h = torch.tanh(self.lin(h)) * 0.6
            acc = acc + h
            i += 1
        return acc * i + h


class StepSlicesOverALength(nn.Module):
    """`x[:, t:t + 1]` at each step of a loop over a dynamic length (a recurrent cell fed one
    step at a time, its dim kept): torch read the slice of the traced counter as two
    numbers, of a length it could not tell, and `squeeze(1)` left the dim."""

    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(16, 8)

    def forward(self, x):
        h = x.new_zeros(x.shape[0], 8)
        outs = []
        for t in range(x.size(1)):
            h = self.cell(x[:, t:t + 1].squeeze(1), h)
            outs.append(h[:, None])
        return torch.cat(outs, 1)


class FarthestPointSampling(nn.Module):
    """PointNet++'s farthest point sampling as its PyTorch port writes it: a `for` over the
    samples that updates each point's distance with `distance[mask] = dist[mask]`. The masked
    update from values gathered by the same mask is a `where` (no `nonzero`, no scatter)."""

    def forward(self, xyz):
        B, N, C = xyz.shape
        centroids = torch.zeros(B, 4, dtype=torch.long)
        distance = torch.ones(B, N) * 1e10
        farthest = torch.zeros(B, dtype=torch.long)
        batch_indices = torch.arange(B, dtype=torch.long)
        for i in range(4):
            centroids[:, i] = farthest
            centroid = xyz[batch_indices, farthest, :].view(B, 1, 3)
            dist = torch.sum((xyz - centroid) ** 2, -1)
            mask = dist < distance
            distance[mask] = dist[mask]
            farthest = torch.max(distance, -1)[1]
        return centroids.float() + distance.sum(dim=1, keepdim=True)


class EdgeFeatures(nn.Module):
    """DGCNN's edge features as its code writes them: each point's k nearest neighbours by
    `topk`, gathered through flat indices, then `torch.cat((feature - x, x), dim=3)` with `x`
    the point repeated k times. Each half of the cat is a copy into a slice whose workload
    names the batch and the point count twice; IREE 3.13 renumbered the repeats wrong and
    left the points past 64 unwritten (`dync/iree_mends.py`)."""

    def forward(self, xyz):
        B, N, C = xyz.shape
        k = 3
        x = xyz.transpose(2, 1)
        inner = -2 * torch.matmul(x.transpose(2, 1), x)
        xx = torch.sum(x ** 2, dim=1, keepdim=True)
        idx = (-xx - inner - xx.transpose(2, 1)).topk(k=k, dim=-1)[1]
        idx = (idx + torch.arange(0, B).view(-1, 1, 1) * N).view(-1)
        feature = xyz.reshape(B * N, -1)[idx, :].view(B, N, k, C)
        x = xyz.view(B, N, 1, C).repeat(1, 1, k, 1)
        return torch.cat((feature - x, x), dim=3)


class BallQuery(nn.Module):
    """PointNet++'s ball query as its PyTorch port writes it: the points outside the radius
    set to N, a sort of which only the first `nsample` are read, then those past the radius
    replaced by the first in the ball with `group_idx[mask] = group_first[mask]` (a write
    into a view of the sort's result). IREE failed on the scatter ("write affecting
    operations on global resources are restricted to workgroup distributed contexts")."""

    def forward(self, xyz):
        B, N, C = xyz.shape
        new_xyz = xyz[:, :4]
        S, nsample = 4, 3
        group_idx = torch.arange(N, dtype=torch.long).view(1, 1, N).repeat([B, S, 1])
        sqrdists = -2 * torch.matmul(new_xyz, xyz.permute(0, 2, 1))
        sqrdists += torch.sum(new_xyz ** 2, -1).view(B, S, 1)
        sqrdists += torch.sum(xyz ** 2, -1).view(B, 1, N)
        group_idx[sqrdists > 0.5 ** 2] = N
        group_idx = group_idx.sort(dim=-1)[0][:, :, :nsample]
        group_first = group_idx[:, :, 0].view(B, S, 1).repeat([1, 1, nsample])
        mask = group_idx == N
        group_idx[mask] = group_first[mask]
        return group_idx.float()


class MaskedUpdateOfComputedValues(nn.Module):
    """`h[mask] = f(a[mask], b[mask])` with `f` element-wise and a mask over the leading dims,
    into a float tensor and into an int one (a conversion among the element-wise ops)."""

    def forward(self, x):
        h = x.clone()
        counts = torch.zeros(x.shape, dtype=torch.long)
        mask = x.sum(dim=1) > 0
        h[mask] = torch.tanh(x[mask]) * 2.0 + h[mask] * x[mask]
        counts[mask] = (x[mask] * 10.0).long() + counts[mask]
        return h + counts


def _gated(x, scale):
    """A module-level helper with a data-dependent branch (research code keeps much of a
    model in such helpers: PointNet++'s sampling, DGCNN's `knn`)."""
    if x.mean() > 0:
        return x * scale
    return x - scale


class BranchInAHelperFunction(nn.Module):
    """`forward` (itself without control flow) calls a free function that branches on data."""

    def forward(self, x):
        return _gated(x, 2.0) + 1


class GreedyDecoderOverAConstantRange(nn.Module):
    """A greedy decoder over at most 100 steps, `for _ in range(self.max_len)` with a `break`
    on an end token: a `while_loop` (unrolled, it was a 100-deep chain of branches that ran
    in host mode, 70 s to compile and slower than eager)."""

    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(8, 8)
        self.embed = nn.Embedding(4, 8)
        self.out = nn.Linear(8, 4)
        self.max_len = 100

    def forward(self, h):
        token = torch.zeros(h.shape[0], dtype=torch.long)
        steps = torch.zeros(h.shape[0])
        for _ in range(self.max_len):
            h = self.cell(self.embed(token), h)
            token = self.out(h).argmax(dim=1)
            steps = steps + token
            if token[0].item() == 1:
                break
        return h + steps.unsqueeze(1)


class LongLoopWritingInPlace(nn.Module):
    """A loop over a constant 80 steps whose body updates a tensor through a boolean mask in
    place (farthest point sampling's `distance[mask] = dist[mask]`): no `while_loop` can
    carry that, so the loop is unrolled, as it runs."""

    def forward(self, x):
        best = torch.full(x.shape, 10.0).to(x.device)
        for i in range(80):
            d = (x - i / 80.0).abs()
            mask = d < best
            best[mask] = d[mask]
        return best


class BatchFromARatioOfSizes(nn.Module):
    """Swin's `window_reverse` recovers the batch from the windows' count as
    `int(windows.shape[0] / (H * W / window_size / window_size))`: a ratio of sizes, rounded."""

    def forward(self, x):
        B, L, C = x.shape
        rows = x.reshape(-1, C)
        batch = int(rows.shape[0] / (L * C / C))
        return rows.view(batch, L, C).sum(1)


class BatchFromARatioOfPaddedSizes(nn.Module):
    """The same over a length padded to a multiple of 4 (Swin pads to whole windows): torch's
    check of its guards against the `Dim`s missed `batch == 2` in the unrewritten trace, and
    the output kept the example's batch on every call."""

    def forward(self, x):
        B, L, C = x.shape
        pad = (4 - L % 4) % 4
        x = nn.functional.pad(x, (0, 0, 0, pad))
        rows = x.reshape(-1, C)
        batch = int(rows.shape[0] / ((L + pad) * C / C))
        return rows.view(batch, L + pad, C).sum(1)


class WindowsOverAPaddedImage(nn.Module):
    """Swin's window attention as written: the feature map padded to whole 7x7 windows
    (`(7 - H % 7) % 7`), split into windows, attention within each, the windows put back with
    `window_reverse`'s `int()` of a ratio, and the padding cut. The windows' count divides
    by `Hp // 7`, a floor that floats made 0 at sizes like 4/7 + 3/7."""

    def __init__(self, dim=8, ws=7):
        super().__init__()
        self.ws = ws
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)

    def forward(self, x):
        x = x.permute(0, 2, 3, 1)
        B, H, W, C = x.shape
        ws = self.ws
        x = nn.functional.pad(x, (0, 0, 0, (ws - W % ws) % ws, 0, (ws - H % ws) % ws))
        _, Hp, Wp, _ = x.shape
        w = x.view(B, Hp // ws, ws, Wp // ws, ws, C).permute(0, 1, 3, 2, 4, 5).reshape(-1, ws * ws, C)
        q, k, v = self.qkv(w).chunk(3, dim=-1)
        w = self.proj(((q @ k.transpose(-2, -1)) * C ** -0.5).softmax(-1) @ v)
        batch = int(w.shape[0] / (Hp * Wp / ws / ws))
        x = w.view(batch, Hp // ws, Wp // ws, ws, ws, C).permute(0, 1, 3, 2, 4, 5)
        x = x.reshape(batch, Hp, Wp, C)[:, :H, :W, :]
        return x.permute(0, 3, 1, 2)



# Module-level tensors a forward reads (torch.export lifts them as constants).
_PROTOTYPES = torch.linspace(-1, 1, 5 * 8).reshape(5, 8)
_PICKED = torch.tensor([0, 3, 5])


class EinsumWithAConstant(nn.Module):
    def forward(self, x):
        return torch.einsum("nk,mk->nm", x, _PROTOTYPES).relu()


class ConstantsInTensorLists(nn.Module):
    def forward(self, x):
        rows = torch.cat([x, _PROTOTYPES])
        return rows[:, _PICKED].sum(0) + torch.stack([x[0], _PROTOTYPES[0]]).sum()


class MatmulByAVector(nn.Module):
    def __init__(self):
        super().__init__()
        self.score = nn.Parameter(torch.linspace(-1, 1, 16))

    def forward(self, x):
        weights = torch.softmax(x @ self.score, dim=-1)  # (batch, length)
        pooled = self.score @ x.transpose(1, 2)  # vector @ (batch, 16, length)
        return weights * pooled


class AttentionReturningWeights(nn.Module):
    """`nn.MultiheadAttention` with its default `need_weights=True`: the heads merged back by a
    view that regroups the batch (`[s, b*H, e/H] -> [s*b, e]`)."""

    def __init__(self):
        super().__init__()
        self.attention = nn.MultiheadAttention(16, 4, batch_first=True)

    def forward(self, x):
        out, weights = self.attention(x, x, x)
        return out + weights.sum(-1, keepdim=True)


class SplitsOfADynamicDim(nn.Module):
    def forward(self, x):
        n = x.shape[0]
        first, second = torch.split(x, [n // 2, n - n // 2])
        halves = torch.chunk(x, 2, dim=0)
        return first.sum(0) - second.sum(0) + halves[1].mean(0)


class OneHotOfAnArgmax(nn.Module):
    def forward(self, x):
        index = x.argmax(-1, keepdim=True)
        onehot = torch.zeros_like(x).scatter_(-1, index, 1.0)
        return onehot * x.gather(-1, index) + x.scatter(-1, index, x)


class CeilModePoolAfterExcitation(nn.Module):
    """A squeeze-and-excitation product, then a ceil-mode max pool (SqueezeNet, GoogLeNet)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 1)
        self.excite = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(8, 8, 1), nn.Sigmoid())

    def forward(self, x):
        y = torch.relu(self.conv(x))
        return nn.functional.max_pool2d(y * self.excite(y), 3, 2, ceil_mode=True)


class ReflectPadToAnEvenSize(nn.Module):
    def forward(self, x):
        h, w = x.shape[-2:]
        padded = nn.functional.pad(x, (0, (-w) % 2, 0, (-h) % 2), mode="reflect")
        return nn.functional.avg_pool2d(padded, 2)


class EncoderOverPaddedSequences(nn.Module):
    """`nn.TransformerEncoder` with a key padding mask: eager runs a left-aligned mask as a
    nested tensor (zeros at the padded positions, then the final norm), another one in full."""

    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(16))

    def forward(self, x):
        b, n = x.shape[:2]
        positions = torch.arange(n)[None, :]
        lengths = (n - 1 - torch.arange(b)).clamp(min=1)[:, None]
        at_the_end = positions >= lengths
        at_the_start = positions < (torch.arange(b) % 2)[:, None]
        return (self.encoder(x, src_key_padding_mask=at_the_end),
                self.encoder(x, src_key_padding_mask=at_the_start))

class SpatialTransformer(nn.Module):
    """A spatial transformer (Jaderberg et al. 2015): a sampling grid by `F.affine_grid` over
    the input's own (dynamic) size, both corner conventions."""

    def __init__(self):
        super().__init__()
        self.loc = nn.Sequential(nn.AdaptiveAvgPool2d(2), nn.Flatten(), nn.Linear(12, 6))

    def forward(self, x):
        theta = self.loc(x).view(-1, 2, 3) * 0.2 + torch.tensor([[1.0, 0, 0], [0, 1.0, 0]])
        outs = [F.grid_sample(x, F.affine_grid(theta, list(x.shape), align_corners=corners),
                              align_corners=corners) for corners in (False, True)]
        return outs[0] + outs[1]


class PerSampleKernels(nn.Module):
    """Dynamic convolution (CondConv, Yang et al. 2019): kernels mixed per sample, the batch
    folded into the groups (`groups=b`), 2-d and strided/dilated 1-d."""

    def __init__(self):
        super().__init__()
        self.route = nn.Linear(3, 2)
        self.experts = nn.Parameter(torch.randn(2, 4, 3, 3, 3) * 0.3)
        self.bias = nn.Parameter(torch.randn(4))

    def forward(self, x):
        b, c, h, w = x.shape
        mix = torch.sigmoid(self.route(x.mean((2, 3))))
        kernels = torch.einsum("be,eoikl->boikl", mix, self.experts)
        y = F.conv2d(x.reshape(1, b * c, h, w), kernels.reshape(b * 4, c, 3, 3),
                     self.bias.repeat(b), padding=1, groups=b).view(b, 4, h, w)
        rows = F.conv1d(x.mean(2).reshape(1, b * c, w), kernels[:, :, :, 1].reshape(b * 4, c, 3),
                        stride=2, dilation=2, padding=2, groups=b)
        return y, rows.view(b, 4, -1)


class TruthOfAGrownList(nn.Module):
    """`x if tokens else y` and `if not tokens:` of a list appended until a break on data (a
    greedy decoder that may stop before its first token)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        h, tokens = x, []
        for step in range(5):
            h = torch.tanh(self.lin(h))
            if (h.mean() + x.mean()) * (3 - step) < 0.2:
                break
            tokens.append(h.sum(0))
        decoded = torch.stack(tokens) if tokens else x.new_zeros(0, 8)
        if not tokens:
            return decoded, x * 2
        return decoded, x


class ColumnsGatheredInAnOrder(nn.Module):
    """Columns of a computed matrix gathered in an order read from the data (a step of a
    lexicographic sort of rows; a box's coordinates taken in score order): IREE folded the
    column into the gather as a strided load it could not compile (`dync-strided-views`)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 4)

    def forward(self, x):
        h = self.lin(x)
        order = h[:, 0].argsort()
        return (h[:, 1][order] * h[:, 2].index_select(0, order) + h[:, 3:4][order].squeeze(1)
                + h[:, ::2][order].sum(1) + h.sum())


class ColumnWrittenAtIndices(nn.Module):
    """Entries of a column of a computed tensor written at indices read from the data (a
    box's score zeroed after suppression): IREE folded the column into the scatter as a
    strided store it refused (`dync-strided-views`)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 6)

    def forward(self, x):
        z = self.lin(x).reshape(x.shape[0], 3, 2)
        z[..., 0][z[:, 0, 1].argsort()[:2]] = -1.0
        return z


class PositionsFromAnUnsavedBuffer(nn.Module):
    """Positions read from a buffer registered with `persistent=False` (BERT's
    `position_ids`), sliced to the input's length: torch.export keeps such buffers apart from
    the state dict, and the import failed."""

    def __init__(self):
        super().__init__()
        self.register_buffer("position_ids", torch.arange(64)[None], persistent=False)
        self.positions = nn.Embedding(64, 8)

    def forward(self, x):
        return x + self.positions(self.position_ids[:, : x.shape[0]])[0]


class MaskedSelectionViewedAsRows(nn.Module):
    """Rows picked by `masked_select` and viewed back as rows of a dynamic length with
    `.view(-1, n)`: the `-1` of a tensor whose length comes from the data reached IREE as a
    size (it refused the module)."""

    def forward(self, x):
        columns = x.transpose(1, 2)
        rows = columns.masked_select(columns[..., :1] > 0).view(-1, x.shape[1])
        return x + rows.sum(0)[None, :, None] + rows.shape[0]


class SkipConnectionPaddedOrCropped(nn.Module):
    """U-Net's `Up` (milesial/Pytorch-UNet): the upsampled map padded to the skip
    connection's size by `F.pad` of the size differences, which are negative (a crop) at odd
    sizes: the crop read off the end of a buffer (wrong values, or a run-time error)."""

    def __init__(self):
        super().__init__()
        self.down = nn.Conv2d(3, 4, 3, 2, 1)
        self.up = nn.ConvTranspose2d(4, 4, 2, 2)
        self.conv = nn.Conv2d(7, 2, 3, padding=1)

    def forward(self, x):
        up = self.up(self.down(x))
        dy, dx = x.size()[2] - up.size()[2], x.size()[3] - up.size()[3]
        up = F.pad(up, [dx // 2, dx - dx // 2, dy // 2, dy - dy // 2])
        return self.conv(torch.cat([x, up], dim=1))


class ViterbiBacktrace(nn.Module):
    """A CRF's Viterbi decoding (pytorch-crf, BiLSTM-CRF taggers): back-pointers appended in a
    loop over a dynamic length, then followed in `for hist in reversed(history)`. `reversed`
    of the bounded list read its Python items, of which it has none: the backtrace ran no
    step (a path of one tag, silently)."""

    def __init__(self):
        super().__init__()
        self.transitions = nn.Parameter(torch.randn(16, 16))

    def forward(self, emissions):
        score, history = emissions[:, 0], []
        for t in range(1, emissions.size(1)):
            score, index = (score.unsqueeze(2) + self.transitions
                            + emissions[:, t].unsqueeze(1)).max(dim=1)
            history.append(index)
        best = score.argmax(dim=1, keepdim=True)
        path = [best]
        for hist in reversed(history):
            best = hist.gather(1, best)
            path.append(best)
        path.reverse()
        return torch.cat(path, 1).float() + score.amax(1, keepdim=True)


class TensorsOfNumbersReadFromTheData(nn.Module):
    """`torch.as_tensor` and `x.new_tensor` of a list holding `.item()`s and sizes (statistics
    collected as Python numbers): torch.export could not build the tensor from them (the
    model ran in eager); `torch.tensor` of such a list was rewritten already."""

    def forward(self, x):
        stats = torch.as_tensor([x.mean().item(), x.std().item(), float(x.shape[0])])
        scale = x.new_tensor([x.abs().max().item(), 2.0])
        return (x - stats[0]) / stats[1] + stats[2] + scale.sum()


class EmbeddingWithAMaxNorm(nn.Module):
    """`nn.Embedding(..., max_norm=1.0)`: the rows read are rescaled in place in the weight
    first (`embedding_renorm_`, which IREE does not lower: the model ran in eager)."""

    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(20, 8, max_norm=1.0, padding_idx=0)

    def forward(self, x):
        ids = (x.abs() * 10).long() % 20
        return self.embedding(ids).sum(1) * x.sign()


class EarlyExitReturningTuples(nn.Module):
    """Early exits that return `(logits, features)` from inside a loop and a branch, one item
    shared by both returns (BranchyNet-style evaluation code)."""

    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Linear(8, 8) for _ in range(3))
        self.heads = nn.ModuleList(nn.Linear(8, 4) for _ in range(3))

    def forward(self, x):
        for i, (block, head) in enumerate(zip(self.blocks, self.heads, strict=True)):
            x = torch.tanh(block(x))
            logits = head(x)
            if (logits.mean() + x.mean()) * (1 - i) > 0.1:
                return logits, x
        if x.sum() > -8:
            return logits, x * 2
        return logits, x


VECTOR = ((4, 8), {0: ("batch", 2, 64)})
IMAGE = ((2, 3, 16, 16), {0: ("batch", 2, 16), 2: ("h", 8, 64), 3: ("w", 8, 64)})
BATCH_OF_IMAGES = ((2, 3, 16, 16), {0: ("batch", 2, 16)})
POINTS = ((2, 24, 3), {0: ("batch", 2, 16), 1: ("points", 4, 256)})
SEQUENCES = ((2, 6, 16), {0: ("batch", 2, 16), 1: ("length", 2, 32)})
SEQUENCES_FROM_ONE = ((2, 6, 16), {0: ("batch", 1, 16), 1: ("length", 2, 32)})
FEATURE_MAP = ((2, 8, 9, 11), {0: ("batch", 1, 8), 2: ("h", 8, 40), 3: ("w", 8, 40)})
LONG_SEQUENCES = ((2, 128, 128), {0: ("batch", 2, 8), 1: ("length", 8, 256)})

# name: (build, shape spec, captured in one graph)
CONSTRUCTS = {
    "helper recursion": (HelperRecursion, VECTOR, True),
    "helper branch": (HelperBranch, VECTOR, True),
    "forward replaced per instance": (replaced_forward, VECTOR, True),
    "len of a tensor": (LenOfBatch, VECTOR, True),
    "dead temporary of another shape": (DeadAfterBranch, VECTOR, True),
    "temporary of another shape in a while loop": (TemporaryInWhile, VECTOR, True),
    "while loop over an image of dynamic size": (WhileOverImage, IMAGE, True),
    "list left by break over an image of dynamic size": (ListLeftByBreakOverImage, IMAGE, True),
    "list left by break inside a branch": (ListLeftByBreakInBranch, VECTOR, True),
    "lists left by break after a strided convolution":
        (ListLeftByBreakAfterStridedConv, IMAGE, True),
    "list left by break after pooling": (ListLeftByBreakAfterPooling, IMAGE, True),
    "early return before pooling": (EarlyReturnBeforePooling, IMAGE, True),
    "while loop after branches of two sizes": (WhileAfterBranchesOfTwoSizes, IMAGE, True),
    "pooling after branches of two sizes": (PoolingAfterBranchesOfTwoSizes, IMAGE, True),
    "masked assignment after pooling in a branch":
        (MaskedAssignmentAfterPoolingInBranch, IMAGE, True),
    "lists left by break around an early return":
        (ListsLeftByBreakAroundAnEarlyReturn, IMAGE, True),
    "masked assignment in a branch": (MaskedAssignmentInBranch, VECTOR, True),
    "write into the model's input in a branch": (WriteIntoInputInBranch, VECTOR, True),
    "submodule writing into its caller's tensor": (SubmoduleWritesIntoItsArgument, VECTOR, False),
    "masked assignment selecting nothing": (MaskedAssignment, VECTOR, True),
    "subscript assignment in a branch": (SubscriptAssignmentInBranch, VECTOR, True),
    "subscript assignment in a loop over a dynamic size": (LoopOverBatch, VECTOR, True),
    "row picked by a 0-d tensor index": (RoutedRow, VECTOR, True),
    "two top-k routings over a dynamic batch": (TwoRoutings, VECTOR, True),
    "two top-k of one shape in a branch": (SortsInBranch, VECTOR, True),
    "stable sort, argsort and msort": (StableSorts, VECTOR, True),
    "fresh tensors of one shape written in place": (FreshTensorsWrittenInPlace, VECTOR, True),
    "write through an alias in a branch": (AliasedWriteInBranch, VECTOR, False),
    "write into a tensor another name holds": (AliasOfAFreshTensor, VECTOR, False),
    "tensor literal in a branch": (LiteralInBranch, VECTOR, True),
    "pooling in one branch": (PoolInBranch, IMAGE, True),
    "strided convolution in one branch": (StridedConvInBranch, IMAGE, True),
    "convolution then a padded max pool over a dynamic batch":
        (StemWithPaddedPool, BATCH_OF_IMAGES, True),
    "convolution then an explicit zero pad over a dynamic batch":
        (ExplicitPadAfterConv, BATCH_OF_IMAGES, True),
    "global pools over a dynamic batch": (SpatialReductionsOverBatch, BATCH_OF_IMAGES, True),
    "padding and resampling over an image of dynamic size": (ResamplingOverImage, IMAGE, True),
    "depthwise convolutions over a dynamic batch": (DepthwiseBlock, BATCH_OF_IMAGES, True),
    "depthwise convolutions over an image of dynamic size": (DepthwiseBlock, IMAGE, True),
    "early return from a loop growing a sequence": (GreedyEarlyReturn, VECTOR, True),
    "sequence grown from the input until a break": (GrowFromInput, VECTOR, True),
    "masked selection and nonzero in a branch": (MaskedSelectionInBranch, VECTOR, True),
    "early return from a nested branch": (EarlyReturnInNestedBranch, VECTOR, True),
    "routing by nonzero(as_tuple=True)": (RoutingByTupleNonzero, VECTOR, True),
    "a variable of another rank on the path that does not break":
        (RankChangeAfterBreak, VECTOR, True),
    "recurrent layers over a static number of steps": (RecurrentOverStaticLength, VECTOR, True),
    "adaptive computation time over a dynamic batch": (AdaptiveComputation, VECTOR, True),
    "for x in xs over the rows of a dynamic length": (LoopOverRows, VECTOR, True),
    "for x_t in x.unbind(1) over a dynamic length": (UnbindSteps, SEQUENCES, True),
    "for t, x_t in enumerate(torch.unbind(x, dim=1))": (EnumeratedSteps, SEQUENCES, True),
    "for i, row in enumerate(xs) over a dynamic batch": (EnumeratedRows, VECTOR, True),
    "a ponder loop on data in each step of a dynamic length": (PonderOverSteps, SEQUENCES, True),
    "a subclass of nn.LSTM over a static number of steps":
        (SubclassedLSTMOverStaticLength, VECTOR, True),
    "an LSTM with proj_size over a dynamic length": (ProjectedLSTMOverDynamicLength, VECTOR, True),
    "stacked bidirectional LSTM over a dynamic length":
        (StackedRecurrentOverDynamicLength, VECTOR, True),
    ".data in forward": (DataAttribute, VECTOR, True),
    "boolean mask from ones_like written through a slice": (CollapseRepeats, VECTOR, True),
    "point-wise Conv1d over a dynamic number of points": (PointwiseConv1dOverPoints, POINTS, True),
    "farthest point sampling": (FarthestPointSampling, POINTS, True),
    "ball query": (BallQuery, POINTS, True),
    "edge features of k nearest neighbours (DGCNN)": (EdgeFeatures, POINTS, True),
    "masked update of values computed from the same mask":
        (MaskedUpdateOfComputedValues, VECTOR, True),
    "attention over a dynamic batch and length": (AttentionOverBatchAndLength, SEQUENCES, True),
    "Python max of a dynamic size as top-k's k": (HalfTheTokensByTopK, SEQUENCES, True),
    "branch on a dynamic size": (BranchOnADynamicSize, SEQUENCES, True),
    "int() of a dynamic size": (IntOfASize, VECTOR, True),
    "x[:, t:t + 1] in a loop over a dynamic length": (StepSlicesOverALength, SEQUENCES, True),
    "while on a norm and a Python counter": (RefineWhileNormAndCounter, VECTOR, True),
    "a parameter or buffer chosen as it is by a data branch":
        (ParametersChosenByABranch, VECTOR, True),
    "early exit on a torch.distributions entropy": (EntropyExitThroughDistributions, VECTOR, True),
    "a size read from the data (int(batch.max()) + 1) for new_zeros, zeros, one_hot":
        (PoolBySegmentsCountedFromData, VECTOR, True),
    "float arithmetic on a dynamic size (float(), math.sqrt, torch.full, int())":
        (FloatArithmeticOnSizes, SEQUENCES, True),
    "greedy NMS over the rows a mask kept": (GreedyNonMaximumSuppression, VECTOR, True),
    "padding to a multiple computed with % of a size": (PadToAMultipleOfASize, SEQUENCES, True),
    "windows of a padded sequence cropped back": (WindowsOfAPaddedSequenceCroppedBack, SEQUENCES,
                                                  True),
    # matmul's decomposition guards `batch * windows != 1`, which fails at a batch of one
    # window: the guard chose between views and copies, no values (eager before).
    "windows of a padded sequence cropped back, from a batch of one":
        (WindowsOfAPaddedSequenceCroppedBack, SEQUENCES_FROM_ONE, True),
    "an encoder-decoder cropped to the input": (EncoderDecoderCroppedToTheInput, IMAGE, True),
    "chunks of a padded sequence merged with the batch":
        (ChunksOfAPaddedSequenceOverTheBatch, SEQUENCES, True),
    "windows of a padded image merged with the batch":
        (WindowsOfAPaddedImageOverTheBatch, FEATURE_MAP, True),
    "window round trip made contiguous": (WindowRoundTripMadeContiguous, FEATURE_MAP, True),
    "a shift in place": (ShiftInPlace, SEQUENCES, True),
    "attention over long sequences of a dynamic batch":
        (AttentionOverLongSequences, LONG_SEQUENCES, True),
    "data-dependent branch in a module-level helper": (BranchInAHelperFunction, VECTOR, True),
    "greedy decoder over a constant 100 steps with break":
        (GreedyDecoderOverAConstantRange, VECTOR, True),
    "long constant loop writing through a mask in place": (LongLoopWritingInPlace, VECTOR, True),
    "int() of a ratio of sizes (Swin's window_reverse)": (BatchFromARatioOfSizes, SEQUENCES, True),
    "int() of a ratio of padded sizes": (BatchFromARatioOfPaddedSizes, SEQUENCES, True),
    "window attention over a padded image (Swin)": (WindowsOverAPaddedImage, FEATURE_MAP, True),
    "einsum with a module-level constant operand": (EinsumWithAConstant, VECTOR, True),
    "nn.TransformerEncoder over padded sequences (key padding masks)":
        (EncoderOverPaddedSequences, SEQUENCES, True),
    "reflect padding to an even size computed from the size": (ReflectPadToAnEvenSize, IMAGE, True),
    "ceil-mode max pool after squeeze-and-excitation": (CeilModePoolAfterExcitation, IMAGE, True),
    "one-hot of an argmax by a scatter over dim -1": (OneHotOfAnArgmax, VECTOR, True),
    "torch.split by sizes and torch.chunk over a dynamic dim":
        (SplitsOfADynamicDim, VECTOR, True),
    "nn.MultiheadAttention returning its weights, dynamic batch and length":
        (AttentionReturningWeights, SEQUENCES, True),
    "module-level constants in tensor lists (cat, index, stack)":
        (ConstantsInTensorLists, VECTOR, True),
    "matmul of a batch of sequences by a vector, both sides": (MatmulByAVector, SEQUENCES, True),
    "affine_grid and grid_sample over an image of dynamic size (spatial transformer)":
        (SpatialTransformer, IMAGE, True),
    "per-sample kernels: the batch folded into a convolution's groups (CondConv)":
        (PerSampleKernels, IMAGE, True),
    "truth of a list appended until a break on data": (TruthOfAGrownList, VECTOR, True),
    "early exits returning tuples from a loop and a branch":
        (EarlyExitReturningTuples, VECTOR, True),
    "columns of a computed matrix gathered in an order read from the data":
        (ColumnsGatheredInAnOrder, VECTOR, True),
    "entries of a column written at indices read from the data":
        (ColumnWrittenAtIndices, VECTOR, True),
    "positions from a buffer registered with persistent=False":
        (PositionsFromAnUnsavedBuffer, VECTOR, True),
    "rows picked by masked_select viewed as (-1, n)": (MaskedSelectionViewedAsRows, SEQUENCES, True),
    "a skip connection padded or cropped by size differences (U-Net)":
        (SkipConnectionPaddedOrCropped, IMAGE, True),
    "Viterbi backtrace over reversed() of a list grown over a dynamic length":
        (ViterbiBacktrace, SEQUENCES, True),
    "torch.as_tensor and new_tensor of .item()s and sizes":
        (TensorsOfNumbersReadFromTheData, VECTOR, True),
    "nn.Embedding with max_norm": (EmbeddingWithAMaxNorm, VECTOR, True),
}


def _compile(name: str):
    import dync

    build, (shape, dims), _ = CONSTRUCTS[name]
    torch.manual_seed(0)
    model = build().eval()
    spec = {axis: Dim(n, min=lo, max=hi) for axis, (n, lo, hi) in dims.items()}
    compiled = dync.compile(model, (torch.randn(*shape),), dynamic_shapes=(spec,),
                            cache=False)
    return model, compiled, (shape, dims)


def _sizes(shape, dims) -> list[tuple[int, ...]]:
    """Batches of 2 and 5 at the example's other dims, then every dynamic dim at its least,
    at its greatest, and at an odd size between (a wrong answer seen only past the example's
    sizes: lists left by break around an early return, wrong from H or W = 33 on)."""
    def at(pick) -> tuple[int, ...]:
        return tuple(pick(*dims[a][1:]) if a in dims else d for a, d in enumerate(shape))

    return [(2, *shape[1:]), (5, *shape[1:]), at(lambda lo, hi: lo), at(lambda lo, hi: hi),
            at(lambda lo, hi: (lo + hi) // 2 | 1 if (lo + hi) // 2 | 1 <= hi else lo)]


def _check(model, compiled, shape_and_dims) -> None:
    torch.manual_seed(1)
    signs = set()
    for size in _sizes(*shape_and_dims):
        for sign in (1.0, -1.0):
            x = sign * (torch.rand(*size) + 0.1)
            signs.add(bool(x.mean() > 0))
            with torch.no_grad():
                want = model(x.clone())  # a model may write into its input
            torch.testing.assert_close(compiled(x.clone()), want, rtol=1e-4, atol=1e-5)
    assert signs == {True, False}


@pytest.mark.parametrize("name", sorted(CONSTRUCTS))
def test_correct_under_the_defaults(name):
    """Right on every path under the defaults, and a construct marked captured compiled into
    one graph (mode 'auto' takes the graph when it compiles and its first call is right, the
    module mode='graph' would give)."""
    model, compiled, shape = _compile(name)
    _check(model, compiled, shape)
    captured = CONSTRUCTS[name][2]
    assert (compiled.report.mode == "in-graph") == captured, compiled.report.explain()

