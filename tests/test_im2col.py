"""dync-im2col: convolutions with many input channels and few output pixels (a CNN's deep
layers) run as one matmul over their windows, and agree with eager — strided, dilated, with a
bias and a rectangular kernel, over a dynamic batch, under a branch, and with a filter too
large for dync to read (transformed by IREE at compile time)."""

import torch
from torch import nn
from torch.export import Dim

import dync
from dync.passes import DEFAULT_PIPELINE


class Deep(nn.Module):
    def __init__(self):
        super().__init__()
        self.strided = nn.Conv2d(64, 96, 3, stride=2, padding=1)
        self.dilated = nn.Conv2d(96, 96, (3, 5), padding=(2, 1), dilation=(2, 1), bias=False)
        self.large = nn.Conv2d(96, 1400, 3, padding=1, bias=False)  # 1.2 M weights
        self.wide = nn.Conv2d(64, 32, 3, padding=1)  # 64 output pixels, 32 filters: kept

    def forward(self, x):
        h = torch.relu(self.dilated(torch.relu(self.strided(x))))
        if x.mean() > 0:
            h = self.large(h)[:, :96]
        return h.sum((2, 3)), self.wide(x).sum((2, 3))


def _compile(build, tmp_path):
    """`build()`'s model, compiled in one graph over a dynamic batch of 64 x 8 x 8 images,
    and its final dync IR."""
    torch.manual_seed(0)
    model = build().eval()
    compiled = dync.compile(model, (torch.randn(2, 64, 8, 8),),
                            dynamic_shapes=({0: Dim("batch", min=1, max=8)},), mode="graph",
                            dump_ir=tmp_path / "ir.mlir")
    return model, compiled, (tmp_path / "ir.mlir").read_text()


def test_deep_convolutions_run_as_matmuls_and_match_eager(tmp_path):
    model, compiled, text = _compile(Deep, tmp_path)
    assert "dync-im2col" in DEFAULT_PIPELINE
    assert text.count("torch.aten.mm ") >= 3, "strided, dilated and large as matmuls"
    assert "!torch.vtensor<[864,1400],f32>" in text, "the large filter viewed as a matrix"
    convs = [line for line in text.splitlines()
             if "torch.aten.convolution " in line or "torch.aten.conv2d " in line]
    if 'dync.vector_isa = "avx2"' in text:  # STRIP_RULES: the wide one in strips too
        assert not convs and text.count("torch.aten.mm ") >= 4
    else:
        assert convs and all("[32,64,3,3]" in line for line in convs), "only the wide one kept"
    inputs = [torch.randn(batch, 64, 8, 8) + shift
              for batch, shift in [(1, 0.0), (3, 2.0), (8, -2.0), (5, 1.0)]]
    assert {bool(x.mean() > 0) for x in inputs} == {True, False}, "both paths"
    with torch.no_grad():
        for x in inputs:
            for got, expected in zip(compiled(x), model(x), strict=True):
                torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-3)


class StridedBlock(nn.Module):
    """A ResNet bottleneck's strided half over 64 channels: a 1×1 convolution, a strided
    padded 3×3 one, and a strided 1×1 shortcut; independent samples (so `dync-loop-batch`
    runs it per sample, its body reading the input through a static-info cast)."""

    def __init__(self):
        super().__init__()
        self.reduce = nn.Conv2d(64, 64, 1, bias=False)
        self.strided = nn.Conv2d(64, 96, 3, stride=2, padding=1, bias=False)
        self.shortcut = nn.Conv2d(64, 96, 1, stride=2, bias=False)
        self.head = nn.Linear(96, 4)

    def forward(self, x):
        y = self.strided(torch.relu(self.reduce(x))) + self.shortcut(x)
        return self.head(torch.relu(y).mean((2, 3)))


