"""Outputs nested in the model's own namedtuples and dataclasses: returned as such from a
compiled call, with the numbers, strings and Nones the model returns among them; a namedtuple from a saved module loaded where its class is not defined as a
tuple class of the same name and fields, built from the manifest without evaluating
anything in it."""

from __future__ import annotations

import json
from collections import namedtuple
from dataclasses import dataclass

import pytest
import torch
from torch.export import Dim

import dync
from dync.errors import ModuleFormatError
from dync.output_tree import CONSTANT_NODE, OPTIONAL_NODE, SCALAR_NODE, OutputTree

Heads = namedtuple("Heads", ["logits", "hidden"])


class ReturnsNamedTuples(torch.nn.Module):
    def forward(self, x):
        local = namedtuple("Local", ["total"])  # a new class on every call
        h = x.cumsum(1)
        return Heads(logits=h.mean(1), hidden=h), local(total=h.sum())


def test_namedtuple_outputs_come_back_as_the_models_classes(tmp_path):
    x = torch.randn(2, 7, 4)
    compiled = dync.compile(ReturnsNamedTuples(), (x,), dynamic_shapes=({1: Dim("n", max=64)},),
                            mode="graph", cache=False)
    heads, local = compiled(torch.randn(2, 9, 4))
    assert type(heads) is Heads and heads.hidden.shape == (2, 9, 4)
    assert type(local).__name__ == "Local" and local._fields == ("total",)
    loaded = dync.load(compiled.save(tmp_path / "named.vmfb"))
    heads, local = loaded(x)
    torch.testing.assert_close(heads.logits, ReturnsNamedTuples()(x)[0].logits)


@dataclass
class Output:
    logits: torch.Tensor
    hidden: torch.Tensor


class ReturnsADataclass(torch.nn.Module):
    def forward(self, x):
        h = x.cumsum(1)
        return Output(logits=h.mean(1), hidden=h)


def test_a_dataclass_of_outputs_is_registered_and_returned():
    """torch.export refuses a dataclass it has no pytree registration for; dync registers
    the ones the model returns, as `torch.export.register_dataclass` would by hand."""
    x = torch.randn(2, 7, 4)
    compiled = dync.compile(ReturnsADataclass(), (x,), dynamic_shapes=({1: Dim("n", max=64)},),
                            mode="graph", cache=False)
    y = torch.randn(2, 11, 4)
    got, want = compiled(y), ReturnsADataclass()(y)
    assert type(got) is Output
    torch.testing.assert_close(got.hidden, want.hidden)
    torch.testing.assert_close(got.logits, want.logits)


class ReturnsNones(torch.nn.Module):
    def forward(self, x):
        h = x.cumsum(1)
        return h, None, {"attentions": None, "total": h.sum()}


def test_none_outputs_come_back_as_none(tmp_path):
    """A `None` among the outputs (an optional result the model did not compute, as
    `(logits, None)` or `{"attentions": None}`) is no output of the compiled function and
    comes back in its place, also from a saved module; it ran in eager before."""
    x = torch.randn(2, 7, 4)
    compiled = dync.compile(ReturnsNones(), (x,), dynamic_shapes=({1: Dim("n", max=64)},),
                            mode="graph", cache=False)
    y = torch.randn(2, 10, 4)
    for module in (compiled, dync.load(compiled.save(tmp_path / "nones.vmfb"))):
        h, nothing, rest = module(y)
        assert nothing is None and rest["attentions"] is None and list(rest) == ["attentions",
                                                                               "total"]
        torch.testing.assert_close(h, y.cumsum(1))
        torch.testing.assert_close(rest["total"], y.cumsum(1).sum())
    bad = json.dumps([1, {"type": "builtins.NoneType", "context": "null", "children_spec": [
        {"type": None, "context": None, "children_spec": []}]}])
    with pytest.raises(ModuleFormatError, match="a NoneType leaf has children"):
        OutputTree(bad)


