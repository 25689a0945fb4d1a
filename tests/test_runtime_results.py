"""Torch results in IREE's own buffers (`dync.runtime.invoke.Function.tensors`): each call's
results are memory of that call alone, no two share any, and they outlive the module."""

import gc

import torch

import dync


class _SameValueManyWays(torch.nn.Module):
    """Results IREE folds into one value (the same buffer), a slice, a constant and the
    argument passed through."""

    def __init__(self):
        super().__init__()
        self.register_buffer("table", torch.arange(4.0))

    def forward(self, x):
        y = x.exp()
        return (y, y * 1, y.clone(), y.view(2, 2), y[1:], y[1:].clone(), x, self.table,
                self.table * 1)


def test_no_two_results_share_memory_and_none_is_the_modules():
    model, x = _SameValueManyWays(), torch.randn(4)
    compiled = dync.compile(model, (x,), mode="graph")
    want = model(x)
    for k in range(len(want)):
        got = compiled(x)
        got[k].fill_(-7.0)  # writes into one result only
        for j, (out, expected) in enumerate(zip(got, want, strict=True)):
            if j != k:
                torch.testing.assert_close(out, expected, msg=f"result {j} after writing {k}")
    torch.testing.assert_close(compiled(x), want)  # nor into a later call's
    torch.testing.assert_close(x, torch.log(want[0]))  # nor into the argument


class _ConstantsThroughControlFlow(torch.nn.Module):
    """A constant that a data-dependent branch returns, and one a loop that runs no step
    returns as it entered."""

    def __init__(self):
        super().__init__()
        self.register_buffer("c", torch.arange(4.0))
        self.register_buffer("d", torch.ones(4))

    def forward(self, x):
        y = self.c * 1 if x.sum() > 0 else self.d * 1
        z = self.c.clone()
        steps = 0
        while x.sum() > 100 and steps < 3:
            z = z + x
            steps += 1
        return y, z


def test_constants_returned_by_branches_and_loops_are_fresh_each_call():
    model = _ConstantsThroughControlFlow()
    compiled = dync.compile(model, (torch.ones(4),), mode="graph")
    for x in (torch.ones(4), -torch.ones(4), torch.full((4,), 50.0)):
        want = model(x)
        first = compiled(x)
        for out in first:
            out.fill_(123.0)
        torch.testing.assert_close(compiled(x), want)


def test_results_outlive_the_module():
    """A result stays valid after its module is gone: its memory is the process's IREE
    device's, which every module shares (one device per module freed it with the module, and
    reading the result then crashed)."""
    model = torch.nn.Linear(64, 64)
    kept = []
    for _ in range(4):
        x = torch.randn(8, 64)
        compiled = dync.compile(model, (x,), mode="graph")
        kept.append((compiled(x), model(x).detach()))
        del compiled
        gc.collect()
        scratch = [torch.randn(512, 512) for _ in range(8)]  # reuse what was freed
        del scratch
    for got, want in kept:
        torch.testing.assert_close(got, want)


class _SixteenBitFloats(torch.nn.Module):
    def forward(self, x):
        # Scaled by powers of 2: the same values whether IREE rounds before or after.
        return x.to(torch.bfloat16) * 2, x.half() * 4, x * 2


def test_bfloat16_results_come_back_as_torch_tensors():
    """numpy has no bfloat16 (IREE's results come as ml_dtypes arrays, which
    `torch.from_numpy` refused): a bf16 result made the first call fail, and the model ran
    in eager."""
    x = torch.randn(5, 3)
    compiled = dync.compile(_SixteenBitFloats(), (x,), mode="graph", cache=False)
    for got, want in zip(compiled(x), _SixteenBitFloats()(x), strict=True):
        assert got.dtype == want.dtype and torch.equal(got, want)


def test_only_results_that_overlap_an_earlier_one_are_copied():
    """`_unshared` on results sharing memory as IREE could return them: disjoint parts of one
    buffer stay views; the same memory, a part of it, or an overlap in either order is copied
    once; an empty result is never a conflict."""
    from dync.runtime.invoke import _unshared

    base = torch.arange(16.0)
    cases = {  # results -> the positions that must come back as copies
        (base[:8], base[8:]): set(),
        (base[8:], base[:8]): set(),
        (base[:8], base[:8]): {1},
        (base, base[4:6]): {1},
        (base[4:6], base): {1},
        (base[2:10], base[6:14]): {1},
        (base[6:14], base[2:10]): {1},
        (base[:4], base[4:8], base[8:12], base[12:]): set(),
        (base[12:], base[:4], base[8:12], base[4:8]): set(),
        (base[:4], base[4:8], base[3:5]): {2},
        (base[8:], base[:4], base[4:8]): set(),
        (base[4:8], base[:4], base[4:8]): {2},
        (base[:4], base[:16], base[12:]): {1},
        (base[3:5], base[:4], base[4:8]): {1, 2},
        (base[4:4], base[:8]): set(),
        (base[:8], base[4:4], base[8:]): set(),
    }
    for results, copied in cases.items():
        got = _unshared(list(results))
        for k, (out, given) in enumerate(zip(got, results, strict=True)):
            assert out.data_ptr() != given.data_ptr() or k not in copied, (results, k)
            assert (out is given) == (k not in copied), (results, k)
            torch.testing.assert_close(out, given)


