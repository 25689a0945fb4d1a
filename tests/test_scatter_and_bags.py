"""Scatter reductions, `nn.EmbeddingBag` and `torch.cdist` in one graph over dynamic sizes
(`frontends/pytorch/decompositions.py`), against eager: message passing's row scatter at 64
features, `include_self=False`, empty bags, the padding index, a point's distance to itself."""

import pytest
import torch
from torch import nn
from torch.export import Dim

import dync

NODES, EDGES = Dim("nodes", min=2, max=100_000), Dim("edges", min=1, max=1_000_000)


class MessagePassing(nn.Module):
    """A GCN layer as PyG writes it out: degrees by a scatter-add (or `index_add_`) of ones,
    messages gathered along the edges, summed (and averaged) into their targets by
    `index.expand_as(src)`; a max scatter (a dynamic size of them failed to compile in IREE
    at any width)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(16, 64)

    def forward(self, x, edge_index):
        row, col = edge_index
        deg = torch.zeros(x.shape[0]).scatter_add_(0, col, torch.ones(col.shape[0])) + 1
        h = self.lin(x)
        msg = h[row] * deg.pow(-0.5)[row].unsqueeze(-1)
        index = col.unsqueeze(-1).expand_as(msg)
        summed = torch.zeros_like(h).scatter_add_(0, index, msg)
        mean = h.scatter_reduce(0, index, msg, "mean", include_self=True)
        only = h.scatter_reduce(0, index, msg, "mean", include_self=False)
        # a graph attention layer's softmax over each node's incoming edges (PyG's `softmax`)
        score = msg[:, :4]
        peak = torch.full((x.shape[0], 4), float("-inf")).scatter_reduce(
            0, col.unsqueeze(-1).expand_as(score), score, "amax", include_self=False)
        weight = (score - peak[col]).exp()
        total = torch.zeros(x.shape[0], 4).index_add(0, col, weight)
        low = x[:, 0].scatter_reduce(0, col, x[row, 0], "amin", include_self=True)
        # the degrees as an `index_add_` of ones (IREE held the ones on the stack: 4 MB)
        counted = torch.zeros(x.shape[0]).index_add_(0, row, torch.ones(row.shape[0]))
        return summed, mean, only, peak, weight / total[col], low, counted


def _graph(nodes: int, edges: int, seed: int):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(nodes, 16, generator=gen), torch.randint(0, nodes, (2, edges), generator=gen)


def test_message_passing_scatters_rows():
    """Nodes no edge reaches keep `x` (include_self=False) or their own row; an edge to a
    node out of range raises, as eager's scatter does."""
    model = MessagePassing().eval()
    compiled = dync.compile(model, _graph(20, 60, 0), dynamic_shapes=({0: NODES}, {1: EDGES}),
                            mode="graph", cache=False)
    with torch.no_grad():
        for nodes, edges, seed in ((50, 200, 1), (300, 90, 2), (3, 1, 3)):
            args = _graph(nodes, edges, seed)
            for got, want in zip(compiled(*args), model(*args), strict=True):
                torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
        for bad in (-1, 50):
            x, edges = _graph(50, 200, 4)
            edges[1, 7] = bad
            with pytest.raises(RuntimeError):
                model(x, edges)
            with pytest.raises(dync.IndexOutOfRangeError):
                compiled(x, edges)


class TextClassifier(nn.Module):
    """torchtext's text classification tutorial model, and EmbeddingBag's other forms."""

    def __init__(self):
        super().__init__()
        self.mean = nn.EmbeddingBag(500, 32, mode="mean")
        self.sum = nn.EmbeddingBag(500, 32, mode="sum", padding_idx=0)
        self.max = nn.EmbeddingBag(500, 32, mode="max")
        self.fc = nn.Linear(32, 4)

    def forward(self, text, offsets, weights):
        last = torch.cat([offsets, torch.full((1,), text.shape[0])])
        return (self.fc(self.mean(text, offsets)), self.sum(text, offsets, per_sample_weights=weights),
                self.mean(text, last[:-1]), nn.functional.embedding_bag(
                    text, self.sum.weight, last, mode="mean", include_last_offset=True,
                    padding_idx=0), self.max(text, offsets))


