"""dync-data-tiling: a module whose matmuls are mostly wide is compiled with IREE's data tiling
(packed operands, `linalg.mmt4d`), and agrees with eager over a dynamic batch and under a
branch; a module of narrow ones is compiled as before."""

import torch
from torch import nn
from torch.export import Dim

import dync
from dync.passes import DEFAULT_PIPELINE
from dync.passes.data_tiling import DATA_TILING


class Mlp(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.up, self.down = nn.Linear(width, 2 * width), nn.Linear(2 * width, width)

    def forward(self, x):
        h = self.up(x)
        if h.mean() > 0:
            h = torch.relu(h)
        return self.down(h)


def test_wide_matmuls_are_data_tiled_and_match_eager():
    torch.manual_seed(0)
    assert "dync-data-tiling" in DEFAULT_PIPELINE
    dims = ({0: Dim("tokens", min=1, max=64)},)
    wide, narrow = Mlp(256).eval(), Mlp(32).eval()
    compiled = dync.compile(wide, (torch.randn(4, 256),), dynamic_shapes=dims, mode="graph")
    assert DATA_TILING in compiled.report.flags
    assert DATA_TILING not in dync.compile(narrow, (torch.randn(4, 32),), dynamic_shapes=dims,
                                           mode="graph").report.flags
    inputs = [torch.randn(n, 256) + shift for n, shift in [(1, 0.0), (7, 1.0), (64, -1.0)]]
    with torch.no_grad():
        assert {bool(wide.up(x).mean() > 0) for x in inputs} == {True, False}, "both paths"
        for x in inputs:
            torch.testing.assert_close(compiled(x), wide(x), rtol=1e-4, atol=1e-4)


class WideInBranch(nn.Module):
    def __init__(self):
        super().__init__()
        self.up, self.mid = nn.Linear(256, 512), nn.Linear(512, 512)

    def forward(self, x):
        h = self.up(x)
        if h.mean() > 0:
            h = torch.tanh(self.mid(h))
        return h


def test_a_wide_matmul_in_a_branch_has_its_weight_packed_at_compile_time():
    """The branches reach IREE as blocks of one region (`convert-scf-to-cf` in its
    preprocessing), where IREE hoists the packing of the branch's weight; results agree."""
    torch.manual_seed(0)
    model = WideInBranch().eval()
    compiled = dync.compile(model, (torch.randn(4, 256),), mode="graph",
                            dynamic_shapes=({0: Dim("tokens", min=1, max=64)},))
    flags = " ".join(compiled.report.flags)
    assert DATA_TILING in flags and "util.func(convert-scf-to-cf" in flags, flags
    inputs = [torch.randn(n, 256) + shift for n, shift in [(1, 1.0), (9, -1.0), (64, 1.0)]]
    with torch.no_grad():
        assert {bool(model.up(x).mean() > 0) for x in inputs} == {True, False}, "both paths"
        for x in inputs:
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)
