"""Shared, session-scoped compiled modules: each model is compiled once per test run."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from models import BATCH, CondNet, LoopNet, seeded  # noqa: E402

import dync  # noqa: E402


@pytest.fixture(scope="session")
def cond_model():
    return seeded(CondNet)


@pytest.fixture(scope="session")
def cond_compiled(cond_model):
    import torch

    return dync.compile(cond_model, (torch.randn(4, 8),), dynamic_shapes=({0: BATCH},))


@pytest.fixture(scope="session")
def loop_model():
    return seeded(LoopNet)


@pytest.fixture(scope="session")
def loop_compiled(loop_model):
    import torch

    return dync.compile(loop_model, (torch.randn(4, 8),), dynamic_shapes=({0: BATCH},))


@pytest.fixture(scope="session")
def cond_arm(cond_model):
    import torch

    return dync.compile(
        cond_model, (torch.randn(4, 8),), dynamic_shapes=({0: BATCH},),
        backend="arm", target="jetson-orin",
    )


@pytest.fixture(scope="session")
def cond_cuda(cond_model):
    import torch

    return dync.compile(
        cond_model, (torch.randn(4, 8),), dynamic_shapes=({0: BATCH},),
        backend="cuda", target="jetson-orin",
    )
