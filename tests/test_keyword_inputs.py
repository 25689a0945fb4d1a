"""A compiled module takes its inputs by keyword as the model does (`compiled(x, mask=m)`),
in graph and host mode and once saved and loaded; a missing, repeated or unknown name is an
`InputError` that lists the inputs, and a model whose forward names none (`*args`) takes them
by position only."""

import json

import pytest
import torch
from torch import nn
from torch.export import Dim

import dync
from dync.errors import InputError, ModuleFormatError


class Masked(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x, mask=None):
        h = self.proj(x)
        return (h * mask[..., None]).sum(1) if mask is not None else h.sum(1)


class Starred(nn.Module):
    def forward(self, *tensors):
        return tensors[0] + tensors[1]


def _example(length: int = 5):
    return torch.randn(2, length, 8), (torch.rand(2, length) > 0.3).float()


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    return Masked().eval()


@pytest.mark.parametrize("mode", ["graph", "host"])
def test_inputs_by_keyword_match_eager(model, mode, tmp_path):
    n = Dim("n", min=2, max=32)
    compiled = dync.compile(model, _example(), dynamic_shapes={"x": {1: n}, "mask": {1: n}},
                            mode=mode, cache=False)
    assert compiled.manifest.parameters == ["x", "mask"]
    x, mask = _example(9)
    with torch.no_grad():
        want = model(x, mask)
    for got in (compiled(x, mask=mask), compiled(x=x, mask=mask), compiled(mask=mask, x=x)):
        torch.testing.assert_close(torch.as_tensor(got), want, rtol=1e-5, atol=1e-5)
    if mode == "graph":
        compiled.save(tmp_path / "m.vmfb")
        loaded = dync.load(tmp_path / "m.vmfb")
        torch.testing.assert_close(torch.as_tensor(loaded(x, mask=mask)), want, rtol=1e-5,
                                   atol=1e-5)


def test_a_wrong_keyword_names_the_inputs(model):
    compiled = dync.compile(model, _example(), mode="graph", cache=False)
    x, mask = _example()
    with pytest.raises(InputError, match="'mask': given by position too; it takes x, mask"):
        compiled(x, mask, mask=mask)
    with pytest.raises(InputError, match="'scale': no input of this module; it takes x, mask"):
        compiled(x, mask=mask, scale=2.0)
    with pytest.raises(InputError, match="missing input 'x': it takes x, mask"):
        compiled(mask=mask)


def test_a_forward_of_star_args_takes_inputs_by_position_only():
    compiled = dync.compile(Starred(), (torch.ones(3), torch.ones(3)), mode="graph", cache=False)
    assert compiled.manifest.parameters == []
    assert torch.equal(torch.as_tensor(compiled(torch.ones(3), torch.ones(3))), torch.full((3,), 2.0))
    with pytest.raises(InputError, match="by position only"):
        compiled(torch.ones(3), tensors=torch.ones(3))


def test_a_manifest_whose_parameters_are_not_names_is_refused(model, tmp_path):
    compiled = dync.compile(model, _example(), mode="graph", cache=False)
    path = compiled.save(tmp_path / "m.vmfb")
    manifest = next(p for p in tmp_path.iterdir() if p.suffix == ".json")
    data = json.loads(manifest.read_text())
    data["parameters"] = ["x", "__import__('os').system('true')"]
    manifest.write_text(json.dumps(data))
    with pytest.raises(ModuleFormatError, match="are not Python names"):
        dync.load(path)
