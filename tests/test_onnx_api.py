"""`dync.compile("model.onnx")` and `dync compile model.onnx`: no example args needed."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx.reference import ReferenceEvaluator
from onnx_models import if_model

import dync


@pytest.fixture(scope="module")
def if_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("onnx") / "if_model.onnx"
    onnx.save(if_model(), path)
    return path


@pytest.fixture(scope="module")
def if_compiled(if_path):
    return dync.compile(str(if_path), dynamic_shapes={"x": {0: ("batch", 1, 64)}})


@pytest.mark.parametrize("batch", [1, 7, 33])
def test_onnx_if_matches_reference_on_both_branches(if_path, if_compiled, batch):
    reference = ReferenceEvaluator(str(if_path))
    rng = np.random.default_rng(batch)
    for sign in (1.0, -1.0):
        x = (sign * (rng.random((batch, 8)) + 0.05)).astype(np.float32)
        (expected,) = reference.run(None, {"x": x})
        (got,) = if_compiled(x)
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def test_onnx_signature_and_range_check(if_compiled):
    assert if_compiled.report.frontend == "onnx"
    assert if_compiled.signature.inputs[0].shape[0] == "batch"
    with pytest.raises(dync.InputError, match=r"outside its declared range \[1, 64\]"):
        if_compiled(np.zeros((65, 8), np.float32))


def test_cli_compiles_onnx_for_arm_and_runs_on_host(if_path, tmp_path):
    bin_dir = Path(sys.executable).parent
    arm = subprocess.run([str(bin_dir / "dync"), "compile", str(if_path), "-o", str(tmp_path / "a.vmfb"),
                          "--backend", "arm", "--target", "jetson-orin", "-q"],
                         capture_output=True, text=True, timeout=600)
    assert arm.returncode == 0, arm.stderr
    host = subprocess.run([str(bin_dir / "dync"), "compile", str(if_path), "-o", str(tmp_path / "h.vmfb"),
                           "--dim", "x:0=batch:1:16", "-q"], capture_output=True, text=True, timeout=600)
    assert host.returncode == 0, host.stderr
    run = subprocess.run([str(bin_dir / "dync"), "run", str(tmp_path / "h.vmfb"), "--input", "3x8xf32=0.5"],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    assert "output 0: float32[3, 4]" in run.stdout


def test_model_proto_needs_no_example_args():
    model = if_model()
    compiled = dync.compile(model)
    x = np.full((4, 8), 0.5, np.float32)
    (expected,) = ReferenceEvaluator(model).run(None, {"x": x})
    np.testing.assert_allclose(compiled(x)[0], expected, rtol=1e-4, atol=1e-5)
    assert compiled.signature.symbols["batch"].max == 2**31 - 1  # the default range


def test_pools_in_ceil_mode_over_a_dynamic_size_match_the_reference():
    """ceil_mode over a dynamic H: PyTorch (and ONNX) drop a last window that would start in
    the right padding, which `dync-rdp`'s window rule must not get wrong (it leaves such a
    size unknown); a keepdim reduction after it keeps its rank."""
    from onnx import TensorProto, helper

    nodes = [helper.make_node("MaxPool", ["x"], ["p"], kernel_shape=[2, 2], strides=[2, 2],
                              ceil_mode=1),
             helper.make_node("AveragePool", ["p"], ["a"], kernel_shape=[2, 1], strides=[2, 1],
                              pads=[1, 0, 1, 0], ceil_mode=1),
             helper.make_node("ReduceMean", ["a"], ["y"], axes=[3], keepdims=1)]
    graph = helper.make_graph(
        nodes, "ceil", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, "h", 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, "out", 1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    compiled = dync.compile(model, dynamic_shapes={"x": {2: ("h", 4, 16)}})
    reference = ReferenceEvaluator(model)
    rng = np.random.default_rng(0)
    for h in (4, 5, 6, 7, 9, 11, 16):
        x = rng.standard_normal((1, 2, h, 6)).astype(np.float32)
        want, = reference.run(None, {"x": x})
        got, = compiled(x)
        assert got.shape == want.shape, (h, got.shape, want.shape)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def _div_max(element):
    from onnx import TensorProto, helper

    element = {np.uint8: TensorProto.UINT8, np.float64: TensorProto.DOUBLE}[element]
    nodes = [helper.make_node("Div", ["a", "b"], ["q"]), helper.make_node("Max", ["q", "b"], ["y"])]
    graph = helper.make_graph(
        nodes, "div_max", [helper.make_tensor_value_info(n, element, [4]) for n in "ab"],
        [helper.make_tensor_value_info("y", element, [4])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_double_values_stay_double():
    """IREE demotes float64 to float32 unless told not to: inputs were read as half as many
    floats and outputs came back half-filled."""
    model = _div_max(np.float64)
    a, b = np.array([200.5, 255, 9, 1e-300]), np.array([3, 1, 200, 7.0])
    want, = ReferenceEvaluator(model).run(None, {"a": a, "b": b})
    got, = dync.compile(model)(a, b)
    assert got.dtype == np.float64 and got.tolist() == want.tolist(), (got, want)


def test_unsigned_values_come_back_unsigned():
    """uint8 came back as int8; an op IREE computes as signed (Div: 200 / 3) is computed in
    int32 (`onnx_rewrites`; on wider unsigned types it is refused: test_onnx_unsigned.py), one
    it computes right (Max, Add) returns uint8."""
    a = np.array([200, 255, 9, 130], dtype=np.uint8)
    b = np.array([3, 1, 200, 7], dtype=np.uint8)
    model = _div_max(np.uint8)
    want, = ReferenceEvaluator(model).run(None, {"a": a, "b": b})
    got, = dync.compile(model)(a, b)
    assert got.dtype == np.uint8 and got.tolist() == want.tolist(), (got, want)
    from onnx import TensorProto, helper

    nodes = [helper.make_node("Max", ["a", "b"], ["m"]), helper.make_node("Add", ["m", "b"], ["y"])]
    graph = helper.make_graph(
        nodes, "max_add", [helper.make_tensor_value_info(n, TensorProto.UINT8, [4]) for n in "ab"],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, [4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    want, = ReferenceEvaluator(model).run(None, {"a": a, "b": b})
    got, = dync.compile(model)(a, b)
    assert got.dtype == np.uint8 and got.tolist() == want.tolist(), (got, want)
