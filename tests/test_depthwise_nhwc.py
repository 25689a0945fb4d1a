"""dync-depthwise-nhwc: depthwise convolutions in NHWC, and the tile sizes it sets where
IREE's own leave a column over (a 3x3 one of an odd output width)."""

import pytest
import torch
from torch import nn
from torch.export import Dim

import dync


class OddWidths(nn.Module):
    """Depthwise convolutions into 7x7 (MobileNet-v2's last stage): 3x3 of stride 1 and 2
    (from 14x14), a 5x5 (IREE's own tiles divide 7 there), and a 3x3 into 8x8 (even)."""

    def __init__(self):
        super().__init__()
        self.same = nn.Conv2d(16, 16, 3, padding=1, groups=16)
        self.down = nn.Conv2d(16, 16, 3, stride=2, padding=1, groups=16, bias=False)
        self.wide = nn.Conv2d(16, 16, 5, padding=2, groups=16)
        self.even = nn.Conv2d(16, 16, 3, padding=1, groups=16)

    def forward(self, x7, x14, x8):
        y = torch.relu(self.same(x7)) + self.down(x14)
        return self.wide(y), self.even(x8)


_WIDTH = {"sse": 1, "avx2": 2, "avx512": 3}


@pytest.mark.parametrize("target, isa", [("x86-64-v3", "avx2"), ("x86-64-v4", "avx512"),
                                         ("generic", "sse"), ("host", None)])
def test_odd_width_depthwise_convolutions_get_their_tiles_and_match_eager(tmp_path, target, isa):
    """On each x86 vector extension the two 3x3 convolutions into 7 columns carry tile sizes
    (the 5x5 and the even one keep IREE's); every output matches eager over a dynamic batch
    where the machine runs the target's code (AVX-512 code is only compiled on an AVX2
    machine)."""
    from dync.targets import host_vector_isa

    here = host_vector_isa()
    runs = isa is None or _WIDTH.get(here, 0) >= _WIDTH[isa]
    torch.manual_seed(0)
    model = OddWidths().eval()
    batch = Dim("batch", min=1, max=8)
    example = (torch.randn(2, 16, 7, 7), torch.randn(2, 16, 14, 14), torch.randn(2, 16, 8, 8))
    compiled = dync.compile(model, example, dynamic_shapes=tuple({0: batch} for _ in example),
                            mode="graph", target=target, dump_ir=tmp_path / "m.mlir",
                            cache=False, check_first_call=runs)
    tiled = (tmp_path / "m.mlir").read_text().count("compilation_info = ")
    assert tiled == (2 if (isa or here) in _WIDTH else 0)
    if not runs:
        return
    with torch.no_grad():
        for n in (1, 5):
            xs = (torch.randn(n, 16, 7, 7), torch.randn(n, 16, 14, 14), torch.randn(n, 16, 8, 8))
            got, want = compiled(*xs), model(*xs)
            for g, w in zip(got, want, strict=True):
                torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-4)
