"""ONNX's narrow types — sub-byte integers (INT4, UINT4, INT2, UINT2), 8- and 4-bit floats —
taken and returned as ml_dtypes arrays, carried in bytes inside the module, with the narrow
types' wrapping, rounding and saturation, checked against ONNX's reference evaluator on every
value of each type, on the rounding boundaries and past the range."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import dync
from dync.errors import InputError

NARROW = [(TensorProto.INT4, ml_dtypes.int4), (TensorProto.UINT4, ml_dtypes.uint4),
          (TensorProto.INT2, ml_dtypes.int2), (TensorProto.UINT2, ml_dtypes.uint2)]


def _model(nodes, inputs, outputs, initializers=(), opset=25) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(model)
    return model


FLOATS = [(TensorProto.FLOAT8E4M3FN, ml_dtypes.float8_e4m3fn),
          (TensorProto.FLOAT8E4M3FNUZ, ml_dtypes.float8_e4m3fnuz),
          (TensorProto.FLOAT8E5M2, ml_dtypes.float8_e5m2),
          (TensorProto.FLOAT8E5M2FNUZ, ml_dtypes.float8_e5m2fnuz),
          (TensorProto.FLOAT4E2M1, ml_dtypes.float4_e2m1fn)]


def _check(model: onnx.ModelProto, *args: np.ndarray) -> None:
    """dync's results are the reference evaluator's: dtype, shape and each value (a float's
    exactly, NaN where NaN)."""
    want = ReferenceEvaluator(model).run(None, dict(zip(
        [i.name for i in model.graph.input], args, strict=True)))
    got = dync.compile(model, cache=False)(*args)
    for w, g in zip(want, got, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g.astype(np.float64), w.astype(np.float64))


@pytest.mark.parametrize("elem, dtype", NARROW, ids=lambda v: getattr(v, "__name__", ""))
def test_casts_to_and_from_narrow_integers(elem, dtype):
    """In: every value of the type, scaled in float; out: cast back (fractions truncated) and
    the float itself. A dynamic length. Only values in the type's range: ONNX's reference
    follows ml_dtypes past it, which wraps in 0.6 and gives 0 in 0.7 (as dync does)."""
    model = _model(
        [helper.make_node("Cast", ["x"], ["f"], to=TensorProto.FLOAT),
         helper.make_node("Mul", ["f", "k"], ["scaled"]),
         helper.make_node("Cast", ["scaled"], ["y"], to=elem)],
        [helper.make_tensor_value_info("x", elem, ["n"]),
         helper.make_tensor_value_info("k", TensorProto.FLOAT, ["n"])],
        [helper.make_tensor_value_info("y", elem, ["n"]),
         helper.make_tensor_value_info("scaled", TensorProto.FLOAT, ["n"])])
    info = ml_dtypes.iinfo(dtype)
    values = np.arange(int(info.min), int(info.max) + 1)
    x = np.concatenate([values, values]).astype(dtype)
    k = np.resize(np.array([1.0, 0.5, 0.75, 0.25, 0.9], np.float32), len(x))
    _check(model, x, k)
    _check(model, x[:3], k[:3])


def test_quantize_saturates_to_the_narrow_range_and_dequantize_reads_it():
    model = _model(
        [helper.make_node("QuantizeLinear", ["x", "scale", "zero"], ["q"]),
         helper.make_node("DequantizeLinear", ["q", "scale", "zero"], ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])],
        [helper.make_tensor_value_info("q", TensorProto.INT4, ["n"]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n"])],
        [helper.make_tensor("scale", TensorProto.FLOAT, [], [0.5]),
         helper.make_tensor("zero", TensorProto.INT4, [], [1])])
    _check(model, np.array([-100.0, -4.2, -0.25, 0.0, 0.75, 1.25, 3.0, 3.4, 100.0], np.float32))


def test_a_narrow_constant_of_shape():
    model = _model(
        [helper.make_node("Shape", ["x"], ["s"]),
         helper.make_node("ConstantOfShape", ["s"], ["c"],
                          value=helper.make_tensor("v", TensorProto.UINT4, [1], [13])),
         helper.make_node("Cast", ["c"], ["y"], to=TensorProto.FLOAT)],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n"])])
    _check(model, np.zeros(5, np.float32))


def test_a_saved_module_keeps_the_narrow_dtypes_and_refuses_a_byte_argument(tmp_path):
    model = _model([helper.make_node("Cast", ["x"], ["y"], to=TensorProto.UINT2)],
                   [helper.make_tensor_value_info("x", TensorProto.INT4, ["n"])],
                   [helper.make_tensor_value_info("y", TensorProto.UINT2, ["n"])])
    loaded = dync.load(dync.compile(model, cache=False).save(tmp_path / "m.vmfb"))
    (y,) = loaded(np.array([0, 3, 1, 2, 3], ml_dtypes.int4))
    assert y.dtype == ml_dtypes.uint2 and y.astype(int).tolist() == [0, 3, 1, 2, 3]
    with pytest.raises(InputError, match="expected dtype int4, got int8"):
        loaded(np.array([1, 2], np.int8))


def _all_values(dtype) -> np.ndarray:
    bits = 4 if np.dtype(dtype).name.startswith("float4") else 8
    return np.arange(1 << bits, dtype=np.uint8).view(dtype)


def _rounding_cases(dtype) -> np.ndarray:
    """Every finite value of `dtype`, the midpoints between neighbours (ties) and the floats
    just beside them, past the largest, infinities, NaN and random values, with both signs."""
    values = np.unique(_all_values(dtype).astype(np.float64))
    values = values[np.isfinite(values) & (values >= 0)]
    beyond = values[-1] + (values[-1] - values[-2])
    mids = (np.append(values[1:], beyond) / 2 + values / 2).astype(np.float32)
    rng = np.random.default_rng(0)
    cases = np.concatenate([values.astype(np.float32), mids, np.nextafter(mids, np.inf),
                            np.nextafter(mids, -np.inf), [np.inf, 1e30, 3 * beyond],
                            (rng.standard_normal(200) * values[-1] / 3).astype(np.float32)])
    return np.concatenate([cases, -cases[cases > 0], [np.nan]]).astype(np.float32)


@pytest.mark.parametrize("saturate", [1, 0])
@pytest.mark.parametrize("elem, dtype", FLOATS, ids=lambda v: getattr(v, "__name__", ""))
def test_floats_round_to_the_nearest_narrow_value_ties_to_even(elem, dtype, saturate):
    """float32 -> the narrow float (saturating or to its overflow value) and back, as ONNX's
    reference (ml_dtypes' conversion) does."""
    model = _model(
        [helper.make_node("Cast", ["x"], ["y"], to=elem, saturate=saturate),
         helper.make_node("Cast", ["y"], ["back"], to=TensorProto.FLOAT)],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])],
        [helper.make_tensor_value_info("y", elem, ["n"]),
         helper.make_tensor_value_info("back", TensorProto.FLOAT, ["n"])])
    _check(model, _rounding_cases(dtype))


