"""`dync-isolate-subdnns`: a gated CNN computes what eager does on every path, with and without
the pass, and IREE's measured peak falls with it (the lit file pins the IR itself). Compiled
with the low-memory pipeline: with padded copies (the default) each block's input is held
beside its copy whatever the pass does."""

import subprocess
import sys
from pathlib import Path

import pytest
import torch

import dync
from dync.passes import LOW_MEMORY_PIPELINE

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.memory import measure_dync  # noqa: E402
from tests.models import GatedConvBlocks, assert_every_path_matches  # noqa: E402

WITHOUT = tuple(p for p in LOW_MEMORY_PIPELINE if p != "dync-isolate-subdnns")
ACTIVATION = 16 * 32 * 32 * 4  # bytes of one 16 x 32 x 32 float activation


def _inputs() -> list[torch.Tensor]:
    """Inputs that between them run and skip every block."""
    generator = torch.Generator().manual_seed(3)
    return [torch.randn(1, 3, 32, 32, generator=generator) * s + b
            for s in (0.5, 1.0, 2.0) for b in (-1.0, 0.0, 1.0)]


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    torch.manual_seed(0)
    model = GatedConvBlocks().eval()
    model.calibrate(_inputs())
    ir = tmp_path_factory.mktemp("isolate") / "gated.mlir"
    modules = {"with": dync.compile(model, (torch.randn(1, 3, 32, 32),), dump_ir=ir,
                                    passes=LOW_MEMORY_PIPELINE),
               "without": dync.compile(model, (torch.randn(1, 3, 32, 32),), passes=WITHOUT)}
    return model, modules, ir


def _path(model, x) -> tuple[bool, ...]:
    """Which blocks run on `x`."""
    ran = []
    x = model.stem(x).relu()
    for block, gate in zip(model.blocks, model.gates, strict=True):
        ran.append(bool(gate(x).mean() > 0))
        if ran[-1]:
            x = (x + block(x)).relu()
    return tuple(ran)


def test_every_path_computes_what_eager_does(compiled):
    model, modules, _ = compiled
    assert_every_path_matches(model, modules.values(), _inputs(), _path)


def test_barriers_and_nhwc_crossings_reach_iree(compiled):
    _, _, ir = compiled
    text = ir.read_text()
    assert "util.optimization_barrier" in text
    assert "tensor<1x32x32x16xf32>" in text  # an activation crossing in NHWC
    # what was dumped is what iree-compile reads (IREE 3.13 prints one attribute it cannot parse)
    parsed = subprocess.run([str(Path(sys.executable).parent / "iree-opt"), str(ir)],
                            capture_output=True, text=True, timeout=300)
    assert parsed.returncode == 0, parsed.stderr[-2000:]


def test_measured_peak_falls(compiled):
    """Without the pass IREE keeps a padded copy and an NCHW copy of the activation alive
    across the gated blocks; with it the peak is a few activations, below the other."""
    _, modules, _ = compiled
    x = _inputs()[4]
    with_pass = measure_dync(modules["with"], (x,)).peak
    without = measure_dync(modules["without"], (x,)).peak
    assert with_pass < without
    assert with_pass <= 3 * ACTIVATION  # eager PyTorch: 3 activations too
