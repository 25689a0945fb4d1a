"""dync-sums-as-matvecs: f32 sums and means over a dynamic last dim, taken as products with
ones, agree with eager at every length (one element, fewer than a vector, a multiple of one,
one past it, thousands), over rows with NaN, infinities and signed zeros, through a kept dim,
a softmax over a dynamic number of keys (whose sum of exponentials is one of them) and a
branch on a mean; and the IR handed to IREE has the products."""

import torch
from torch import nn
from torch.export import Dim

import dync

NAN, INF = float("nan"), float("inf")


class RowStatistics(nn.Module):
    def forward(self, x, scores):  # x: rows x n; scores: batch x heads x queries x n
        centred = x - x.mean(-1, keepdim=True)
        attention = torch.softmax(scores, dim=-1)
        if x.sum() > 0:  # a branch on a whole sum: its last step is over the dynamic dim
            centred = centred * 2.0
        return x.sum(-1), centred, attention, (x * x).mean(dim=1)


def _inputs(n: int, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    x = torch.randn(6, n, generator=gen) * 10
    x[1, 0] = NAN
    x[2, n // 2] = INF
    x[3, n - 1] = -INF
    x[4] = -0.0
    return x, torch.randn(2, 3, 5, n, generator=gen) * 4


def test_sums_over_a_dynamic_last_dim_match_eager_at_each_length(tmp_path):
    model = RowStatistics().eval()
    n = Dim("n", min=1, max=4096)
    gen = torch.Generator().manual_seed(0)
    compiled = dync.compile(model, _inputs(40, gen), dynamic_shapes=({1: n}, {3: n}),
                            mode="graph", cache=False, dump_ir=tmp_path / "ir.mlir")
    text = (tmp_path / "ir.mlir").read_text()
    products = [line for line in text.splitlines() if "torch.aten.matmul" in line]
    assert len(products) >= 4, "x.sum(-1), the mean, the softmax's sum, (x * x).mean(dim=1)"
    for length in (1, 7, 16, 17, 300, 4096):
        args = _inputs(length, gen)
        with torch.no_grad():
            want = model(*args)
        for got, expected in zip(compiled(*args), want, strict=True):
            torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-4, equal_nan=True)