@pytest.mark.parametrize("elem, dtype", FLOATS, ids=lambda v: getattr(v, "__name__", ""))
def test_every_narrow_float_is_read_exactly(elem, dtype):
    model = _model(
        [helper.make_node("Cast", ["x"], ["half"], to=TensorProto.FLOAT16),
         helper.make_node("Reshape", ["x", "shape"], ["moved"])],
        [helper.make_tensor_value_info("x", elem, ["n"])],
        [helper.make_tensor_value_info("half", TensorProto.FLOAT16, ["n"]),
         helper.make_tensor_value_info("moved", elem, [None, 2])],
        [helper.make_tensor("shape", TensorProto.INT64, [2], [-1, 2])])
    _check(model, _all_values(dtype))


def test_narrow_floats_quantized_per_axis_and_back():
    model = _model(
        [helper.make_node("QuantizeLinear", ["x", "scale", "zero"], ["q"], axis=1),
         helper.make_node("DequantizeLinear", ["q", "scale", "zero"], ["y"], axis=1)],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3])],
        [helper.make_tensor_value_info("q", TensorProto.FLOAT8E4M3FN, ["n", 3]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 3])],
        [helper.make_tensor("scale", TensorProto.FLOAT, [3], [0.5, 2.0, 0.01]),
         helper.make_tensor("zero", TensorProto.FLOAT8E4M3FN, [3], [0.0, 0.0, 0.0])])
    x = np.random.default_rng(1).standard_normal((7, 3)).astype(np.float32) * 100
    _check(model, x)


def test_narrow_casts_inside_branches_and_after_them():
    """Both branches of an If cast to INT4 (new values in each subgraph and in the graph, one
    namespace), the If's INT4 result cast on to a float8."""
    def branch(scale: float, name: str) -> onnx.GraphProto:
        return helper.make_graph(
            [helper.make_node("Mul", ["x", f"{name}_k"], [f"{name}_m"]),
             helper.make_node("Cast", [f"{name}_m"], [f"{name}_y"], to=TensorProto.INT4)],
            name, [], [helper.make_tensor_value_info(f"{name}_y", TensorProto.INT4, ["n"])],
            [helper.make_tensor(f"{name}_k", TensorProto.FLOAT, [], [scale])])
    model = _model(
        [helper.make_node("ReduceSum", ["x"], ["total"], keepdims=0),
         helper.make_node("Greater", ["total", "zero"], ["positive"]),
         helper.make_node("If", ["positive"], ["q"], then_branch=branch(0.5, "then"),
                          else_branch=branch(-0.75, "else")),
         helper.make_node("Cast", ["q"], ["y"], to=TensorProto.FLOAT8E4M3FN)],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])],
        [helper.make_tensor_value_info("q", TensorProto.INT4, ["n"]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT8E4M3FN, ["n"])],
        [helper.make_tensor("zero", TensorProto.FLOAT, [], [0.0])])
    _check(model, np.array([1.5, 2.0, -0.5, 3.25], np.float32))
    _check(model, np.array([-1.5, 2.0, -3.5], np.float32))
