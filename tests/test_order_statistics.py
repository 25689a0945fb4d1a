"""Sorts and the order statistics built on them (`median`, `nanmedian`, `kthvalue`, which
torch-mlir does not lower and dync decomposes into a stable sort) against eager PyTorch over a
dynamic length, NaN and infinities included: eager sorts NaN above +inf."""

from __future__ import annotations

import pytest
import torch
from torch.export import Dim

import dync

NAN, INF = float("nan"), float("inf")


def _same(got: torch.Tensor, want: torch.Tensor) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    assert torch.equal(got.isnan(), want.isnan())
    assert torch.equal(got.nan_to_num(0.0), want.nan_to_num(0.0))


class Sorts(torch.nn.Module):
    def forward(self, x):
        values, order = torch.sort(x, dim=1, stable=True)
        top = torch.topk(x, 2, dim=1)
        return values, order, top.values, top.indices, x.argsort(dim=1, descending=True)


class OrderStatistics(torch.nn.Module):
    def forward(self, x):
        median = x.median(dim=1)
        kth = x.kthvalue(2, dim=1, keepdim=True)
        return (median.values, median.indices, kth.values, kth.indices,
                x.nanmedian(dim=1).values, x[0].median())


class Heads(torch.nn.Module):
    """The first k of a sort (k a constant: `dync-pack-sort-keys` takes them in k rounds, no
    sort): a sort read through leading slices; a descending sort of int64 positions of a proven range (one key each); top-k of int64
    values of any range (two reductions a round) and of floats, smallest first."""

    def forward(self, x):
        values, order = torch.sort(x, dim=1)
        positions = torch.arange(x.shape[1]).expand(x.shape[0], -1)
        ranked = torch.where(x > 0, positions, x.shape[1]).sort(dim=1, descending=True)[0]
        wide = (x.nan_to_num(0.0, 1e9, -1e9) * 1e6).long().topk(2, dim=1, largest=False)
        return (values[:, :2], order[:, :1], ranked[:, :2], wide.values, wide.indices,
                torch.topk(x, 2, dim=1, largest=False).indices)


@pytest.fixture(scope="module")
def compiled():
    length = Dim("length", min=3, max=64)
    example = torch.randn(3, 8)
    return {model: dync.compile(model().eval(), (example,), dynamic_shapes=({1: length},),
                                mode="graph", cache=False)
            for model in (Sorts, OrderStatistics, Heads)}


