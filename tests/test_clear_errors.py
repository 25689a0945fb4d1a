"""Bad models and inputs get a dync error that says what to do, before anything is compiled:
tensors without data (the meta device), bfloat16; and `print()` in a forward, a side effect
graph mode would drop, runs in host mode under `mode="auto"`."""

from pathlib import Path

import pytest
import torch

import dync


class Printing(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        y = self.lin(x)
        print("rows:", y.shape[0])  # LINE: print
        return y.relu()


class KeepRatio(torch.nn.Module):
    def forward(self, x):
        keep = max(1, int(x.shape[1] * 0.7))  # a capacity factor
        y = x[:, :keep]
        if y.mean() > 0:
            y = y * 2.0
        return y


class SquareRootSize(torch.nn.Module):
    def forward(self, x):
        side = int(x.shape[1] ** 0.5)  # LINE: root
        return x[:, :side]


def _line(marker: str) -> int:
    lines = Path(__file__).read_text().splitlines()
    return next(i + 1 for i, line in enumerate(lines) if line.endswith(f"# LINE: {marker}"))


def test_print_in_forward_runs_in_host_mode_and_prints(capsys):
    torch.manual_seed(0)
    model = Printing().eval()
    compiled = dync.compile(model, (torch.randn(2, 8),), eager_if_faster=False)
    assert compiled.report.mode == "host"
    (graph_break,) = [b for b in compiled.report.graph_breaks if b["region"] == "forward"]
    assert graph_break["source"].endswith(f"test_clear_errors.py:{_line('print')}")
    assert "print()" in graph_break["reason"]
    capsys.readouterr()
    x = torch.randn(2, 8)
    torch.testing.assert_close(compiled(x), model(x), rtol=1e-5, atol=1e-6)
    assert capsys.readouterr().out == "rows: 2\n" * 2  # compiled, then eager


def test_print_in_forward_is_refused_in_graph_mode_with_its_line():
    with pytest.raises(dync.UnsupportedConstructError, match=r"print\(\)") as info:
        dync.compile(Printing().eval(), (torch.randn(2, 8),), mode="graph")
    assert info.value.source.endswith(f"test_clear_errors.py:{_line('print')}")


def test_int_of_a_size_times_a_constant_is_exact_at_every_size():
    """`int(x.shape[1] * 0.7)`: Python's `int()` of the float would specialize the size to the
    example's; it is the size times 7 // 10, exactly what the float gives below 2**31. (The
    trace holds from length 3 on, where the slice is wider than one column: torch's guards.)"""
    shapes = ({1: torch.export.Dim("length", min=3, max=64)},)
    compiled = dync.compile(KeepRatio(), (torch.randn(2, 16),), dynamic_shapes=shapes,
                            mode="graph", cache=False)
    for length in (3, 4, 10, 17, 30, 64):
        x = torch.randn(2, length)
        want = KeepRatio()(x)
        got = compiled(x)
        assert got.shape == want.shape
        torch.testing.assert_close(got, want)


def test_int_of_other_float_arithmetic_on_a_size_is_refused_with_its_line():
    shapes = ({1: torch.export.Dim("length", min=2, max=64)},)
    with pytest.raises(dync.UnsupportedConstructError, match=r"integer operations") as info:
        dync.compile(SquareRootSize(), (torch.randn(2, 16),), dynamic_shapes=shapes, mode="graph")
    assert info.value.source.endswith(f"test_clear_errors.py:{_line('root')}")


def test_meta_tensors_are_refused_before_compiling(cond_compiled):
    with pytest.raises(dync.DyncError, match="example input 0 is on the meta device"):
        dync.compile(torch.nn.Linear(8, 8), (torch.randn(2, 8, device="meta"),))
    with torch.device("meta"):
        unloaded = torch.nn.Linear(8, 8)
    with pytest.raises(dync.DyncError, match=r"model's weight is on the meta device .*to_empty"):
        dync.compile(unloaded, (torch.randn(2, 8),))
    with pytest.raises(dync.InputError, match="meta device"):
        cond_compiled(torch.randn(2, 8, device="meta"))
    cond_compiled(torch.randn(2, 8))  # the shape's later calls take the runtime's direct path
    with pytest.raises(dync.InputError, match="meta device"):
        cond_compiled(torch.randn(2, 8, device="meta"))


def test_a_directory_given_as_dump_ir_is_refused_before_compiling(tmp_path):
    with pytest.raises(dync.OptionError, match=r"dump_ir names a directory.*model\.mlir"):
        dync.compile(torch.nn.Linear(8, 8), (torch.randn(2, 8),), dump_ir=tmp_path, cache=False)


def test_bfloat16_is_refused_with_the_reason():
    model = torch.nn.Linear(8, 4).to(torch.bfloat16)
    with pytest.raises(dync.DyncError, match=r"bfloat16 is not supported: .*\.float\(\)"):
        dync.compile(model, (torch.randn(2, 8, dtype=torch.bfloat16),))
    with pytest.raises(dync.DyncError, match="bfloat16 is not supported"):
        dync.compile(torch.nn.Linear(8, 4), (torch.randn(2, 8, dtype=torch.bfloat16),))