class ReturnsNumbers(torch.nn.Module):
    def forward(self, x):
        n = x.shape[0]
        return {"y": x * 2, "rows": n, "half": n / 2.0, "many": n > 3, "version": 3,
                "kind": "ok", "count": (x > 0).sum().item(), "peak": x.max().item()}, \
            Exit(x.mean(0), n - 1, "last", None)


@dataclass
class Exit:
    logits: torch.Tensor
    layer: int
    name: str
    extra: torch.Tensor | None


class EarlyExitWithIndex(torch.nn.Module):
    """An early exit returning which layer it left at, in a tuple or a dict."""

    def __init__(self, as_dict: bool = False):
        super().__init__()
        with torch.random.fork_rng():
            torch.manual_seed(0)
            self.layers = torch.nn.ModuleList(torch.nn.Linear(8, 8) for _ in range(3))
        self.as_dict = as_dict

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = torch.tanh(layer(x))
            if x.mean() > 0.2:
                return {"logits": x, "exit": i} if self.as_dict else (x, i)
        n = len(self.layers)
        return {"logits": x, "exit": n} if self.as_dict else (x, n)


def _same(got, want) -> None:
    assert type(got) is type(want), (got, want)
    if isinstance(want, torch.Tensor):
        torch.testing.assert_close(got, want)
    elif isinstance(want, dict):
        assert list(got) == list(want)
        for k in want:
            _same(got[k], want[k])
    elif isinstance(want, tuple | list):
        for g, w in zip(got, want, strict=True):
            _same(g, w)
    elif hasattr(want, "__dataclass_fields__"):
        _same(list(vars(got).values()), list(vars(want).values()))
    elif isinstance(want, float):
        assert got == pytest.approx(want, rel=1e-6), (got, want)
    else:
        assert got == want


def test_numbers_and_constants_among_the_outputs_come_back_as_such(tmp_path):
    """Sizes, arithmetic on them, `.item()`s and constants the model returns come back as the
    Python ints, floats, bools and strings eager gives, from one graph (they sent the whole
    model to eager before), also inside a dataclass (which torch rebuilds) and from a saved
    module."""
    x = torch.randn(5, 4)
    compiled = dync.compile(ReturnsNumbers(), (x,), dynamic_shapes=({0: Dim("n", max=64)},),
                            mode="graph", cache=False)
    loaded = dync.load(compiled.save(tmp_path / "numbers.vmfb"))
    for rows in (1, 3, 4, 9):
        y = torch.randn(rows, 4)
        for module in (compiled, loaded):
            _same(module(y), ReturnsNumbers()(y))


class ArithmeticOnNumbersFromTheData(torch.nn.Module):
    """Python arithmetic on `.item()`s, an `int()` and a counter a loop left by a break on
    data changed: numbers in eager; they came back 0-d tensors (arithmetic dropped the mark
    that makes them numbers), and a bool `.item()` failed the import (`sym_ite`)."""

    def __init__(self):
        super().__init__()
        with torch.random.fork_rng():
            torch.manual_seed(0)
            self.lin = torch.nn.Linear(8, 8)
            self.blocks = torch.nn.ModuleList(torch.nn.Linear(8, 8) for _ in range(3))

    def forward(self, x):
        y = self.lin(x)
        n = (y > 0).sum().item()
        m = int(y.argmax())
        depth = 0
        for block in self.blocks:
            y = block(y)
            depth += 1
            if y.mean() > 0:
                break
        return (y, n + 1, n / 2, n > 3, 2 - n, m * 2 + n, -m, (x.mean() > 0).item(),
                depth * 0.5 + 1, depth + n)


def test_arithmetic_on_numbers_from_the_data_gives_numbers():
    model = ArithmeticOnNumbersFromTheData()
    compiled = dync.compile(model, (torch.randn(3, 8),), dynamic_shapes=({0: Dim("b", max=16)},),
                            mode="graph", cache=False)
    generator = torch.Generator().manual_seed(2)
    flags = set()
    for rows in (1, 2, 5) * 4:
        y = torch.randn(rows, 8, generator=generator) * 3
        want = model(y)
        _same(compiled(y), want)
        flags.add(want[7])
    assert flags == {True, False}


