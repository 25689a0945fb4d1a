"""`dync-rdp` in `dync.compile`: it runs by default, its coverage reaches the report, and the
shape facts it writes back keep compiled models exact (PyTorch and ONNX)."""

import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
import torch
from onnx.reference import ReferenceEvaluator
from onnx_models import if_model
from torch.export import Dim

import dync
from dync.passes import DEFAULT_PIPELINE

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.models import blockdrop  # noqa: E402


class Pyramid(torch.nn.Module):
    """Strided conv, pooling and a view whose size is computed from the input's shape."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, stride=2, padding=1)

    def forward(self, x):
        y = torch.nn.functional.max_pool2d(torch.relu(self.conv(x)), 2)
        flat = y.reshape(y.shape[0], -1)
        return flat, flat.sum(-1)


@pytest.fixture(scope="module")
def pyramid():
    torch.manual_seed(0)
    model = Pyramid().eval()
    h = Dim("h", min=8, max=64)
    compiled = dync.compile(model, (torch.randn(2, 3, 16, 16),),
                            dynamic_shapes=({0: Dim("n", min=1, max=4), 2: h, 3: h},))
    return model, compiled


def test_rdp_runs_by_default_and_reports_coverage(pyramid):
    _, compiled = pyramid
    report = compiled.report
    assert "dync-rdp" in DEFAULT_PIPELINE and "dync-rdp" in report.passes
    assert report.rdp["unknown"] == 0 and report.rdp["symbolic"] > 0 and report.rdp["static"] > 0
    assert report.rdp["classes"]["ISDOS"] > 0
    assert report.dispatches > 0
    text = str(report)
    assert "rdp: " in text and "unknown (0.0%)" in text and "dispatches" in text


@pytest.mark.parametrize("n,h", [(1, 8), (3, 23), (4, 64)])
def test_model_with_symbolic_conv_sizes_matches_eager(pyramid, n, h):
    model, compiled = pyramid
    x = torch.randn(n, 3, h, h)
    for got, want in zip(compiled(x), model(x), strict=True):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)


def test_without_rdp_the_report_says_so():
    model = torch.nn.Linear(4, 4).eval()
    compiled = dync.compile(model, (torch.randn(2, 4),), passes=("dync-canonicalize",))
    assert compiled.report.rdp == {} and "rdp: not run" in str(compiled.report)


def test_onnx_model_gets_shape_facts_and_stays_exact(tmp_path):
    """The ONNX importer's IR carries no symbolic bindings; RDP's are what IREE sees."""
    path = tmp_path / "if.onnx"
    onnx.save(if_model(), path)
    ir_file = tmp_path / "dync.mlir"
    compiled = dync.compile(str(path), dynamic_shapes={"x": {0: ("batch", 1, 64)}}, dump_ir=ir_file)
    assert "torch.bind_symbolic_shape" in ir_file.read_text()
    assert compiled.report.rdp["unknown"] == 0
    reference = ReferenceEvaluator(str(path))
    rng = np.random.default_rng(0)
    for batch, sign in ((1, 1.0), (5, -1.0), (64, 1.0)):
        x = (sign * (rng.random((batch, 8)) + 0.05)).astype(np.float32)
        (expected,) = reference.run(None, {"x": x})
        np.testing.assert_allclose(compiled(x)[0], expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["early_exit_bert", "moe"])
def test_rdp_alone_agrees_with_torch_export(name):
    """RDP ignoring torch.export's own bindings derives the same dims for every value torch
    bound over input symbols (torch's unbacked symbols are RDP's fresh ones under another
    name), and leaves no dim unknown."""
    import re
    import sys
    from pathlib import Path

    import sympy
    from iree.compiler import ir

    from dync.frontends.pytorch.export import import_module
    from dync.passes import lower_control_flow
    from dync.passes.rdp import Analysis

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from benchmarks.models import load

    model, example, dynamic_shapes = load(name).build()
    with ir.Context() as ctx:
        program = import_module(model, example, dynamic_shapes, ctx, lower=lower_control_flow)
        analysis = Analysis(program.module.operation)
        torch_facts = dict(analysis.bound)
        analysis.bound.clear()
        analysis.solve()
        inputs = {s for s in program.signature.symbols if not re.fullmatch(r"u\d+", s)}
        compared = 0
        for value, dims in torch_facts.items():
            for ours, theirs in zip(analysis.fact(value).shape, dims, strict=True):
                if {s.name for s in theirs.free_symbols} <= inputs:
                    assert sympy.simplify(ours - theirs) == 0, (value, ours, theirs)
                    compared += 1
        assert compared > 100
        assert analysis.coverage()["unknown"] == 0


def test_a_long_chain_of_branch_calls_reaches_the_fixpoint():
    """BlockDrop's batch-1 version: 9 gated blocks, 18 branch-function calls in a row. Facts
    cross one call per round, so the fixpoint needs 20 rounds; with a fixed bound of 12 the
    solver stopped early and the last blocks kept an unknown batch."""
    from iree.compiler import ir

    from dync.dialects.assembly import module_text
    from dync.dialects.versions import request_versions
    from dync.frontends.pytorch.export import import_module
    from dync.passes import lower_control_flow, run_pipeline

    model, example, shapes = blockdrop.build()
    upto = DEFAULT_PIPELINE[:DEFAULT_PIPELINE.index("dync-rdp") + 1]
    with ir.Context() as ctx:
        program = import_module(model, example, shapes, ctx, lower=lower_control_flow)
        request_versions(program.module, [{"batch": 1}])
        run_pipeline(program.module, upto)
        text = module_text(program.module)
    last = text[text.index("func.func private @false_graph_8__batch_1("):]
    last = last[:last.index("\n  }\n")]
    assert "-> !torch.vtensor<[1,64,8,8],f32>" in last
    assert "-> !torch.vtensor<[?,64,8,8],f32>" not in last
