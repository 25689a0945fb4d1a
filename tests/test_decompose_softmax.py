"""dync-decompose-softmax: the default pipeline computes an f32 softmax as max, exponentials,
sum and reciprocal product, and agrees with eager: attention scores over a dynamic sequence
(also masked with -inf), a softmax under a branch, one over the first dim; a log-softmax is
left to dync-softmax-row-blocks, and so is a softmax in a module IREE data-tiles (IREE 3.13
computed the decomposed form's reductions wrong there at token counts off its tile)."""

import torch
from test_softmax_row_blocks import Attention
from torch import nn
from torch.export import Dim

import dync


class FirstDim(nn.Module):
    def forward(self, x, mask):
        scores = x.masked_fill(mask, float("-inf"))
        return torch.softmax(scores, dim=-1), torch.softmax(x, dim=0)


def _softmax_ops(text: str) -> list[str]:
    return [line for line in text.splitlines() if "softmax" in line and "torch.aten" in line]


def test_attention_softmaxes_are_decomposed_and_match_eager(tmp_path):
    torch.manual_seed(0)
    model = Attention().eval()
    dims = ({0: Dim("batch", min=1, max=8), 1: Dim("tokens", min=1, max=64)},)
    compiled = dync.compile(model, (torch.randn(2, 12, 32),), dynamic_shapes=dims,
                            mode="graph", cache=False, dump_ir=tmp_path / "ir.mlir")
    text = (tmp_path / "ir.mlir").read_text()
    left = _softmax_ops(text)
    assert left and all("log_softmax" in line for line in left), left
    assert text.count("torch.aten.amax") == 2, "the scores' softmax and the branch's"
    torch.manual_seed(1)
    for batch, tokens in [(1, 1), (2, 5), (3, 16), (8, 17), (4, 64)]:
        for shift in (1.0, -1.0):
            x = torch.randn(batch, tokens, 32) + shift
            with torch.no_grad():
                want = model(x)
            for got, expected in zip(compiled(x), want, strict=True):
                torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-5)


def test_masked_scores_and_a_softmax_over_the_first_dim_match_eager():
    torch.manual_seed(0)
    model = FirstDim().eval()
    n = Dim("n", min=2, max=32)
    compiled = dync.compile(model, (torch.randn(4, 8), torch.zeros(4, 8, dtype=torch.bool)),
                            dynamic_shapes=({1: n}, {1: n}), mode="graph", cache=False)
    for cols in (2, 7, 32):
        x = torch.randn(4, cols) * 30  # large logits: the max keeps exp finite
        mask = torch.rand(4, cols) < 0.5
        mask[:, 0] = False
        for got, want in zip(compiled(x, mask), model(x, mask), strict=True):
            torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)


def test_beside_data_tiling_the_softmax_is_decomposed_and_matches_eager(tmp_path):
    """Data tiling started in dispatch creation leaves rows of the decomposed attention
    unwritten at key counts off its tile (lit/upstream/iree-data-tiling-softmax-rows-
    unwritten.mlir): the pass asks for it from global optimization instead."""
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(256, 4, 512, batch_first=True).eval()
    dims = ({1: Dim("tokens", min=1, max=64)},)
    with torch.no_grad():
        compiled = dync.compile(layer, (torch.randn(1, 12, 256),), dynamic_shapes=dims,
                                mode="graph", cache=False, dump_ir=tmp_path / "ir.mlir")
        text = (tmp_path / "ir.mlir").read_text()
        assert "torch.aten.amax" in text and not _softmax_ops(text)
        assert "--iree-global-opt-data-tiling" in compiled.report.flags
        assert "--iree-opt-data-tiling" not in compiled.report.flags
        assert not compiled.report.notes, compiled.report.notes  # no flag dropped
        for tokens in (1, 5, 12, 15, 16, 17, 33, 64):
            x = torch.randn(1, tokens, 256)
            torch.testing.assert_close(compiled(x), layer(x), rtol=1e-4, atol=1e-4)
