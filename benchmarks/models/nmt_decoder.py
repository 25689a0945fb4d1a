"""Attention-based neural machine translation (Bahdanau et al. 2015 / Luong et al. 2015; the
PyTorch "seq2seq translation" tutorial's `evaluate`): a GRU encodes a variable-length source
sentence, a GRU decoder with attention over the encoder states decodes greedily until it emits
EOS or reaches a length bound that grows with the source length."""

import torch
import torch.nn.functional as F
from torch import nn
from torch.export import Dim

from . import _common

NAME = "nmt_decoder"
DESCRIPTION = (
    "Attention NMT: GRU encoder over a variable-length source (dynamic seq dim), GRUCell decoder "
    "with additive attention, greedy Python loop until EOS or 4 + src_len tokens"
)
SRC_VOCAB, TGT_VOCAB = 32, 28
BOS, EOS = 1, 2
MAX_SRC = 24


class Seq2Seq(nn.Module):
    def __init__(self, embed=24, hidden=48, max_len_a=1, max_len_b=4):
        super().__init__()
        self.max_len_a, self.max_len_b = max_len_a, max_len_b
        self.src_embed = nn.Embedding(SRC_VOCAB, embed)
        self.encoder = nn.GRU(embed, hidden, batch_first=True)
        self.tgt_embed = nn.Embedding(TGT_VOCAB, embed)
        # additive (Bahdanau) attention: v^T tanh(W_q q + W_k k)
        self.attn_query = nn.Linear(hidden, hidden, bias=False)
        self.attn_key = nn.Linear(hidden, hidden)
        self.attn_v = nn.Linear(hidden, 1, bias=False)
        self.decoder = nn.GRUCell(embed + hidden, hidden)
        self.out = nn.Linear(2 * hidden, TGT_VOCAB)

    def forward(self, src):
        enc, hidden = self.encoder(self.src_embed(src))  # (1, S, H), (1, 1, H)
        hidden = hidden[0]
        keys = self.attn_key(enc)
        token = torch.full((src.size(0),), BOS, dtype=torch.long, device=src.device)
        max_len = self.max_len_a * src.size(1) + self.max_len_b
        decoded = []
        for _ in range(max_len):
            scores = self.attn_v(torch.tanh(self.attn_query(hidden).unsqueeze(1) + keys))
            weights = F.softmax(scores.squeeze(2), dim=1)  # (1, S)
            context = torch.bmm(weights.unsqueeze(1), enc).squeeze(1)
            hidden = self.decoder(torch.cat([self.tgt_embed(token), context], dim=1), hidden)
            logits = self.out(torch.cat([hidden, context], dim=1))
            token = logits.argmax(dim=1)
            decoded.append(token)
            if token.item() == EOS:
                break
        return torch.cat(decoded)


def build():
    torch.manual_seed(0)
    model = Seq2Seq().eval()
    _calibrate(model, inputs(64, seed=1234))
    src_len = Dim("src_len", min=2, max=MAX_SRC)
    example = torch.randint(3, SRC_VOCAB, (1, 7))
    return model, (example,), ({1: src_len},)


def inputs(count: int = 100, seed: int = 0) -> list[tuple]:
    """Source sentences of 2..24 tokens (ids 3.., no BOS/EOS)."""
    gen = _common.generator(seed)
    out = []
    for _ in range(count):
        length = int(torch.randint(2, MAX_SRC + 1, (), generator=gen))
        out.append((torch.randint(3, SRC_VOCAB, (1, length), generator=gen),))
    return out


def decision(output):
    return tuple(output.tolist())


def path(model, *args) -> tuple:
    """One bool per decoding step: whether the loop broke on EOS there."""
    with torch.no_grad(), _common.recording(model.out) as calls:
        model(*args)
    return tuple(logits.argmax(dim=1).item() == EOS for _, logits in calls)


@torch.no_grad()
def _calibrate(model, calibration):
    """Sharpen and spread the vocabulary, then raise EOS's bias until about 2/3 of the
    translations end before the length bound."""
    out, never = model.out, -1e3
    out.weight *= 4.0
    out.bias[EOS] = never  # EOS never wins: record full-length decodes
    steps = [model.max_len_a * src.size(1) + model.max_len_b for (src,) in calibration]
    longest = max(steps)
    logits = torch.zeros(len(calibration), longest, TGT_VOCAB)
    for n, args in enumerate(calibration):
        with _common.recording(out) as calls:
            model(*args)
        logits[n, : steps[n]] = torch.cat([z for _, z in calls])
    mask = torch.arange(longest)[None, :] < torch.tensor(steps)[:, None]
    shift = logits[mask].mean(0)
    shift[EOS] = 0.0
    out.bias -= shift
    margins = _common.first_stop_margins(logits - shift, EOS, steps)
    out.bias[EOS] = never + margins.quantile(0.65)
