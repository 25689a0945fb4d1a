"""A variable a data-dependent branch leaves None on one path and a tensor on the other
(`rewrite/optionals.py`; it crossed the branch as zeros, so that `out is None` after an early
exit was False on every path and an optional output came back zeros): one graph, a tensor and its presence, `is None` a predicate on the
presence, None given back where the model returns it absent. Each model is compiled from an
example of either path and compared with eager on inputs taking both, saved and loaded too
(the optional node of the manifest's output tree)."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.export import Dim


class ExitThenHeadsOfTheResult(nn.Module):
    """`out = None` until an exit sets it, the final head where none did, then the result read
    as a tensor (softmax, argmax, cat)."""

    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Linear(8, 8) for _ in range(2))
        self.head, self.final = nn.Linear(8, 4), nn.Linear(8, 4)

    def forward(self, x):
        out = None
        for block in self.blocks:
            if x.mean() > 0:
                out = self.head(x)
                break
            x = block(x) - 1
        if out is None:
            out = self.final(x)
        return out.softmax(-1), out.argmax(-1), torch.cat([out, x[:, :1]], 1)


class _Auxiliary(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin, self.aux = nn.Linear(8, 8), nn.Linear(8, 2)

    def outputs(self, x):
        """An output, and an auxiliary one computed on one path only, None on the other."""
        out, aux = self.lin(x), None
        if x.mean() > 0:
            aux = self.aux(out)
        return out, aux


class AuxiliaryReturned(_Auxiliary):
    def forward(self, x):
        return self.outputs(x)


class AuxiliaryTestedLater(_Auxiliary):
    """`if aux is not None and aux.sum() > 0` after the branch that may set it."""

    def forward(self, x):
        out, aux = self.outputs(x)
        if aux is not None and aux.sum() > 0:
            out = out + aux.sum()
        return out


class AuxiliaryInADict(_Auxiliary):
    def forward(self, x):
        out, aux = self.outputs(x)
        return {"out": out, "aux": aux, "batch": x.shape[0]}


class EarlyReturnOfNone(nn.Module):
    """`return h, None` from inside a branch, `return h, aux` after it."""

    def __init__(self):
        super().__init__()
        self.lin, self.aux = nn.Linear(8, 8), nn.Linear(8, 2)

    def forward(self, x):
        h = self.lin(x)
        if x.mean() > 0:
            return h, None
        return h, self.aux(h)


class ConditionalExpressionOnPresence(_Auxiliary):
    def forward(self, x):
        _, aux = self.outputs(x)
        return x + aux.mean() if aux is not None else x * 2


class SetInANestedBranch(_Auxiliary):
    def forward(self, x):
        aux = None
        if x.mean() > 0:
            if x.std() > 0.3:
                aux = self.lin(x)
        return x, aux


_INPUTS = [torch.rand(3, 8) * k + shift for k in (0.1, 1.0, 3.0) for shift in (-1.5, 0.2, 1.0)]
_INPUTS += [-torch.rand(2, 8), torch.rand(5, 8)]


@pytest.mark.parametrize("example_sign", [1.0, -1.0])
@pytest.mark.parametrize("build", [ExitThenHeadsOfTheResult, AuxiliaryReturned,
                                   AuxiliaryTestedLater, AuxiliaryInADict, EarlyReturnOfNone,
                                   ConditionalExpressionOnPresence, SetInANestedBranch])
def test_none_on_one_path_in_one_graph(build, example_sign, tmp_path):
    import dync

    torch.manual_seed(0)
    model = build().eval()
    example = example_sign * (torch.rand(2, 8) + 0.1)
    compiled = dync.compile(model, (example,), dynamic_shapes=({0: Dim("batch", max=16)},),
                            cache=False, mode="graph")
    compiled.save(tmp_path / "model.vmfb")
    loaded = dync.load(tmp_path / "model.vmfb")
    absent = set()
    for x in _INPUTS:
        with torch.no_grad():
            want = model(x)
        absent.add(any(v is None for v in (want.values() if isinstance(want, dict) else
                                           want if isinstance(want, tuple) else [want])))
        torch.testing.assert_close(compiled(x), want)
        torch.testing.assert_close(loaded(x), want)
    if build not in (ExitThenHeadsOfTheResult, AuxiliaryTestedLater,
                     ConditionalExpressionOnPresence):
        assert absent == {True, False}  # both paths returned


def test_a_loop_carrying_a_variable_set_from_none_is_refused_not_wrong():
    """A data-dependent loop that sets a variable left None before it: not carried (the
    model runs outside one graph, correct)."""
    import dync

    class Found(nn.Module):
        def forward(self, x):
            found = None
            for row in x:
                if row.sum() > 0:
                    found = row
            return found if found is not None else x[0]

    model = Found()
    compiled = dync.compile(model, (torch.randn(4, 3),),
                            dynamic_shapes=({0: Dim("rows", min=2, max=16)},), cache=False)
    for x in (torch.randn(5, 3), -torch.rand(3, 3), torch.rand(2, 3)):
        torch.testing.assert_close(compiled(x), model(x))
