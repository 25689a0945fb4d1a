"""dync-data-tiling: a module whose matmuls are mostly wide is compiled with IREE's data tiling
(packed operands, `linalg.mmt4d`; from global optimization where the rows are dynamic), and
agrees with eager over a dynamic batch, under a branch, and over two slices of dynamic
lengths; a module of narrow ones is compiled as before."""

import torch
from iree.compiler import ir
from torch import nn
from torch.export import Dim

import dync
from dync.dialects.dync_ir import DATA_TILING, GLOBAL_DATA_TILING, linked_flags
from dync.passes import DEFAULT_PIPELINE


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
    assert GLOBAL_DATA_TILING in compiled.report.flags
    flags = dync.compile(narrow, (torch.randn(4, 32),), dynamic_shapes=dims,
                         mode="graph").report.flags
    assert DATA_TILING not in flags and GLOBAL_DATA_TILING not in flags
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
    assert GLOBAL_DATA_TILING in flags and "util.func(convert-scf-to-cf" in flags, flags
    inputs = [torch.randn(n, 256) + shift for n, shift in [(1, 1.0), (9, -1.0), (64, 1.0)]]
    with torch.no_grad():
        assert {bool(model.up(x).mean() > 0) for x in inputs} == {True, False}, "both paths"
        for x in inputs:
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)


class TwoSlices(nn.Module):
    """DynamicViT's token pruning, reduced: a scoring MLP over `x[:, 1:]` and a wide layer over
    the first `int(N * 0.7)` of those tokens."""

    def __init__(self):
        super().__init__()
        self.score = nn.Sequential(nn.Linear(256, 128), nn.GELU(), nn.Linear(128, 1))
        self.wide = nn.Linear(256, 256)

    def forward(self, x):
        B, N, C = x.shape
        s = self.score(x[:, 1:]).squeeze(-1)
        k = int(N * 0.7)
        return self.wide(x[:, 1:k + 1]) + s[:, :k, None]


def test_products_over_slices_of_dynamic_lengths_match_eager():
    """Data tiling from dispatch creation (`--iree-opt-data-tiling`) gave this module wrong
    values, up to 0.6, at most token counts; from global optimization it is right."""
    torch.manual_seed(0)
    model = TwoSlices().eval()
    dims = ({0: Dim("batch", min=1, max=16), 1: Dim("tokens", min=20, max=400)},)
    compiled = dync.compile(model, (torch.randn(2, 197, 256),), dynamic_shapes=dims,
                            mode="graph", cache=False, check_first_call=False)
    assert GLOBAL_DATA_TILING in compiled.report.flags
    with torch.no_grad():
        for batch, tokens in ((2, 197), (1, 50), (4, 101), (3, 400)):
            x = torch.randn(batch, tokens, 256)
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)


class WideLayersFromPython(nn.Module):
    """Host mode: a norm's sub-DNN (no matmul) beside wide layers' (dynamic rows: data tiling
    from global optimization) and a wide head over one row (from dispatch creation), the
    number of layers a Python number read from the data."""

    def __init__(self, width: int):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.layer = Mlp(width)
        self.head = nn.Linear(width, width)

    def forward(self, x):
        h = self.norm(x)
        for _ in range(1 + (h.abs().mean().tolist() > 0.5)):
            h = self.layer(h)
        return h, self.head(h[:1])


def test_a_sub_dnn_with_nothing_to_tile_leaves_data_tiling_to_the_others():
    torch.manual_seed(0)
    model = WideLayersFromPython(256).eval()
    dims = ({0: Dim("tokens", min=1, max=64)},)
    compiled = dync.compile(model, (torch.randn(4, 256),), dynamic_shapes=dims, mode="host",
                            cache=False, eager_if_faster=False)
    assert compiled.report.mode == "host"
    called = [d.get("callable") for d in compiled.report.subdnns]
    assert {"norm", "layer", "head"} <= set(called), called
    assert GLOBAL_DATA_TILING in compiled.report.flags
    assert DATA_TILING not in compiled.report.flags
    with torch.no_grad():
        for n in (1, 9, 64):
            x = torch.randn(n, 256)
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)


class EarlyExitCnn(nn.Module):
    """Host mode: a CNN's stem (a 3×3 convolution over the image's 3 channels and a max pool:
    nothing data tiling changes), a stage of wide 1×1 convolutions, a 10-class head, and an
    exit decided in Python."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 128, 3, padding=1), nn.MaxPool2d(2))
        self.stage = nn.Sequential(nn.Conv2d(128, 256, 1), nn.ReLU(), nn.Conv2d(256, 128, 1))
        self.head = nn.Linear(128, 10)  # narrow: it declines data tiling

    def forward(self, x):
        h = self.stem(x)
        if h.mean().item() > 10.0:
            return self.head(h.mean((2, 3)))
        return self.head(self.stage(h).mean((2, 3)))


def test_a_cnn_stem_leaves_data_tiling_to_the_stages():
    """The stem's sub-DNN has no contraction data tiling changes (IREE leaves a 3×3 convolution
    direct): it records no work; the head's narrow product weighs little beside the
    stage's wide 1×1 convolutions: the linked module is data-tiled, as the one graph would be.
    Before, either held it back: an early-exit ResNet-50's third stage ran 1.5x slower in host
    mode than compiled alone (AVX2, one thread)."""
    torch.manual_seed(0)
    model = EarlyExitCnn().eval()
    dims = ({0: Dim("batch", min=1, max=8)},)
    compiled = dync.compile(model, (torch.randn(2, 3, 16, 16),), dynamic_shapes=dims,
                            mode="host", cache=False, eager_if_faster=False)
    called = [d.get("callable") for d in compiled.report.subdnns]
    assert {"stem", "stage"} <= set(called), called
    assert {DATA_TILING, GLOBAL_DATA_TILING} & set(compiled.report.flags), compiled.report.flags
    with torch.no_grad():
        for n in (1, 5):
            x = torch.randn(n, 3, 16, 16)
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)


def _module(attributes: str) -> ir.Module:
    return ir.Module.parse(f"module attributes {{{attributes}}} {{}}", ir.Context())


def test_linked_modules_are_data_tiled_where_their_wide_work_outweighs_the_narrow():
    """`dync_ir.linked_flags` weighs the sub-DNNs' tiling work records together (a module
    with nothing to tile records none); a module with no record (dync-data-tiling did not run
    on it) holds data tiling back; other flags are kept where every module asks."""
    def work(wide: int, narrow: int, dynamic_rows: int = 0) -> str:
        return (f"dync.tiling_work = {{wide = {wide} : i64, narrow = {narrow} : i64, "
                f"dynamic_rows = {dynamic_rows} : i64}}")

    stage = _module(f'dync.iree_flags = ["{DATA_TILING}"], ' + work(1000, 10))
    head = _module(work(0, 50, dynamic_rows=1))
    assert linked_flags([stage, head, _module(work(0, 0))]) == [GLOBAL_DATA_TILING]
    assert linked_flags([stage, _module(work(0, 2000))]) == []
    assert linked_flags([_module(work(0, 0)), _module(work(0, 0))]) == []
    assert linked_flags([stage, _module("")]) == [], "no record"
    assert linked_flags([stage, stage]) == [DATA_TILING]
    asks = _module(f'dync.iree_flags = ["--iree-opt-level=O2", "{DATA_TILING}"], '
                   + work(1000, 10))
    assert linked_flags([asks, asks]) == sorted(["--iree-opt-level=O2", DATA_TILING])
    assert linked_flags([asks, stage]) == [DATA_TILING]
