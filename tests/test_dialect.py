"""dync IR conventions: builders, reader, verifier, MLIR text round trip; the pass runner."""

import pytest
from iree.compiler import ir

from dync.dialects import dync_ir
from dync.errors import CompilationError
from dync.passes import parse_pipeline, registry, run_pipeline
from dync.signature import Signature, SymbolSpec, TensorSpec

MODULE = """
func.func @main(%arg0: !torch.vtensor<[?,8],f32>) -> !torch.vtensor<[?,16],f32> {
  %0 = torch.symbolic_int "batch" {min_val = 1, max_val = 64} : !torch.int
  %int1 = torch.constant.int 1
  %l = torch.prim.ListConstruct %arg0, %arg0 : (!torch.vtensor<[?,8],f32>, !torch.vtensor<[?,8],f32>) -> !torch.list<vtensor>
  %1 = torch.aten.cat %l, %int1 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[?,16],f32>
  return %1 : !torch.vtensor<[?,16],f32>
}
"""
SIGNATURE = Signature(
    inputs=[TensorSpec("x", "float32", ("batch", 8))],
    outputs=[TensorSpec("y", "float32", ("batch", 16))],
    symbols={"batch": SymbolSpec("batch", 1, 64)},
)


def test_builders_round_trip_through_text():
    with ir.Context():
        module = ir.Module.parse(MODULE)
        dync_ir.set_entry_signature(module, SIGNATURE)
        assert dync_ir.check_ir(module) == []
        text = str(module)
        assert 'dync.shape = ["batch", 8]' in text
        reparsed = ir.Module.parse(text)
        assert dync_ir.read_symbols(reparsed) == SIGNATURE.symbols
        assert str(reparsed) == text


def test_verifier_reports_each_problem():
    bad = Signature(
        inputs=[TensorSpec("x", "float32", ("batch", 9))],
        outputs=[TensorSpec("y", "float32", ("seq", 16))],
        symbols={"batch": SymbolSpec("batch", 5, 2)},
    )
    with ir.Context():
        module = ir.Module.parse(MODULE)
        dync_ir.set_entry_signature(module, bad)
        problems = "\n".join(dync_ir.check_ir(module))
    assert "empty or negative range [5, 2]" in problems
    assert "dim 1: dync.shape says 9, type says 8" in problems
    assert "undeclared symbol(s) ['seq']" in problems
    assert "disagrees with dync.symbols" in problems


def test_pipeline_mixes_dync_and_upstream_passes():
    assert {"dync-check-ir", "dync-canonicalize"} <= set(registry())
    assert parse_pipeline("builtin.module(dync-canonicalize,func.func(cse),dync-check-ir)") == [
        "dync-canonicalize", "func.func(cse)", "dync-check-ir"]
    with ir.Context():
        module = ir.Module.parse(MODULE)
        dync_ir.set_entry_signature(module, SIGNATURE)
        run_pipeline(module, ["dync-canonicalize", "canonicalize", "dync-check-ir"])
        with pytest.raises(CompilationError, match="cannot parse"):
            run_pipeline(module, ["no-such-pass"])


def test_failing_dync_pass_raises_with_its_message():
    with ir.Context():
        module = ir.Module.parse(MODULE)  # no dync.entry: verify must fail
        with pytest.raises(CompilationError, match="no function carries dync.entry"):
            run_pipeline(module, ["dync-check-ir"])


def test_a_crashing_pass_fails_the_pipeline_not_the_process(monkeypatch):
    import sys
    import types

    from dync.passes import pipeline

    class Boom(pipeline.Pass):
        name = "dync-boom"
        summary = "raises"

        def run(self, module):
            raise KeyError("oops")

    module = types.ModuleType("dync_test_boom")
    module.Boom = Boom
    monkeypatch.setitem(sys.modules, "dync_test_boom", module)
    monkeypatch.setitem(pipeline._PASS_MODULES, "dync-boom", "dync_test_boom")
    with ir.Context():
        with pytest.raises(CompilationError, match="dync-boom: internal error KeyError: 'oops'"):
            run_pipeline(ir.Module.parse("module {}"), ["dync-boom"])


def test_ir_a_pass_leaves_unverifiable_names_the_pass(monkeypatch):
    """A pass whose rewrite leaves IR that fails to verify raises nothing itself: the
    pipeline's error names the last dync pass that ran."""
    import sys
    import types

    from dync.passes import pipeline

    class DropsTheReturn(pipeline.Pass):
        name = "dync-drops-return"
        summary = "erases a function's terminator"

        def run(self, module):
            for op in module.regions[0].blocks[0].operations[0].regions[0].blocks[0].operations:
                if op.name == "func.return":
                    op.erase()
                    return

    module = types.ModuleType("dync_test_drops_return")
    module.DropsTheReturn = DropsTheReturn
    monkeypatch.setitem(sys.modules, "dync_test_drops_return", module)
    monkeypatch.setitem(pipeline._PASS_MODULES, "dync-drops-return", "dync_test_drops_return")
    with ir.Context():
        with pytest.raises(CompilationError,
                           match=r"failed \(the last dync pass to run: dync-drops-return\)"):
            run_pipeline(ir.Module.parse(MODULE), ["dync-canonicalize", "dync-drops-return"])


def test_a_pass_list_gets_the_required_passes_it_leaves_out():
    """Each where the default pipeline runs it; the list's own steps keep their order."""
    from dync.passes import (
        DEFAULT_PIPELINE,
        LOW_MEMORY_PIPELINE,
        REQUIRED_PASSES,
        with_required_passes,
    )

    assert with_required_passes(DEFAULT_PIPELINE) == DEFAULT_PIPELINE
    assert with_required_passes(LOW_MEMORY_PIPELINE) == LOW_MEMORY_PIPELINE
    completed = with_required_passes(("cse", "dync-rdp", "dync-check-ir"))
    assert completed[:5] == ("cse", "dync-canonicalize", "dync-collapse-views", "dync-pool-extents",
                             "dync-rdp")
    assert completed[-2:] == ("dync-fence-region-reads", "dync-check-ir")
    assert set(completed) == set(REQUIRED_PASSES) | {"cse", "dync-rdp"}
    assert with_required_passes(()) == tuple(p for p in DEFAULT_PIPELINE if p in REQUIRED_PASSES)


def test_a_pass_list_without_the_mends_still_compiles_right_answers():
    """Two fills of one dynamic shape, each written in place: without `dync-distinct-fills`
    IREE 3.13 merges the fills and both writes land in one buffer (a mixture of experts'
    routing was wrong by 0.42 with `passes=[]`)."""
    import torch
    from torch.export import Dim

    import dync

    class TwoFills(torch.nn.Module):
        def forward(self, x):
            a = torch.zeros_like(x)
            a[:, 0] = x[:, 1]
            b = torch.zeros_like(x)
            b[:, 0] = x[:, 2] * 3.0
            return a + 10 * b

    model = TwoFills()
    compiled = dync.compile(model, (torch.randn(4, 3),), dynamic_shapes=({0: Dim("n", max=64)},),
                            passes=(), mode="graph", cache=False)
    assert "dync-distinct-fills" in compiled.report.passes
    assert "dync-rdp" not in compiled.report.passes
    for n in (1, 5, 64):
        x = torch.randn(n, 3)
        torch.testing.assert_close(compiled(x), model(x))
