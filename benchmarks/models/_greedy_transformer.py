"""A Transformer translation model decoding greedily (not in the suite; `python -m benchmarks
realistic` uses it): `nn.Transformer`'s encoder and decoder at d=512 (8 heads, FFN 2048, 3
layers each), embeddings over an 8000-token vocabulary, and the greedy loop of the PyTorch
translation tutorial's `greedy_decode`: the whole prefix decoded again at every step (no key/
value cache), the next token the argmax of the last position, stopping at EOS or at the
length bound of 4 + the source length, each step's self-attention causally masked."""

import math

import torch
from torch import nn

VOCAB, BOS, EOS = 8000, 1, 2
MAX_SRC = 64


class GreedyTransformer(nn.Module):
    def __init__(self, d: int = 512, heads: int = 8, ffn: int = 2048, layers: int = 3,
                 eos_bias: float = 0.0):
        super().__init__()
        self.d = d
        self.src_embed = nn.Embedding(VOCAB, d)
        self.tgt_embed = nn.Embedding(VOCAB, d)
        self.positions = nn.Embedding(2 * MAX_SRC + 8, d)
        self.transformer = nn.Transformer(d, heads, layers, layers, ffn, dropout=0.0,
                                          batch_first=True)
        self.generator = nn.Linear(d, VOCAB)
        with torch.no_grad():
            self.generator.bias[EOS] += eos_bias

    def _embed(self, table: nn.Embedding, ids: torch.Tensor) -> torch.Tensor:
        steps = torch.arange(ids.size(1), device=ids.device)
        return table(ids) * math.sqrt(self.d) + self.positions(steps)

    def forward(self, src: torch.Tensor) -> torch.Tensor:
        memory = self.transformer.encoder(self._embed(self.src_embed, src))
        ys = torch.full((1, 1), BOS, dtype=torch.long)
        for _ in range(src.size(1) + 4):
            mask = nn.Transformer.generate_square_subsequent_mask(ys.size(1))
            out = self.transformer.decoder(self._embed(self.tgt_embed, ys), memory,
                                           tgt_mask=mask, tgt_is_causal=True)
            token = self.generator(out[:, -1]).argmax(dim=1, keepdim=True)
            ys = torch.cat([ys, token], dim=1)
            if token.item() == EOS:
                break
        return ys