def _inputs():
    """Rows without ties (eager's index among equal values is not specified), some with NaNs
    and infinities, at three lengths."""
    torch.manual_seed(0)
    for n in (3, 8, 33):
        x = torch.randn(3, n)
        x[1, n // 2] = NAN
        x[1, 0] = INF
        x[2, 1] = -INF
        yield x
        yield torch.randn(3, n)


@pytest.mark.parametrize("model", [Sorts, OrderStatistics, Heads])
def test_matches_eager_with_nans_and_infinities(compiled, model):
    for x in _inputs():
        for got, want in zip(compiled[model](x), model()(x), strict=True):
            _same(got, want)


class ReturnsResultTuples(torch.nn.Module):
    def forward(self, x):
        return torch.sort(x, dim=1), x.max(dim=1), x.median(dim=1)


def test_named_result_tuples_are_returned_as_eager_returns_them():
    """torch's serializer has no name for `torch.return_types.*`: the import failed with an
    internal error on `return torch.sort(x)`."""
    x = torch.randn(3, 8)
    compiled = dync.compile(ReturnsResultTuples().eval(), (x,), mode="graph", cache=False)
    got, want = compiled(x), ReturnsResultTuples()(x)
    for g, w in zip(got, want, strict=True):
        assert type(g) is type(w)
        _same(g.values, w.values)
        _same(g.indices, w.indices)


class WideSorts(torch.nn.Module):
    """int64 and float64 sorts (two 32-bit digit sorts in dync), indices alone among them:
    IREE's own 64-bit sort of a dynamic length did not compile when only its indices were
    used, and its index iota was shared with an `arange` of the same length."""

    def forward(self, i, f):
        return (*torch.sort(i, dim=1, stable=True),
                torch.argsort(i, dim=1, descending=True, stable=True),
                *torch.sort(f, dim=1, descending=True, stable=True),
                torch.argsort(f, dim=1, stable=True),
                torch.topk(i, 2, dim=1).values,
                torch.argsort(i[0], stable=True) * 10 + torch.arange(i.shape[1]))


def test_64_bit_sorts_match_eager_with_ties_and_wide_values():
    length = Dim("length", min=3, max=64)
    gen = torch.Generator().manual_seed(0)

    def inputs(n):
        i = torch.randint(-5, 5, (3, n), generator=gen)  # ties
        i[1] = torch.randint(-2 ** 62, 2 ** 62, (n,), generator=gen)  # beyond 32 bits
        i[2, : n // 2] = 2 ** 33 + torch.arange(n // 2)  # the same high digit
        f = torch.randn(3, n, generator=gen, dtype=torch.float64) * 1e200
        f[0, :3] = torch.tensor([NAN, -0.0, 0.0], dtype=torch.float64)
        f[1, :3] = torch.tensor([INF, -INF, 1e-300], dtype=torch.float64)
        f[2] = f[2].round()  # ties
        f[2, 1] = f[2, 2]
        return i, f

    _matches_eager(WideSorts(), inputs, length, example=8, lengths=(3, 8, 33))


def _matches_eager(model: torch.nn.Module, inputs, length: Dim, example: int,
                   lengths: tuple[int, ...]) -> None:
    """`model` of two inputs of a dynamic `length` (dim 1), compiled on `inputs(example)`,
    against eager on `inputs(n)` for each of `lengths`."""
    model = model.eval()
    compiled = dync.compile(model, inputs(example), dynamic_shapes=({1: length}, {1: length}),
                            mode="graph", cache=False)
    for n in lengths:
        args = inputs(n)
        for got, want in zip(compiled(*args), model(*args), strict=True):
            _same(got, want)


class Sort(torch.nn.Module):
    def forward(self, x):
        return torch.sort(x, dim=1, stable=True)


def test_64_bit_sort_across_the_digits_boundary():
    """int64 values just below and above multiples of 2**32, far past 2**24: the high digit
    was a floor division, which torch-mlir computes in f32, and these came back out of order
    (a value rounded up to the next multiple got a negative low digit, whose key wrapped)."""
    big = 2 ** 40 + 2 ** 32
    x = torch.tensor([[big - 1, 2 ** 40 + 5, big + 3, -(2 ** 41) - 7, -(2 ** 41) + 2 ** 32 - 2, 3,
                       big - 2, -big + 1]])
    model = Sort().eval()
    compiled = dync.compile(model, (x,), dynamic_shapes=({1: Dim("length", min=2, max=64)},),
                            mode="graph", cache=False, check_first_call=False)
    for row in (x, x.flip(1), x[:, 2:] * 3 - 1):
        for got, want in zip(compiled(row), model(row), strict=True):
            assert torch.equal(got, want)


class LongSorts(torch.nn.Module):
    """Sorts along a dim nothing bounds (radix sorts in dync: IREE's sort is O(n^2) on the
    CPU), stable in both directions over ties, NaNs, infinities and signed zeros; a top k
    too large to take in rounds; int64 values past 32 bits."""

    def forward(self, x, i):
        values, order = torch.sort(x, dim=1, stable=True)
        return (values, order, *torch.sort(x, dim=1, descending=True, stable=True),
                torch.topk(x, 40, dim=1).values, torch.argsort(i, dim=1, stable=True),
                torch.sort(i, dim=1, descending=True, stable=True).values)


def test_long_sorts_match_eager_stably():
    gen = torch.Generator().manual_seed(0)

    def inputs(n):
        x = (torch.randn(2, n, generator=gen) * 8).round()  # ties
        x[0, ::7], x[0, 3::11], x[1, 5::13], x[1, 2::17] = NAN, -0.0, -INF, INF
        i = torch.randint(-50, 50, (2, n), generator=gen)
        i[1] = 2 ** 40 + torch.randint(-2 ** 33, 2 ** 33, (n,), generator=gen)
        return x, i

    _matches_eager(LongSorts(), inputs, Dim("length", min=40), example=600, lengths=(40, 600, 2100))


class NetworkSorts(torch.nn.Module):
    """Sorts along a dynamic length that sorting networks take (dync pads the keys to the
    power of two the length reaches at run time): floats descending, stably, over ties, NaNs,
    infinities and signed zeros; int64 values past 32 bits (two networks)."""

    def forward(self, x, i):
        return (*torch.sort(x, dim=1, descending=True, stable=True),
                *torch.sort(i, dim=1, stable=True))


@pytest.mark.parametrize("longest, lengths", [(1100, (49, 64, 65, 129, 600, 1024, 1025)),
                                              (100, (2, 48, 49, 64, 65, 100))])
def test_sorts_over_a_dynamic_length_match_eager_at_each_width(longest, lengths):
    """Each side of each width a network is padded to, the ranks below (these sort two rows:
    up to 128 elements) and the radix sort past the module's budget of network steps: the
    float sort's networks of 256 to 1024 take 136 of its 200 steps, so the int64 sort (two
    networks a width) sorts by the radix sort past 128 where the length may reach 1100, and
    by ranks alone where it may reach 100."""
    gen = torch.Generator().manual_seed(longest)

    def inputs(n):
        x = (torch.randn(2, n, generator=gen) * 8).round()  # ties
        x[0, ::7], x[0, 3::11], x[1, 5::13], x[1, 2::17], x[1, 1::9] = NAN, -0.0, -INF, INF, 0.0
        i = torch.randint(-50, 50, (2, n), generator=gen)
        i[1] = 2 ** 40 + torch.randint(-2 ** 33, 2 ** 33, (n,), generator=gen)
        return x, i

    _matches_eager(NetworkSorts(), inputs, Dim("length", min=2, max=longest), example=70,
                   lengths=lengths)


class RankSorts(torch.nn.Module):
    """Sorts along dim 0 of a dynamic length of at most 64: floats in both directions, stably,
    over ties, NaNs, infinities and signed zeros; int32 and int64 values past 32 bits (two
    sorts of digits)."""

    def forward(self, x, i):
        return (*torch.sort(x, dim=0, stable=True),
                *torch.sort(x, dim=0, descending=True, stable=True),
                torch.argsort(i.int(), dim=0, descending=True, stable=True),
                *torch.sort(i, dim=0, stable=True))


@pytest.mark.parametrize("columns, longest, ranked", [(3, 64, True), (40, 64, False),
                                                      (2, 128, True), (3, 128, False)])
def test_sorts_by_ranks_match_eager(columns, longest, ranked):
    """A few rows (columns here, sorted along dim 0) of a short length are sorted by ranks,
    with no choice at run time: at most 16 rows of at most 64 elements, 2 of 128; more rows
    by the sort of keys up to 48 and networks past it. Lengths on each side of 48 and 64,
    down to one element."""
    gen = torch.Generator().manual_seed(columns)

    def inputs(n):
        x = (torch.randn(n, columns, generator=gen) * 4).round()  # ties
        x[::7, 0], x[3::11, 1], x[5::13, -1], x[2::17, 0], x[1::9, 1] = NAN, -0.0, -INF, INF, 0.0
        i = torch.randint(-50, 50, (n, columns), generator=gen)
        i[:, 1] = 2 ** 40 + torch.randint(-2 ** 33, 2 ** 33, (n,), generator=gen)
        return x, i

    model = RankSorts().eval()
    length = Dim("length", min=1, max=longest)
    compiled = dync.compile(model, inputs(20), dynamic_shapes=({0: length}, {0: length}),
                            mode="graph", cache=False)
    # a choice at run time ends a submission
    assert (compiled.report.iree["submissions"] == 1) == ranked, compiled.report.iree
    for n in (1, 2, 17, 48, 49, 64, 65, 128)[:6 if longest == 64 else 8]:
        args = inputs(n)
        for got, want in zip(compiled(*args), model(*args), strict=True):
            _same(got, want)


class StaticSorts(torch.nn.Module):
    """Sorts along a static dim longer than 48 (bitonic networks in dync), stable in both
    directions over ties, NaNs, infinities and signed zeros; a top k too large to take in
    rounds and order statistics (their values: eager's indices among NaNs are its own);
    int64 values past 32 bits (two
    networks); booleans; a sort along the first dim of three."""

    def forward(self, x, i, cube):
        ties = x.round()
        return (*torch.sort(ties, dim=1, stable=True),
                *torch.sort(ties, dim=1, descending=True, stable=True),
                torch.topk(x, 40, dim=1).values, x.median(dim=1).values,
                x.kthvalue(5, dim=1).values,
                *torch.sort(i, dim=1, stable=True), torch.argsort(i, dim=1, descending=True,
                                                                  stable=True),
                torch.argsort(x > 0, dim=1, stable=True),
                *torch.sort(cube, dim=0, stable=True))


@pytest.mark.parametrize("n", [49, 64, 300])
def test_sorts_along_a_static_dim_match_eager_stably(n):
    """A padded network (49, 300 -> 64, 512) and one without padding (64)."""
    gen = torch.Generator().manual_seed(n)

    def inputs():
        x = torch.randn(3, n, generator=gen) * 4
        x[0, ::7], x[0, 3::11], x[1, 5::13], x[1, 2::17], x[2, 1::9] = NAN, -0.0, -INF, INF, 0.0
        i = torch.randint(-50, 50, (2, n), generator=gen)
        i[1] = 2 ** 40 + torch.randint(-2 ** 33, 2 ** 33, (n,), generator=gen)
        cube = torch.randint(-3, 3, (n, 2, 3), generator=gen).float()
        return x, i, cube

    model = StaticSorts().eval()
    # The rows, and the cube's last dim, dynamic: the sorted dims stay static.
    compiled = dync.compile(model, inputs(), mode="graph", cache=False, dynamic_shapes=(
        {0: Dim("rows", min=1, max=8)}, {0: Dim("pairs", min=1, max=8)},
        {2: Dim("depth", min=1, max=8)}))
    for _ in range(2):
        args = inputs()
        for got, want in zip(compiled(*args), model(*args), strict=True):
            _same(got, want)


class RanksWithTies(torch.nn.Module):
    def forward(self, x):
        scores = torch.relu(x).round()  # zeros and small integers: many ties
        return scores.argsort(dim=1), scores.topk(20, dim=1).indices, scores.sort(dim=1)[1]


def test_ties_in_the_example_are_not_a_mismatch():
    """Eager's sorts (not `stable=True`) and `topk` order equal values as their kernels leave
    them (not stably past 16 elements on the CPU); dync's order is the stable one. The first
    call is checked against eager with its sorts stable where they differ: graph mode
    compiles such a model instead of refusing it, and its results are the stable ones."""
    from dync.frontends.pytorch.stable_sorts import stable_sorts

    model = RanksWithTies().eval()
    x = torch.randn(3, 100) * 3
    compiled = dync.compile(model, (x,), dynamic_shapes=({1: Dim("length", min=20, max=256)},),
                            mode="graph", cache=False)
    for n in (20, 100, 256):
        x = torch.randn(3, n) * 3
        with stable_sorts():
            want = model(x)
        for got, expected in zip(compiled(x), want, strict=True):
            assert torch.equal(got, expected)


class RanksThenDecides(torch.nn.Module):
    def score(self, x):
        s = torch.relu(x).round()
        return s.argsort(dim=-1), s.sum()

    def forward(self, x):
        order, total = self.score(x)
        if float(total) > 1000.0:  # a Python number read from data: host mode
            return order * 2
        return order


def test_ties_in_a_sub_dnn_call_are_not_a_mismatch():
    """Host mode checks each sub-DNN on the calls the example made the same way: against eager
    with its sorts stable where plain eager orders ties otherwise."""
    compiled = dync.compile(RanksThenDecides(), (torch.randn(2, 200) * 3,), mode="host",
                            cache=False, eager_if_faster=False)
    assert [b["stage"] for b in compiled.report.graph_breaks] == ["capture"]


class _RoutingTopK(torch.nn.Module):
    def forward(self, x):
        weights, experts = torch.topk(torch.softmax(x, -1), 2, dim=-1)
        return weights * 2, experts


def test_top_k_rounds_compile_as_the_first_pass_to_build_tensor_ops():
    """`dync-pack-sort-keys` alone (no earlier pass building ops of the `tensor` dialect): its
    `tensor.dim`s, built while IREE's context had not loaded that dialect, became
    `tensor.empty`s that failed to verify (moe's ablation without `dync-loop-batch`)."""
    compiled = dync.compile(_RoutingTopK(), (torch.randn(5, 8),), mode="graph", cache=False,
                            dynamic_shapes=({0: Dim("n", min=1, max=64)},),
                            passes=["dync-pack-sort-keys"])
    for rows in (1, 9, 64):
        x = torch.randn(rows, 8)
        torch.testing.assert_close(compiled(x), _RoutingTopK()(x))
