"""Masked attention over a dynamic sequence, through dync's decomposition of
`scaled_dot_product_attention`: rows a mask leaves empty give 0 as eager's do, and a module
IREE data-tiles keeps data tiling (lit/upstream/iree-reduction-into-pack-dynamic.mlir)."""

import torch
import torch.nn.functional as F
from torch import nn
from torch.export import Dim

import dync


class MaskedAttention(nn.Module):
    """Causal self-attention whose rows for tokens with a negative sum are left empty by the
    mask (a key-padding-like mask that empties whole rows), at a width dync data-tiles."""

    def __init__(self, d: int = 256, heads: int = 4):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        steps = torch.arange(s)
        causal = steps[:, None] >= steps[None, :]
        mask = causal[None] & (x.sum(-1) > 0)[:, :, None]
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask[:, None])
        return self.out(y.transpose(1, 2).reshape(b, s, d))


def test_masked_attention_keeps_data_tiling_and_zeroes_empty_rows():
    torch.manual_seed(0)
    model = MaskedAttention().eval()
    seq = Dim("seq", min=2, max=64)
    compiled = dync.compile(model, (torch.randn(1, 16, 256),), dynamic_shapes=({1: seq},),
                            cache=False)
    # Data tiling from dispatch creation fails elsewhere in this module (the scores' product
    # fused with the mask: "large vector sizes"); dync then asks it of global optimization.
    tiling = {"--iree-opt-data-tiling", "--iree-global-opt-data-tiling"}
    assert tiling & set(compiled.report.flags), (compiled.report.flags, compiled.report.notes)
    gen = torch.Generator().manual_seed(1)
    for s in (2, 17, 64):
        x = torch.randn(1, s, 256, generator=gen)
        with torch.no_grad():
            want = model(x)
        empty = x.sum(-1) <= 0
        assert empty.any() and not empty.all()  # some rows empty, some not
        torch.testing.assert_close(compiled(x), want, rtol=1e-4, atol=1e-4)
