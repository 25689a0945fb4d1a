"""ONNX graph inputs that set a node's axes (`dync/frontends/onnx_fixed_inputs.py`): fixed at
the example's value, right at every size of the other inputs, and a call with another value
refused — also by a saved module, whose manifest carries the value and is checked on load."""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import dync
from dync.errors import InputError, ModuleFormatError
from dync.signature import Signature


def _reduce_sum_model() -> onnx.ModelProto:
    """A ReduceSum over axes given as an input, then an Unsqueeze by another input."""
    graph = helper.make_graph(
        [helper.make_node("ReduceSum", ["x", "axes"], ["s"], keepdims=0, name="sum"),
         helper.make_node("Unsqueeze", ["s", "where"], ["y"], name="unsqueeze")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3, 4]),
         helper.make_tensor_value_info("axes", TensorProto.INT64, [1]),
         helper.make_tensor_value_info("where", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 1, 4])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


@pytest.fixture(scope="module")
def compiled_sum():
    model = _reduce_sum_model()
    example = (np.ones((2, 3, 4), np.float32), np.array([1]), np.array(1))
    return model, dync.compile(model, example, cache=False)


def test_axes_inputs_are_fixed_at_the_example_and_right_at_every_size(compiled_sum):
    model, compiled = compiled_sum
    notes = [n for n in compiled.report.notes if "fixed at the example" in n]
    assert len(notes) == 2 and "'axes'" in notes[0] + notes[1], compiled.report.notes
    assert [s.value for s in compiled.signature.inputs] == [None, (1,), 1]
    rng = np.random.default_rng(0)
    for n in (1, 2, 7):
        x = rng.standard_normal((n, 3, 4), dtype=np.float32)
        want = ReferenceEvaluator(model).run(None, {"x": x, "axes": np.array([1]),
                                                    "where": np.array(1)})[0]
        got = np.asarray(compiled(x, np.array([1]), np.array(1))[0])
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_a_call_with_another_axes_value_is_refused(compiled_sum):
    _, compiled = compiled_sum
    x = np.ones((2, 3, 4), np.float32)
    with pytest.raises(InputError, match=r"input 'axes' = \[2\].*compiled for the value \[1\]"):
        compiled(x, np.array([2]), np.array(1))
    with pytest.raises(InputError, match="input 'where' = 0"):
        compiled(x, np.array([1]), np.array(0))


def test_a_saved_module_keeps_the_fixed_value(compiled_sum, tmp_path):
    _, compiled = compiled_sum
    compiled.save(tmp_path / "sum.vmfb")
    loaded = dync.load(tmp_path / "sum.vmfb")
    x = np.ones((3, 3, 4), np.float32)
    np.testing.assert_allclose(np.asarray(loaded(x, np.array([1]), np.array(1))[0]),
                               np.full((3, 1, 4), 3.0, np.float32))
    with pytest.raises(InputError, match="input 'axes'"):
        loaded(x, np.array([0]), np.array(1))


@pytest.mark.parametrize("value", ["[1]", "[1, 2]", "[1.5]", "\"__import__('os')\"", "[1e999]"])
def test_a_malformed_fixed_value_in_a_manifest_is_refused(value):
    spec = {"name": "axes", "dtype": "int64", "shape": [1], "value": json.loads(value)}
    data = {"inputs": [spec], "outputs": [], "symbols": {}}
    if value == "[1]":
        assert Signature.from_json(data).inputs[0].value == (1,)
        return
    with pytest.raises(ModuleFormatError, match="fixed value"):
        Signature.from_json(data)


def test_without_an_example_the_axes_input_is_an_error_not_a_guess():
    with pytest.raises(dync.errors.DyncError, match="ReduceSum|sum"):
        dync.compile(_reduce_sum_model(), cache=False)


def test_a_slices_axes_and_steps_inputs_are_fixed_and_starts_stay_inputs():
    """The ONNX node tests' Slice: every operand an input. Starts and ends stay run-time
    values; axes and steps (a negative step reverses) are fixed at the example's."""
    graph = helper.make_graph(
        [helper.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [6, 5]),
         *(helper.make_tensor_value_info(n, TensorProto.INT64, [2])
           for n in ("starts", "ends", "axes", "steps"))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, None])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    x = np.arange(30, dtype=np.float32).reshape(6, 5)
    axes, steps = np.array([1, 0]), np.array([-1, 2])
    compiled = dync.compile(model, (x, np.array([4, 0]), np.array([0, 6]), axes, steps),
                            cache=False)
    assert [s.value for s in compiled.signature.inputs] == [None, None, None, (1, 0), (-1, 2)]
    for starts, ends in (([4, 0], [0, 6]), ([-1, 1], [-9, 5]), ([2, 5], [3, 0])):
        args = {"x": x, "starts": np.array(starts), "ends": np.array(ends), "axes": axes,
                "steps": steps}
        want = ReferenceEvaluator(model).run(None, args)[0]
        np.testing.assert_array_equal(np.asarray(compiled(*args.values())[0]), want)
    with pytest.raises(InputError, match="input 'steps'"):
        compiled(x, np.array([4, 0]), np.array([0, 6]), axes, np.array([1, 2]))


def test_a_nearest_resizes_float_scales_input_is_fixed_saved_and_checked(tmp_path):
    """Resize with `axes` (which IREE's importer does not lower) and scales given as an input:
    rewritten for the example's scales, a float value the saved manifest keeps."""
    graph = helper.make_graph(
        [helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="nearest", axes=[3, 2])],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 2, 3]),
              helper.make_tensor_value_info("scales", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, None, None])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    x, scales = np.arange(6, dtype=np.float32).reshape(1, 1, 2, 3), np.array([2.0, 1.5],
                                                                            np.float32)
    compiled = dync.compile(model, (x, scales), cache=False)
    want = ReferenceEvaluator(model).run(None, {"x": x, "scales": scales})[0]
    compiled.save(tmp_path / "resize.vmfb")
    loaded = dync.load(tmp_path / "resize.vmfb")
    assert loaded.signature.inputs[1].value == (2.0, 1.5)
    np.testing.assert_array_equal(np.asarray(loaded(x, scales)[0]), want)
    with pytest.raises(InputError, match="input 'scales'"):
        loaded(x, np.array([2.0, 2.0], np.float32))
