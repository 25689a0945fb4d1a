"""Unsigned integer tensors of every width through ONNX: the values with the top bit set, where
signed arithmetic would differ, come back right, or the op is refused by name."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import dync
from dync.errors import UnsupportedConstructError

WIDTHS = [(np.uint16, TensorProto.UINT16), (np.uint32, TensorProto.UINT32),
          (np.uint64, TensorProto.UINT64)]


def _binary(op: str, elem: int, out: int | None = None, shape: list[int] | None = None,
            **attributes) -> onnx.ModelProto:
    shape = shape or [4]
    graph = helper.make_graph(
        [helper.make_node(op, ["a", "b"], ["y"], name="op", **attributes)], "g",
        [helper.make_tensor_value_info("a", elem, shape),
         helper.make_tensor_value_info("b", elem, shape)],
        [helper.make_tensor_value_info("y", out or elem, shape)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


@pytest.mark.parametrize("dtype, elem", WIDTHS, ids=lambda v: getattr(v, "__name__", ""))
def test_top_bit_values(dtype, elem):
    top = np.iinfo(dtype).max
    a = np.array([top, top // 2 + 1, 5, 1], dtype)
    b = np.array([1, top, 3, top // 2], dtype)
    with np.errstate(over="ignore"):
        cases = {"Add": (_binary("Add", elem), a + b),
                 "Max": (_binary("Max", elem), np.maximum(a, b)),
                 "Greater": (_binary("Greater", elem, TensorProto.BOOL), a > b),
                 "BitShift": (_binary("BitShift", elem, direction="RIGHT"),
                              a >> np.array([1, 3, 0, 2], dtype))}
    for op, (model, want) in cases.items():
        second = b if op != "BitShift" else np.array([1, 3, 0, 2], dtype)
        (got,) = dync.compile(model, cache=False)(a, second)
        assert got.dtype == want.dtype, op
        np.testing.assert_array_equal(got, want, err_msg=op)


def test_signed_only_op_on_uint64_is_refused_naming_the_node():
    """No type is wider than uint64 to compute a division in: refused by name."""
    with pytest.raises(UnsupportedConstructError, match="div.Tensor on ui64") as info:
        dync.compile(_binary("Div", TensorProto.UINT64), cache=False)
    assert info.value.source == "node 'op'"


@pytest.mark.parametrize("dtype, elem", WIDTHS, ids=lambda v: getattr(v, "__name__", ""))
def test_division_and_remainder_of_top_bit_values(dtype, elem):
    """IREE divides as signed: each is computed in int64 (uint16, uint32) or, for uint64's
    remainder, by halving the dividend first (Hacker's Delight)."""
    top = int(np.iinfo(dtype).max)
    rng = np.random.default_rng(0)
    a = np.concatenate([np.array([top, top, top - 1, top // 2 + 1, top // 2, 0, 5, top], dtype),
                        rng.integers(0, top, 56, dtype, endpoint=True)])
    b = np.concatenate([np.array([1, top, top - 1, top, 3, 7, top // 2 + 1, 2], dtype),
                        rng.integers(1, top, 56, dtype, endpoint=True)])
    ops = ["Mod"] if dtype is np.uint64 else ["Mod", "Div"]
    for op in ops:
        (got,) = dync.compile(_binary(op, elem, shape=[64]), cache=False)(a, b)
        assert got.dtype == dtype, op
        np.testing.assert_array_equal(got, a % b if op == "Mod" else a // b, err_msg=op)


@pytest.mark.parametrize("op", ["Div", "Mod"])
def test_uint8_division_is_computed_wider(op):
    a = np.array([200, 255, 9, 130], np.uint8)
    b = np.array([3, 254, 2, 129], np.uint8)
    (got,) = dync.compile(_binary(op, TensorProto.UINT8), cache=False)(a, b)
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(got, a // b if op == "Div" else a % b)


def test_uint8_top_k_orders_values_from_128_up_last():
    graph = helper.make_graph(
        [helper.make_node("TopK", ["a", "k"], ["values", "indices"])], "g",
        [helper.make_tensor_value_info("a", TensorProto.UINT8, [5])],
        [helper.make_tensor_value_info("values", TensorProto.UINT8, [2]),
         helper.make_tensor_value_info("indices", TensorProto.INT64, [2])],
        initializer=[onnx.numpy_helper.from_array(np.array([2], np.int64), "k")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    values, indices = dync.compile(model, cache=False)(np.array([7, 200, 3, 255, 127], np.uint8))
    np.testing.assert_array_equal(values, [255, 200])
    np.testing.assert_array_equal(indices, [3, 1])
