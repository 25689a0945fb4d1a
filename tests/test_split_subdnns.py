"""`dync-split-subdnns` on real models: the split module still compiles with IREE and matches
eager on inputs that take every branch; on IR it cannot outline, it leaves runs alone."""

import re

import pytest
import torch
from conftest import compile_batch_model
from iree.compiler import ir
from models import BATCH, SIZES, CondNet, LoopNet, assert_loop_matches, cond_inputs, seeded
from torch import nn

import dync
from dync.dialects.assembly import module_text
from dync.frontends.pytorch.export import import_module
from dync.passes import lower_control_flow, run_pipeline, with_required_passes

PASSES = ("dync-canonicalize", "dync-split-subdnns", "dync-check-ir")


class EarlyExit(nn.Module):
    """Two data-dependent early exits (plain Python `if`s), all three paths through one head."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 8)
        self.head = nn.Linear(8, 4)

    def forward(self, x):
        h = self.a(x).relu()
        if x.mean() > 0:
            return self.head(h)
        h = self.b(h)
        if x.sum() < -4:
            return self.head(h.relu())
        return self.head(h) - 1.0


def _split(model, example, dynamic_shapes):
    """The model compiled with `PASSES` (and the passes every compile adds), and its IR after
    `PASSES` alone: the sub-DNNs are inlined again before IREE (`dync-inline-subdnns`)."""
    compiled = dync.compile(model, example, dynamic_shapes=dynamic_shapes, passes=PASSES)
    with ir.Context() as context:
        program = import_module(model, example, dynamic_shapes, context,
                                lower=lower_control_flow)
        run_pipeline(program.module, PASSES)
        return compiled, module_text(program.module)


def _subdnns(text: str) -> set[str]:
    """The names of the sub-DNN functions, checked against the module's `dync.subdnns`."""
    defined = set(re.findall(r"func\.func private @(subdnn_\d+)\(", text))
    recorded = set(re.findall(r'name = "(subdnn_\d+)"', text))
    assert defined == recorded
    return defined


@pytest.fixture(scope="module")
def cond_split():
    model = seeded(CondNet)
    return model, compile_batch_model(model, passes=PASSES)


@pytest.mark.parametrize("batch", SIZES)
@pytest.mark.parametrize("positive", [True, False], ids=["true_branch", "false_branch"])
def test_cond_split_matches_eager(cond_split, batch, positive):
    model, compiled = cond_split
    x = cond_inputs(batch, positive)
    torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-5)
    assert compiled.report.passes == list(with_required_passes(PASSES))


def test_while_loop_split_matches_eager():
    model = seeded(LoopNet)
    compiled, text = _split(model, (torch.randn(4, 8),), ({0: BATCH},))
    assert _subdnns(text)
    # The loop stays in the skeleton and calls a sub-DNN; no tensor op is left in @main.
    main = text[text.index("@main("):]
    main = main[: main.index("\n  }\n")]
    assert "scf.while" in main and "call @subdnn_" in main
    assert "torch.aten." not in main
    trips = set()
    for batch, scale in [(1, 0.01), (7, 3.0), (33, 0.5)]:
        trips.add(assert_loop_matches(model, compiled, batch, scale))
    assert len(trips) >= 2, trips


def test_nested_early_exits_split_matches_eager():
    model = seeded(EarlyExit)
    compiled, text = _split(model, (torch.randn(2, 8),), None)
    assert len(_subdnns(text)) >= 3
    torch.manual_seed(1)
    for exit_ in range(3):
        for _ in range(4):
            x = torch.rand(2, 8) + 0.1
            x = x if exit_ == 0 else -x - 1.0 if exit_ == 1 else -x * 0.01
            assert (x.mean() > 0, x.sum() < -4) == [(True, False), (False, True),
                                                    (False, False)][exit_]
            with torch.no_grad():
                want = model(x)
            torch.testing.assert_close(compiled(x), want, rtol=1e-4, atol=1e-5)


def test_runs_whose_boundary_carries_a_list_stay_in_the_skeleton():
    """A `!torch.list` made by an aten op cannot cross a call: the run that makes it and the run
    that uses it are left alone, the pass does not fail, and the next run is outlined."""
    text = """
    module attributes {dync.symbols = {}} {
      func.func @main(%arg0: !torch.vtensor<[2,4],f32> {dync.shape = [2, 4]}) -> (!torch.vtensor<[2,4],f32> {dync.shape = [2, 4]}) attributes {dync.entry} {
        %0 = torch.aten.size %arg0 : !torch.vtensor<[2,4],f32> -> !torch.list<int>
        %1 = torch_c.to_builtin_tensor %arg0 : !torch.vtensor<[2,4],f32> -> tensor<2x4xf32>
        %2 = torch_c.from_builtin_tensor %1 : tensor<2x4xf32> -> !torch.vtensor<[2,4],f32>
        %3 = torch.aten.view %2, %0 : !torch.vtensor<[2,4],f32>, !torch.list<int> -> !torch.vtensor<[2,4],f32>
        %4 = torch_c.to_builtin_tensor %3 : !torch.vtensor<[2,4],f32> -> tensor<2x4xf32>
        %5 = torch_c.from_builtin_tensor %4 : tensor<2x4xf32> -> !torch.vtensor<[2,4],f32>
        %6 = torch.aten.relu %5 : !torch.vtensor<[2,4],f32> -> !torch.vtensor<[2,4],f32>
        return %6 : !torch.vtensor<[2,4],f32>
      }
    }"""
    with ir.Context():
        module = ir.Module.parse(text)
        run_pipeline(module, ["dync-split-subdnns", "dync-check-ir"])
        main, subdnn = str(module).split("func.func private @subdnn_0")
    assert "torch.aten.size %arg0" in main and "torch.aten.view" in main
    assert "call @subdnn_0" in main and "torch.aten.relu" not in main
    assert "torch.aten.relu" in subdnn


def test_default_pipeline_splits_and_reports_the_subdnns():
    torch.manual_seed(0)
    model = EarlyExit().eval()
    compiled = dync.compile(model, (torch.randn(2, 8),))
    report = compiled.report
    assert "dync-split-subdnns" in report.passes
    assert report.subdnns and all(d["name"].startswith("subdnn_") for d in report.subdnns)
    here = __file__.rsplit("/", 1)[-1]
    assert any(here in d["source"] for d in report.subdnns)
    assert all(d["ops"] > 0 and d["calls"] > 0 for d in report.subdnns)
    assert any(d["arguments"] == ["[2, 8]"] for d in report.subdnns)
    assert "sub-DNN subdnn_0 (" in str(report)
    for scale in (1.0, -0.1, -3.0):
        x = torch.randn(2, 8) * scale
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-5)
