"""`dynamic_shapes` read once (`frontends/pytorch/declared_shapes.py`): every form torch.export
takes gives the same specs per argument, and a spec that cannot apply is the call's mistake."""

import pytest
import torch
from torch.export import Dim

import dync
from dync.errors import OptionError
from dync.frontends.pytorch.declared_shapes import DeclaredShapes

batch = Dim("batch", min=1, max=16)
length = Dim("length", min=2, max=64)


class TwoInputs(torch.nn.Module):
    def forward(self, x, y):
        return x.sum(1) + y.mean(0).sum()


class StarArgs(torch.nn.Module):
    def forward(self, x, *rest):
        return x + sum(r.sum() for r in rest)


X, Y = torch.randn(3, 5), torch.randn(7, 2)


@pytest.mark.parametrize("shapes", [
    {"x": {0: batch}, "y": {0: length}},
    {"y": {0: length}, "x": {0: batch}},  # keys in another order than the parameters
    ({0: batch}, {0: length}),
    [(batch, None), (length, 2)],  # per-axis sequences; an int is a static size
], ids=["dict", "dict-reordered", "tuple", "per-axis"])
def test_forms_agree(shapes):
    declared = DeclaredShapes.of(TwoInputs().forward, (X, Y), shapes)
    assert declared.names == ("x", "y")
    assert declared.dims((X, Y), 0) == {0: batch}
    assert declared.dims((X, Y), 1) == {0: length}


def test_star_args_grouped_or_listed():
    args = (torch.randn(3), torch.randn(4), torch.randn(5))
    forms = [({0: batch}, ({0: length}, None)), {"x": {0: batch}, "rest": [{0: length}, None]},
             [{0: batch}, {0: length}, None]]
    for shapes in forms:
        declared = DeclaredShapes.of(StarArgs().forward, args, shapes)
        assert declared.names == ("x", "rest_0", "rest_1")
        assert declared.specs == ({0: batch}, {0: length}, None)
        assert declared.for_export() == ({0: batch}, ({0: length}, None))
        assert declared.for_varargs() == (({0: batch}, {0: length}, None),)


def test_none_is_static():
    declared = DeclaredShapes.of(TwoInputs().forward, (X, Y), None)
    assert not declared.given and declared.for_export() is None
    assert declared.dims((X, Y), 0) == {}


@pytest.mark.parametrize("shapes, message", [
    ({"z": {0: batch}}, "names 'z', which the example does not pass to TwoInputs.forward: its arguments are x, y"),
    ({0: batch}, "reads like one tensor's spec"),
    ([{0: batch}], "lists 1 specs, and the example passes 2 arguments"),
    (batch, "must be a dict"),
])
def test_mistakes_are_named(shapes, message):
    with pytest.raises(OptionError, match=message):
        DeclaredShapes.of(TwoInputs().forward, (X, Y), shapes)


def test_mistake_refused_before_compiling():
    """The call's mistake is an `OptionError` from `dync.compile` itself, under `auto` too
    (no fallback: no mode would apply the spec)."""
    with pytest.raises(OptionError, match="names 'z'"):
        dync.compile(TwoInputs(), (X, Y), dynamic_shapes={"z": {0: batch}}, cache=False)


class Scaled(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(5, 5)

    def forward(self, x, y):
        return self.proj(x) * y.mean()


def test_reordered_dict_in_host_mode():
    """A dict in another order than `forward`'s parameters names each argument's dims by its
    key. Host mode read them in the dict's order: x took y's range (2..64), and a batch of
    one ran the captured `proj` as Python."""
    model = Scaled().eval()
    x, y = torch.randn(3, 5), torch.randn(6)
    compiled = dync.compile(model, (x, y), mode="host", cache=False, eager_if_faster=False,
                            dynamic_shapes={"y": {0: length}, "x": {0: batch}})
    for b, n in [(1, 2), (16, 64), (9, 40)]:
        x, y = torch.randn(b, 5), torch.randn(n)
        torch.testing.assert_close(compiled(x, y), model(x, y), rtol=1e-4, atol=1e-5)
    assert compiled.stats and all(s["python"] == 0 and s["compiled"] == 3
                                  for s in compiled.stats.values()), compiled.stats
