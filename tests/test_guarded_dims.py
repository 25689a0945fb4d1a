"""Dynamic dims torch.export traces over only part of their declared range (a branch on a
size): compiled for the range where the trace holds
(`dync.frontends.pytorch.guards`). Under mode='auto' the rest of the declared range is traced
and compiled again (`dync.api.pieces`), and a call no module takes runs in eager; under
mode='graph' a call outside the range is refused, naming both ranges and the assumption."""

from __future__ import annotations

import contextlib

import pytest
import torch
from torch import nn
from torch.export import Dim

import dync
from dync.errors import InputError, ModuleFormatError, OutsideCompiledRange
from dync.signature import Signature, SymbolSpec


class HalfTheRows(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        if x.shape[1] < 4:  # a trace at a longer length assumes length >= 4
            return self.proj(x) * 2
        k = x.shape[1] // 2
        score, picked = torch.topk(x.sum(dim=-1), k, dim=1)
        rows = torch.gather(x, 1, picked[..., None].expand(-1, -1, x.shape[2]))
        return self.proj(rows) * torch.sigmoid(score)[..., None]


def _shapes():
    return ({0: Dim("batch", min=1, max=8), 1: Dim("length", min=2, max=64)},)


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    return HalfTheRows().eval()


@pytest.fixture(scope="module")
def graph_module(model):
    return dync.compile(model, (torch.randn(2, 16, 8),), dynamic_shapes=_shapes(), mode="graph",
                        cache=False)


def test_compiled_for_the_range_where_the_trace_holds(model, graph_module):
    length = graph_module.signature.symbols["length"]
    assert (length.min, length.max, length.declared) == (4, 64, (2, 64))
    assert length.assumes.startswith("length >= 4")
    assert graph_module.signature.symbols["batch"].declared is None  # nothing assumed of it
    assert any("holds for length in [4, 64] of its declared [2, 64]" in note
               for note in graph_module.report.notes)
    for batch, size in [(1, 4), (3, 5), (8, 64), (2, 37)]:
        x = torch.randn(batch, size, 8)
        with torch.no_grad():
            torch.testing.assert_close(graph_module(x), model(x), rtol=1e-4, atol=1e-5)


def test_a_size_outside_it_is_refused_naming_both_ranges(graph_module, tmp_path):
    with pytest.raises(OutsideCompiledRange, match=r"length\) = 3 is in its declared range "
                       r"\[2, 64\], but the module holds only for length in \[4, 64\]"):
        graph_module(torch.randn(2, 3, 8))
    with pytest.raises(InputError, match=r"outside its declared range \[2, 64\]") as caught:
        graph_module(torch.randn(2, 65, 8))
    assert not isinstance(caught.value, OutsideCompiledRange)
    loaded = dync.load(graph_module.save(tmp_path / "half.vmfb"))
    assert loaded.signature.symbols["length"] == graph_module.signature.symbols["length"]
    with pytest.raises(OutsideCompiledRange, match="length >= 4"):
        loaded(torch.randn(2, 2, 8))


def test_auto_compiles_the_rest_of_the_range_as_a_second_trace(model):
    compiled = dync.compile(model, (torch.randn(2, 16, 8),), dynamic_shapes=_shapes(),
                            cache=False)
    assert compiled.report.mode == "in-graph", compiled.report.explain()
    (piece,) = compiled.pieces  # traced at length 3, the other side of the branch
    length = piece.signature.symbols["length"]
    assert (length.min, length.max) == (2, 3)
    assert any("length in [2, 3]: a second trace (at length = 3)" in note
               for note in compiled.report.notes)
    for size in (2, 3, 4, 40, 3, 64):
        x = torch.randn(3, size, 8)
        with torch.no_grad():
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-5)
    assert compiled.run_time_fallbacks == 0 and piece.run_time_fallbacks == 0
    assert sorted(compiled._outside.values()) == [0, 0]  # sizes 2 and 3 go to the piece


