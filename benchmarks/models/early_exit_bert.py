"""DeeBERT (Xin et al., ACL 2020), the DeeBERT repository's `DeeBertEncoder` at inference: a BERT
encoder with an off-ramp classifier (pooler + linear, "highway") after every layer; the first
off-ramp whose prediction entropy falls below a threshold ends the forward pass early."""

import math

import torch
import torch.nn.functional as F
from torch import nn
from torch.export import Dim

from . import _common

NAME = "early_exit_bert"
DESCRIPTION = (
    "DeeBERT: 4-layer BERT encoder over a variable-length token sequence (dynamic seq dim) with "
    "an off-ramp after each layer; returns at the first off-ramp with entropy < threshold"
)
VOCAB = 100
CLS = 1
MAX_LEN = 64
NUM_LABELS = 3


class BertSelfAttention(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)

    def split_heads(self, x):
        return x.view(x.size(0), x.size(1), self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x):
        q, k, v = (
            self.split_heads(self.query(x)),
            self.split_heads(self.key(x)),
            self.split_heads(self.value(x)),
        )
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        context = torch.matmul(F.softmax(scores, dim=-1), v)
        return context.transpose(1, 2).reshape(x.shape)


class BertLayer(nn.Module):
    def __init__(self, hidden, heads, intermediate):
        super().__init__()
        self.attention = BertSelfAttention(hidden, heads)
        self.attn_out = nn.Linear(hidden, hidden)
        self.attn_norm = nn.LayerNorm(hidden)
        self.intermediate = nn.Linear(hidden, intermediate)
        self.output = nn.Linear(intermediate, hidden)
        self.out_norm = nn.LayerNorm(hidden)

    def forward(self, x):
        x = self.attn_norm(x + self.attn_out(self.attention(x)))
        return self.out_norm(x + self.output(F.gelu(self.intermediate(x))))


class Highway(nn.Module):
    """DeeBERT's off-ramp: BERT pooler (first token, linear, tanh) and a linear classifier."""

    def __init__(self, hidden, num_labels):
        super().__init__()
        self.pooler = nn.Linear(hidden, hidden)
        self.classifier = nn.Linear(hidden, num_labels)

    def forward(self, x):
        return self.classifier(torch.tanh(self.pooler(x[:, 0])))


def entropy(logits):
    """DeeBERT's entropy of softmax(logits), per row."""
    exp_x = torch.exp(logits)
    a = exp_x.sum(dim=1)
    b = (logits * exp_x).sum(dim=1)
    return torch.log(a) - b / a


class DeeBert(nn.Module):
    def __init__(self, hidden=64, heads=4, intermediate=128, layers=4, early_exit_entropy=0.3):
        super().__init__()
        self.early_exit_entropy = early_exit_entropy
        self.word_embeddings = nn.Embedding(VOCAB, hidden)
        self.position_embeddings = nn.Embedding(MAX_LEN, hidden)
        self.embed_norm = nn.LayerNorm(hidden)
        self.layers = nn.ModuleList(BertLayer(hidden, heads, intermediate) for _ in range(layers))
        self.highways = nn.ModuleList(Highway(hidden, NUM_LABELS) for _ in range(layers - 1))
        self.final = Highway(hidden, NUM_LABELS)

    def forward(self, input_ids):
        positions = torch.arange(input_ids.size(1), device=input_ids.device).unsqueeze(0)
        x = self.embed_norm(self.word_embeddings(input_ids) + self.position_embeddings(positions))
        for layer, highway in zip(self.layers, self.highways):
            x = layer(x)
            logits = highway(x)
            if entropy(logits) < self.early_exit_entropy:
                return logits
        x = self.layers[-1](x)
        return self.final(x)


def build():
    torch.manual_seed(0)
    model = DeeBert().eval()
    _calibrate(model, inputs(64, seed=1234))
    seq = Dim("seq", min=2, max=MAX_LEN)
    example = torch.cat([torch.tensor([[CLS]]), torch.randint(2, VOCAB, (1, 9))], dim=1)
    return model, (example,), ({1: seq},)


def inputs(count: int = 100, seed: int = 0) -> list[tuple]:
    """[CLS] + 1..63 tokens, each sentence drawn from its own random sub-vocabulary."""
    gen = _common.generator(seed)
    out = []
    for _ in range(count):
        length = int(torch.randint(2, MAX_LEN + 1, (), generator=gen))
        topic = torch.randperm(VOCAB - 2, generator=gen)[:12] + 2
        words = topic[torch.randint(0, len(topic), (1, length - 1), generator=gen)]
        out.append((torch.cat([torch.tensor([[CLS]]), words], dim=1),))
    return out


decision = _common.argmax_decision


def path(model, *args) -> tuple:
    """One bool per off-ramp test evaluated: True where the model returned."""
    with torch.no_grad(), _common.recording(*model.highways) as calls:
        model(*args)
    return tuple(bool(entropy(logits) < model.early_exit_entropy) for _, logits in calls)


@torch.no_grad()
def _calibrate(model, calibration):
    threshold, model.early_exit_entropy = model.early_exit_entropy, -1.0  # never exit
    logits = [[] for _ in model.highways]
    with _common.recording(*model.highways) as calls, _common.recording(model.final) as final:
        for args in calibration:
            model(*args)
    for i, out in calls:
        logits[i].append(out)
    model.early_exit_entropy = threshold
    model.final.classifier.bias -= torch.cat([z for _, z in final]).mean(0)
    _common.calibrate_exits(
        [h.classifier for h in model.highways],
        [torch.cat(z) for z in logits],
        # the same entropy, in a form that does not overflow while the scale is searched
        lambda z: -(F.softmax(z, dim=1) * F.log_softmax(z, dim=1)).sum(1) < threshold,
        (0.3, 0.35, 0.4),
    )
