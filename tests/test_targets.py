"""Cross-compilation for CUDA and ARM; ARM modules run under qemu-aarch64, CUDA on a GPU."""

import numpy as np
import pytest
import torch
from models import SIZES, cond_inputs

import dync
from dync import targets


def test_presets_are_data():
    assert set(targets.backends()) == {"arm", "cuda", "llvm-cpu"}
    assert "--iree-cuda-target=sm_87" in targets.resolve("cuda", "jetson-orin").flags
    assert "--iree-cuda-target=sm_72" in targets.resolve("cuda", "jetson-xavier").flags
    assert "--iree-cuda-target=sm_80" in targets.resolve("cuda", "h100").flags
    assert "--iree-cuda-target=sm_80" in targets.resolve("cuda", "a100").flags
    orin_cpu = targets.resolve("arm", "jetson-orin").flags
    assert "--iree-llvmcpu-target-triple=aarch64-linux-gnu" in orin_cpu
    assert "--iree-llvmcpu-target-cpu=cortex-a78ae" in orin_cpu
    assert "--iree-llvmcpu-target-cpu=carmel" in targets.resolve("arm", "jetson-xavier").flags
    assert targets.resolve("arm").name == "generic"


def test_cuda_module_compiles_and_saves(cond_cuda, tmp_path):
    assert cond_cuda.backend == "cuda" and cond_cuda.target == "jetson-orin"
    assert "--iree-cuda-target=sm_87" in cond_cuda.report.flags
    path = cond_cuda.save(tmp_path / "cond_cuda.vmfb")
    assert dync.load(path).backend == "cuda"


def test_arm_module_refuses_to_run_on_x86(cond_arm):
    with pytest.raises(dync.DyncError, match="cannot run on this"):
        cond_arm(torch.randn(2, 8))


def test_arm_vmfb_runs_under_qemu_and_matches_eager(cond_model, cond_arm, qemu_runner, tmp_path):
    path = cond_arm.save(tmp_path / "cond_arm.vmfb")
    loaded = dync.load(path)  # what runs is exactly what save() wrote
    assert loaded.vmfb == path.read_bytes()
    for batch in SIZES:
        for positive in (True, False):
            x = cond_inputs(batch, positive)
            (y,) = qemu_runner.run(path, [x.numpy()], num_outputs=1)
            np.testing.assert_allclose(y, cond_model(x).detach().numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.gpu
def test_cuda_module_runs_on_gpu_and_matches_eager(cond_model):
    from conftest import compile_batch_model

    compiled = compile_batch_model(cond_model, backend="cuda", target="h100")
    for batch in SIZES:
        for positive in (True, False):
            x = cond_inputs(batch, positive)
            torch.testing.assert_close(compiled(x), cond_model(x), rtol=1e-4, atol=1e-5)


@pytest.mark.gpu
def test_cuda_while_loop_runs_on_gpu_and_matches_eager(loop_model):
    """A data-dependent trip count on the GPU: the loop's condition is read back each step."""
    from conftest import compile_batch_model
    from models import assert_loop_matches

    compiled = compile_batch_model(loop_model, backend="cuda", target="h100")
    trips = {assert_loop_matches(loop_model, compiled, batch, scale)
             for batch in SIZES for scale in (0.01, 3.0)}
    assert len(trips) > 1, "the inputs must take the loop a different number of times"