@pytest.mark.parametrize("as_dict", [False, True], ids=["tuple", "dict"])
def test_an_early_exits_index_comes_back_as_an_int(as_dict):
    """`return out, i` from inside a data-dependent exit: the index crosses the branches as a
    0-d tensor and comes back an int, as eager's (a tensor before); a dict crosses the
    branches item by item (it sent the model to host mode before)."""
    model = EarlyExitWithIndex(as_dict).eval()
    compiled = dync.compile(model, (torch.randn(2, 8),), dynamic_shapes=({0: Dim("b", max=16)},),
                            mode="graph", cache=False)
    layers = set()
    generator = torch.Generator().manual_seed(1)
    for rows in (1, 2, 3) * 5:
        y = torch.randn(rows, 8, generator=generator) * 2
        want = model(y)
        _same(compiled(y), want)
        layers.add(want["exit"] if as_dict else want[1])
    assert len(layers) > 2  # exits taken
    assert compiled.report.mode == "in-graph"


@pytest.mark.parametrize("node, error", [
    ({"type": SCALAR_NODE, "context": "os.system", "children_spec": []}, "a scalar of type"),
    ({"type": CONSTANT_NODE, "context": "[1, 2]", "children_spec": []}, "a constant of type"),
    ({"type": CONSTANT_NODE, "context": "{\"a\": 1}", "children_spec": []}, "a constant of"),
    ({"type": SCALAR_NODE, "context": "int", "children_spec": [
        {"type": None, "context": None, "children_spec": []}]}, "a scalar leaf has children"),
    ({"type": OPTIONAL_NODE, "context": None, "children_spec": [
        {"type": None, "context": None, "children_spec": []}] * 3}, "an optional node's"),
    ({"type": OPTIONAL_NODE, "context": None, "children_spec": [
        {"type": None, "context": None, "children_spec": []},
        {"type": SCALAR_NODE, "context": "int", "children_spec": []}]}, "an optional node's"),
])
def test_malformed_number_and_constant_leaves_are_refused(node, error):
    with pytest.raises(ModuleFormatError, match=error):
        OutputTree(json.dumps([1, {"type": "builtins.tuple", "context": "null",
                                   "children_spec": [node]}]))


@pytest.mark.parametrize("depth, error", [(100, "nested more than 64 deep"),
                                          (200_000, "not JSON")])
def test_an_output_tree_nested_too_deep_is_refused(depth, error):
    """Also below a node only torch rebuilds (a dataclass), and past Python's stack."""
    node = '{"type": "mymodule.Data", "context": "[]", "children_spec": ['
    leaf = '{"type": null, "context": null, "children_spec": []}'
    with pytest.raises(ModuleFormatError, match=error):
        OutputTree("[1, " + node * depth + leaf + "]}" * depth + "]").nest([torch.ones(1)])


def _tree(fields: list, name: str = "Heads", module: str = "nowhere") -> str:
    leaf = {"type": None, "context": None, "children_spec": []}
    context = json.dumps({"module": module, "name": name, "fields": fields})
    return json.dumps([1, {"type": "namedtuple", "context": context,
                           "children_spec": [leaf] * len(fields)}])


def test_a_namedtuple_no_module_defines_is_made_from_its_fields():
    tree = OutputTree(_tree(["logits", "hidden"]))
    out = tree.nest([1, 2])
    assert isinstance(out, tuple) and type(out).__name__ == "Heads"
    assert (out.logits, out.hidden, out._asdict()) == (1, 2, {"logits": 1, "hidden": 2})
    assert repr(out) == "Heads(logits=1, hidden=2)"


@pytest.mark.parametrize("fields", [["ok", "__import__('os').system('x')"], ["class", "b"],
                                    ["a"], [1, 2]])
def test_namedtuple_fields_that_are_not_names_are_refused(fields):
    data = json.loads(_tree(["a", "b"]))
    data[1]["context"] = json.dumps({"module": "m", "name": "N", "fields": fields})
    with pytest.raises(ModuleFormatError, match="malformed output tree"):
        OutputTree(json.dumps(data))