def test_embedding_bags_with_empty_bags_and_padding():
    model = TextClassifier().eval()
    gen = torch.Generator().manual_seed(0)

    def inputs(n, offsets):
        text = torch.randint(0, 500, (n,), generator=gen)
        text[::5] = 0  # the padding index
        return text, torch.tensor(offsets), torch.rand(n, generator=gen)

    tokens, bags = Dim("tokens", min=2, max=1_000_000), Dim("bags", min=1, max=100_000)
    compiled = dync.compile(model, inputs(40, [0, 7, 20, 31]),
                            dynamic_shapes=({0: tokens}, {0: bags}, {0: tokens}), mode="graph",
                            cache=False)
    with torch.no_grad():
        for n, offsets in [(100, [0, 1, 50, 50, 99]), (5, [0]), (9, [0, 9])]:  # empty bags
            args = inputs(n, offsets)
            for got, want in zip(compiled(*args), model(*args), strict=True):
                torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)


class Distances(nn.Module):
    def forward(self, a, b):
        return torch.cdist(a, b), torch.cdist(a, a), torch.cdist(a, b, p=1), torch.cdist(
            a, b, p=float("inf"))


def test_cdist_over_dynamic_sets():
    model = Distances()
    n, k = Dim("n", min=2, max=4096), Dim("k", min=2, max=4096)
    compiled = dync.compile(model, (torch.randn(2, 7, 3), torch.randn(2, 5, 3)),
                            dynamic_shapes=({1: n}, {1: k}), mode="graph", cache=False)
    for a, b in [(torch.randn(2, 9, 3), torch.randn(2, 4, 3)), (torch.randn(2, 20, 3), torch.randn(2, 11, 3))]:
        got, want = compiled(a, b), model(a, b)
        for g, w in zip(got, want, strict=True):
            torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-5)
        assert torch.equal(torch.diagonal(got[1], dim1=1, dim2=2), torch.zeros(2, a.shape[1]))


class OneHots(nn.Module):
    """Scatters of one element per row: the one-hot of an argmax along the last dim (a value),
    a row scattered along dim 0 at the argmax over it (a source), both in range by
    construction; and one at an index the caller gives (its range unknown)."""

    def forward(self, x, labels):
        one_hot = torch.zeros_like(x).scatter_(-1, x.argmax(-1, keepdim=True), 1.0)
        rows = x.clone().scatter_(0, x.argmax(0, keepdim=True), x[:1] * 10)
        given = torch.zeros_like(x).scatter(1, labels, 2.5)
        return one_hot * x.amax(-1, keepdim=True), rows, given


def test_scatters_of_one_element_per_row_match_eager_and_check_what_they_must():
    """`dync-scatter-as-select` turns the two in-range scatters into selects (fewer IREE
    dispatches than without the pass), the given-index one stays a checked scatter: every
    result equals eager at several sizes, and an index out of range raises as eager does."""
    model = OneHots()
    b, n = Dim("b", min=1, max=16), Dim("n", min=2, max=64)
    example = (torch.randn(3, 5), torch.tensor([[0], [4], [2]]))
    shapes = ({0: b, 1: n}, {0: b})
    compiled = dync.compile(model, example, dynamic_shapes=shapes, mode="graph")
    without = dync.compile(model, example, dynamic_shapes=shapes, mode="graph", passes=[
        p for p in dync.passes.DEFAULT_PIPELINE if p != "dync-scatter-as-select"])
    assert compiled.report.dispatches < without.report.dispatches
    for rows, cols in ((1, 2), (3, 5), (16, 64), (7, 33)):
        x = torch.randn(rows, cols)
        labels = torch.randint(0, cols, (rows, 1))
        for got, want in zip(compiled(x, labels), model(x, labels), strict=True):
            torch.testing.assert_close(got, want, rtol=0, atol=0)
    with pytest.raises(dync.IndexOutOfRangeError):
        compiled(torch.randn(3, 5), torch.tensor([[0], [5], [1]]))
