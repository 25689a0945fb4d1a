"""PyTorch models with data-dependent control flow compile whole and match eager."""

import pytest
import torch
from models import SIZES, PythonIf, assert_loop_matches, cond_inputs, seeded
from torch.export import Dim

import dync


@pytest.mark.parametrize("batch", SIZES)
@pytest.mark.parametrize("positive", [True, False], ids=["true_branch", "false_branch"])
def test_cond_matches_eager(cond_model, cond_compiled, batch, positive):
    x = cond_inputs(batch, positive)
    assert bool(x.sum() > 0) is positive
    torch.testing.assert_close(cond_compiled(x), cond_model(x), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("batch", SIZES)
@pytest.mark.parametrize("scale", [0.01, 3.0], ids=["many_steps", "few_steps"])
def test_while_loop_with_parameters_matches_eager(loop_model, loop_compiled, batch, scale):
    assert_loop_matches(loop_model, loop_compiled, batch, scale)


def test_while_loop_trip_count_depends_on_data(loop_model, loop_compiled):
    trips = {int(loop_compiled(torch.randn(5, 8) * s)[1]) for s in (0.01, 3.0)}
    assert len(trips) == 2, trips


def test_signature_carries_user_symbol_names(cond_compiled):
    sig = cond_compiled.signature
    assert sig.inputs[0].shape == ("batch", 8)
    assert sig.outputs[0].shape == ("batch", 8)
    assert (sig.symbols["batch"].min, sig.symbols["batch"].max) == (1, 64)


def test_report_lists_stages_flags_and_symbols(cond_compiled):
    report = cond_compiled.report
    assert report.frontend == "pytorch"
    assert set(report.stage_seconds) == {"import", "passes", "iree", "first call"}
    assert "--iree-hal-local-target-device-backends=llvm-cpu" in report.flags
    assert report.symbols == {"batch": [1, 64]}
    assert "batch in [1, 64]" in str(report)


def test_python_if_on_tensor_is_rewritten_and_compiles():
    model = seeded(PythonIf)
    compiled = dync.compile(model, (torch.randn(3, 4),), dynamic_shapes=({0: Dim("n", max=16)},))
    assert "PythonIf.forward" in compiled.report.rewritten
    for x in (torch.rand(5, 4) + 0.1, -torch.rand(5, 4) - 0.1):
        torch.testing.assert_close(compiled(x), model(x))


def test_non_module_is_rejected_clearly():
    with pytest.raises(dync.DyncError, match="nn.Module"):
        dync.compile(lambda x: x, (torch.randn(2),))


def test_unknown_backend_and_target_are_rejected():
    with pytest.raises(dync.DyncError, match="unknown backend"):
        dync.compile(seeded(PythonIf), (torch.randn(2),), backend="tpu")
    with pytest.raises(dync.DyncError, match="unknown target"):
        dync.compile(seeded(PythonIf), (torch.randn(2),), backend="cuda", target="jetson-nano")


def test_derived_dims_and_shared_symbols():
    from models import SharedAndDerived

    n = Dim("n", min=1, max=32)
    model = seeded(SharedAndDerived)
    compiled = dync.compile(model, (torch.randn(3, 4), torch.randn(6, 4)),
                            dynamic_shapes=({0: n}, {0: 2 * n}))
    assert [t.shape for t in compiled.signature.inputs] == [("n", 4), ("2*n", 4)]
    assert list(compiled.signature.symbols) == ["n"]
    x, y = torch.randn(5, 4), torch.randn(10, 4)
    for got, want in zip(compiled(x, y), model(x, y), strict=True):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
    with pytest.raises(dync.InputError, match=r"expected 2\*n = 10, got 9"):
        compiled(x, torch.randn(9, 4))


_IMPORT_TWO_SYMBOLS = """
import sys, torch, dync
from torch.export import Dim
class Pool(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.avg_pool2d(x, 32) * 2
h, w = Dim("h32", min=2, max=10), Dim("w32", min=2, max=10)
dync.compile(Pool(), (torch.randn(1, 3, 128, 160),), dynamic_shapes=({2: 32 * h, 3: 32 * w},),
             passes=("dync-check-ir",), dump_ir=sys.argv[1], cache=False)
"""


def test_the_ir_does_not_depend_on_string_hashing(tmp_path):
    """torch lists the symbols in an order that follows PYTHONHASHSEED; the IR (which the
    compile cache hashes) declares them by name, the same in every process."""
    import os
    import subprocess
    import sys

    dumps = []
    for seed in ("1", "3"):  # seeds under which torch's own order differs
        dumps.append(tmp_path / f"seed{seed}.mlir")
        subprocess.run([sys.executable, "-c", _IMPORT_TWO_SYMBOLS, str(dumps[-1])], check=True,
                       env=dict(os.environ, PYTHONHASHSEED=seed), capture_output=True)
    first, second = (d.read_text() for d in dumps)
    assert first == second
    declared = [line.split('"')[1] for line in first.splitlines() if "torch.symbolic_int" in line]
    assert declared == ["h32", "w32"]


def test_conv_pool_with_dynamic_height_and_width():
    from models import ConvPool

    model = seeded(ConvPool)
    h, w = Dim("h", min=8, max=128), Dim("w", min=8, max=128)
    compiled = dync.compile(model, (torch.randn(1, 3, 32, 32),), dynamic_shapes=({2: h, 3: w},))
    out_shape = compiled.signature.outputs[0].shape
    assert "//" in out_shape[2] and "h" in out_shape[2] and "w" in out_shape[3]
    for hw in ((8, 8), (33, 17), (128, 64)):
        x = torch.randn(1, 3, *hw)
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-5)


