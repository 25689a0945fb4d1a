"""`dync-plan-buffers`: the predicted peak of intermediate memory is exact on a static model,
within 10% of IREE's measured allocator peak on a dynamic one, and the pass (attributes
only) changes nothing the compiled module computes."""

import sys
from pathlib import Path

import pytest
import torch
from iree.compiler import ir
from models import BATCH, LoopNet, seeded
from torch import nn
from torch.export import Dim

import dync
from dync.passes import run_pipeline
from dync.passes.plan_buffers import read_peak, symbol_values

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.memory import eager_peak_intermediates, measure_dync  # noqa: E402

# The pass needs RDP's shape facts; the rest of the default pipeline is kept out of these
# tests so that they pin this pass alone.
_PIPELINE = ("dync-canonicalize", "dync-rdp", "dync-split-subdnns", "dync-plan-buffers",
             "dync-check-ir")


def _with_plan() -> list[str]:
    return list(_PIPELINE)


def _compile(model, example, dynamic_shapes, tmp_path, name):
    path = tmp_path / f"{name}.mlir"
    compiled = dync.compile(model, example, dynamic_shapes=dynamic_shapes, passes=_with_plan(),
                            dump_ir=path)
    peak = read_peak(path.read_text())
    assert peak is not None
    return compiled, peak


class Mlp(nn.Module):
    def __init__(self, width=64, layers=3):
        super().__init__()
        self.first = nn.Linear(16, width)
        self.hidden = nn.ModuleList(nn.Linear(width, width) for _ in range(layers - 1))
        self.last = nn.Linear(width, 8)

    def forward(self, x):
        x = torch.relu(self.first(x))
        for layer in self.hidden:
            x = torch.tanh(layer(x))
        return self.last(x)


def test_static_model_peak_is_exact(tmp_path):
    """[4,16] -> [4,64] (relu in place) -> [4,64] (tanh in place) -> [4,8]: at the second
    linear both [4,64] activations are live, and the result, which IREE allocates when the
    work starts: 1024 + 1024 + 128 bytes."""
    torch.manual_seed(0)
    model = Mlp(layers=2).eval()
    x = torch.randn(4, 16)
    compiled, peak = _compile(model, (x,), None, tmp_path, "static")
    assert peak.formula == "2176" and peak.min == peak.max == 2176
    assert peak.evaluate({}) == 2176 and peak.evaluate_iree({}) == 2176
    measured = measure_dync(compiled, (x,))
    assert measured.arguments == x.numel() * 4 and measured.results == 4 * 8 * 4
    assert measured.peak == 2176
    assert eager_peak_intermediates(model, (x,)) >= measured.peak


def test_dynamic_model_prediction_within_ten_percent(tmp_path):
    torch.manual_seed(0)
    model = Mlp(layers=4).eval()
    n = Dim("n", min=1, max=64)
    compiled, peak = _compile(model, (torch.randn(5, 16),), ({0: n},), tmp_path, "dynamic")
    assert peak.symbols == {"n": (1, 64)}
    assert peak.formula == "544*n"   # two [n,64] activations and the [n,8] result
    assert (peak.min, peak.max) == (544, 544 * 64)
    for rows in (3, 50):
        x = torch.randn(rows, 16)
        values = symbol_values(compiled.signature, (x,))
        assert values == {"n": rows}
        predicted = peak.evaluate(values)
        measured = measure_dync(compiled, (x,)).peak
        assert abs(predicted - measured) <= 0.1 * measured, (rows, predicted, measured)
        assert abs(peak.evaluate_iree(values) - measured) <= 0.1 * measured
        assert measured <= eager_peak_intermediates(model, (x,))


def test_plan_changes_no_numerics(tmp_path):
    """The pass only adds discardable attributes: a data-dependent loop compiled with and
    without it gives bitwise equal results."""
    model = seeded(LoopNet)
    example = (torch.randn(4, 8),)
    planned, peak = _compile(model, example, ({0: BATCH},), tmp_path, "loop")
    plain = dync.compile(model, example, dynamic_shapes=({0: BATCH},), passes=[
        s for s in _with_plan() if s != "dync-plan-buffers"])
    for rows, scale in ((1, 0.1), (7, 1.0), (33, 3.0)):
        x = scale * torch.randn(rows, 8)
        for a, b in zip(planned(x), plain(x), strict=True):
            assert torch.equal(a, b)
    assert peak.evaluate({"batch": 7}) > 0


_BRANCHES = """
module attributes {dync.symbols = {n = {max = 64 : i64, min = 1 : i64}}} {
  func.func @main(%arg0: !torch.vtensor<[?,8],f32> {dync.shape = ["n", 8]},
                  %arg1: !torch.vtensor<[],i1> {dync.shape = []})
      -> (!torch.vtensor<[?,8],f32> {dync.shape = ["n", 8]}) attributes {dync.entry} {
    %c = torch_c.to_builtin_tensor %arg1 : !torch.vtensor<[],i1> -> tensor<i1>
    %p = tensor.extract %c[] : tensor<i1>
    %0 = scf.if %p -> (tensor<?x8xf32>) {
      %int0 = torch.constant.int 0
      %int1 = torch.constant.int 1
      %t = torch.aten.transpose.int %arg0, %int0, %int1 : !torch.vtensor<[?,8],f32>, !torch.int, !torch.int -> !torch.vtensor<[8,?],f32>
      %g = torch.aten.mm %arg0, %t : !torch.vtensor<[?,8],f32>, !torch.vtensor<[8,?],f32> -> !torch.vtensor<[?,?],f32>
      %y = torch.aten.mm %g, %arg0 : !torch.vtensor<[?,?],f32>, !torch.vtensor<[?,8],f32> -> !torch.vtensor<[?,8],f32>
      %b = torch_c.to_builtin_tensor %y : !torch.vtensor<[?,8],f32> -> tensor<?x8xf32>
      scf.yield %b : tensor<?x8xf32>
    } else {
      %b = torch_c.to_builtin_tensor %arg0 : !torch.vtensor<[?,8],f32> -> tensor<?x8xf32>
      scf.yield %b : tensor<?x8xf32>
    }
    %1 = torch_c.from_builtin_tensor %0 : tensor<?x8xf32> -> !torch.vtensor<[?,8],f32>
    return %1 : !torch.vtensor<[?,8],f32>
  }
}
"""


def test_peak_formula_reads_back_and_evaluates():
    with ir.Context():
        module = ir.Module.parse(_BRANCHES)
        assert read_peak(module) is None
        run_pipeline(module, ["dync-rdp", "dync-plan-buffers"])
        peak = read_peak(module)
        text = module.operation.get_asm()
    # the then-branch: the transposed copy of x, the [n,n] product and the [n,8] result
    assert peak.formula == "4*n**2 + 64*n"
    assert peak.evaluate({"n": 10}) == 1040 and (peak.min, peak.max) == (68, 20480)
    assert read_peak(text) == peak
    with pytest.raises(KeyError):
        peak.evaluate({})
    assert peak.bounds({}) == (68, 20480)
    assert "dync.buffer = {offset" in text and "dync.buffers = {arena" in text


def test_eager_peak_counts_live_intermediates_only():
    class Chain(nn.Module):
        def forward(self, x):
            y = x + 1          # 64 bytes
            z = y * 2          # 64 more, y still alive
            del y
            return z.view(16) - 0.5   # z is freed once the subtraction returns

    x = torch.randn(4, 4)
    assert eager_peak_intermediates(Chain(), (x,)) == 128
