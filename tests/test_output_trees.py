"""Outputs nested in the model's own namedtuples and dataclasses: returned as such from a
compiled call; a namedtuple from a saved module loaded where its class is not defined as a
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
from dync.output_tree import OutputTree

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
    with pytest.raises(ModuleFormatError, match="a None has children"):
        OutputTree(bad)


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
