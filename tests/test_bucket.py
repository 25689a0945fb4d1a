"""dync-bucket (shape buckets): zero-padded static versions compiled into the same
vmfb; a call runs the smallest bucket holding its dims (the version pads its arguments) and
agrees with eager; a call beyond every bucket runs the dynamic entry."""

import pytest
import torch
from models import PaddedConvNet, seeded
from torch.export import Dim

import dync

H, W = Dim("h", min=13, max=48), Dim("w", min=13, max=48)
BUCKETS = {"h": [24, 40], "w": [24, 40]}


def compile_padded(model, **options):
    return dync.compile(model, (torch.randn(1, 3, 20, 24),),
                        dynamic_shapes=({2: H, 3: W},), **options)


@pytest.fixture(scope="module")
def model():
    return seeded(PaddedConvNet)


@pytest.fixture(scope="module")
def bucketed(model):
    return compile_padded(model, buckets=BUCKETS)


def test_one_version_per_bucket(bucketed):
    versions = bucketed.manifest.versions
    assert [v["symbols"] for v in versions] == [
        {"h": 24, "w": 24}, {"h": 24, "w": 40}, {"h": 40, "w": 24}, {"h": 40, "w": 40}]
    assert all(v["sizes"] == ["h", "w"] for v in versions)
    # Static once padded: each version pads its argument itself.
    assert not any(v.get("host_padding") for v in versions)
    assert versions == bucketed.report.versions


@pytest.mark.parametrize("h, w, function", [
    (13, 13, "main__bucket__h_24__w_24"),   # the smallest sizes, padded the most
    (15, 21, "main__bucket__h_24__w_24"),   # odd: the first convolution reads the zero padding
    (24, 24, "main__bucket__h_24__w_24"),   # exactly a bucket: nothing to pad
    (25, 23, "main__bucket__h_40__w_24"),
    (39, 40, "main__bucket__h_40__w_40"),
    (41, 30, "main"),                       # beyond every bucket: the dynamic entry
    (48, 48, "main"),
])
def test_each_bucket_and_the_dynamic_entry_match_eager(model, bucketed, h, w, function):
    torch.manual_seed(h * 100 + w)
    x = torch.randn(1, 3, h, w)
    bound = bucketed.signature.check_inputs([x.numpy()])
    assert bucketed.versions.choose(bound).function == function
    got, want = bucketed(x), model(x)
    for a, b in zip(got, want, strict=True):
        assert a.shape == b.shape
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)


def test_the_ir_crops_only_where_the_padding_could_reach_a_true_value(model, tmp_path):
    dump = tmp_path / "ir.mlir"
    compile_padded(model, buckets={"h": [24], "w": [24]}, dump_ir=dump, cache=False,
                   passes=("dync-bucket", "dync-canonicalize", "dync-check-ir"))
    version = dump.read_text().split("func.func @main__bucket__h_24__w_24")[1]
    body = version.split("func.func")[0]
    # The argument comes at its true size and is padded to the bucket's in the version; the
    # first convolution runs on the padded one; the crop comes before the second (whose
    # last output would read a padded row for an odd height).
    assert "%arg0: !torch.vtensor<[1,3,?,?],f32>" in version.splitlines()[0]
    assert "-> !torch.vtensor<[1,3,24,24],f32>" in body.split("torch.aten.constant_pad_nd")[1]
    assert body.count("torch.aten.slice.Tensor") == 2  # rows and columns, once
    first_conv = body.index("torch.aten.conv2d")
    assert body.index("torch.aten.constant_pad_nd") < first_conv < body.index(
        "torch.aten.slice.Tensor")


def test_a_saved_module_keeps_its_buckets(model, bucketed, tmp_path):
    loaded = dync.load(bucketed.save(tmp_path / "m.vmfb"))
    assert loaded.manifest.versions == bucketed.manifest.versions
    x = torch.randn(1, 3, 17, 35)
    for a, b in zip(loaded(x), model(x), strict=True):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)


def test_buckets_over_one_dim_leave_the_other_dynamic(model):
    """Versions static in W only, padded by the runtime. Their argument is cropped and bound
    at the top, before the literals the exporter declares H after (this used a later
    declaration: IREE refused the IR)."""
    compiled = compile_padded(model, buckets={"w": [24, 40]})
    assert [v["symbols"] for v in compiled.manifest.versions] == [{"w": 24}, {"w": 40}]
    # H stays dynamic after padding, which IREE cannot pad in the module: the runtime does.
    assert all(v["host_padding"] for v in compiled.manifest.versions)
    for h, w, function in [(13, 13, "main__bucket__w_24"), (47, 40, "main__bucket__w_40"),
                           (30, 41, "main")]:
        torch.manual_seed(h * 100 + w)
        x = torch.randn(1, 3, h, w)
        assert compiled.versions.choose(
            compiled.signature.check_inputs([x.numpy()])).function == function
        for a, b in zip(compiled(x), model(x), strict=True):
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("buckets, message", [
    ({"seq": [4]}, "buckets names seq, which are not dynamic dims of this model"),
    ({"h": [49]}, "buckets: h = 49 is outside its declared range [13, 48]"),
    ({"h": list(range(13, 18)), "w": list(range(13, 17))}, "buckets asks for 20 versions"),
])
def test_bad_requests_are_refused_with_the_reason(model, buckets, message):
    with pytest.raises(dync.DyncError, match=message.replace("[", r"\[").replace("]", r"\]")):
        compile_padded(model, buckets=buckets)
