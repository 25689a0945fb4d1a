"""dync-attention-heads: attention whose scores can outgrow the cache (heads x tokens x tokens
at the declared bounds) is computed a head at a time and agrees with eager at every length,
under an additive mask broadcast over the heads, in `nn.TransformerEncoderLayer` over a
dynamic batch, and in a masked `scaled_dot_product_attention` whose mask leaves rows empty;
attention over a short bounded sequence is left whole."""

import math

import torch
import torch.nn.functional as F
from torch import nn
from torch.export import Dim

import dync


class MaskedAttention(nn.Module):
    def __init__(self, d: int = 64, heads: int = 4):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)

    def forward(self, x, keep):  # x: batch x tokens x d; keep: batch x tokens (1 or 0)
        b, n, d = x.shape
        q, k, v = (t.view(b, n, self.heads, -1).transpose(1, 2)
                   for t in self.qkv(x).chunk(3, dim=-1))
        bias = (1.0 - keep)[:, None, None, :] * -1e4
        scores = q @ k.transpose(-1, -2) / math.sqrt(d // self.heads) + bias
        h = torch.softmax(scores, dim=-1) @ v
        return self.out(h.transpose(1, 2).reshape(b, n, d))


class CausalPaddedAttention(nn.Module):
    """Causal self-attention under a key-padding mask: a row whose keys up to it are all
    padding is empty (eager gives 0 there)."""

    def forward(self, x, keep):  # x: batch x tokens x 64; keep: batch x tokens (bool)
        b, n, _ = x.shape
        q, k, v = ((x * s).view(b, n, 4, 16).transpose(1, 2) for s in (1.0, 0.5, -1.0))
        steps = torch.arange(n)
        mask = (steps[:, None] >= steps[None, :])[None] & keep[:, None, :]
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask[:, None])


def _heads_split(path) -> bool:
    return "torch.aten.cat" in path.read_text() and ",1,?,?],f32>" in path.read_text()


def test_attention_over_long_sequences_runs_by_head_and_matches_eager(tmp_path):
    torch.manual_seed(0)
    model = MaskedAttention().eval()
    tokens = Dim("tokens", min=1, max=512)  # 2 x 4 x 512 x 512 x 4 bytes of scores at most
    example = (torch.randn(2, 12, 64), torch.ones(2, 12))
    compiled = dync.compile(model, example, dynamic_shapes=({1: tokens}, {1: tokens}),
                            mode="graph", cache=False, dump_ir=tmp_path / "ir.mlir")
    assert _heads_split(tmp_path / "ir.mlir")
    for n in (1, 7, 16, 33, 130):
        x, keep = torch.randn(2, n, 64), (torch.rand(2, n) > 0.3).float()
        keep[:, 0] = 1.0
        with torch.no_grad():
            torch.testing.assert_close(compiled(x, keep), model(x, keep), rtol=1e-4, atol=1e-4)


def test_encoder_layer_over_a_dynamic_batch_runs_by_head(tmp_path):
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(64, 4, 128, batch_first=True).eval()
    dims = ({0: Dim("batch", min=1, max=4), 1: Dim("tokens", min=1, max=256)},)
    with torch.no_grad():
        compiled = dync.compile(layer, (torch.randn(2, 12, 64),), dynamic_shapes=dims,
                                mode="graph", cache=False, dump_ir=tmp_path / "ir.mlir")
        assert "torch.aten.cat" in (tmp_path / "ir.mlir").read_text()
        assert "[?,1,?,?],f32>" in (tmp_path / "ir.mlir").read_text()
        for batch, n in ((1, 1), (3, 17), (4, 64)):
            x = torch.randn(batch, n, 64)
            torch.testing.assert_close(compiled(x), layer(x), rtol=1e-4, atol=1e-4)


def test_short_bounded_attention_stays_whole(tmp_path):
    torch.manual_seed(0)
    model = MaskedAttention().eval()
    tokens = Dim("tokens", min=1, max=64)  # 2 x 4 x 64 x 64 x 4 bytes: 128 KB
    dync.compile(model, (torch.randn(2, 12, 64), torch.ones(2, 12)),
                 dynamic_shapes=({1: tokens}, {1: tokens}), mode="graph", cache=False,
                 dump_ir=tmp_path / "ir.mlir")
    assert not _heads_split(tmp_path / "ir.mlir")


def test_masked_scaled_dot_product_attention_runs_by_head_and_zeroes_empty_rows(tmp_path):
    model = CausalPaddedAttention()
    tokens = Dim("tokens", min=2, max=512)
    example = (torch.randn(2, 12, 64), torch.ones(2, 12, dtype=torch.bool))
    compiled = dync.compile(model, example, dynamic_shapes=({1: tokens}, {1: tokens}),
                            mode="graph", cache=False, dump_ir=tmp_path / "ir.mlir")
    assert _heads_split(tmp_path / "ir.mlir")
    gen = torch.Generator().manual_seed(0)
    for n in (2, 9, 40):
        x, keep = torch.randn(2, n, 64, generator=gen), torch.rand(2, n, generator=gen) > 0.4
        keep[0, 0] = False  # the first row of the first sample: empty
        want = model(x, keep)
        assert (want[0, :, 0] == 0).all()
        torch.testing.assert_close(compiled(x, keep), want, rtol=1e-4, atol=1e-4)


class FoldedHeadsAttention(nn.Module):
    """Heads folded into the batch of `torch.bmm` (one sequence, 8 heads of 16)."""

    def forward(self, x):  # x: 1 x tokens x 128
        n = x.shape[1]
        q, k, v = ((x * s).view(n, 8, 16).transpose(0, 1) for s in (0.3, 0.2, 1.0))
        weights = torch.softmax(torch.bmm(q, k.transpose(1, 2)) * 0.25, dim=-1)
        return torch.bmm(weights, v).transpose(0, 1).reshape(1, n, 128)


def test_heads_folded_into_a_bmm_batch_run_by_head(tmp_path):
    model = FoldedHeadsAttention()
    compiled = dync.compile(model, (torch.randn(1, 12, 128),),
                            dynamic_shapes=({1: Dim("tokens", min=1, max=256)},), mode="graph",
                            cache=False, dump_ir=tmp_path / "ir.mlir")
    assert "torch.aten.bmm" in (tmp_path / "ir.mlir").read_text()
    assert "[1,?,?],f32>" in (tmp_path / "ir.mlir").read_text()
    for n in (1, 5, 64, 200):
        x = torch.randn(1, n, 128)
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)
