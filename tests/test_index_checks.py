"""Indices read from data are checked (`dync-check-indices`): out of range — just past the
end, negative where eager refuses negatives, 10**6 — raises `dync.IndexOutOfRangeError`
naming the op and the model's line, as eager raises; in range, results match eager,
negative indices included (for `index_put` too, which IREE 3.13 got wrong; and for a 0-d
tensor index in a data-dependent loop, which dync's rewriting once wrapped around the dim)."""

from pathlib import Path

import numpy as np
import pytest
import torch
from torch.export import Dim

import dync

N = Dim("n", min=1, max=64)


class Embed(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.table = torch.nn.Embedding(10, 4)

    def forward(self, ids):
        return self.table(ids) * 2  # LINE: embedding


class Select(torch.nn.Module):
    def forward(self, x, i):
        return torch.index_select(x, 0, i) + 1  # LINE: index_select


class Gather(torch.nn.Module):
    def forward(self, x, i):
        return torch.gather(x, 1, i) + 1  # LINE: gather


class Scatter(torch.nn.Module):
    def forward(self, x, i):
        return x.scatter(0, i, 5.0) + 1  # LINE: scatter


class Index(torch.nn.Module):
    def forward(self, x, i):
        return x[i] * 2  # LINE: index


class IndexPair(torch.nn.Module):
    """`x[rows, columns]`: one linear index, each part checked and wrapped in its own dim (a
    column past the end read the next row; a negative one the row before's)."""

    def forward(self, x, i):
        return x[i.flip(0), i] * 2  # LINE: index_pair


class IndexPut(torch.nn.Module):
    def forward(self, x, i):
        y = x.clone()
        y[i] = 7.0  # LINE: index_put
        return y + 1


class Position(torch.nn.Module):
    """`x[i + k]` for a 0-d tensor `k` in a data-dependent loop: dync's rewriting reads it
    with `index_select`, an index past the end or before the start never wraps around."""

    def forward(self, x, k):
        acc = x[0] * 0
        for i in range(int((x[:, 0] > 0).sum())):  # X has 5 positive rows
            acc = acc + x[i + k]  # LINE: position
        return acc


class PositionPut(torch.nn.Module):
    def forward(self, x, k):
        y = x.clone()
        for i in range(int((x[:, 0] > 0).sum())):
            y[i + k] = y[i + k] * 2 + 1  # LINE: position_put
        return y


class ListItem(torch.nn.Module):
    """`items[k]` of a list appended on a data-dependent path (a bounded buffer while
    exporting): an item past the ones appended raises, not a row of the buffer's spare."""

    def forward(self, x, k):
        items = []
        for i in range(x.shape[0]):
            if x[i, 0] > k:  # X: 10 rows over -2, 8 over -1, 5 over 0, 1 over 1, none over 2
                items.append(x[i])
        return items[2] * 2  # LINE: list_item


X = torch.randn(10, 4, generator=torch.Generator().manual_seed(0))

# model, example args, dynamic shapes, in-range indices, out-of-range indices, eager's error.
CASES = {
    "embedding": (Embed, (torch.tensor([[1, 2, 3]]),), ({1: N},),
                  [[[0, 9, 4]]], [[[10]], [[-1]], [[10**6]]], IndexError),
    "index_select": (Select, (X, torch.tensor([4, 0])), (None, {0: N}),
                     [[9, 0, 3]], [[10], [-1], [10**6]], IndexError),
    "gather": (Gather, (X, torch.zeros(10, 2, dtype=torch.int64)), (None, None),
               [np.arange(20).reshape(10, 2) % 4], [np.full((10, 2), 4), np.full((10, 2), -1)],
               RuntimeError),
    "scatter": (Scatter, (X, torch.tensor([[0, 1, 2, 3]])), (None, None),
                [[[9, 0, 5, 1]]], [[[10, 0, 0, 0]], [[0, -1, 0, 0]], [[10**6, 0, 0, 0]]],
                RuntimeError),
    "index": (Index, (X, torch.tensor([0, 3])), (None, {0: N}),
              [[0, -1, 9, -10]], [[10], [-11], [10**6]], IndexError),
    "index_pair": (IndexPair, (X, torch.tensor([0, 3])), (None, {0: N}),
                   [[0, -1, 3, -4], [2, 1]], [[4], [-5], [1, 10**6]], IndexError),
    "index_put": (IndexPut, (X, torch.tensor([0, 2])), (None, {0: N}),
                  [[0, -2], [-1, 3, -10]], [[10], [-11], [10**6]], IndexError),
    "position": (Position, (X, torch.tensor(0)), (None, None),
                 [0, 5, -10, -3], [6, 9, -11, -15, 10**6], IndexError),
    "list_item": (ListItem, (X, torch.tensor(0)), (None, None),
                  [-2, -1, 0], [1, 2], IndexError),
    "position_put": (PositionPut, (X, torch.tensor(0)), (None, None),
                     [0, 5, -10, -3], [6, 9, -11, -15, 10**6], IndexError),
}


def _line(marker: str) -> int:
    lines = Path(__file__).read_text().splitlines()
    return next(i + 1 for i, line in enumerate(lines) if line.endswith(f"# LINE: {marker}"))


@pytest.fixture(scope="module", params=list(CASES))
def case(request):
    name = request.param
    cls, example, dims, good, bad, eager_error = CASES[name]
    torch.manual_seed(0)
    model = cls().eval()
    compiled = dync.compile(model, example, dynamic_shapes=dims)
    return name, model, example, compiled, good, bad, eager_error


def _args(example, index):
    return (*example[:-1], torch.as_tensor(np.asarray(index), dtype=torch.int64))


def test_indices_in_range_match_eager(case):
    _, model, example, compiled, good, _, _ = case
    for index in good:
        args = _args(example, index)
        torch.testing.assert_close(compiled(*args), model(*args), rtol=1e-5, atol=1e-6)


def test_indices_out_of_range_raise_and_name_the_line(case):
    name, model, example, compiled, _, bad, eager_error = case
    for index in bad:
        args = _args(example, index)
        with pytest.raises(eager_error):
            model(*args)
        with pytest.raises(dync.IndexOutOfRangeError,
                           match=rf"test_index_checks\.py:{_line(name)} reads an index outside"):
            compiled(*args)
        with pytest.raises(IndexError):  # what code written against eager catches
            compiled(*args)
    # A failed call leaves the module usable.
    args = _args(example, case[4][0])
    torch.testing.assert_close(compiled(*args), model(*args), rtol=1e-5, atol=1e-6)


def test_an_onnx_gather_names_its_node():
    """ONNX Gather wraps negative indices ([-n, n)); past that, the error names the node."""
    import onnx
    from onnx import TensorProto, helper
    from onnx.reference import ReferenceEvaluator

    graph = helper.make_graph(
        [helper.make_node("Gather", ["x", "i"], ["y"], axis=0, name="lookup")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5, 4]),
         helper.make_tensor_value_info("i", TensorProto.INT64, ["n"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    compiled = dync.compile(model)
    x = np.arange(20, dtype=np.float32).reshape(5, 4)
    index = np.array([0, -1, 4, -5])
    (want,) = ReferenceEvaluator(model).run(None, {"x": x, "i": index})
    np.testing.assert_array_equal(compiled(x, index)[0], want)
    for bad in ([5], [-6], [10**6]):
        with pytest.raises(dync.IndexOutOfRangeError, match="at node 'lookup' reads an index"):
            compiled(x, np.array(bad))


class EmbedGru(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.table = torch.nn.Embedding(10, 4)
        self.gru = torch.nn.GRU(4, 8)

    def forward(self, ids):
        return self.gru(self.table(ids))[0]


def test_a_recurrent_layers_own_time_loop_is_not_checked(tmp_path):
    """The loop dync writes for a GRU over a dynamic length indexes its sequence by a counter
    in range by construction: only the user's embedding is checked (each check costs a read
    back per step), and the results match eager."""
    torch.manual_seed(0)
    model = EmbedGru().eval()
    ir_path = tmp_path / "gru.mlir"
    compiled = dync.compile(model, (torch.tensor([[1], [2], [3]]),),
                            dynamic_shapes=({0: Dim("t", min=2, max=32)},), dump_ir=ir_path)
    checks = [line for line in ir_path.read_text().splitlines() if "dync index check" in line]
    assert len(checks) == 1 and "embedding at" in checks[0], checks
    ids = torch.tensor([[0], [9], [4], [4], [7]])
    torch.testing.assert_close(compiled(ids), model(ids), rtol=1e-4, atol=1e-5)
    with pytest.raises(dync.IndexOutOfRangeError):
        compiled(torch.tensor([[0], [10]]))


class TwoLookups(torch.nn.Module):
    """Two lookups into tables that are never empty (a static embedding, rows of `x` whose
    count is declared at least 2), then a branch on their values: both checks are read by the
    host together, at the branch, instead of one sync per lookup."""

    def __init__(self):
        super().__init__()
        self.table = torch.nn.Embedding(10, 4)

    def forward(self, ids, x, rows):
        a = self.table(ids).sum(0)  # LINE: first lookup
        b = x[rows].sum(0)  # LINE: second lookup
        if (a + b).sum() > 0:
            return a * b
        return a - b


def test_checks_read_together_raise_the_first_bad_ones_line(tmp_path):
    torch.manual_seed(0)
    model = TwoLookups().eval()
    ir_path = tmp_path / "two.mlir"
    x = torch.randn(6, 4)
    n = Dim("rows", min=2, max=64)
    compiled = dync.compile(model, (torch.tensor([1, 2]), x, torch.tensor([0, 1])),
                            dynamic_shapes=({0: N}, {0: n}, {0: Dim("m", min=1, max=64)}),
                            dump_ir=ir_path)
    checks = [line for line in ir_path.read_text().splitlines() if "dync index check" in line]
    assert len(checks) == 2, checks
    # One read of the first bad check's position, each assert comparing against it.
    assert ir_path.read_text().count("torch.aten.Int.Tensor") == 1
    ids, rows = torch.tensor([3, 9, 0]), torch.tensor([5, -6, 2])
    for table in (x, torch.randn(2, 4), -x):
        torch.testing.assert_close(compiled(ids, table, rows % 2), model(ids, table, rows % 2))
    with torch.no_grad():
        torch.testing.assert_close(compiled(ids, x, rows), model(ids, x, rows))
    second = rf"test_index_checks\.py:{_line('second lookup')} reads an index outside"
    first = rf"test_index_checks\.py:{_line('first lookup')} reads an index outside"
    with pytest.raises(dync.IndexOutOfRangeError, match=second):
        compiled(ids, x, torch.tensor([0, 6]))
    with pytest.raises(dync.IndexOutOfRangeError, match=first):
        compiled(torch.tensor([10]), x, torch.tensor([-7]))
    with pytest.raises(dync.IndexOutOfRangeError, match=first):
        compiled(torch.tensor([-1]), x, torch.tensor([0]))
    torch.testing.assert_close(compiled(ids, x, rows), model(ids, x, rows))


class Routed(torch.nn.Module):
    """Index reads whose indices are in range where they are made: the rows `where` finds
    (a per-expert `continue` puts each expert's reads in a function of its own), the flat
    index of the (row, slot) pairs, the `index_add_` back, and a greedy decoder's `argmax`
    token into an embedding as wide as the logits, fed back by an in-graph loop."""

    def __init__(self):
        super().__init__()
        self.gate = torch.nn.Linear(8, 3)
        self.experts = torch.nn.ModuleList(torch.nn.Linear(8, 8) for _ in range(3))
        self.embed = torch.nn.Embedding(5, 8)
        self.out = torch.nn.Linear(8, 5)

    def forward(self, x):
        weights, chosen = torch.topk(self.gate(x).softmax(-1), 2, dim=-1)
        y = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            rows, slot = torch.where(chosen == e)
            if rows.numel() == 0:
                continue
            y.index_add_(0, rows, expert(x[rows]) * weights[rows, slot].unsqueeze(-1))
        token = self.out(y.mean(0, keepdim=True)).argmax(-1)
        for _ in range(3):
            token = self.out(self.embed(token) + y[:1]).argmax(-1)
        return y, token


def test_indices_proven_in_range_are_not_checked(tmp_path):
    torch.manual_seed(0)
    model = Routed().eval()
    ir_path = tmp_path / "routed.mlir"
    compiled = dync.compile(model, (torch.randn(6, 8),),
                            dynamic_shapes=({0: Dim("tokens", min=1, max=32)},),
                            dump_ir=ir_path)
    assert "dync index check" not in ir_path.read_text()
    gen = torch.Generator().manual_seed(1)
    unrouted = 0
    for n in (1, 2, 5, 17, 32):
        for _ in range(4):
            x = torch.randn(n, 8, generator=gen)
            with torch.no_grad():
                want = model(x)
                unrouted += len(set(range(3)) - set(torch.topk(model.gate(x), 2)[1].flatten()
                                                    .tolist()))
            got = compiled(x)
            torch.testing.assert_close(got[0], want[0], rtol=1e-4, atol=1e-5)
            torch.testing.assert_close(got[1], want[1])
    assert unrouted > 0  # the `continue` was taken
