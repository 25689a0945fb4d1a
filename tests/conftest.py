"""Shared, session-scoped compiled modules: each model is compiled once per test run (per
xdist worker; a compile two workers repeat is a hit in the run's cache). The compile cache
of the run is a fresh directory, so no entry from an earlier run is reused.

The platforms some tests need are probed here, once: a test marked `gpu` skips only where
there is no NVIDIA GPU, and `qemu_runner` skips only where there is no qemu-aarch64. Where
the platform is present, a failure to use it fails the test."""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
# One cache for the run, shared by the xdist workers (they inherit the controller's
# environment; entries are written by atomic rename, so concurrent compiles are safe).
if "PYTEST_XDIST_WORKER" not in os.environ or "DYNC_CACHE_DIR" not in os.environ:
    os.environ["DYNC_CACHE_DIR"] = tempfile.mkdtemp(prefix="dync-test-cache-")
# The xdist workers share the cores: each worker's eager torch (and the processes a test starts)
# gets its share of them. Two workers of two OpenMP threads each on two cores spin against each
# other: a suite model's eager calibration and compile took 100 s instead of 42.
if "PYTEST_XDIST_WORKER_COUNT" in os.environ:
    _share = max(1, (os.cpu_count() or 1) // int(os.environ["PYTEST_XDIST_WORKER_COUNT"]))
    os.environ["OMP_NUM_THREADS"] = str(_share)  # read when torch loads, here and in subprocesses
    import torch

    torch.set_num_threads(_share)  # in case a plugin loaded torch first

import aarch64  # noqa: E402
from models import BATCH, CondNet, LoopNet, seeded  # noqa: E402

import dync  # noqa: E402
from dync.runtime import invoke  # noqa: E402

# Every argument a module lets IREE take without a copy is imported, whatever its size (the
# runtime's threshold is for speed alone): so every test's call, and the check in each compile's
# first call that the inputs are left as they were, tries `iree_mends.argument_writes`' verdict.
invoke._IMPORT_FROM = 1


def compile_batch_model(model, **options):
    """Compile `model` with one (4, 8) example input whose dim 0 is the `batch` symbol."""
    import torch

    return dync.compile(model, (torch.randn(4, 8),), dynamic_shapes=({0: BATCH},), **options)


@pytest.fixture(scope="session")
def cond_model():
    return seeded(CondNet)


@pytest.fixture(scope="session")
def loop_model():
    return seeded(LoopNet)


@pytest.fixture(scope="session")
def cond_compiled(cond_model):
    return compile_batch_model(cond_model)


@pytest.fixture(scope="session")
def loop_compiled(loop_model):
    return compile_batch_model(loop_model)


@pytest.fixture(scope="session")
def cond_arm(cond_model):
    return compile_batch_model(cond_model, backend="arm", target="jetson-orin")


@pytest.fixture(scope="session")
def cond_cuda(cond_model):
    return compile_batch_model(cond_model, backend="cuda", target="jetson-orin")


def gpu_absent() -> str | None:
    """Why there is no NVIDIA GPU here, or None when `nvidia-smi -L` lists one."""
    if shutil.which("nvidia-smi") is None:
        return "no NVIDIA GPU here (no nvidia-smi on PATH)"
    try:
        listed = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True,
                                timeout=60, check=False)
    except subprocess.TimeoutExpired:
        return None  # a driver that hangs is present and broken: let the tests say so
    if not any(line.startswith("GPU ") for line in listed.stdout.splitlines()):
        said = " ".join((listed.stdout + listed.stderr).split())[:200]
        return f"no NVIDIA GPU here (nvidia-smi -L lists none: {said or 'no output'})"
    return None


def pytest_collection_modifyitems(config, items):
    gpu_tests = [item for item in items if item.get_closest_marker("gpu")]
    reason = gpu_absent() if gpu_tests else None
    if reason:
        for item in gpu_tests:
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def qemu_runner() -> aarch64.Aarch64Runner:
    """Runs aarch64 modules under qemu (set up by `python tests/aarch64.py`). Skips where
    there is no qemu-aarch64; raises where qemu is here but the runner is broken."""
    runner = aarch64.find_runner(aarch64.default_cache_dir())
    if runner is None:
        pytest.skip("no qemu-aarch64 here: `python tests/aarch64.py` installs it and the "
                    "aarch64 iree-run-module (README, \"Run the tests\")")
    return runner
