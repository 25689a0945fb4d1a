"""Child-Sum Tree-LSTM (Tai et al., ACL 2015; treelstm.pytorch's `ChildSumTreeLSTM`) for
sentiment classification of a parse tree. The tree comes as tensors: `parent` (N,) int64 with
parent[0] == -1 for the root and parent[i] < i otherwise, and node features `x` (N, D). The
forward recurses over the children in Python, so the computation follows the tree's shape."""

import torch
import torch.nn.functional as F
from torch import nn
from torch.export import Dim

from . import _common

NAME = "tree_lstm"
DESCRIPTION = (
    "Child-Sum Tree-LSTM over a tree given as a parent-index tensor + node features (dynamic "
    "node count); Python recursion over each node's children, found with nonzero()"
)
IN_DIM, MEM_DIM = 16, 32
MAX_NODES = 32
NUM_CLASSES = 5


class ChildSumTreeLSTM(nn.Module):
    def __init__(self, in_dim=IN_DIM, mem_dim=MEM_DIM, num_classes=NUM_CLASSES):
        super().__init__()
        self.mem_dim = mem_dim
        self.ioux = nn.Linear(in_dim, 3 * mem_dim)
        self.iouh = nn.Linear(mem_dim, 3 * mem_dim)
        self.fx = nn.Linear(in_dim, mem_dim)
        self.fh = nn.Linear(mem_dim, mem_dim)
        self.classifier = nn.Linear(mem_dim, num_classes)

    def node_forward(self, inputs, child_c, child_h):
        child_h_sum = torch.sum(child_h, dim=0, keepdim=True)
        iou = self.ioux(inputs) + self.iouh(child_h_sum)
        i, o, u = torch.split(iou, iou.size(1) // 3, dim=1)
        i, o, u = torch.sigmoid(i), torch.sigmoid(o), torch.tanh(u)
        f = torch.sigmoid(self.fh(child_h) + self.fx(inputs).repeat(len(child_h), 1))
        fc = torch.mul(f, child_c)
        c = torch.mul(i, u) + torch.sum(fc, dim=0, keepdim=True)
        h = torch.mul(o, torch.tanh(c))
        return c, h

    def tree_forward(self, node, parent, x):
        children = (parent == node).nonzero().flatten().tolist()
        if len(children) == 0:
            child_c = x.new_zeros(1, self.mem_dim)
            child_h = x.new_zeros(1, self.mem_dim)
        else:
            states = [self.tree_forward(child, parent, x) for child in children]
            child_c = torch.cat([c for c, _ in states], dim=0)
            child_h = torch.cat([h for _, h in states], dim=0)
        return self.node_forward(x[node : node + 1], child_c, child_h)

    def forward(self, parent, x):
        root = int((parent < 0).nonzero()[0, 0])
        _, h = self.tree_forward(root, parent, x)
        return F.log_softmax(self.classifier(h), dim=1)


def build():
    torch.manual_seed(0)
    model = ChildSumTreeLSTM().eval()
    _common.center_classifier(model, model.classifier, inputs(64, seed=1234))
    nodes = Dim("nodes", min=2, max=MAX_NODES)
    parent = torch.tensor([-1, 0, 0, 1, 1, 2])
    return model, (parent, torch.randn(6, IN_DIM)), ({0: nodes}, {0: nodes})


def random_parents(gen, n) -> torch.Tensor:
    """A random tree on n nodes (node 0 the root, parent[i] < i): mostly binary-ish parse-like
    trees, sometimes a chain or a star."""
    kind = torch.rand((), generator=gen).item()
    parent = [-1]
    for i in range(1, n):
        if kind < 0.1:
            parent.append(i - 1)  # chain
        elif kind < 0.2:
            parent.append(0)  # star
        else:
            parent.append(int(torch.randint(max(0, i - 4), i, (), generator=gen)))
    return torch.tensor(parent, dtype=torch.int64)


def inputs(count: int = 100, seed: int = 0) -> list[tuple]:
    gen = _common.generator(seed)
    out = []
    for _ in range(count):
        n = int(torch.randint(2, MAX_NODES + 1, (), generator=gen))
        out.append((random_parents(gen, n), torch.randn(n, IN_DIM, generator=gen)))
    return out


decision = _common.argmax_decision


def path(model, parent, x) -> tuple:
    """The number of children of every node, in the order the recursion visits them (the same
    `nonzero` the forward evaluates): it determines the recursion's whole control flow."""
    counts = []

    def visit(node):
        children = (parent == node).nonzero().flatten().tolist()
        counts.append(len(children))
        for child in children:
            visit(child)

    visit(int((parent < 0).nonzero()[0, 0]))
    return tuple(counts)
