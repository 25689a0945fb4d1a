"""ONNX nodes IREE's importer lowers to other values than the ONNX spec
(`dync/frontends/onnx_rewrites.py`): each rewritten one matches ONNX's reference evaluator on
the inputs that went wrong, each refused one is an error naming the op and the node."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import dync
from dync.errors import UnsupportedConstructError


def _model(nodes, inputs, outputs, opset: int = 22) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _check(model: onnx.ModelProto, *args: np.ndarray) -> None:
    names = [i.name for i in model.graph.input]
    want = ReferenceEvaluator(model).run(None, dict(zip(names, args, strict=True)))[0]
    compiled = dync.compile(model, cache=False)
    for _ in range(3):  # the unfixed GridSample read whatever memory held: not every call
        got = compiled(*args)
        got = np.asarray(got[0] if isinstance(got, (list, tuple)) else got)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", ["linear", "nearest"])
@pytest.mark.parametrize("align_corners", [0, 1])
def test_grid_sample_outside_the_input_is_zero_and_nearest_rounds_half_to_even(
        mode, align_corners):
    x = np.arange(6, dtype=np.float32).reshape(1, 1, 3, 2) + 1
    # Points far outside, just outside, on halves and inside.
    grid = np.array([[[[-9.0, -9.0], [5.0, 0.3], [0.0, 0.0], [-0.5, -0.5]],
                      [[1.2, 1.1], [0.2, -1.4], [1.0, 1.0], [0.5, 0.25]]]], np.float32)
    model = _model(
        [helper.make_node("GridSample", ["x", "grid"], ["y"], mode=mode,
                          align_corners=align_corners)],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 3, 2]),
         helper.make_tensor_value_info("grid", TensorProto.FLOAT, [1, 2, 4, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 2, 4])])
    _check(model, x, grid)


@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
def test_bit_shift_by_negative_or_width_or_more(direction):
    x = np.array([-8, 4, -1, 7, -128, 1], np.int8)
    amount = np.array([-1, 8, 9, 127, 3, 7], np.int8)
    model = _model(
        [helper.make_node("BitShift", ["x", "s"], ["y"], direction=direction)],
        [helper.make_tensor_value_info("x", TensorProto.INT8, [6]),
         helper.make_tensor_value_info("s", TensorProto.INT8, [6])],
        [helper.make_tensor_value_info("y", TensorProto.INT8, [6])], opset=24)
    _check(model, x, amount)


def test_lp_normalization_of_a_zero_slice_is_zero():
    x = np.array([[1.0, 0.0, 3.0], [2.0, 0.0, -4.0]], np.float32)
    model = _model(
        [helper.make_node("LpNormalization", ["x"], ["y"], axis=0, p=2)],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    _check(model, x)


def test_weighted_mean_softmax_cross_entropy_is_expanded():
    rng = np.random.default_rng(0)
    model = _model(
        [helper.make_node("SoftmaxCrossEntropyLoss", ["x", "t", "w"], ["loss"],
                          reduction="mean")],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 5]),
         helper.make_tensor_value_info("t", TensorProto.INT64, [3]),
         helper.make_tensor_value_info("w", TensorProto.FLOAT, [5])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])], opset=17)
    _check(model, rng.random((3, 5), dtype=np.float32), np.array([1, 4, 3]),
           np.array([0.9, 0.7, 0.8, 0.9, 0.9], np.float32))


def test_det_is_refused_naming_the_node():
    model = _model(
        [helper.make_node("Det", ["x"], ["y"], name="determinant")],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])])
    with pytest.raises(UnsupportedConstructError, match="without pivoting") as info:
        dync.compile(model, cache=False)
    assert info.value.source == "node 'determinant'"
