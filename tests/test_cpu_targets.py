"""Every suite model compiles for the x86 CPUs people deploy on, not only the machine that runs
the tests: AVX2 (`x86-64-v3`, AMD Zen 3) as well as AVX-512. Code generation for AVX2 happens
at compile time, so its failures reproduce on any machine (IREE 3.13 failed on yolo_nms's
fused-padding convolutions for AVX2, until dync-im2col took them as matmuls there)."""

import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import dync  # noqa: E402
from benchmarks import models  # noqa: E402


def _has_avx2() -> bool:
    try:
        return "avx2" in Path("/proc/cpuinfo").read_text().split()
    except OSError:
        return False


# Every model for the generic AVX2 level;
# one small model for a named AVX2 CPU (AMD Zen 3): IREE's failures follow the ISA, which the
# two share, so the name is checked, not the models again.
TARGETS = [(name, "x86-64-v3") for name in models.SUITE] + [("ranet", "znver3")]


@pytest.mark.parametrize("name,cpu", TARGETS)
def test_suite_model_compiles_for_avx2_cpus(name, cpu):
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
