"""`dync-pool-extents` in `dync.compile`: pools whose last window ends before their input
does, along an axis whose output has one element or more, over a dynamic batch (IREE 3.13
failed to compile them, or computed wrong values over a dynamic batch); with indices, they
count within the input's own plane."""

import pytest
import torch
import torch.nn.functional as F
from torch.export import Dim

import dync

CASES = {
    "max 2d, one row out of three": (lambda x: F.max_pool2d(x, 2, 2), (3, 4)),
    "max 2d, padded and dilated": (lambda x: F.max_pool2d(x, 3, 3, padding=1, dilation=2), (8, 6)),
    "max 3d, one plane out of three": (lambda x: F.max_pool3d(x, 2, 2), (3, 8, 8)),
    "max 3d, kernel 3 over a depth of 4": (lambda x: F.max_pool3d(x, (3, 2, 2), 2), (4, 4, 4)),
    "max 1d, stride 3": (lambda x: F.max_pool1d(x, 2, 3), (7,)),
    "avg 2d, padded, pads not counted": (
        lambda x: F.avg_pool2d(x, 3, 3, padding=1, count_include_pad=False), (5, 7)),
    "avg 2d, padded, pads counted": (lambda x: F.avg_pool2d(x, 2, 3, padding=1), (6, 6)),
    "avg 3d, stride 3 over a depth of 5": (lambda x: F.avg_pool3d(x, 2, 3), (5, 4, 4)),
    "max 2d with indices, both axes cut": (
        lambda x: F.max_pool2d(x, 2, 2, return_indices=True), (3, 5)),
    "max 3d with indices, stride 3": (
        lambda x: F.max_pool3d(x, 2, 3, return_indices=True), (4, 5, 7)),
}


@pytest.mark.parametrize("name", CASES)
def test_pool_whose_windows_end_before_the_input_matches_eager(name):
    pool, spatial = CASES[name]

    class Pool(torch.nn.Module):
        def forward(self, x):
            return pool(x * 2.0)

    model = Pool()
    compiled = dync.compile(model, (torch.randn(2, 3, *spatial),), mode="graph",
                            dynamic_shapes=({0: Dim("n", max=8)},))
    assert "dync-pool-extents" in compiled.report.passes
    torch.manual_seed(0)
    for n in (1, 3, 8):
        x = torch.randn(n, 3, *spatial)
        torch.testing.assert_close(compiled(x), model(x))
