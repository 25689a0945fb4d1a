"""Sparse mixture-of-experts layer with top-2 routing (Shazeer et al. 2017; the Mixtral / Hugging
Face `MixtralSparseMoeBlock` style): a router picks 2 experts per token, each expert runs on just
the tokens routed to it (skipped when none is), and the outputs are combined with the
renormalized router weights."""

import torch
import torch.nn.functional as F
from torch import nn
from torch.export import Dim

from . import _common

NAME = "moe"
DESCRIPTION = (
    "Top-2 mixture of 8 expert MLPs over a variable number of tokens (dynamic token dim): "
    "per-expert dispatch of the routed tokens, `continue` when an expert gets none"
)
HIDDEN = 32
NUM_EXPERTS = 8
MAX_TOKENS = 64
NUM_LABELS = 6


class Expert(nn.Module):
    def __init__(self, hidden, ffn):
        super().__init__()
        self.w1 = nn.Linear(hidden, ffn)
        self.w2 = nn.Linear(ffn, hidden)

    def forward(self, x):
        return self.w2(F.gelu(self.w1(x)))


class SparseMoE(nn.Module):
    def __init__(self, hidden=HIDDEN, ffn=64, num_experts=NUM_EXPERTS, top_k=2):
        super().__init__()
        self.top_k = top_k
        self.gate = nn.Linear(hidden, num_experts, bias=True)
        self.experts = nn.ModuleList(Expert(hidden, ffn) for _ in range(num_experts))

    def forward(self, x):
        routing = F.softmax(self.gate(x), dim=-1)
        topk_w, topk_idx = torch.topk(routing, self.top_k, dim=-1)
        topk_w = topk_w / topk_w.sum(dim=-1, keepdim=True)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            token_idx, slot = torch.where(topk_idx == e)
            if token_idx.numel() == 0:
                continue
            y = expert(x[token_idx]) * topk_w[token_idx, slot].unsqueeze(-1)
            out.index_add_(0, token_idx, y)
        return out


class MoEClassifier(nn.Module):
    """Token classifier: embedding projection, one pre-norm MoE block, per-token linear head."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(HIDDEN, HIDDEN)
        self.norm = nn.LayerNorm(HIDDEN)
        self.moe = SparseMoE()
        self.head = nn.Linear(HIDDEN, NUM_LABELS)

    def forward(self, tokens):
        x = self.proj(tokens)
        x = x + self.moe(self.norm(x))
        return self.head(x)


def build():
    torch.manual_seed(0)
    model = MoEClassifier().eval()
    calibration = inputs(64, seed=1234)
    with torch.no_grad(), _common.recording(model.moe.gate) as calls:
        for args in calibration:
            model(*args)
        model.moe.gate.bias -= torch.cat([z for _, z in calls]).mean(0)  # balance the experts
    _common.center_classifier(model, model.head, calibration)
    tokens = Dim("tokens", min=2, max=MAX_TOKENS)
    return model, (torch.randn(6, HIDDEN),), ({0: tokens},)


def inputs(count: int = 100, seed: int = 0) -> list[tuple]:
    """2..64 tokens; each sequence has its own random offset, so routing differs between them."""
    gen = _common.generator(seed)
    out = []
    for _ in range(count):
        n = int(torch.randint(2, MAX_TOKENS + 1, (), generator=gen))
        offset = torch.randn(1, HIDDEN, generator=gen)
        out.append((offset + torch.randn(n, HIDDEN, generator=gen),))
    return out


def decision(output):
    return tuple(output.argmax(dim=-1).tolist())


def path(model, *args) -> tuple:
    """One bool per expert: whether it ran (some token was routed to it)."""
    with torch.no_grad(), _common.recording(model.moe.gate) as calls:
        model(*args)
    ((_, logits),) = calls
    topk_idx = torch.topk(F.softmax(logits, dim=-1), model.moe.top_k, dim=-1).indices
    return tuple(bool((topk_idx == e).any()) for e in range(len(model.moe.experts)))
