"""dync-softmax-row-blocks: a softmax over a dynamic number of rows runs over blocks of 16 rows
and agrees with eager at every row count (fewer than a block, a multiple of it, one past it),
over attention scores whose reduced dim is dynamic too, a log-softmax over classes with a
dynamic batch, and under a branch. The f32 softmaxes the default pipeline decomposes first
(`dync-decompose-softmax`) are left to this pass here by a pipeline without that pass."""

import torch
from torch import nn
from torch.export import Dim

import dync
from dync.passes import DEFAULT_PIPELINE

BLOCKS_ONLY = tuple(p for p in DEFAULT_PIPELINE if p != "dync-decompose-softmax")


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(32, 96)
        self.head = nn.Linear(32, 5)

    def forward(self, x):  # x: batch x tokens x 32
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = torch.softmax(q @ k.transpose(1, 2) / 32 ** 0.5, dim=-1)
        h = scores @ v
        if h.mean() > 0:
            h = torch.softmax(h, dim=-1) * 2.0
        return torch.log_softmax(self.head(h.mean(1)), dim=1), h


def test_softmax_over_dynamic_rows_runs_in_blocks_and_matches_eager(tmp_path):
    torch.manual_seed(0)
    model = Attention().eval()
    dims = ({0: Dim("batch", min=1, max=8), 1: Dim("tokens", min=1, max=64)},)
    compiled = dync.compile(model, (torch.randn(2, 12, 32),), dynamic_shapes=dims,
                            mode="graph", cache=False, dump_ir=tmp_path / "ir.mlir",
                            passes=BLOCKS_ONLY)
    text = (tmp_path / "ir.mlir").read_text()
    assert "dync-softmax-row-blocks" in DEFAULT_PIPELINE
    blocked = [line for line in text.splitlines()
               if ("softmax.int " in line or "_softmax " in line) and ",16," in line]
    assert len(blocked) == 3, "scores, the branch's softmax, the log-softmax over the batch"
    torch.manual_seed(1)
    signs = set()
    for batch, tokens in [(1, 1), (2, 5), (3, 16), (8, 17), (4, 64)]:
        for shift in (1.0, -1.0):
            x = torch.randn(batch, tokens, 32) + shift
            with torch.no_grad():
                want = model(x)
                signs.add(bool(want[1].mean() > 0) if tokens else None)
            for got, expected in zip(compiled(x), want, strict=True):
                torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-5)


def test_beside_data_tiling_the_scores_are_split_into_blocks_and_a_rest(tmp_path):
    """Attention wide enough for IREE's data tiling: the scores' softmax (its reduced dim
    dynamic) is blocked in the split form, and the module keeps data tiling (the padded form
    needed a stack past IREE's limit there, and dync then compiled without the flags its
    passes asked for)."""
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(256, 4, 512, batch_first=True).eval()
    dims = ({1: Dim("tokens", min=1, max=64)},)
    with torch.no_grad():
        compiled = dync.compile(layer, (torch.randn(1, 12, 256),), dynamic_shapes=dims,
                                mode="graph", cache=False, dump_ir=tmp_path / "ir.mlir",
                                passes=BLOCKS_ONLY)
        text = (tmp_path / "ir.mlir").read_text()
        assert "-data-tiling" in text  # from global optimization: the rows are dynamic
        assert "16,?],f32>" in text and "torch.aten.cat" in text, "the split form"
        assert not compiled.report.notes, compiled.report.notes  # no flag dropped
        for tokens in (1, 15, 16, 17, 64):
            x = torch.randn(1, tokens, 256)
            torch.testing.assert_close(compiled(x), layer(x), rtol=1e-4, atol=1e-4)