class _TwoCompactingBranches(torch.nn.Module):
    """Two `cond`s whose branches each compact rows by a mask (fuzz seed 1044, reduced): the
    tails of the first one's branches dispatch alike but for their kernels."""

    def forward(self, h):
        if h.std() > 0.7:
            picked = h[h.mean(1) > -0.5]
            h = h + 0.1 * picked.sum(0, keepdim=True)
        else:
            picked = h[h.mean(1) > -0.1]
            h = h + 0.2 * picked.sum(0, keepdim=True)
        if h.std() > 0.7:
            h = h * 3
            picked = h[h.mean(1) > -0.5]
        else:
            h = torch.sigmoid(h) - 0.5
        return h


def test_branches_that_dispatch_alike_stay_apart():
    """Right on both paths of both branches. A mend that loaded each dispatch's function id
    from a global at the `flow` phase let IREE merge the first branch's two tails into one
    block, whose branch copied registers in an order that lost a value: the taken-then path
    came out wrong. The mend now runs at the `vm` phase, after IREE's last merging of blocks
    (`dync/iree_mends.py`); this guards it."""
    from torch.export import Dim

    model = _TwoCompactingBranches()
    compiled = dync.compile(model, (torch.randn(4, 8),), mode="graph", cache=False,
                            dynamic_shapes=({0: Dim("b", min=1, max=64)},))
    torch.manual_seed(0)
    paths = set()
    for rows in (1, 2, 5, 9, 63):
        for scale in (0.05, 1.0, -1.5, 3.0):
            x = scale * torch.randn(rows, 8)
            paths.add(bool(x.std() > 0.7))
            torch.testing.assert_close(compiled(x), model(x), msg=f"{rows} rows, scale {scale}")
    assert paths == {True, False}


class _CompactionsInAnUnrolledLoop(torch.nn.Module):
    """A compaction before a loop and one in each of its unrolled steps (fuzz seed 1006,
    reduced): each scatters `arange(n)`, which IREE merges into one dispatch that reads no
    tensor, read by the nested branches' regions."""

    def forward(self, h):
        picked = h[h.mean(1) > 0.05]
        h = h + 0.1 * picked.sum(0, keepdim=True)
        for _ in range(3):
            picked = h[h.mean(1) > 0.3]
            h = h + 0.1 * picked.sum(0, keepdim=True)
            if h.sum() > 0.9:
                break
        return h


def test_a_generator_read_by_nested_branches_compiles():
    """One graph, right on every number of steps. IREE 3.13 left the merged `arange(n)` outside
    every execution region ("streamable op expected to be in an execution region") and the
    model ran in eager; dync's flow-phase mend gives each block a copy of its own
    (`lit/upstream/iree-stream-generator-outside-region.mlir`)."""
    from torch.export import Dim

    model = _CompactionsInAnUnrolledLoop()
    compiled = dync.compile(model, (torch.rand(6, 4),), mode="graph", cache=False,
                            dynamic_shapes=({0: Dim("n", min=1, max=64)},))
    torch.manual_seed(0)
    for rows in (1, 3, 6, 20, 64):
        for scale, shift in ((0.01, 0.0), (0.1, 0.0), (1.0, -0.3), (0.3, 0.2)):
            x = scale * torch.rand(rows, 4) + shift
            torch.testing.assert_close(compiled(x), model(x), msg=f"{rows} rows, scale {scale}")


class _LongSums(torch.nn.Module):
    def forward(self, x):
        centred = x - x.mean()
        return x.sum(), centred.sum(), x.sum(dim=(1, 2, 3)), x.flatten(1).sum(dim=1)


def test_sums_over_many_values_round_like_a_cascade():
    """A float sum over 262144 values of several dims (or 16384 of each sample) is within
    float32 rounding of a cascade, as PyTorch's is: against float64, off by under 1e-7 of the
    sum of magnitudes (in one step IREE's lanes added 16384 values each, and `x.sum()` was off by 0.14 where
    eager was by 0.0012, `dync-split-reductions`); `x - x.mean()` sums to zero as closely, and
    a sum over the merged dim of `x.flatten(1)` is one over the dims it merges."""
    from torch.export import Dim

    torch.manual_seed(0)
    x = torch.tanh(torch.randn(16, 4, 64, 64) - 0.07)
    compiled = dync.compile(_LongSums(), (x[:2],), mode="graph", cache=False,
                            dynamic_shapes=({0: Dim("b", min=1, max=16)},))
    exact = _LongSums()(x.double())
    got = compiled(x)
    whole = x.double().abs().sum()
    per_sample = x.double().abs().sum(dim=(1, 2, 3))
    for i, (value, truth, magnitude) in enumerate(
            zip(got, exact, (whole, whole, per_sample, per_sample), strict=True)):
        error = ((value.double() - truth).abs() / magnitude).max().item()
        assert error < 1e-7, f"result {i}: off by {error:.3g} of the magnitudes summed"


class _IntegerResults(torch.nn.Module):
    def forward(self, x):
        return x.argmax(-1), (x * 10).to(torch.int32), x.shape[0]


def test_integer_results_come_back_alike_on_every_call():
    """Integer results (indices, tokens) come through DLPack on the fast path of a repeated
    call too, as the first call's and eager's, with the number the model returns."""
    model = _IntegerResults()
    compiled = dync.compile(model, (torch.randn(3, 5),),
                            dynamic_shapes=({0: torch.export.Dim("n", max=16)},), mode="graph")
    for n in (3, 3, 3, 7, 7):
        x = torch.randn(n, 5)
        got, want = compiled(x), model(x)
        assert [type(g) for g in got] == [type(w) for w in want]
        for g, w in zip(got[:2], want[:2], strict=True):
            assert g.dtype == w.dtype
            torch.testing.assert_close(g, w)
        assert got[2] == n
