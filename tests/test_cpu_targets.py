"""Every suite model compiles for the x86 CPUs people deploy on, not only the machine that runs
the tests: AVX2 (`x86-64-v3`, AMD Zen 3) as well as AVX-512. Code generation for AVX2 happens
at compile time, so its failures reproduce on any machine (IREE 3.13 failed on yolo_nms's
fused-padding convolutions for AVX2, until dync-im2col took them as matmuls there)."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import dync  # noqa: E402
from benchmarks import models  # noqa: E402
from dync.targets import host_cpu, host_vector_features, host_vector_isa  # noqa: E402


def _has_avx2() -> bool:
    return "avx2" in host_cpu()[1]


# Every model for the generic AVX2 level;
# one small model for a named AVX2 CPU (AMD Zen 3): IREE's failures follow the ISA, which the
# two share, so the name is checked, not the models again.
TARGETS = [(name, "x86-64-v3") for name in models.SUITE] + [("ranet", "znver3")]


@pytest.mark.parametrize("name,cpu", TARGETS)
def test_suite_model_compiles_for_avx2_cpus(name, cpu):
    if cpu == "x86-64-v3" and host_vector_isa() == "avx2":
        pytest.skip("this machine is an AVX2 CPU: tests/test_suite_compiled.py compiles every "
                    "suite model for it and checks it against eager")
    module = models.load(name)
    model, example, dynamic_shapes = module.build()
    compiled = dync.compile(model, example, dynamic_shapes=dynamic_shapes, target=cpu,
                            **models.compile_options(module))
    assert f"--iree-llvmcpu-target-cpu={cpu}" in compiled.report.flags
    assert compiled.report.target == cpu
    if name == "yolo_nms":
        # IREE 3.13 failed to fuse its convolutions' padding for AVX2 ("all stack allocations
        # need to be hoisted") and dync dropped pad fusion; on AVX2 dync-im2col now computes
        # those convolutions (8 channels and up) as matmuls over strips, and IREE compiles the
        # module with every option dync asked for.
        assert not [n for n in compiled.report.notes if "options dync's passes asked for" in n]
    if cpu == "x86-64-v3" and _has_avx2():  # x86-64-v3 code runs on any AVX2 machine
        result = dync.verify(model, compiled, module.inputs(8), decision=module.decision)
        assert result.eta == 0 and result.delta <= -4, result


@pytest.mark.parametrize("name", ["resnet_static", "early_exit_bert"])
def test_convolutions_and_attention_compile_for_avx512_cpus(name):
    """AVX-512 code (`x86-64-v4`) for a model of convolutions and one of attention, compiled
    with every option dync asks for, wherever the tests run. On an AVX-512 machine
    tests/test_suite_compiled.py runs such code; elsewhere it can only be compiled."""
    module = models.load(name)
    model, example, dynamic_shapes = module.build()
    compiled = dync.compile(model, example, dynamic_shapes=dynamic_shapes, target="x86-64-v4",
                            **models.compile_options(module))
    assert "--iree-llvmcpu-target-cpu=x86-64-v4" in compiled.report.flags
    assert compiled.report.mode == "in-graph", compiled.report.explain()
    assert not [n for n in compiled.report.notes if "options dync's passes asked for" in n]
    if host_vector_isa() == "avx512":
        result = dync.verify(model, compiled, module.inputs(8), decision=module.decision)
        assert result.eta == 0 and result.delta <= -4, result


def test_a_module_for_a_cpu_feature_this_cpu_lacks_is_refused_not_run(loop_compiled, tmp_path):
    """A module whose code may use a CPU feature this CPU lacks would stop the process at an
    illegal instruction: loading it is refused, naming the features and the target, on every
    path that runs it (the Python API, `dync run`)."""
    saved = loop_compiled.save(tmp_path / "loop.vmfb")
    manifest_path = saved.with_name("loop.manifest.json")
    manifest = json.loads(manifest_path.read_text())
    assert manifest["cpu_features"] == list(host_vector_features())
    manifest["cpu_features"] += ["avx10_9"]  # no CPU has it
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(dync.DyncError, match=r"compiled for target 'host', whose code uses "
                       r"CPU features this CPU \(.*\) lacks: avx10_9; run it on such a CPU"):
        dync.load(saved)(torch.randn(3, 8))
    np.save(tmp_path / "x.npy", np.ones((2, 8), np.float32))
    done = subprocess.run([sys.executable, "-m", "dync.cli", "run", str(saved), "--input",
                           f"@{tmp_path / 'x.npy'}"], capture_output=True, text=True)
    assert done.returncode == 1 and "lacks: avx10_9" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.skipif(host_vector_isa() == "avx512", reason="this CPU runs AVX-512 code")
def test_avx512_code_compiled_on_a_cpu_without_it_is_not_run_here():
    """Compiling for `x86-64-v4` on an AVX2 CPU: the first call is not checked (the report says
    why) and calling the module is a clear error, not an illegal instruction."""
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU())
    compiled = dync.compile(model, (torch.randn(2, 8),), target="x86-64-v4")
    assert "avx512f" in compiled.manifest.cpu_features
    assert [n for n in compiled.report.notes if n.startswith("the first call was not checked")
            and "avx512f" in n]
    with pytest.raises(dync.DyncError, match="lacks: avx512bw, avx512cd, avx512dq, avx512f"):
        compiled(torch.randn(2, 8))


class ZeroStateRecurrence(torch.nn.Module):
    """An RNN from its default zero state and a step written by hand from `new_zeros`: the
    product of a zero fill and a weight over a dynamic batch."""

    def __init__(self):
        super().__init__()
        self.rnn = torch.nn.RNN(12, 8, nonlinearity="relu", batch_first=True)
        self.cell = torch.nn.Linear(8, 8)

    def forward(self, x):
        out, h = self.rnn(x)
        return out[:, -1] + self.cell(h[0].new_zeros(x.shape[0], 8)) + h[0]


@pytest.mark.skipif(not _has_avx2(), reason="x86-64-v3 code runs only on an AVX2 CPU")
def test_a_product_of_a_zero_state_is_right_in_avx2_code():
    """IREE 3.13's AVX2 code read the wrong buffer for a zero fill times a weight from 64 rows
    on (lit/upstream/iree-zero-fill-matmul.mlir; dync-distinct-fills routes around it): an
    nn.RNN's first step was garbage at batch 64 and right at 63."""
    from torch.export import Dim

    torch.manual_seed(0)
    model = ZeroStateRecurrence().eval()
    compiled = dync.compile(model, (torch.randn(4, 3, 12),), target="x86-64-v3", cache=False,
                            dynamic_shapes=({0: Dim("batch", min=2, max=100)},))
    for batch in (63, 64, 100):
        x = torch.randn(batch, 3, 12)
        with torch.no_grad():
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-5)
