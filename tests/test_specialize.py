"""dync-specialize (shape-specialized versions, Nimble/SoD²): versions are compiled into the
same vmfb, picked by the arguments' shapes at run time, and agree with eager on every path;
a shape without a version runs the dynamic entry point."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import compile_batch_model
from models import SIZES, PaddedConvNet, cond_inputs, seeded

import dync
from dync.runtime.manifest import TRANSFORM_SPEC, manifest_path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.memory import measure_dync  # noqa: E402


@pytest.fixture(scope="module")
def versioned(cond_model):
    return compile_batch_model(cond_model, specialize={"batch": [1, 7]})


def test_versions_are_compiled_and_reported(versioned):
    names = [v["function"] for v in versioned.report.versions]
    assert names == ["main__batch_1", "main__batch_7"]
    assert versioned.manifest.versions == versioned.report.versions
    assert "versions: main__batch_1 (batch=1), main__batch_7 (batch=7)" in str(versioned.report)


@pytest.mark.parametrize("batch", SIZES)
@pytest.mark.parametrize("positive", [True, False])
def test_each_version_and_the_dynamic_entry_match_eager(cond_model, versioned, batch, positive):
    x = cond_inputs(batch, positive)
    bound = versioned.signature.check_inputs([x.numpy()])
    expected = {1: "main__batch_1", 7: "main__batch_7"}.get(batch, "main")
    assert versioned.versions.choose(bound).function == expected
    torch.testing.assert_close(versioned(x), cond_model(x), rtol=1e-5, atol=1e-5)


def test_memory_is_measured_on_the_function_a_call_runs(versioned):
    """The benchmark's peak of a specialized module is its version's where one matches (it
    measured the dynamic entry before: a version's memory never reached the tables)."""
    ran = {batch: measure_dync(versioned, (cond_inputs(batch, True),)) for batch in (1, 2)}
    assert [ran[1].function, ran[2].function] == ["main__batch_1", "main"]
    assert ran[1].peak > 0 and ran[2].peak > 0


def test_default_is_none_and_true_is_the_example_size(cond_model, cond_compiled):
    assert cond_compiled.report.versions == []
    at_example = compile_batch_model(cond_model, specialize=True)
    assert [v["symbols"] for v in at_example.report.versions] == [{"batch": 4}]


def test_a_saved_module_keeps_its_versions_and_iree_run_module_can_call_one(
        cond_model, versioned, tmp_path):
    path = versioned.save(tmp_path / "m.vmfb")
    loaded = dync.load(path)
    assert loaded.manifest.versions == versioned.manifest.versions
    x = cond_inputs(7, True)
    torch.testing.assert_close(loaded(x), cond_model(x), rtol=1e-5, atol=1e-5)
    np.save(tmp_path / "x.npy", x.numpy())
    run = subprocess.run(["iree-run-module", f"--module={path}", "--device=local-sync",
                          "--function=main__batch_7", f"--input=@{tmp_path / 'x.npy'}",
                          f"--output=@{tmp_path / 'y.npy'}"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), cond_model(x).detach().numpy(),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("specialize, message", [
    ({"seq": [2]}, "specialize names seq, which are not dynamic dims of this model"),
    ({"batch": [0]}, r"batch = 0 is outside its declared range \[1, 64\]"),
    ({"batch": list(range(1, 18))}, "specialize asks for 17 versions; at most 16"),
])
def test_bad_requests_are_clear_errors(cond_model, specialize, message):
    with pytest.raises(dync.DyncError, match=message):
        compile_batch_model(cond_model, specialize=specialize, cache=False)


class Encoder(torch.nn.Module):
    """A GRU over a variable-length sequence: dync's recurrent rewrite runs it as a loop whose
    carried state is transposed, the case whose version once failed in IREE (a static
    transpose of a sub-DNN's dynamic argument)."""

    def __init__(self):
        super().__init__()
        self.gru = torch.nn.GRU(8, 12, batch_first=True)

    def forward(self, x):
        out, hidden = self.gru(x)
        return out.sum(1) + hidden[0]


def test_a_version_of_a_recurrent_model_compiles_and_matches_eager():
    torch.manual_seed(0)
    model = Encoder().eval()
    seq = torch.export.Dim("seq", min=2, max=16)
    compiled = dync.compile(model, (torch.randn(1, 6, 8),), dynamic_shapes=({1: seq},),
                            specialize={"seq": [5]})
    assert [v["function"] for v in compiled.report.versions] == ["main__seq_5"]
    for length in (5, 3, 16):
        x = torch.randn(1, length, 8)
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-5, atol=1e-5)


def test_observed_hot_sizes_are_what_specialize_takes(cond_model, cond_compiled, versioned,
                                                      tmp_path):
    compiled = dync.load(cond_compiled.save(tmp_path / "m.vmfb"))
    assert compiled.hot_sizes() == {}
    for batch in (7, 1, 7, 3, 1, 7):
        compiled(cond_inputs(batch, True))
    assert compiled.hot_sizes() == {"batch": [1, 3, 7]}
    hot = compiled.hot_sizes(2)
    assert hot == {"batch": [1, 7]}
    assert compile_batch_model(cond_model, specialize=hot).report.versions == \
        versioned.report.versions


class PaddedCNN(torch.nn.Module):
    """Two padded convolutions and a pool: each padded input is a copy in IREE unless the
    padding is fused, which llvm-cpu compiles only over static shapes. The samples meet (the
    batch mean is taken out), so `dync-loop-batch` does not make them static one by one."""

    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(8, 8, 3, padding=1)

    def forward(self, x):
        y = torch.relu(self.conv1(x))
        y = y - y.mean(0, keepdim=True)
        return torch.nn.functional.max_pool2d(torch.relu(self.conv2(y)), 2).sum((2, 3))


def test_a_static_version_reads_its_padding_in_place_beside_a_dynamic_fallback(tmp_path):
    """dync-fuse-padding (the low-memory pipeline) per entry point: the batch-1 version fuses
    its padding, the dynamic `main` keeps its padded copies (IREE cannot compile them fused),
    both agree with eager."""
    torch.manual_seed(0)
    model = PaddedCNN().eval()
    batch = torch.export.Dim("batch", min=1, max=8)
    compiled = dync.compile(model, (torch.randn(2, 3, 16, 16),), dynamic_shapes=({0: batch},),
                            specialize={"batch": [1]}, cache=False,
                            passes=dync.passes.LOW_MEMORY_PIPELINE)
    flags = compiled.report.flags
    assert "--iree-dispatch-creation-enable-fuse-padding-into-linalg-consumer-ops" in flags
    assert any(f.startswith("--iree-preprocessing-transform-spec-filename=") for f in flags)
    one, three = torch.randn(1, 3, 16, 16), torch.randn(3, 3, 16, 16)
    for x in (one, three):
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-5, atol=1e-5)
    # The version holds no padded copy: below the fallback at the same batch of 1, as the
    # plan predicts.
    peak = compiled.report.peak
    assert set(peak["versions"]) == {"main__batch_1"}
    version, fallback = measure_dync(compiled, (one,)), measure_dync(compiled, (one,), "main")
    assert (version.function, fallback.function) == ("main__batch_1", "main")
    assert version.peak < fallback.peak
    # Saved, the module keeps the transform spec beside it and its manifest's flags name that
    # copy: they reproduce the compile after the temp directory is gone.
    spec = next(f for f in flags if f.startswith(TRANSFORM_SPEC + "=")).partition("=")[2]
    saved = compiled.save(tmp_path / "padded.vmfb")
    copy = saved.with_suffix(".spec.mlir")
    assert copy.read_text() == Path(spec).read_text()
    manifest = json.loads(manifest_path(saved).read_text())
    assert f"{TRANSFORM_SPEC}={copy.resolve()}" in manifest["flags"]
    assert spec not in " ".join(manifest["flags"])
    torch.testing.assert_close(dync.load(saved)(one), model(one), rtol=1e-5, atol=1e-5)


def test_a_version_over_one_of_two_dims_keeps_the_other_dynamic():
    """`dync-rdp` binds a version's argument (static W, dynamic H) at the top of the body,
    before the literals the exporter declares H after: the declaration moves up with it
    (without, IREE refused the IR: "operand #1 does not dominate this use")."""
    model = seeded(PaddedConvNet)
    h, w = torch.export.Dim("h", min=13, max=48), torch.export.Dim("w", min=13, max=48)
    compiled = dync.compile(model, (torch.randn(1, 3, 20, 24),),
                            dynamic_shapes=({2: h, 3: w},), specialize={"w": [24]})
    assert [v["function"] for v in compiled.report.versions] == ["main__w_24"]
    for size, function in [((31, 24), "main__w_24"), ((13, 24), "main__w_24"),
                           ((20, 23), "main")]:
        x = torch.randn(1, 3, *size)
        assert compiled.versions.choose(
            compiled.signature.check_inputs([x.numpy()])).function == function
        for a, b in zip(compiled(x), model(x), strict=True):
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)
