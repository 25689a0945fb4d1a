"""`dync-sink-into-branches`: a BlockDrop-like network computes what eager does on every path,
with and without the pass, and IREE's measured peak falls with it (the lit file pins the IR)."""

import sys
from pathlib import Path

import pytest
import torch
from torch.export import Dim

import dync
from dync.passes import DEFAULT_PIPELINE

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.memory import measure_dync  # noqa: E402
from tests.models import PolicyGatedBlocks, assert_every_path_matches  # noqa: E402

WITHOUT = tuple(p for p in DEFAULT_PIPELINE if p != "dync-sink-into-branches")
ACTIVATION = 16 * 32 * 32 * 4  # bytes of one 16 x 32 x 32 float activation, per sample


def _inputs() -> list[torch.Tensor]:
    """Batches whose policy keeps and drops each block (channel means steer the policy)."""
    generator = torch.Generator().manual_seed(5)
    shifts = torch.tensor([[1.0, -1.0, 0.5], [-1.0, 1.0, -0.5], [2.0, 2.0, -2.0],
                           [-2.0, -2.0, 2.0]])
    return [torch.randn(b, 3, 32, 32, generator=generator) + s.view(1, 3, 1, 1) * k
            for s in shifts for k in (1.0, 3.0) for b in (1, 2)]


@pytest.fixture(scope="module")
def compiled():
    torch.manual_seed(0)
    model = PolicyGatedBlocks(blocks=4).eval()
    example, shapes = (torch.randn(2, 3, 32, 32),), ({0: Dim("batch", min=1, max=4)},)
    return model, {"with": dync.compile(model, example, dynamic_shapes=shapes),
                   "without": dync.compile(model, example, dynamic_shapes=shapes,
                                           passes=WITHOUT)}


def _path(model, x) -> tuple[bool, ...]:
    keep = (torch.sigmoid(model.policy(x.mean(dim=(2, 3)))) > 0.5).float()
    return tuple(bool(keep[:, i].sum() != 0) for i in range(keep.shape[1]))


def test_every_path_computes_what_eager_does(compiled):
    model, modules = compiled
    assert_every_path_matches(model, modules.values(), _inputs(), _path)


def test_measured_peak_falls(compiled):
    """Without the pass the stem's output shares the policy's allocation and lives through
    every block; with it the stem runs inside the first block's branch, freed after it."""
    model, modules = compiled
    x = max((x for x in _inputs() if len(x) == 1), key=lambda x: sum(_path(model, x)))
    assert sum(_path(model, x)) >= 3
    with_pass = measure_dync(modules["with"], (x,)).peak
    without = measure_dync(modules["without"], (x,)).peak
    assert with_pass <= without - ACTIVATION // 2, (with_pass, without)