def test_strided_convolutions_read_the_unpadded_input_and_match_eager(tmp_path):
    model, compiled, text = _compile(StridedBlock, tmp_path)
    assert [s.get("per_sample") for s in compiled.report.subdnns] == ["batch"]
    # STRIP_RULES on x86: the 1×1 `reduce` too.
    on_x86 = any(f'dync.vector_isa = "{isa}"' in text for isa in ("avx2", "avx512", "sse"))
    assert text.count("torch.aten.mm ") == (3 if on_x86 else 2), "the strided 3×3 and 1×1"
    assert "!torch.vtensor<[?,64,10,10],f32>" not in text, "no padded copy of the input"
    for batch in (1, 3, 8):
        x = torch.randn(batch, 64, 8, 8)
        with torch.no_grad():
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)


class EarlyLayers(nn.Module):
    """A CNN's early layers, their columns far larger than their filters: 3×3 from 16
    channels, strided, dilated with a bias, and a 5×3 kernel, over 64 channels at 20×14."""

    def __init__(self):
        super().__init__()
        self.plain = nn.Conv2d(16, 64, 3, padding=1, bias=False)
        self.strided = nn.Conv2d(64, 64, 3, stride=2, padding=1)
        self.dilated = nn.Conv2d(64, 64, 3, padding=2, dilation=2)
        self.tall = nn.Conv2d(64, 64, (5, 3), padding=(1, 1), bias=False)

    def forward(self, x):
        h = torch.relu(self.plain(x))
        return self.strided(h).sum((2, 3)), self.tall(self.dilated(h)).sum((2, 3))


def test_on_avx2_early_convolutions_run_as_matmuls_in_strips_and_match_eager(tmp_path):
    """For AVX2 (`target="x86-64-v3"`, whose code runs on this machine too) every such
    convolution becomes matmuls over horizontal strips of its output, concatenated along
    H."""
    torch.manual_seed(0)
    model = EarlyLayers().eval()
    example = torch.randn(2, 16, 20, 14)
    batch = ({0: Dim("batch", min=1, max=8)},)
    compiled = dync.compile(model, (example,), dynamic_shapes=batch, mode="graph",
                            target="x86-64-v3", dump_ir=tmp_path / "avx2.mlir")
    text = (tmp_path / "avx2.mlir").read_text()
    assert "torch.aten.conv2d " not in text and "torch.aten.convolution " not in text
    assert text.count("torch.aten.mm ") > 4, "more than one matmul per convolution: strips"
    with torch.no_grad():
        for x in (torch.randn(1, 16, 20, 14), torch.randn(5, 16, 20, 14)):
            for got, expected in zip(compiled(x), model(x), strict=True):
                torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-3)


class Bottleneck(nn.Module):
    """A ResNet bottleneck at 64 channels, its 1×1 convolutions of stride 1 bordered by the
    3×3 one (so `dync-pointwise-matmuls` leaves them), and a 1×1 convolution with padding."""

    def __init__(self):
        super().__init__()
        self.reduce = nn.Conv2d(64, 64, 1, bias=False)
        self.middle = nn.Conv2d(64, 64, 3, padding=1, bias=False)
        self.expand = nn.Conv2d(64, 128, 1)
        self.padded = nn.Conv2d(128, 64, 1, padding=1, bias=False)

    def forward(self, x):
        h = self.expand(torch.relu(self.middle(torch.relu(self.reduce(x)))))
        return self.padded(torch.relu(h + x.repeat(1, 2, 1, 1)))


def test_on_avx2_pointwise_convolutions_run_as_matmuls_and_match_eager(tmp_path):
    """For AVX2 a 1×1 convolution of stride 1 over 64 channels or more is a matmul over its
    input's pixels (IREE's own code for it is a contraction at half its matmul speed there)."""
    torch.manual_seed(0)
    model = Bottleneck().eval()
    batch = ({0: Dim("batch", min=1, max=8)},)
    compiled = dync.compile(model, (torch.randn(2, 64, 12, 10),), dynamic_shapes=batch,
                            mode="graph", target="x86-64-v3", dump_ir=tmp_path / "avx2.mlir")
    text = (tmp_path / "avx2.mlir").read_text()
    assert "torch.aten.conv2d " not in text and "torch.aten.convolution " not in text, (
        "the three 1×1 convolutions as matmuls (the 3×3 one in strips)")
    with torch.no_grad():
        for x in (torch.randn(1, 64, 12, 10), torch.randn(5, 64, 12, 10)):
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-3)