def test_auto_runs_a_call_no_piece_takes_in_eager(model, monkeypatch):
    from dync.api import pieces

    monkeypatch.setattr(pieces, "MAX_PIECES", 0)
    compiled = dync.compile(model, (torch.randn(2, 16, 8),), dynamic_shapes=_shapes(),
                            cache=False)
    assert compiled.report.mode == "in-graph", compiled.report.explain()
    assert not compiled.pieces
    for size in (2, 3, 4, 40, 3):
        x = torch.randn(3, size, 8)
        with torch.no_grad():
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-5)
    # The second call at size 3 went to eager without the range check (and is not noted).
    assert compiled.run_time_fallbacks == 3
    assert sum("ran in eager PyTorch" in note for note in compiled.report.notes) == 2
    assert len(compiled._outside) == 2


def test_the_manifest_keeps_the_declared_range_and_checks_it():
    spec = SymbolSpec("n", 4, 64, (2, 64), "max(1, n // 2) != 1")
    data = Signature([], [], {"n": spec}).to_json()
    assert Signature.from_json(data).symbols["n"] == spec
    assert "declared" not in Signature([], [], {"n": SymbolSpec("n", 2, 9)}).to_json()["symbols"]["n"]
    for declared in ([5, 64], [2, 9], [2], ["2", 64], None):
        bad = {**data, "symbols": {"n": {**data["symbols"]["n"], "declared": declared}}}
        if declared is None:
            bad["symbols"]["n"]["assumes"] = 7  # no declared range, so no assumption read
            assert Signature.from_json(bad).symbols["n"].declared is None
            continue
        with pytest.raises(ModuleFormatError, match="declared range"):
            Signature.from_json(bad)


class FourHeads(nn.Module):
    def forward(self, x):
        return x.view(x.shape[0], 4, x.shape[1] // 4).softmax(dim=-1).flatten(1)


def test_a_range_reaching_neither_end_is_not_taken():
    """`s % 4 == 0` holds at the example's 16 and not at 15 or 17: compiling for that one
    size would run every other in eager; the export error stays, naming torch's fix."""
    with pytest.raises(dync.DyncError, match=r"Constraints violated[\s\S]*Suggested fixes"):
        dync.compile(FourHeads(), (torch.randn(2, 16),), mode="graph", cache=False,
                     dynamic_shapes=({0: Dim("batch", min=1, max=8),
                                      1: Dim("length", min=4, max=64)},))


class ThreeRegimes(nn.Module):
    """A branch on a size with three sides: each compiled as its own trace under auto."""

    def __init__(self):
        super().__init__()
        self.a, self.b, self.c = nn.Linear(8, 8), nn.Linear(8, 8), nn.Linear(8, 8)

    def forward(self, x):
        if x.shape[0] > 32:
            return self.a(x[:32]).relu()
        if x.shape[0] > 8:
            return self.b(x).tanh()
        return self.c(x) * 2


def test_every_side_of_a_branch_on_a_size_is_compiled():
    torch.manual_seed(0)
    model = ThreeRegimes().eval()
    compiled = dync.compile(model, (torch.randn(16, 8),), cache=False,
                            dynamic_shapes=({0: Dim("n", min=1, max=128)},))
    ranges = [(s.min, s.max) for s in [compiled.signature.symbols["n"]]
              + [p.signature.symbols["n"] for p in compiled.pieces]]
    assert sorted(r for rs in ranges for r in range(rs[0], rs[1] + 1)) == list(range(1, 129))
    for n in (1, 8, 9, 16, 32, 33, 100, 128, 5):
        x = torch.randn(n, 8)
        with torch.no_grad():
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-5)
    assert compiled.run_time_fallbacks == 0


