"""Odd functions near 0, relatively accurate as eager's: IREE's sin, tan, sinh, asinh and
atanh of f32 are accurate to about 1e-7 absolute there (sin(-1e-8) came out +6.2e-8, `sinc`
near 0 off by up to 2.98: `lit/upstream/iree-sin-near-zero.mlir`); `dync-near-zero` takes a
series or an identity near 0, from PyTorch and from ONNX."""

from __future__ import annotations

import numpy as np
import torch
from onnx import TensorProto, helper
from torch.export import Dim

import dync

_MAGNITUDES = torch.logspace(-9, 0.5, 400)
_X = torch.cat([_MAGNITUDES, -_MAGNITUDES, torch.tensor([0.0, -0.0, 0.7853, 0.7854, 1.0, -1.0,
                                                          3.0, -20.0])])
_UNIT = _X[_X.abs() <= 1]  # atanh's domain, its ends included


class _OddFunctions(torch.nn.Module):
    def forward(self, x, unit):
        return (torch.sin(x), torch.tan(x), torch.sinh(x), torch.asinh(x), torch.sinc(x),
                torch.atanh(unit))


def _relative_error(got: torch.Tensor, want: torch.Tensor) -> float:
    finite = torch.isfinite(want)
    assert torch.equal(torch.isfinite(got), finite) and torch.equal(got[~finite], want[~finite])
    got, want = got[finite].double(), want[finite].double()
    return float(((got - want).abs() / want.abs().clamp_min(1e-30)).max())


def test_odd_functions_are_relatively_accurate_near_zero():
    compiled = dync.compile(_OddFunctions(), (_X, _UNIT),
                            dynamic_shapes=({0: Dim("n", min=1, max=1024)},
                                            {0: Dim("m", min=1, max=1024)}),
                            mode="graph", cache=False)
    names = ("sin", "tan", "sinh", "asinh", "sinc", "atanh")
    for x, unit in ((_X, _UNIT), (_X[:50], _UNIT[-9:])):
        small = x.abs() < 0.5  # past it, sin and tan are well conditioned only away from k*pi
        for name, got, want in zip(names, compiled(x, unit),
                                   _OddFunctions()(x.double(), unit.double()), strict=True):
            if name == "atanh":
                assert _relative_error(got, want) < 1e-6, name
            else:
                assert _relative_error(got[small], want[small]) < 1e-6, name
                torch.testing.assert_close(got, want.float(), rtol=1e-5, atol=1e-6)


def test_onnx_sin_is_relatively_accurate_near_zero():
    nodes = [helper.make_node(op, ["x"], [op.lower()], name=op.lower())
             for op in ("Sin", "Tan", "Sinh", "Asinh")]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])],
        [helper.make_tensor_value_info(n.output[0], TensorProto.FLOAT, ["n"]) for n in nodes])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    x = np.array([-1e-8, 3e-7, -1e-4, 2e-3, 0.3], dtype=np.float32)
    got = dync.compile(model, cache=False)(x)
    for values, f in zip(got, (np.sin, np.tan, np.sinh, np.arcsinh), strict=True):
        np.testing.assert_allclose(values, f(x.astype(np.float64)), rtol=1e-6)
