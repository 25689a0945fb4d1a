"""Integer ops at every magnitude. Negation: IREE computes `-x` of an integer tensor in f32,
exact only under 2**24 (`lit/upstream/torch-int-neg-f32.mlir`); `dync-int-negation` multiplies
by -1 instead, from PyTorch and from ONNX. Ops torch-mlir does not lower for integers (the
whole model ran in eager), decomposed by dync (`frontends/pytorch/integer_ops.py`)."""

from __future__ import annotations

import numpy as np
import torch
from onnx import TensorProto, helper
from torch.export import Dim

import dync


class _Negations(torch.nn.Module):
    def forward(self, x):
        return (-x, torch.neg(x.int()), torch.where(x > 0, x, -x), torch.maximum(x, -x),
                -x.short(), -x.to(torch.int8))


_X = torch.tensor([2 ** 40 + 12345, -(2 ** 62) - 1, 2_000_000_001, -16_777_217, 33_554_433,
                   0, -5, 2 ** 63 - 1])


def test_negation_is_exact_beyond_float_precision():
    compiled = dync.compile(_Negations(), (_X,), dynamic_shapes=({0: Dim("n", min=1, max=64)},),
                            mode="graph", cache=False)
    for x in (_X, _X[2:5], -_X[:3]):
        for got, want in zip(compiled(x), _Negations()(x), strict=True):
            assert got.dtype == want.dtype
            torch.testing.assert_close(got, want, rtol=0, atol=0)


def test_onnx_neg_is_exact_beyond_float_precision():
    graph = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["y"], name="negate")], "g",
        [helper.make_tensor_value_info("x", TensorProto.INT32, ["n"])],
        [helper.make_tensor_value_info("y", TensorProto.INT32, ["n"])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    x = np.array([2_000_000_001, -16_777_217, 7, -2 ** 31 + 1], dtype=np.int32)
    (got,) = dync.compile(model, cache=False)(x)
    np.testing.assert_array_equal(got, -x)


class _Unlowered(torch.nn.Module):
    def forward(self, x):
        return (torch.fmod(x, 1_000_003), torch.fmod(x.int(), -7), x ^ 0x5A5A5A5A5A5A, x | 12345,
                torch.bitwise_xor(x.int(), 77), x ** 2, x.int() ** 3, x ** 0, torch.roll(x, 3),
                torch.roll(x.view(-1, 1).expand(-1, 2), -1))


def test_unlowered_integer_ops_compile_and_are_exact():
    compiled = dync.compile(_Unlowered(), (_X,), dynamic_shapes=({0: Dim("n", min=2, max=64)},),
                            mode="graph", cache=False)
    for x in (_X, _X[2:5], torch.arange(-20, 20) * 987_654_321):
        for got, want in zip(compiled(x), _Unlowered()(x), strict=True):
            assert got.dtype == want.dtype
            torch.testing.assert_close(got, want, rtol=0, atol=0)


class _EightBit(torch.nn.Module):
    def forward(self, x):
        return (x * 3, x - 5, 7 - x, x * -2, x % 5, x // 3, torch.div(x, 3, rounding_mode="trunc"),
                torch.fmod(x, 5), x.max(), x.min())


def test_eight_bit_arithmetic_with_scalars_compiles_and_wraps_as_eager():
    """IREE crashed compiling these for int8 and uint8 (`lit/upstream/torch-int8-scalar-
    operand.mlir`): the whole model ran in eager. `dync-widen-int8` computes them in int32;
    products and differences wrap as eager's."""
    for dtype, low, high in ((torch.int8, -128, 128), (torch.uint8, 0, 256)):
        x = torch.arange(low, high, dtype=dtype)
        compiled = dync.compile(_EightBit(), (x[:16],),
                                dynamic_shapes=({0: Dim("n", min=1, max=256)},),
                                mode="graph", cache=False)
        for values in (x, x[100:103], x.flip(0)):
            for got, want in zip(compiled(values), _EightBit()(values), strict=True):
                assert got.dtype == want.dtype
                torch.testing.assert_close(got, want, rtol=0, atol=0)


class _FloatsToBytes(torch.nn.Module):
    def forward(self, x):
        steps = (x * 2).round()
        return (steps.abs() * 60).clamp(max=255).to(torch.uint8), x.clamp(-128, 127).to(torch.int8)


def test_floats_to_bytes_keep_values_past_127():
    """`.to(torch.uint8)` of floats from 128 to 255, in the `_to_copy` form torch.export gives
    it here: torch-mlir's `fptosi` to i8 has no value past 127, and an AVX2 CPU's code gave 180
    back as 52 (`dync-widen-int8` converts through int32). For this host, and for AVX2."""
    x = torch.linspace(-4.5, 4.5, 70).reshape(2, 5, 7)
    for target in ("host", "x86-64-v3"):
        compiled = dync.compile(_FloatsToBytes(), (x,), target=target, mode="graph", cache=False,
                                dynamic_shapes=({1: Dim("n", min=1, max=64)},))
        for values in (x, x[:, :1].flip(2) * 40):
            for got, want in zip(compiled(values), _FloatsToBytes()(values), strict=True):
                assert got.dtype == want.dtype
                torch.testing.assert_close(got, want, rtol=0, atol=0)