class PaddedRows(nn.Module):
    """torch.export (no rewrite) makes `int(rows / (L + pad))` the example's batch, 2, with
    a guard `16*batch*(L + pad) == 32*(L + pad)` that its check of the `Dim`s does not flag."""

    def forward(self, x):
        B, L, C = x.shape
        pad = (4 - L % 4) % 4
        rows = nn.functional.pad(x, (0, 0, 0, pad)).reshape(-1, C)
        return rows.view(int(rows.shape[0] / ((L + pad) * C / C)), L + pad, C).sum(1)


def test_a_guard_torch_export_leaves_unchecked_is_refused(monkeypatch):
    from dync.frontends.pytorch import export

    @contextlib.contextmanager
    def as_written(model):
        yield export.Rewrite()

    monkeypatch.setattr(export, "rewritten", as_written)
    shapes = ({0: Dim("batch", min=2, max=16), 1: Dim("length", min=2, max=32)},)
    with pytest.raises(dync.DyncError, match=r"Constraints violated: .*assumes Eq\("):
        export._export(PaddedRows(), (torch.randn(2, 6, 16),), shapes)


class NeighboursOfPoints(nn.Module):
    """One `Dim` on two arguments (points and their features): `torch.cdist` takes another
    path past 25 points, so the trace holds up to 25. `Dim.DYNAMIC` hints would give each
    argument its own size; torch's suggested range keeps them one."""

    def forward(self, points, features):
        n = points.shape[1]
        nearest = torch.cdist(points, points).topk(4, largest=False).indices
        gathered = torch.gather(features[:, None].expand(-1, n, -1, -1), 2,
                                nearest[..., None].expand(-1, -1, -1, features.shape[-1]))
        return gathered.amax(2)


def test_one_dim_on_two_arguments_is_compiled_over_the_range_torch_suggests():
    points = Dim("points", min=4, max=64)
    compiled = dync.compile(NeighboursOfPoints(), (torch.randn(2, 10, 3), torch.randn(2, 10, 5)),
                            dynamic_shapes=({1: points}, {1: Dim("points", min=4, max=64)}),
                            cache=False)
    assert compiled.report.mode == "in-graph", compiled.report.explain()
    symbol = compiled.signature.symbols["points"]
    assert (symbol.min, symbol.max, symbol.declared) == (4, 25, (4, 64))
    assert "25" in symbol.assumes
    (piece,) = compiled.pieces
    for n in (4, 25, 26, 64, 10):
        args = torch.randn(2, n, 3), torch.randn(2, n, 5)
        torch.testing.assert_close(compiled(*args), NeighboursOfPoints()(*args))
    assert compiled.run_time_fallbacks == 0
    with pytest.raises(InputError, match="dim 1"):
        compiled(torch.randn(2, 10, 3), torch.randn(2, 11, 5))


class Differences(nn.Module):
    """`torch.diff` subtracts two slices n - 1 long: broadcasting's guard `n - 1 != 1` holds
    everywhere but at n = 2, where a trace makes n static ("specialized it to be a
    constant")."""

    def forward(self, x):
        return torch.diff(x, dim=-1).cumsum(-1)


def test_a_size_torch_makes_static_is_a_piece_of_its_own(capfd):
    shapes = ({0: Dim("batch", min=1, max=8), 1: Dim("n", min=2, max=48)},)
    compiled = dync.compile(Differences(), (torch.randn(2, 16),), dynamic_shapes=shapes,
                            cache=False)
    n = compiled.signature.symbols["n"]
    assert (n.min, n.max, n.declared) == (3, 48, (2, 48))
    (piece,) = compiled.pieces
    assert "n" not in piece.signature.symbols
    assert any(note.startswith("n = 2: a second trace") for note in compiled.report.notes)
    for batch, size in [(1, 2), (3, 2), (2, 3), (1, 48), (5, 17)]:
        x = torch.randn(batch, size)
        torch.testing.assert_close(compiled(x), Differences()(x))
    assert compiled.run_time_fallbacks == 0
    # torch's solver's warnings about the range that does not hold (a traceback of its own
    # printer each) are not the user's to read: the notes say it.
    assert "Failed to reduce inequalities" not in capfd.readouterr().err