class PatchEmbeddings(nn.Module):
    """Convolutions whose windows tile their input: a ViT's patch embedding over the image
    (3 channels, 8×8 patches; 70 is no multiple of 8, so the last 6 rows and columns are read
    by no window) and a ConvNeXt-style 2×2/2 downsampling with a rectangular variant."""

    def __init__(self):
        super().__init__()
        self.patches = nn.Conv2d(3, 48, 8, stride=8)
        self.down = nn.Conv2d(48, 64, 2, stride=2, bias=False)
        self.wide = nn.Conv2d(3, 16, (2, 5), stride=(2, 5))

    def forward(self, x):
        h = self.down(torch.relu(self.patches(x)))
        return h.flatten(1), self.wide(x).mean((2, 3))


def test_non_overlapping_convolutions_run_as_one_matmul_over_their_tiles(tmp_path):
    """Whatever their channels and CPU: the input viewed as its tiles and permuted once (the
    columns are the input itself), one matmul. IREE 3.13's direct code for them ran 7-33x
    slower than eager (one thread, AVX-512: ViT-B/16's 3→768 16×16/16 at 224×224 97.5 ms
    against 2.9; as the matmul 3.9)."""
    torch.manual_seed(0)
    model = PatchEmbeddings().eval()
    compiled = dync.compile(model, (torch.randn(2, 3, 70, 70),),
                            dynamic_shapes=({0: Dim("batch", min=1, max=8)},), mode="graph",
                            dump_ir=tmp_path / "ir.mlir", cache=False)
    text = (tmp_path / "ir.mlir").read_text()
    assert "torch.aten.conv" not in text and text.count("torch.aten.mm ") == 3
    with torch.no_grad():
        for batch in (1, 3, 8):
            x = torch.randn(batch, 3, 70, 70)
            for got, expected in zip(compiled(x), model(x), strict=True):
                torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-4)


class ResolutionFree(nn.Module):
    """Convolutions over a dynamic H x W (a resolution-adaptive network's): 3×3 over 256
    channels, a strided one over 128, and a 3×3 over 16."""

    def __init__(self):
        super().__init__()
        self.deep = nn.Conv2d(256, 128, 3, padding=1)
        self.strided = nn.Conv2d(128, 128, 3, stride=2, padding=1, bias=False)
        self.shallow = nn.Conv2d(128, 16, 1)
        self.early = nn.Conv2d(16, 16, 3, padding=1)

    def forward(self, x):
        h = self.strided(torch.relu(self.deep(x)))
        return self.early(torch.relu(self.shallow(h))).mean((2, 3))


def test_over_a_dynamic_image_deep_convolutions_run_as_one_matmul(tmp_path):
    """With no static H x W there are no strips: on AVX-512 from 256 channels (128 strided)
    one matmul over the whole image's columns, the 16-channel one direct; on AVX2 all of
    them (`STRIP_RULES`' `dynamic`)."""
    torch.manual_seed(0)
    model = ResolutionFree().eval()
    h, w = Dim("h", min=3, max=40), Dim("w", min=3, max=40)
    for target in (None, "x86-64-v3"):
        path = tmp_path / f"{target}.mlir"
        compiled = dync.compile(model, (torch.randn(1, 256, 9, 7),),
                                dynamic_shapes=({2: h, 3: w},), mode="graph",
                                target=target, dump_ir=path, cache=False)
        text = path.read_text()
        convs = [line for line in text.splitlines() if "torch.aten.convolution " in line
                 or "torch.aten.conv2d " in line]
        if 'dync.vector_isa = "avx512"' in text:
            assert len(convs) == 1 and "[16,16,3,3]" in convs[0], "the early one direct"
        elif 'dync.vector_isa = "avx2"' in text:
            assert not convs
        with torch.no_grad():
            for size in ((9, 7), (3, 3), (16, 11), (40, 40)):
                x = torch.randn(1, 256, *size)
                torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-3)
