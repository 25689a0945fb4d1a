"""Shared, session-scoped compiled modules: each model is compiled once per test run. The
compile cache of the run is a fresh directory, so no entry from an earlier run is reused."""

import os
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
os.environ["DYNC_CACHE_DIR"] = tempfile.mkdtemp(prefix="dync-test-cache-")

from models import BATCH, CondNet, LoopNet, seeded  # noqa: E402

import dync  # noqa: E402


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