class RoutedTokens(torch.nn.Module):
    """Masks with data-dependent sizes, twice in one function (MoE-style routing)."""

    def forward(self, x, route):
        out = torch.zeros_like(x)
        for e in range(2):
            token = torch.where(route == e)[0]
            out = out.index_add(0, token, x[token] * (e + 2))
        return out, x[route == 1].sum(0), torch.nonzero(route)


def test_several_data_dependent_masks_in_one_function():
    """torch-mlir's nonzero lowering gives wrong indices in IREE 3.13 when a function has two;
    dync decomposes it (lit/frontends/pytorch_nonzero.py)."""
    n = Dim("n", min=2, max=16)
    x = torch.randn(6, 8)
    model = RoutedTokens()
    compiled = dync.compile(model, (x, torch.tensor([0, 1, 0, 0, 1, 1])), dynamic_shapes=({0: n}, {0: n}))
    for route in ([0, 1, 0, 0, 1, 1], [1, 0, 1, 1, 0, 0], [0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1]):
        route = torch.tensor(route)
        for got, want in zip(compiled(x, route), model(x, route), strict=True):
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)


def test_an_example_of_one_image_compiles_for_the_declared_batch():
    """torch.export specializes a dim whose example size is 1 and refuses its `Dim`; dync
    traces the example repeated to 2 and checks the size-1 example on the first call."""
    conv = torch.nn.Conv2d(3, 4, 3)
    compiled = dync.compile(conv, (torch.randn(1, 3, 8, 8),),
                            dynamic_shapes=({0: Dim("b", max=16)},), mode="graph")
    assert compiled.signature.symbols["b"].min == 0 and compiled.signature.symbols["b"].max == 16
    for batch in (1, 3, 8):
        x = torch.randn(batch, 3, 8, 8)
        torch.testing.assert_close(compiled(x), conv(x), rtol=1e-4, atol=1e-5)


def test_specialized_example_size_gets_a_hint():
    with pytest.raises(dync.DyncError, match="size of at least 2"):
        dync.compile(torch.nn.Conv2d(3, 4, 3), (torch.randn(0, 3, 8, 8),),
                     dynamic_shapes=({0: Dim("b")},))


def test_iree_failure_names_a_saved_ir_file(cond_model):
    with pytest.raises(dync.CompilationError, match=r"IR at the point of failure is in (\S+\.mlir)") as info:
        dync.compile(cond_model, (torch.randn(4, 8),),
                     extra_flags=("--iree-hal-target-device=no-such-device",))
    path = __import__("re").search(r"is in (\S+\.mlir)", str(info.value)).group(1)
    assert "no-such-device" in open(path).read().splitlines()[0]


def test_mode_is_validated(cond_model):
    with pytest.raises(dync.DyncError, match="mode must be one of"):
        dync.compile(cond_model, (torch.randn(4, 8),), mode="eager")


class _ScoresQK(torch.nn.Module):
    def forward(self, q, k):
        return torch.matmul(q, k.transpose(-1, -2))


def test_the_same_example_tensor_passed_twice_stays_two_inputs():
    """torch.export traces aliased example inputs as one placeholder; dync must not compile
    `q @ kᵀ` exported with `(x, x)` into `k @ kᵀ`."""
    x = torch.randn(1, 4, 10, 16)
    seq = Dim("seq", min=2, max=64)
    compiled = dync.compile(_ScoresQK(), (x, x), dynamic_shapes=({2: seq}, {2: seq}), cache=False)
    q, k = torch.randn(1, 4, 7, 16), torch.randn(1, 4, 7, 16)
    torch.testing.assert_close(compiled(q, k), _ScoresQK()(q, k), rtol=1e-4, atol=1e-5)


class CountedLoop(torch.nn.Module):
    """A counter kept as a float tensor and compared with an int literal inside a loop on
    data (adaptive computation's `steps < 3`)."""

    def forward(self, h):
        steps = torch.zeros(())
        while (h.abs().mean() > 0.3) & (steps < 3):
            h = h * 0.7
            steps = steps + 1
        return h, steps


def test_a_float_tensor_is_compared_with_a_float_literal():
    """torch-mlir's folder of `aten.lt.Scalar` read an int literal as a float against a float
    tensor (undefined behaviour): IREE's compile crashed now and then, or folded the loop's
    condition to garbage (wrong results, caught by the first-call check or not)."""
    from iree.compiler import ir

    from dync.frontends.pytorch.export import import_module
    from dync.passes import lower_control_flow

    with ir.Context() as ctx:
        program = import_module(CountedLoop(), (torch.randn(4, 8),),
                                ({0: torch.export.Dim("b", min=1, max=64)},), ctx,
                                lower=lower_control_flow)
        text = str(program.module)
    compares = [line for line in text.splitlines() if "torch.aten.lt.Scalar" in line]
    assert compares and all("!torch.float" in line for line in compares), compares
