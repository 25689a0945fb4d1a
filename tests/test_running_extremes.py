"""`cummax`/`cummin` (`dync-running-extremes`): two scans, exactly eager's values and indices
over every element type the pass takes (ties keep the later index, a NaN once met stays with
the latest NaN's; uint8 and bool through wider carriers), along the first, a middle and the
last dim of a dynamic shape."""

from __future__ import annotations

import torch
from torch.export import Dim

import dync


class _Running(torch.nn.Module):
    def forward(self, x):
        steps = (x * 2).round()  # ties
        nans = torch.where(steps > 2, float("nan"), steps)
        parts = [*torch.cummax(nans, -1), *torch.cummin(nans, 1), *torch.cummax(x, 0),
                 *torch.cummin(steps.half(), -1), *torch.cummax(steps.to(torch.bfloat16), 1),
                 *torch.cummax(x.double(), -1)]
        for dtype in (torch.int64, torch.int32, torch.int16, torch.int8):
            whole = steps.clamp(-2, 3).to(dtype)
            parts += [*torch.cummax(whole, -1), *torch.cummin(whole, 1)]
        bytes_ = (steps.abs() * 60).clamp(max=255).to(torch.uint8)  # past int8's range
        parts += [*torch.cummax(bytes_, -1), *torch.cummin(bytes_, 1),
                  *torch.cummax(x > 0, -1), *torch.cummin(x > 0, 0)]
        return (*parts, *torch.cummax(x[0, 0, 0], 0))  # and a 0-d tensor


def test_running_extremes_are_eagers_exactly():
    example = torch.randn(2, 5, 7)
    compiled = dync.compile(_Running(), (example,),
                            dynamic_shapes=({1: Dim("n", min=1, max=64),
                                             2: Dim("m", min=1, max=1000)},),
                            mode="graph", cache=False)
    for shape in ((2, 5, 7), (2, 1, 1), (2, 64, 3), (2, 3, 1000)):
        torch.manual_seed(sum(shape))
        x = torch.randn(*shape)
        for k, (got, want) in enumerate(zip(compiled(x), _Running()(x), strict=True)):
            assert got.dtype == want.dtype and got.shape == want.shape, (shape, k)
            assert torch.equal(got.nan_to_num(99), want.nan_to_num(99)), (shape, k)


class _FloatAndUnsigned(torch.nn.Module):
    def forward(self, x):
        return (*torch.cummax(x, -1), *torch.cummin((x * 3).abs().to(torch.uint8), -1),
                *torch.cummax(x > 0, -1))


def test_every_type_eager_takes_reaches_the_scans(tmp_path):
    """float32, and uint8 and bool through their carriers: two scans each, no gathers of
    doubling steps (left to unsigned types wider than a byte, which eager does not take)."""
    ir = tmp_path / "ir.mlir"
    dync.compile(_FloatAndUnsigned(), (torch.randn(3, 9),),
                 dynamic_shapes=({1: Dim("n", min=1, max=16)},), mode="graph", cache=False,
                 dump_ir=ir)
    text = ir.read_text()
    assert text.count("tm_tensor.scan") == 3 * 2 and "torch.aten.cummax" not in text
    assert "torch.aten.index_select" not in text
